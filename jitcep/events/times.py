"""Time: units, the time column as int64, temporal attributes, and windows in ts units.

- :func:`normalize_unit`: the unit names accepted by ``time_unit=`` and windows.
- :func:`parse_time_strings`: a text time column (CSV) parsed to Date / Datetime.
- :func:`_time_values`: the time column as int64 plus nanoseconds per unit,
  with the rules for floats, nulls and temporal dtypes.
- temporal attributes (semantics §4): their kinds (:func:`_temporal_kind`) and
  one unit per kind (:func:`_one_time_unit`).
- :func:`window_span`: a TimeWindow as an exact integer span in ts units.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ..errors import AttributeTypeError, InvalidWindowError, OptionError, TimestampError, WindowUnitError
from ..kernels import encode as _enc
from ..kernels.window import MAX_SPAN
from ..pattern.ast import UNIT_NS, CountWindow, TimeWindow, Unbounded
from ..pattern.kinds import INT64_MAX, INT64_MIN
from .column import Column, fits_int64

if TYPE_CHECKING:  # annotations only: the table module imports this one
    from .table import EventTable


# Long forms accepted wherever a unit is named (``time_unit=``, TimeWindow.unit).
_UNIT_ALIASES = {
    "ns": "ns", "nanosecond": "ns", "nanoseconds": "ns",
    "us": "us", "µs": "us", "microsecond": "us", "microseconds": "us",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
}
_POLARS_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000}


def normalize_unit(unit: str) -> str:
    """Canonical short unit name (``"minutes"`` -> ``"min"``); unknown -> OptionError."""
    key = unit.strip().lower() if isinstance(unit, str) else unit
    if key not in _UNIT_ALIASES:
        raise OptionError(f"unknown time unit {unit!r}; use one of {', '.join(UNIT_NS)}")
    return _UNIT_ALIASES[key]


# strftime directives that carry a time of day (or an instant): a format without them parses to a Date
_TIME_OF_DAY = re.compile(r"%[-.0-9]*[HIklMSTRfpPsczZ+]")


def parse_time_strings(name: str, s: pl.Series, time_format: str | None) -> pl.Series:
    """A String time column parsed to Date or Datetime (a CSV file's time column arrives as text).

    With ``time_format`` (strftime directives, e.g. ``"%d/%m/%Y %H:%M"``): a
    Date when the format has no time-of-day directive, else a Datetime (zoned
    when it reads an offset, ``%z``).  Without it the format is inferred from
    the first value: ISO dates (``2013-01-01``) give a Date, ISO date-times
    (``2013-01-01 05:17``, ``...T05:17:00Z``) a Datetime.  Raises
    TimestampError naming the first value that does not parse.
    """
    if time_format is not None:
        to = s.str.to_datetime if _TIME_OF_DAY.search(time_format) else s.str.to_date
        attempts = [lambda: to(time_format, strict=False)]
    else:
        attempts = [lambda: s.str.to_date(strict=False), lambda: s.str.to_datetime(strict=False)]
    best = None
    for attempt in attempts:
        try:
            out = attempt()
        except pl.exceptions.PolarsError:  # no format could be inferred from the values
            continue
        if out.null_count() == s.null_count():
            return out
        best = best if best is not None and best.null_count() <= out.null_count() else out
    unparsed = s.is_not_null() if best is None else s.is_not_null() & best.is_null()
    p = _first_row(unparsed.to_numpy())
    how = (f"with time_format={time_format!r}" if time_format is not None
           else "as an ISO date or date-time (2013-01-01, 2013-01-01 05:17:00)")
    raise TimestampError(f"time column {name!r} holds text that does not parse {how}: {s[p]!r} at input row "
                         f"{p}; give its format with time_format= (CLI: --time-format), e.g. '%d/%m/%Y %H:%M'")


def _temporal_physical(s: pl.Series) -> pl.Series:
    """Physical int64 values: Date in days, Datetime / Duration in their unit, Time in ns.

    A Datetime with a time zone is stored by Polars as the UTC instant, so its
    physical value already is the instant in UTC.  A cast to Int64 gives the
    physical values (``to_physical`` is a Polars query: ~60 us a call, a
    fixed cost of every run).
    """
    return s.cast(pl.Int64)


def _temporal_kind(dtype) -> tuple[str, int] | None:
    """(temporal kind, nanoseconds per stored unit) of a temporal dtype (semantics §4); None otherwise."""
    if dtype == pl.Date:
        return "datetime", 86_400 * 10**9  # a day: midnight of it, comparable with naive datetimes
    if isinstance(dtype, pl.Datetime):
        return ("datetime_tz" if dtype.time_zone else "datetime"), _POLARS_UNIT_NS[dtype.time_unit]
    if isinstance(dtype, pl.Duration):
        return "duration", _POLARS_UNIT_NS[dtype.time_unit]
    if dtype == pl.Time:
        return "time", 1
    return None


def _one_time_unit(cols: dict[str, Column], dtypes: dict[str, object]) -> None:
    """Store every temporal attribute of a kind in the finest unit of that kind, in place (semantics §4).

    Equal stored numbers are then equal instants (spans): a Datetime[ms] next
    to a Datetime[ns], a Date next to a Datetime.  A value int64 cannot hold
    in that unit raises AttributeTypeError naming both columns.
    """
    units = {a: _temporal_kind(dtypes[a]) for a, c in cols.items() if c.temporal is not None}
    for kind in set(k for k, _ in units.values()):
        mine = {a: u for a, (k, u) in units.items() if k == kind}
        finest = min(mine.values())
        for a, unit in mine.items():
            if unit == finest:
                continue
            col, factor = cols[a], unit // finest
            got = _enc.value_range(col.values, col.valid)
            if got is not None and (got[0] * factor < INT64_MIN or got[1] * factor > INT64_MAX):
                other = next(b for b, u in mine.items() if u == finest)
                raise AttributeTypeError(
                    f"attribute {a!r} ({dtypes[a]}) holds values that int64 cannot hold in the unit of "
                    f"attribute {other!r} ({dtypes[other]}), so the two cannot be compared exactly; cast "
                    f"{other!r} to a coarser unit (e.g. pl.col({other!r}).dt.cast_time_unit(\"us\"))")
            cols[a] = Column(col.kind, col.values * np.int64(factor), col.valid, col.dictionary, col.temporal)


def _first_row(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _time_values(name: str, s: pl.Series, time_unit: str | None) -> tuple[np.ndarray, int | None]:
    """The time column as int64 plus nanoseconds per unit (None: numeric, undeclared).

    Rules: integers as they are; floats only when every value is integral
    (timestamps are compared exactly, so a fractional value would be silently
    rounded otherwise); Date in days, Datetime / Duration in their own unit
    (time zones: the UTC instant).  ``time_unit=`` declares the unit of a
    numeric column; over a temporal column the dtype already fixes it.
    """
    dtype = s.dtype
    if len(s) == 0 and dtype in (pl.String, pl.Null):  # e.g. a header-only CSV: nothing to misread
        # text that gives no format gives no unit either: any will do for no events (semantics section 1)
        return np.zeros(0, np.int64), UNIT_NS[normalize_unit(time_unit)] if time_unit is not None else 1
    n_null = s.null_count()
    if dtype.is_float():  # NaN is a missing timestamp too
        s = s.fill_nan(None)
        n_null = s.null_count()
    if n_null:
        null = s.is_null().to_numpy()
        raise TimestampError(f"time column {name!r} has {n_null} null timestamp(s); "
                             f"the first is at input row {_first_row(null)}")
    if dtype.is_temporal():
        if dtype == pl.Time:
            raise TimestampError(f"time column {name!r} is a time of day ({dtype}); "
                                 f"use a Datetime or a number")
        unit_ns = 86_400_000_000_000 if dtype == pl.Date else _POLARS_UNIT_NS[dtype.time_unit]
        if time_unit is not None and UNIT_NS[normalize_unit(time_unit)] != unit_ns:
            raise OptionError(f"time_unit={time_unit!r} contradicts the time column {name!r} of dtype "
                              f"{dtype}, whose unit is fixed by its type; leave time_unit out")
        return np.ascontiguousarray(_temporal_physical(s).to_numpy(), dtype=np.int64), unit_ns
    unit_ns = UNIT_NS[normalize_unit(time_unit)] if time_unit is not None else None
    if dtype.is_integer():
        if not fits_int64(s):  # nulls were refused above
            bad = ((s > INT64_MAX) | (s < INT64_MIN) if dtype.is_signed_integer() else s > INT64_MAX).to_numpy()
            raise TimestampError(f"time column {name!r} has values beyond int64 (first at input row "
                                 f"{_first_row(bad)}); rebase or scale the timestamps")
        return np.ascontiguousarray(s.cast(pl.Int64).to_numpy(), dtype=np.int64), unit_ns
    if dtype.is_float() or dtype.is_decimal():
        v = s.cast(pl.Float64).to_numpy()
        bad = ~np.isfinite(v) | (v != np.floor(v)) | (np.abs(v) >= 2.0 ** 63)
        if bad.any():
            p = _first_row(bad)
            raise TimestampError(
                f"time column {name!r} has {int(bad.sum())} non-integral timestamp(s) (first: {v[p]!r} "
                f"at input row {p}); timestamps are compared exactly as int64: scale them to an integer "
                f"unit (e.g. milliseconds) and pass time_unit=, or cast to a Datetime")
        return v.astype(np.int64), unit_ns
    raise refused_time_dtype(name, dtype)


def refused_time_dtype(name: str, dtype: pl.DataType) -> TimestampError:
    """The error for a time column of a dtype that holds no timestamps (text not parsed, semantics section 1)."""
    return TimestampError(f"time column {name!r} has dtype {dtype}; timestamps must be integers, "
                          f"integral floats, Date or Datetime (parse strings with "
                          f"pl.col({name!r}).str.to_datetime())")


def window_span(window, table: "EventTable") -> int | None:
    """A TimeWindow in the table's ts units, as an int; None for CountWindow / Unbounded / None.

    Windows are inclusive (``max ts - min ts <= span``, DESIGN.md section 2)
    and timestamps are int64, so ``diff <= d`` holds exactly when
    ``diff <= floor(d)``: the span is ``floor(d)`` computed with exact
    rational arithmetic (a float amount is taken as its shortest decimal
    repr, so ``0.3 s`` over ms timestamps is exactly 300).  Spans from
    ``2**64 - 1`` up (the largest difference of two int64 timestamps,
    :data:`jitcep.kernels.window.MAX_SPAN`) are clamped to it: every pair
    fits under it.  Spans between int64's maximum and it are kept exactly
    (a Python int): times at the int64 extremes are farther apart than int64.

    A duration (``WITHIN 5 minutes``) needs the ts unit: Date/Datetime columns
    carry it, numeric columns need ``time_unit=`` (else WindowUnitError).
    """
    if window is None or isinstance(window, (CountWindow, Unbounded)):
        return None
    if not isinstance(window, TimeWindow):
        raise TypeError(f"not a window: {window!r}")
    key = (window, table.time_unit_ns)
    span = _SPANS.get(key)
    if span is None:
        if len(_SPANS) >= 64:
            _SPANS.clear()
        span = _SPANS[key] = _span(window, table.time_unit_ns)
    return span


_SPANS: dict = {}  # (window, ts unit) -> span: exact rational arithmetic, ~40 us in a run, asked for every run


def _span(window: TimeWindow, time_unit_ns) -> int:
    amount = window.amount
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) \
            or amount <= 0:
        raise InvalidWindowError(f"window must be a positive finite number, got {amount!r}")
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(float(amount)))
    if window.unit is not None:
        try:
            unit = normalize_unit(window.unit)
        except OptionError as exc:
            raise InvalidWindowError(str(exc)) from None
        if time_unit_ns is None:
            raise WindowUnitError(
                f"WITHIN {amount} {window.unit} is a duration, but the time column is numeric and its "
                f"unit was not declared; declare it with time_unit= (e.g. run(..., time_unit=\"s\") "
                f"when timestamps are seconds), or write the window in the column's own units "
                f"(WITHIN {amount} without a unit)")
        exact = exact * UNIT_NS[unit] / time_unit_ns
    return min(math.floor(exact), MAX_SPAN)
