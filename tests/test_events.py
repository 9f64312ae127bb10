"""Event tables: input kinds, time dtypes, stable sort, encodings, partitions, named errors.

Expected values are written by hand or computed here in plain Python (sorted
with a key, grouped with dicts), never by the builder under test.
"""

from __future__ import annotations

import datetime as dt
import pathlib

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitcep
from jitcep.errors import (AttributeTypeError, InputFormatError, InvalidWindowError, MissingColumnError,
                           OptionError, TimestampError, WindowUnitError)
from jitcep.events import (EventTable, attributes_read, build_event_table, build_partition,
                           check_types, equivalence_key, read_events, read_table, window_span)
from jitcep.pattern.ast import (CountWindow, EventVar, Pattern, ReturnItem, Seq, TimeWindow,
                                Unbounded)
from jitcep.pattern.expr import (Agg, Arith, Attr, BoolOp, Cmp, Equiv, In, IsNull, Lit, Not, Unary,
                                 conjoin)

# --- helpers ----------------------------------------------------------------


def pattern(*conjuncts, returns=(), window=TimeWindow(10)) -> Pattern:
    body = Seq((EventVar("a", ("A",)), EventVar("b", ("B",))))
    return Pattern(body, where=conjoin(conjuncts), window=window,
                   returns=tuple(ReturnItem(r) for r in returns))


PRICE = pattern(Cmp(">", Attr("a", "price"), Lit(10)))


def small() -> pl.DataFrame:
    return pl.DataFrame({
        "ts": [5, 1, 3, 1, 2],
        "type": ["A", "B", "A", "C", "B"],
        "price": [1.5, 2.0, 3.0, 4.0, 5.0],
        "unused": ["x", "y", "z", "w", "v"],
    })


def check_small(t: EventTable) -> None:
    # stable by ts: ts 1 (rows 1, 3), 2 (row 4), 3 (row 2), 5 (row 0)
    assert t.row.tolist() == [1, 3, 4, 2, 0]
    assert t.ts.tolist() == [1, 1, 2, 3, 5]
    assert t.ts.dtype == np.int64 and t.row.dtype == np.int64
    assert t.type_names == ("A", "B", "C")
    assert t.type_code.tolist() == [1, 2, 1, 0, 0]
    assert list(t.columns) == ["price"]
    assert t.columns["price"].values.tolist() == [2.0, 4.0, 5.0, 3.0, 1.5]
    assert t.partition is None


# --- input kinds ------------------------------------------------------------


def test_polars_dataframe():
    check_small(build_event_table(small(), PRICE, type="type"))


def test_polars_lazyframe():
    check_small(build_event_table(small().lazy(), PRICE, type="type"))


def test_pandas_dataframe():
    pytest.importorskip("pandas")
    check_small(build_event_table(small().to_pandas(), PRICE, type="type"))


def test_pandas_index_is_ignored_row_is_positional():
    pd = pytest.importorskip("pandas")
    pdf = small().to_pandas()
    pdf.index = pd.Index([10, 20, 30, 40, 50])
    check_small(build_event_table(pdf, PRICE, type="type"))


def test_arrow_table_and_record_batch():
    tbl = small().to_arrow()
    check_small(build_event_table(tbl, PRICE, type="type"))
    check_small(build_event_table(tbl.to_batches()[0], PRICE, type="type"))


def test_parquet_path_str_and_pathlib(tmp_path):
    path = tmp_path / "events.parquet"
    small().write_parquet(path)
    check_small(build_event_table(str(path), PRICE, type="type"))
    check_small(build_event_table(path, PRICE, type="type"))


