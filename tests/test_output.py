"""Output shapes, built from hand-made event and match tables (no parser or engine involved).

Expected values are written by hand from the tables below.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import jitcep

from jitcep.errors import MissingColumnError, PatternValidationError, UnsupportedPatternError
from jitcep.events import Column, EventTable
from jitcep.matches import MatchTable
from jitcep.output import output_schema, to_frame
from jitcep.output.lists import _lists_by_arrow, _lists_by_groups
from jitcep.pattern.ast import Disj, EventVar, Kleene, Neg, Pattern, ReturnItem, Seq, TimeWindow
from jitcep.pattern.expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, Lit

# Input as given (row r); sorted by ts the positions are p -> row: 0->1, 1->0, 2->2, 3->4, 4->3.
SOURCE = pl.DataFrame({
    "ticker": ["B", "A", "A", "B", "A"],
    "ts": [dt.datetime(2024, 1, 1, 9, m) for m in (1, 0, 2, 4, 3)],
    "price": [2.0, 1.0, None, 5.0, 4.0],
    "sym": ["x", "x", "y", "x", "y"],
    "volume": pl.Series([20, 10, 30, 50, 40], dtype=pl.Int32),
})
ROW = np.array([1, 0, 2, 4, 3])


def table() -> EventTable:
    src = SOURCE[ROW]
    price = src["price"]
    return EventTable(
        ts=src["ts"].cast(pl.Int64).to_numpy(), row=ROW,
        type_code=np.array([0, 1, 0, 0, 1], dtype=np.int32), type_names=("A", "B"),
        columns={"price": Column("float", price.fill_null(0).to_numpy(), price.is_not_null().to_numpy()),
                 "sym": Column("str", np.array([0, 0, 1, 1, 0], dtype=np.int32), None, ("x", "y"))},
        time_unit_ns=1000, time_dtype=pl.Datetime("us"))


def seq_kleene(returns=()) -> Pattern:
    # SEQ(A a, B+ c[], * d) WHERE [sym] AND a.price > 0 AND c[i].price > 0
    return Pattern(Seq((EventVar("a", ("A",)), Kleene(EventVar("c", ("B",))), EventVar("d", None))),
                   where=BoolOp("and", (Equiv("sym"), Cmp(">", Attr("a", "price"), Lit(0)),
                                        Cmp(">", Attr("c", "price", "i"), Lit(0)))),
                   window=TimeWindow(10, "min"), returns=tuple(returns))


def two_matches() -> MatchTable:
    return MatchTable.from_bindings([{"a": 0, "c": (1, 4), "d": 3}, {"a": 2, "c": (), "d": 3}],
                                    ["a", "d"], ["c"])


def test_wide_struct_fields_and_values_from_event_table():
    out = to_frame([seq_kleene()], [two_matches()], table())
    assert out.columns == ["match_id", "a", "c", "d"]
    assert out["match_id"].to_list() == [0, 1]
    s = out.schema
    assert s["a"] == pl.Struct({"row": pl.Int64, "ts": pl.Datetime("us"), "sym": pl.String, "price": pl.Float64})
    assert s["c"] == pl.List(s["a"])
    # d is untyped: it carries the type name
    assert list(s["d"].to_schema()) == ["row", "ts", "type", "sym"]
    a = out["a"].to_list()
    assert a[0] == {"row": 1, "ts": dt.datetime(2024, 1, 1, 9, 0), "sym": "x", "price": 1.0}
    assert a[1] == {"row": 2, "ts": dt.datetime(2024, 1, 1, 9, 2), "sym": "y", "price": None}
    assert [m["row"] for m in out["c"][0]] == [0, 3]
    assert out["c"][1].to_list() == []
    assert out["d"].to_list()[0]["type"] == "A" and out["d"].to_list()[0]["row"] == 4


def test_wide_from_source_keeps_input_dtypes():
    out = to_frame([seq_kleene()], [two_matches()], table(), source=SOURCE, type="ticker")
    d = out.schema["d"].to_schema()
    assert list(d) == ["row", "ts", "ticker", "sym"]
    rec = out.row(0, named=True)
    assert rec["d"] == {"row": 4, "ts": dt.datetime(2024, 1, 1, 9, 3), "ticker": "A", "sym": "y"}
    assert [m["price"] for m in rec["c"]] == [2.0, 5.0]


def test_return_whole_variable_outputs_every_input_column():
    p = seq_kleene([ReturnItem(Attr("a", "*"))])
    out = to_frame([p], [two_matches()], table(), source=SOURCE, type="ticker")
    assert out.columns == ["match_id", "a", "c", "d"]
    fields = out.schema["a"].to_schema()
    assert list(fields) == ["row", "ts", "sym", "price", "volume"]  # read first, then the rest
    assert fields["volume"] == pl.Int32
    assert out["a"].to_list()[1]["volume"] == 30


def test_or_branch_not_taken_gives_null_struct():
    p = Pattern(Seq((EventVar("a", ("A",)), Disj((EventVar("b", ("B",)), EventVar("e", ("A",)))))),
                window=TimeWindow(5, "min"))
    mt = MatchTable.from_bindings([{"a": 0, "b": 1, "e": None}, {"a": 0, "e": 2, "b": None}], ["a", "b", "e"], [])
    out = to_frame([p], [mt], table())
    assert out["b"].to_list() == [{"row": 0, "ts": dt.datetime(2024, 1, 1, 9, 1)}, None]
    assert out["e"].is_null().to_list() == [True, False]
    assert out["e"].to_list()[1] == {"row": 2, "ts": dt.datetime(2024, 1, 1, 9, 2)}


def test_negated_variables_have_no_column():
    p = Pattern(Seq((EventVar("a", ("A",)), Neg(EventVar("n", ("B",))), EventVar("b", ("A",)))),
                where=Cmp("<", Attr("n", "price"), Lit(3)), window=TimeWindow(5, "min"))
    out = to_frame([p], [MatchTable.from_bindings([{"a": 0, "b": 2}], ["a", "b"], [])], table())
    assert out.columns == ["match_id", "a", "b"]
    # attributes are read per variable: only n reads price
    assert list(out.schema["a"].to_schema()) == ["row", "ts"]


def test_return_aggregates_and_attributes():
    p = seq_kleene([ReturnItem(Agg("avg", "c", "price")), ReturnItem(Agg("count", "c"), "n"),
                    ReturnItem(Agg("sum", "c", "price")), ReturnItem(Agg("max", "c", "price")),
                    ReturnItem(Attr("c", "price", "len")), ReturnItem(Attr("d", "sym")),
                    ReturnItem(Arith("*", Attr("a", "price"), Lit(2)), "twice")])
    out = to_frame([p], [two_matches()], table())
    assert out.columns == ["match_id", "a", "c", "d", "avg_c_price", "n", "sum_c_price", "max_c_price",
                           "c_last_price", "d_sym", "twice"]
    assert out.schema["avg_c_price"] == pl.Float64 and out.schema["n"] == pl.Int64
    assert out["avg_c_price"].to_list() == [3.5, None]      # (2 + 5) / 2; empty list -> null
    assert out["n"].to_list() == [2, 0]
    assert out["sum_c_price"].to_list() == [7.0, None]   # no member: NULL, as sum() in WHERE (semantics §4)
    assert out["max_c_price"].to_list() == [5.0, None]
    assert out["c_last_price"].to_list() == [5.0, None]
    assert out["d_sym"].to_list() == ["y", "y"]
    assert out["twice"].to_list() == [2.0, None]
    # RETURN d.sym puts sym into d's struct too
    assert "sym" in out.schema["d"].to_schema()


def test_return_name_clash_is_an_error():
    p = seq_kleene([ReturnItem(Agg("count", "c"), "a")])
    with pytest.raises(PatternValidationError, match="clash"):
        to_frame([p], [two_matches()], table())


def test_unbound_list_is_null_and_an_empty_list_is_empty():
    # OR(SEQ(A a, B* b[]), C c): the C branch leaves b unbound (null); the first
    # branch with zero B events binds b to [] -- the two must stay distinct.
    p = Pattern(Disj((Seq((EventVar("a", ("A",)), Kleene(EventVar("b", ("B",)), 0, None))),
                      EventVar("c", ("C",)))), window=TimeWindow(5, "min"))
    mt = MatchTable.from_bindings([{"a": 0, "b": (), "c": None}, {"a": None, "b": None, "c": 2},
                                   {"a": 0, "b": (1, 4), "c": None}], ["a", "c"], ["b"])
    out = to_frame([p], [mt], table())
    assert out["b"].is_null().to_list() == [False, True, False]
    assert out["b"].list.len().to_list() == [0, None, 2]
    assert [m["row"] for m in out["b"][2]] == [0, 3]
    long = to_frame([p], [mt], table(), shape="long")
    assert long.select("match_id", "variable", "index", "row").rows() == [
        (0, "a", 0, 1), (1, "c", 0, 2), (2, "a", 0, 1), (2, "b", 0, 0), (2, "b", 1, 3)]
    # a bound list is never null, even in a table that has unbound rows elsewhere
    only_empty = MatchTable.from_bindings([{"a": 0, "b": (), "c": None}], ["a", "c"], ["b"])
    assert to_frame([p], [only_empty], table())["b"].to_list() == [[]]


def test_long_shape():
    out = to_frame([seq_kleene([ReturnItem(Agg("count", "c"), "n")])], [two_matches()], table(), shape="long")
    assert out.columns == ["match_id", "variable", "index", "row", "ts", "sym", "price", "type", "n"]
    assert out.select("match_id", "variable", "index", "row").rows() == [
        (0, "a", 0, 1), (0, "c", 0, 0), (0, "c", 1, 3), (0, "d", 0, 4),
        (1, "a", 0, 2), (1, "d", 0, 4)]
    assert out["n"].to_list() == [2, 2, 2, 2, 0, 0]
    assert out["type"].to_list() == [None, None, None, "A", None, "A"]


@pytest.mark.parametrize("name", ["variable", "index", "row", "ts", "sym", "price", "type"])
def test_a_return_name_that_is_a_long_column_is_an_error_in_the_long_shape(name):
    # the long shape's columns are match_id, variable, index, row, ts, the attributes (sym, price) and the
    # untyped d's type: a RETURN column of the same name is one wide but two long (was Polars'
    # DuplicateError from its horizontal concat, an error jitcep does not name)
    p = seq_kleene([ReturnItem(Agg("count", "c"), name)])
    assert to_frame([p], [two_matches()], table())[name].to_list() == [2, 0]
    with pytest.raises(PatternValidationError, match=f"RETURN column name.* {name} .*long shape"):
        to_frame([p], [two_matches()], table(), shape="long")
    with pytest.raises(PatternValidationError, match=f"RETURN column name.* {name} .*long shape"):
        output_schema([p], {"ts": pl.Datetime("us"), "type": pl.String, "sym": pl.String, "price": pl.Float64},
                      type="type", shape="long")


def test_long_shape_skips_unbound_variables():
    p = Pattern(Disj((EventVar("b", ("B",)), EventVar("e", ("A",)))), window=TimeWindow(5, "min"))
    mt = MatchTable.from_bindings([{"b": 1, "e": None}, {"e": 2, "b": None}], ["b", "e"], [])
    out = to_frame([p], [mt], table(), shape="long")
    assert out.select("match_id", "variable", "row").rows() == [(0, "b", 0), (1, "e", 2)]


def test_several_patterns_share_columns_and_number_matches_globally():
    p1 = seq_kleene()
    p2 = Pattern(Seq((EventVar("a", ("A",)), EventVar("z", ("B",)))), window=TimeWindow(5, "min"))
    mt2 = MatchTable.from_bindings([{"a": 2, "z": 4}], ["a", "z"], [])
    out = to_frame([p1, p2], [two_matches(), mt2], table())
    assert out.columns == ["match_id", "pattern", "a", "c", "d", "z"]
    assert out["match_id"].to_list() == [0, 1, 2]
    assert out["pattern"].to_list() == [0, 0, 1]
    assert out["z"].is_null().to_list() == [True, True, False]
    assert out["c"].is_null().to_list() == [False, False, True]
    # p2's a reads nothing, but a's column holds the union of the fields
    assert out["a"].to_list()[2] == {"row": 2, "ts": dt.datetime(2024, 1, 1, 9, 2), "sym": "y", "price": None}


@pytest.mark.parametrize("name", ["z", "c"])
def test_a_return_name_that_is_another_patterns_variable_is_an_error(name):
    # p2's variable z (single) or p1's list c names a column of its own in the wide frame: the other pattern's
    # RETURN item of that name (p1's count of c, p2's z.price) would be a second column of that name (was
    # Polars' InvalidOperationError "must specify one field in the struct", casting one to the other's type;
    # semantics section 10)
    p1 = seq_kleene([ReturnItem(Agg("count", "c"), name)] if name == "z" else [])
    p2 = Pattern(Seq((EventVar("a", ("A",)), EventVar("z", ("B",)))), window=TimeWindow(5, "min"),
                 returns=(ReturnItem(Attr("z", "price"), name),) if name == "c" else ())
    mt2 = MatchTable.from_bindings([{"a": 2, "z": 4}], ["a", "z"], [])
    for shape in ("wide", "long"):
        with pytest.raises(UnsupportedPatternError, match=f"'{name}' is a variable in one pattern and a RETURN name"):
            to_frame([p1, p2], [two_matches(), mt2], table(), shape=shape)
    with pytest.raises(UnsupportedPatternError, match=f"'{name}' is a variable in one pattern and a RETURN name"):
        output_schema([p1, p2], {"ts": pl.Datetime("us"), "ticker": pl.String, "sym": pl.String, "price": pl.Float64},
                      type="ticker")


def test_list_and_single_variable_of_the_same_name_cannot_share_a_column():
    p2 = Pattern(Seq((EventVar("c", ("A",)), EventVar("z", ("B",)))), window=TimeWindow(5, "min"))
    with pytest.raises(UnsupportedPatternError, match="rename"):
        to_frame([seq_kleene(), p2], [two_matches(), MatchTable.from_bindings([], ["c", "z"], [])], table())


@pytest.mark.parametrize("shape", ["wide", "long"])
@pytest.mark.parametrize("with_source", [False, True])
def test_empty_result_has_the_non_empty_schema(shape, with_source):
    p = seq_kleene([ReturnItem(Agg("avg", "c", "price")), ReturnItem(Attr("c", "price", 1))])
    kw = dict(source=SOURCE, type="ticker") if with_source else {}
    full = to_frame([p], [two_matches()], table(), shape=shape, **kw)
    empty = to_frame([p], [MatchTable.from_bindings([], ["a", "d"], ["c"])], table(), shape=shape, **kw)
    assert empty.height == 0 and full.height > 0
    assert empty.schema == full.schema


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_output_schema_matches_a_real_run(shape):
    p = seq_kleene([ReturnItem(Agg("sum", "c", "price")), ReturnItem(Attr("a", "*"))])
    full = to_frame([p, p], [two_matches(), two_matches()], table(), shape=shape, source=SOURCE, type="ticker")
    assert output_schema([p, p], SOURCE.schema, type="ticker", shape=shape) == full.schema


def test_output_schema_needs_the_columns():
    with pytest.raises(MissingColumnError, match="price"):
        output_schema([seq_kleene()], {"ts": pl.Int64, "ticker": pl.String, "sym": pl.String}, type="ticker")
    with pytest.raises(MissingColumnError, match="time column"):
        output_schema([seq_kleene()], {"t": pl.Int64}, type="ticker")


def test_numeric_time_and_null_type_codes():
    t = EventTable(ts=np.array([5, 7]), row=np.array([0, 1]), type_code=np.array([0, -1], dtype=np.int32),
                   type_names=("A",), columns={}, time_unit_ns=None, time_dtype=pl.Int64)
    p = Pattern(Seq((EventVar("a", None), EventVar("b", None))), window=TimeWindow(5))
    out = to_frame([p], [MatchTable.from_bindings([{"a": 0, "b": 1}], ["a", "b"], [])], t)
    assert out.row(0, named=True)["a"] == {"row": 0, "ts": 5, "type": "A"}
    assert out.row(0, named=True)["b"] == {"row": 1, "ts": 7, "type": None}


def test_many_matches_are_gathered_without_per_match_python():
    # 200k matches of a Kleene variable: built from CSR offsets in one go
    n = 200_000
    t = EventTable(ts=np.arange(5), row=np.arange(5), type_code=np.zeros(5, np.int32), type_names=("A",),
                   columns={}, time_unit_ns=None, time_dtype=pl.Int64)
    p = Pattern(Kleene(EventVar("c", ("A",)), 1, None), window=TimeWindow(5))
    lens = np.arange(n) % 3 + 1
    off = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    pos = np.arange(off[-1]) % 5
    out = to_frame([p], [MatchTable(n, {}, {"c": (off, pos)})], t)
    assert out.height == n
    assert out["c"].list.len().to_list()[:4] == [1, 2, 3, 1]
    assert out["c"].list.eval(pl.element().struct.field("row")).to_list()[1] == [1, 2]


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_return_arithmetic_on_an_attribute_with_no_value_is_null(engine):
    # s holds no value at all, so it has no kind and every operation on it is NULL (semantics §4); its
    # String dtype must not reach Polars' String + Int check (found by the generated corpus)
    import jitcep

    df = pl.DataFrame({"type": ["A", "B"], "ts": [1, 2], "x": [3, 4], "s": pl.Series([None, None], dtype=pl.String)})
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 RETURN 0 + a.s AS plus, -b.s AS minus, abs(a.s) AS size, "
                       "b.x - a.x AS dx")
    out = q.run(df, time="ts", type="type", engine=engine)
    assert out.select("plus", "minus", "size", "dx").rows() == [(None, None, None, 1)]
    # a number column with no value compared with a string: NULL too (with values it is an AttributeTypeError)
    df = df.with_columns(pl.Series("n", [None, None], dtype=pl.Int64))
    out = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.n = 'p' AS eq, b.n IN ('p', 1) AS isin, "
                         "a.n IS NULL AS none").run(df, time="ts", type="type", engine=engine)
    assert out.select("eq", "isin", "none").rows() == [(None, None, True)]
    # and over a Kleene variable's aggregate of it
    out = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WITHIN 5 RETURN -max(b.s) AS m, max(b.s) AS bare").run(
        df, time="ts", type="type", engine=engine)
    assert out.select("m", "bare").rows() == [(None, None)]
    assert out.schema["bare"] == pl.String


def test_return_expression_over_a_kleene_variables_members_is_refused_at_compile():
    import jitcep

    for text in ("-b.x", "b.x + 1", "b.x IS NULL"):
        with pytest.raises(PatternValidationError, match="list of its members' values"):
            jitcep.compile(f"PATTERN SEQ(A a, B+ b[]) WITHIN 5 RETURN {text} AS v")
    # the list itself, aggregates and fixed members stay allowed
    jitcep.compile("PATTERN SEQ(A a, B+ b[]) WITHIN 5 RETURN b.x, avg(b.x) AS m, -b[1].x AS f")


def test_the_type_field_follows_type_between_calls_on_one_pattern():
    # the kept layout is keyed by the type column's name too: a second call on the same pattern with another
    # name (or none) names the untyped variable's type field as a fresh pattern would
    p = seq_kleene()
    for kind, want in (("kind", "kind"), (None, "type"), ("kind", "kind")):
        out = to_frame([p], [two_matches()], table(), type=kind)
        assert list(out.schema["d"].to_schema()) == ["row", "ts", want, "sym"], kind


# --- a list variable's lists, by Arrow and by Polars alone (128-bit integers) -----------------------------


@st.composite
def _member_lists(draw):
    lengths = draw(st.lists(st.integers(0, 3), max_size=8))
    off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    unbound = draw(st.none() | st.lists(st.booleans(), min_size=len(lengths), max_size=len(lengths)))
    return off, None if unbound is None else np.array(unbound, dtype=bool)


@settings(max_examples=60, deadline=None)
@given(_member_lists(), st.sampled_from([pl.Int64, pl.Int128, pl.UInt128]), st.booleans())
def test_lists_by_arrow_and_by_groups_are_the_slices(case, dtype, nul):
    off, unbound = case
    total = int(off[-1])
    k = "k\0" if nul else "k"
    members = pl.DataFrame({"row": np.arange(total, dtype=np.int64),
                            k: pl.Series([3 * i - 2**70 * (dtype == pl.Int128) for i in range(total)],
                                         dtype=dtype)}).to_struct("b")
    rows = members.to_list()
    expected = [None if unbound is not None and unbound[i] else rows[off[i]:off[i + 1]] for i in range(len(off) - 1)]
    builders = [_lists_by_groups] + ([_lists_by_arrow] if dtype == pl.Int64 else [])
    for build in builders:
        out = build(members, off, unbound)
        assert out.name == "b" and out.dtype == pl.List(members.dtype)
        assert out.to_list() == expected


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("dtype", [pl.Int128, pl.UInt128])
def test_a_list_of_128_bit_integers_is_output(engine, dtype):
    # A0 B1 C2 A3 C4, k = row + 2**70: each A with the B's between it and the next C (none after A3)
    df = pl.DataFrame({"type": ["A", "B", "C", "A", "C"], "ts": [0, 1, 2, 3, 4],
                       "k": pl.Series([r + 2**70 for r in range(5)], dtype=dtype)})
    q = jitcep.compile("PATTERN SEQ(A a, B* b[], C c) WITHIN 2 RETURN max(b.k) AS m", strategy="skip_till_next_match")
    out = q.run(df, type="type", engine=engine)
    got = [([m["k"] for m in b], c["row"], mx) for b, c, mx in out.select("b", "c", "m").iter_rows()]
    assert got == [([2**70 + 1], 2, 2**70 + 1), ([], 4, None)]
    assert out.schema == output_schema(q, df.schema, type="type")


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_shared_number_columns_hold_both_patterns_values_exactly(engine):
    # §10: Int64 beside UInt64 is Int128, an integer beside a decimal a Decimal, anything beside a float Float64
    df = pl.DataFrame({"type": ["A", "B"], "ts": [0, 1], "i": [-3, 4], "u": pl.Series([2**64 - 1, 5], dtype=pl.UInt64),
                       "d": pl.Series(["0.25", "1.5"]).cast(pl.Decimal(10, 2)), "f": [0.5, 1.0]})
    cases = [("i", "u", pl.Int128, [-3, 2**64 - 1]), ("i", "d", pl.Decimal, [-3, 0.25]), ("u", "f", pl.Float64, [2.0**64, 0.5])]
    for x, y, dtype, values in cases:
        q = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.{x} AS v; PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.{y} AS v")
        out = q.run(df, type="type", engine=engine)
        assert out.schema["v"] == output_schema(q, df.schema, type="type")["v"]
        assert isinstance(out.schema["v"], dtype) if dtype is pl.Decimal else out.schema["v"] == dtype
        assert [float(v) if dtype is pl.Decimal else v for v in out.get_column("v").to_list()] == values



@pytest.mark.parametrize("other", [pl.Int64, pl.Int8, pl.Decimal(10, 2)])
def test_numbers_no_dtype_holds_exactly_cannot_share_a_column(other):
    # §10: Polars' supertype of UInt128 and Int64 is Int128, which held 2**128 - 1 as null
    df = pl.DataFrame({"type": ["A", "B", "C"], "ts": [0, 1, 2],
                       "x": pl.Series([2**128 - 1, 0, 0], dtype=pl.UInt128), "y": pl.Series([1, 2, 3]).cast(other)})
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.x AS v; PATTERN SEQ(A a, C c) WITHIN 5 RETURN a.y AS v")
    for engine in ("reference", "compiled"):
        with pytest.raises(UnsupportedPatternError, match="'v'"):
            q.run(df, type="type", engine=engine)
    with pytest.raises(UnsupportedPatternError, match="'v'"):
        output_schema(q, df.schema, type="type")


@pytest.mark.parametrize("x, y, big", [
    (pl.Int64, pl.Decimal(38, 20), 2**62),          # Polars' supertype Decimal(38, 20): 18 integer digits
    (pl.UInt64, pl.Decimal(38, 19), 2**64 - 1),     # Decimal(38, 19): 19, UInt64 needs 20
    (pl.Decimal(38, 1), pl.Decimal(10, 5), 10**36),  # Decimal(38, 5): 33 integer digits, the first needs 37
])
def test_an_integer_or_decimal_past_the_common_decimal_cannot_share_a_column(x, y, big):
    # §10: the column's Decimal(38, s) holds 38 - s integer digits; a value past them was Polars'
    # InvalidOperationError (data-dependent, on both engines) and output_schema answered that Decimal
    df = pl.DataFrame({"type": ["A", "B"], "ts": [0, 1], "x": pl.Series([big, 1]).cast(x),
                       "y": pl.Series(["0.5", "1.25"]).cast(pl.Decimal(38, 2)).cast(y)})
    q = jitcep.compile("PATTERN A a WITHIN 5 RETURN a.x AS v; PATTERN B b WITHIN 5 RETURN b.y AS v")
    for frame in (df, df.with_columns(pl.Series("x", [1, 1]).cast(x))):  # the dtypes decide, not the values
        for engine in ("reference", "compiled"):
            with pytest.raises(UnsupportedPatternError, match="'v'"):
                q.run(frame, type="type", engine=engine)
    with pytest.raises(UnsupportedPatternError, match="'v'"):
        output_schema(q, df.schema, type="type")


@pytest.mark.parametrize("x, y, big, y_value", [
    (pl.Int64, pl.Decimal(38, 19), 2**63 - 1, "0.5"),         # 19 integer digits: every Int64
    (pl.UInt64, pl.Decimal(20, 18), 2**64 - 1, "0.25"),        # Decimal(38, 18): 20 digits, every UInt64
    (pl.Decimal(34, 1), pl.Decimal(10, 5), 10**32, "1.125"),  # Decimal(38, 5): 33 digits
])
def test_numbers_sharing_a_column_at_the_decimal_limit_keep_exact_values(x, y, big, y_value):
    from decimal import Decimal
    df = pl.DataFrame({"type": ["A", "B"], "ts": [0, 1], "x": pl.Series([big, 1]).cast(x),
                       "y": pl.Series([y_value] * 2).cast(pl.Decimal(38, 5)).cast(y)})
    q = jitcep.compile("PATTERN A a WITHIN 5 RETURN a.x AS v; PATTERN B b WITHIN 5 RETURN b.y AS v")
    for engine in ("reference", "compiled"):
        out = q.run(df, type="type", engine=engine)
        assert out.schema["v"] == output_schema(q, df.schema, type="type")["v"]
        assert out.get_column("v").to_list() == [Decimal(big), Decimal(y_value)]


def test_shared_numbers_are_judged_pair_by_pair_in_any_pattern_order():
    # §10: Int8 beside Decimal(38, 30) fits (8 integer digits), Int64 beside it does not; the check
    # compared each dtype with the first pattern's alone, so the order of the patterns decided it
    df = pl.DataFrame({"type": ["A", "B", "C"], "ts": [0, 1, 2], "i": pl.Series([1, 2, 3], dtype=pl.Int8),
                       "d": pl.Series(["0.5", "1", "2"]).cast(pl.Decimal(38, 30)), "l": [1, 1, 2**62]})
    items = ["A a WITHIN 5 RETURN a.i AS v", "B b WITHIN 5 RETURN b.d AS v", "C c WITHIN 5 RETURN c.l AS v"]
    for order in ([0, 1, 2], [2, 0, 1], [1, 0, 2]):
        q = jitcep.compile("; ".join("PATTERN " + items[k] for k in order))
        for engine in ("reference", "compiled"):
            with pytest.raises(UnsupportedPatternError, match="'v'"):
                q.run(df, type="type", engine=engine)


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_return_arithmetic_reads_decimals_as_float64(engine):
    # §4: decimals are float64 (the nearest value), as sum/avg over them already were; Polars' Decimal(38, 10)
    # arithmetic raised its ComputeError ("overflow in decimal addition") on 10^28 + 10^28
    from decimal import Decimal
    big = Decimal("9" * 28 + ".5")
    df = pl.DataFrame({"type": ["A", "B"], "ts": [1, 2], "i": [2**62, 3],
                       "d": pl.Series([big, Decimal("-1.25")], dtype=pl.Decimal(38, 10))})
    items = {"p": "a.d + a.d", "m": "a.d * 2", "x": "a.d - b.d", "y": "a.d + a.i", "n": "-b.d", "v": "abs(b.d)"}
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 RETURN a.d AS d, "
                       + ", ".join(f"{e} AS {k}" for k, e in items.items()))
    out = q.run(df, type="type", engine=engine)
    assert out.schema == output_schema(q, df.schema, type="type")
    assert out.schema["d"] == pl.Decimal(38, 10)  # a bare attribute keeps its column's dtype
    f = float(big)
    want = {"p": f + f, "m": f * 2, "x": f + 1.25, "y": f + 2.0**62, "n": 1.25, "v": 1.25}
    assert {k: out.schema[k] for k in items} == {k: pl.Float64 for k in items}
    assert out.select(list(items)).row(0, named=True) == want


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_return_arithmetic_on_128_bit_integers_is_exact_or_null(engine):
    # §4: integer arithmetic is exact and NULL outside int64; Polars' Int128 arithmetic wraps (2^64 * 2^64 came
    # out 0, (2^127 - 1) + (2^127 - 1) -2, -2^127 - (2^127 - 1) 1) and a UInt128 past Int128 failed its cast
    # (Polars' InvalidOperationError)
    big, top = 2**127 - 1, 2**128 - 1
    df = pl.DataFrame({"type": ["A", "B"], "ts": [0, 1],
                       "i": pl.Series([2**64, 2**64], dtype=pl.Int128), "j": pl.Series([big, big], dtype=pl.Int128),
                       "k": pl.Series([-(2**127), big], dtype=pl.Int128), "z": [0, 0],
                       "uu": pl.Series([top, top], dtype=pl.UInt128), "v": pl.Series([top, 5], dtype=pl.UInt128)})
    items = {"ii": ("a.i * b.i", None), "jj": ("a.j + b.j", None), "kk": ("a.k - b.k", None),
             "kn": ("-a.k", None), "ka": ("abs(a.k)", None), "ku": ("a.k + b.j", -1),
             "uz": ("a.uu - b.uu", 0), "un": ("-a.uu", None), "ua": ("abs(a.uu)", None), "um": ("a.uu * b.z", 0),
             "uv": ("a.v - b.uu", 0), "vv": ("a.v - b.v", None), "vk": ("b.v + a.k", None),
             "vs": ("b.v - a.j - 1", None), "vz": ("b.z - b.v", -5)}
    returns = ", ".join(f"{e} AS {k}" for k, (e, _) in items.items())
    q = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 5 RETURN {returns}")
    out = q.run(df, type="type", engine=engine)
    assert out.schema == output_schema(q, df.schema, type="type")
    assert out.select(list(items)).row(0, named=True) == {k: want for k, (_, want) in items.items()}


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_sums_of_128_bit_members_are_exact_or_null(engine):
    # §4: an int sum is exact, NULL outside int64 whatever the partial sums: Polars' Int128 list sum wraps
    # ([2^127 - 1, 2^127 - 1, 2] summed to 0) and a UInt128 member past Int128 failed its cast
    big, top = 2**127 - 1, 2**128 - 1
    cases = {"wraps": ([big, big, 2], pl.Int128, None), "cancels": ([big, -big, 7], pl.Int128, 7),
             "past": ([top, 1, 1], pl.UInt128, None), "small": ([top - top, 3, 4], pl.UInt128, 7),
             "low": ([-(2**127), big, 1], pl.Int128, 0)}
    for name, (members, dtype, want) in cases.items():
        df = pl.DataFrame({"type": ["A", "B", "B", "B"], "ts": [0, 1, 2, 3],
                           "m": pl.Series([0, *members], dtype=dtype)})
        q = jitcep.compile("PATTERN SEQ(A a, B{3,3} b[]) WITHIN 5 RETURN sum(b.m) AS s")
        out = q.run(df, type="type", engine=engine)
        assert out.get_column("s").to_list() == [want], name
