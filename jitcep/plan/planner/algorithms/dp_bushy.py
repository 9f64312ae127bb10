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
``_common``).  When its joins do not fit in its budget of steps it returns
GREEDY's plan (``_common.exact_or_greedy``): Kolchinsky's Figure 7 reports 50
hours at 22 units.
"""

from __future__ import annotations

from math import comb

from ....kernels import join_search
from ..problem import Tree
from ._common import Clock, Costing, compiled_search, exact_or_greedy, on_costing


def joins(n: int) -> dict[int, int]:
    """Priced joins by the size k of the joined set: each of the C(n, k) sets tries its 2^k - 2 ordered
    splits (3^n - 2^(n+1) + 1 in all)."""
    return {k: comb(n, k) * (2 ** k - 2) for k in range(2, n + 1)}


def search(costing: Costing, clock: Clock) -> Tree:
    """The best bushy tree (ties: the split with the lowest left bitmask); each set's splits are charged to
    ``clock`` before they are priced (``OverBudget`` when they do not fit)."""
    n = costing.problem.n
    if (found := compiled(costing, clock)) is not None:
        return found
    best = {plan.mask: plan for plan in costing.leaves}
    join_cost, per_join = costing.join_cost, costing.steps_per_join
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
        clock.charge(len(splits) * per_join[s.bit_count()])
        for left in splits:
            c = join_cost(best[left], best[s ^ left])
            if found_cost is None or c < found_cost:
                found, found_cost = left, c
        best[s] = costing.join(best[found], best[s ^ found], found_cost)
    return best[(1 << n) - 1].tree


def compiled(costing: Costing, clock: Clock) -> Tree | None:
    """:func:`search` in :func:`jitcep.kernels.join_search.dp_bushy` (its twin is the loop above), every
    join charged once it ran; None where the kernel does not run (:func:`._common.compiled_search`)."""
    n = costing.problem.n
    got = compiled_search(costing, join_search.dp_bushy, joins(n), clock)
    if got is None:
        return None
    split = got[0]

    def tree(s: int) -> Tree:
        if not s & (s - 1):
            return s.bit_length() - 1
        left = int(split[s])
        return (tree(left), tree(s ^ left))
    return tree((1 << n) - 1)


def planned(costing: Costing, steps: int | None = None) -> Tree:
    """The best bushy tree, or GREEDY's when its joins do not fit in ``steps`` (default
    ``config.PLAN_DEFAULT_STEPS``)."""
    return exact_or_greedy(search, joins(costing.problem.n), costing, steps, "dp_bushy")


plan = on_costing(planned)  # plan(problem, cost, *, seed, steps), as every algorithm
