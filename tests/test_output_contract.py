"""The output contract end to end: ``output_schema`` against ``Query.run``'s schema, several patterns'
shared names, and inputs of unusual shapes (semantics §10, §12; jitcep.output's module docstring).

The oracle is the run itself where the contract is an equality (``output_schema(q, df.schema)`` is
``q.run(df).schema``; an input a run refuses raises the same named error from ``output_schema``), the
reference evaluator where matches are compared, and hand-enumerated rows elsewhere.
"""

from __future__ import annotations

import datetime as dt
import warnings

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep.errors import AttributeTypeError, JitcepError, TimestampError, UnsupportedPatternError

warnings.simplefilter("ignore", jitcep.FallbackWarning)


def _empty_run(q, schema, **kw):
    """``q.run`` on a frame of ``schema`` with no rows: its schema, or the named error it raises."""
    try:
        return q.run(pl.DataFrame(schema=schema), **kw).schema
    except JitcepError as e:
        return e


@pytest.mark.parametrize("ret, dtype", [
    ("-a.x", pl.String), ("a.x + 1", pl.String), ("a.x * b.x", pl.Categorical()), ("a.x + 1", pl.Duration("us")),
    ("a.x > 1", pl.String), ("a.x / 2", pl.Boolean), ("abs(a.x)", pl.Date), ("-a.x", pl.List(pl.Int64)),
    ("a.x", pl.Struct({"u": pl.Int64})), ("a.x = 'p'", pl.Int32)])
def test_output_schema_raises_the_runs_named_error_for_what_a_run_refuses(ret, dtype):
    # a run type-checks the RETURN items and refuses a column jitcep cannot read, on any number of rows;
    # output_schema (the Spark adapter's result schema) met Polars' InvalidOperationError instead
    q = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 5 RETURN {ret} AS r")
    schema = {"ts": pl.Int64, "type": pl.String, "x": dtype}
    want = _empty_run(q, schema, type="type")
    assert isinstance(want, AttributeTypeError)
    with pytest.raises(AttributeTypeError) as got:
        jitcep.output_schema(q, schema, type="type")
    assert str(got.value) == str(want)


def test_output_schema_raises_the_runs_error_for_a_type_column_of_another_dtype():
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5")
    schema = {"ts": pl.Int64, "type": pl.Float64}
    want = _empty_run(q, schema, type="type")
    assert isinstance(want, AttributeTypeError)
    with pytest.raises(AttributeTypeError, match="type column"):
        jitcep.output_schema(q, schema, type="type")


# --- RETURN conditions: the value WHERE gives them (semantics §4) ----------------------------------------

# one (A, B) pair per match: A at ts 10k, B at 10k + 1, WITHIN 1
_BIG = 2**53 + 1  # not a float64: 2**53 + 1 = 2**53 as a float would be a wrong answer
_PAIRS = [  # (a.i, a.f, a.s, b.i, b.f)
    (1, 1.0, "p", 2, 2.5), (2, 2.5, "q", 1, 1.0), (None, None, None, None, None), (_BIG, float(2**53), "r", 3, 1.5),
    (-5, -5.0, None, _BIG, float(2**53)), (3, 1.5, "p", 2**62, 2.0**62), (0, 0.0, "q", None, 0.5),
    # NaN compares FALSE with everything, itself too, and != TRUE (semantics §4; Polars orders it last)
    (7, float("nan"), "p", 1, float("nan")), (8, 2.5, "q", 2, float("nan")), (None, float("nan"), "r", 3, None)]


def _pairs_frame() -> pl.DataFrame:
    rows = [r for k, (ai, af, as_, bi, bf) in enumerate(_PAIRS)
            for r in (("A", 10 * k, ai, af, as_), ("B", 10 * k + 1, bi, bf, None))]
    return pl.DataFrame(rows, schema={"type": pl.String, "ts": pl.Int64, "i": pl.Int64, "f": pl.Float64,
                                      "s": pl.String}, orient="row")


def _kept(cond: str) -> set[int]:
    """The A rows of the matches the reference evaluator keeps under ``WHERE cond``."""
    out = jitcep.compile(f"PATTERN SEQ(A a, B b) WHERE {cond} WITHIN 1").run(
        _pairs_frame(), type="type", engine="reference")
    return set(out["a"].struct.field("row").to_list())


