"""A SEQ of four or five leaves with nothing to test, written straight from the leaves
(jitcep.kernels.final_join_chain, jitcep.execute.join._leaf_chains): the reference evaluator's frame, the
caps of the joins it replaces, and where it is not taken."""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep.errors import ExplosionError
from jitcep.execute import join


@st.composite
def frames(draw, sizes=(0, 36), kinds="ABCDEF"):
    """Events of ``kinds`` (some rows out of time order, times with ties), a key of up to three values,
    the time column Int64 or Datetime."""
    n = draw(st.integers(*sizes))
    types = draw(st.lists(st.sampled_from(kinds), min_size=n, max_size=n))
    ts = np.cumsum(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))).astype(np.int64)
    order = np.array(draw(st.permutations(range(n))) if draw(st.booleans()) else range(n), dtype=np.int64)
    df = pl.DataFrame({"type": [types[i] for i in order], "ts": ts[order] if n else ts,
                       "k": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))},
                      schema={"type": pl.String, "ts": pl.Int64, "k": pl.Int64})
    if draw(st.booleans()):
        df = df.with_columns(pl.col("ts").cast(pl.Datetime("ms", "Europe/Paris")))
    return df


# middle names ascending in SEQ order (first and last any): the path is taken; "a, c, b, d" is not
NAMES = ["a, b, c, d", "z, b, c, a", "d, m, n, c", "a, b, c, d, e", "e, b, c, d, a", "a, c, b, d"]


@settings(max_examples=150, deadline=None)
@given(frames(), st.sampled_from(NAMES), st.sampled_from(["6", "5 EVENTS", "2", "3 EVENTS"]),
       st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(), st.sampled_from([1, 2]))
def test_the_matches_are_the_references(df, names, window, order, keyed, threads):
    vs = names.split(", ")
    if "EVENTS" not in window and df.schema["ts"] != pl.Int64:
        window += " milliseconds"
    seq = ", ".join(f"{t} {v}" for t, v in zip("ABCDE", vs))
    text = f"PATTERN SEQ({seq}) {'WHERE [k] ' if keyed else ''}WITHIN {window}"
    query = jitcep.compile(text, order=order)
    with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
        got = query.run(df, time="ts", type="type", threads=threads)
    assert got.equals(query.run(df, time="ts", type="type", engine="reference"))
    # one key partition and middle names in SEQ order: written from the leaves whenever there are
    # matches (with none, a leaf may be left empty by the reduction, and then nothing runs after it)
    if names == "a, c, b, d":
        assert not kernel.called
    elif not keyed and got.height:
        assert kernel.called


def test_under_ties_the_chains_are_written_or_declined():
    # nondecreasing_ts: the kernel writes the chains where no event shares its time with one of the
    # variable before it that comes after it in position, and declines elsewhere (the joins then run);
    # the reference's frame either way (ties at each leaf, time and count windows, a key, two threads);
    # both outcomes must turn up
    outcomes, real = set(), join.seq_chain_rows

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        outcomes.add(out is None)
        return out

    @settings(max_examples=80, deadline=None, database=None)
    @given(frames(), st.sampled_from(NAMES[:5]), st.sampled_from(["6", "2", "5 EVENTS"]), st.booleans(),
           st.sampled_from([1, 2]))
    def check(df, names, window, keyed, threads):
        if "EVENTS" not in window and df.schema["ts"] != pl.Int64:
            window += " milliseconds"
        seq = ", ".join(f"{t} {v}" for t, v in zip("ABCDE", names.split(", ")))
        query = jitcep.compile(f"PATTERN SEQ({seq}) {'WHERE [k] ' if keyed else ''}WITHIN {window}",
                               order="nondecreasing_ts")
        with mock.patch.object(join, "seq_chain_rows", spy):
            got = query.run(df, time="ts", type="type", threads=threads)
        assert got.equals(query.run(df, time="ts", type="type", engine="reference"))

    check()
    assert outcomes == {True, False}, outcomes


