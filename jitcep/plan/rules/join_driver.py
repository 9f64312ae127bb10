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
"""

from __future__ import annotations

import dataclasses

from ..operators import Scan, SeqJoin, rebuild_joins
from ..planner.cardinality import estimate_work
from ..planner.cost import seq_driver_cost


def choose(plan, planning):
    if planning.statistics is None:
        def drive(n):
            if isinstance(n, SeqJoin):
                return dataclasses.replace(n, driver="smaller" if isinstance(n.right, Scan) else "right")
            return n
        return dataclasses.replace(plan, root=rebuild_joins(plan.root, drive))

    work = estimate_work(plan, planning.statistics, planning.span)
    # records feeding a join, by its input's variables: the topmost node over them (post-order: last wins)
    fed = {frozenset(n.vars): work[id(n)][1] for n in plan.nodes()}
    pairs = {frozenset(n.vars): work[id(n)][0] for n in plan.nodes() if isinstance(n, SeqJoin)}
    partitions = planning.statistics.partitions

    def drive(n):
        if not isinstance(n, SeqJoin) or not isinstance(n.right, Scan):
            return n
        left, right = fed[frozenset(n.left.vars)], fed[frozenset(n.right.vars)]
        costs = tuple((d, seq_driver_cost(d, left, right, pairs[frozenset(n.vars)], partitions))
                      for d in ("right", "left"))
        best = min(costs, key=lambda c: c[1])[0]  # ties: "right", the kernel's natural order
        return dataclasses.replace(n, driver=best, costs=costs)
    return dataclasses.replace(plan, root=rebuild_joins(plan.root, drive))
