"""Standalone benchmark: the planner's statistics estimate against a run on the same events.

    python perf/bench_statistics.py [--n 1000000] [--repeat 7] [--flavours int str] [--baseline FILE]
                                    [--baseline-kernels FILE] [--estimate-only] [--cpu]

Issue 14 asks the estimate (:func:`jitcep.plan.planner.sampling.estimate`) to cost under ~5% of
a run at 10^6 events.  Per workload and input flavour (perf/bench_seq.py's events: 24 types, 1000
keys, ts steps 0..2) this prints the median of ``--repeat`` warm runs of

- ``run``: ``jitcep.compile(text, planner="trivial").run(df, type="type")`` end to end (Polars
  in, Polars out), planned by rule;
- ``estimate``: the estimate on the event table of the same events (built once, outside the
  timing; the run builds its own), after one warm-up call that compiles the predicate function;
- ``auto``: the same run under ``planner="auto"`` (the default): estimate, plan search, and the
  run of the plan it chose;

and the estimate's share of ``run``: each estimate timed right after a run (they share the machine's
load), the median of their ratios; ``min ratio``: the fastest estimate over the fastest run.
``--baseline FILE`` (an older ``sampling.py``, e.g. from ``git show
main:jitcep/plan/planner/sampling.py > /tmp/old_sampling.py``; ``--baseline-kernels FILE``: the
kernels it imports from an older ``jitcep/kernels/sampling.py`` too) times that module's estimate too,
interleaved with this one's call by call (``base ms``), so a before / after comparison shares the
machine's load. ``--estimate-only`` skips the runs (``run`` and ``auto`` print as 0) and adds each
estimate's fastest call (``min``, ``base min``): on a loaded machine the medians of a few calls
swing by milliseconds, so a before / after of the estimate alone takes many calls (``--repeat 60``),
which the runs would make slow. ``--cpu`` times the estimates in thread CPU time and the runs in
process CPU time (every thread of the run), so a share measured on a loaded machine is CPU against
CPU; a run's threads working side by side make its CPU time exceed its wall time on a quiet machine,
so that share reads lower than the wall-time one there. The first estimate in a process also
compiles (or loads from the disk cache) the generated predicate function, as the run's first call
does: printed as ``first``.
"""

from __future__ import annotations

import argparse
import os
import statistics as st
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_seq import make_events  # noqa: E402

WORKLOADS = {
    "seq3_key": "PATTERN SEQ(T0 e0, T1 e1, T2 e2) WHERE [symbol] AND e0.price > 20 AND e2.price > e0.price "
                "WITHIN 2000",
    "seq6_key": "PATTERN SEQ(T0 e0, T1 e1, T2 e2, T3 e3, T4 e4, T5 e5) WHERE [symbol] AND e0.price > 20 "
                "AND e5.price > e0.price WITHIN 2000",
    "seq3_nokey": "PATTERN SEQ(T0 a, T1 b, T2 c) WHERE a.price > b.price + 40 AND b.volume < c.volume "
                  "WITHIN 20",
    "seq3_many": "PATTERN SEQ(T0 a, T1 b, T2 c) WHERE a.price < c.price WITHIN 300",
    "neg_kleene": "PATTERN SEQ(T0 a, !T3 n, T1+ b[], T2 c) WHERE [symbol] AND b[i].price > a.price "
                  "AND n.volume > 900 WITHIN 400",
}


