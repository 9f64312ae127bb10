"""Standalone benchmark: where an output-heavy run's time goes (issue 16, output at memory speed).

    PYTHONPATH=. python perf/bench_output.py [--select output_nasdaq_1m output_synthetic] [--n 1000000] [--repeat 3]

Per workload of perf/workloads.py: warm ``Query.run(threads=1)`` runs with timers around the join
kernels (``seq_join``), the joins' output records (``pair_records``), the canonical order
(``canonical_table``) and the wide output (``to_frame``); the best run's wall / CPU seconds per stage
and its matches/s.  CPU (process) time is printed beside wall time because on a shared machine a
run's wall time mostly waits for a core.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jitcep  # noqa: E402
import jitcep.execute.executor as EX  # noqa: E402
import jitcep.execute.join as EJ  # noqa: E402
import jitcep.output as O  # noqa: E402
from perf.workloads import WORKLOADS  # noqa: E402

STAGES = ((EJ, "seq_join", "join"), (EJ, "pair_records", "records"), (EX, "canonical_table", "canonical"),
          (O, "to_frame", "output"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", nargs="+", default=["output_nasdaq_1m", "output_synthetic"])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    spent = collections.defaultdict(lambda: [0.0, 0.0])

    def timed(f, label):
        def g(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[label][0] += time.perf_counter() - t
                spent[label][1] += time.process_time() - c
        return g

    for mod, name, label in STAGES:
        setattr(mod, name, timed(getattr(mod, name), label))
    for name in args.select:
        w = WORKLOADS[name]
        df, q = w.make(args.n)
        query = jitcep.compile(q.text(), **w.options)
        query.run(df.head(1000), time="ts", type="type", threads=1)
        best = None
        for _ in range(args.repeat):
            spent.clear()
            t, c = time.perf_counter(), time.process_time()
            matches = query.run(df, time="ts", type="type", threads=1).height
            spent["total"] = [time.perf_counter() - t, time.process_time() - c]
            if best is None or spent["total"][0] < best["total"][0]:
                best = {k: tuple(v) for k, v in spent.items()}
        stages = " ".join(f"{k}={v[0]:.3f}/{v[1]:.3f}" for k, v in best.items())
        print(f"{name}: {matches} matches, wall/cpu s {stages}; {matches / best['total'][0] / 1e6:.2f}M matches/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
