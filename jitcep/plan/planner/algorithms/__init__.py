"""Plan-generation algorithms: a join problem and a cost model in, a join tree out.

One module per algorithm, named as in Kolchinsky & Schuster (VLDB 2018,
section 6.1) and ZStream (Mei & Madden 2009, 5.2.3); each is a function

    plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree

where ``cost(problem, tree) -> float`` is any cost model (:mod:`..cost`), ``seed``
fixes the random choices (only II-RANDOM has any) and ``steps`` is the planning
budget in counted steps, one per join priced under Cost_tree (None: the
algorithm's default; :mod:`._common`, ``config.PLAN_STEP_NS``).  Exact
algorithms whose work does not fit return GREEDY's plan; every plan contains every unit exactly once and is the
same for the same problem, model and seed (ties go to the lower index).

The searches price a join in O(1) when the model declares its per-node term
(``model.node_cost(problem, pm, left, right)``; Cost_tree's is built in), and
call the model on every candidate tree otherwise: see :mod:`._common`.

Order-based (left-deep): ``trivial``, ``efreq``, ``greedy``, ``ii_random``,
``ii_greedy``, ``dp_left_deep``.  Tree-based: ``zstream``, ``zstream_ord``,
``dp_bushy``.  ``auto`` picks DP-B or ZSTREAM-ORD by size (:mod:`.auto`).
"""

from __future__ import annotations

from . import auto, dp_bushy, dp_left_deep, efreq, greedy, ii_greedy, ii_random, trivial, zstream, zstream_ord

ALGORITHMS = {
    "trivial": trivial.plan,
    "efreq": efreq.plan,
    "greedy": greedy.plan,
    "ii_random": ii_random.plan,
    "ii_greedy": ii_greedy.plan,
    "dp_left_deep": dp_left_deep.plan,
    "zstream": zstream.plan,
    "zstream_ord": zstream_ord.plan,
    "dp_bushy": dp_bushy.plan,
    "auto": auto.plan,
}

# The algorithms whose plans are left-deep trees (order-based plans, section 3.1).
LEFT_DEEP = ("trivial", "efreq", "greedy", "ii_random", "ii_greedy", "dp_left_deep")

__all__ = ["ALGORITHMS", "LEFT_DEEP"]