@pytest.mark.parametrize("cond", [
    "a.f IN (1, 2)", "a.f IN (1, 2.5)", "a.i IN (1.0, 2)", "a.i IN (1.5, -5)", "a.i NOT IN (1.5, 2)",
    "a.i IN (1, NULL)", "a.i NOT IN (1, NULL)", "a.f IN (NULL)", "a.s IN ('p', NULL)", "a.s NOT IN ('q')",
    "a.i IN (9007199254740992.0)", "a.i = b.f", "a.i != b.f", "a.i < b.f", "a.i <= b.f", "a.f > b.i",
    "a.f >= b.i", "b.i = a.f", "a.i = 9007199254740992.0", "b.f = a.i", "a.i + 0.0 = b.f", "a.f = a.f",
    "a.f != a.f", "a.f > 1", "a.f <= 1000", "a.f IN (2.5, 1)", "a.f NOT IN (2.5)", "a.f != b.f", "a.f - b.f > 0",
    "a.i = b.i", "a.f < b.f", "a.i = 1 OR a.f IN (2.5)", "NOT (a.i IN (1.0))"])
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_a_return_condition_is_what_where_finds(cond, engine):
    # RETURN cond is TRUE on the matches WHERE cond keeps, FALSE on those WHERE NOT (cond) keeps and NULL on
    # the rest (three-valued logic, semantics §4: IN is `=` with each listed value; an int and a float
    # compare by their exact values)
    true, false = _kept(cond), _kept(f"NOT ({cond})")
    assert not true & false
    out = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 1 RETURN {cond} AS r").run(
        _pairs_frame(), type="type", engine=engine)
    got = dict(zip(out["a"].struct.field("row").to_list(), out["r"].to_list()))
    assert len(got) == len(_PAIRS)
    want = {row: True if row in true else False if row in false else None for row in got}
    assert got == want


_E = pl.Enum(["z", "y", "x"])  # categories not in text order
_TEXT_TIMES = pl.DataFrame({
    "ts": [1, 2, 3, 4, 5, 6], "type": ["A", "B", "B", "A", "B", "B"],
    "e": pl.Series(["x", "y", "z", "x", None, "y"], dtype=_E),
    "c": pl.Series(["x", "y", "z", "w", "x", None], dtype=pl.Categorical()),
    "s": ["x", "x", "z", "a", "y", None],
    "tz": pl.Series([dt.datetime(2020, 1, 1, h) for h in (9, 9, 10, 11, 0, 9)]).dt.replace_time_zone("UTC"),
    "tz2": pl.Series([dt.datetime(2020, 1, 1, h) for h in (18, 9, 19, 20, 9, 0)], dtype=pl.Datetime("ns"))
    .dt.replace_time_zone("Asia/Tokyo")})


def _match_keys(out: pl.DataFrame) -> list:
    rows = pl.col("b").list.eval(pl.element().struct.field("row")) if out.schema["b"] == pl.List else \
        pl.col("b").struct.field("row")
    return [(a, tuple(b) if isinstance(b, list) else b)
            for a, b in out.select(pl.col("a").struct.field("row").alias("a"), rows.alias("b")).rows()]


@pytest.mark.parametrize("body, cond", [
    ("SEQ(A a, B b)", c) for c in ("a.e = b.c", "a.c = b.e", "a.e < b.s", "a.e >= b.e", "a.e < 'y'", "a.e = 'w'",
                                   "a.e IN ('x', 'w')", "a.c > b.s", "a.c = b.c", "a.tz = b.tz2", "a.tz < b.tz2",
                                   "a.tz2 >= b.tz", "a.tz = b.tz")] + [
    ("SEQ(A a, B+ b[])", c) for c in ("min(b.e) = 'x'", "max(b.e) = 'z'", "min(b.e) < a.e", "b[1].e > b[2].e",
                                      "max(b.c) = 'z'", "b[len].e = a.c", "max(b.tz2) > a.tz")])
def test_a_return_condition_over_strings_and_instants_is_what_where_finds(body, cond):
    # strings compare by their text whatever their dtype (an Enum's categories are not in text order);
    # instants in two time zones compare as instants (semantics §4); Polars raised SchemaError /
    # InvalidOperationError on Enum vs Categorical/String and on two zones, and ordered an Enum by category
    def kept(c):
        return set(_match_keys(jitcep.compile(f"PATTERN {body} WHERE {c} WITHIN 3").run(
            _TEXT_TIMES, type="type", engine="reference")))
    true, false = kept(cond), kept(f"NOT ({cond})")
    out = jitcep.compile(f"PATTERN {body} WITHIN 3 RETURN {cond} AS r").run(_TEXT_TIMES, type="type")
    got = dict(zip(_match_keys(out), out["r"].to_list()))
    assert true | false <= set(got) and len(got) == out.height > 3
    assert got == {k: True if k in true else False if k in false else None for k in got}