def test_parquet_directory_and_unknown_suffix(tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    small().write_parquet(d / "part-0.parquet")
    check_small(build_event_table(d, PRICE, type="type"))
    odd = tmp_path / "events.data"
    small().write_parquet(odd)  # recognised by the PAR1 magic
    check_small(build_event_table(odd, PRICE, type="type"))


def test_csv_path(tmp_path):
    path = tmp_path / "events.csv"
    small().write_csv(path)
    check_small(build_event_table(path, PRICE, type="type"))


def test_tsv_path(tmp_path):
    path = tmp_path / "events.tsv"
    small().write_csv(path, separator="\t")
    check_small(build_event_table(path, PRICE, type="type"))


def _write(df: pl.DataFrame, path: pathlib.Path) -> None:
    df.write_csv(path) if path.suffix == ".csv" else df.write_parquet(path)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("name, decoy", [("data[1]", "data1"), ("data[ab]", "dataa"), ("d?ta", "data"),
                                         ("data*", "data-all")])
def test_path_is_a_literal_file_name_not_a_glob(tmp_path, suffix, name, decoy):
    # the decoy beside it is what the name matches as a glob pattern
    path = tmp_path / f"{name}{suffix}"
    _write(small(), path)
    _write(small().with_columns(pl.col("price") + 100), tmp_path / f"{decoy}{suffix}")
    check_small(build_event_table(path, PRICE, type="type"))
    check_small(build_event_table(str(path), PRICE, type="type"))
    assert read_table(path)["price"].to_list() == small()["price"].to_list()
    q = jitcep.compile(PRICE)
    assert q.run(path, type="type").equals(q.run(small(), type="type"))


def test_directory_name_is_literal_too(tmp_path):
    (tmp_path / "parts[1]").mkdir()
    (tmp_path / "parts1").mkdir()
    small().write_parquet(tmp_path / "parts[1]" / "p.parquet")
    small().with_columns(pl.col("price") + 100).write_parquet(tmp_path / "parts1" / "p.parquet")
    check_small(build_event_table(tmp_path / "parts[1]", PRICE, type="type"))


def test_a_tilde_in_a_relative_path_is_a_directory_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").mkdir()
    small().write_parquet(tmp_path / "~" / "events.parquet")
    check_small(build_event_table("~/events.parquet", PRICE, type="type"))


def test_read_table_projects_columns(tmp_path):
    path = tmp_path / "events.parquet"
    small().write_parquet(path)
    assert read_table(path, ["price", "ts"]).columns == ["price", "ts"]
    assert read_table(small().to_arrow(), ["type"]).columns == ["type"]
    assert read_table(small(), None).columns == small().columns


def test_not_a_table():
    for bad in ([1, 2, 3], {"ts": [1]}, 42, None):
        with pytest.raises(InputFormatError, match="Polars DataFrame"):
            build_event_table(bad, PRICE)


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nope.parquet"
    with pytest.raises(InputFormatError, match="nope.parquet"):
        build_event_table(str(path), PRICE)


def test_unreadable_file_names_the_path(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"this is not parquet at all")
    with pytest.raises(InputFormatError, match="broken.parquet"):
        build_event_table(path, PRICE)
    other = tmp_path / "events.xyz"
    other.write_text("ts\n1\n")
    with pytest.raises(InputFormatError, match="events.xyz"):
        build_event_table(other, PRICE)


# --- column selection and missing columns -----------------------------------


def test_keeps_only_read_attributes():
    p = pattern(Equiv("sym"), Cmp("<", Agg("avg", "b", "vol"), Attr("a", "ts")),
                returns=(Attr("a", "*"), Attr("b", "note")))
    assert attributes_read(p) == ("sym", "vol", "note")
    df = pl.DataFrame({"ts": [1], "sym": ["s"], "vol": [1], "note": ["n"], "junk": [0]})
    t = build_event_table(df, p)
    assert sorted(t.columns) == ["note", "sym", "vol"]


def test_missing_attribute_lists_columns():
    with pytest.raises(MissingColumnError) as err:
        build_event_table(small().drop("price"), PRICE, type="type")
    msg = str(err.value)
    assert "'price'" in msg and "'unused'" in msg and "'ts'" in msg


def test_missing_equiv_attribute():
    with pytest.raises(MissingColumnError, match="'symbol'"):
        build_event_table(small(), pattern(Equiv("symbol")), type="type")
    with pytest.raises(MissingColumnError, match="'symbol'"):
        build_event_table(small(), pattern(Equiv("symbol", Lit("IBM"))), type="type")


def test_missing_time_and_type_columns():
    with pytest.raises(MissingColumnError, match="time column 'time'"):
        build_event_table(small(), PRICE, time="time")
    with pytest.raises(MissingColumnError, match="type column 'kind'"):
        build_event_table(small(), PRICE, type="kind")


def test_missing_column_in_file_is_missing_column(tmp_path):
    path = tmp_path / "events.parquet"
    small().drop("price").write_parquet(path)
    with pytest.raises(MissingColumnError, match="'price'"):
        build_event_table(path, PRICE)


def test_type_pseudo_attribute():
    p = pattern(Cmp("=", Attr("a", "type"), Lit("A")))
    t = build_event_table(small(), p, type="type")
    assert "type" in t.columns  # the input has a column called type: read as a string attribute
    assert t.value("type", 0) == "B"
    df = small().rename({"type": "kind"})
    t = build_event_table(df, p, type="kind")
    assert "type" not in t.columns and t.value("type", 0) == "B"


def test_column_ts_is_the_timestamps():
    t = build_event_table(small(), PRICE, type="type")
    ts = t.column("ts")
    assert ts.kind == "int" and ts.temporal is None and ts.valid is None
    assert ts.values.tolist() == [1, 1, 2, 3, 5]
    assert t.column("ts") is ts  # built once per table
    # a.ts is always the timestamp: an input column "ts" beside another time column is not kept
    df = small().rename({"ts": "when"}).with_columns(ts=pl.Series([9, 9, 9, 9, 9]))
    t = build_event_table(df, pattern(Cmp(">", Attr("a", "ts"), Lit(0))), time="when", type="type")
    assert "ts" not in t.columns and t.column("ts").values.tolist() == [1, 1, 2, 3, 5]


def test_column_type_is_the_type_name_unless_the_input_has_a_type_column():
    p = pattern(Cmp("=", Attr("a", "type"), Lit("A")))
    df = small().rename({"type": "kind"})
    t = build_event_table(df, p, type="kind")
    col = t.column("type")
    assert "type" not in t.columns
    assert col.kind == "str" and col.dictionary == ("A", "B", "C") and col.valid is None
    assert [col.python_value(i) for i in range(5)] == ["B", "C", "B", "A", "A"]
    assert col.strings_at(np.array([3, 0])).to_list() == ["A", "B"]
    # the input's own column called "type" wins over the type names (here: the kind column)
    t = build_event_table(df.with_columns(type=pl.Series(["p", "q", "r", "s", "t"])), p, type="kind")
    assert t.column("type") is t.columns["type"]
    assert [t.value("type", i) for i in range(5)] == ["q", "s", "t", "r", "p"]


def test_column_type_is_null_for_the_null_type_and_without_a_type_column():
    df = pl.DataFrame({"ts": [1, 2, 3], "kind": ["B", None, "A"]})
    col = build_event_table(df, None, type="kind").column("type")
    assert col.valid.tolist() == [True, False, True]
    assert [col.python_value(i) for i in range(3)] == ["B", None, "A"]
    assert col.strings_at(np.arange(3)).to_list() == ["B", None, "A"]
    col = build_event_table(df, None).column("type")  # no type column: every event has the null type
    assert col.dictionary == () and col.valid.tolist() == [False] * 3
    assert [col.python_value(i) for i in range(3)] == [None] * 3


def test_column_of_an_attribute_and_missing_names():
    t = build_event_table(small(), PRICE, type="type")
    assert t.column("price") is t.columns["price"]
    with pytest.raises(MissingColumnError) as err:
        t.column("volume")
    msg = str(err.value)
    assert "'volume'" in msg and all(f"'{a}'" in msg for a in ("ts", "type", "price"))
    with pytest.raises(MissingColumnError, match="'volume'"):
        t.value("volume", 0)


def test_partition_by_the_virtual_columns():
    t = build_event_table(small(), None, type="type")
    by_type = build_partition(t, ["type"])
    assert by_type.key_code.tolist() == [1, 2, 1, 0, 0]
    by_ts = build_partition(t, ["ts"])
    assert by_ts.key_code.tolist() == [0, 0, 1, 2, 3]
    both = build_partition(t, ["type", "ts"])  # (B,1) (C,1) (B,2) (A,3) (A,5), codes in key order
    assert both.key_code.tolist() == [2, 4, 3, 0, 1]
    with pytest.raises(MissingColumnError, match="partition attribute 'nope'"):
        build_partition(t, ["nope"])


# --- time column ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64,
                                   pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64])
def test_integer_time(dtype):
    df = pl.DataFrame({"ts": pl.Series([3, 1, 2], dtype=dtype)})
    t = build_event_table(df, None)
    assert t.ts.dtype == np.int64 and t.ts.tolist() == [1, 2, 3] and t.row.tolist() == [1, 2, 0]
    assert t.time_unit_ns is None and t.time_dtype == dtype
    assert t.type_names == () and t.type_code.tolist() == [-1, -1, -1]  # the null type


def test_uint64_beyond_int64_is_timestamp_error():
    df = pl.DataFrame({"ts": pl.Series([1, 2**63 + 5], dtype=pl.UInt64)})
    with pytest.raises(TimestampError, match="row 1"):
        build_event_table(df, None)


@pytest.mark.parametrize("values, dtype", [([1, 2**70], pl.Int128), ([1, -(2**63) - 1], pl.Int128),
                                           ([1, 2**64], pl.UInt128)], ids=["above", "below", "uint128"])
def test_int128_beyond_int64_is_timestamp_error(values, dtype):
    # a Polars cast error before (InvalidOperationError), not jitcep's
    df = pl.DataFrame({"ts": pl.Series(values, dtype=dtype)})
    with pytest.raises(TimestampError, match="row 1"):
        build_event_table(df, None)
    t = build_event_table(pl.DataFrame({"ts": pl.Series([3, -(2**63)], dtype=pl.Int128)}), None)
    assert t.ts.tolist() == [-(2**63), 3]


def test_integral_float_time():
    t = build_event_table(pl.DataFrame({"ts": [2.0, -1.0, 1e12]}), None)
    assert t.ts.tolist() == [-1, 2, 10**12]


def test_fractional_float_time_is_error():
    with pytest.raises(TimestampError, match=r"non-integral.*row 1.*time_unit"):
        build_event_table(pl.DataFrame({"ts": [1.0, 1.5, 2.25]}), None)
    with pytest.raises(TimestampError):
        build_event_table(pl.DataFrame({"ts": [1.0, float("inf")]}), None)


def test_null_and_nan_timestamps():
    with pytest.raises(TimestampError, match=r"2 null timestamp\(s\); the first is at input row 1"):
        build_event_table(pl.DataFrame({"ts": [1, None, 3, None]}), None)
    with pytest.raises(TimestampError, match="row 2"):
        build_event_table(pl.DataFrame({"ts": [1.0, 2.0, float("nan")]}), None)


