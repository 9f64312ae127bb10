"""GREEDY: the greedy cost-based join order, left-deep (Swami 1989; Kolchinsky & Schuster 2018, 6.1).

"This greedy heuristic algorithm for JQPG proceeds by selecting at each step
the relation which minimizes the value of the cost function": starting from
the unit that is cheapest alone, append the unit whose join to the plan so far
costs least.  Under Cost_ord (section 3.1) that is the unit minimising the next
prefix's PM.  O(n^2) joins priced; Kolchinsky's Figure 7 finds it the best
trade-off between planning time and plan quality.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, left_deep
from ._common import Costing, greedy_order


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The left-deep tree over the greedy order (``seed`` and ``steps`` unused: it is O(n^2))."""
    return left_deep(greedy_order(Costing(problem, cost)))
