"""Standalone benchmark: where an output-heavy run's time goes (issue 16, output at memory speed).

    PYTHONPATH=. python perf/bench_output.py [--select output_nasdaq_1m output_synthetic output_synthetic_keyed]
        [--n 1000000] [--repeat 3]

Per workload of perf/workloads.py: warm ``Query.run(threads=1)`` runs with timers around the join
kernels (``seq_join``, ``seq_join_rows``), the joins' output records (``pair_records``), the canonical
order (``canonical_table``, or ``canonical_pairs`` where the final join writes the match table;
``seq_join_rows`` writes it in that order, so "join" includes the order there) and the wide output
(``to_frame``); the best run's wall / CPU seconds per stage and its matches/s, then the floor: the
output's bytes written by NumPy into fresh pages in the same process.  CPU (process) time is
printed beside wall time because on a shared machine a run's wall time mostly waits for a core.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jitcep  # noqa: E402
import jitcep.execute.executor as EX  # noqa: E402
import jitcep.execute.join as EJ  # noqa: E402
import jitcep.output as O  # noqa: E402
from perf.workloads import WORKLOADS  # noqa: E402

STAGES = ((EJ, "seq_join", "join"), (EJ, "seq_join_rows", "join"), (EJ, "pair_records", "records"),
          (EX, "canonical_table", "canonical"), (EJ, "canonical_pairs", "canonical"),
          (O, "to_frame", "output"))
# (the final join writes the match table itself: jitcep.kernels.order.canonical_pairs, "canonical", or
# jitcep.kernels.join.seq_join_rows, rows in canonical order, "join")


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
        if hasattr(mod, name):  # canonical_pairs: not in an older jitcep/
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
            out = query.run(df, time="ts", type="type", threads=1)
            matches = out.height
            spent["total"] = [time.perf_counter() - t, time.process_time() - c]
            if best is None or spent["total"][0] < best["total"][0]:
                best = {k: tuple(v) for k, v in spent.items()}
        stages = " ".join(f"{k}={v[0]:.3f}/{v[1]:.3f}" for k, v in best.items())
        print(f"{name}: {matches} matches, wall/cpu s {stages}; {matches / best['total'][0] / 1e6:.2f}M matches/s")
        print(f"  floor: {_floor(out.estimated_size())}")
    return 0


def _floor(nbytes: int) -> str:
    """What writing the output's bytes costs here and now: fresh NumPy int64 arrays of 8 MB filled with
    ``np.copyto`` (best of 3), against the same arrays written again (warm pages)."""
    n = 1 << 20
    src = np.arange(n, dtype=np.int64)
    best = None
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        arrays = []
        for _ in range(max(1, nbytes // (8 * n))):
            a = np.empty(n, np.int64)
            np.copyto(a, src)
            arrays.append(a)
        fresh = (time.perf_counter() - t, time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        for a in arrays:
            np.copyto(a, src)
        warm = (time.perf_counter() - t, time.process_time() - c)
        del arrays
        if best is None or fresh[0] < best[0][0]:
            best = (fresh, warm)
    (fw, fc), (ww, wc) = best
    return (f"{nbytes / 2**20:.0f} MiB of output; the same bytes written by NumPy into fresh pages "
            f"{fw:.3f}/{fc:.3f} s, into the same pages again {ww:.3f}/{wc:.3f} s (wall/cpu)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