def test_string_time_is_error():
    with pytest.raises(TimestampError, match="dtype String"):
        build_event_table(pl.DataFrame({"ts": ["2020-01-01", "2020-01-02"]}), None)
    with pytest.raises(TimestampError):
        build_event_table(pl.DataFrame({"ts": [True, False]}), None)


def test_date_time():
    df = pl.DataFrame({"ts": [dt.date(1970, 1, 3), dt.date(1969, 12, 31), dt.date(1970, 1, 1)]})
    t = build_event_table(df, None)
    assert t.ts.tolist() == [-1, 0, 2] and t.row.tolist() == [1, 2, 0]
    assert t.time_unit_ns == 86_400 * 10**9 and t.time_dtype == pl.Date


@pytest.mark.parametrize("unit,ns", [("ms", 10**6), ("us", 10**3), ("ns", 1)])
def test_datetime_units(unit, ns):
    base = dt.datetime(2020, 1, 1)
    df = pl.DataFrame({"ts": [base + dt.timedelta(seconds=2), base]}).with_columns(
        pl.col("ts").cast(pl.Datetime(unit)))
    t = build_event_table(df, None)
    epoch_s = 1577836800  # 2020-01-01T00:00:00Z
    assert t.ts.tolist() == [epoch_s * 10**9 // ns, (epoch_s + 2) * 10**9 // ns]
    assert t.time_unit_ns == ns


def test_datetime_with_time_zone_is_utc_instant():
    # 12:00 in Paris (UTC+1 in January) and 11:30 UTC: the UTC instant orders them, not the wall clock.
    paris = pl.Series([dt.datetime(2020, 1, 1, 12, 0)]).dt.replace_time_zone("Europe/Paris")
    utc = pl.Series([dt.datetime(2020, 1, 1, 11, 30)]).dt.replace_time_zone("UTC")
    df = pl.DataFrame({"ts": pl.concat([paris, utc.dt.convert_time_zone("Europe/Paris")])})
    t = build_event_table(df, None)
    epoch_11 = 1577876400 * 10**6  # 2020-01-01T11:00:00Z in us
    assert t.ts.tolist() == [epoch_11, epoch_11 + 30 * 60 * 10**6]
    assert t.row.tolist() == [0, 1]
    assert t.time_unit_ns == 1000


def test_pandas_datetime_with_time_zone():
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"ts": pd.to_datetime(["2020-01-01 12:00", "2020-01-01 10:30"]).tz_localize(
        "America/New_York")})
    t = build_event_table(pdf, None)
    # 10:30 New York = 15:30 UTC; 12:00 = 17:00 UTC
    first = dt.datetime(2020, 1, 1, 15, 30, tzinfo=dt.timezone.utc)
    assert t.row.tolist() == [1, 0]
    assert t.ts[0] * t.time_unit_ns == int(first.timestamp()) * 10**9
    assert t.ts[1] - t.ts[0] == 90 * 60 * 10**9 // t.time_unit_ns


def test_csv_iso_time_text_is_parsed_other_text_is_an_error_with_hint(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text("ts,x\n2020-01-01T00:00:01,1\n2020-01-01T00:00:00,2\n")
    t = build_event_table(path, None)
    assert t.row.tolist() == [1, 0] and t.ts[1] - t.ts[0] == 10**9 // t.time_unit_ns
    path.write_text("ts,x\n1 Jan 2020,1\n2 Jan 2020,2\n")
    with pytest.raises(TimestampError, match="'1 Jan 2020' at input row 0; give its format with time_format="):
        build_event_table(path, None)
    assert build_event_table(path, None, time_format="%d %b %Y").ts.tolist() == [18262, 18263]  # days
    with pytest.raises(TimestampError, match="dtype"):  # text outside a CSV file is parsed only when asked
        build_event_table(pl.DataFrame({"ts": ["2020-01-01"]}), None)


def test_time_unit_declared_and_long_forms():
    df = pl.DataFrame({"ts": [1, 2]})
    assert build_event_table(df, None, time_unit="s").time_unit_ns == 10**9
    assert build_event_table(df, None, time_unit="minutes").time_unit_ns == 60 * 10**9
    assert build_event_table(df, None).time_unit_ns is None


def test_bad_time_unit_and_contradiction():
    with pytest.raises(OptionError, match="fortnight"):
        build_event_table(pl.DataFrame({"ts": [1]}), None, time_unit="fortnight")
    df = pl.DataFrame({"ts": [dt.datetime(2020, 1, 1)]}).with_columns(pl.col("ts").cast(pl.Datetime("ms")))
    assert build_event_table(df, None, time_unit="ms").time_unit_ns == 10**6
    with pytest.raises(OptionError, match="contradicts"):
        build_event_table(df, None, time_unit="s")


# --- stable sort ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40))
def test_stable_sort_matches_python_sort(ts):
    df = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Int64), "x": pl.Series(range(len(ts)), dtype=pl.Int64)})
    t = build_event_table(df, pattern(Cmp(">", Attr("a", "x"), Lit(0))))
    expected = sorted(range(len(ts)), key=lambda i: (ts[i], i))
    assert t.row.tolist() == expected
    assert t.ts.tolist() == [ts[i] for i in expected]
    assert t.columns["x"].values.tolist() == expected  # attributes follow their rows


def test_sorted_input_keeps_row_identity():
    t = build_event_table(pl.DataFrame({"ts": [1, 1, 2, 5]}), None)
    assert t.row.tolist() == [0, 1, 2, 3]


# --- types ------------------------------------------------------------------


@pytest.mark.parametrize("cast", [pl.String, pl.Categorical, pl.Enum(["Z", "B", "A"])])
def test_type_column_string_kinds(cast):
    df = pl.DataFrame({"ts": [1, 2, 3, 4], "type": ["B", None, "A", "B"]}).with_columns(
        pl.col("type").cast(cast))
    t = build_event_table(df, None, type="type")
    assert t.type_names == ("A", "B")  # sorted distinct values that occur
    assert t.type_code.tolist() == [1, -1, 0, 1]
    assert t.type_code.dtype == np.int32


def test_integer_type_column():
    df = pl.DataFrame({"ts": [1, 2, 3], "type": [10, 9, 10]})
    t = build_event_table(df, None, type="type")
    assert t.type_names == ("10", "9")  # names are strings, sorted as strings
    assert t.type_code.tolist() == [0, 1, 0]


def test_type_column_bad_dtype():
    df = pl.DataFrame({"ts": [1, 2], "type": [1.5, 2.5]})
    with pytest.raises(AttributeTypeError, match="type column 'type'"):
        build_event_table(df, None, type="type")


def test_pattern_types_absent_from_data_are_fine():
    t = build_event_table(pl.DataFrame({"ts": [1], "type": ["C"], "price": [1.0]}), PRICE, type="type")
    assert t.type_names == ("C",)


# --- attributes -------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=40),
       st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), max_size=40), st.integers(0, 9), st.booleans())
