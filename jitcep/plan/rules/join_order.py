"""Rule: the join order, chosen by a plan-generation algorithm on the pattern's statistics.

``planner="trivial"``, a shape given with ``plan=`` and a plan made without
statistics ("auto" on a small table, :data:`jitcep.runtime.SMALL_TABLE`) need no
statistics: the join tree is that shape, or left-deep in pattern order.  Any
other planner sees the pattern as a join-order problem
(:func:`jitcep.plan.planner.cardinality.join_problem`: each unit a relation
of its events in one window, each pair the selectivity of the predicates
between them, Kolchinsky & Schuster 2018 section 3; a closure that may be
collected below the root one more unit, their ``T'`` of section 4) and returns
the tree its algorithm finds under the chosen cost model
(:mod:`jitcep.plan.planner`), without the closure units, and where each of
them went (the variables of its sibling) for :mod:`.kleene_collection`.

Under a selection strategy other than skip-till-any-match there is no order
to choose: :mod:`.nfa_runs` replaces the join tree by the NFA^b runs, which
take the states in pattern order (SASE+ 3.1; Kolchinsky & Schuster 6.3
found the order written best under contiguity).  The statistics then only
price the runs (:func:`jitcep.plan.planner.next_match.next_match_partials`,
section 5.2) for ``explain``.
"""

from __future__ import annotations

from ..planner.algorithms import ALGORITHMS
from ..planner.algorithms._common import noting
from ..planner.cardinality import join_problem
from ..planner.cost import cost_model
from ..shapes import default_shape, shape_vars
from .kleene_units import closure_units
from .semijoin_reduction import reduced_chain


def shape(planning) -> tuple[object, tuple[str, ...], tuple]:
    """The join shape of the plan (given, left-deep in pattern order, or the planner's choice), the
    notes of the planner's search (an exact algorithm that fell back past its budget, ``_common.noting``)
    and where the search put each closure it planned as a unit (:func:`places`)."""
    if planning.shape is not None:
        return planning.shape, (), ()
    options = planning.options
    if options.planner == "trivial" or planning.statistics is None or options.strategy != "skip_till_any_match":
        return default_shape(planning.logical.positive), (), ()
    problem = join_problem(planning.logical, planning.statistics, planning.span,
                           closure_units(planning), reduced_chain(planning.logical, options))
    if problem.n - len(problem.closures) < 3:  # one or two units: one tree up to orientation (join rule's)
        return default_shape(planning.logical.positive), (), ()
    with noting() as notes:
        tree = ALGORITHMS[options.planner](problem, cost_model(options), seed=options.planner_seed,
                                           steps=planning.budget)
    if not problem.closures:  # every tree is admitted, and there is no closure unit to take out or place
        return problem.shape(tree), tuple(notes), ()
    if not problem.admits_tree(tree):
        raise AssertionError(f"planner {options.planner!r} returned a tree the engine cannot run: {tree!r}")
    return problem.shape(without_closures(problem, tree)), tuple(notes), places(problem, tree)


def without_closures(problem, tree):
    """``tree`` with its closure units taken out (each one's parent replaced by its sibling)."""
    if isinstance(tree, int):
        return tree
    left, right = tree
    if isinstance(left, int) and problem.closure_unit(left) is not None:
        return without_closures(problem, right)
    if isinstance(right, int) and problem.closure_unit(right) is not None:
        return without_closures(problem, left)
    return (without_closures(problem, left), without_closures(problem, right))


def places(problem, tree) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(closure variable, the variables of its sibling) for each closure unit of ``tree``: the join its
    KleeneCollect goes over (:mod:`.kleene_collection`)."""
    out = []

    def rec(node):
        if isinstance(node, int):
            return
        for one, other in (node, node[::-1]):
            if isinstance(one, int) and problem.closure_unit(one) is not None:
                vars_ = shape_vars(problem.shape(without_closures(problem, other)))
                out.append((problem.units[one], tuple(sorted(vars_))))
        rec(node[0])
        rec(node[1])
    rec(tree)
    return tuple(out)
