"""ZSTREAM-ORD: ZStream's dynamic program over a cost-based order (Kolchinsky & Schuster 2018, 6.1).

"The limitation of the ZStream algorithm is in its inability to modify the
order of tree leaves. This algorithm attempts to utilize an order-based JQPG
method to overcome this drawback. It operates by first executing GREEDY on the
leaves of the tree to produce a 'good' ordering, then applying ZSTREAM on the
resulting list."

Here the order is DP-LD's (the best left-deep order) when that fits in
``budget``, and GREEDY's, as in the paper, beyond it.  The left-deep tree over
the order is one of the trees ZStream's program considers, so (for models with
optimal substructure) ZSTREAM-ORD is never worse than DP-LD, or than GREEDY
past the budget; its cost is one DP-LD plus O(n^3).
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree
from . import dp_left_deep, greedy, zstream
from ._common import DEFAULT_BUDGET, Costing, Deadline, OverBudget


def order(costing: Costing, budget: float) -> list[int]:
    """DP-LD's order if it fits in ``budget`` seconds, else GREEDY's."""
    if dp_left_deep.estimate(costing.problem.n) <= budget:
        try:
            return dp_left_deep.order(costing, Deadline(budget))
        except OverBudget:
            pass
    return greedy.order(costing)


def plan(problem: JoinProblem, cost, *, seed: int = 0, budget: float | None = None) -> Tree:
    """ZStream's best tree over DP-LD's order (GREEDY's past ``budget``, default ``_common.DEFAULT_BUDGET``)."""
    costing = Costing(problem, cost)
    return zstream.search(costing, order(costing, DEFAULT_BUDGET if budget is None else budget)).tree