def test_int64_and_float64_attributes_with_nulls(ints, floats, cut, chunked):
    # Int64 / Float64 columns with nulls are read from their Arrow buffers: a sliced column (its bits and
    # values from an offset), one of two chunks, a null's value (NaN, a large number) set before it was
    # nulled; the values by hand where valid (where null a Column's values are arbitrary: the buffer's own,
    # tests/test_events_null_slots.py)
    n = min(len(ints), len(floats))
    ints, floats = ints[:n], floats[:n]
    pad_i, pad_f = [2**62 + k for k in range(cut)], [float("nan")] * cut
    def column(pad, xs, dtype):
        full = pl.Series(pad + [x if x is not None else pad[0] if pad else 5 for x in xs], dtype=dtype)
        keep = pl.Series([True] * cut + [x is not None for x in xs], dtype=pl.Boolean)
        nulled = pl.select(pl.when(keep).then(full)).to_series()
        s = nulled.slice(cut)
        return s.slice(0, n // 2).append(s.slice(n // 2)) if chunked else s
    df = pl.DataFrame({"ts": pl.Series(range(n), dtype=pl.Int64), "i": column(pad_i, ints, pl.Int64), "f": column(pad_f, floats, pl.Float64)})
    t = build_event_table(df, pattern(IsNull(Attr("a", "i")), IsNull(Attr("a", "f"))))
    for name, xs, kind in (("i", ints, "int"), ("f", floats, "float")):
        c = t.columns[name]
        assert c.kind == kind and c.values.dtype == (np.int64 if kind == "int" else np.float64)
        expect_valid = [x is not None for x in xs]
        assert (c.valid is None and all(expect_valid)) or c.valid.dtype == np.bool_ and c.valid.tolist() == expect_valid
        got = [None if not ok else v for v, ok in zip(c.values.tolist(), expect_valid)]
        assert [repr(v) for v in got] == [repr(x) for x in xs]


@pytest.mark.parametrize("dtype", [pl.Int64, pl.Float64])
def test_a_nullable_column_sliced_deep_into_its_buffers_is_read_in_memory_of_the_slice(dtype):
    # a frame sliced from a large one shares its Arrow buffers at an offset: the null bits were unpacked
    # from the buffer's start (a bool per row of the parent, 2 MB here for 100 rows: a 100-row slice of a
    # 10^9-row frame held 1 GB); the values by hand, the memory by tracemalloc (numpy's allocations)
    import tracemalloc
    n, keep = 2_000_000, 100
    parent = pl.Series(range(n)).cast(dtype)
    parent = pl.select(pl.when(pl.Series(range(n)) % 3 == 0).then(None).otherwise(parent)).to_series()
    df = pl.DataFrame({"ts": pl.Series(range(n)), "x": parent}).slice(n - keep - 5, keep)
    rows = list(range(n - keep - 5, n - 5))
    build_event_table(df, pattern(IsNull(Attr("a", "x"))))  # imports and compiles on first use, untraced
    tracemalloc.start()
    try:
        t = build_event_table(df, pattern(IsNull(Attr("a", "x"))))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    c = t.columns["x"]
    assert c.valid.tolist() == [r % 3 != 0 for r in rows]
    # the values where valid (a Column's values are arbitrary where null)
    assert [v for v, ok in zip(c.values.tolist(), c.valid.tolist()) if ok] == [r for r in rows if r % 3]
    assert peak < 200_000, peak


def test_long_strings_of_a_slice_are_coded_in_memory_of_the_slice():
    # a slice of a large frame shares its string views' data buffers (ten here, 6.7 MB): the bytes of the
    # buffers its own long strings read, not of all of them, are the coding's input; the names by hand,
    # the memory by tracemalloc (numpy's allocations)
    import tracemalloc
    n, keep = 200_000, 1000
    df = pl.select(ts=pl.int_range(n), type=pl.format("SensorTypeLongName_{}", pl.int_range(n) % 7),
                   s=pl.format("attribute_value_long_string_{}", pl.int_range(n))).slice(n - keep, keep)
    p = pattern(IsNull(Attr("a", "s")))
    build_event_table(df, p, type="type")  # imports and compiles on first use, untraced
    peaks = []
    for _ in range(2):  # the lower of two: an allocation of something else in the process counts once
        tracemalloc.start()
        try:
            t = build_event_table(df, p, type="type")
            t.columns["s"].values
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert [t.type_names[c] for c in t.type_code] == [f"SensorTypeLongName_{i % 7}" for i in range(n - keep, n)]
    assert [t.columns["s"].python_value(i) for i in range(keep)] == [f"attribute_value_long_string_{i}"
                                                                    for i in range(n - keep, n)]
    assert min(peaks) < 1_000_000, peaks


def test_attribute_kinds_and_nulls():
    df = pl.DataFrame({
        "ts": [2, 1, 3],
        "i": pl.Series([7, None, -2], dtype=pl.Int16),
        "f": [1.5, 2.5, None],
        "b": [True, None, False],
        "s": ["pear", "apple", None],
        "c": pl.Series(["x", "y", "x"], dtype=pl.Categorical),
        "d": [dt.date(1970, 1, 2), dt.date(1970, 1, 1), dt.date(1970, 1, 5)],
    })
    p = pattern(*[IsNull(Attr("a", c)) for c in ("i", "f", "b", "s", "c", "d")])
    t = build_event_table(df, p)
    cols = t.columns
    assert cols["i"].kind == "int" and cols["i"].values.dtype == np.int64
    assert cols["f"].kind == "float" and cols["f"].values.dtype == np.float64
    assert cols["b"].kind == "bool" and cols["b"].values.dtype == np.bool_
    assert cols["s"].kind == "str" and cols["s"].values.dtype == np.int32
    assert cols["s"].dictionary == ("apple", "pear")
    assert cols["c"].kind == "str" and cols["c"].valid is None
    assert cols["d"].kind == "int"
    # positions: row 1, row 0, row 2
    assert [t.value("i", p) for p in range(3)] == [None, 7, -2]
    assert [t.value("f", p) for p in range(3)] == [2.5, 1.5, None]
    assert [t.value("b", p) for p in range(3)] == [None, True, False]
    assert [t.value("s", p) for p in range(3)] == ["apple", "pear", None]
    assert [t.value("c", p) for p in range(3)] == ["y", "x", "x"]
    assert [t.value("d", p) for p in range(3)] == [0, 1, 4]
    assert cols["i"].valid.tolist() == [False, True, True]
    assert cols["f"].valid.tolist() == [True, True, False]


def test_large_uint64_attribute_becomes_float():
    df = pl.DataFrame({"ts": [1, 2], "u": pl.Series([1, 2**64 - 1], dtype=pl.UInt64)})
    t = build_event_table(df, pattern(Cmp(">", Attr("a", "u"), Lit(0))))
    assert t.columns["u"].kind == "float" and t.value("u", 1) == float(2**64 - 1)


@pytest.mark.parametrize("values", [[[1, 2], [3]], [{"x": 1}, {"x": 2}]])
def test_nested_attribute_is_type_error(values):
    df = pl.DataFrame({"ts": [1, 2], "v": values})
    with pytest.raises(AttributeTypeError, match="'v'"):
        build_event_table(df, pattern(IsNull(Attr("a", "v"))))


def test_unread_nested_column_is_fine():
    df = pl.DataFrame({"ts": [1, 2], "v": [[1, 2], [3]], "price": [1, 2]})
    assert list(build_event_table(df, PRICE).columns) == ["price"]


# --- type checks ------------------------------------------------------------


TYPED = pl.DataFrame({"ts": [1, 2], "sym": ["a", "b"], "price": [1.0, 2.0], "vol": [1, 2],
                      "flag": [True, False]})

BAD_PREDICATES = [
    Cmp("=", Attr("a", "sym"), Lit(3)),                              # string attr vs number
    Cmp(">", Attr("a", "price"), Lit("10")),                         # number attr vs string
    Cmp("=", Attr("a", "sym"), Attr("b", "price")),                  # string vs numeric attribute
    Cmp(">", Arith("+", Attr("a", "sym"), Lit(1)), Lit(2)),          # arithmetic on a string
    Cmp(">", Unary("abs", Attr("a", "sym")), Lit(2)),
    In(Attr("a", "vol"), (Lit(1), Lit("two"))),
    Not(Cmp("=", Lit("x"), Attr("b", "vol"))),
    Equiv("price", Lit("IBM")),
    Cmp(">", Agg("avg", "b", "sym"), Lit(1)),
    Cmp("=", Attr("a", "flag"), Lit("yes")),
    BoolOp("or", (Cmp("<", Attr("a", "ts"), Lit("noon")), IsNull(Attr("a", "sym")))),
]


@pytest.mark.parametrize("pred", BAD_PREDICATES, ids=range(len(BAD_PREDICATES)))
def test_type_errors(pred):
    with pytest.raises(AttributeTypeError, match="predicate"):
        build_event_table(TYPED, pattern(pred))


def test_type_error_in_return():
    with pytest.raises(AttributeTypeError, match="sum"):
        build_event_table(TYPED, pattern(returns=(Agg("sum", "b", "sym"),)))


def test_type_error_names_the_attribute():
    with pytest.raises(AttributeTypeError, match=r"a\.sym"):
        build_event_table(TYPED, pattern(Cmp("=", Attr("a", "sym"), Lit(3))))


GOOD_PREDICATES = [
    Cmp("=", Attr("a", "sym"), Lit("a")),
    Cmp("<", Attr("a", "sym"), Attr("b", "sym")),
    Cmp(">", Arith("*", Attr("a", "price"), Lit(0.8)), Attr("b", "vol")),
    In(Attr("a", "sym"), (Lit("a"), Lit("b"))),
    Equiv("sym", Lit("IBM")),
    Cmp("=", Attr("a", "sym"), Lit(None)),
    Cmp("=", Attr("a", "flag"), Lit(True)),
    Cmp("=", Agg("max", "b", "sym"), Lit("z")),
    Cmp(">", Agg("count", "b"), Lit(2)),
    Cmp("=", Attr("a", "type"), Lit("A")),
]


@pytest.mark.parametrize("pred", GOOD_PREDICATES, ids=range(len(GOOD_PREDICATES)))
def test_well_typed_predicates_pass(pred):
    t = build_event_table(TYPED, pattern(pred))
    check_types(pattern(pred), t)  # callable on its own too


def test_check_can_be_skipped():
    build_event_table(TYPED, pattern(BAD_PREDICATES[0]), check=False)


# --- partitions -------------------------------------------------------------


def naive_groups(keys_by_row: list[tuple], ts: list[int], null_is_value: bool = False) -> list[list[int]]:
    """Input rows per key, groups in key order, rows in (ts, row) order: plain Python.

    Null keys are skipped, or with ``null_is_value`` a value after all others.
    """
    groups: dict[tuple, list[int]] = {}
    for r, k in enumerate(keys_by_row):
        if any(v is None for v in k) and not null_is_value:
            continue
        groups.setdefault(k, []).append(r)
    order = sorted(groups, key=lambda k: tuple((v is None, v if v is not None else 0) for v in k))
    return [sorted(groups[k], key=lambda r: (ts[r], r)) for k in order]


def partition_rows(t: EventTable) -> list[list[int]]:
    part = t.partition
    return [[int(t.row[p]) for p in part.order[part.offsets[g]:part.offsets[g + 1]]]
            for g in range(len(part.offsets) - 1)]


def test_partition_from_equivalence_key():
    df = pl.DataFrame({"ts": [4, 1, 3, 2, 1], "sym": ["B", "A", None, "B", "A"]})
    t = build_event_table(df, pattern(Equiv("sym")))
    assert t.partition.key == ("sym",)
    assert partition_rows(t) == [[1, 4], [3, 0]]
    # positions: rows 1, 4, 3, 2, 0 -> keys A, A, B, null, B
    assert t.partition.key_code.tolist() == [0, 0, 1, -1, 1]
    assert t.partition.offsets.tolist() == [0, 2, 4]
    assert t.partition.order.dtype == np.int64 and t.partition.offsets.dtype == np.int64


def test_equiv_with_value_is_not_a_key_and_partition_by_overrides():
    df = pl.DataFrame({"ts": [1, 2], "sym": ["A", "B"], "g": [1, 1]})
    assert build_event_table(df, pattern(Equiv("sym", Lit("A")))).partition is None
    t = build_event_table(df, pattern(Equiv("sym")), partition_by="g")
    assert t.partition.key == ("g",) and partition_rows(t) == [[0, 1]]
    assert "g" in t.columns


def test_equivalence_key_shared_by_patterns():
    p1 = pattern(Equiv("sym"), Equiv("venue"))
    p2 = pattern(Equiv("venue"), Cmp(">", Attr("a", "x"), Lit(1)))
    assert equivalence_key([p1]) == ("sym", "venue")
    assert equivalence_key([p1, p2]) == ("venue",)
    assert equivalence_key([p1, pattern(Equiv("other"))]) is None
    assert equivalence_key([p1, PRICE]) is None
    assert equivalence_key([]) is None


keys_st = st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["x", "y", None]),
                             st.one_of(st.none(), st.integers(0, 3))), max_size=50)