@pytest.mark.parametrize("dtype", [pl.Enum(["z", "y", "x", "q"]), pl.Categorical()])
def test_min_and_max_of_an_enum_are_by_text_and_keep_the_dtype(dtype):
    # the list [x, y, z] of an Enum ordered z < y < x, or of a Categorical whose categories come in order of
    # first appearance (q, x, z, y): min 'x', max 'z' (strings, semantics §4)
    out = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WITHIN 3 RETURN min(b.e), max(b.e)").run(
        _TEXT_TIMES.with_columns(e=pl.Series(["q", "x", "z", "q", "y", "q"], dtype=dtype)), type="type")
    assert out.schema["min_b_e"] == out.schema["max_b_e"] == dtype
    got = {tuple(k[1]): r for k, r in zip(_match_keys(out), out.select("min_b_e", "max_b_e").rows())}
    assert got == {(1,): ("x", "x"), (1, 2): ("x", "z"), (2,): ("z", "z"), (4,): ("y", "y"), (4, 5): ("q", "y"),
                   (5,): ("q", "q")}


# --- names the output's own columns use ------------------------------------------------------------------

_ABAB = {"ts": [1, 2, 3, 4], "type": ["A", "B", "A", "B"]}


@pytest.mark.parametrize("text, kw, cols, name", [
    # an untyped variable's struct carries the type column beside its row and ts fields
    ("PATTERN SEQ(* a, B b) WITHIN 5", dict(type="row"), {"ts": [1, 2, 3, 4], "row": ["A", "B", "A", "B"]}, "row"),
    ("PATTERN SEQ(ANY(A, B) a, B b) WITHIN 5", dict(type="ts", time="t"),
     {"t": [1, 2, 3, 4], "ts": ["A", "B", "A", "B"]}, "ts"),
    # the long shape's columns beside the events' fields (an attribute, the type field)
    ("PATTERN SEQ(A a, B b) WHERE a.index > 0 WITHIN 5", dict(type="type", shape="long"),
     {**_ABAB, "index": [1, 2, 3, 4]}, "index"),
    ("PATTERN SEQ(A a, B+ b[]) WHERE b[i].variable = 'p' WITHIN 5", dict(type="type", shape="long"),
     {**_ABAB, "variable": ["p"] * 4}, "variable"),
    ("PATTERN SEQ(A a, B b) WITHIN 5 RETURN a", dict(type="type", shape="long"),
     {**_ABAB, "match_id": [0] * 4}, "match_id"),
    ("PATTERN SEQ(A a, B b) WHERE a.`pattern` = 1 WITHIN 5; PATTERN SEQ(B a, A b) WITHIN 5",
     dict(type="type", shape="long"), {**_ABAB, "pattern": [1] * 4}, "pattern"),
    ("PATTERN SEQ(* a, B b) WITHIN 5", dict(type="index", shape="long"),
     {"ts": [1, 2, 3, 4], "index": ["A", "B", "A", "B"]}, "index"),
])
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_an_event_field_named_as_an_output_column_is_a_named_error(text, kw, cols, name, engine):
    # was Polars' DuplicateError building the struct or the long frame; the wide shape, where these names
    # are struct fields, keeps working where they do not meet row / ts
    q = jitcep.compile(text)
    df = pl.DataFrame(cols)
    with pytest.raises(UnsupportedPatternError, match=f"'{name}'"):
        q.run(df, engine=engine, **kw)
    with pytest.raises(UnsupportedPatternError, match=f"'{name}'"):
        jitcep.output_schema(q, df.schema, **kw)
    if kw.get("shape") == "long":
        wide = q.run(df, engine=engine, **{**kw, "shape": "wide"})
        assert wide.height > 0
        assert jitcep.output_schema(q, df.schema, **{**kw, "shape": "wide"}) == wide.schema


def test_a_type_column_named_as_a_long_column_is_fine_when_no_struct_carries_it():
    # only a variable accepting several types carries the type field
    df = pl.DataFrame({"ts": [1, 2, 3, 4], "index": ["A", "B", "A", "B"]})
    out = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5").run(df, type="index", shape="long")
    assert out.columns == ["match_id", "variable", "index", "row", "ts"]
    assert out.select("index", "row").rows() == [(0, 0), (0, 1), (0, 0), (0, 3), (0, 2), (0, 3)]


# --- inputs of every form: the same output ---------------------------------------------------------------

