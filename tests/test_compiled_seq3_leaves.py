"""SEQ(a, b, c) over three leaves with nothing to test, written straight from the leaves
(jitcep.kernels.final_join_leaves, jitcep.execute.join._leaf_triples): the reference evaluator's frame,
and the caps of the two joins it replaces."""

from __future__ import annotations

import re
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep.errors import ExplosionError
from jitcep.execute import join
from jitcep.output import columns
from jitcep.plan.rules import join_driver


@st.composite
def frames(draw):
    """Events of types A-D (some rows out of time order, times with ties), a key of up to three values,
    the time column Int64 or Datetime."""
    n = draw(st.integers(0, 30))
    types = draw(st.lists(st.sampled_from("ABCD"), min_size=n, max_size=n))
    ts = np.cumsum(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))).astype(np.int64)
    order = np.array(draw(st.permutations(range(n))) if draw(st.booleans()) else range(n), dtype=np.int64)
    df = pl.DataFrame({"type": [types[i] for i in order], "ts": ts[order] if n else ts,
                       "k": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))},
                      schema={"type": pl.String, "ts": pl.Int64, "k": pl.Int64})
    if draw(st.booleans()):
        df = df.with_columns(pl.col("ts").cast(pl.Datetime("ms", "Europe/Paris")))
    return df


@settings(max_examples=150, deadline=None)
@given(frames(), st.sampled_from(["a, b, c", "z, y, x", "b, c, a"]), st.sampled_from(["4", "3 EVENTS", "1", "1 EVENTS"]),
       st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(), st.sampled_from([1, 2]))
def test_the_matches_are_the_references(df, names, window, order, keyed, threads):
    a, b, c = names.split(", ")
    if "EVENTS" not in window and df.schema["ts"] != pl.Int64:
        window += " milliseconds"
    text = f"PATTERN SEQ(A {a}, B {b}, C {c}) {'WHERE [k] ' if keyed else ''}WITHIN {window}"
    query = jitcep.compile(text, order=order)
    with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel:
        got = query.run(df, time="ts", type="type", threads=threads)
    assert got.equals(query.run(df, time="ts", type="type", engine="reference"))
    # one key partition: written from the leaves whenever there are matches (with none, a leaf may be
    # left empty by the reduction, and then nothing runs after it)
    if not keyed and got.height:
        assert kernel.called


@pytest.mark.parametrize("order", ["position", "nondecreasing_ts"])
def test_a_right_deep_roots_rows_are_priced_under_any_order(order):
    # the root of a right-deep plan (a left leaf) may write the rows from the leaves under
    # nondecreasing_ts too: the rule prices them beside the pairs, as under position order
    df = pl.DataFrame({"type": list("ABC" * 10), "ts": range(30)})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 5", order=order)
    text = query.explain(df, time="ts", type="type", statistics={"rates": SHAPES["right"]})
    root = text.splitlines()[2]
    assert root.startswith("  SEQ join (a, b, c)") and "right+rows" in root, text
    assert text.splitlines()[4].strip().startswith("SEQ join (b, c)"), text


# user rates that make the plan left-deep (a rare: (a, b) joined first) or right-deep (c rare: (b, c) first)
SHAPES = {"left": {"a": 0.001, "b": 1.0, "c": 1.0}, "right": {"a": 1.0, "b": 1.0, "c": 0.001}}


