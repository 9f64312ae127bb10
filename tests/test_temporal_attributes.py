"""Temporal attributes compare as what they denote, whatever their units (docs/semantics.md §4).

Expected matches are written by hand, or computed below from the values as
Python ints of nanoseconds (an oracle independent of the engine's unit
conversion); every test runs on both engines (tests/conftest.py).
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jitcep.errors import AttributeTypeError
from semantic_helpers import M, matches

T0 = dt.datetime(2020, 1, 1)


def frame(**cols) -> pl.DataFrame:
    """type / ts columns A0, B1 (ts 0, 1) plus the given two-element temporal columns."""
    return pl.DataFrame({"type": ["A", "B"], "ts": [0, 1], **cols})


def test_datetimes_of_different_units_compare_as_instants():
    # a.t is half a second after T0 in ns, b.u one second after T0 in ms: as raw numbers a.t is a
    # million times larger, as instants it is earlier
    df = frame(t=pl.Series([T0 + dt.timedelta(seconds=0.5)] * 2, dtype=pl.Datetime("ns")),
               u=pl.Series([T0 + dt.timedelta(seconds=1)] * 2, dtype=pl.Datetime("ms")))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.t < b.u WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.t >= b.u WITHIN 10", df) == M()


def test_a_date_is_midnight_of_its_day():
    df = frame(d=pl.Series([dt.date(2020, 1, 2)] * 2, dtype=pl.Date),
               t=pl.Series([dt.datetime(2020, 1, 2), dt.datetime(2020, 1, 2, 0, 0, 1)], dtype=pl.Datetime("us")))
    # b.t of B1 is one second past midnight of a.d; a.t of A0 is that midnight
    assert matches("PATTERN SEQ(A a, B b) WHERE a.d < b.t WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE b.d = a.t WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE b.d = b.t WITHIN 10", df) == M()


def test_zoned_datetimes_compare_as_instants_across_zones():
    paris = pl.Series([dt.datetime(2020, 1, 1, 13, 0)] * 2).dt.replace_time_zone("Europe/Paris")
    utc = pl.Series([dt.datetime(2020, 1, 1, 12, 0)] * 2).dt.replace_time_zone("UTC").dt.cast_time_unit("ms")
    df = frame(z=paris, w=utc)
    # 13:00 in Paris (UTC+1 in January) is 12:00 UTC
    assert matches("PATTERN SEQ(A a, B b) WHERE a.z = b.w WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.z < b.w WITHIN 10", df) == M()


def test_durations_of_different_units_compare_as_spans():
    df = frame(p=pl.Series([dt.timedelta(milliseconds=1500)] * 2, dtype=pl.Duration("ns")),
               q=pl.Series([dt.timedelta(seconds=2)] * 2, dtype=pl.Duration("ms")))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.p < b.q WITHIN 10", df) == M((0, 1))


def test_equivalence_over_a_temporal_attribute():
    df = pl.DataFrame({"type": ["A", "B", "B"], "ts": [0, 1, 2],
                       "t": pl.Series([T0, T0, T0 + dt.timedelta(microseconds=1)], dtype=pl.Datetime("us"))})
    assert matches("PATTERN SEQ(A a, B b) WHERE [t] WITHIN 10", df) == M((0, 1))


@pytest.mark.parametrize("where", [
    "a.t > 5",                      # a plain number
    "a.t = b.x",                    # a number attribute
    "a.t < b.ts",                   # a.ts is a number in time-column units
    "a.t = b.z",                    # a naive datetime and a zoned one
    "a.t < b.p",                    # an instant and a span
    "b.t - a.t < 5",                # arithmetic on instants
    "abs(a.p) < b.p",               # arithmetic on a span
    "a.t IN (1, 2)",                # no temporal literals
    "a.t = 'x'",
    "[t = 3]",
])
def test_temporal_attribute_with_another_kind_is_a_type_error(where):
    df = pl.DataFrame({"type": ["B", "B"], "ts": [0, 1], "x": [1, 2],
                       "t": pl.Series([T0, T0], dtype=pl.Datetime("us")),
                       "z": pl.Series([T0, T0]).dt.replace_time_zone("UTC"),
                       "p": pl.Series([dt.timedelta(1)] * 2, dtype=pl.Duration("us"))})
    # no A event at all: the error comes from the types before any match is searched, not from a value
    with pytest.raises(AttributeTypeError):
        matches(f"PATTERN SEQ(A a, B b) WHERE {where} WITHIN 10", df)


def test_sum_of_a_temporal_kleene_attribute_is_a_type_error_and_min_an_instant():
    df = pl.DataFrame({"type": ["A", "B", "B"], "ts": [0, 1, 2],
                       "t": pl.Series([T0, T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=2)],
                                      dtype=pl.Datetime("ms")),
                       "d": pl.Series([dt.date(2020, 1, 1)] * 3, dtype=pl.Date)})
    with pytest.raises(AttributeTypeError):
        matches("PATTERN SEQ(A a, B+ b[]) WHERE sum(b.t) > 0 WITHIN 10", df)
    # min over the list is an instant: the lists whose first member is more than an hour past a.d
    assert matches("PATTERN SEQ(A a, B+ b[]) WHERE min(b.t) > a.d WITHIN 10", df) == \
        M((0, (1,)), (0, (2,)), (0, (1, 2)))
    assert matches("PATTERN SEQ(A a, B+ b[]) WHERE min(b.t) > b[1].t WITHIN 10", df) == M()


def test_instant_that_int64_cannot_hold_in_the_finest_unit_is_a_type_error():
    # a Date in 1500 is before the earliest Datetime[ns] (1677): not comparable exactly with one
    df = frame(d=pl.Series([dt.date(1500, 1, 1)] * 2, dtype=pl.Date),
               t=pl.Series([T0] * 2, dtype=pl.Datetime("ns")))
    with pytest.raises(AttributeTypeError, match="'d'.*'t'"):
        matches("PATTERN SEQ(A a, B b) WHERE a.d < b.t WITHIN 10", df)
    # in microseconds it fits: compared exactly
    df = frame(d=pl.Series([dt.date(1500, 1, 1)] * 2, dtype=pl.Date),
               t=pl.Series([T0] * 2, dtype=pl.Datetime("us")))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.d < b.t WITHIN 10", df) == M((0, 1))


# --- generated: any units, compared against Python ints of nanoseconds ------------------------------

_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000}
_DTYPES = [pl.Datetime("ns"), pl.Datetime("us"), pl.Datetime("ms"), pl.Date]


def _ns(value, dtype) -> int | None:
    """Nanoseconds since the epoch as a Python int, from the column's own stored number."""
    if value is None:
        return None
    return value * 86_400 * 10**9 if dtype == pl.Date else value * _NS[dtype.time_unit]


