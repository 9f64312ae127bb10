"""TRIVIAL: the units joined in pattern order, left-deep (Kolchinsky & Schuster 2018, 6.1).

"The evaluation plan is set to the initial order of the sequence pattern" — the
plan of SASE's and Cayuga's NFAs, and jitcep's before it had a planner.  It
reads neither the statistics nor the cost model.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, left_deep


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The left-deep tree over units 0, 1, ..., n-1 (a closure unit right after its ``need``:
    :meth:`JoinProblem.pattern_order`)."""
    return left_deep(problem.pattern_order())
