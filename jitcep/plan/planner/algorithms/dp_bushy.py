"""DP-B: dynamic programming over all subsets for the best bushy plan (Kolchinsky & Schuster 2018, 6.1).

"Same as DP-LD, but without the topology restriction": for every set S of
units, by increasing size, the best tree of S joins the best trees of a split
of S into two non-empty parts,

    best[{i}] = i
    best[S]   = min over L subset of S, 0 < L < S, of  join(best[L], best[S - L])

— DPsub in Moerkotte & Neumann's terms (their [38]).  Cross products are
allowed, as in every CEP planner (section 3.3), so every split is a candidate
and there is no connected-subgraph pruning (DPccp) to do.  Both (L, R) and
(R, L) are priced, since a model may cost the two sides of a join differently.
3^n priced joins; exact for every model with optimal substructure (see
``_common``).  Past its budget it falls back to GREEDY
(``_common.exact_or_greedy``): Kolchinsky's Figure 7 reports 50 hours at 22 units.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree
from ._common import Costing, Deadline, exact_or_greedy


# Seconds per priced join, measured with the intermediate model (perf/README.md: 0.55-0.6 us from 7
# units up, up to 1.1 us on a busy machine), rounded up.
STEP_SECONDS = 1.0e-6

# Splits priced between two looks at the deadline: a large set has 2^(n-1) splits, seconds' worth under a
# model without a node term.
CHUNK = 1024


def estimate(n: int) -> float:
    """Seconds the search is expected to take: ordered splits of every set, 3^n - 2^(n+1) + 1."""
    return (3.0 ** n - 2.0 ** (n + 1) + 1) * STEP_SECONDS


def search(costing: Costing, deadline: Deadline) -> Tree:
    """The best bushy tree (ties: the split with the lowest left bitmask)."""
    n = costing.problem.n
    best = {plan.mask: plan for plan in costing.leaves}
    join_cost = costing.join_cost
    # sets in increasing numeric order: both parts of a split are smaller than the set, so already solved
    for s in range(1, 1 << n):
        if s in best:
            continue
        found, found_cost = None, None
        left = (s - 1) & s  # proper non-empty submasks, generated from the largest down
        splits = []
        while left:
            splits.append(left)
            left = (left - 1) & s
        splits.reverse()  # ascending: ties go to the lowest left bitmask
        for first in range(0, len(splits), CHUNK):
            deadline.check()
            for left in splits[first:first + CHUNK]:
                c = join_cost(best[left], best[s ^ left])
                if found_cost is None or c < found_cost:
                    found, found_cost = left, c
        best[s] = costing.join(best[found], best[s ^ found], found_cost)
    return best[(1 << n) - 1].tree


def plan(problem: JoinProblem, cost, *, seed: int = 0, budget: float | None = None) -> Tree:
    """The best bushy tree, or GREEDY's past ``budget`` seconds (default ``_common.DEFAULT_BUDGET``)."""
    return exact_or_greedy(search, estimate(problem.n), problem, cost, budget, "dp_bushy")
