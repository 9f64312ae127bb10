"""Standalone benchmark: how fast the plans of each plan-generation algorithm run, on the same data in one run.

    PYTHONPATH=. python perf/bench_plans.py quality [--n 200000] [--repeat 3]
    PYTHONPATH=. python perf/bench_plans.py fig5    [--n 100000] [--lengths 3 4 5 6 7] [--patterns 3]
    PYTHONPATH=. python perf/bench_plans.py zstream [--n 200000]
    PYTHONPATH=. python perf/bench_plans.py kleene  [--n 200000] [--repeat 5]
    PYTHONPATH=. python perf/bench_plans.py kleene_split [--n 200000] [--repeat 5]   (a part of kleene)
    PYTHONPATH=. python perf/bench_plans.py kleene_more [--n 200000] [--repeat 5]    (a part of kleene)
    PYTHONPATH=. python perf/bench_plans.py kleene_branch [--n 200000] [--repeat 5]  (a part of kleene)
    PYTHONPATH=. python perf/bench_plans.py kleene_group [--n 200000] [--repeat 5]   (a part of kleene)
    PYTHONPATH=. python perf/bench_plans.py kleene_end [--n 200000] [--repeat 5]     (a part of kleene)
    PYTHONPATH=. python perf/bench_plans.py kleene_ties [--n 200000] [--repeat 5]    (the last part of kleene)

``--cpu`` times the process's CPU seconds (``time.process_time``) instead of wall time.

Every planner of :data:`jitcep.plan.planner.algorithms.ALGORITHMS` plans the pattern on statistics
estimated from the events (``trivial``: the rule plan it runs, no statistics); each distinct plan is
then run ``--repeat`` times on the same event table (:func:`jitcep.runtime.evaluate` with the plan
given, so neither estimating nor planning is timed), the plans taking turns (each round starting one
plan further along), and its median time kept.  Timings are noisy on
a shared machine: compare the ratios within one run.

- ``quality``: workloads whose rates and selectivities differ by orders of magnitude; per workload,
  each planner's plan time over the fastest plan any planner produced (``auto`` is the default
  candidate, issue 14 wants it within 1.25x).
- ``fig5``: the shape of Kolchinsky & Schuster's Figure 5 (VLDB 2018, 6.3): throughput (events per
  second) against pattern length, per algorithm, on their synthetic setup (6.2): per event type a
  rate drawn from 1..45, a SEQ of ``L`` types with about L/2 pairwise predicates of selectivity
  drawn from 0.002..0.88; the mean over ``--patterns`` random patterns per length.
- ``zstream``: ZStream's Query 4 grid (6.1.1: ``IBM; Sun; Oracle``, IBM.price > Sun.price at
  selectivity 1/16..1, equal rates), Query 5 grid (6.2: ``IBM; Sun; Oracle`` without predicates,
  IBM's rate 1/100..100 of the others') and Query 6 grid (6.2: ``IBM; Sun; Oracle; Google``, rates
  1:1:1:1, 1:100:100:100, 100:100:100:1, 100:1:100:100), the plan times per algorithm.
- ``kleene``: a closure's placement (Kolchinsky & Schuster 4, "Kleene closure patterns"): one pattern
  whose closure lies between the first two variables joined, on events where the closure's type is
  rare and where it is frequent; the join tree ``((a, c), d)`` on the estimated statistics with the
  closure forced ``top`` and ``lower`` (same table, taking turns), each one's time and ZStream
  Formula 1 cost, and which the rule chose on those costs.  Then a workload where the closure's ``T'`` in
  the join problem changes the join order: per planner, the plan searched without the closure (its place
  then priced on that tree, as before) against the plan searched with it, same table, taking turns.
  Then workloads with a conjunct reading the closure and a variable joined after it: the closure on top of
  the tree searched without it (before that conjunct was split off) against the plan searched now; and
  adjacent closures and a closure under ``order="nondecreasing_ts"``, likewise; then a closure in an OR
  branch, Kleene groups (under ``nondecreasing_ts`` too), and a closure or group at an end of the pattern.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics as st
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import polars as pl  # noqa: E402

from workloads import compare_offset, synthetic_events, zstream_q4, zstream_q5, zstream_q6  # noqa: E402

from jitcep import runtime  # noqa: E402
from jitcep.errors import ExplosionError  # noqa: E402
from jitcep.events import build_event_table  # noqa: E402
from jitcep.options import Options  # noqa: E402
from jitcep.pattern.parser import parse  # noqa: E402
from jitcep.plan.planner.algorithms import ALGORITHMS  # noqa: E402

PLANNERS = list(ALGORITHMS)
_CLOCK = [time.perf_counter]  # --cpu: time.process_time (CPU seconds of this process, less noisy when shared)


def _clock() -> float:
    return _CLOCK[0]()


def time_plans(text: str, df: pl.DataFrame, repeat: int, planners=PLANNERS,
               cost_model: str = "zstream") -> dict[str, float | None]:
    """Planner -> median seconds of its plan over ``df`` (None: the plan passed a cap).  Each distinct plan
    (operators compared without their estimates) is run once to compile it, then the plans take turns,
    ``repeat`` rounds, so a machine busier in one stretch slows them all alike."""
    pattern = parse(text)
    table = build_event_table(df, [pattern], type="type")
    distinct: list = []  # [plan, options, times or None]
    chosen = {}
    for name in planners:
        opts = Options(planner=name, cost_model=cost_model)
        plan = runtime.check_supported(pattern, opts) if name == "trivial" else runtime.costed(pattern, opts, table)
        entry = next((e for e in distinct if e[0].root == plan.root), None)
        if entry is None:
            entry = [plan, opts, []]
            try:
                runtime.evaluate([pattern], table, opts, plan=plan)  # compile its kernels and predicates
            except ExplosionError:
                entry[2] = None
            distinct.append(entry)
        chosen[name] = entry
    # each round starts one plan further along: a plan run right after a much slower one paid ~10% more
    # (its memory freshly returned to the system; perf/notes/plan_quality.md "Plan quality at 10^6 events"), so no
    # plan always follows the same one
    for r in range(repeat):
        for plan, opts, times in distinct[r % len(distinct):] + distinct[:r % len(distinct)]:
            if times is not None:
                t = _clock()
                runtime.evaluate([pattern], table, opts, plan=plan)
                times.append(_clock() - t)
    return {name: (st.median(e[2]) if e[2] is not None else None) for name, e in chosen.items()}


def _ratios(times: dict) -> dict:
    best = min(t for t in times.values() if t is not None)
    return {k: (t / best if t is not None else None) for k, t in times.items()}


def _row(label: str, times: dict, ratio: bool) -> str:
    vals = _ratios(times) if ratio else times
    cells = [(f"{v:>9.2f}" if ratio else f"{v * 1e3:>9.1f}") if v is not None else f"{'cap':>9}" for v in vals.values()]
    return f"{label:<26}" + " ".join(cells)


def _header(first: str) -> str:
    return f"{first:<26}" + " ".join(f"{p[:9]:>9}" for p in PLANNERS)


# --- plan quality ------------------------------------------------------------------------------


def quality_workloads(n: int) -> dict:
    """name -> (pattern text, events): rates and selectivities orders of magnitude apart."""
    def ev(types, keys=10, seed=0):
        return synthetic_events(n, types=types, keys=keys, attrs={"x": "uniform"}, seed=seed)
    off = compare_offset
    return {
        # ZStream Query 6 at 1:100:100:100 (IBM rare first)
        "q6_rare_first": ("PATTERN SEQ(IBM a, Sun b, Oracle c, Google d) WHERE [k] AND c.x > b.x AND c.x > d.x "
                          "WITHIN 400", ev({"IBM": 1, "Sun": 100, "Oracle": 100, "Google": 100})),
        # the rare type last: left-deep in pattern order builds the big (a, b, c) first
        "rare_last": ("PATTERN SEQ(A a, B b, C c, D d) WHERE [k] AND a.x < d.x WITHIN 600",
                      ev({"A": 100, "B": 100, "C": 100, "D": 1})),
        # a selective predicate between the last two, none between the first
        "selective_late": (f"PATTERN SEQ(A a, B b, C c, D d) WHERE [k] AND c.x > d.x + {off(0.002):.4f} "
                           f"WITHIN 600", ev({"A": 1, "B": 1, "C": 1, "D": 1})),
        # a negation whose type is frequent (pushed down pays) / rare (on top pays)
        "neg_frequent": ("PATTERN SEQ(A a, !N n, B b, C c) WHERE [k] AND a.x < c.x WITHIN 1500",
                         ev({"A": 10, "B": 10, "C": 10, "N": 100})),
        "neg_rare": ("PATTERN SEQ(A a, !N n, B b, C c) WHERE [k] AND a.x < c.x AND b.x > c.x + "
                     f"{off(0.01):.4f} WITHIN 600", ev({"A": 10, "B": 10, "C": 10, "N": 0.01})),
        # a conjunction, rates 1:10:100
        "and_rates": ("PATTERN AND(A a, B b, C c) WHERE [k] AND a.x < b.x WITHIN 300",
                      ev({"A": 1, "B": 10, "C": 100})),
    }


def quality(args) -> None:
    print(f"plan time / fastest plan's time (median of {args.repeat}; n={args.n})")
    print(_header("workload") + f" {'best ms':>9}")
    worst = 0.0
    for name, (text, df) in quality_workloads(args.n).items():
        times = time_plans(text, df, args.repeat, cost_model=args.cost_model)
        print(_row(name, times, ratio=True) + f" {min(t for t in times.values() if t is not None) * 1e3:>9.1f}")
        worst = max(worst, _ratios(times)["auto"] or float("inf"))
    print(f"\nauto's worst ratio: {worst:.2f}")


# --- Kolchinsky Figure 5 -----------------------------------------------------------------------


def kolchinsky_pattern(length: int, rng: random.Random, n: int, window: int) -> tuple[str, pl.DataFrame]:
    """A SEQ of ``length`` types with rates from 1..45 and about length/2 predicates (section 6.2)."""
    types = {f"E{i}": rng.uniform(1, 45) for i in range(length)}
    pairs = [(i, j) for i in range(length) for j in range(i + 1, length)]
    conds = ["[k]"]
    for i, j in rng.sample(pairs, max(1, length // 2)):
        conds.append(f"v{i}.x > v{j}.x + {compare_offset(rng.uniform(0.002, 0.88)):.4f}")
    items = ", ".join(f"E{i} v{i}" for i in range(length))
    df = synthetic_events(n, types=types, keys=10, attrs={"x": "uniform"}, seed=rng.randrange(10**6))
    return f"PATTERN SEQ({items}) WHERE {' AND '.join(conds)} WITHIN {window}", df


def fig5(args) -> None:
    rng = random.Random(args.seed)
    print(f"throughput, 10^3 events/s (mean over {args.patterns} patterns; n={args.n}, window {args.window})")
    print(_header("length"))
    for length in args.lengths:
        per = {p: [] for p in PLANNERS}
        for _ in range(args.patterns):
            text, df = kolchinsky_pattern(length, rng, args.n, args.window)
            for p, t in time_plans(text, df, args.repeat, cost_model=args.cost_model).items():
                per[p].append(args.n / t / 1e3 if t is not None else 0.0)
        print(f"{length:<26}" + " ".join(f"{st.mean(v):>9.0f}" for v in per.values()))


# --- ZStream Queries 4 to 6 ------------------------------------------------------------------


def zstream(args) -> None:
    print(f"Query 4 (IBM; Sun; Oracle WHERE IBM.price > Sun.price, window 200), plan time ms (n={args.n})")
    print(_header("selectivity"))
    for sel in (1 / 16, 1 / 4, 1 / 2, 1.0):
        df, q = zstream_q4(sel, window=200)(args.n)
        times = time_plans(q.text(), df, args.repeat, cost_model=args.cost_model)
        print(_row(f"{sel:.4g}", times, ratio=False))
    print(f"\nQuery 5 (IBM; Sun; Oracle, key k, window 200), plan time ms (n={args.n})")
    print(_header("rates I:S:O"))
    for rates in ((1, 100, 100), (1, 10, 10), (1, 1, 1), (10, 1, 1), (100, 1, 1)):
        df, q = zstream_q5(rates, window=200)(args.n)
        times = time_plans(q.text(), df, args.repeat, cost_model=args.cost_model)
        print(_row(":".join(map(str, rates)), times, ratio=False))
    print(f"\nQuery 6 (IBM; Sun; Oracle; Google, key k, selectivities 1/2, window 2000), plan time ms (n={args.n})")
    print(_header("rates I:S:O:G"))
    for rates in ((1, 1, 1, 1), (1, 100, 100, 100), (100, 100, 100, 1), (100, 1, 100, 100)):
        df, q = zstream_q6(rates, sel1=0.5, sel2=0.5, window=2000)(args.n)
        times = time_plans(q.text(), df, args.repeat, cost_model=args.cost_model)
        print(_row(":".join(map(str, rates)), times, ratio=False))


# --- Kleene placement -------------------------------------------------------------------------


def kleene_workloads(n: int) -> dict:
    """name -> (pattern text, options, events): one closure between a and c, d joined after them.  Rare:
    few (a, c) records have a list, and d is frequent (the join with d reads fewer records when they
    are dropped first).  Frequent: every (a, c) record has many lists, and the join with d is selective
    (lists made for records that then die)."""
    def ev(rb, rd):
        return synthetic_events(n, types={"A": 1, "B": rb, "C": 1, "D": rd}, keys=10, attrs={"x": "uniform"})
    return {"b_rare": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND a.x < d.x WITHIN 200", ev(0.02, 20)),
            "b_frequent": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND a.x + 0.9 < d.x WITHIN 60",
                           ev(1.0, 1))}


def kleene(args) -> None:
    from jitcep.plan.planner.statistics import window_extent
    from jitcep.plan.logical import logical_plan
    from jitcep.plan.operators import KleeneCollect
    from jitcep.plan.planner.sampling import estimate
    from jitcep.plan.rules import physical_plan

    print(f"a closure's placement: median ms of {args.repeat} runs, each placement's Formula 1 cost (n={args.n})")
    print(f"{'workload':<12} {'chosen':>7} {'top ms':>9} {'lower ms':>9} {'top/lower':>9} {'cost top':>10} "
          f"{'cost lower':>10} {'matches':>9}")
    for name, (text, df) in kleene_workloads(args.n).items():
        pattern = parse(text)
        opts = Options(planner="auto")
        table = build_event_table(df, [pattern], type="type")
        logical = logical_plan(pattern)
        measure, span = window_extent(logical.window, table)
        stats = estimate(logical, table, window_measure=measure, span=span)
        plans = {k: physical_plan(logical, opts, (("a", "c"), "d"), stats, span, kleene=k)
                 for k in (None, "top", "lower")}
        [kc] = [x for x in plans[None].nodes() if isinstance(x, KleeneCollect)]
        times: dict = {"top": [], "lower": []}
        matches = {k: runtime.evaluate([pattern], table, opts, plan=plans[k])[0].n for k in times}
        assert matches["top"] == matches["lower"], matches
        for _ in range(args.repeat):
            for k in times:
                t = _clock()
                runtime.evaluate([pattern], table, opts, plan=plans[k])
                times[k].append(_clock() - t)
        top, low = st.median(times["top"]), st.median(times["lower"])
        costs = dict(kc.costs)
        print(f"{name:<12} {kc.placement:>7} {top * 1e3:>9.1f} {low * 1e3:>9.1f} {top / low:>9.2f} "
              f"{costs.get('top', float('nan')):>10.4g} {costs.get('lower', float('nan')):>10.4g} "
              f"{matches['top']:>9}")


def kleene_search_workloads(n: int) -> dict:
    """name -> (pattern text, events) where the closure's ``T'`` in the join problem changes the join order:
    D frequent with a selective ``c``-``d`` conjunct, so a search without the closure joins (c, d) first and
    a last, while a rare B between a and c drops most (a, c) records before d when collected on them."""
    def ev(rb):
        return synthetic_events(n, types={"A": 1, "B": rb, "C": 1, "D": 20}, keys=10, attrs={"x": "uniform"})
    return {"b_thins_cd": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND c.x + 0.95 < d.x WITHIN 2000",
                           ev(0.005))}


def kleene_split_workloads(n: int) -> dict:
    """name -> (pattern text, events) with a conjunct reading the closure with ``d``, joined after its
    neighbours a and c, on :func:`kleene_search_workloads`' events (B rare, D frequent): before, the
    conjunct kept the closure on top, collected over every (a, c, d) record; split off it, the closure is
    collected on (a, c), dropping most of them before d joins, and the conjunct tests the carried lists."""
    def ev(rb):
        return synthetic_events(n, types={"A": 1, "B": rb, "C": 1, "D": 20}, keys=10, attrs={"x": "uniform"})
    return {"b_member_d": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND b[i].x < d.x AND c.x + 0.95 < d.x "
                           "WITHIN 2000", ev(0.005)),
            "b_sum_d": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND sum(b.x) < d.x AND c.x + 0.95 < d.x "
                        "WITHIN 2000", ev(0.005))}


def kleene_more_workloads(n: int) -> dict:
    """name -> (pattern text, events, options) on :func:`kleene_search_workloads`' events where the closure
    was collected on top before it could be a unit: two adjacent closures (B and E at 0.02x A's rate), and
    one closure under ``order="nondecreasing_ts"`` (B at 0.005x)."""
    def ev(rb):
        return synthetic_events(n, types={"A": 1, "B": rb, "E": rb, "C": 1, "D": 20}, keys=10,
                                attrs={"x": "uniform"})
    return {"adjacent_be": ("PATTERN SEQ(A a, B+ b[], E+ e[], C c, D d) WHERE [k] AND c.x + 0.95 < d.x WITHIN 2000",
                            ev(0.02)),
            "ties_b": ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE [k] AND c.x + 0.95 < d.x WITHIN 2000", ev(0.005),
                       {"order": "nondecreasing_ts"})}


def kleene_branch_workloads(n: int) -> dict:
    """name -> (pattern text, events) with the closure in an OR branch, planned as one unit (the DNF form
    already searched it), where it was collected on top before it could be a unit: between the branch's
    single variables (C at 0.005x A's rate), or alone, anchored by its first member and at least two
    members long (C at 0.02x, E rarer), between the branch's single variables with a conjunct reading g
    (split off the collection: before, it kept the closure on top), or a Kleene group alone, anchored by its first iteration (B and C
    at 0.02x); G frequent with a selective ``f``-``g`` conjunct, so a search without
    the closure joins (f, g) first."""
    def ev(types):
        return synthetic_events(n, types=types, keys=10, attrs={"x": "uniform"})
    return {"branch_c": ("PATTERN SEQ(A a, OR(SEQ(B b, C+ c[], D d), E e), F f, G g) WHERE [k] AND f.x + 0.95 < g.x "
                         "WITHIN 2000", ev({"A": 1, "B": 1, "C": 0.005, "D": 1, "E": 0.05, "F": 1, "G": 20})),
            "anchored_c": ("PATTERN SEQ(A a, OR(C{2,} c[], E e), F f, G g) WHERE [k] AND f.x + 0.95 < g.x "
                           "WITHIN 2000", ev({"A": 1, "C": 0.02, "E": 0.002, "F": 1, "G": 20})),
            "branch_split": ("PATTERN SEQ(A a, OR(SEQ(B b, C+ c[], D d), E e), F f, G g) WHERE [k] AND "
                             "f.x + 0.95 < g.x AND sum(c.x) < g.x + 0.5 WITHIN 2000",
                             ev({"A": 1, "B": 1, "C": 0.005, "D": 1, "E": 0.05, "F": 1, "G": 20})),
            "anchored_group": ("PATTERN SEQ(A a, OR(KL(SEQ(B b, C c)){2,}, E e), F f, G g) WHERE [k] AND "
                               "f.x + 0.95 < g.x WITHIN 2000",
                               ev({"A": 1, "B": 0.02, "C": 0.02, "E": 0.002, "F": 1, "G": 20}))}


def kleene_branch(args) -> None:
    """Old (a closure in an OR branch collected on top of the tree searched without it) against new (a unit
    of the search), per planner, both in the unit form."""
    print(f"a closure in an OR branch: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_branch_workloads(args.n), "top", form="unit")


def kleene_group_workloads(n: int) -> dict:
    """name -> (pattern text, events) on :func:`kleene_search_workloads`' events with a Kleene group between
    a and c where a closure was (its B and E at 0.02x A's rate), collected on top before it could be a unit:
    a SEQ body and an AND body; the SEQ one under ``nondecreasing_ts``, with a conjunct reading d (split
    off its collection: before, it kept the group on top), and right after a closure of F (0.2x; B and E at
    0.05x there)."""
    def ev(rb):
        return synthetic_events(n, types={"A": 1, "B": rb, "E": rb, "C": 1, "D": 20}, keys=10,
                                attrs={"x": "uniform"})
    return {"group_seq": ("PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c, D d) WHERE [k] AND c.x + 0.95 < d.x "
                          "WITHIN 2000", ev(0.02)),
            "group_and": ("PATTERN SEQ(A a, KL(AND(B b, E e)){1,2}, C c, D d) WHERE [k] AND c.x + 0.95 < d.x "
                          "WITHIN 2000", ev(0.02)),
            "group_ties": ("PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c, D d) WHERE [k] AND c.x + 0.95 < d.x "
                           "WITHIN 2000", ev(0.02), {"order": "nondecreasing_ts"}),
            "group_split": ("PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c, D d) WHERE [k] AND c.x + 0.95 < d.x "
                            "AND b.x < d.x WITHIN 2000", ev(0.02)),
            "group_adjacent": ("PATTERN SEQ(A a, F+ f[], KL(SEQ(B b, E e))+, C c, D d) WHERE [k] AND "
                               "c.x + 0.95 < d.x WITHIN 2000",
                               synthetic_events(n, types={"A": 1, "F": 0.2, "B": 0.05, "E": 0.05, "C": 1, "D": 20},
                                                keys=10, attrs={"x": "uniform"}))}


def kleene_end_workloads(n: int) -> dict:
    """name -> (pattern text, events) with a closure or group at an end of the pattern, collected on top
    before it could be a unit: after c (or before a), bounded by the window from the pattern's other end;
    D frequent between a and c with a selective ``c``-``d`` conjunct, so a search without the construct
    joins (c, d) first, while the rare construct (B at 0.005x A's rate; B and E at 0.02x) drops most (a, c)
    records before d when collected on them."""
    def ev(rb):
        return synthetic_events(n, types={"A": 1, "B": rb, "E": rb, "C": 1, "D": 20}, keys=10,
                                attrs={"x": "uniform"})
    where = "WHERE [k] AND c.x + 0.95 < d.x WITHIN 2000"
    return {"end_closure": (f"PATTERN SEQ(A a, D d, C c, B+ b[]) {where}", ev(0.005)),
            "start_closure": (f"PATTERN SEQ(B+ b[], A a, D d, C c) {where}", ev(0.005)),
            "end_group": (f"PATTERN SEQ(A a, D d, C c, KL(SEQ(B b, E e))+) {where}", ev(0.02))}


def kleene_ties_workloads(n: int) -> dict:
    """name -> (pattern text, events, options) of the shapes that were collected on top until session 16
    (the rates of :func:`kleene_end_workloads`, :func:`kleene_group_workloads` and
    :func:`kleene_branch_workloads`): a closure or group at the end under ``nondecreasing_ts`` with a count
    window, on events sharing a timestamp in fours; a group right after a closure under ``nondecreasing_ts``;
    and an anchored closure or group with a member-wise conjunct reading g, now split off (it kept g in
    the unit's ``need``: collected on a join binding g, not on top)."""
    def ev(types, ties=1):
        return synthetic_events(n, types=types, keys=10, attrs={"x": "uniform"}, ties=ties)
    ends = {"A": 1, "B": 0.005, "E": 0.005, "C": 1, "D": 20}
    tied = {"order": "nondecreasing_ts"}
    where = "WHERE [k] AND c.x + 0.95 < d.x WITHIN 2000 EVENTS"
    split = "WHERE [k] AND f.x + 0.95 < g.x AND {} < g.x + 0.5 WITHIN 2000"
    return {"end_c_ties": (f"PATTERN SEQ(A a, D d, C c, B+ b[]) {where}", ev(ends, 4), tied),
            "end_g_ties": (f"PATTERN SEQ(A a, D d, C c, KL(SEQ(B b, E e))+) {where}",
                           ev({**ends, "B": 0.02, "E": 0.02}, 4), tied),
            "adjacent_ties": ("PATTERN SEQ(A a, F+ f[], KL(SEQ(B b, E e))+, C c, D d) WHERE [k] AND "
                              "c.x + 0.95 < d.x WITHIN 2000",
                              ev({"A": 1, "F": 0.2, "B": 0.05, "E": 0.05, "C": 1, "D": 20}), tied),
            "anchored_c_split": ("PATTERN SEQ(A a, OR(C{2,} c[], E e), F f, G g) " + split.format("c[i].x"),
                                 ev({"A": 1, "C": 0.02, "E": 0.002, "F": 1, "G": 20}), {"form": "unit"}),
            "anchored_g_split": ("PATTERN SEQ(A a, OR(KL(SEQ(B b, C c)){2,}, E e), F f, G g) "
                                 + split.format("b.x"),
                                 ev({"A": 1, "B": 0.02, "C": 0.02, "E": 0.002, "F": 1, "G": 20}), {"form": "unit"})}


def kleene_ties(args) -> None:
    """Old (collected on top of the tree searched without it) against new (a unit of the search), per
    planner, for :func:`kleene_ties_workloads` (run it with session 15's code on ``PYTHONPATH`` for the
    anchored splits' old searched plan: its "new" column)."""
    print(f"session 16's units: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_ties_workloads(args.n), "top")


def kleene_end(args) -> None:
    """Old (a closure or group at an end of the pattern collected on top of the tree searched without it)
    against new (a unit of the search), per planner."""
    print(f"a closure or group at an end of the pattern: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_end_workloads(args.n), "top")


def kleene_group(args) -> None:
    """Old (a Kleene group collected on top of the tree searched without it) against new (a unit of the
    search), per planner."""
    print(f"a Kleene group: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_group_workloads(args.n), "top")


def kleene_more(args) -> None:
    """Old (adjacent closures, or one under nondecreasing_ts: collected on top of the tree searched
    without them) against new (units of the search), per planner."""
    print(f"adjacent closures and ties: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_more_workloads(args.n), "top")


def kleene_split(args) -> None:
    """Old (the conjunct reading d kept the closure off the search, collected on top of the tree searched
    without it) against new (the conjunct split off, the closure a unit of the search), per planner."""
    print(f"a conjunct with a later variable split off the closure: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_split_workloads(args.n), "top")


def kleene_search(args) -> None:
    """Old (the join order searched without the closure, then its place priced on that tree) against new
    (the closure a unit of the search), per planner, on the same table, taking turns."""
    print(f"the closure as a unit of the join-order search: median ms of {args.repeat} runs (n={args.n})")
    _old_new(args, kleene_search_workloads(args.n), None)


def _old_new(args, workloads: dict, old_place, form=None) -> None:
    """Per workload and planner, the plan searched without the closure (placed ``old_place`` on that
    tree; None: as the rule prices it) against the plan searched now (in ``form``, None: the cheaper),
    same table, taking turns."""
    from jitcep.errors import ExplosionError
    from jitcep.plan.planner.statistics import window_extent
    from jitcep.plan.logical import logical_plan
    from jitcep.plan.planner.algorithms import ALGORITHMS
    from jitcep.plan.planner.cardinality import join_problem
    from jitcep.plan.planner.cost import cost_model
    from jitcep.plan.planner.sampling import estimate
    from jitcep.plan.rules import physical_plan

    print(f"{'workload':<12} {'planner':<12} {'old ms':>9} {'new ms':>9} {'old/new':>8} {'matches':>9}  old plan | new plan")
    for name, (text, df, *more) in workloads.items():
        pattern = parse(text)
        table = build_event_table(df, [pattern], type="type")
        logical = logical_plan(pattern)
        measure, span = window_extent(logical.window, table)
        given = {**(more[0] if more else {}), **({"max_memory": args.max_memory} if args.max_memory else {})}
        shape_form = given.pop("form", form)  # (an OR planned as one unit or in DNF)
        stats = estimate(logical, table, window_measure=measure, span=span)
        for planner in ("auto", "greedy"):
            opts = Options(planner=planner, **given)
            problem = join_problem(logical, stats, span)  # without the closure: the search before T'
            old_shape = problem.shape(ALGORITHMS[planner](problem, cost_model(opts)))
            plans = {"old": physical_plan(logical, opts, old_shape, stats, span, kleene=old_place),
                     "new": physical_plan(logical, opts, None, stats, span, form=shape_form)}
            lines = {k: _tree(p.root) for k, p in plans.items()}
            matches = {}
            for k, p in plans.items():
                try:
                    matches[k] = runtime.evaluate([pattern], table, opts, plan=p)[0].n
                except ExplosionError:  # the plan's intermediate results pass max_memory: not timed
                    matches[k] = None
            assert None in matches.values() or matches["old"] == matches["new"], matches
            times: dict = {k: [] for k in plans if matches[k] is not None}
            for _ in range(args.repeat):
                for k in times:
                    t = _clock()
                    runtime.evaluate([pattern], table, opts, plan=plans[k])
                    times[k].append(_clock() - t)
            new = st.median(times["new"]) if "new" in times else None
            old = st.median(times["old"]) if "old" in times else None
            shown = {k: f"{t * 1e3:>9.1f}" if t is not None else f"{'> memory':>9}" for k, t in (("old", old),
                                                                                                 ("new", new))}
            ratio = f"{old / new:>8.2f}" if old is not None and new is not None else f"{'-':>8}"
            print(f"{name:<12} {planner:<12} {shown['old']} {shown['new']} {ratio} "
                  f"{next((str(m) for m in (matches['new'], matches['old']) if m is not None), '-'):>9}  "
                  f"{lines['old']} | {lines['new']}")


def _tree(node) -> str:
    """A join tree with its closure, as ``((a c)+b d)``: ``+b`` where b's lists are collected."""
    from jitcep.plan.operators import GroupCollect, KleeneCollect, ListFilter, Scan
    if isinstance(node, Scan):
        return node.var
    if isinstance(node, KleeneCollect):
        return _tree(node.input) + "+" + node.closure.var
    if isinstance(node, ListFilter):  # the conjuncts split off the closure, on the carried lists
        return _tree(node.input) + "?" + node.var
    if isinstance(node, GroupCollect):  # its body's own tree makes the iterations: the group by its variables
        return _tree(node.input) + "+" + "".join(node.group.vars)
    if not node.children:
        return type(node).__name__
    return "(" + " ".join(_tree(c) for c in node.children) + ")"


def _kleene_both(args) -> None:
    kleene(args)
    kleene_search(args)
    kleene_split(args)
    kleene_more(args)
    kleene_branch(args)
    kleene_group(args)
    kleene_end(args)
    kleene_ties(args)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", choices=["quality", "fig5", "zstream", "kleene", "kleene_split", "kleene_more",
                                          "kleene_branch", "kleene_group", "kleene_end", "kleene_ties"])
    ap.add_argument("--n", type=int, default=None, help="events (default 200000; fig5 100000)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lengths", type=int, nargs="+", default=[3, 4, 5, 6, 7])
    ap.add_argument("--patterns", type=int, default=3)
    ap.add_argument("--window", type=int, default=300, help="fig5's window (ts units, one event per unit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cost-model", default="zstream", help="the planners' cost_model=")
    ap.add_argument("--max-memory", type=int, default=None,
                    help="kleene's old / new plans: max_memory= in bytes (default the option's, 1 GiB)")
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds of the process (time.process_time), not wall")
    args = ap.parse_args(argv)
    if args.cpu:
        _CLOCK[0] = time.process_time
    if args.n is None:
        args.n = 100_000 if args.which == "fig5" else 200_000
    {"quality": quality, "fig5": fig5, "zstream": zstream, "kleene": _kleene_both,
     "kleene_split": kleene_split, "kleene_more": kleene_more, "kleene_branch": kleene_branch,
     "kleene_group": kleene_group, "kleene_end": kleene_end, "kleene_ties": kleene_ties}[args.which](args)


if __name__ == "__main__":
    main()
