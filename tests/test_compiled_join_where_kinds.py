"""A SEQ join's predicates tested in its loop (execute.join_where, codegen.join_where) over every kind of
column a predicate reads, and over generated conjuncts (slow): equal to the tested-after path and to the
reference evaluator.  Apart from tests/test_compiled_join_where.py, whose check that its cases took the path
counts on Hypothesis' draws there (which draw constants from the module's own text)."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep import config
from jitcep.testing.streams import event_frames


def _wide_frame(df, extra):
    """``df`` with columns of the dtypes a predicate reads otherwise (semantics section 4): UInt64 and Int128
    past int64 (read as float64), int64 past 2^53 (compared exactly with floats), NaN and -0.0, Booleans,
    Dates beside Datetimes (instants), Durations; each with nulls."""
    import datetime as dt

    import polars as pl
    n = df.height

    def col(values):
        return extra.draw(st.lists(st.one_of(st.none(), st.sampled_from(values)), min_size=n, max_size=n))
    return df.with_columns(
        pl.Series("u", col([0, 1, 2**63 - 1, 2**63, 2**63 + 2048, 2**64 - 1]), dtype=pl.UInt64),
        pl.Series("i", col([-(2**100), -1, 0, 5, 2**70]), dtype=pl.Int128),
        pl.Series("big", col([2**53, 2**53 + 1, -(2**62), 2**62]), dtype=pl.Int64),
        pl.Series("f", col([0.0, -0.0, 1.5, float("nan"), 9007199254740992.0]), dtype=pl.Float64),
        pl.Series("bo", col([True, False]), dtype=pl.Boolean),
        pl.Series("d", col([dt.date(2020, 1, 1), dt.date(2020, 1, 2)]), dtype=pl.Date),
        pl.Series("t", col([dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 12)]), dtype=pl.Datetime("us")),
        pl.Series("du", col([dt.timedelta(seconds=-1), dt.timedelta(0), dt.timedelta(milliseconds=1)]),
                  dtype=pl.Duration("ms")))


# each conjunct over both sides of its join; the OR's branch and the negation's variable beside them
WIDE_PATTERNS = [
    "PATTERN SEQ(A a, B b) WHERE a.u < b.u AND b.i >= a.i AND a.big * 2 > b.f WITHIN 4",
    "PATTERN SEQ(A a, OR(B b, C c), A d) WHERE a.d <= b.t AND c.du != d.du AND a.bo = d.bo WITHIN 5",
    "PATTERN SEQ(A a, NOT(C n), B b) WHERE b.f >= a.f AND n.u = a.u AND abs(b.big - a.big) < 2 WITHIN 5",
]


@pytest.mark.parametrize("text", WIDE_PATTERNS)
@settings(max_examples=20, deadline=None)
@given(df=event_frames(max_size=14), extra=st.data(), keyed=st.booleans(), threads=st.sampled_from([1, 2]),
       order=st.sampled_from(["position", "nondecreasing_ts"]))
def test_predicates_over_every_kind_of_column_in_the_join_loop_equal_the_reference(text, df, extra, keyed,
                                                                                  threads, order):
    df = _wide_frame(df, extra)
    q = jitcep.compile(text, order=order)
    kw = dict(type="type", partition_by="k" if keyed else None)
    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 0):
        got = q.run(df, threads=threads, **kw)
    assert got.equals(q.run(df, engine="reference", **kw))


_CMP = st.sampled_from(["<", "<=", ">", ">=", "=", "!="])
# conjunct templates over two variables l, r, each a kind of predicate the language accepts (semantics
# section 4): arithmetic, int beside float, NULL, strings, 128-bit and UInt64 columns, temporal kinds, Booleans
_CONJUNCTS = [
    "{l}.x {c} {r}.x", "{r}.y {c} {l}.y * 1.01", "{l}.x {c} {r}.y", "{r}.x - {l}.x {c} 1", "{l}.x / {r}.x {c} 0.5",
    "{l}.s {c} {r}.s", "{l}.u {c} {r}.u", "{l}.i {c} {r}.i", "{l}.d {c} {r}.t", "{l}.du {c} {r}.du",
    "{l}.bo = {r}.bo", "({r}.x IS NULL OR {l}.x {c} {r}.x)", "abs({l}.big - {r}.big) {c} 1", "NOT ({l}.f {c} {r}.f)",
    "{r}.ts - {l}.ts {c} 1", "{l}.x * {r}.big {c} {r}.u",
]
_SHAPES = [  # (pattern, the variable pairs a conjunct may read)
    ("SEQ(A a, B b)", [("a", "b")]),
    ("SEQ(A a, B b, C c)", [("a", "b"), ("b", "c"), ("a", "c")]),
    ("SEQ(A a, OR(B b, C c), A d)", [("a", "b"), ("a", "d"), ("c", "d")]),
    ("SEQ(A a, NOT(C n), B b)", [("a", "b"), ("n", "b")]),
    ("SEQ(A a, B+ b[], C c)", [("a", "c")]),
    ("SEQ(AND(A a, B b), C c)", [("a", "c"), ("b", "c")]),
]


@st.composite
def _pattern_texts(draw):
    shape, pairs = draw(st.sampled_from(_SHAPES))
    conjuncts = [draw(st.sampled_from(_CONJUNCTS)).format(l=l, r=r, c=draw(_CMP))
                 for l, r in draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=3))]
    window = draw(st.sampled_from(["WITHIN 3", "WITHIN 5", "WITHIN 4 EVENTS"]))
    return f"PATTERN {shape} WHERE {' AND '.join(conjuncts)} {window}"


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(text=_pattern_texts(), df=event_frames(max_size=24), extra=st.data(), keyed=st.booleans(),
       threads=st.sampled_from([1, 2]), order=st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       cap=st.one_of(st.none(), st.integers(1, 40)))
def test_generated_predicates_in_the_join_loop_equal_the_tested_after_path_and_the_reference(
        text, df, extra, keyed, threads, order, cap):
    # the in-loop join against the join whose predicates are tested after it (same pairs, same cap on the
    # candidates: the same ExplosionError) and, below the cap, against the reference evaluator
    from jitcep.errors import ExplosionError
    df = _wide_frame(df, extra)
    kw = dict(type="type", partition_by="k" if keyed else None, threads=threads)
    caps = {} if cap is None else {"max_partials": cap}

    def run(min_right):
        with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", min_right):
            try:
                return jitcep.compile(text, order=order, **caps).run(df, **kw)
            except ExplosionError as e:
                return str(e)
    got, after = run(0), run(1 << 62)
    assert got == after if isinstance(got, str) or isinstance(after, str) else got.equals(after)
    if not isinstance(got, str):
        assert got.equals(jitcep.compile(text, order=order).run(df, engine="reference", **{**kw, "threads": 1}))


# an AND join's predicates in its merge loop (execute.and_join_where) over the same columns: one type on both
# sides, an OR branch not taken, a negation beside the AND
WIDE_AND_PATTERNS = [
    "PATTERN AND(A a, B b) WHERE a.u <= b.u AND b.i != a.i AND a.big < b.f WITHIN 4",
    "PATTERN AND(A a, OR(B b, C c), A d) WHERE a.d <= b.t AND c.du != d.du AND a.bo = d.bo WITHIN 4",
    "PATTERN AND(A a, NOT(C n), B b) WHERE b.f >= a.f AND n.u = a.u AND abs(b.big - a.big) < 2 WITHIN 4",
]


@pytest.mark.parametrize("text", WIDE_AND_PATTERNS)
@settings(max_examples=10, deadline=None)
@given(df=event_frames(max_size=12), extra=st.data(), keyed=st.booleans(), threads=st.sampled_from([1, 2]),
       order=st.sampled_from(["position", "nondecreasing_ts"]))
def test_and_join_predicates_over_every_kind_of_column_in_the_merge_loop_equal_the_reference(
        text, df, extra, keyed, threads, order):
    from jitcep.execute import and_join_where
    df = _wide_frame(df, extra)
    q = jitcep.compile(text, order=order)
    kw = dict(type="type", partition_by="k" if keyed else None)
    # the loop's pairs, or at the root over one key partition its rows (and_join_where.rows)
    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 0), \
            mock.patch.object(and_join_where, "pairs", wraps=and_join_where.pairs) as pairs, \
            mock.patch.object(and_join_where, "rows", wraps=and_join_where.rows) as rows:
        got = q.run(df, threads=threads, **kw)
    assert got.equals(q.run(df, engine="reference", **kw))
    AND_RAN.setdefault(text, []).append(pairs.called or rows.called)


AND_RAN: dict[str, list[bool]] = {}


def test_the_and_path_ran_over_every_kind_of_column():
    """Each AND pattern above took the merge loop in some runs (else they would pass vacuously)."""
    if not AND_RAN:
        pytest.skip("the cases above did not run in this session")
    assert all(any(AND_RAN.get(text, ())) for text in WIDE_AND_PATTERNS), {t: sum(r) for t, r in AND_RAN.items()}


# AND joins and negations (their loops: execute.and_join_where, execute.negation's killed_where) under
# generated conjuncts, read in either direction, joined by AND or OR
_LOOP_SHAPES = [
    ("AND(A a, B b)", [("a", "b")]),
    ("AND(A a, A b)", [("a", "b")]),
    ("AND(A a, B b, C c)", [("a", "b"), ("b", "c"), ("a", "c")]),
    ("AND(A a, OR(B b, C c))", [("a", "b"), ("a", "c")]),
    ("AND(A a, B b, NOT(C n))", [("a", "b"), ("a", "n"), ("n", "b")]),
    ("AND(SEQ(A a, B b), C c)", [("a", "c"), ("b", "c")]),
    ("SEQ(A a, NOT(C n), OR(B b, D d))", [("a", "n"), ("n", "b"), ("n", "d")]),
    ("SEQ(OR(A a, D d), NOT(C n), B b)", [("a", "n"), ("d", "n")]),
    ("SEQ(NOT(C n), A a, B b)", [("n", "a"), ("n", "b")]),
    ("SEQ(A a, B b, NOT(C n))", [("a", "n"), ("b", "n")]),
    ("SEQ(A a, NOT(AND(C n, D m)), B b)", [("a", "n"), ("n", "m"), ("m", "b")]),
    ("SEQ(A a, NOT(C n), NOT(D m), B b)", [("a", "n"), ("m", "b")]),
]
_ONE_SIDE = ["{l}.x {c} 1", "{l}.s = 'p'", "{l}.u IS NULL", "({l}.x {c} {r}.x OR {l}.s != {r}.s)", "{l}.i + {r}.big {c} 0",
             "{l}.x % 2 {c} {r}.x", "{l}.y {c} {r}.f"]


@st.composite
def _loop_texts(draw):
    shape, pairs = draw(st.sampled_from(_LOOP_SHAPES))
    conjuncts = []
    for l, r in draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=3)):
        l, r = (r, l) if draw(st.booleans()) else (l, r)
        conjuncts.append(draw(st.sampled_from(_CONJUNCTS + _ONE_SIDE)).format(l=l, r=r, c=draw(_CMP)))
    joiner = draw(st.sampled_from([" AND ", " OR "]))
    window = draw(st.sampled_from(["WITHIN 3", "WITHIN 5", "WITHIN 4 EVENTS"]))
    return f"PATTERN {shape} WHERE {joiner.join(conjuncts)} {window}"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(text=_loop_texts(), df=event_frames(types=("A", "B", "C", "D"), max_size=20, max_step=1), extra=st.data(),
       keyed=st.booleans(), threads=st.sampled_from([1, 2]),
       order=st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       cap=st.one_of(st.none(), st.integers(1, 40)), memory=st.one_of(st.none(), st.integers(200, 5000)))
def test_generated_predicates_in_the_and_and_negation_loops_equal_the_tested_after_path_and_the_reference(
        text, df, extra, keyed, threads, order, cap, memory):
    # the loops against the paths testing after (the same caps: the same error, max_partials or
    # max_memory) and, where no cap is met, against the reference evaluator
    from jitcep.errors import JitcepError
    df = _wide_frame(df, extra)
    kw = dict(type="type", partition_by="k" if keyed else None, threads=threads)
    caps = {k: v for k, v in (("max_partials", cap), ("max_memory", memory)) if v is not None}

    def run(least):
        with mock.patch.multiple(config, JOIN_WHERE_MIN_RIGHT=least, NEG_WHERE_MIN_RECORDS=least):
            try:
                return jitcep.compile(text, order=order, **caps).run(df, **kw)
            except JitcepError as e:
                return type(e).__name__
    got, after = run(0), run(1 << 62)
    assert got == after if isinstance(got, str) or isinstance(after, str) else got.equals(after)
    if not isinstance(got, str):
        assert got.equals(jitcep.compile(text, order=order).run(df, engine="reference", **{**kw, "threads": 1}))
