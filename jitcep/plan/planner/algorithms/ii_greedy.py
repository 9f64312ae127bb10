"""II-GREEDY: iterative improvement from the greedy order (Kolchinsky & Schuster 2018, 6.1).

"II-GREEDY first applies a greedy algorithm to create an initial state", then
the local search of :mod:`.iterative_improvement`; it is never worse than
GREEDY, and Kolchinsky's Figures 3-4 find its plans slightly more
memory-efficient than DP-LD's.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, left_deep
from ._common import Costing, greedy_order
from .iterative_improvement import improve


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The left-deep tree over the local minimum reached from the greedy order (``seed`` unused)."""
    costing = Costing(problem, cost)
    return left_deep(improve(costing, greedy_order(costing), steps))
