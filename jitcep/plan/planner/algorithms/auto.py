"""AUTO: the exact bushy optimum when it is affordable, ZSTREAM-ORD beyond (DP-LD, then GREEDY, under Cost_ord).

Kolchinsky & Schuster's experiments (6.3, Figures 3-7) find DP-B's plans the
best and its planning time the only obstacle (exponential: 3^n joins priced),
and DuckDB's join-order optimizer settles the same trade-off with exact DP under
a budget and a greedy fallback.  The rule:

- DP-B when its joins (:func:`.dp_bushy.joins`: 3^n - 2^(n+1) + 1, charged
  ``_common.step_factor`` steps each: 4 under ZStream's node term) fit in the
  budget of steps (default ``config.AUTO_STEPS``, 50,000; per run of the
  engine :func:`budget_for` the table, ``config.AUTO_STEPS_PER_EVENT`` per event
  from ``config.AUTO_MIN_STEPS`` up: n <= 9 units under Cost_tree and n <= 8
  under ZStream's model at 50,000 steps, n <= 8 and n <= 7 at 10,000);
- else ZSTREAM-ORD within the same budget: DP-LD's order while DP-LD and the
  program after it fit (n * 2^(n-1) - n + (n^3 - n) / 6 joins: n <= 12 under
  Cost_tree and n <= 11 under ZStream's at 50,000 steps, n <= 10 and n <= 9
  at 10,000), GREEDY's beyond, then ZStream's O(n^3) program over it (about
  4 ms at 22 units under Cost_tree) — never worse than GREEDY, since the
  left-deep tree over the order is among the trees ZStream considers.

Under Cost_ord (``cost_model="order"``), which prices order-based plans only
(section 3.1), AUTO is DP-LD within the budget and GREEDY beyond it.

The steps are counted, not timed (``_common.Clock``): the choice depends on the
problem, the model and the budget alone, never on the machine's load.
"""

from __future__ import annotations

from .... import config
from ..cost import order
from ..problem import JoinProblem, Tree
from . import dp_bushy, dp_left_deep, zstream_ord
from ._common import Costing, note


def budget_for(events: int) -> int:
    """AUTO's planning budget in steps for a run over ``events`` events (``config.AUTO_STEPS_PER_EVENT``
    each, from ``config.AUTO_MIN_STEPS`` up to ``config.AUTO_STEPS``)."""
    return min(config.AUTO_STEPS, max(config.AUTO_MIN_STEPS, int(events * config.AUTO_STEPS_PER_EVENT)))


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """DP-B's tree if its joins fit in ``steps`` (default ``config.AUTO_STEPS``), else ZSTREAM-ORD's."""
    steps = config.AUTO_STEPS if steps is None else steps
    costing = Costing(problem, cost)  # one for the attempt and its fallback: its leaves, PMs and arrays
    if cost is order:
        return dp_left_deep.planned(costing, steps)
    needed = costing.steps(dp_bushy.joins(problem.n))
    if needed <= steps:
        return dp_bushy.planned(costing, steps)
    note(f"auto ran zstream_ord: dp_bushy needs {needed:,} steps at {problem.n} units, over the {steps:,} of "
         f"its planning budget")
    return zstream_ord.planned(costing, steps)
