"""Command line: ``python -m perf run|compare|plot|list`` (see perf/README.md)."""

from __future__ import annotations

import argparse
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf", description="jitcep performance suite")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="measure jitcep and the baselines; print a table and write JSON")
    r.add_argument("--quick", action="store_true", help="small inputs, the quick selection, 3 repeats (< 1 min)")
    r.add_argument("--select", nargs="+", metavar="NAME", help="workloads by name, name prefix or family")
    r.add_argument("--out", default="perf/results/latest.json", help="JSON output (default: %(default)s)")
    r.add_argument("--engine", choices=("compiled", "reference"), default=None,
                   help="engine under test (default: compiled when available, else reference)")
    r.add_argument("--repeats", type=int, default=None, help="timed runs per measurement (median reported)")
    r.add_argument("--baselines", nargs="+", metavar="NAME",
                   help="only these baselines (reference duckdb_join duckdb_asof polars_join_where "
                        "polars_asof numba_scan)")
    r.add_argument("--cpu", action="store_true",
                   help="time every run (jitcep's and the baselines') by the process's CPU time, not wall time: "
                        "steadier on a loaded machine; compare like with like at --threads 1")
    r.add_argument("--budget", type=float, default=None, help="seconds one baseline run may take")
    r.add_argument("--threads", nargs="+", default=["1"], metavar="N",
                   help="threads for jitcep, DuckDB and Polars alike (default 1); 'all': every usable core; "
                        "several counts (the thread axis, e.g. --threads 1 all): one run per count, each in "
                        "its own process, writing OUT with the count before the suffix")

    c = sub.add_parser("compare", help="exit 1 when a ratio to the scan baseline worsened past the threshold")
    c.add_argument("base")
    c.add_argument("new")
    c.add_argument("--threshold", type=float, default=25.0, help="allowed worsening in percent (default 25)")
    c.add_argument("--against", default="numba_scan", help="baseline whose ratio is gated (default numba_scan)")

    pl_ = sub.add_parser("plot", help="PNG charts from a run's JSON")
    pl_.add_argument("file")
    pl_.add_argument("-o", "--out", default="perf/results/plots", help="output directory")

    sub.add_parser("list", help="list the workloads")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd == "run":
        try:
            counts = [_thread_count(t) for t in args.threads]
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if len(counts) > 1:
            return _thread_axis(argv if argv is not None else sys.argv[1:], counts, args.out)
        # thread counts must be fixed before Polars is imported
        import perf

        perf.THREADS = counts[0]
        os.environ.setdefault("POLARS_MAX_THREADS", str(perf.THREADS))
        os.environ.setdefault("NUMBA_NUM_THREADS", str(perf.THREADS))
        from . import runner, workloads

        try:
            chosen = workloads.select(args.select, quick=args.quick)
        except KeyError as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            return 2
        cfg = runner.RunConfig(engine=args.engine or runner.default_engine(), quick=args.quick,
                               repeats=args.repeats or (3 if args.quick else 5),
                               budget_s=args.budget or (5.0 if args.quick else 30.0),
                               baselines=tuple(args.baselines) if args.baselines else None,
                               clock="cpu" if args.cpu else "wall")
        doc = runner.run(chosen, cfg, args.out)
        print(runner.format_table(doc))
        if args.out:
            print(f"wrote {args.out}")
        # a baseline disagreeing with jitcep is a correctness failure, not a timing
        return 1 if any(w["status"] == "mismatch" for w in doc["workloads"]) else 0
    if args.cmd == "compare":
        from . import compare

        return compare.main(args.base, args.new, threshold=args.threshold, against=args.against)
    if args.cmd == "plot":
        from . import plot

        written = plot.plot(args.file, args.out)
        for path in written:
            print(path)
        return 0
    if args.cmd == "list":
        from . import workloads

        for w in workloads.WORKLOADS.values():
            flag = "quick" if w.quick else ""
            print(f"{w.name:28s} {w.family:12s} {flag:6s} {w.params}")
        return 0
    return 2


def _thread_count(text: str) -> int:
    """A ``--threads`` value: a positive integer, or ``all`` (the cores this process may run on)."""
    if text == "all":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"--threads takes positive integers or 'all', got {text!r}")
    return int(text)


def _thread_axis(argv: list[str], counts: list[int], out: str | None) -> int:
    """``run`` once per thread count, each in a fresh process (Polars fixes its threads at import); the
    JSON of count n goes to OUT with ``.t<n>`` before its suffix."""
    import subprocess
    from pathlib import Path

    i = argv.index("--threads")
    j = i + 1
    while j < len(argv) and not argv[j].startswith("--"):
        j += 1
    rest = argv[:i] + argv[j:]
    status = 0
    for n in dict.fromkeys(counts):
        extra = ["--threads", str(n)]
        if out:
            o = Path(out)
            extra += ["--out", str(o.with_name(f"{o.stem}.t{n}{o.suffix}"))]
        print(f"== threads={n}", flush=True)
        status = max(status, subprocess.run([sys.executable, "-m", "perf", *rest, *extra]).returncode)
    return status


if __name__ == "__main__":
    sys.exit(main())
