"""ZSTREAM: ZStream's dynamic program over adjacent runs of units (Mei & Madden 2009, 5.2.3, Algorithm 5).

ZStream keeps the leaves in pattern order and chooses the tree above them: by
optimal substructure (its Theorem 5.1) the best tree over the run of units
i..j-1 joins the best trees over i..r-1 and r..j-1 for the best root position r,

    for s = 2 .. n:                        # run size
        for i = 0 .. n - s:                # run start; j = i + s
            for r = i + 1 .. j - 1:        # root position
                cost = Min[i][r] + Min[r][j] + cost of the root
                keep the least (Min[i][j], Root[i][j] = r)

O(n^3) priced joins (ZStream: "less than 10 ms ... with pattern length 20").
It misses every tree that reorders the leaves (Kolchinsky & Schuster 2.3,
Figure 2); ZSTREAM-ORD (:mod:`.zstream_ord`) runs the same program over a
better order.  Polynomial, so :func:`plan` does not read ``steps``; ZSTREAM-ORD
charges the program to its budget.
"""

from __future__ import annotations

from ....kernels import join_search
from ..problem import JoinProblem, Tree
from ._common import Clock, Costing, Plan, compiled_search


def joins(n: int) -> dict[int, int]:
    """Priced joins by the size s of the joined run: n - s + 1 runs of s units, s - 1 roots each
    ((n^3 - n) / 6 in all)."""
    return {s: (n - s + 1) * (s - 1) for s in range(2, n + 1)}


def search(costing: Costing, order, clock: Clock | None = None) -> Plan:
    """The best tree whose every node covers a run of consecutive units of ``order`` (ties: the leftmost root);
    each run's joins are charged to ``clock`` before they are priced (``OverBudget`` when they do not fit)."""
    n = len(order)
    if n == costing.problem.n and (found := compiled(costing, order, clock)) is not None:
        return found
    # best[i][j]: the best plan over order[i:j] (Min and Root of Algorithm 5 in one priced plan)
    best = [[None] * (n + 1) for _ in range(n + 1)]
    for i, u in enumerate(order):
        best[i][i + 1] = costing.leaves[u]
    join_cost = costing.join_cost
    for s in range(2, n + 1):
        for i in range(n - s + 1):
            if clock is not None:
                clock.charge((s - 1) * costing.steps_per_join[s])
            j = i + s
            row = best[i]
            found, found_cost = None, None
            for r in range(i + 1, j):
                c = join_cost(row[r], best[r][j])
                if found_cost is None or c < found_cost:
                    found, found_cost = r, c
            row[j] = costing.join(row[found], best[found][j], found_cost)
    return best[0][n]


def compiled(costing: Costing, order, clock: Clock | None = None) -> Plan | None:
    """:func:`search` in :func:`jitcep.kernels.join_search.zstream` (its twin is the loop above), every
    join charged once it ran; None on a NaN cost or under Cost_ord (the Python loop refuses it)."""
    units = list(order)
    n = len(units)
    got = compiled_search(costing, join_search.zstream, joins(n), clock, units)
    if got is None:
        return None
    root, cost = got

    def tree(i: int, j: int) -> Tree:
        if j == i + 1:
            return units[i]
        r = int(root[i, j])
        return (tree(i, r), tree(r, j))
    return Plan(tree(0, n), (1 << costing.problem.n) - 1, float(cost))


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The best tree over the units in pattern (index) order, a closure unit right after its ``need``
    (:meth:`JoinProblem.pattern_order`: after its later neighbour, ZStream's KSEQ over the run of its
    neighbours)."""
    return search(Costing(problem, cost), problem.pattern_order()).tree
