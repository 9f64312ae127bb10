"""Planner statistics: estimates on generated tables with known rates and selectivities, user
statistics and their errors (issue 14).

Expected numbers come from how the tables are generated (type mix, uniform attributes), never
from the estimator; tolerances are those of the sample sizes.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import polars as pl
import pytest

from jitcep.errors import OptionError, StatisticsError
from jitcep.events import build_event_table
from jitcep.pattern.parser import parse
from jitcep.plan.logical import logical_plan
from jitcep.plan.planner.sampling import estimate
from jitcep.plan.planner.statistics import (DEFAULT_SELECTIVITY, PARTITIONS, SKEW, Statistics, conjunct_texts,
                                           from_user, window_extent, with_defaults)

N = 100_000
COUNT_REL = 0.07
"""Relative tolerance of a type count from 8,192 uniform draws (TYPE_SAMPLE): 3 standard deviations
of a share of 0.2, sqrt(0.8 / (0.2 * 8192)) = 2.2% each."""


@pytest.fixture(scope="module")
def frame():
    """10^5 events, one per time unit: types A 50%, B 30%, C 20%; x uniform on [0, 1); 20 keys."""
    rng = np.random.default_rng(7)
    return pl.DataFrame({
        "ts": np.arange(N, dtype=np.int64),
        "type": rng.choice(["A", "B", "C"], N, p=[0.5, 0.3, 0.2]),
        "x": rng.uniform(0.0, 1.0, N),
        "k": rng.integers(0, 20, N),
    })


def _estimate(frame, text, **kw):
    pattern = parse(text)
    table = build_event_table(frame, pattern, type="type")
    measure, span = window_extent(pattern.window, table)
    return estimate(logical_plan(pattern), table, window_measure=measure, span=span, **kw), table


def _count(frame, t):
    return int((frame["type"] == t).sum())


def test_rates_are_type_counts_over_the_extent(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 100")
    extent = N - 1  # ts 0 .. N-1
    # no filter, no key: the type counts, from uniform draws
    assert st.rates["a"] == pytest.approx(_count(frame, "A") / extent, rel=COUNT_REL)
    assert st.rates["b"] == pytest.approx(_count(frame, "B") / extent, rel=COUNT_REL)
    assert st.extent == extent and st.partitions == 1 and st.skew == 1.0
    # a.x < b.x over independent uniform x: 1/2, checked on the mean of SEEDS estimates.  The sample's 1,024
    # tuples are not independent pairs: each first event (a) keeps every b of its window (~30: B is 30% of
    # the events, window 100) up to _INTERMEDIATE = 8,192 partial tuples, so they come from ~270 a's and
    # ~1,000 b's.  For h = [a.x < b.x] (a two-sample U-statistic) Var ~ Var(1 - a.x) / n_a + Var(b.x) / n_b
    # + (Var(h) - 1/12 - 1/12) / n = (1/12) (1/270 + 1/1000 + 1/1024): sd ~0.022 per estimate (measured 0.028
    # over 200 seeds; the binomial sqrt(0.25 / 1024) = 0.016 understates it).  A single estimate would need
    # +-0.11 for 4 sd; the mean of 16 independent seeds has sd ~0.028 / 4 = 0.007, and +-0.03 is ~4 of them.
    seeds = 16
    mean = sum(_estimate(frame, "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 100", seed=s)[0]
               .selectivities["a.x < b.x"] for s in range(seeds)) / seeds
    assert mean == pytest.approx(0.5, abs=0.03)
    assert st.sources["a"] == st.sources["b"] == st.sources["a.x < b.x"] == "sampled"
    assert st.sources[PARTITIONS] == st.sources[SKEW] == "default"


def test_filter_scales_the_rate(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE a.x < 0.1 AND a.x < b.x WITHIN 100")
    base = _count(frame, "A") / (N - 1)
    assert st.rates["a"] == pytest.approx(0.1 * base, rel=0.15)
    # a.x < b.x with a.x below 0.1 and b.x uniform: 1 - E[a.x] = 0.95
    assert st.selectivities["a.x < b.x"] == pytest.approx(0.95, abs=0.03)


def test_key_partitions_and_rates_per_partition(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE [k] AND a.x > b.x WITHIN 100")
    assert st.partitions == pytest.approx(20, rel=0.2)
    assert 1.0 <= st.skew < 1.5  # uniform keys
    assert st.rates["a"] == pytest.approx(_count(frame, "A") / ((N - 1) * st.partitions), rel=COUNT_REL)
    assert st.selectivities["a.x > b.x"] == pytest.approx(0.5, abs=0.06)
    assert st.sources[PARTITIONS] == st.sources[SKEW] == "sampled"


def test_skewed_key():
    rng = np.random.default_rng(3)
    n = 50_000
    k = np.where(rng.random(n) < 0.5, 0, rng.integers(1, 101, n))  # half the events in one partition
    df = pl.DataFrame({"ts": np.arange(n, dtype=np.int64), "type": rng.choice(["A", "B"], n), "k": k,
                       "x": rng.random(n)})
    st, _ = _estimate(df, "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10")
    # sum of squared shares: 0.5^2 + 100 * 0.005^2 = 0.2525 -> ~3.96 equal partitions; largest share 0.5
    assert st.partitions == pytest.approx(1 / 0.2525, abs=1)
    assert st.skew == pytest.approx(0.5 * st.partitions, rel=0.2)


def test_count_window_rates_per_position(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 50 EVENTS")
    assert st.rates["a"] == pytest.approx(_count(frame, "A") / N, rel=COUNT_REL)
    assert st.extent == N


def test_negated_and_closure_variables_have_rates(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, !C c, B b) WHERE c.x > a.x WITHIN 100")
    assert set(st.rates) == {"a", "b", "c"}
    assert st.rates["c"] == pytest.approx(_count(frame, "C") / (N - 1), rel=COUNT_REL)
    assert st.selectivities["c.x > a.x"] == pytest.approx(0.5, abs=0.06)
    st, _ = _estimate(frame, "PATTERN SEQ(A a, C+ c[], B b) WHERE c[i].x > c[i-1].x AND c.x < 0.5 "
                             "AND c[i].x > a.x AND avg(c.x) > 0.2 WITHIN 100")
    assert st.rates["c"] == pytest.approx(0.5 * _count(frame, "C") / (N - 1), rel=0.15)
    # consecutive members (both below 0.5): the later one above the earlier, 1/2
    assert st.selectivities["c.x > c[i-1].x"] == pytest.approx(0.5, abs=0.06)
    # member above a.x, member uniform on [0, 0.5): P = E[c.x] = 0.25
    assert st.selectivities["c.x > a.x"] == pytest.approx(0.25, abs=0.05)
    # a list conjunct is not sampled
    assert st.selectivities["avg(c.x) > 0.2"] == DEFAULT_SELECTIVITY
    assert st.sources["avg(c.x) > 0.2"] == "default"


def test_selectivity_floor_and_default(frame):
    st, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE a.x > b.x + 2 WITHIN 100")
    s = st.selectivities["a.x > b.x + 2"]
    assert 0 < s < 0.001  # no pair passes: 0.5 / (pairs + 1), never 0
    # no D event at all: no pair can be sampled -> the default
    st, _ = _estimate(frame, "PATTERN SEQ(A a, D d) WHERE a.x < d.x WITHIN 100")
    assert st.rates["d"] == 0.0
    assert st.selectivities["a.x < d.x"] == DEFAULT_SELECTIVITY and st.sources["a.x < d.x"] == "default"


def test_rare_type_sampled_from_its_own_positions():
    rng = np.random.default_rng(5)
    n = 200_000
    types = np.where(rng.random(n) < 0.001, "R", "A")  # ~200 R events: too few for the blocks
    df = pl.DataFrame({"ts": np.arange(n, dtype=np.int64), "type": types, "x": rng.random(n)})
    st, _ = _estimate(df, "PATTERN SEQ(A a, R r) WHERE r.x < 0.5 AND a.x < r.x WITHIN 1000")
    base = int((types == "R").sum()) / (n - 1)
    assert st.rates["r"] == pytest.approx(0.5 * base, rel=0.25)
    # too rare for the uniform draws too (~8 of 8,192): counted exactly
    st, _ = _estimate(df, "PATTERN SEQ(A a, R r) WHERE a.x < r.x WITHIN 1000")
    assert st.rates["r"] == pytest.approx(base, rel=1e-12)


def _run_groups(df, text):
    """The estimate's arguments as a run makes them: the table, and the run's own grouping by type
    (jitcep.runtime.prepare makes the table context, then plans)."""
    from jitcep.execute.tables import TableContext
    from jitcep.options import Options
    from jitcep.runtime import plans_for

    pattern = parse(text)
    table = build_event_table(df, pattern, type="type")
    ctx = TableContext(table, plans_for([pattern], Options()))
    ctx.prefetch()
    logical = logical_plan(pattern)
    measure, span = window_extent(pattern.window, table)
    return logical, table, ctx, dict(window_measure=measure, span=span)


def test_every_types_count_comes_exact_from_the_runs_grouping(monkeypatch):
    import jitcep.plan.planner.sampling as sampling

    rng = np.random.default_rng(11)
    n = 50_000
    types = rng.choice(["A", "B", "R", "Z"], n, p=[0.6, 0.3, 0.002, 0.098])  # R: ~100, too rare for the draws
    k = rng.integers(0, 40, n).astype(np.float64)
    k[rng.random(n) < 0.1] = np.nan  # null keys join nothing: left out of the grouping and the counts
    df = pl.DataFrame({"ts": np.arange(n, dtype=np.int64), "type": types, "x": rng.random(n),
                       "k": pl.Series(k).fill_nan(None).cast(pl.Int64)})
    text = "PATTERN SEQ(A a, R r, B b) WHERE [k] AND a.x < b.x WITHIN 400"
    logical, table, ctx, kw = _run_groups(df, text)
    monkeypatch.setattr(sampling, "count_codes", lambda *a: pytest.fail("the type column was passed over"))
    grouped = functools.partial(ctx.grouped, logical.key)
    st = estimate(logical, table, groups=grouped, **kw)
    keyed = df.filter(pl.col("k").is_not_null())
    exact = int((keyed["type"] == "R").sum())  # no filter: every keyed event of the rare type counts
    assert st.rates["r"] * st.extent * st.partitions == pytest.approx(exact, rel=1e-9)
    # the common types too: the grouping's offsets are their keyed counts (no filter: each keyed one counts)
    for v, t in (("a", "A"), ("b", "B")):
        assert st.rates[v] * st.extent * st.partitions == pytest.approx(int((keyed["type"] == t).sum()), rel=1e-9)
    # the other numbers are those of the estimate without the grouping, which counts a type the draws hold
    # from them: near the exact count, not equal to it
    monkeypatch.undo()
    plain = estimate(logical, table, **kw)
    assert (st.partitions, st.skew, st.selectivities) == (plain.partitions, plain.skew, plain.selectivities)
    for v in ("a", "b"):
        assert plain.rates[v] == pytest.approx(st.rates[v], rel=0.05) and plain.rates[v] != st.rates[v]
    # without it: every R counted, times the keyed share of its own sample (all of them): the same number
    assert plain.rates["r"] == pytest.approx(st.rates["r"], rel=1e-9)
    # a grouping that does not hold every type the variables read is not used
    assert sampling._grouped(lambda codes: None, [[0], [1]]) is None
    assert sampling._grouped(grouped, [None, [0]]) is None


def test_a_rare_filtered_type_is_sampled_from_the_runs_grouping():
    rng = np.random.default_rng(5)
    n = 200_000
    types = np.where(rng.random(n) < 0.001, "R", "A")  # ~200 R events: too few for the blocks
    df = pl.DataFrame({"ts": np.arange(n, dtype=np.int64), "type": types, "x": rng.random(n)})
    logical, table, ctx, kw = _run_groups(df, "PATTERN SEQ(A a, R r) WHERE r.x < 0.5 AND a.x < r.x WITHIN 1000")
    st = estimate(logical, table, groups=functools.partial(ctx.grouped, logical.key), **kw)
    r = df.filter(pl.col("type") == "R")
    assert st.rates["r"] == pytest.approx(int((r["x"] < 0.5).sum()) / (n - 1), rel=1e-9)  # all of them read


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conjuncts_over_one_pair_are_read_on_one_draw_of_tuples(frame, seed):
    """docs/planning.md, "One draw of tuples per set of variables": a conjunct and its complement over the
    same pair read complementary shares of the same tuples, (p + 0.5) / (t + 1) + (t - p + 0.5) / (t + 1) = 1
    (x is uniform floats: no ties); the first conjunct over the pair reads what it reads alone; a conjunct
    over another pair draws its own tuples (the complement over (a, c) does not sum to 1 with a.x < b.x)."""
    text = "PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x AND a.x >= b.x AND a.x >= c.x WITHIN 100"
    st, _ = _estimate(frame, text, seed=seed)
    sels = st.selectivities
    assert sels["a.x < b.x"] + sels["a.x >= b.x"] == pytest.approx(1.0, abs=1e-12)
    assert sels["a.x < b.x"] + sels["a.x >= c.x"] != pytest.approx(1.0, abs=1e-12)
    alone, _ = _estimate(frame, "PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x AND a.x >= c.x WITHIN 100",
                         seed=seed)
    assert alone.selectivities["a.x < b.x"] == sels["a.x < b.x"]
    assert all(st.sources[t] == "sampled" for t in ("a.x < b.x", "a.x >= b.x", "a.x >= c.x"))


def test_estimate_is_deterministic(frame):
    a, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 100")
    b, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 100")
    assert a == b
    c, _ = _estimate(frame, "PATTERN SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 100", seed=1)
    assert c.rates == pytest.approx(a.rates, rel=2 * COUNT_REL)  # another draw: the numbers move
    assert c.selectivities["a.x < b.x"] == pytest.approx(a.selectivities["a.x < b.x"], abs=0.1)


def test_small_table_is_read_whole():
    df = pl.DataFrame({"ts": [0, 1, 2, 3], "type": ["A", "B", "A", "B"], "x": [0.1, 0.5, 0.9, 0.3]})
    st, _ = _estimate(df, "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10")
    # ordered pairs (a before b): (0.1, 0.5) T, (0.1, 0.3) T, (0.9, 0.3) F -> (2 + 0.5) / (3 + 1)
    assert st.selectivities["a.x < b.x"] == pytest.approx(2.5 / 4)
    # 2 A events over an extent of max(3, window 10) = 10
    assert st.rates["a"] == pytest.approx(0.2)


def test_window_extent():
    df = pl.DataFrame({"ts": [5, 9, 40], "type": ["A", "B", "A"]})
    for text, want in (("WITHIN 7", ("time", 7.0)), ("WITHIN 4 EVENTS", ("count", 4.0)),
                       ("WITHIN UNBOUNDED", ("time", 35.0))):
        pattern = parse(f"PATTERN SEQ(A a, B b) {text}")
        assert window_extent(pattern.window, build_event_table(df, pattern, type="type")) == want


# --- user statistics -------------------------------------------------------------------


LOGICAL = logical_plan(parse("PATTERN SEQ(A a, !C c, B b) WHERE a.x < b.x AND c.x > a.x WITHIN 10"))


def test_user_statistics_merge_over_the_estimate():
    base = Statistics({"a": 1.0, "b": 2.0, "c": 0.5}, {"a.x < b.x": 0.5, "c.x > a.x": 0.4},
                      sources={"a": "sampled", "b": "sampled", "c": "sampled", "a.x < b.x": "sampled",
                               "c.x > a.x": "sampled"}, extent=100.0)
    st = from_user({"rates": {"a": 3}, "selectivities": {"a.x<b.x": 0.01}, "partitions": 7, "skew": 2.0},
                   LOGICAL, base)
    assert st.rates == {"a": 3.0, "b": 2.0, "c": 0.5}
    assert st.selectivities == {"a.x < b.x": 0.01, "c.x > a.x": 0.4}
    assert st.partitions == 7 and st.skew == 2.0 and st.extent == 100.0
    assert st.sources["a"] == "user" and st.sources["b"] == "sampled"
    assert st.sources["a.x < b.x"] == "user" and st.sources[PARTITIONS] == st.sources[SKEW] == "user"


def test_user_statistics_alone_fill_defaults():
    st = from_user({"rates": {"b": 0.0}}, LOGICAL)
    assert st.rates == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert st.sources == {"a": "default", "b": "user", "c": "default", "a.x < b.x": "default",
                          "c.x > a.x": "default", PARTITIONS: "default", SKEW: "default"}
    filled = with_defaults(Statistics({"a": 2.0}, {}), LOGICAL)
    assert filled.rates["b"] == 1.0 and filled.sources["b"] == "default"


def test_conjunct_texts_name_every_multi_variable_conjunct():
    lp = logical_plan(parse("PATTERN SEQ(A a, B+ b[], C c) WHERE a.x < c.x AND b[i].x > b[i-1].x "
                            "AND b[i].y = a.y AND count(b) > 2 AND a.x > 0 WITHIN 10"))
    assert {t: c.kind for t, c in conjunct_texts(lp).items()} == {
        "a.x < c.x": "join", "b.y = a.y": "member", "b.x > b[i-1].x": "prev", "count(b) > 2": "list"}
    st = from_user({"selectivities": {"b[i].x > b[i-1].x": 0.3, "b[i].y = a.y": 0.2}}, lp)
    assert st.selectivities["b.x > b[i-1].x"] == 0.3 and st.selectivities["b.y = a.y"] == 0.2


@pytest.mark.parametrize("mapping, named", [
    ({"rates": {"z": 1.0}}, "'z'"),                        # unknown variable
    ({"rates": {"a": -1.0}}, "rates['a']"),                # negative rate
    ({"rates": {"a": math.nan}}, "rates['a']"),            # not finite
    ({"rates": {"a": math.inf}}, "rates['a']"),
    ({"rates": {"a": "fast"}}, "rates['a']"),              # not a number
    ({"selectivities": {"a.x > b.x": 0.1}}, "'a.x > b.x'"),  # unknown conjunct
    ({"selectivities": {"a.x <": 0.1}}, "'a.x <'"),        # not even an expression
    ({"selectivities": {"a.x < b.x": 1.5}}, "selectivities['a.x < b.x']"),
    ({"selectivities": {"a.x < b.x": -0.1}}, "selectivities['a.x < b.x']"),
    ({"rate": {"a": 1.0}}, "'rate'"),                      # unknown section
    ({"rates": [1.0]}, "'rates'"),
    ({"partitions": 0}, "partitions"),
    ({"partitions": 2.5}, "partitions"),
    ({"skew": 0.5}, "skew"),
])
def test_user_statistics_errors_name_the_key(mapping, named):
    with pytest.raises(StatisticsError) as info:
        from_user(mapping, LOGICAL)
    assert named in str(info.value)
    assert isinstance(info.value, OptionError)


def test_user_statistics_must_be_a_mapping():
    with pytest.raises(StatisticsError, match="mapping"):
        from_user([("rates", {})], LOGICAL)


def test_estimate_refuses_a_bad_window():
    df = pl.DataFrame({"ts": [0, 1], "type": ["A", "B"]})
    pattern = parse("PATTERN SEQ(A a, B b) WITHIN 10")
    table = build_event_table(df, pattern, type="type")
    with pytest.raises(StatisticsError, match="window_measure"):
        estimate(logical_plan(pattern), table, window_measure="rows", span=10)
    with pytest.raises(StatisticsError, match="span"):
        estimate(logical_plan(pattern), table, window_measure="time", span=0)


def test_tuples_follow_the_structure_order():
    """x grows with time: a predicate agreeing with the order holds for every pair sampled in that order."""
    rng = np.random.default_rng(11)
    n = 50_000
    df = pl.DataFrame({"ts": np.arange(n, dtype=np.int64), "type": rng.choice(["A", "B", "C"], n),
                       "x": np.arange(n, dtype=np.float64)})
    st, _ = _estimate(df, "PATTERN SEQ(A a, !C c, B b, C+ d[]) WHERE a.x < b.x AND c.x > a.x AND d.x > b.x "
                          "AND d[i].x > d[i-1].x WITHIN 100")
    for text in ("a.x < b.x", "c.x > a.x", "d.x > b.x", "d.x > d[i-1].x"):
        assert st.selectivities[text] > 0.99, text
    # in an AND the pairs come in either order: half agree
    st, _ = _estimate(df, "PATTERN AND(A a, B b) WHERE a.x < b.x WITHIN 100")
    assert st.selectivities["a.x < b.x"] == pytest.approx(0.5, abs=0.06)


# ---- the compiled steps give the statistics the NumPy steps gave ----

def _old_candidates(tc, allowed, key_ok):
    """The NumPy steps ``estimate`` ran per variable before kernels.sampling.candidates (one row each)."""
    T = allowed.shape[1] - 1
    slot = np.where((tc >= 0) & (tc < T), tc, T)
    idx, in_type = [], []
    for row in allowed:
        ok = row[slot]
        in_type.append(int(ok.sum()))
        idx.append(np.flatnonzero(ok if key_ok is None else ok & key_ok))
    return (np.concatenate(idx).astype(np.int64), np.concatenate([[0], np.cumsum([len(i) for i in idx])]),
            np.array(in_type))


def _old_window_ranges(first, lo, hi, w, group, wt, reach, by_group):
    """The NumPy steps ``sampling._tuples`` ran per variable before kernels.sampling.window_ranges."""
    M = len(wt) + 1
    if by_group:
        w = w[np.argsort(group[w], kind="stable")]
    gw = group[w] * M + w
    g = group[first] * M
    s = np.searchsorted(gw, g + np.searchsorted(wt, hi - reach, side="left"), side="left")
    e = np.searchsorted(gw, g + np.searchsorted(wt, lo + reach, side="right"), side="left")
    return w, s, e - s


def _old_block_sample(type_code, ts, starts, L):
    """The NumPy steps ``estimate`` ran for the blocks before kernels.sampling.block_sample."""
    if starts is None:
        pos = np.arange(len(type_code), dtype=np.int64)
        blk = pos // L
    else:
        pos = (starts[:, None] * L + np.arange(L)[None, :]).reshape(-1)
        blk = np.repeat(np.arange(len(starts)), L)
    return pos, blk, type_code[pos], ts[pos]


def _old_key_codes(values, valid, positions):
    """The NumPy steps ``sampling._key_codes`` ran for one attribute before kernels.sampling.key_codes."""
    out = (values if positions is None else values[positions]).astype(np.int64)
    lo, hi = (int(out.min()), int(out.max())) if len(out) else (0, 0)
    null = np.zeros(len(out), np.bool_) if valid is None else ~(valid if positions is None else valid[positions])
    return np.where(null, -1, out - lo), hi - lo


def _old_pair_counts(codes):
    """The NumPy steps ``sampling._partitions`` ran before kernels.sampling.pair_counts (bincount or unique)."""
    codes = codes[codes >= 0]
    if len(codes) < 2:
        return len(codes), 0, 0
    small = int(codes.max()) < 16 * len(codes)
    counts = (np.bincount(codes) if small else np.unique(codes, return_counts=True)[1]).astype(np.float64)
    return len(codes), float(counts @ counts), counts.max()


BENCH_PATTERNS = [  # perf/bench_statistics.py's workloads, on its data
    "PATTERN SEQ(T0 e0, T1 e1, T2 e2) WHERE [symbol] AND e0.price > 20 AND e2.price > e0.price WITHIN 2000",
    "PATTERN SEQ(T0 e0, T1 e1, T2 e2, T3 e3, T4 e4, T5 e5) WHERE [symbol] AND e0.price > 20 "
    "AND e5.price > e0.price WITHIN 2000",
    "PATTERN SEQ(T0 a, T1 b, T2 c) WHERE a.price > b.price + 40 AND b.volume < c.volume WITHIN 20",
    "PATTERN SEQ(T0 a, T1 b, T2 c) WHERE a.price < c.price WITHIN 300",
    "PATTERN SEQ(T0 a, !T3 n, T1+ b[], T2 c) WHERE [symbol] AND b[i].price > a.price AND n.volume > 900 "
    "WITHIN 400",
    "PATTERN SEQ(T0 a, T1 b) WHERE a.price < b.price WITHIN 100 EVENTS",
]


@pytest.mark.parametrize("flavour", ["int", "str"])
def test_compiled_steps_give_the_numpy_steps_statistics(monkeypatch, flavour):
    import os
    import sys

    from jitcep.plan.planner import sampling
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "perf"))
    from bench_seq import make_events

    df = make_events(120_000, 24, 100, seed=3, flavour=flavour)
    for text in BENCH_PATTERNS:
        for seed in (0, 1, 7):
            got, _ = _estimate(df, text, seed=seed)
            with monkeypatch.context() as m:
                m.setattr(sampling, "candidates", _old_candidates)
                m.setattr(sampling, "window_ranges", _old_window_ranges)
                m.setattr(sampling, "key_codes", _old_key_codes)
                m.setattr(sampling, "block_sample", _old_block_sample)
                m.setattr(sampling, "pair_counts", _old_pair_counts)
                # and the sample step by step, not in one compiled call (an integer key's, a String key's views)
                m.setattr(sampling, "sample_with_key", lambda *a: None)
                m.setattr(sampling, "sample_with_views", lambda *a: None)
                want, _ = _estimate(df, text, seed=seed)
            assert got == want, (text, seed)
            assert got.sources == want.sources and any(s == "sampled" for s in got.sources.values())
