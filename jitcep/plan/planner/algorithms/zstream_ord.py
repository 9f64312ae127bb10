"""ZSTREAM-ORD: ZStream's dynamic program over a cost-based order (Kolchinsky & Schuster 2018, 6.1).

"The limitation of the ZStream algorithm is in its inability to modify the
order of tree leaves. This algorithm attempts to utilize an order-based JQPG
method to overcome this drawback. It operates by first executing GREEDY on the
leaves of the tree to produce a 'good' ordering, then applying ZSTREAM on the
resulting list."

Here the order is DP-LD's (the best left-deep order) when DP-LD and the
program after it fit in ``budget``, and GREEDY's, as in the paper, beyond it.
The left-deep tree over the order is one of the trees ZStream's program
considers, so (for models with optimal substructure) ZSTREAM-ORD is never worse
than DP-LD, or than GREEDY past the budget; its time is one DP-LD plus O(n^3).
Both stages share one deadline: should the program itself overrun it (a slow
model without a node term), the plan is the left-deep tree over the order.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, left_deep
from . import dp_left_deep, zstream
from ._common import DEFAULT_BUDGET, Costing, Deadline, greedy_order, step_factor, within_budget


def order(costing: Costing, deadline: Deadline) -> list[int]:
    """DP-LD's order if DP-LD and ZStream's program after it fit before ``deadline``, else GREEDY's."""
    n = costing.problem.n
    seconds = (dp_left_deep.estimate(n) + zstream.estimate(n)) * step_factor(costing.cost)
    return within_budget(lambda d: dp_left_deep.order(costing, d), seconds, deadline, lambda: greedy_order(costing),
                         "zstream_ord took greedy's order, not dp_left_deep's")


def plan(problem: JoinProblem, cost, *, seed: int = 0, budget: float | None = None) -> Tree:
    """ZStream's best tree over DP-LD's order (GREEDY's past ``budget``, default ``_common.DEFAULT_BUDGET``)."""
    deadline = Deadline(DEFAULT_BUDGET if budget is None else budget)
    costing = Costing(problem, cost)
    units = order(costing, deadline)
    seconds = zstream.estimate(problem.n) * step_factor(cost)
    return within_budget(lambda d: zstream.search(costing, units, d).tree, seconds, deadline,
                         lambda: left_deep(units), "zstream_ord kept the left-deep tree over its order")