@settings(max_examples=60, deadline=None)
@given(keys_st)
def test_partition_csr_against_naive_group_by(rows):
    ts = [r[0] for r in rows]
    df = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Int64),
                       "s": pl.Series([r[1] for r in rows], dtype=pl.String),
                       "k": pl.Series([r[2] for r in rows], dtype=pl.Int64)})
    t = build_event_table(df, pattern(Equiv("s"), Equiv("k")))
    keys = [(r[1], r[2]) for r in rows]
    assert partition_rows(t) == naive_groups(keys, ts)
    # key_code agrees with the group each position landed in; null keys are -1
    for p in range(t.n):
        k = keys[t.row[p]]
        assert (t.partition.key_code[p] == -1) == (None in k)
    assert len(t.partition.order) == t.partition.offsets[-1]


@settings(max_examples=60, deadline=None)
@given(keys_st)
def test_partition_by_groups_nulls_like_group_by(rows):
    ts = [r[0] for r in rows]
    df = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Int64),
                       "s": pl.Series([r[1] for r in rows], dtype=pl.String),
                       "k": pl.Series([r[2] for r in rows], dtype=pl.Int64)})
    # the same pattern, [s] [k] as an index: null keys in no group; partition_by: null is a group
    t = build_event_table(df, pattern(Equiv("s"), Equiv("k")), partition_by=["s", "k"])
    keys = [(r[1], r[2]) for r in rows]
    assert partition_rows(t) == naive_groups(keys, ts, null_is_value=True)
    assert len(partition_rows(t)) == len(df.group_by("s", "k").len())
    assert sorted(p for g in partition_rows(t) for p in g) == list(range(len(rows)))
    assert not build_event_table(df, pattern(Equiv("s"), Equiv("k"))).partition.independent


def test_event_table_take():
    df = pl.DataFrame({"ts": [4, 1, 3, 2], "type": ["A", "B", "A", "B"], "price": [1.0, None, 3.0, 4.0],
                       "sym": ["x", "y", "x", "z"]})
    t = build_event_table(df, pattern(Cmp(">", Attr("a", "price"), Lit(0)), Equiv("sym")), type="type")
    sub = t.take(np.array([1, 3]))  # positions 1, 3 = rows 3, 0
    assert sub.row.tolist() == [3, 0] and sub.ts.tolist() == [2, 4] and sub.partition is None
    assert [sub.value("type", p) for p in range(2)] == ["B", "A"]
    assert [sub.value("price", p) for p in range(2)] == [4.0, 1.0]
    assert [sub.value("sym", p) for p in range(2)] == ["z", "x"]
    assert t.take(np.zeros(0, np.int64)).n == 0


