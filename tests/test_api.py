"""The public API: compile (pattern inputs, option validation), Query.run (inputs, engine, shape).

Expected matches are enumerated by hand from the small tables below.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import semantic_helpers  # the module, not its names: conftest parametrises modules importing those
import jitcep
from jitcep.errors import (JitcepError, MissingColumnError, MissingWindowError, OptionError, PatternError,
                           PatternSyntaxError, UnsupportedPatternError)
from jitcep.pattern.ast import EventVar, Pattern, Seq, TimeWindow

SEQ_AB = "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10"

# rows:   0    1    2    3    4
# type:   A    B    A    B    C
# ts:     1    2    3    5    6
# x:      5    1    2    7    0
EVENTS = pl.DataFrame({"type": ["A", "B", "A", "B", "C"], "ts": [1, 2, 3, 5, 6], "x": [5, 1, 2, 7, 0]})
# SEQ(A a, B b) with a.x < b.x within 10: (0,3) 5<7, (2,3) 2<7; (0,1) 5<1 no; (2,1) wrong order.
EXPECTED_AB = {(0, 3), (2, 3)}


def pairs(out: pl.DataFrame, a="a", b="b") -> set[tuple[int, int]]:
    return set(zip(out[a].struct.field("row").to_list(), out[b].struct.field("row").to_list()))


class Builder:
    """A minimal builder: anything with .build() returning a Pattern is accepted."""

    def build(self) -> Pattern:
        return Pattern(Seq((EventVar("a", ("A",)), EventVar("c", ("C",)))), window=TimeWindow(10))


# --- compile ------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    (dict(strategy="skip_till_whatever"), "strategy"),
    (dict(order="random"), "order"),
    (dict(output="some"), "output"),
    (dict(kleene="greedy"), "kleene"),
    (dict(max_matches=0), "max_matches"),
    (dict(max_kleene=-3), "max_kleene"),
    (dict(windoww=3), "unknown option"),
])
def test_bad_options_are_option_errors(options, message):
    with pytest.raises(OptionError, match=message):
        jitcep.compile(SEQ_AB, **options)


def test_option_error_is_a_jitcep_error_and_a_value_error():
    with pytest.raises(JitcepError):
        jitcep.compile(SEQ_AB, strategy="nope")
    with pytest.raises(ValueError):
        jitcep.compile(SEQ_AB, strategy="nope")


def test_options_are_recorded():
    q = jitcep.compile(SEQ_AB, strategy="skip_till_next_match", order="strict_ts", consume_types=["A"])
    assert q.options.strategy == "skip_till_next_match"
    assert q.options.order == "strict_ts"
    assert q.options.consume_types == ("A",)


def test_several_patterns_from_text_list_pattern_and_builder():
    p = Builder().build()
    q = jitcep.compile([SEQ_AB + "; PATTERN SEQ(B b, C c) WITHIN 3", p, Builder()])
    assert len(q.patterns) == 4
    assert q.patterns[2] == p and q.patterns[3] == p
    assert all(isinstance(x, Pattern) for x in q.patterns)


def test_builder_and_text_give_the_same_query():
    assert jitcep.compile(Builder()).patterns == jitcep.compile("PATTERN SEQ(A a, C c) WITHIN 10").patterns


@pytest.mark.parametrize("bad", [42, None, [], [[SEQ_AB]]])
def test_not_a_pattern(bad):
    with pytest.raises(PatternError):
        jitcep.compile(bad)


def test_builder_returning_something_else():
    class Odd:
        def build(self):
            return "PATTERN SEQ(A a) WITHIN 1"

    with pytest.raises(PatternError, match="build"):
        jitcep.compile(Odd())


def test_syntax_and_validation_errors_surface_at_compile():
    with pytest.raises(PatternSyntaxError) as e:
        jitcep.compile("PATTERN SEQ(A a, B b WITHIN 10")
    assert e.value.line == 1
    with pytest.raises(MissingWindowError):
        jitcep.compile("PATTERN SEQ(A a, B b)")


def test_query_is_immutable_and_shows_canonical_text():
    q = jitcep.compile(SEQ_AB, strategy="skip_till_next_match")
    with pytest.raises(AttributeError):
        q.options = None
    r = repr(q)
    assert r.startswith("jitcep.compile(") and "SEQ(A a, B b)" in r
    assert "strategy='skip_till_next_match'" in r and "order=" not in r
    # the canonical text compiles back to the same patterns
    assert jitcep.compile(q.text()).patterns == q.patterns


# --- run ----------------------------------------------------------------------


def test_run_finds_the_hand_enumerated_matches():
    out = jitcep.compile(SEQ_AB).run(EVENTS, type="type")
    assert out.columns == ["match_id", "a", "b"]
    assert pairs(out) == EXPECTED_AB
    assert sorted(out["match_id"].to_list()) == list(range(len(EXPECTED_AB)))
    assert out.schema["a"] == pl.Struct({"row": pl.Int64, "ts": pl.Int64, "x": pl.Int64})


def test_unsorted_input_reports_input_row_numbers():
    shuffled = EVENTS[[3, 0, 4, 2, 1]]  # new row k holds old row [3,0,4,2,1][k]
    out = jitcep.compile(SEQ_AB).run(shuffled, type="type")
    old_to_new = {3: 0, 0: 1, 4: 2, 2: 3, 1: 4}
    assert pairs(out) == {(old_to_new[a], old_to_new[b]) for a, b in EXPECTED_AB}


def test_several_patterns_get_a_pattern_column():
    q = jitcep.compile([SEQ_AB, "PATTERN SEQ(B b, C c) WITHIN 3"])
    out = q.run(EVENTS, type="type")
    assert out.columns[:2] == ["match_id", "pattern"]
    p0 = out.filter(pl.col("pattern") == 0)
    p1 = out.filter(pl.col("pattern") == 1)
    assert pairs(p0) == EXPECTED_AB
    # SEQ(B b, C c) within 3: (3,4) ts 5..6; (1,4) spans 2..6 > 3
    assert pairs(p1, "b", "c") == {(3, 4)}
    assert out["match_id"].to_list() == list(range(out.height))


SHARED = pl.DataFrame({"type": ["A", "B", "A", "B"], "ts": [1, 2, 3, 4], "x": [1, 2, 3, 4],
                       "s": ["p", "q", "r", "t"], "f": [True, False, True, False]})


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_return_name_of_numbers_in_two_patterns_is_one_float_column(engine):
    q = jitcep.compile(["PATTERN SEQ(A a, B b) WITHIN 1 RETURN a.x AS v",
                        "PATTERN SEQ(B b, A a) WITHIN 1 RETURN b.x * 0.5 AS v"])
    out = q.run(SHARED, type="type", engine=engine)
    # pattern 0: (A1, B2) (A3, B4) give a.x = 1, 3; pattern 1: (B2, A3) gives b.x * 0.5 = 1.0 (semantics
    # section 10)
    assert out.schema["v"] == pl.Float64
    assert list(zip(out["pattern"], out["v"])) == [(0, 1.0), (0, 3.0), (1, 1.0)]
    assert jitcep.output_schema(q, SHARED.schema, type="type")["v"] == pl.Float64


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("first, second, kinds", [
    ("a.s", "a.x", "String in pattern 0 and Int64 in pattern 1"),
    ("a.f", "a.x", "Boolean in pattern 0 and Int64 in pattern 1"),
    ("a.x > 1", "a.s", "Boolean in pattern 0 and String in pattern 1"),
    ("a.x", "a.s = 'p'", "Int64 in pattern 0 and Boolean in pattern 1"),
])
def test_a_return_name_of_values_of_two_kinds_is_an_error_not_a_conversion(engine, first, second, kinds):
    # Polars' relaxed concatenation would make the numbers strings ("1") or the Booleans numbers
    q = jitcep.compile([f"PATTERN SEQ(A a, B b) WITHIN 10 RETURN {first} AS v",
                        f"PATTERN SEQ(A a, B b) WITHIN 10 RETURN {second} AS v"])
    with pytest.raises(UnsupportedPatternError, match=f"RETURN 'v' is {kinds}"):
        q.run(SHARED, type="type", engine=engine)
    with pytest.raises(UnsupportedPatternError, match="RETURN 'v'"):
        jitcep.output_schema(q, SHARED.schema, type="type")


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_variable_in_one_pattern_and_a_return_name_in_another_is_an_error(engine):
    # the struct column of variable v and pattern 0's number cannot share a column (it was Polars'
    # InvalidOperationError from the concatenation)
    q = jitcep.compile(["PATTERN SEQ(A a, B b) WITHIN 10 RETURN a.x AS v", "PATTERN SEQ(A v, B b) WITHIN 10"])
    with pytest.raises(UnsupportedPatternError, match="'v' is a variable in one pattern and a RETURN name"):
        q.run(SHARED, type="type", engine=engine)


@pytest.mark.parametrize("kind", ["lazy", "pandas", "arrow", "parquet", "csv"])
def test_every_input_kind_gives_the_same_result(kind, tmp_path):
    if kind == "lazy":
        src = EVENTS.lazy()
    elif kind == "pandas":
        pytest.importorskip("pandas")
        src = EVENTS.to_pandas()
    elif kind == "arrow":
        src = EVENTS.to_arrow()
    else:
        src = str(tmp_path / f"events.{kind}")
        getattr(EVENTS, f"write_{kind}")(src)
    q = jitcep.compile(SEQ_AB)
    assert q.run(src, type="type").equals(q.run(EVENTS, type="type"))


@pytest.mark.parametrize("returns", ["", "RETURN a"])
def test_input_is_read_once(returns):
    # a LazyFrame whose every collection runs this function once: the events and the
    # output values must come from one read (also when RETURN a outputs every column)
    calls = []

    def count(df):
        calls.append(df.height)
        return df

    wide = EVENTS.with_columns(y=pl.col("x") * 10)
    lazy = wide.lazy().map_batches(count, schema=wide.schema)
    q = jitcep.compile(SEQ_AB + " " + returns)
    out = q.run(lazy, type="type")
    assert calls == [5]
    assert pairs(out) == EXPECTED_AB
    assert ("y" in out.schema["a"].to_schema()) == bool(returns)
    if returns:
        assert sorted(r["y"] for r in out["a"].to_list()) == [20, 50]


def test_missing_columns_are_named_before_anything_is_read():
    calls = []
    lazy = EVENTS.lazy().map_batches(lambda df: calls.append(1) or df, schema=EVENTS.schema)
    for text, what in [("PATTERN SEQ(A a, B b) WHERE a.price > 1 WITHIN 10 RETURN a", "attribute 'price'"),
                       (SEQ_AB, "type column 'kind'")]:
        with pytest.raises(MissingColumnError, match=what):
            jitcep.compile(text).run(lazy, type="kind" if "kind" in what else "type")
    with pytest.raises(MissingColumnError, match="partition_by column 'g'"):
        jitcep.compile(SEQ_AB).run(lazy, type="type", partition_by="g")
    assert calls == []


def test_datetime_time_column_stays_datetime():
    df = EVENTS.select("type", (pl.datetime(2024, 1, 1) + pl.duration(minutes=pl.col("ts"))).alias("time"), "x")
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10 minutes")
    out = q.run(df, time="time", type="type")
    assert out.schema["a"].to_schema()["ts"] == pl.Datetime("us")
    assert pairs(out) == EXPECTED_AB
    assert out.row(0, named=True)["b"]["ts"] == dt.datetime(2024, 1, 1, 0, 5)


@pytest.mark.parametrize("kwargs, error", [
    (dict(shape="tall"), OptionError),
    (dict(engine="turbo"), OptionError),
    (dict(time_unit="fortnight"), OptionError),
    (dict(time="when"), MissingColumnError),
])
def test_bad_run_arguments(kwargs, error):
    with pytest.raises(error):
        jitcep.compile(SEQ_AB).run(EVENTS, type="type", **kwargs)


@pytest.mark.parametrize("threads", [0, True, 1.0, -2])
def test_bad_run_arguments_are_refused_on_every_run(threads):
    """The checked arguments are kept per values and types (query._run_arguments): a refused one is
    refused again, and ``True`` is not taken for the ``1`` a run before passed."""
    q = jitcep.compile(SEQ_AB)
    assert pairs(q.run(EVENTS, type="type", threads=1)) == EXPECTED_AB
    for _ in range(2):
        with pytest.raises(OptionError, match="threads must be a positive integer"):
            q.run(EVENTS, type="type", threads=threads)


def test_default_threads_follow_the_affinity_of_each_run(monkeypatch):
    """``threads=None`` is the cores the process may run on at each run, not at the first."""
    from jitcep import query

    seen = []
    for cores in (1, 3):
        monkeypatch.setattr(query, "available", lambda: cores)
        seen.append(query._run_arguments(time="ts", type="type", time_unit=None, partition_by=None,
                                         engine="compiled", shape="wide", time_format=None, threads=None)["threads"])
    assert seen == [1, 3]


NEG_AB = "PATTERN SEQ(A a, !C c, B b) WITHIN 10"  # (0,1), (0,3), (2,3): the only C comes after every B
# the compiled engine covers every pattern; these two it refuses past DNF_MAX_ALTERNATIVES = 1 (the
# `uncovered` fixture): an OR branch that may bind nothing is planned as 2 alternatives.  The same pairs,
# c = () (no D or E events)
UNCOVERED_AB = "PATTERN SEQ(A a, OR(D* c[], E e), B b) WITHIN 10"
KLEENE_AK = "PATTERN SEQ(A a, B+ k[], OR(D* d[], E e)) WITHIN 10"


@pytest.fixture
def uncovered(monkeypatch):
    """UNCOVERED_AB and KLEENE_AK refused by the compiled engine: the fallback is a safety net no
    pattern the semantics defines reaches under the default limits (tests/test_generated_corpus.py)."""
    from jitcep import config

    monkeypatch.setattr(config, "DNF_MAX_ALTERNATIVES", 1)


@pytest.fixture
def spies(monkeypatch):
    """Record which patterns reach each engine (the real engines still run)."""
    from jitcep import reference, runtime

    calls = {"compiled": [], "reference": []}

    def spy(name, real):
        def evaluate(patterns, table, options, *a, **k):
            calls[name].append([p for p in ([patterns] if isinstance(patterns, Pattern) else patterns)])
            return real(patterns, table, options, *a, **k)
        return evaluate

    monkeypatch.setattr(runtime, "evaluate", spy("compiled", runtime.evaluate))
    monkeypatch.setattr(reference, "evaluate", spy("reference", reference.evaluate))
    return calls


def test_compiled_is_the_default_engine(spies):
    import inspect
    import warnings

    assert inspect.signature(jitcep.Query.run).parameters["engine"].default == "compiled"
    q = jitcep.compile(SEQ_AB)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a covered pattern does not warn
        out = q.run(EVENTS, type="type")
    assert pairs(out) == EXPECTED_AB
    assert spies == {"compiled": [list(q.patterns)], "reference": []}


def test_uncovered_pattern_falls_back_to_the_reference_with_a_warning(spies, uncovered):
    q = jitcep.compile(UNCOVERED_AB)
    with pytest.warns(jitcep.FallbackWarning, match="DNF_MAX_ALTERNATIVES.*reference evaluator") as record:
        out = q.run(EVENTS, type="type")
    assert record[0].filename == __file__  # the warning names the caller's line
    assert pairs(out) == {(0, 1), (0, 3), (2, 3)}
    assert spies == {"compiled": [], "reference": [list(q.patterns)]}
    assert out.equals(q.run(EVENTS, type="type", engine="reference"))


def test_several_patterns_fall_back_one_by_one(spies, uncovered):
    q = jitcep.compile([SEQ_AB, UNCOVERED_AB, KLEENE_AK])
    with pytest.warns(jitcep.FallbackWarning) as record:
        out = q.run(EVENTS, type="type")
    assert len(record) == 1
    text = str(record[0].message)
    assert "pattern 1: " in text and "pattern 2: " in text and "DNF_MAX_ALTERNATIVES" in text
    assert "pattern 0" not in text
    p0, p1, p2 = q.patterns
    assert spies["compiled"] == [[p0]] and spies["reference"] == [[p1, p2]]
    assert out.equals(q.run(EVENTS, type="type", engine="reference"))
    assert out["pattern"].to_list() == [0, 0, 1, 1, 1, 2, 2, 2, 2]


def test_one_reason_falls_back_for_every_pattern(spies, uncovered):
    # closures that may all be empty where nothing else binds: 2 alternatives each, past the limit
    q = jitcep.compile(["PATTERN SEQ(B* b[], C* c[]) WITHIN 10",
                        "PATTERN SEQ(B* b[], C* c[]) WHERE count(b) > 0 WITHIN 10"],
                       strategy="skip_till_next_match")
    with pytest.warns(jitcep.FallbackWarning, match=r"patterns 0, 1: .*DNF_MAX_ALTERNATIVES=1.*they run"):
        out = q.run(EVENTS, type="type")
    assert spies["compiled"] == []
    assert out.equals(q.run(EVENTS, type="type", engine="reference"))


def test_auto_engine_falls_back_silently(spies, uncovered):
    import warnings

    q = jitcep.compile([SEQ_AB, UNCOVERED_AB])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = q.run(EVENTS, type="type", engine="auto")
    assert spies["compiled"] == [[q.patterns[0]]] and spies["reference"] == [[q.patterns[1]]]
    assert out.equals(q.run(EVENTS, type="type", engine="reference"))


def test_a_refusal_met_only_at_run_time_falls_back(monkeypatch):
    from jitcep import runtime
    from jitcep.errors import UnsupportedPatternError

    def refuse(*a, **k):
        raise UnsupportedPatternError("the compiled engine cannot read this column yet")

    monkeypatch.setattr(runtime, "evaluate", refuse)
    q = jitcep.compile(SEQ_AB)
    with pytest.warns(jitcep.FallbackWarning, match="cannot read this column"):
        assert pairs(q.run(EVENTS, type="type")) == EXPECTED_AB


@pytest.mark.parametrize("engine", ["reference", "compiled", "auto"])
def test_max_matches_bounds_the_total_over_both_engines(engine):
    q = jitcep.compile([SEQ_AB, NEG_AB], max_matches=4)  # 2 + 3 matches, each alone under the cap
    with pytest.raises(jitcep.ExplosionError):
        q.run(EVENTS, type="type", engine=engine)
    assert jitcep.compile([SEQ_AB, NEG_AB], max_matches=5).run(EVENTS, type="type", engine="auto").height == 5


def test_fallback_warning_is_a_user_warning_not_an_error():
    assert issubclass(jitcep.FallbackWarning, UserWarning)
    assert not issubclass(jitcep.FallbackWarning, JitcepError)


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_output_schema_equals_run_schema_with_and_without_matches(shape):
    q = jitcep.compile([SEQ_AB, "PATTERN SEQ(B b, C c) WITHIN 3 RETURN b.x AS bx"])
    expected = jitcep.output_schema(q, EVENTS.schema, type="type", shape=shape)
    assert q.run(EVENTS, type="type", shape=shape).schema == expected
    none = EVENTS.filter(pl.col("type") == "Z")
    assert q.run(none, type="type", shape=shape).schema == expected


def test_or_branch_not_taken_gives_a_null_list_and_zero_iterations_an_empty_one():
    # rows: 0 A, 1 C, 2 A, 3 B; within 3 the matches are a=0 with b=[] ; c=1 ;
    # a=2 with b=[] and with b=[3]  (skip-till-any-match, every subset of the B's)
    df = pl.DataFrame({"type": ["A", "C", "A", "B"], "ts": [10, 11, 14, 15]})
    q = jitcep.compile("PATTERN OR(SEQ(A a, B* b[]), C c) WITHIN 3")
    out = q.run(df, type="type")
    got = {(r["a"] and r["a"]["row"], None if r["b"] is None else tuple(m["row"] for m in r["b"]),
            r["c"] and r["c"]["row"]) for r in out.iter_rows(named=True)}
    assert out.height == 4
    assert got == {(0, (), None), (None, None, 1), (2, (), None), (2, (3,), None)}
    by_c = out.filter(pl.col("c").is_not_null())
    assert by_c["b"].to_list() == [None]
    assert out.filter(pl.col("a").is_not_null())["b"].list.len().sort().to_list() == [0, 0, 1]
    long = q.run(df, type="type", shape="long")
    assert long.filter(pl.col("variable") == "b")["row"].to_list() == [3]


def test_kleene_and_group_iterations_may_share_events():
    # semantics §3 exception: KL(AND(A a, B b)){2} over A0 B1 B2 -> the two body
    # matches (0,1), (0,2) share event 0; KL(SEQ(..)){2} has disjoint iterations: none.
    df = pl.DataFrame({"type": ["A", "B", "B"], "ts": [1, 2, 3]})
    out = jitcep.compile("PATTERN KL(AND(A a, B b)){2} WITHIN 10").run(df, type="type")
    rows = out.select(pl.col(v).list.eval(pl.element().struct.field("row")) for v in ("a", "b")).rows()
    assert rows == [([0, 0], [1, 2])]
    assert jitcep.compile("PATTERN KL(SEQ(A a, B b)){2} WITHIN 10").run(df, type="type").height == 0


MISPLACED = ("PATTERN SEQ(SHELF-READING x, SHELF-READING y, !(ANY(COUNTER-READING, SHELF-READING) z)) "
             "WHERE [id] AND x.shelf_id != y.shelf_id AND {cond} WITHIN 10")


def test_negated_event_with_a_null_attribute_does_not_kill():
    # semantics §4: SASE's misplaced-inventory query, where the counter reading has no shelf_id.
    # rows: 0 shelf 1, 1 shelf 2, 2 counter (shelf_id null), 3 shelf 3; all one item.
    df = pl.DataFrame({"type": ["SHELF-READING", "SHELF-READING", "COUNTER-READING", "SHELF-READING"],
                       "ts": [1, 2, 3, 4], "id": [7] * 4, "shelf_id": [1, 2, None, 3]})
    # x.shelf_id = z.shelf_id is NULL for the counter reading: no kill, (0,1) survives
    plain = jitcep.compile(MISPLACED.format(cond="x.shelf_id = z.shelf_id")).run(df, type="type")
    assert pairs(plain, "x", "y") == {(0, 1), (0, 3), (1, 3)}
    # SASE's intent written out: the counter reading (null shelf_id) kills (0,1)
    explicit = jitcep.compile(MISPLACED.format(cond="(x.shelf_id = z.shelf_id OR z.shelf_id IS NULL)"))
    assert pairs(explicit.run(df, type="type"), "x", "y") == {(0, 3), (1, 3)}


def _per_stream(df: pl.DataFrame, text: str, key: list[str], **options) -> set[tuple]:
    """Oracle for partition_by: run each group_by group (nulls included) as its own input."""
    q = jitcep.compile(text, **options)
    got = set()
    for _, sub in df.with_row_index("input_row").group_by(key, maintain_order=True):
        out = q.run(sub.drop("input_row"), type="type", engine="reference")
        rows = sub["input_row"].to_list()
        got |= {tuple(rows[r["row"]] for r in (m["a"], m["b"])) for m in out.iter_rows(named=True)}
    return got


# rows:   0    1    2    3    4    5    6    7
# type:   A    B    A    C    B    A    B    B
# k:      x    y   null  x   null null  x    y
PARTITIONED = pl.DataFrame({"type": ["A", "B", "A", "C", "B", "A", "B", "B"], "ts": list(range(8)),
                            "k": ["x", "y", None, "x", None, None, "x", "y"]})


@pytest.mark.parametrize("text, options, expected", [
    # null is a stream of its own: (2,4) pairs two null-key rows; (0,1) and (2,1) mix keys: never
    ("PATTERN SEQ(A a, B b) WITHIN 10", {}, {(0, 6), (2, 4)}),
    # negation sees only the stream: the C at row 3 (key x) kills (0,6) only
    ("PATTERN SEQ(A a, !C c, B b) WITHIN 10", {}, {(2, 4)}),
    # a count window counts the stream's events: x = rows 0, 3, 6 -> a, b 3 apart in the stream
    ("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", {}, {(0, 6), (2, 4)}),
    ("PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", {}, {(2, 4)}),
    # strict contiguity within the stream: null = rows 2, 4, 5 -> (2,4) adjacent there
    ("PATTERN SEQ(A a, B b) WITHIN 10", {"strategy": "strict_contiguity"}, {(2, 4)}),
])
def test_partition_by_evaluates_each_key_value_as_its_own_stream(engine, text, options, expected):
    q = jitcep.compile(text, **options)
    # on compiled: the per-stream split for covered patterns, a warned fallback for the rest
    out = semantic_helpers.run_checked(q, PARTITIONED, engine, type="type", partition_by="k")
    got = {(m["a"]["row"], m["b"]["row"]) for m in out.iter_rows(named=True)}
    assert got == expected == _per_stream(PARTITIONED, text, ["k"], **options)
    assert out["match_id"].to_list() == list(range(out.height))


def test_partition_by_null_key_differs_from_equivalence_test():
    # [k] is a predicate: a null key matches nothing, so only (0,6) is left
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10")
    assert pairs(q.run(PARTITIONED, type="type")) == {(0, 6)}
    assert pairs(q.run(PARTITIONED, type="type", partition_by="k")) == {(0, 6)}
    # and without the test every pair is found when nothing partitions
    assert len(jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10").run(PARTITIONED, type="type")) == 9


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ABC"), st.integers(0, 5), st.sampled_from(["x", "y", None]),
                          st.sampled_from([1, None])), max_size=14))
def test_partition_by_agrees_with_running_each_group_by_group(rows):
    df = pl.DataFrame({"type": [r[0] for r in rows], "ts": pl.Series([r[1] for r in rows], dtype=pl.Int64),
                       "k": pl.Series([r[2] for r in rows], dtype=pl.String),
                       "j": pl.Series([r[3] for r in rows], dtype=pl.Int64)})
    # compiled in one call over the streams (engine="auto" runs the reference for whatever it refuses)
    cases = [("PATTERN SEQ(A a, B b) WITHIN 4 EVENTS", {}), ("PATTERN AND(A a, B b) WITHIN 2", {}),
             ("PATTERN SEQ(A a, !C c, B b) WITHIN 4 EVENTS", {}),
             ("PATTERN SEQ(A a, B b) WITHIN 4 EVENTS", {"output": "non_overlapping"})]
    for text, opts in cases:
        out = jitcep.compile(text, **opts).run(df, type="type", partition_by=["k", "j"], engine="auto")
        got = {(m["a"]["row"], m["b"]["row"]) for m in out.iter_rows(named=True)}
        assert got == _per_stream(df, text, ["k", "j"], **opts)


def test_long_shape_rows():
    out = jitcep.compile(SEQ_AB).run(EVENTS, type="type", shape="long")
    assert out.columns == ["match_id", "variable", "index", "row", "ts", "x"]
    got = {}
    for m, v, r in out.select("match_id", "variable", "row").rows():
        got.setdefault(m, {})[v] = r
    assert {(d["a"], d["b"]) for d in got.values()} == EXPECTED_AB


def test_ts_and_type_pseudo_attributes_against_input_columns():
    # docs/semantics.md section 4: a.ts is always the time column; a column called "type" that is
    # not the type column is what a.type reads (the papers' SASE examples rely on that)
    df = pl.DataFrame({"t": [0, 1], "kind": ["A", "B"], "type": ["x", "y"], "ts": [5, 6]})
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.type = 'x' AND b.ts = 1 WITHIN 10")
    out = q.run(df, time="t", type="kind")
    assert out["a"].struct.field("row").to_list() == [0] and out["b"].struct.field("row").to_list() == [1]
    assert jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.type = 'A' WITHIN 10").run(
        df, time="t", type="kind").height == 0


def test_a_pattern_checked_once_is_checked_again_under_other_tuning(monkeypatch):
    # check_supported keeps a pattern's pass per options and tuning constants: DNF_MAX_ALTERNATIVES read by
    # the rules, set after a first check, refuses the pattern as it refuses a fresh copy of it
    from jitcep import config, runtime
    from jitcep.pattern.parser import parse

    kept, fresh = parse(UNCOVERED_AB), parse(UNCOVERED_AB)
    options = jitcep.compile(UNCOVERED_AB).options
    runtime.check_supported(kept, options)
    monkeypatch.setattr(config, "DNF_MAX_ALTERNATIVES", 1)
    for p in (fresh, kept):
        with pytest.raises(jitcep.UnsupportedPatternError):
            runtime.check_supported(p, options)
