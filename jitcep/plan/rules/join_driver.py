"""Rule: which input drives each SEQ join.

The right records drive (ZStream Algorithm 1: each searches its left range
from the EAT pointer).  When the right input is a leaf, the join may instead
be driven by the left records (a binary search into the leaf each, the pairs
sorted back into order) -- the partial matches of a long SEQ thin out while
every leaf keeps its size.

A plan chosen on statistics prices both drivers on the estimated records of
the join's inputs (:func:`jitcep.plan.planner.cost.seq_driver_cost`, after
the negations are placed, since a pushed negation thins its join's records)
and takes the cheaper: "left" or "right".  Without statistics the rule stays
as it was: "smaller", decided by the inputs' sizes as they arrive
(:func:`jitcep.kernels.join.seq_join`).  A join of two composite inputs has
no one-event side to binary-search, so its right side drives.

The final join (the plan's root, its pairs the matches) with nothing left to
test on its pairs and a leaf input may write the match table's rows itself
(:func:`jitcep.kernels.final_join.seq_join_rows`, right records driving),
through passes over arrays of one entry per table position.  On statistics
the rule prices that way beside the pairs of each driver
(:func:`jitcep.plan.planner.cost.final_join_cost`) and keeps the cheapest,
so a plan with few matches in a large table no longer pays the passes: a
right-deep root over a left leaf can only be right-driven, and its rows
cost it more than the join itself (perf/notes/plan_quality.md, "The final join's rows
priced").
"""

from __future__ import annotations

import dataclasses

from ..operators import Scan, SeqJoin, remake_joins
from ..planner.cost import final_join_cost, seq_driver_cost


def choose(plan, planning):
    if planning.statistics is None:
        def drive(n):
            if isinstance(n, SeqJoin):
                return {"driver": "smaller" if isinstance(n.right, Scan) else "right"}
            return {}
        return dataclasses.replace(plan, root=remake_joins(plan.root, drive))

    work = planning.work(plan)
    nodes = plan.nodes()
    # records feeding a join, by its input's variables: the topmost node over them (post-order: last wins)
    fed = {frozenset(n.vars): work[id(n)][1] for n in nodes}
    pairs = {frozenset(n.vars): work[id(n)][0] for n in nodes if isinstance(n, SeqJoin)}
    partitions = planning.statistics.partitions
    final = _writes_rows(plan, planning)

    def drive(n):  # n: a binary operator of ``plan`` (remake_joins reads the changes on it)
        if n is not final and (not isinstance(n, SeqJoin) or not isinstance(n.right, Scan)):
            return {}
        left, right = fed[frozenset(n.left.vars)], fed[frozenset(n.right.vars)]
        if n is final:  # the root: its way to the match table, which decides its driver too
            return _final(n, left, right, work[id(n)][1], planning.statistics.events, partitions)
        costs = tuple((d, seq_driver_cost(d, left, right, pairs[frozenset(n.vars)], partitions))
                      for d in ("right", "left"))
        best = min(costs, key=lambda c: c[1])[0]  # ties: "right", the kernel's natural order
        return {"driver": best, "costs": costs}
    out = dataclasses.replace(plan, root=remake_joins(plan.root, drive))
    planning.carry_work(plan, out)  # drivers and rows: no estimate reads them (the reduction's rule prices it)
    return out


def _writes_rows(plan, planning):
    """The join that may write the match table's rows (:attr:`SeqJoin.rows`, as
    :func:`jitcep.execute.join._writes_rows` decides at run time): the plan's root SEQ join with no
    predicate, every variable, a leaf input, no list; None when there is none or the statistics do not
    say how many events the table holds.  Under ``nondecreasing_ts`` a left leaf only at the root of
    SEQ joins with no predicate over three leaves or more, whose rows the fused kernels write from the
    leaves whichever input is the leaf (:func:`jitcep.execute.join._leaf_chain`, which with several key
    partitions reads this choice); they decline at a tie that may reorder a match, and then the join
    makes its pairs, right-driven as the rows would have been.  Elsewhere a left record may end after
    its right event, which the rows' kernel meets over a right leaf only."""
    n = plan.root
    if (not isinstance(n, SeqJoin) or n.predicates or n.extends or plan.list_vars
            or planning.statistics.events is None or set(n.vars) != set(plan.variables)
            or not (isinstance(n.right, Scan) or (isinstance(n.left, Scan) and (
                planning.options.order != "nondecreasing_ts" or _leaves_of(n) >= 3)))):
        return None
    return n


def _leaves_of(n) -> int:
    """The leaves under ``n`` when it is a tree of SEQ joins with no predicate over them, else 0."""
    if isinstance(n, Scan):
        return 1
    if not isinstance(n, SeqJoin) or n.predicates:
        return 0
    left, right = _leaves_of(n.left), _leaves_of(n.right)
    return left + right if left and right else 0


def _final(n: SeqJoin, left: float, right: float, matches: float, events: float, partitions) -> dict:
    """The fields of the final join ``n`` for the cheapest of its ways to the match table
    (:func:`~jitcep.plan.planner.cost.final_join_cost`): the right driver's rows, its pairs, or, over a
    right leaf, the left driver's pairs."""
    leaf = "right" if isinstance(n.right, Scan) else "left"
    paths = ("right", "right+rows", "left") if leaf == "right" else ("right", "right+rows")
    costs = tuple((p, final_join_cost(p, left, right, matches, events, partitions, leaf)) for p in paths)
    best = min(costs, key=lambda c: c[1])[0]  # ties: the order above
    return {"driver": "left" if best == "left" else "right", "rows": best == "right+rows", "costs": costs}
