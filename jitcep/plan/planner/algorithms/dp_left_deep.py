"""DP-LD: Selinger's dynamic programming for the best left-deep plan (Selinger 1979; Kolchinsky & Schuster 2018, 6.1).

"This exponential-time algorithm utilizes dynamic programming to produce a
provably optimal execution plan. The result is limited to a left-deep tree
topology."  For every set S of units, by increasing size, the best order of S
is the best order of S - {i} followed by i, over i in S:

    best[{i}] = i
    best[S]   = min over i in S of  join(best[S - {i}], i)

exact for every model with optimal substructure (see ``_common``), in
n * 2^(n-1) priced joins and 2^n plans of memory.  Past its budget it falls
back to GREEDY (``_common.exact_or_greedy``).
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, leaves
from ._common import Costing, Deadline, exact_or_greedy


# Seconds per priced join, measured with the intermediate model (perf/README.md: 1.0-1.3 us from 7 units
# up, the set's own bookkeeping included; more below, where it does not matter), rounded up.
STEP_SECONDS = 2.0e-6


def estimate(n: int) -> float:
    """Seconds the search is expected to take: each of the 2^n sets tries each of its members last."""
    return n * 2.0 ** (n - 1) * STEP_SECONDS


def search(costing: Costing, deadline: Deadline) -> Tree:
    """The best left-deep tree (ties: the higher index joins last)."""
    n = costing.problem.n
    unit = costing.leaves
    join_cost = costing.join_cost
    best = {plan.mask: plan for plan in unit}
    # sets in increasing numeric order: every S - {i} is smaller than S, so already solved
    for s in range(1, 1 << n):
        if s in best:
            continue
        deadline.check()
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


def order(costing: Costing, deadline: Deadline) -> list[int]:
    """The units in the order of the best left-deep tree."""
    return list(leaves(search(costing, deadline)))


def plan(problem: JoinProblem, cost, *, seed: int = 0, budget: float | None = None) -> Tree:
    """The best left-deep tree, or GREEDY's past ``budget`` seconds (default ``_common.DEFAULT_BUDGET``)."""
    return exact_or_greedy(search, estimate(problem.n), problem, cost, budget, "dp_left_deep")
