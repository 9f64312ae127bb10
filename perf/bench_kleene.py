"""Standalone benchmark: each Kleene form the compiled engine covers beside a comparable default pattern.

    python perf/bench_kleene.py --n 100000 --repeat 5 [--only group]

Every form is the same pattern twice: with closures (``B+ b[]``) and with a
single variable in their place (``B b``), over one synthetic table (types A..E,
``--keys`` keys, ts steps 0..2), both with ``[k]`` and a time window.  Printed
per form: the median seconds of ``--repeat`` warm runs of each (Polars in,
Polars out), the matches each finds, the ratio closure / single per run and the
microseconds per match of each and their ratio (issue 15's bar for a Kleene form:
within 3x of its twin per match, and per run where the two outputs are within 3x
of each other; see perf/notes/kleene.md, "Kleene forms").  The closures' lists grow with the events in their range,
so the window keeps a handful per range, as in SASE+'s and ZStream's Kleene
workloads.  ``--since``: the forms compiled since the closures that may be
empty and the conjuncts reading a member with the whole list, each beside the
closest form compiled before (the "twin" columns).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import polars as pl

import jitcep
from jitcep import config
from jitcep.errors import JitcepError

# name -> (pattern with closures, the same with single variables, compile options)
FORMS = {
    "seq, one closure (before)": ("SEQ(A a, B+ b[], C c)", "SEQ(A a, B b, C c)", {}),
    "seq, two closures": ("SEQ(A a, B+ b[], C c, D+ d[], E e)", "SEQ(A a, B b, C c, D d, E e)", {}),
    "seq, two closures, maximal": ("SEQ(A a, B+ b[], C c, D+ d[], E e)", "SEQ(A a, B b, C c, D d, E e)",
                                   {"kleene": "maximal"}),
    "seq, {1,8} maximal, sum over the runs": ("SEQ(A a, B{1,8} b[], C c) WHERE sum(b.x) > 300",
                                             "SEQ(A a, B b, C c)", {"kleene": "maximal"}),
    "seq, adjacent closures": ("SEQ(A a, B+ b[], D+ d[], E e)", "SEQ(A a, B b, D d, E e)", {}),
    "and, closure": ("AND(A a, B+ b[], C c)", "AND(A a, B b, C c)", {}),
    "or, closure in a branch": ("OR(SEQ(A a, B+ b[], C c), D d)", "OR(SEQ(A a, B b, C c), D d)", {}),
    "seq, closure + negation, nondecreasing_ts": ("SEQ(A a, B+ b[], !D n, C c)", "SEQ(A a, B b, !D n, C c)",
                                                  {"order": "nondecreasing_ts"}),
    "and, closure + negation": ("AND(A a, B+ b[], C c, !D n)", "AND(A a, B b, C c, !D n)", {}),
    # conditions after WHERE [k]
    "seq, negation condition on every member": ("SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b.x",
                                                "SEQ(A a, B b, !D n, C c) WHERE n.x > b.x", {}),
    "seq, negation condition on the list": ("SEQ(A a, B+ b[], !D n, C c) WHERE n.x > avg(b.x)",
                                            "SEQ(A a, B b, !D n, C c) WHERE n.x > b.x", {}),
    "seq, list conjunct over two closures": ("SEQ(A a, B+ b[], C c, D+ d[], E e) WHERE count(b) = count(d)",
                                             "SEQ(A a, B b, C c, D d, E e)", {}),
    "seq of closures only (anchored)": ("SEQ(B+ b[], C+ c[])", "SEQ(B b, C c)", {}),
    "closure alone in an OR branch (anchored)": ("OR(B+ b[], D d)", "OR(B b, D d)", {}),
    # a Kleene group beside its closest single closure (the group's lists are of iterations, each a SEQ
    # / AND join of its body): the second column is that closure, not single variables
    "seq group between neighbours vs A+ a[]": ("SEQ(C c, KL(SEQ(A a, B b)), D d)", "SEQ(C c, A+ a[], D d)", {}),
    "and group between neighbours vs A+ a[]": ("SEQ(C c, KL(AND(A a, B b)){1,2}, D d)",
                                               "SEQ(C c, A{1,2} a[], D d)", {}),
    "seq group alone (anchored) vs A{1,3} a[]": ("KL(SEQ(A a, B b)){1,3}", "A{1,3} a[]", {}),
}

# forms compiled since the closures that may be empty and the conjuncts reading a member with the whole
# list: name -> (pattern, the closest form compiled before, options); the ratio is new / before
SINCE = {
    "* closure alone (vs + closure alone)": ("B* b[]", "B+ b[]", {}),
    "* closure alone in an OR branch (vs +)": ("OR(B* b[], D d)", "OR(B+ b[], D d)", {}),
    "AND item of a closure and a negation (vs SEQ)": ("SEQ(A a, AND(B+ b[], !D n), C c)",
                                                      "SEQ(A a, B+ b[], !D n, C c)", {}),
    "b[i].x > avg(b.x) - 20 (vs b[i].x > a.x - 20)": ("SEQ(A a, B+ b[], C c) WHERE b[i].x > avg(b.x) - 20",
                                                      "SEQ(A a, B+ b[], C c) WHERE b[i].x > a.x - 20", {}),
    "b[i].x > b[i-1].x - count(b) (vs - 1)": ("SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x - count(b)",
                                              "SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x - 1", {}),
    "negation n.x > b[i].x - avg(b.x) (vs n.x > avg(b.x))": (
        "SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b[i].x - avg(b.x)",
        "SEQ(A a, B+ b[], !D n, C c) WHERE n.x > avg(b.x)", {}),
}


def make_events(n: int, n_keys: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "ts": np.cumsum(rng.integers(0, 3, n)).astype(np.int64),
        "type": pl.Series(rng.integers(0, 5, n)).replace_strict(dict(enumerate("ABCDE")), return_dtype=pl.String),
        "k": rng.integers(0, n_keys, n).astype(np.int64),
        "x": rng.uniform(0, 100, n),
    })


def timed(query, df, repeat: int, clock=time.perf_counter) -> tuple[float, int]:
    out = query.run(df, type="type")  # warm: Numba compilation or cache load, the generated predicates
    times = []
    for _ in range(repeat):
        t0 = clock()
        query.run(df, type="type")
        times.append(clock() - t0)
    return statistics.median(times), out.height


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=20)
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--since", action="store_true", help="only the forms of SINCE, each beside its closest "
                    "form compiled before")
    ap.add_argument("--only", default="", help="run the forms whose name holds this text")
    ap.add_argument("--caps", action="store_true", help="raise max_matches, max_kleene and max_memory 64x "
                    "(10^6 events at 5 keys make more than the default 10^7 matches)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds of the process (time.process_time) instead "
                    "of wall seconds: steadier when other jobs load the machine")
    args = ap.parse_args(argv)
    df = make_events(args.n, args.keys)
    caps = {"max_matches": 64 * config.DEFAULT_MAX_MATCHES, "max_kleene": 64 * config.DEFAULT_MAX_KLEENE,
            "max_memory": 64 * config.DEFAULT_MAX_MEMORY} if args.caps else {}
    print(f"{args.n} events, {args.keys} keys, WITHIN {args.window}, median of {args.repeat}"
          f"{', CPU s' if args.cpu else ''}")
    print(f"{'form':44} {'closure s':>10} {'matches':>9} {'twin s':>10} {'matches':>9} {'ratio':>6}"
          f" {'us/m':>6} {'twin':>6} {'ratio':>6}")
    for name, (kl, single, opts) in (SINCE if args.since else FORMS).items():
        if args.only not in name:
            continue
        row = []
        for body in (kl, single):
            body, _, where = body.partition(" WHERE ")
            where = f"[k] AND {where}" if where else "[k]"
            q = jitcep.compile(f"PATTERN {body} WHERE {where} WITHIN {args.window}", **opts, **caps)
            try:
                row.append(timed(q, df, args.repeat, time.process_time if args.cpu else time.perf_counter))
            except JitcepError as e:
                row.append((float("nan"), -1))
                print(f"{name}: {body}: {type(e).__name__}: {e}")
        (tk, mk), (ts, ms) = row
        uk, us = 1e6 * tk / max(mk, 1), 1e6 * ts / max(ms, 1)
        print(f"{name:44} {tk:10.4f} {mk:9d} {ts:10.4f} {ms:9d} {tk / ts:6.2f} {uk:6.3f} {us:6.3f} {uk / us:6.2f}")

if __name__ == "__main__":
    main()