@pytest.mark.parametrize("slow", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_under_ties_the_rows_are_written_or_declined(slow):
    # nondecreasing_ts: the kernel writes the rows where no event shares its time with one of the
    # variable before it that comes after it in position, and declines elsewhere (the joins then make
    # and order the pairs); the reference's frame either way, with ties at each leaf and across a
    # window's edge (steps of 0 in time, windows of 1), count windows, a key or partition_by, a type read
    # by two variables, either shape of plan, one thread or two; both outcomes must turn up, and the
    # kernel at several key partitions under either shape (the final join's rows priced cheapest: on
    # tables this small the pairs are, and with several partitions the kernel follows the plan)
    outcomes, real = set(), join.seq3_leaf_rows

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        outcomes.add(("declined" if out is None else "rows", kwargs["inner_bc"], len(args[0][3]) > 2))
        return out

    @settings(max_examples=400 if slow else 80, deadline=None, database=None)
    @given(frames(), st.sampled_from(["SEQ(A a, B b, C c)", "SEQ(A z, B y, C x)", "SEQ(A a, A b, C c)",
                                      "SEQ(A a, B b, A c)"]),
           st.sampled_from(["1", "3", "2 EVENTS", "5 EVENTS"]), st.sampled_from(["", "[k]", "partition_by"]),
           st.sampled_from([1, 2]), st.sampled_from([None, *sorted(SHAPES)]))
    def check(df, body, window, key, threads, shape):
        if "EVENTS" not in window and df.schema["ts"] != pl.Int64:
            window += " milliseconds"
        names = re.findall(r" ([a-z])\b", body)
        text = f"PATTERN {body} {'WHERE [k] ' if key == '[k]' else ''}WITHIN {window}"
        query = jitcep.compile(text, order="nondecreasing_ts")
        kw = dict(time="ts", type="type", partition_by="k" if key == "partition_by" else None)
        rates = None if shape is None else {"rates": dict(zip(names, SHAPES[shape].values()))}
        with mock.patch.object(join, "seq3_leaf_rows", spy), \
                mock.patch.object(join_driver, "final_join_cost", lambda path, *a: float(path != "right+rows")):
            got = query.run(df, **kw, threads=threads, statistics=rates)
        assert got.equals(query.run(df, **kw, engine="reference")), (text, key, threads, shape)

    check()
    assert {o for o, _, _ in outcomes} == {"declined", "rows"}, outcomes
    assert {(bc, keyed) for o, bc, keyed in outcomes if o == "rows"} >= {(False, True), (True, True)}, outcomes




@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_two_joins_caps_hold(shape):
    # past the plan's first join's pairs or the matches the cap allows, the run raises as the two joins do
    # (they run then and say which cap); below, the same frame; under either shape of plan
    seen = set()

    @settings(max_examples=60, deadline=None)
    @given(frames(), st.integers(1, 40), st.booleans())
    def check(df, cap, memory):
        text = "PATTERN SEQ(A a, B b, C c) WITHIN 6"
        query = jitcep.compile(text, **({"max_memory": 256 * cap} if memory else {"max_partials": cap}))

        def outcome():
            try:
                return query.run(df, time="ts", type="type", statistics={"rates": SHAPES[shape]})
            except ExplosionError as e:
                return str(e)

        with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel:
            got = outcome()
        seen.update(c.kwargs["inner_bc"] for c in kernel.call_args_list)
        with mock.patch.object(join, "_leaf_chain", lambda node, state: None):
            assert (got.equals(outcome()) if isinstance(got, pl.DataFrame) else got == outcome())

    check()
    assert seen == {shape == "right"}, seen


def test_explain_analyze_shows_both_joins():
    # explain(analyze=True) shows each operator's records: the joins run one by one there
    df = pl.DataFrame({"type": list("ABCABC"), "ts": range(6)})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 10")
    with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel:
        text = query.explain(df, time="ts", type="type", analyze=True)
    assert not kernel.called and text.count("rows=") >= 5
    with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel:
        assert query.run(df, time="ts", type="type").height == 4
    assert kernel.called


@pytest.mark.parametrize("cap, height", [(2, None), (3, 2)])
def test_the_first_joins_pairs_are_capped_though_never_made(cap, height):
    # (a, b) pairs within the window: (0, 1), (0, 9), (5, 9); matches: (0, 1, 3) and (5, 9, 14) (14 is
    # past a = 0's window).  Three pairs pass max_partials=2 though the two matches do not
    df = pl.DataFrame({"type": list("ABCABC"), "ts": [0, 1, 3, 5, 9, 14]})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 10", max_partials=cap)
    with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel:
        if height is None:
            with pytest.raises(ExplosionError, match="more than 2 candidate"):
                query.run(df, time="ts", type="type")
        else:
            assert query.run(df, time="ts", type="type").height == height
    assert kernel.called



TIME_TYPES = {"Int64": (pl.Int64, ""), "Int32": (pl.Int32, ""), "Float64": (pl.Float64, ""), "Date": (pl.Date, " days"),
              "ms": (pl.Datetime("ms"), " milliseconds"), "us Kolkata": (pl.Datetime("us", "Asia/Kolkata"), " microseconds"),
              "ns UTC": (pl.Datetime("ns", "UTC"), " nanoseconds"), "us Paris": (pl.Datetime("us", "Europe/Paris"), " microseconds")}


@pytest.mark.parametrize("returns", ["", " RETURN c, b, a", " RETURN a.ts AS t, c.ts AS u, c", " RETURN a, b, c"])
@pytest.mark.parametrize("time", sorted(TIME_TYPES))
def test_the_ts_written_beside_the_rows_are_the_time_columns_own(time, returns):
    # the output's ts fields come from the times the kernel wrote beside its rows (MatchTable.times) for an
    # Int64 or Datetime column, and are gathered for any other; either way the reference's, in the column's
    # own type, unit and zone, in each shape; ties, rows out of time order, two key partitions
    rng = np.random.default_rng(7)
    n = 48
    df = pl.DataFrame({"type": rng.choice(list("ABC"), n), "ts": rng.permutation(np.repeat(np.arange(24) * 2, 2)),
                       "k": rng.integers(0, 2, n)})
    dtype, unit = TIME_TYPES[time]
    df = df.with_columns(pl.col("ts").cast(pl.Int32).cast(dtype) if dtype == pl.Date else pl.col("ts").cast(dtype))
    read, real = [], columns._times_in_place

    def times_in_place(*args):
        read.append(real(*args))
        return read[-1]

    for keyed, threads, shape in ((False, 1, "wide"), (True, 2, "wide"), (False, 2, "long")):
        query = jitcep.compile(f"PATTERN SEQ(A a, B b, C c) {'WHERE [k] ' if keyed else ''}WITHIN 8{unit}{returns}")
        with mock.patch.object(join, "seq3_leaf_rows", wraps=join.seq3_leaf_rows) as kernel, \
                mock.patch.object(columns, "_times_in_place", times_in_place):
            got = query.run(df, time="ts", type="type", threads=threads, shape=shape)
        want = query.run(df, time="ts", type="type", engine="reference", shape=shape)
        assert want.height >= 10 and (keyed or kernel.called)
        assert got.schema == want.schema and got.equals(want), (keyed, shape)
    # read for an Int64 or a Datetime column (whose values are the table's ts), gathered for the others
    assert any(r is not None for r in read) == (time not in ("Int32", "Float64", "Date"))


@st.composite
def runs(draw):
    """A SEQ of three leaves the fused path may take (names in any order, a type read twice, a filter on a
    leaf), its time type and window, order, key, RETURN, a second pattern, the run's threads, shape,
    partition_by and the plan's shape (user rates), and max_matches below, at or above the match count."""
    df = draw(frames())
    body = draw(st.sampled_from(["SEQ(A a, B b, C c)", "SEQ(A z, B y, C x)", "SEQ(A a, A b, A c)",
                                 "SEQ(A a, B b, A c)", "SEQ(ANY(A, B) a, B b, C c)", "SEQ(* a, B b, C c)"]))
    names = re.findall(r" ([a-z])\b", body)
    time = draw(st.sampled_from(["Int64", "Date", "ms", "us Kolkata", "ns UTC"]))
    dtype, unit = TIME_TYPES[time]
    df = df.with_columns(pl.col("ts").cast(pl.Int64).cast(pl.Int32).cast(dtype) if dtype == pl.Date
                         else pl.col("ts").cast(pl.Int64).cast(dtype))
    window = draw(st.sampled_from([f"1{unit}", f"2{unit}", f"5{unit}", "3 EVENTS", "UNBOUNDED"]))
    where = draw(st.sampled_from(["", "[k]", f"{names[1]}.k >= 1"]))
    returns = draw(st.sampled_from(["", f" RETURN {names[2]}, {names[0]}", f" RETURN {names[0]}.ts AS t, {names[2]}"]))
    text = f"PATTERN {body}{' WHERE ' + where if where else ''} WITHIN {window}{returns}"
    second = draw(st.sampled_from(["", ";\nPATTERN SEQ(C p, A q) WITHIN 4 EVENTS"]))
    run = dict(threads=draw(st.sampled_from([1, 2])), shape=draw(st.sampled_from(["wide", "long"])))
    if draw(st.booleans()):
        run["partition_by"] = "k"
    if not second and draw(st.booleans()):
        run["statistics"] = {"rates": dict(zip(names, draw(st.sampled_from([(0.001, 1.0, 1.0), (1.0, 1.0, 0.001)]))))}
    return df, text + second, draw(st.sampled_from(["position", "strict_ts", "nondecreasing_ts"])), run, \
        draw(st.integers(-1, 1))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None)