@st.composite
def instants(draw, dtype):
    """A stored number of ``dtype`` within Datetime[ns]'s range (so every pair is comparable), or null."""
    if draw(st.integers(0, 9)) == 0:
        return None
    if dtype == pl.Date:
        return draw(st.integers(-106_000, 106_000))  # days
    per = _NS[dtype.time_unit]
    base = draw(st.sampled_from([0, 1_600_000_000 * 10**9]))
    # near a shared base, so that equal and adjacent instants come up often
    return (base + draw(st.integers(-3, 3)) * draw(st.sampled_from([1, 1_000, 1_000_000, 86_400 * 10**9]))) // per


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES), st.sampled_from(["<", "<=", "=", "!=", ">"]), st.data())
def test_generated_instants_of_any_units_compare_as_python_ints(d1, d2, op, data):
    n = data.draw(st.integers(1, 6))
    types = data.draw(st.lists(st.sampled_from("AB"), min_size=n, max_size=n))
    v1 = [data.draw(instants(d1)) for _ in range(n)]
    v2 = [data.draw(instants(d2)) for _ in range(n)]
    df = pl.DataFrame({"type": types, "ts": list(range(n)),
                       "t1": pl.Series(v1, dtype=pl.Int64 if d1 != pl.Date else pl.Int32).cast(d1),
                       "t2": pl.Series(v2, dtype=pl.Int64 if d2 != pl.Date else pl.Int32).cast(d2)})
    cmp = {"<": int.__lt__, "<=": int.__le__, "=": int.__eq__, "!=": int.__ne__, ">": int.__gt__}[op]
    want = [(i, j) for i in range(n) for j in range(i + 1, n) if types[i] == "A" and types[j] == "B"
            and v1[i] is not None and v2[j] is not None and cmp(_ns(v1[i], d1), _ns(v2[j], d2))]
    assert matches(f"PATTERN SEQ(A a, B b) WHERE a.t1 {op} b.t2 WITHIN 100", df) == M(*want)


def test_each_engine_checks_the_kinds_itself_before_matching(engine):
    # a table built without the builder's type check: each engine still refuses before any match
    from jitcep import reference, runtime
    from jitcep.events import build_event_table
    from jitcep.options import Options
    from jitcep.pattern import parse

    df = pl.DataFrame({"type": ["B"], "ts": [0], "t": pl.Series([T0], dtype=pl.Datetime("us"))})
    p = parse("PATTERN SEQ(A a, B b) WHERE b.t > 5 WITHIN 10")
    table = build_event_table(df, [p], type="type", check=False)
    evaluate = reference.evaluate if engine == "reference" else runtime.evaluate
    with pytest.raises(AttributeTypeError, match="a datetime"):
        evaluate([p], table, Options())


def test_the_output_gives_every_temporal_attribute_and_time_column_back_as_the_input_holds_it():
    # the output gathers a temporal column through its physical integers (jitcep.output.values._take_series) and
    # the event table reads a temporal time column the same way: the values at the matched rows, dtypes kept
    import jitcep
    n = 6
    df = pl.DataFrame({
        "type": ["A", "B"] * 3,
        "ts": pl.Series([T0 + dt.timedelta(minutes=3 * i) for i in range(n)]).dt.replace_time_zone("Asia/Tokyo"),
        "d": pl.Series([dt.date(1969, 12, 30 - i) for i in range(n)], dtype=pl.Date),
        "z": pl.Series([T0 + dt.timedelta(microseconds=7 * i) for i in range(n)],
                       dtype=pl.Datetime("us")).dt.replace_time_zone("Europe/Paris"),
        "p": pl.Series([dt.timedelta(milliseconds=-1500 * i) for i in range(n)], dtype=pl.Duration("ms")),
        "t": pl.Series([dt.time(1, 2, i) for i in range(n)], dtype=pl.Time),
    })
    out = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5 minutes RETURN a, b").run(df, type="type")
    assert out.height == 3  # each A with the B three minutes after it (hand count)
    for v in "ab":
        got = out[v].struct.unnest()
        rows = got["row"].to_list()
        assert rows == ([0, 2, 4] if v == "a" else [1, 3, 5])
        for c in ("ts", "d", "z", "p", "t"):
            assert got[c].dtype == df[c].dtype and got[c].to_list() == df[c].gather(rows).to_list()