def test_partition_by_float_and_bool_and_type():
    df = pl.DataFrame({"ts": [3, 2, 1, 0], "f": [0.5, 0.25, 0.5, None], "b": [True, False, True, True],
                       "type": ["A", "A", "B", "A"]})
    t = build_event_table(df, None, partition_by=("f", "b"), type="type")
    # partition_by: null is a value, after the others: (0.25, F) row 1; (0.5, T) rows 2, 0; (null, T) row 3
    assert partition_rows(t) == [[1], [2, 0], [3]]
    assert t.partition.independent and (t.partition.key_code >= 0).all()
    t = build_event_table(df, None, partition_by="type", type="type")
    assert partition_rows(t) == [[3, 1, 0], [2]]  # A: rows 3, 1, 0 by ts; B: row 2


def test_build_partition_unknown_attribute():
    t = build_event_table(small(), None)
    with pytest.raises(MissingColumnError, match="'sym'"):
        build_partition(t, ("sym",))


# --- windows ----------------------------------------------------------------


def table_with(unit_ns):
    t = build_event_table(pl.DataFrame({"ts": [1]}), None)
    return EventTable(t.ts, t.row, t.type_code, t.type_names, t.columns, unit_ns, t.time_dtype)


def test_window_in_column_units():
    t = table_with(None)
    assert window_span(TimeWindow(300), t) == 300
    assert window_span(TimeWindow(2.5), t) == 2  # integer diffs: diff <= 2.5 iff diff <= 2
    assert window_span(CountWindow(100), t) is None
    assert window_span(Unbounded(), t) is None
    assert window_span(None, t) is None


def test_duration_window_exact():
    ms = table_with(10**6)
    assert window_span(TimeWindow(10, "min"), ms) == 600_000
    assert window_span(TimeWindow(0.3, "s"), ms) == 300  # not 299 from binary rounding
    assert window_span(TimeWindow(1, "ms"), table_with(10**9)) == 0
    assert window_span(TimeWindow(1.5, "d"), table_with(86_400 * 10**9)) == 1
    # past the widest difference of two int64 times the span is clamped to it; below it, exact
    assert window_span(TimeWindow(10**30, "d"), table_with(1)) == 2**64 - 1
    assert window_span(TimeWindow(2**63 + 7), table_with(1)) == 2**63 + 7
    assert window_span(TimeWindow(2, "minutes"), table_with(10**9)) == 120


def test_duration_window_over_datetime_table():
    df = pl.DataFrame({"ts": [dt.datetime(2020, 1, 1)]})
    t = build_event_table(df, None)
    assert window_span(TimeWindow(5, "s"), t) == 5 * 10**9 // t.time_unit_ns


def test_window_unit_error_says_how_to_declare():
    with pytest.raises(WindowUnitError, match='time_unit="s"'):
        window_span(TimeWindow(5, "min"), table_with(None))


def test_invalid_windows():
    t = table_with(10**9)
    for bad in (TimeWindow(0), TimeWindow(-1, "s"), TimeWindow(float("nan")), TimeWindow(1, "fortnight")):
        with pytest.raises(InvalidWindowError):
            window_span(bad, t)


# --- empty input ------------------------------------------------------------


def test_empty_input():
    df = pl.DataFrame({"ts": pl.Series([], dtype=pl.Float64), "type": pl.Series([], dtype=pl.String),
                       "sym": pl.Series([], dtype=pl.String), "price": pl.Series([], dtype=pl.Float64)})
    t = build_event_table(df, pattern(Equiv("sym"), Cmp(">", Attr("a", "price"), Lit(1))), type="type")
    assert t.n == 0 and t.type_names == () and t.ts.dtype == np.int64
    assert t.partition.offsets.tolist() == [0] and len(t.partition.order) == 0
    assert t.columns["sym"].dictionary == ()


def test_empty_csv(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("ts,price\n")
    t = build_event_table(path, PRICE)
    assert t.n == 0


def test_patterns_as_list_and_extra_columns():
    p2 = pattern(Cmp("=", Attr("b", "unused"), Lit("x")))
    t = build_event_table(small(), [PRICE, p2], type="type", columns=("ts",))
    assert list(t.columns) == ["price", "unused"]


def test_attributes_read_skips_ts_and_star():
    p = pattern(Cmp(">", Attr("a", "ts"), Lit(1)), returns=(Attr("a", "*"), Agg("count", "b")))
    assert attributes_read(p) == ()
    assert attributes_read(None) == ()


def test_read_events_reads_what_the_table_needs_or_everything(tmp_path):
    path = tmp_path / "e.parquet"
    small().write_parquet(path)
    assert read_events(path, PRICE, type="type").columns == ["ts", "type", "price"]
    everything = read_events(path, PRICE, type="type", all_columns=True)
    assert everything.columns == small().columns and everything.equals(small())
    # the table built from the frame read once equals the one built from the file
    check_small(build_event_table(everything, PRICE, type="type"))
    with pytest.raises(MissingColumnError, match="partition_by column 'g'"):
        read_events(path, PRICE, all_columns=True, partition_by="g")
    with pytest.raises(OptionError):
        read_events(path / "nope.parquet", PRICE, time_unit="fortnight")  # before touching the file


def test_pathlib_in_read_table_error_uses_path(tmp_path):
    missing = pathlib.Path(tmp_path) / "x.csv"
    with pytest.raises(InputFormatError, match="x.csv"):
        read_table(missing, ["ts"])


def test_all_null_column_has_unknown_kind():
    pd = pytest.importorskip("pandas")
    pdf = pd.DataFrame({"ts": [1, 2], "note": [None, None]})
    t = build_event_table(pdf, pattern(Cmp("=", Attr("a", "note"), Lit("x"))))
    assert t.value("note", 0) is None and t.value("note", 1) is None


@pytest.mark.parametrize("n_keys", [5, 70_000])
def test_partition_large_input_paths(n_keys):
    # Exercises the radix (16-bit codes) and Polars (wide codes) sort paths and the hash-join densifier.
    rng = np.random.default_rng(n_keys)
    n = 30_000
    ts = rng.integers(0, 50, n)
    k = rng.integers(0, n_keys, n) * 7 - 3
    t = build_event_table(pl.DataFrame({"ts": ts, "k": k}), pattern(Equiv("k")))
    expected_order = sorted(range(n), key=lambda r: (k[r], ts[r], r))
    got = [int(t.row[p]) for p in t.partition.order]
    assert got == expected_order
    assert t.row.tolist() == sorted(range(n), key=lambda r: (ts[r], r))
    sizes = np.diff(t.partition.offsets)
    assert sizes.tolist() == [int((k == v).sum()) for v in np.unique(k)]


def test_directory_without_parquet_and_broken_lazyframe(tmp_path):
    with pytest.raises(InputFormatError, match="no .parquet"):
        build_event_table(tmp_path, None)
    broken = pl.LazyFrame({"ts": [1]}).select(pl.col("nope"))
    with pytest.raises(InputFormatError, match="LazyFrame"):
        build_event_table(broken, None)


def test_duration_and_decimal_time():
    df = pl.DataFrame({"ts": [dt.timedelta(seconds=3), dt.timedelta(seconds=1)]}).with_columns(
        pl.col("ts").cast(pl.Duration("ms")))
    t = build_event_table(df, None)
    assert t.ts.tolist() == [1000, 3000] and t.time_unit_ns == 10**6 and t.row.tolist() == [1, 0]
    dec = pl.DataFrame({"ts": pl.Series(["2", "1"]).cast(pl.Decimal(10, 2))})
    assert build_event_table(dec, None).ts.tolist() == [1, 2]


def test_null_type_value_is_none():
    df = pl.DataFrame({"ts": [1, 2], "kind": ["A", None]})
    t = build_event_table(df, None, type="kind")
    assert [t.value("type", p) for p in range(2)] == ["A", None]


# --- one-attribute keys (the two-pass range grouping) and categorical inputs -------------------


one_key_st = st.lists(st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(-2, 3))), max_size=50)


