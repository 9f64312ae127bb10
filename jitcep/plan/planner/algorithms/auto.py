"""AUTO: the exact bushy optimum when it is affordable, ZSTREAM-ORD beyond.

Kolchinsky & Schuster's experiments (6.3, Figures 3-7) find DP-B's plans the
best and its planning time the only obstacle (exponential: 3^n joins priced),
and DuckDB's join-order optimizer settles the same trade-off with exact DP under
a budget and a greedy fallback.  The rule:

- DP-B when its estimated time (:func:`.dp_bushy.estimate`: 3^n priced
  joins at about 1 us, times ``_common.step_factor`` for a slower model's
  node term: 4 for ZStream's) is affordable in ``budget`` (twice it fits,
  ``_common.HEADROOM``; default :data:`BUDGET`, 50 ms, and per run of the engine
  :func:`budget_for` the table, 10 ns per event from 10 ms up to 50 ms: n <= 9 units under
  Cost_tree, n <= 7 under ZStream's model; measured in perf/README.md), which
  returns GREEDY's plan if it overruns anyway (a model without a node term is
  priced far slower);
- else ZSTREAM-ORD within the same budget: DP-LD's order while that is
  affordable (n * 2^(n-1) joins at about 2 us: n <= 11 at 50 ms under
  Cost_tree, n <= 9 under ZStream's), GREEDY's beyond, then ZStream's O(n^3)
  program over it (about 4 ms at 22 units under Cost_tree) — never worse
  than GREEDY, since the left-deep tree over the order is among the trees
  ZStream considers.
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree
from . import dp_bushy, zstream_ord
from ._common import affordable, note, step_factor

# Seconds of planning AUTO allows by default: compile-time planning should stay out of sight.
BUDGET = 0.05
# Per run, AUTO's budget scales with the events (:func:`budget_for`): 10 ns each, at least 10 ms.  The
# cheapest runs cost ~12 ns per event (perf/README.md "Planner statistics"), so from 10^6 events the
# search stays within about the run's own time, and 5 * 10^6 events or more get the whole BUDGET.  Not
# less than 10 ms: a search that overruns its deadline falls back to another plan, so a budget near the
# searches' own times would let the machine's load choose the plan.
PER_EVENT, MIN_BUDGET = 1e-8, 0.01


def budget_for(events: int) -> float:
    """AUTO's planning budget in seconds for a run over ``events`` events (see :data:`PER_EVENT`)."""
    return min(BUDGET, max(MIN_BUDGET, events * PER_EVENT))


def plan(problem: JoinProblem, cost, *, seed: int = 0, budget: float | None = None) -> Tree:
    """DP-B's tree if it is affordable in ``budget`` seconds (default :data:`BUDGET`), else ZSTREAM-ORD's."""
    budget = BUDGET if budget is None else budget
    seconds = dp_bushy.estimate(problem.n) * step_factor(cost)
    if affordable(seconds, budget):
        return dp_bushy.plan(problem, cost, budget=budget)
    note(f"auto ran zstream_ord: dp_bushy estimated {seconds * 1e3:.3g} ms at {problem.n} units, twice that "
         f"over the {budget * 1e3:.3g} ms budget")
    return zstream_ord.plan(problem, cost, budget=budget)
