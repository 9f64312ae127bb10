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
    r.add_argument("--budget", type=float, default=None, help="seconds one baseline run may take")
    r.add_argument("--threads", type=int, default=1,
                   help="threads for jitcep, DuckDB and Polars alike (default 1)")

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
        # thread counts must be fixed before Polars is imported
        import perf

        perf.THREADS = max(1, args.threads)
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
                               baselines=tuple(args.baselines) if args.baselines else None)
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


if __name__ == "__main__":
    sys.exit(main())
