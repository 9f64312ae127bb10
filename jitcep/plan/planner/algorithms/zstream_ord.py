"""ZSTREAM-ORD: ZStream's dynamic program over a cost-based order (Kolchinsky & Schuster 2018, 6.1).

"The limitation of the ZStream algorithm is in its inability to modify the
order of tree leaves. This algorithm attempts to utilize an order-based JQPG
method to overcome this drawback. It operates by first executing GREEDY on the
leaves of the tree to produce a 'good' ordering, then applying ZSTREAM on the
resulting list."

Here the order is DP-LD's (the best left-deep order) when DP-LD and the
program after it fit in its budget of steps, and GREEDY's, as in the paper, beyond it.
The left-deep tree over the order is one of the trees ZStream's program
considers, so (for models with optimal substructure) ZSTREAM-ORD is never worse
than DP-LD, or than GREEDY past the budget; its time is one DP-LD plus O(n^3).
Both stages share one budget: should the program not fit in what DP-LD left
(after GREEDY's order), the plan is the left-deep tree over the order.
"""

from __future__ import annotations

from ..problem import Tree, left_deep
from . import dp_left_deep, zstream
from ._common import Clock, Costing, greedy_order, on_costing, within_budget


def order(costing: Costing, clock: Clock) -> list[int]:
    """DP-LD's order if DP-LD and ZStream's program after it fit in ``clock``, else GREEDY's."""
    n = costing.problem.n
    steps = costing.steps(dp_left_deep.joins(n)) + costing.steps(zstream.joins(n))
    return within_budget(lambda c: dp_left_deep.order(costing, c), steps, clock, lambda: greedy_order(costing),
                         "zstream_ord took greedy's order, not dp_left_deep's")


def planned(costing: Costing, steps: int | None = None) -> Tree:
    """ZStream's best tree over DP-LD's order (GREEDY's when DP-LD does not fit in ``steps``, default
    ``config.PLAN_DEFAULT_STEPS``)."""
    clock = Clock(steps)
    units = order(costing, clock)
    return within_budget(lambda c: zstream.search(costing, units, c).tree,
                         costing.steps(zstream.joins(costing.problem.n)), clock, lambda: left_deep(units),
                         "zstream_ord kept the left-deep tree over its order")


plan = on_costing(planned)  # plan(problem, cost, *, seed, steps), as every algorithm
