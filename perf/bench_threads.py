"""Standalone benchmark: the thread-count axis of ``Query.run(threads=)`` (issue 16, all cores).

    python perf/bench_threads.py [--select seq_len3 zstream_q6 ...] [--threads 1 2] [--n 1000000] [--repeat 9]
    python perf/bench_threads.py --share [--select ...] [--repeat 7]

For each workload of perf/workloads.py (default: the seven of perf/notes/threads.md, two
of them the join-heavy cases below) and each thread count: the median time of ``Query.run`` end to
end and of the matching stage alone (``runtime.evaluate`` on a built event table), and the speed-up
over the first count, all in one process, runs interleaved, so the ratios share the machine's state;
the load average before and after says whether the cores were free (the figures mean little when it
is above the core count).  Every count's matches are checked equal to the first count's.  ``--markdown``
prints the rows as perf/notes/threads.md's tables.  What splits over threads is in docs/semantics.md §14;
``--share`` measures how much of a run that is, in thread CPU time, so it holds on a busy machine too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from perf.workloads import WORKLOADS  # noqa: E402

DEFAULT = ("seq_len3", "seq_len12", "seq_win8000", "zstream_q6_rate1-100", "sase_equiv_v1000", "join_heavy_seq",
           "join_heavy_and")


def join_heavy(n: int, kind: str) -> tuple[pl.DataFrame, str]:
    """100 keys, 5 types, a wide window: most of the matching time goes to the joins and their predicates."""
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"ts": np.cumsum(rng.integers(0, 3, n)), "type": rng.choice(["A", "B", "C", "D", "E"], n),
                       "k": rng.integers(0, 100, n), "x": rng.uniform(0, 100, n)})
    op, window = ("SEQ", 1500) if kind == "seq" else ("AND", 300)
    return df, f"PATTERN {op}(A a, B b, C c) WHERE [k] AND a.x > 20 AND c.x > a.x + 60 WITHIN {window}"


def case(name: str, n: int) -> tuple[pl.DataFrame, str, dict]:
    """The workload's events, pattern text and the ``jitcep.compile`` options it needs (an output-heavy
    workload's raised caps)."""
    if name.startswith("join_heavy_"):
        return (*join_heavy(n, name.rsplit("_", 1)[1]), {})
    w = WORKLOADS[name]
    df, q = w.make(n)
    return df.drop("row", strict=False), q.text(), w.options


def medians(fs: list, repeat: int) -> list[float]:
    """The median time of each of ``fs``, their runs interleaved (f0, f1, f0, f1, ...) so a change in the
    machine's load or a first run's page faults do not favour one of them."""
    times = [[] for _ in fs]
    for _ in range(repeat):
        for f, ts in zip(fs, times):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return [statistics.median(ts) for ts in times]


def split_share(q, table, repeat: int, threads: int = 2) -> tuple[float, float, float, float, float]:
    """(median matching time at one thread, the median share of the matching time at ``threads`` spent
    in work that split, Amdahl's bound from that share, the bound with the ranges' real balance, and
    the run's time at ``threads`` run on one thread over the one-thread time).

    The run at ``threads`` goes through every call of ``jitcep.threads.run_ranges`` (wherever a module
    imported it: the joins, predicates and output records, the type grouping, the leaves, the key's
    range, the semi-join reduction, ...), which here runs the ranges one after another on this thread
    and times each: a call given several ranges is work that split; on ``threads`` free cores it would
    take as long as its longest range.  Amdahl's bound is ``1 / (1 - share + share / threads)``; the
    balanced one is the run's time over its time with each split call's ranges replaced by the
    longest (both from the same run: two runs differ by more than the ranges' imbalance on a loaded
    machine).  The last figure is that run's time over the one-thread run's: the cost of splitting
    (more passes, more kernel calls).  Everything runs on this one thread, so all of it is timed in
    this thread's CPU time: other processes on the cores change the ratios little (the threads'
    start and the cores' shared memory bandwidth are not in them: the wall-clock table is the
    measurement).
    """
    from jitcep import runtime, threads as thr

    clock = time.thread_time
    real = thr.run_ranges
    split = [0.0, 0.0]  # time in calls given several ranges; their longest ranges

    def one_by_one(fn, ranges):
        out, took = [], []
        for r in ranges:
            t = clock()
            out.append(fn(*r))
            took.append(clock() - t)
        if len(ranges) > 1:
            split[0] += sum(took)
            split[1] += max(took)
        return out

    def patch(name, to):
        for m in list(sys.modules.values()):
            if getattr(m, "__name__", "").startswith("jitcep") and getattr(m, name, None) is was[name]:
                setattr(m, name, to)
        was[name] = to

    was = {"run_ranges": real}
    ones, shares, balanced, cost = [], [], [], []
    try:
        for _ in range(repeat):
            patch("run_ranges", real)
            t = clock()
            runtime.evaluate(q.patterns, table, q.options, threads=1)
            ones.append(clock() - t)
            patch("run_ranges", one_by_one)
            split[:] = [0.0, 0.0]
            t = clock()
            runtime.evaluate(q.patterns, table, q.options, threads=threads)
            total = clock() - t
            shares.append(split[0] / total)
            balanced.append(total / (total - split[0] + split[1]))
            cost.append(total / ones[-1])
    finally:
        patch("run_ranges", real)
    share = statistics.median(shares)
    return (statistics.median(ones), share, 1 / (1 - share + share / threads), statistics.median(balanced),
            statistics.median(cost))