@settings(max_examples=60, deadline=None)
@given(one_key_st, st.sampled_from(["int", "str", "cat", "enum", "bool", "type"]), st.booleans())
def test_single_key_partition_against_naive_group_by(rows, kind, split):
    ts = [r[0] for r in rows]
    raw = [r[1] for r in rows]
    if kind == "int":
        col = pl.Series(raw, dtype=pl.Int64)
    elif kind == "bool":
        raw = [None if v is None else v > 0 for v in raw]
        col = pl.Series(raw, dtype=pl.Boolean)
    else:
        raw = [None if v is None else f"k{v}" for v in raw]
        col = pl.Series(raw, dtype=pl.String)
        if kind == "cat":
            col = col.cast(pl.Categorical)
        elif kind == "enum":
            col = col.cast(pl.Enum([f"k{v}" for v in (3, 2, 1, 0, -1, -2, 9)]))
    name = "type" if kind == "type" else "k"
    df = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Int64), name: col})
    if kind == "type":  # the type pseudo-attribute as the key (codes from the type column)
        t = build_event_table(df.rename({"type": "T"}), pattern(Equiv("type")), type="T",
                              partition_by="type" if split else None)
    else:
        t = build_event_table(df, pattern(Equiv("k")), partition_by="k" if split else None)
    keys = [(v,) for v in raw]
    assert partition_rows(t) == naive_groups(keys, ts, null_is_value=split)
    assert t.partition.independent == split
    for p in range(t.n):  # key_code is the group of each position; a null key is -1 unless split
        g = int(t.partition.key_code[p])
        if raw[t.row[p]] is None and not split:
            assert g == -1
        else:
            assert int(t.row[p]) in partition_rows(t)[g]
    assert t.partition.key_code.dtype == np.int64


def test_partition_order_is_built_on_first_use_and_pickles():
    import pickle

    df = pl.DataFrame({"ts": [3, 1, 2, 1], "k": ["b", "a", None, "b"]})
    part = build_event_table(df, pattern(Equiv("k"))).partition
    assert "order" not in vars(part)  # the compiled engine reads only key_code and offsets
    again = pickle.loads(pickle.dumps(part))
    assert part.order.tolist() == [0, 1, 3] and again.order.tolist() == [0, 1, 3]  # positions
    with pytest.raises(AttributeError):
        part.no_such_field


def test_partition_is_built_on_first_read():
    df = pl.DataFrame({"ts": [1, 2, 3, 4], "k": [5, 3, None, 5]})
    t = build_event_table(df, pattern(Equiv("k")))
    part = t.partition
    assert part.key == ("k",) and not part.independent  # known without building anything
    assert not {"key_code", "offsets", "order"} & set(vars(part))
    assert part.offsets.tolist() == [0, 1, 3] and part.key_code.tolist() == [1, 0, -1, 1]
    assert part.order.tolist() == [1, 0, 3]
    eager = build_partition(t, ("k",))
    assert eager.key_code.tolist() == part.key_code.tolist() and eager.order.tolist() == part.order.tolist()


@pytest.mark.parametrize("ts", [[1, 2, 2, 5], [2, 1, 2, 5]])
def test_row_of_sorted_input_is_filled_on_first_read(ts):
    import pickle

    t = build_event_table(pl.DataFrame({"ts": ts, "x": [1, 2, 3, 4]}), pattern())
    assert ("row" in vars(t)) == (ts != sorted(ts))  # sorted: the identity, left to first read
    again = pickle.loads(pickle.dumps(t))
    expected = np.argsort(np.array(ts), kind="stable").tolist()
    assert t.row.dtype == np.int64 and t.row.tolist() == expected and again.row.tolist() == expected
    assert t.take(np.array([1, 3])).row.tolist() == expected[1::2]
    fresh = build_event_table(pl.DataFrame({"ts": ts, "x": [1, 2, 3, 4]}), pattern())
    got = fresh.input_rows(np.array([3, 0, 3]))
    assert got.dtype == np.int64 and got.tolist() == [expected[3], expected[0], expected[3]]
    with pytest.raises(AttributeError):
        t.no_such_field


@pytest.mark.parametrize("flavour", ["str", "long_str", "cat", "enum"])
def test_string_flavours_give_the_same_table(flavour):
    rng = np.random.default_rng(3)
    n = 5000
    types = [f"T{i}" for i in rng.integers(0, 7, n)]
    keys = [None if i == 0 else f"sym{i}" for i in rng.integers(0, 40, n)]
    if flavour == "long_str":  # longer than 12 bytes: not inline in the Arrow view, hashed instead
        types = [t + "-a-long-suffix" for t in types]
        keys = [None if k is None else k + "-a-long-suffix" for k in keys]
    df = pl.DataFrame({"ts": rng.integers(0, 100, n), "type": types, "k": keys})
    if flavour == "cat":
        df = df.with_columns(pl.col("type", "k").cast(pl.Categorical))
    elif flavour == "enum":
        df = df.with_columns(pl.col(c).cast(pl.Enum(sorted(set(df[c].drop_nulls()))[::-1])) for c in ("type", "k"))
    t = build_event_table(df, pattern(Equiv("k")), type="type")
    assert list(t.type_names) == sorted(set(types))
    assert [t.type_names[c] for c in t.type_code] == [types[r] for r in t.row]
    col = t.columns["k"]
    assert list(col.dictionary) == sorted({k for k in keys if k is not None})
    assert [col.python_value(p) for p in range(t.n)] == [keys[r] for r in t.row]
    assert partition_rows(t) == naive_groups([(k,) for k in keys], df["ts"].to_list())


@pytest.mark.parametrize("many", [0, 100])
@pytest.mark.parametrize("sort_max", [1, 3, 63, 64, 4096])
def test_string_columns_code_with_few_strings_sorted_by_either_sort(sort_max, many):
    # a String column's first strings are sorted by Python up to config.PY_SORT_MAX, else by Polars; up to
    # 64 of them are read one by one (events.coding._FEW_SCALARS), more by one indexing call: a list that
    # Polars' branch cannot sort when the bound is under 64 (AttributeError: 'list' object has no attribute
    # 'arg_sort'); ``many`` more distinct types reach the indexing call
    from unittest import mock
    from jitcep import config
    types = ["é", "B", "A", "C", "B", "", "Z", "A"] + [f"T{i}" for i in (5, 70, 3)]
    types += [f"U{i * 7919 % 1000}" for i in range(many)]
    keys = [None, "q", "p", "q", "r", "p", None, "x", "p", "r", "q"] + ["p"] * many
    df = pl.DataFrame({"ts": list(range(len(types))), "type": types, "k": keys})
    with mock.patch.object(config, "PY_SORT_MAX", sort_max):
        t = build_event_table(df, pattern(Equiv("k")), type="type")
    assert list(t.type_names) == sorted(set(types))
    assert [t.type_names[c] for c in t.type_code] == types
    assert list(t.columns["k"].dictionary) == ["p", "q", "r", "x"]
    assert [t.columns["k"].python_value(p) for p in range(t.n)] == df["k"].to_list()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([None, "a", "bb", "a-long-string-13", "é", ""])),
                max_size=30), st.integers(1, 3), st.sampled_from(["str", "cat", "enum"]), st.data())