# user rates that make the plan left-deep (a rare), right-deep (d rare) or bushy ((a, b) and (c, d))
SHAPES = {"left": {"a": 0.001, "b": 1.0, "c": 1.0, "d": 1.0}, "right": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.001},
          "bushy": {"a": 0.3, "b": 1.0, "c": 1.0, "d": 0.3}}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_joins_caps_hold(shape):
    # past any of the plan's joins' pairs or the matches the cap allows, the run raises as the joins do
    # (they run then and say which cap); below, the same frame; each shape of plan seen to take the path
    taken = []

    @settings(max_examples=60, deadline=None)
    @given(frames((16, 48), "ABCD"), st.integers(1, 60), st.booleans())
    def check(df, cap, memory):
        text = "PATTERN SEQ(A a, B b, C c, D d) WITHIN 6"
        query = jitcep.compile(text, **({"max_memory": 256 * cap} if memory else {"max_partials": cap}))

        def outcome():
            try:
                return query.run(df, time="ts", type="type", statistics={"rates": SHAPES[shape]})
            except ExplosionError as e:
                return str(e)

        with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
            got = outcome()
        taken.extend(c.args[5] for c in kernel.call_args_list if isinstance(got, pl.DataFrame) and got.height)
        with mock.patch.object(join, "_leaf_chain", lambda node, state: None):
            assert (got.equals(outcome()) if isinstance(got, pl.DataFrame) else got == outcome())

    check()
    # the runs of leaves the kernel was asked to count: the plan's joins', parts first
    want = {"left": [(0, 1), (0, 2), (0, 3)], "right": [(2, 3), (1, 3), (0, 3)],
            "bushy": [(0, 1), (2, 3), (0, 3)]}[shape]
    assert taken and all(list(spans) == want for spans in taken), taken[:3]


@pytest.mark.parametrize("cap, height", [(4, None), (5, 3)])
def test_an_inner_joins_pairs_are_capped_though_never_made(cap, height):
    # SEQ(A a, B b, C c, D d) WITHIN 10 on A0 B1 A2 B3 C4 D5 B6: the (a, b) pairs (0, 1), (0, 3), (0, 6),
    # (2, 3), (2, 6); the (a, b, c) triples and the matches: (0, 1, 4, 5), (0, 3, 4, 5), (2, 3, 4, 5).
    # Under a left-deep plan the first join's five pairs pass max_partials=4 though no later join's do
    df = pl.DataFrame({"type": list("ABABCDB"), "ts": [0, 1, 2, 3, 4, 5, 6]})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c, D d) WITHIN 10", max_partials=cap)
    rates = {"rates": SHAPES["left"]}
    with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
        if height is None:
            with pytest.raises(ExplosionError, match="more than 4 candidate"):
                query.run(df, time="ts", type="type", statistics=rates)
        else:
            assert query.run(df, time="ts", type="type", statistics=rates).height == height
    assert kernel.called


def test_explain_analyze_shows_every_join():
    # explain(analyze=True) shows each operator's records: the joins run one by one there
    df = pl.DataFrame({"type": list("ABCDABCD"), "ts": range(8)})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c, D d) WITHIN 10")
    with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
        text = query.explain(df, time="ts", type="type", analyze=True)
    assert not kernel.called and text.count("rows=") >= 7
    with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
        assert query.run(df, time="ts", type="type").height == 5
    assert kernel.called


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_small_max_memory_still_writes_from_the_leaves(shape):
    # each join the kernel replaces is given its share beside its inputs bounded by what max_memory would
    # count for them (kernels.alloc.counted_at_most: a pool's block for each array), so a budget of 8 MiB,
    # far above what these joins hold, takes the path (a bound of 33 MiB per array declined below ~500 MB)
    rng = np.random.default_rng(3)
    df = pl.DataFrame({"type": rng.choice(list("ABCD"), 4000), "ts": np.arange(4000)})
    query = jitcep.compile("PATTERN SEQ(A a, B b, C c, D d) WITHIN 12", max_memory=8 << 20)
    returned, real = [], join.seq_chain_rows

    def kernel(*args, **kwargs):
        returned.append(real(*args, **kwargs))
        return returned[-1]

    run = dict(time="ts", type="type", statistics={"rates": SHAPES[shape]})
    with mock.patch.object(join, "seq_chain_rows", kernel):
        got = query.run(df, **run)
    assert len(returned) == 1 and returned[0] is not None and got.height > 1000
    assert got.equals(query.run(df, engine="reference", **{k: v for k, v in run.items() if k != "statistics"}))
