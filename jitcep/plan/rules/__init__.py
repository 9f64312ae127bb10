"""From a logical plan to a physical plan: small rules applied in one ordered list.

Each rule takes the plan built so far and returns a new one (the sqlglot
optimizer's shape); one rule per module, each deciding one thing and
writing its decision into a node field, so the executor decides nothing:

1. :mod:`.join_tree`: the join tree of scans and SEQ / AND / OR joins, from
   a shape (given, or :mod:`.join_order`'s: left-deep in pattern order, or a
   plan-generation algorithm's on the statistics).
2. :mod:`.predicate_placement`: each join predicate on the lowest join
   covering its variables (ZStream 4.1).
3. :mod:`.type_overlap`: whether a join's sides may bind events of one type.
4. :mod:`.kleene_collection`: one KSEQ operator per closure, over the join tree
   or on the lowest join fixing its range (priced on the statistics when a
   planner chose the plan).
5. :mod:`.nfa_runs`: under a selection strategy other than skip-till-any-match,
   the NFA^b runs of the linear pattern in place of the join tree (SASE+ 3.1).
6. :mod:`.negation_placement`: each negation pushed down to the lowest join
   fixing its range, or over whole matches (ZStream 4.4.2; priced on the
   statistics when a planner chose the plan).
7. :mod:`.match_constraints`: ``freeze`` on the frozen variables' scans,
   ``contiguous`` over whole matches, under their negations (semantics 9).
8. :mod:`.output_policy`: the ``output=`` policy over everything (semantics 9).
9. :mod:`.join_driver`: which side drives each SEQ join (priced on the
   statistics when a planner chose the plan; after the negations, since a
   pushed negation thins the records a join reads).
10. :mod:`.semijoin_reduction`: a SEQ's leaves reduced to the events that can
    belong to a match before the joins run (Yannakakis' full reducer), where
    that is sound; over the finished join tree, under what filters whole matches.

Then :mod:`.disjuncts` prices that plan against the pattern in DNF (each
alternative's plan made by the same rules, Kolchinsky & Schuster 4) when a
planner chose it on statistics, and keeps the cheaper.

:mod:`.key_coding` runs later, once the event table is known
(:func:`jitcep.plan.rules.key_coding.choose`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...options import Options
from ..logical import LogicalPlan
from ..operators import PhysicalPlan
from ..planner.cardinality import estimate_work
from . import (disjuncts, join_driver, join_tree, kleene_collection, match_constraints, negation_placement, nfa_runs,
               output_policy, predicate_placement, semijoin_reduction, type_overlap)


@dataclass(frozen=True)
class Planning:
    """What every rule may read: the logical plan, the options, the join shape asked for (None: the
    planner's), and for the planner the statistics of the events, the window's span in its measure
    (None without events) and the seconds its search may take (None: the algorithm's default)."""

    logical: LogicalPlan
    options: Options
    shape: object = None
    statistics: object = None
    span: float | None = None
    budget: int | None = None  # the planner's search budget in steps (planner/algorithms/_common.py)
    kleene: str | None = None  # a closure's placement, "top" or "lower", whatever it costs (None: the rule's)
    # without statistics: the events of each SEQ variable's types, then the most of each next variable's
    # types in one window, counted on the table (runtime.pattern_order_counts; None: no table counted)
    counts: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    # estimate_work by plan tree: id(root) -> (root, work); the root is held so that its id is not reused
    _work: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def work(self, plan: PhysicalPlan) -> dict[int, tuple[float, float]]:
        """:func:`~jitcep.plan.planner.cardinality.estimate_work` of ``plan`` on the statistics, made once
        per plan tree: the rules that price a plan (the join drivers, the semi-join reduction, the OR's
        forms) read one plan, or one whose operators estimate alike (:meth:`carry_work`)."""
        got = self._work.get(id(plan.root))
        if got is None or got[0] is not plan.root:
            got = self._work[id(plan.root)] = (plan.root, estimate_work(plan, self.statistics, self.span))
        return got[1]

    def carry_work(self, old: PhysicalPlan, new: PhysicalPlan) -> None:
        """Let ``new`` share ``old``'s estimates (:meth:`work`) when ``old``'s were made: ``new`` is ``old``
        with physical choices changed that no estimate reads (a join's driver, its costs, whether it writes
        the rows), so its operators are ``old``'s one for one, in the same post-order."""
        got = self._work.get(id(old.root))
        if got is None or got[0] is not old.root:
            return
        before, after = old.nodes(), new.nodes()
        if len(before) != len(after) or any(type(a) is not type(b) for a, b in zip(before, after)):
            raise AssertionError("carry_work: the new plan's operators are not the old plan's one for one")
        work = got[1]
        self._work[id(new.root)] = (new.root, {id(b): work[id(a)] for a, b in zip(before, after)})


RULES = (
    join_tree.build,
    predicate_placement.place,
    type_overlap.mark,
    kleene_collection.add,
    nfa_runs.build,
    negation_placement.place,
    match_constraints.add,
    output_policy.add,
    join_driver.choose,
    semijoin_reduction.add,
)


COUNTS_READERS = (semijoin_reduction.counted_choice,)
"""Per rule that reads :attr:`Planning.counts`, what it decides from them (hashable)."""


def counted_choices(counts) -> tuple:
    """What the rules decide from a table's counts: a plan made without statistics on ``counts`` is a
    function of the logical plan, the options and these answers (the counts' numbers reach its notes
    alone), so a plan made on one table serves another with the same answers
    (:func:`jitcep.runtime._counted`).  A rule that comes to read the counts adds its answer to
    :data:`COUNTS_READERS`."""
    return tuple(read(counts) for read in COUNTS_READERS)


def physical_plan(logical: LogicalPlan, options: Options, shape=None, statistics=None,
                  span: float | None = None, budget: int | None = None, form=None, kleene=None,
                  counts=None) -> PhysicalPlan:
    """The physical plan of ``logical`` under ``options`` (``shape``: the join tree, see
    :mod:`jitcep.plan.shapes`; ``statistics``, ``span`` and ``budget``: what a planner other than
    "trivial" reads; ``form``: "unit" or "dnf" to plan a pattern with an OR in that form whatever it
    costs, None to let :mod:`.disjuncts` choose; ``kleene``: "top" or "lower" to collect a closure
    there where it may be (:mod:`.kleene_collection`) whatever it costs, None to let the rule choose;
    ``counts``: :attr:`Planning.counts`, what the rules read of a table planned without statistics)."""
    planning = Planning(logical, options, shape, statistics, span, budget, kleene, counts)
    return disjuncts.choose(_apply_rules(planning), planning, _apply_rules, form)


def _apply_rules(planning: Planning) -> PhysicalPlan:
    logical = planning.logical
    plan = PhysicalPlan(logical.pattern, None, tuple(logical.variables), logical.key, logical.constants,
                        logical.window, statistics=planning.statistics, span=planning.span)
    for rule in RULES:
        plan = rule(plan, planning)
    return plan
