"""DP-LD: Selinger's dynamic programming for the best left-deep plan (Selinger 1979; Kolchinsky & Schuster 2018, 6.1).

"This exponential-time algorithm utilizes dynamic programming to produce a
provably optimal execution plan. The result is limited to a left-deep tree
topology."  For every set S of units, by increasing size, the best order of S
is the best order of S - {i} followed by i, over i in S:

    best[{i}] = i
    best[S]   = min over i in S of  join(best[S - {i}], i)

exact for every model with optimal substructure (see ``_common``), in
n * 2^(n-1) - n priced joins and 2^n plans of memory.  When its joins do not
fit in its budget of steps it returns GREEDY's plan (``_common.exact_or_greedy``).
"""

from __future__ import annotations

from math import comb

from ....kernels import join_search
from ..problem import Tree, leaves, left_deep
from ._common import Clock, Costing, compiled_search, exact_or_greedy, on_costing


def joins(n: int) -> dict[int, int]:
    """Priced joins by the size k of the joined set: each of the C(n, k) sets tries each of its k members
    last (n * 2^(n-1) - n in all)."""
    return {k: comb(n, k) * k for k in range(2, n + 1)}


def search(costing: Costing, clock: Clock) -> Tree:
    """The best left-deep tree (ties: the higher index joins last); each set's joins are charged to
    ``clock`` before they are priced (``OverBudget`` when they do not fit)."""
    n = costing.problem.n
    if (found := compiled(costing, clock)) is not None:
        return found
    unit = costing.leaves
    join_cost, per_join = costing.join_cost, costing.steps_per_join
    best = {plan.mask: plan for plan in unit}
    # sets in increasing numeric order: every S - {i} is smaller than S, so already solved
    for s in range(1, 1 << n):
        if s in best:
            continue
        k = s.bit_count()
        clock.charge(k * per_join[k])
        found, found_cost = None, None
        rest = s
        while rest:  # the members i of s, ascending (bit tricks: this loop is the algorithm's hot path)
            low = rest & -rest
            rest ^= low
            c = join_cost(best[s ^ low], unit[low.bit_length() - 1])
            # <=: among equal costs the highest index joins last, so equal orders keep pattern order
            if found_cost is None or c <= found_cost:
                found, found_cost = low, c
        best[s] = costing.join(best[s ^ found], unit[found.bit_length() - 1], found_cost)
    return best[(1 << n) - 1].tree


def compiled(costing: Costing, clock: Clock) -> Tree | None:
    """:func:`search` in :func:`jitcep.kernels.join_search.dp_left_deep` (its twin is the loop above), every
    join charged once it ran; None where the kernel does not run (:func:`._common.compiled_search`)."""
    got = compiled_search(costing, join_search.dp_left_deep, joins(costing.problem.n), clock)
    return None if got is None else left_deep(got[0].tolist())


def order(costing: Costing, clock: Clock) -> list[int]:
    """The units in the order of the best left-deep tree."""
    return list(leaves(search(costing, clock)))


def planned(costing: Costing, steps: int | None = None) -> Tree:
    """The best left-deep tree, or GREEDY's when its joins do not fit in ``steps`` (default
    ``config.PLAN_DEFAULT_STEPS``)."""
    return exact_or_greedy(search, joins(costing.problem.n), costing, steps, "dp_left_deep")


plan = on_costing(planned)  # plan(problem, cost, *, seed, steps), as every algorithm