def test_deferred_string_column_codes_on_first_read(rows, n_chunks, flavour, data):
    # a string attribute is coded when first read, as the eager coding would; codes_at gives the
    # same grouping of values at any positions, coding only those rows (String) or reading category
    # ids (Categorical, Enum: labels) while the column is not coded
    import pickle

    ts = [t for t, _ in rows]
    ks = [k for _, k in rows]
    size = max(1, len(rows) // n_chunks)
    parts = [pl.DataFrame({"ts": ts[i:i + size], "k": ks[i:i + size]}, schema={"ts": pl.Int64, "k": pl.String})
             for i in range(0, len(rows), size)] or [pl.DataFrame(schema={"ts": pl.Int64, "k": pl.String})]
    df = pl.concat(parts, rechunk=False)
    if flavour == "cat":
        df = df.with_columns(pl.col("k").cast(pl.Categorical))
    elif flavour == "enum":
        df = df.with_columns(pl.col("k").cast(pl.Enum(sorted({k for k in ks if k is not None}, reverse=True))))
    order = sorted(range(len(rows)), key=lambda r: ts[r])  # positions -> input rows (stable)
    with_value = [p for p in range(len(rows)) if ks[order[p]] is not None]
    pos = np.array(data.draw(st.lists(st.sampled_from(with_value), max_size=20)) if with_value else [],
                   dtype=np.int64)
    t = build_event_table(df, pattern(Equiv("k")))
    first = build_event_table(df, pattern(Equiv("k"))).columns["k"]  # codes_at before anything else
    got, k = first.codes_at(pos)
    assert all((a == b) == (ks[order[p]] == ks[order[q]]) for a, p in zip(got, pos) for b, q in zip(got, pos))
    assert all(0 <= c < k for c in got.tolist())
    assert pickle.loads(pickle.dumps(first)).__dict__.keys() <= first.__dict__.keys() - {"_chunks", "_words"}
    col = t.columns["k"]
    assert col.kind == "str" and not col.coded
    assert col.string_input == (flavour == "str")
    labels = col.labels()  # category ids, or first-occurrence codes of short strings
    if flavour == "str" and any(k is not None and len(k.encode()) > 12 for k in ks):
        assert labels is None  # a long string: no labels without the dictionary
    else:  # equal values, equal labels
        ids, size = labels
        assert len(ids) == len(rows) and all(0 <= i < size for i in ids.tolist() if i >= 0)
        assert all((ids[p] == ids[q]) == (ks[order[p]] == ks[order[q]]) for p in with_value for q in with_value)
    assert not col.coded
    assert [bool(v) for v in (col.valid if col.valid is not None else [True] * len(rows))] == \
        [ks[r] is not None for r in order]
    codes, k = col.codes_at(pos)
    expected = [ks[order[p]] for p in pos]
    every = np.arange(len(rows))
    assert col.strings_at(every).to_list() == [ks[r] for r in order]  # from the input series
    assert len(codes) == len(pos) and all(0 <= c < k for c in codes.tolist())
    assert all((a == b) == (x == y) for a, x in zip(codes, expected) for b, y in zip(codes, expected))
    again = pickle.loads(pickle.dumps(t.columns["k"]))
    for c in (col, again):  # first read codes the column against its sorted dictionary
        assert list(c.dictionary) == sorted({x for x in ks if x is not None})
        assert [c.python_value(p) for p in range(len(rows))] == [ks[r] for r in order]
    assert col.coded and col.labels() is None and not col.string_input
    after, k2 = col.codes_at(pos)  # now the dictionary codes
    assert k2 == len(col.dictionary) and [col.dictionary[c] for c in after] == expected
    assert col.strings_at(every).to_list() == [ks[r] for r in order]  # decoded
    with pytest.raises(AttributeError):
        col.no_such_field


_LONG_NAMES = ["SharedPrefix_abcdefgh_" + t for t in ("", "x", "xx", "y", "é", "LongerTail_LongerTail_")] + ["é", "x", "", "SharedPr"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["TypeNameNumber_A_long", "TypeNameNumber_B_long", "C", None]),
                          st.one_of(st.none(), st.sampled_from(_LONG_NAMES))), min_size=2, max_size=30),
       st.sampled_from(["<", "=", ">=", "!="]), st.sampled_from(["plain", "cat", "large", "slice", "chunks"]),
       st.sampled_from([1, 4096]), st.sampled_from([0, 1 << 14]))
def test_long_strings_compare_by_their_bytes_in_both_engines(rows, op, flavour, codes_max, exact_max):
    # type names and attribute strings past 12 bytes (coded from their Arrow views or by hash, sharing 8-byte
    # prefixes, non-ASCII, nulls) in a predicate: both engines read the one event table, so the oracle here
    # is Python's byte order on the input's strings, for each pair of consecutive events
    import pyarrow as pa
    from unittest import mock
    from jitcep import config
    lead = 3 if flavour == "slice" else 0
    rows = [("C", None)] * lead + rows
    df = pl.DataFrame({"type": [t for t, _ in rows], "ts": list(range(len(rows))), "s": [s for _, s in rows]},
                      schema={"type": pl.String, "ts": pl.Int64, "s": pl.String})
    if flavour == "cat":
        df = df.with_columns(pl.col("type", "s").cast(pl.Categorical))
    elif flavour == "large":
        df = pl.from_arrow(pa.table({c: df[c].to_arrow().cast(pa.large_string()) if c != "ts" else df[c].to_arrow()
                                     for c in df.columns}))
    elif flavour == "slice":
        df = df.slice(lead)
    elif flavour == "chunks":
        df = pl.concat([df.slice(0, len(rows) // 2), df.slice(len(rows) // 2)], rechunk=False)
    rows = rows[lead:] if flavour == "slice" else rows
    cmp = {"<": lambda x, y: x < y, "=": lambda x, y: x == y, ">=": lambda x, y: x >= y, "!=": lambda x, y: x != y}[op]
    want = [(i, i + 1) for i in range(len(rows) - 1)
            if (rows[i][0], rows[i + 1][0]) == ("TypeNameNumber_A_long", "TypeNameNumber_B_long")
            and rows[i][1] is not None and rows[i + 1][1] is not None
            and cmp(rows[i][1].encode(), rows[i + 1][1].encode())]
    q = jitcep.compile(f"PATTERN SEQ(TypeNameNumber_A_long a, TypeNameNumber_B_long b) WHERE a.s {op} b.s "
                       "WITHIN 2 EVENTS")
    with mock.patch.multiple(config, LONG_VIEW_CODES_MAX=codes_max, STRING_EXACT_MAX=exact_max):
        for engine in ("compiled", "reference"):
            got = q.run(df, type="type", engine=engine)
            assert [(r["a"]["row"], r["b"]["row"]) for r in got.to_dicts()] == want, engine
