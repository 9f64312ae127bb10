"""II-RANDOM: iterative improvement from a random order (Kolchinsky & Schuster 2018, 6.1).

The local search of :mod:`.iterative_improvement` (swap and cycle moves to a
local minimum) started "from a random order"; the order is drawn from
``random.Random(seed)``, so a seed gives one plan.
"""

from __future__ import annotations

import random

from ..problem import JoinProblem, Tree, left_deep
from ._common import Costing
from .iterative_improvement import improve


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The left-deep tree over the local minimum reached from a seeded random order."""
    start = list(range(problem.n))
    random.Random(seed).shuffle(start)
    # an inadmissible start has an infinite cost no move improves strictly: start from an admissible one
    return left_deep(improve(Costing(problem, cost), problem.admissible_order(start), steps))