def _events(n: int, seed: int) -> pl.DataFrame:
    import random

    r = random.Random(seed)
    return pl.DataFrame({
        "ts": sorted(r.randint(0, n) for _ in range(n)), "type": [r.choice("ABC") for _ in range(n)],
        "x": [None if r.random() < .2 else r.randint(0, 5) for _ in range(n)],
        "s": [None if r.random() < .2 else r.choice(["p", "q", "é"]) for _ in range(n)],
        "b": [None if r.random() < .2 else r.random() < .5 for _ in range(n)],
        "f": pl.Series([r.random() for _ in range(n)], dtype=pl.Float32),
        "t": [dt.datetime(2020, 1, 1, 0, r.randint(0, 59)) for _ in range(n)],
        "c": pl.Series([r.choice("uvw") for _ in range(n)], dtype=pl.Categorical())})


_FORMS_QUERY = ("PATTERN SEQ(A a, B+ b[], C c) WHERE a.x < c.x WITHIN 6 RETURN a, avg(b.f) AS m, b.s, max(b.t) AS mt, "
                "c.c, b[1].b AS bb;\n"
                "PATTERN OR(SEQ(A a, B e), SEQ(C c, B e2)) WITHIN 3 RETURN e.s AS s1, e2.s AS s2, a.b AS ab;\n"
                "PATTERN SEQ(A a, !C n, B d) WITHIN 4 RETURN a.t AS at, d.f AS df")


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_sliced_chunked_lazy_arrow_and_pandas_inputs_give_the_frames_output(shape):
    # values are gathered from the input by row number: a slice's offset, several chunks (nulls, strings,
    # booleans, a categorical) and the other input types must give the output of the plain frame
    import pyarrow as pa

    base = _events(40, 7)
    pad = _events(9, 8).with_columns(type=pl.lit("Z"))
    q = jitcep.compile(_FORMS_QUERY)
    want = q.run(base, type="type", engine="reference", shape=shape)
    assert want.height > 20 and want["pattern"].n_unique() == 3
    chunked = pl.concat([base.slice(0, 13), base.slice(13, 20), base.slice(33)], rechunk=False)
    assert chunked["s"].n_chunks() == 3
    forms = {"sliced": pl.concat([pad, base, pad]).slice(9, 40), "chunked": chunked, "lazy": base.lazy(),
             "arrow": base.to_arrow(),
             "arrow chunks": pa.Table.from_batches(base.to_arrow().to_batches(max_chunksize=9)),
             "pandas": base.to_pandas()}
    for name, events in forms.items():
        for engine in ("compiled", "reference"):
            got = q.run(events, type="type", engine=engine, shape=shape)
            assert got.equals(want), (name, engine)


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_a_list_and_a_single_variable_of_one_name_raise_in_both_shapes_and_the_message_says_so(shape):
    # semantics §10: the error is raised whatever the shape, so its message must not send the user to
    # shape='long' (it did: "rename it in one of them (or use shape='long')")
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WITHIN 3; PATTERN SEQ(A a, B b) WITHIN 3")
    with pytest.raises(UnsupportedPatternError, match="variable b is a Kleene list") as got:
        q.run(_events(12, 1), type="type", shape=shape)
    assert "shape=" not in str(got.value)


# --- output_schema is the run's schema: generated patterns, RETURN items and input dtypes ----------------

_ATTR_DTYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.Float32,
                pl.Float64, pl.Boolean, pl.String, pl.Categorical(), pl.Enum(["p", "q", "r"]), pl.Date,
                pl.Datetime("ms"), pl.Datetime("us", "UTC"), pl.Datetime("ns", "Asia/Tokyo"), pl.Duration("us"),
                pl.Null]
_TIME_DTYPES = [pl.Int64, pl.Int32, pl.UInt32, pl.Float64, pl.Date, pl.Datetime("ms"), pl.Datetime("us", "UTC")]
# (body, its single variables, its list variable or None)
_BODIES = [("SEQ(A a, B b)", "ab", None), ("SEQ(A a, B+ b[], C c)", "ac", "b"), ("SEQ(A a, B* b[])", "a", "b"),
           ("OR(SEQ(A a, B d), SEQ(C c, B e))", "acde", None), ("SEQ(A a, !C n, B d)", "ad", None),
           ("AND(A a, B d)", "ad", None), ("SEQ(* a, ANY(B, C) d)", "ad", None),
           ("SEQ(A a, ANY(B, C)+ b[])", "a", "b")]
_SINGLE_ITEMS = ["{s}.x", "{s}.y", "{s}.x + 1", "{s}.x * {t}.x", "{s}.x / 2", "-{s}.x", "abs({s}.y)", "{s}.x > 1",
                 "{s}.x = {t}.y", "{s}.x IS NULL", "{s}.ts", "{s}.type", "{s}", "{s}.y = 'p'", "{s}.x IN (1, 2.5)",
                 "{s}.y < {t}.y", "1", "NULL", "{s}.x + {t}.y", "NOT ({s}.x > {t}.x)"]
