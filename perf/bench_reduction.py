"""Standalone benchmark: the semi-join reduction (issue 16) on and off, in one process.

    PYTHONPATH=. python perf/bench_reduction.py --n 1000000 --repeat 3

For CORE's workload (``core_seq3/6/12/24`` of perf/workloads.py: SEQ of k of
20 uniform types, ``WITHIN 100 EVENTS``, no key) and for one where the
reduction removes no leaf event (``output_synthetic``: SEQ of 3 uniform types,
window 20, every event on a chain), it prints the median of ``--repeat`` warm
``Query.run(threads=1)`` calls with the reduction (the default plan) and
without it (:data:`jitcep.config.REDUCE_MIN_VARS` raised past the pattern's
length: the plan the engine made before), alternating so load swings hit
both, in CPU seconds of the process (the machine is shared: wall time moves
with the other jobs, CPU time much less) and wall seconds; the matches
(asserted equal); events/s on the CPU medians; the share of leaf events the
reduction kept; and the reduction's own CPU time in the last run with it (its
two passes and the extending joins' tests, timed around those calls).
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
from jitcep.execute import reduction  # noqa: E402
from perf.workloads import OUTPUT_CAPS, WORKLOADS  # noqa: E402

CASES = ("core_seq3", "core_seq6", "core_seq12", "core_seq24", "output_synthetic")
REDUCE = config.REDUCE_MIN_VARS
COST = {"s": 0.0, "kept": 0, "read": 0}


def _timed(fn, count=False):
    def wrapped(*args, **kw):
        t0 = time.process_time()
        out = fn(*args, **kw)
        COST["s"] += time.process_time() - t0
        if count:  # chain_reach: the leaf events it read and kept
            COST["read"] += sum(len(on) for on, _, _ in out)
            COST["kept"] += sum(int(on.sum()) for on, _, _ in out)
        return out
    return wrapped


reduction.chain_reach = _timed(reduction.chain_reach, count=True)
reduction.Reach.extendable = _timed(reduction.Reach.extendable)


def _run(q, df, reduce: bool):
    config.REDUCE_MIN_VARS = REDUCE if reduce else 10**9  # plans are made per run, on the table
    COST.update(s=0.0, kept=0, read=0)
    c0, t0 = time.process_time(), time.perf_counter()
    out = q.run(df, time="ts", type="type", threads=1)
    return time.process_time() - c0, time.perf_counter() - t0, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    args = ap.parse_args(argv)
    print(f"{'case':<18}{'matches':>10}{'off cpu s':>10}{'on cpu s':>10}{'off wall':>10}{'on wall':>10}"
          f"{'off ev/s':>10}{'on ev/s':>10}{'off/on':>8}{'kept':>7}{'pass ms':>9}")
    warnings.simplefilter("error")  # a FallbackWarning would measure the reference evaluator
    for name in args.cases:
        df, sq = WORKLOADS[name].make(args.n)
        q = jitcep.compile(sq.text(), **OUTPUT_CAPS)
        got = {r: _run(q, df, r)[2] for r in (True, False)}  # warm: Numba, the predicate set
        if not got[True].equals(got[False]):
            raise SystemExit(f"{name}: the reduction changed the matches")
        times = {True: [], False: []}
        for _ in range(args.repeat):
            for r in (True, False):
                cpu, wall, _ = _run(q, df, r)
                times[r].append((cpu, wall))
                if r:
                    cost, kept = COST["s"], COST["kept"] / max(COST["read"], 1)
        on = [statistics.median(x) for x in zip(*times[True])]
        off = [statistics.median(x) for x in zip(*times[False])]
        print(f"{name:<18}{got[True].height:>10}{off[0]:>10.3f}{on[0]:>10.3f}{off[1]:>10.3f}{on[1]:>10.3f}"
              f"{args.n / off[0]:>10.3g}{args.n / on[0]:>10.3g}{off[0] / on[0]:>8.2f}{kept:>7.1%}"
              f"{cost * 1e3:>9.1f}", flush=True)
    config.REDUCE_MIN_VARS = REDUCE


if __name__ == "__main__":
    main()
