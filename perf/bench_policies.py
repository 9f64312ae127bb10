"""Standalone benchmark: each output policy and consumption constraint against ``output="all"``.

    PYTHONPATH=. python perf/bench_policies.py --n 100000 1000000 --repeat 5

The pattern is bench_seq.py's SEQ of 3 with a key (issue 15's ``SEQ(A, B, C) [k]``):

    PATTERN SEQ(T0 e0, T1 e1, T2 e2) WHERE [symbol] AND e0.price > 20 AND e2.price > e0.price WITHIN W

over bench_seq.py's synthetic events (String type, Int64 symbol).  For each
event count and option set (docs/semantics.md section 9: ``non_overlapping``,
``match_single``, ``match_next``, ``consume_types``, ``contiguous``,
``freeze``) it prints the median of ``--repeat`` warm ``Query.run`` calls (the
compiled engine, end to end: event table, plan, kernels, output frame), the
matches, and the ratio to the same pattern under the defaults.  Every run
asserts that the compiled engine ran it (no FallbackWarning).
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
from perf.bench_seq import make_events, pattern_text  # noqa: E402

OPTION_SETS = {
    "all": {},
    "non_overlapping": dict(output="non_overlapping"),
    "match_single": dict(output="match_single"),
    "match_next": dict(output="match_next"),
    "match_single T1": dict(output="match_single", consume_types=["T1"]),
    "contiguous e1,e2": dict(contiguous=[("e1", "e2")]),
    "freeze e0": dict(freeze=["e0"]),
}


def timed(query, df, repeat: int) -> tuple[float, int]:
    """Median seconds of ``repeat`` warm runs (after one run that compiles), and the matches."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FallbackWarning would measure the reference evaluator
        out = query.run(df, time="ts", type="type")
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            query.run(df, time="ts", type="type")
            times.append(time.perf_counter() - t0)
    return statistics.median(times), out.height


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--types", type=int, default=5)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--window", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    text = pattern_text(3, args.window)
    print(text)
    print(f"{'events':>9} {'options':<18} {'seconds':>9} {'matches':>9} {'x all':>7}")
    for n in args.n:
        df = make_events(n, args.types, args.keys, flavour="int")
        base = None
        for name, kw in OPTION_SETS.items():
            sec, matches = timed(jitcep.compile(text, **kw), df, args.repeat)
            base = sec if base is None else base
            print(f"{n:>9} {name:<18} {sec:>9.4f} {matches:>9} {sec / base:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