_LIST_ITEMS = ["count({l})", "sum({l}.x)", "avg({l}.y)", "min({l}.y)", "max({l}.x)", "{l}[1].x", "{l}[len].y",
               "{l}.x", "{l}", "{l}[2].y > {s}.y"]


@st.composite
def _query_and_input(draw):
    texts = []
    for k in range(draw(st.integers(1, 3))):
        body, singles, lst = draw(st.sampled_from(_BODIES))
        items = []
        for j in range(draw(st.integers(0, 3))):
            pool = _SINGLE_ITEMS + (_LIST_ITEMS if lst else [])
            item = draw(st.sampled_from(pool)).format(s=draw(st.sampled_from(singles)),
                                                       t=draw(st.sampled_from(singles)), l=lst)
            bare = item in singles or item == lst
            # a shared name (r0, r1 ..) across patterns, or each pattern's own
            items.append(item if bare else f"{item} AS r{j if draw(st.booleans()) else f'{j}_{k}'}")
        window = draw(st.sampled_from(["WITHIN 4 EVENTS", "WITHIN UNBOUNDED"]))
        texts.append(f"PATTERN {body} {window}" + (" RETURN " + ", ".join(dict.fromkeys(items)) if items else ""))
    n = draw(st.sampled_from([0, 1, 6, 14]))
    cols = {"ts": pl.Series(sorted(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))), dtype=pl.Int64)}
    ts_dtype = draw(st.sampled_from(_TIME_DTYPES))
    cols["ts"] = (cols["ts"].cast(pl.Int64) * 86_400_000).cast(pl.Datetime("ms")).cast(ts_dtype) \
        if ts_dtype.is_temporal() else cols["ts"].cast(ts_dtype)
    type_dtype = draw(st.sampled_from([pl.String, pl.Categorical(), pl.Enum(["A", "B", "C", "D"]), pl.String, None]))
    if type_dtype is not None:
        cols["type"] = pl.Series(draw(st.lists(st.sampled_from("ABC"), min_size=n, max_size=n))).cast(type_dtype)
    for name in "xy":  # x mostly a number (the items do arithmetic on it), y of any dtype
        dtype = draw(st.sampled_from(_ATTR_DTYPES if name == "y" or draw(st.booleans()) else _ATTR_DTYPES[:10]))
        values = draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n, max_size=n))
        if dtype == pl.Null:
            cols[name] = pl.Series([None] * n, dtype=pl.Null)
        elif dtype in (pl.String, pl.Categorical()) or isinstance(dtype, pl.Enum):
            cols[name] = pl.Series([None if v is None else "pqr"[v] for v in values]).cast(dtype)
        elif dtype == pl.Boolean:
            cols[name] = pl.Series([None if v is None else v == 1 for v in values], dtype=pl.Boolean)
        elif dtype.is_temporal():
            cols[name] = pl.Series(values, dtype=pl.Int64).cast(pl.Datetime("ms")).cast(dtype) \
                if dtype != pl.Duration("us") else pl.Series(values, dtype=pl.Int64).cast(dtype)
        else:
            cols[name] = pl.Series(values).cast(dtype)
    df = pl.DataFrame(cols)
    if n > 1 and draw(st.booleans()):
        df = pl.concat([df.slice(0, n // 2), df.slice(n // 2)], rechunk=False)
    return (texts, df, ("type" if type_dtype is not None else None), draw(st.sampled_from(["wide", "long"])),
            draw(st.sampled_from([None, None, "y"])))


def _schema_or_error(f):
    try:
        return f()
    except JitcepError as e:
        return type(e)


def _check_schema(texts, df, type_col, shape, partition_by):
    try:
        q = jitcep.compile(";\n".join(texts))
    except JitcepError:
        return
    schema = _schema_or_error(lambda: jitcep.output_schema(q, df.schema, type=type_col, shape=shape))
    for engine in ("compiled", "reference"):
        # a frame of no rows: exactly output_schema, or its named error
        assert _schema_or_error(lambda: q.run(df.head(0), type=type_col, shape=shape, engine=engine).schema) \
            == schema, (engine, "empty")
        got = _schema_or_error(lambda: q.run(df, type=type_col, shape=shape, engine=engine).schema)
        if schema is AttributeTypeError and df.height and any(df[c].null_count() == df.height for c in "xy"):
            continue  # a column with no value has no kind (semantics §4): the data passes the dtype's check
        assert got == schema, engine
        if partition_by is not None and isinstance(got, pl.Schema):  # streams never change the schema
            keyed = _schema_or_error(lambda: q.run(df, type=type_col, shape=shape, engine=engine,
                                                   partition_by=partition_by).schema)
            assert keyed == got or keyed is AttributeTypeError, engine  # a key of a dtype no key takes


@given(_query_and_input())
@settings(max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_output_schema_is_the_runs_schema(case):
    _check_schema(*case)


@pytest.mark.slow
@given(_query_and_input())
@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_output_schema_is_the_runs_schema_many(case):
    _check_schema(*case)


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_a_variables_type_field_and_its_type_attribute_are_one_field_across_patterns(shape):
    # `* a` carries the type column as a field; `a.type` in another pattern reads the same values under the
    # same name: one field (was Polars' DuplicateError: two fields named type)
    df = pl.DataFrame({"ts": [1, 2, 3], "type": ["A", "B", "C"]})
    q = jitcep.compile("PATTERN SEQ(* a, B b) WITHIN 5; PATTERN SEQ(A a, C c) WITHIN 5 RETURN a.type AS t")
    out = q.run(df, type="type", shape=shape)
    assert jitcep.output_schema(q, df.schema, type="type", shape=shape) == out.schema
    if shape == "wide":
        assert list(out.schema["a"].to_schema()) == ["row", "ts", "type"]
        assert out.select(pl.col("a").struct.field("row", "type"), "t").rows() == [
            (0, "A", None), (0, "A", "A")]
    else:
        # b and c accept one type each, so they carry no type field (null, jitcep.output's docstring)
        assert out.select("pattern", "variable", "row", "type", "t").rows() == [
            (0, "a", 0, "A", None), (0, "b", 1, None, None), (1, "a", 0, "A", "A"), (1, "c", 2, None, "A")]


_SECONDS = (1, 2, 4, 5)


@pytest.mark.parametrize("ts", [
    pl.Series([dt.datetime(2020, 1, 1, 0, 0, s) for s in _SECONDS], dtype=pl.Datetime("ms")),
    pl.Series([dt.date(2020, 1, s) for s in _SECONDS]),
    pl.Series([dt.datetime(2020, 1, 1, 0, 0, s) for s in _SECONDS], dtype=pl.Datetime("ns")).dt.replace_time_zone(
        "Asia/Tokyo"),
    pl.Series(_SECONDS, dtype=pl.Int32)], ids=["datetime_ms", "date", "datetime_ns_tokyo", "int32"])
@pytest.mark.parametrize("cond", [
    "b.ts - a.ts = 1000", "b.ts - a.ts = 1", "b.ts - a.ts = 1000000000", "b.ts - a.ts >= 3", "a.ts + 1 > b.ts",
    "-a.ts < 0", "abs(a.ts - b.ts) = 3000", "a.ts / 2 > 10", "a.ts * 2 > b.ts", "a.ts > 5", "a.ts = b.ts",
    "a.ts IN (1, 18262, 1577836801000)", "a.ts < b.ts"])
def test_a_return_condition_over_ts_is_what_where_finds(ts, cond):
    # a.ts is a number in time-column units (semantics §4), in RETURN as in WHERE: a Datetime's or Date's
    # physical value; RETURN met Polars' Datetime + int error, or compared a Duration with a number
    df = pl.DataFrame({"ts": ts, "type": ["A", "B", "A", "B"]})

    def kept(c):
        out = jitcep.compile(f"PATTERN SEQ(A a, B b) WHERE {c} WITHIN UNBOUNDED").run(
            df, type="type", engine="reference")
        return set(out.select(pl.col("a").struct.field("row").alias("a"), pl.col("b").struct.field("row")).rows())
    true, false = kept(cond), kept(f"NOT ({cond})")
    out = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN UNBOUNDED RETURN {cond} AS r").run(df, type="type")
    keys = out.select(pl.col("a").struct.field("row").alias("a"), pl.col("b").struct.field("row")).rows()
    got = dict(zip(keys, out["r"].to_list()))
    assert len(got) == 3 and got == {k: True if k in true else False if k in false else None for k in got}


def test_return_arithmetic_over_ts_is_a_number_and_bare_ts_keeps_the_time_dtype():
    df = pl.DataFrame({"ts": pl.Series([dt.datetime(2020, 1, 1, 0, 0, s) for s in (1, 3)], dtype=pl.Datetime("ms")),
                       "type": ["A", "B"]})
    out = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 s RETURN b.ts - a.ts AS d, a.ts").run(df, type="type")
    assert out.schema["d"] == pl.Int64 and out.schema["a_ts"] == pl.Datetime("ms")
    assert out.select("d", "a_ts").rows() == [(2000, dt.datetime(2020, 1, 1, 0, 0, 1))]


def test_sum_of_a_lists_ts_is_an_exact_int_in_time_column_units():
    # sum of int members is exact (semantics §4); a Datetime[ns]'s timestamps near 1.6e18 are not floats
    t0 = dt.datetime(2020, 1, 1)
    ts = pl.Series([t0 + dt.timedelta(microseconds=k) for k in range(3)], dtype=pl.Datetime("ns"))
    df = pl.DataFrame({"ts": ts, "type": ["A", "B", "B"]}).with_columns(pl.col("ts") + pl.duration(nanoseconds=1))
    out = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WITHIN 1 s RETURN sum(b.ts) AS s, avg(b.ts) AS m").run(
        df, type="type")
    base = 1_577_836_800_000_000_000 + 1  # 2020-01-01 in ns, plus the 1 ns
    assert out.schema["s"] == pl.Int64
    assert sorted(out.select("s").to_series().to_list()) == sorted([base + 1000, base + 2000, 2 * base + 3000])


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_columns_named_like_the_outputs_internal_sources_keep_their_values(engine):
    # a column named "\0ts" or "\0row" output the event's ts and row number instead of its own values
    df = pl.DataFrame({"ts": [1, 2], "type": ["A", "B"], "\0ts": [10, 20], "\0row": [7, 8], "\0type": ["p", "q"]})
    q = jitcep.compile("PATTERN SEQ(* a, B b) WHERE a.`\0ts` > 0 AND b.`\0row` > 0 AND b.`\0type` = 'q' WITHIN 5")
    out = q.run(df, type="type", engine=engine)
    assert out.select(pl.col("a").struct.field("\0ts"), pl.col("b").struct.field("\0row", "\0type")).rows() == [
        (10, 8, "q")]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_an_integer_literal_in_return_is_an_int64(engine):
    # numbers are int64 or float64 (semantics §4): Polars types a small literal Int32, alone or beside an
    # attribute with no value (a column of nulls, which has no kind)
    df = pl.DataFrame({"type": ["A", "B"], "ts": [1, 2], "s": pl.Series([None, None], dtype=pl.String)})
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10 RETURN 1 AS c, a.s + 1 AS d, -7 AS e")
    out = q.run(df, type="type", engine=engine)
    assert out.select("c", "d", "e").schema == pl.Schema({"c": pl.Int64, "d": pl.Int64, "e": pl.Int64})
    assert out.select("c", "d", "e").rows() == [(1, None, -7)]
    assert jitcep.output_schema(q, {"type": pl.String, "ts": pl.Int64, "s": pl.Int64}, type="type")["c"] == pl.Int64


# a UInt64 column holding a value past int64 is a float64 column (semantics §4): 2**63 + 5 is 2.0**63 there
_WIDE_U = pl.DataFrame({"type": ["A", "B", "A", "B"], "ts": [1, 2, 10, 11], "i": [5, 6, -3, 2**62],
                        "u": pl.Series([3, 2**63 + 5, 7, 2**64 - 1], dtype=pl.UInt64)})


@pytest.mark.parametrize("cond", [
    "b.u + 1 > 9223372036854775807", "b.u + a.i IS NULL", "b.u - 9223372036854775807 = 6",
    "b.u - 9223372036854775807 > 0", "b.u * 2 > b.u", "-b.u < 0", "abs(b.u - 1) = b.u", "b.u + b.i > a.u",
    "b.u = 9223372036854775807", "b.u > 9223372036854775807", "a.u + b.u < 0", "b.u IN (9223372036854775807)",
    "b.u - 9223372036854775807 IN (6, 0)"])
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_a_return_condition_over_a_uint64_past_int64_is_what_where_finds(cond, engine):
    # RETURN computed b.u exactly (as Int128: b.u + 1 NULL outside int64, b.u - (2**63 - 1) = 6 TRUE) where
    # WHERE reads it as the float64 2.0**63 (b.u + 1 > 2**63 - 1 TRUE, b.u - (2**63 - 1) = 6 FALSE)
    def kept(c):
        out = jitcep.compile(f"PATTERN SEQ(A a, B b) WHERE {c} WITHIN 1").run(
            _WIDE_U, type="type", engine="reference")
        return set(out["a"].struct.field("row").to_list())
    true, false = kept(cond), kept(f"NOT ({cond})")
    out = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 1 RETURN {cond} AS r").run(
        _WIDE_U, type="type", engine=engine)
    got = dict(zip(out["a"].struct.field("row").to_list(), out["r"].to_list()))
    assert set(got) == {0, 2}
    assert got == {row: True if row in true else False if row in false else None for row in got}


@pytest.mark.parametrize("cond", [
    "sum(b.u) > 0", "sum(b.u) IS NULL", "avg(b.u) > 0", "max(b.u) - 1 = max(b.u)", "min(b.u) + 1 > 1",
    "b[1].u + 1 > 9223372036854775807", "b[len].u - 9223372036854775807 = 6", "b[2].u + a.i IS NULL"])
def test_a_return_condition_over_a_uint64_lists_members_is_what_where_finds(cond):
    # sum(b.u) was an exact Int128 sum, NULL past int64, where WHERE adds the members as float64s
    df = pl.DataFrame({"type": ["A", "B", "B", "B"], "ts": [1, 2, 3, 4], "i": [5, 6, 7, 8],
                       "u": pl.Series([3, 2**63 + 5, 1, 2**63], dtype=pl.UInt64)})

    def kept(c):
        out = jitcep.compile(f"PATTERN SEQ(A a, B+ b[]) WHERE {c} WITHIN 5").run(df, type="type", engine="reference")
        return set(_match_keys(out))
    true, false = kept(cond), kept(f"NOT ({cond})")
    out = jitcep.compile(f"PATTERN SEQ(A a, B+ b[]) WITHIN 5 RETURN {cond} AS r").run(df, type="type")
    got = dict(zip(_match_keys(out), out["r"].to_list()))
    assert len(got) == 7 and got == {k: True if k in true else False if k in false else None for k in got}


_TS_ITEMS = "PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.ts AS t, b.ts - a.ts AS d, a.ts > 1 AS g, -b.ts AS n"


def test_output_schema_refuses_a_text_time_column_as_a_run_over_values_does():
    # output_schema answers for a table whose columns hold values (semantics §1, §4): a String time column
    # there is a run's TimestampError (output_schema has no time_format=); it answered a String ts, or met
    # Polars' InvalidOperationError on b.ts - a.ts
    for text in (_TS_ITEMS, "PATTERN SEQ(A a, B b) WITHIN 5"):
        q = jitcep.compile(text)
        with pytest.raises(TimestampError) as want:
            q.run(pl.DataFrame({"type": ["A", "B"], "ts": ["1", "2"]}), type="type")
        with pytest.raises(TimestampError) as got:
            jitcep.output_schema(q, {"type": pl.String, "ts": pl.String}, type="type")
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_output_schema_refuses_a_null_time_column_as_a_run_over_values_does(engine):
    # a Null column's values are null timestamps, a run's TimestampError over any row (semantics §1);
    # output_schema answered a schema for it
    for text in (_TS_ITEMS, "PATTERN SEQ(A a, B b) WITHIN 5"):
        q = jitcep.compile(text)
        with pytest.raises(TimestampError, match="null timestamp"):
            q.run(pl.DataFrame({"type": ["A", "B"], "ts": [None, None]}), type="type", engine=engine)
        with pytest.raises(TimestampError, match="null timestamps"):
            jitcep.output_schema(q, {"type": pl.String, "ts": pl.Null}, type="type")


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_an_empty_text_time_column_is_read_as_a_header_only_csvs(engine, tmp_path):
    # no rows: nothing to misread, the time column has no values, whatever the input (semantics §1); a
    # DataFrame's empty String column met Polars' InvalidOperationError on b.ts - a.ts and a.ts > 1
    q = jitcep.compile(_TS_ITEMS)
    csv = tmp_path / "header.csv"
    csv.write_text("type,ts\n")
    want = q.run(str(csv), type="type", engine=engine)
    assert want.height == 0 and want.schema["a"] == pl.Struct({"row": pl.Int64, "ts": pl.Null})
    got = q.run(pl.DataFrame(schema={"type": pl.String, "ts": pl.String}), type="type", engine=engine)
    assert got.schema == want.schema


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_a_duration_window_over_an_empty_text_time_column_finds_no_match(engine, tmp_path):
    # an empty input is not an error (semantics §1): WITHIN 5 minutes over a header-only CSV's time column,
    # which gives no unit to read, was a WindowUnitError saying the column is numeric
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 minutes")
    csv = tmp_path / "header.csv"
    csv.write_text("type,ts\n")
    for events in (str(csv), pl.DataFrame(schema={"type": pl.String, "ts": pl.String})):
        assert q.run(events, type="type", engine=engine).height == 0