def _times(fn, repeat: int, clock=time.perf_counter) -> list[float]:
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return times


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--flavours", nargs="+", default=["int", "str"])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--baseline", help="an older sampling.py whose estimate is timed beside this one's")
    ap.add_argument("--baseline-kernels", help="an older jitcep/kernels/sampling.py the baseline's kernels come from")
    ap.add_argument("--estimate-only", action="store_true", help="time the estimates alone, with their minimum")
    ap.add_argument("--cpu", action="store_true", help="time the estimates in thread CPU time and the runs in "
                    "process CPU time (all their threads), not wall time")
    args = ap.parse_args(argv)
    clock = time.thread_time if args.cpu else time.perf_counter
    run_clock = time.process_time if args.cpu else time.perf_counter  # a run's threads count too

    import jitcep
    from jitcep.events import build_event_table
    from jitcep.pattern.parser import parse
    from jitcep.plan.logical import logical_plan
    from jitcep.plan.planner.sampling import estimate
    from jitcep.plan.planner.statistics import window_extent

    base = _baseline(args.baseline, args.baseline_kernels).estimate if args.baseline else None
    print(f"{'workload':<12} {'flavour':<7} {'run ms':>8} {'estimate ms':>12} {'first ms':>9} {'ratio':>7} "
          f"{'auto ms':>8}" + (f" {'base ms':>8}" if base else "")
          + (f" {'min':>6}" + (f" {'base min':>8}" if base else "") if args.estimate_only else f" {'min ratio':>9}"))
    for flavour in args.flavours:
        df = make_events(args.n, 24, 1000, flavour=flavour)
        for name in args.workloads:
            text = WORKLOADS[name]
            run = auto_run = 0.0
            if not args.estimate_only:
                query = jitcep.compile(text, planner="trivial")
                query.run(df.head(2000), type="type")  # compile the run's kernels and predicates
                query.run(df, type="type")
                auto = jitcep.compile(text, planner="auto")
                auto.run(df, type="type")  # the chosen plan's kernels
                auto_run = st.median(_times(lambda: auto.run(df, type="type"), args.repeat, run_clock))
            pattern = parse(text)
            table = build_event_table(df, pattern, type="type")
            logical = logical_plan(pattern)
            measure, span = window_extent(pattern.window, table)
            t = time.perf_counter()
            estimate(logical, table, window_measure=measure, span=span)
            first = time.perf_counter() - t
            calls = [estimate] if base is None else [estimate, base]
            for fn in calls[1:]:
                fn(logical, table, window_measure=measure, span=span)
            times = {fn: [] for fn in calls}
            run_times = []
            for _ in range(args.repeat):  # a run, then each estimate: they share the machine's load
                if not args.estimate_only:
                    t = run_clock()
                    query.run(df, type="type")
                    run_times.append(run_clock() - t)
                for fn in calls:
                    t = clock()
                    fn(logical, table, window_measure=measure, span=span)
                    times[fn].append(clock() - t)
            est = st.median(times[estimate])
            run = st.median(run_times) if run_times else 0.0
            tail = f" {st.median(times[base]) * 1e3:8.2f}" if base else ""
            if args.estimate_only:
                tail += f" {min(times[estimate]) * 1e3:6.2f}" + (f" {min(times[base]) * 1e3:8.2f}" if base else "")
            else:  # the fastest run against the fastest estimate: what a quiet machine approaches
                tail += f" {min(times[estimate]) / min(run_times):9.1%}"
            # the share: the median over the repeats of each estimate against the run timed just before it
            share = st.median(e / r for e, r in zip(times[estimate], run_times)) if run_times else 0.0
            print(f"{name:<12} {flavour:<7} {run * 1e3:8.1f} {est * 1e3:12.2f} {first * 1e3:9.1f} "
                  f"{share:7.1%} {auto_run * 1e3:8.1f}" + tail)


def _baseline(path: str, kernels: str | None = None):
    """``path`` loaded as a sibling of :mod:`jitcep.plan.planner.sampling` (its relative imports work);
    with ``kernels`` (an older ``jitcep/kernels/sampling.py``) its kernel imports read that file's."""
    import importlib.util

    def load(name, file):
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    if kernels is None:
        return load("jitcep.plan.planner._baseline_sampling", path)
    import jitcep.kernels.sampling as current
    old = load("jitcep.kernels._baseline_sampling", kernels)
    sys.modules["jitcep.kernels.sampling"] = old  # what ``from ...kernels.sampling import`` reads
    try:
        return load("jitcep.plan.planner._baseline_sampling", path)
    finally:
        sys.modules["jitcep.kernels.sampling"] = current


if __name__ == "__main__":
    main()
