"""Standalone benchmark: the semi-join reduction (issue 16) on and off, in one process.

    PYTHONPATH=. python perf/bench_reduction.py --n 1000000 --repeat 3

For CORE's workload (``core_seq3/6/12/24`` of perf/workloads.py: SEQ of k of
20 uniform types, ``WITHIN 100 EVENTS``, no key) and for a workload where the
reduction removes nothing (``output_synthetic``: SEQ of 3 uniform types, window
20, every event on a chain), it prints the median of ``--repeat`` warm
``Query.run`` calls with the reduction (the default plan) and without it
(:data:`jitcep.config.REDUCE_MIN_VARS` raised past the pattern's length, the
plan the engine made before), runs alternating so load swings hit both, the
matches (asserted equal), the events/s, and the share of leaf events the
reduction kept with its own time (``explain(analyze=True)``: its node's time,
scans and joins excluded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jitcep  # noqa: E402
from jitcep import config  # noqa: E402
from perf.workloads import OUTPUT_CAPS, WORKLOADS  # noqa: E402

CASES = ("core_seq3", "core_seq6", "core_seq12", "core_seq24", "output_synthetic")


def _run(text, df, reduce: bool):
    saved = config.REDUCE_MIN_VARS
    config.REDUCE_MIN_VARS = saved if reduce else 10**9
    try:  # compiled afresh: a plan is kept per query object
        q = jitcep.compile(text, **OUTPUT_CAPS)
        q.run(df, time="ts", type="type")  # warm: Numba, the predicate set
        t0 = time.perf_counter()
        out = q.run(df, time="ts", type="type")
        dt = time.perf_counter() - t0
        tree = q.explain(df, time="ts", type="type", analyze=True, format="dict") if reduce else None
    finally:
        config.REDUCE_MIN_VARS = saved
    return dt, out, tree


def _reduction(tree):
    """(leaf events kept / read, the reduction's own seconds) from an analyzed plan, or None."""
    node = tree["children"][0]
    while node["op"] != "semi-join reduction":
        if not node["children"]:
            return None
        node = node["children"][0]
    return node


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    args = ap.parse_args(argv)
    print(f"{'case':<18}{'matches':>10}{'off s':>9}{'on s':>9}{'off ev/s':>12}{'on ev/s':>12}{'on/off':>8}"
          f"{'reduce ms':>11}")
    warnings.simplefilter("error")  # a FallbackWarning would measure the reference evaluator
    for name in args.cases:
        df, sq = WORKLOADS[name].make(args.n)
        text = sq.text()
        on, off, m = [], [], None
        node = None
        for _ in range(args.repeat):
            dt, out, tree = _run(text, df, True)
            on.append(dt)
            node = _reduction(tree) or node
            dt2, out2, _ = _run(text, df, False)
            off.append(dt2)
            if not out.equals(out2):
                raise SystemExit(f"{name}: the reduction changed the matches")
            m = out.height
        t_on, t_off = statistics.median(on), statistics.median(off)
        red = f"{node['time_s'] * 1e3:11.1f}" if node else f"{'-':>11}"
        print(f"{name:<18}{m:>10}{t_off:>9.3f}{t_on:>9.3f}{args.n / t_off:>12.3g}{args.n / t_on:>12.3g}"
              f"{t_off / t_on:>8.2f}{red}", flush=True)


if __name__ == "__main__":
    main()