def main(argv=None) -> int:
    import jitcep
    from jitcep import runtime
    from jitcep.events import build_event_table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--select", nargs="+", default=list(DEFAULT))
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--markdown", action="store_true", help="the rows as perf/notes/threads.md's tables (two thread counts)")
    p.add_argument("--share", action="store_true",
                   help="instead: the share of the matching time that splits at the largest --threads count, "
                        "and the speed-up it allows (Amdahl, with the ranges' balance); not a wall-clock timing")
    args = p.parse_args(argv)
    print(f"cores available: {len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.2f}")
    if args.share:
        at = max(args.threads)
        print(f"{'workload':<22}{'match cpu s':>12}{'split share':>13}{'Amdahl at ' + str(at):>14}"
              f"{'balanced':>10}{'split cost':>12}")
        for name in args.select:
            df, text, options = case(name, args.n)
            q = jitcep.compile(text, **options)
            table = build_event_table(df, q.patterns, time="ts", type="type")
            runtime.evaluate(q.patterns, table, q.options)  # warm
            one, share, amdahl, balanced, cost = split_share(q, table, args.repeat, at)
            print(f"{name:<22}{one:>12.4f}{share:>13.2f}{amdahl:>13.2f}x{balanced:>9.2f}x{cost:>11.2f}x")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        return 0
    if args.markdown:
        t0, t1 = args.threads[0], args.threads[-1]
        print(f"| workload | matches | run {t0} thr | run {t1} thr | x | match {t0} thr | match {t1} thr | x |\n"
              f"|---|---|---|---|---|---|---|---|")
    else:
        print(f"{'workload':<22}{'threads':>8}{'run s':>10}{'x':>7}{'match s':>10}{'x':>7}{'matches':>10}")
    for name in args.select:
        df, text, options = case(name, args.n)
        q = jitcep.compile(text, **options)
        table = build_event_table(df, q.patterns, time="ts", type="type")
        q.run(df.head(1000), time="ts", type="type")  # kernels loaded, predicates compiled
        outs = [q.run(df, time="ts", type="type", threads=t) for t in args.threads]
        for t, out in zip(args.threads[1:], outs[1:]):
            if not out.equals(outs[0]):
                raise SystemExit(f"{name}: threads={t} gave other matches than threads={args.threads[0]}")
        run_s = medians([lambda t=t: q.run(df, time="ts", type="type", threads=t) for t in args.threads],
                        args.repeat)
        match_s = medians([lambda t=t: runtime.evaluate(q.patterns, table, q.options, threads=t)
                           for t in args.threads], args.repeat)
        if args.markdown:
            print(f"| {name} | {outs[0].height} | {run_s[0]:.4f} | {run_s[-1]:.4f} | {run_s[0] / run_s[-1]:.2f} | "
                  f"{match_s[0]:.4f} | {match_s[-1]:.4f} | {match_s[0] / match_s[-1]:.2f} |")
            continue
        for t, r, m in zip(args.threads, run_s, match_s):
            print(f"{name:<22}{t:>8}{r:>10.4f}{run_s[0] / r:>7.2f}{m:>10.4f}{match_s[0] / m:>7.2f}"
                  f"{outs[0].height:>10}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
