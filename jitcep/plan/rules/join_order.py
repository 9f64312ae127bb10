"""Rule: the join order, chosen by a plan-generation algorithm on the pattern's statistics.

``planner="trivial"``, a shape given with ``plan=`` and a plan made without
statistics ("auto" on a small table, :data:`jitcep.runtime.SMALL_TABLE`) need no
statistics: the join tree is that shape, or left-deep in pattern order.  Any
other planner sees the pattern as a join-order problem
(:func:`jitcep.plan.planner.cardinality.join_problem`: each unit a relation
of its events in one window, each pair the selectivity of the predicates
between them, Kolchinsky & Schuster 2018 section 3) and returns the tree its
algorithm finds under the chosen cost model (:mod:`jitcep.plan.planner`).

Under a selection strategy other than skip-till-any-match there is no order
to choose: :mod:`.nfa_runs` replaces the join tree by the NFA^b runs, which
take the states in pattern order (SASE+ 3.1; Kolchinsky & Schuster 6.3
found the order written best under contiguity).  The statistics then only
price the runs (:func:`jitcep.plan.planner.cardinality.next_match_partials`,
section 5.2) for ``explain``.
"""

from __future__ import annotations

from ..planner.algorithms import ALGORITHMS
from ..planner.algorithms._common import noting
from ..planner.cardinality import join_problem
from ..planner.cost import cost_model
from ..shapes import default_shape


def shape(planning) -> tuple[object, tuple[str, ...]]:
    """The join shape of the plan (given, left-deep in pattern order, or the planner's choice) and the
    notes of the planner's search (an exact algorithm that fell back past its budget, ``_common.noting``)."""
    if planning.shape is not None:
        return planning.shape, ()
    options = planning.options
    if options.planner == "trivial" or planning.statistics is None or options.strategy != "skip_till_any_match":
        return default_shape(planning.logical.positive), ()
    problem = join_problem(planning.logical, planning.statistics, planning.span)
    if problem.n < 3:  # one or two units: one tree up to orientation, and the join rule orients it
        return default_shape(planning.logical.positive), ()
    with noting() as notes:
        tree = ALGORITHMS[options.planner](problem, cost_model(options), seed=options.planner_seed,
                                           steps=planning.budget)
    return problem.shape(tree), tuple(notes)
