"""Standalone benchmark: each selection strategy against skip-till-any-match on the same pattern.

    PYTHONPATH=. python perf/bench_strategies.py --n 100000 1000000 --repeat 5

The workload family of SASE+ Figure 8 (predicate kinds x event selection
strategies over stock events partitioned by symbol): for each singleton
predicate kind the pattern is

    PATTERN SEQ(T0 a, T1 b, T2 c) WHERE [symbol] AND a.price > 50 AND <kind> WITHIN W

- ``none``: nothing more (the begin edges test types, filters and the key);
- ``increase``: ``b.price > a.price AND c.price > b.price`` (parameterised
  predicates on every edge, SASE+'s ``a[i].price > a[i-1].price`` for singletons);
- ``last``: ``c.volume < 150 AND c.price > a.price`` (a selective last edge,
  SASE+'s ``b.volume < 150``).

and with a Kleene state (SASE+ Figure 8's ``b[]``)

    PATTERN SEQ(T0 a, T1+ b[], T2 c) WHERE [symbol] AND a.price > 50 AND <kind> WITHIN W

- ``kleene``: nothing more (take edges test types and the key);
- ``kleene_inc``: ``b[i].price > b[i-1].price`` (SASE+'s iterative predicate on the take edge);
- ``kleene_avg``: ``avg(b.price) > a.price`` (an aggregate on the proceed edge);
- ``kleene_later``: ``b[i].price < c.price`` (member-wise with a later variable: on c's begin
  edge, read over every member of the run's list);
- ``kleene_later_avg``: ``avg(b.price) < c.price`` (an aggregate on c's begin edge);

with several Kleene states (each run keeps a list per Kleene state and the set of states it is alive at),

    PATTERN SEQ(T0 a, T1+ b[], T2+ c[], T3 d) WHERE [symbol] AND a.price > 50 AND <kind> WITHIN W

- ``kleene2``: nothing more;
- ``kleene2_inc``: ``b[i].price > b[i-1].price AND c[i].price < c[i-1].price`` (iterative, on both take
  edges);
- ``kleene2_agg``: ``avg(b.price) > avg(c.price)`` (two lists in one conjunct, on c's proceed edge);
- ``kleene2_adjacent``: ``SEQ(T0 a, T1+ b[], T2* c[])`` with nothing more (adjacent closures, the second
  last and possibly empty: every proceed point a match);

and a closure alone (its runs take the first member: no singleton state),

    PATTERN T1+ b[] WHERE [symbol] AND b.price > 50 WITHIN W   (kind ``alone``)

over bench_seq.py's synthetic events (``--types`` types, ``--keys`` symbols,
ts steps 0..2).  Printed per (n, kind, strategy): the median seconds of
``Query.run`` end to end (Polars in, Polars out, warm process, engine="compiled"),
the matches, and the ratio to skip_till_any_match's median on the same data
(issue 15's goal: within 3x).  Every strategy is checked to run compiled
(no FallbackWarning).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jitcep  # noqa: E402
from jitcep.errors import FallbackWarning  # noqa: E402
from bench_seq import make_events  # noqa: E402

STRATEGIES = ("skip_till_any_match", "skip_till_next_match", "partition_contiguity", "strict_contiguity")
KINDS = {
    "none": "",
    "increase": " AND b.price > a.price AND c.price > b.price",
    "last": " AND c.volume < 150 AND c.price > a.price",
}


KLEENE_KINDS = {
    "kleene": "",
    "kleene_inc": " AND b[i].price > b[i-1].price",
    "kleene_avg": " AND avg(b.price) > a.price",
    "kleene_later": " AND b[i].price < c.price",
    "kleene_later_avg": " AND avg(b.price) < c.price",
}
KLEENE_STATES_KINDS = {
    "kleene2": "",
    "kleene2_inc": " AND b[i].price > b[i-1].price AND c[i].price < c[i-1].price",
    "kleene2_agg": " AND avg(b.price) > avg(c.price)",
}
ADJACENT = "kleene2_adjacent"
ALONE = "alone"


def pattern_text(kind: str, window: int) -> str:
    if kind == ALONE:
        return f"PATTERN T1+ b[] WHERE [symbol] AND b.price > 50 WITHIN {window}"
    if kind == ADJACENT:
        return f"PATTERN SEQ(T0 a, T1+ b[], T2* c[]) WHERE [symbol] AND a.price > 50 WITHIN {window}"
    if kind in KLEENE_STATES_KINDS:
        return (f"PATTERN SEQ(T0 a, T1+ b[], T2+ c[], T3 d) WHERE [symbol] AND a.price > 50"
                f"{KLEENE_STATES_KINDS[kind]} WITHIN {window}")
    if kind in KLEENE_KINDS:
        return f"PATTERN SEQ(T0 a, T1+ b[], T2 c) WHERE [symbol] AND a.price > 50{KLEENE_KINDS[kind]} WITHIN {window}"
    return f"PATTERN SEQ(T0 a, T1 b, T2 c) WHERE [symbol] AND a.price > 50{KINDS[kind]} WITHIN {window}"



def timed(q, df, repeat: int, clock=time.perf_counter) -> tuple[float, int]:
    """Median seconds of ``repeat`` runs (after one warm-up run) and the matches."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = q.run(df, type="type", engine="compiled")
        times = []
        for _ in range(repeat):
            t0 = clock()
            q.run(df, type="type", engine="compiled")
            times.append(clock() - t0)
    return statistics.median(times), out.height


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--types", type=int, default=4)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kinds", nargs="+", default=[*KINDS, *KLEENE_KINDS, ALONE, *KLEENE_STATES_KINDS, ADJACENT])
    ap.add_argument("--cpu", action="store_true", help="CPU seconds of the process (time.process_time) instead "
                    "of wall seconds: steadier when other jobs load the machine")
    args = ap.parse_args(argv)
    print(f"{'n':>9} {'kind':>16} {'strategy':>22} {'seconds':>9} {'matches':>9} {'x any':>6}")
    for n in args.n:
        df = make_events(n, args.types, args.keys)
        for kind in args.kinds:
            base = None
            for strategy in STRATEGIES:
                q = jitcep.compile(pattern_text(kind, args.window), strategy=strategy)
                sec, m = timed(q, df, args.repeat, time.process_time if args.cpu else time.perf_counter)
                base = sec if base is None else base
                print(f"{n:>9} {kind:>16} {strategy:>22} {sec:>9.4f} {m:>9} {sec / base:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
