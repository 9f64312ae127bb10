"""Standalone benchmark: plan quality and planning time of each plan-generation algorithm against the number of units.

    PYTHONPATH=. python perf/bench_planning.py [--sizes 3 4 ... 22] [--problems 10] [--steps N] [--seed 0]
                                               [--black-box] [--python] [--markdown]

The shape of Kolchinsky & Schuster's Figure 7 (VLDB 2018, 6.3): for each size n, ``--problems`` random
join problems in the manner of their section 6.2 — per unit a rate of 1..45 events per second in a
20-second window (card = W * r), the SEQ order as a predicate of selectivity 1/2 on every pair (their
section 4), and about n/2 further pairwise predicates of selectivity 0.002..0.88 — each planned by every
algorithm of :data:`jitcep.plan.planner.algorithms.ALGORITHMS` under the intermediate cost model
(Cost_tree).  Printed per size and algorithm:

- Figure 7(a)'s normalised cost: the mean over problems of EFREQ's plan cost divided by the plan's cost
  (higher is better; EFREQ itself is 1 by definition, as in the paper, which leaves it out);
- the plan's cost divided by the cheapest plan any algorithm found for that problem (mean; 1 = the
  best; where DP-B ran exactly, the optimum), which shows how far each is from the best directly;
- Figure 7(b): the median planning time in milliseconds.

A ``*`` marks a cell where the algorithm did not finish its own search on at least one of the problems
(an exact search past its budget, returning GREEDY's plan or order: the notes of ``_common.noting``).

``--python`` runs the searches' Python loops (``Costing.compiled = False``), the time
``config.PLAN_STEP_NS`` was calibrated on; by default DP-B, DP-LD, ZStream's program and GREEDY run
compiled (``jitcep/kernels/join_search.py``), the same joins at a fraction of the time.
``--black-box`` hides the intermediate model's node term, so the searches call the model on every
candidate tree, as they do for a model that declares none (``algorithms/_common.py``).
``--steps`` is the planning budget passed to every algorithm, in counted steps (one join priced under
Cost_tree; default: each algorithm's own, ``config.AUTO_STEPS`` for ``auto``, ``config.PLAN_DEFAULT_STEPS``
for the others); an exact algorithm whose joins do not fit returns GREEDY's plan, which shows as its cost
leaving 1.00.  A last table gives the measured nanoseconds per step of the exact searches where they ran
(median time over the joins they price): the calibration behind ``config.PLAN_STEP_NS``.  Results on the
reference machine are in perf/notes/planning_time.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from itertools import combinations

from jitcep import config
from jitcep.plan.planner.algorithms import ALGORITHMS, dp_bushy, dp_left_deep, zstream
from jitcep.plan.planner.algorithms._common import Costing, noting
from jitcep.plan.planner.cost import intermediate
from jitcep.plan.planner.problem import JoinProblem

WINDOW = 20.0


def random_problem(n: int, rng: random.Random) -> JoinProblem:
    """A join problem shaped like Kolchinsky's stock patterns (6.2): see the module docstring."""
    card = [WINDOW * rng.uniform(1, 45) for _ in range(n)]
    sel = [[0.5] * n for _ in range(n)]
    pairs = list(combinations(range(n), 2))
    for i, j in rng.sample(pairs, min(len(pairs), max(1, n // 2))):
        sel[i][j] = sel[j][i] = 0.5 * rng.uniform(0.002, 0.88)
    return JoinProblem(tuple(range(n)), tuple(card), tuple(map(tuple, sel)))


def black_box(p: JoinProblem, tree) -> float:
    """The intermediate model without its node term."""
    return intermediate(p, tree)


def measure(n: int, problems: int, steps: int | None, seed: int, model=intermediate) -> dict:
    """Per algorithm over ``problems`` random problems of ``n`` units: EFREQ's cost over the plan's
    (``efreq``), the plan's cost over the best found (``cost``), planning times (``s``) and the number of
    problems on which the search did not finish (``fell``)."""
    rng = random.Random(seed * 1000 + n)
    out = {name: {"efreq": [], "cost": [], "s": [], "fell": 0} for name in ALGORITHMS}
    for _ in range(problems):
        p = random_problem(n, rng)
        costs = {}
        for name, plan in ALGORITHMS.items():
            with noting() as notes:
                started = time.perf_counter()
                tree = plan(p, model, seed=seed, steps=steps)
                out[name]["s"].append(time.perf_counter() - started)
            out[name]["fell"] += bool(notes)
            costs[name] = intermediate(p, tree)
        best = min(costs.values())
        for name, c in costs.items():
            out[name]["efreq"].append(costs["efreq"] / c)
            out[name]["cost"].append(c / best)
    return out


def print_table(rows: dict, key: str, fmt: str, title: str, markdown: bool = False) -> None:
    """One row per size, one column per algorithm: the mean of ``key`` (the median, in ms, for times);
    ``*`` where the search did not finish on some problem."""
    names = list(ALGORITHMS)
    print(f"\n{title}")
    if markdown:
        print("| n | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    else:
        print("   n " + " ".join(f"{name:>12}" for name in names))
    for n, per in rows.items():
        cells = []
        for name in names:
            values = per[name][key]
            value = statistics.median(values) * 1e3 if key == "s" else statistics.mean(values)
            cells.append(f"{value:{fmt}}" + ("*" if per[name]["fell"] else ""))
        if markdown:
            print(f"| {n} | " + " | ".join(cells) + " |")
        else:
            print(f"{n:>4} " + " ".join(f"{cell:>12}" for cell in cells))


def print_step_times(rows: dict, steps: int | None) -> None:
    """Nanoseconds per step (one join priced under Cost_tree) of DP-LD, DP-B and ZStream's program where
    they ran exactly (their joins fit the budget)."""
    print(f"\nexact searches: ns per step (median time / joins priced; '-' = fell back to greedy); "
          f"config.PLAN_STEP_NS = {config.PLAN_STEP_NS}")
    print("   n  dp_left_deep      dp_bushy       zstream")
    budget = config.PLAN_DEFAULT_STEPS if steps is None else steps
    for n, per in rows.items():
        cells = []
        for name, module in (("dp_left_deep", dp_left_deep), ("dp_bushy", dp_bushy), ("zstream", zstream)):
            joins = sum(module.joins(n).values())
            ran = name == "zstream" or joins <= budget
            seconds = statistics.median(per[name]["s"])
            cells.append(f"{seconds / joins * 1e9:>13.0f}" if ran and joins >= 1 else f"{'-':>13}")
        print(f"{n:>4} " + " ".join(cells))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(range(3, 23)))
    ap.add_argument("--problems", type=int, default=10, help="random problems per size")
    ap.add_argument("--steps", type=int, default=None, help="planning budget per algorithm call, in steps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--black-box", action="store_true", help="price whole trees (a model without a node term)")
    ap.add_argument("--python", action="store_true", help="the searches' Python loops, not the compiled ones")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args(argv)
    Costing.compiled = not args.python
    model = black_box if args.black_box else intermediate
    rows = {}
    for n in args.sizes:
        rows[n] = measure(n, args.problems, args.steps, args.seed, model)
    md = args.markdown
    print_table(rows, "efreq", ".3g", "Figure 7(a): EFREQ's plan cost / plan cost (mean; higher is better)", md)
    print_table(rows, "cost", ".3g", "plan cost / best plan's cost (mean; 1 = best found)", md)
    print_table(rows, "s", ".3g", "Figure 7(b): planning time, ms (median)", md)
    if not args.black_box:  # the per-join constants are the node-term ones
        print_step_times(rows, args.steps)


if __name__ == "__main__":
    main()