@given(runs())
def test_the_fused_paths_runs_are_the_references_slow(case):
    df, text, order, run, over = case
    kw = dict(time="ts", type="type", partition_by=run.get("partition_by"), shape=run["shape"])
    want = jitcep.compile(text, order=order).run(df, engine="reference", **kw)
    # max_matches one below the matches (both engines raise), at them or one above (neither does)
    n = want.get_column("match_id").n_unique()
    cap = max(n + over, 1)
    query = jitcep.compile(text, order=order, max_matches=cap)
    try:
        got = query.run(df, **kw, threads=run["threads"], statistics=run.get("statistics"))
    except ExplosionError as e:
        assert n > cap and "max_matches" in str(e)
        return
    assert n <= cap
    assert got.schema == want.schema and got.equals(want), (text, order, run)


def test_an_empty_last_leaf_still_caps_the_first_join():
    # A0 A1 A2 B3 and no C: under a left-deep plan the first join makes the (a, b) pairs (0, 3), (1, 3),
    # (2, 3) before the empty leaf is read, and three pass max_partials=2: the run raises as the joins'
    # does (it returned an empty frame when an empty leaf ended the path before anything was counted);
    # the fused path reads the leaves and, at the empty one, leaves the rest to the joins
    df = pl.DataFrame({"type": list("AAAB"), "ts": [0, 1, 2, 3]})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 10", max_partials=2)
    rates = {"rates": SHAPES["left"]}
    with mock.patch.object(join, "_from_leaves", wraps=join._from_leaves) as fused:
        with pytest.raises(ExplosionError, match="more than 2 candidate"):
            query.run(df, time="ts", type="type", statistics=rates)
    assert fused.called
    assert jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 10", max_partials=3).run(
        df, time="ts", type="type", statistics=rates).height == 0
