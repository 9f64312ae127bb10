"""A nullable Int64 / Float64 column's values where null are whatever its Arrow buffer holds
(``events.table._with_nulls`` keeps the buffer; :class:`jitcep.events.column.Column`: "arbitrary where
null"): every reader tests validity first, so a frame whose null slots hold NaN, infinities or extreme
integers (values set before they were nulled, as Polars' ``when/then`` leaves them) gives the matches the
reference evaluator finds on the same events with clean null slots.  The patterns read the nullable columns
in filters, joins with arithmetic, a key, a negation's condition, a closure's aggregates, RETURN items and
``partition_by``."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from polars.testing import assert_frame_equal

import jitcep
from jitcep.events import build_event_table
from jitcep.pattern.parser import parse

FLOAT_JUNK = [float("nan"), float("inf"), float("-inf"), 1e308, -0.0]
INT_JUNK = [2**63 - 1, -2**63, 2**62, -1]

PATTERNS = [
    ("PATTERN SEQ(A a, B b) WHERE a.x < b.x AND a.i + b.i > 0 WITHIN 10 RETURN a.x AS ax, b.i AS bi", {}),
    ("PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x * 2 > c.x - 1 AND b.i IS NULL WITHIN 8", {}),
    ("PATTERN SEQ(A a, !B n, C c) WHERE n.x > a.x AND a.i <= c.i WITHIN 10", {}),
    ("PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b.x) > a.x AND max(b.i) < c.i + 5 WITHIN 6 "
     "RETURN avg(b.x) AS m, min(b.i) AS lo", {}),
    ("PATTERN AND(A a, C c) WHERE a.i * c.i > 3 OR a.x / c.x < 0.5 WITHIN 5", {}),
    ("PATTERN SEQ(A a, B b) WHERE a.x >= 0.25 AND b.x IS NOT NULL WITHIN 6", {"partition_by": "k"}),
]


@st.composite
def frames(draw):
    """(clean, dirty): the same events, nulls where ``None`` was drawn; in ``dirty`` each null slot of x, i
    and k holds a junk value set before it was nulled."""
    n = draw(st.integers(0, 60))
    gaps = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    types = draw(st.lists(st.sampled_from("ABC"), min_size=n, max_size=n))
    xs = draw(st.lists(st.one_of(st.none(), st.floats(-2, 2, allow_nan=False)), min_size=n, max_size=n))
    ints = draw(st.lists(st.one_of(st.none(), st.integers(-6, 6)), min_size=n, max_size=n))
    keys = draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=n, max_size=n))
    ts = np.cumsum(np.asarray(gaps, np.int64)) if n else np.zeros(0, np.int64)

    def dirty(values, junk, dtype):
        full = pl.Series([v if v is not None else junk[j % len(junk)] for j, v in enumerate(values)], dtype=dtype)
        keep = pl.Series([v is not None for v in values], dtype=pl.Boolean)
        return pl.select(pl.when(keep).then(full)).to_series()

    base = {"ts": pl.Series(ts, dtype=pl.Int64), "type": pl.Series(types, dtype=pl.String)}
    clean = pl.DataFrame({**base, "x": pl.Series(xs, dtype=pl.Float64), "i": pl.Series(ints, dtype=pl.Int64),
                          "k": pl.Series(keys, dtype=pl.Int64)})
    junky = pl.DataFrame({**base, "x": dirty(xs, FLOAT_JUNK, pl.Float64), "i": dirty(ints, INT_JUNK, pl.Int64),
                          "k": dirty(keys, INT_JUNK, pl.Int64)})
    return clean, junky


def _null_slots(s: pl.Series) -> np.ndarray:
    """The raw values under the nulls of a one-chunk series (its Arrow buffer)."""
    arr = s.rename("").to_arrow()
    bits, data = arr.buffers()[:2]
    if bits is None:
        return np.zeros(0)
    valid = np.unpackbits(np.frombuffer(bits, np.uint8), count=arr.offset + len(arr),
                          bitorder="little")[arr.offset:].view(np.bool_)
    raw = np.frombuffer(data, np.float64 if s.dtype == pl.Float64 else np.int64)[arr.offset:arr.offset + len(arr)]
    return raw[~valid]


def test_the_dirty_frames_hold_junk_under_their_nulls():
    # the construction the test below relies on: Polars keeps the values a when/then nulls
    s = pl.select(pl.when(pl.Series([True, False, False])).then(pl.Series([1.0, float("nan"), 1e308])))
    assert np.isnan(_null_slots(s.to_series())[0]) and _null_slots(s.to_series())[1] == 1e308
    s = pl.select(pl.when(pl.Series([False, True])).then(pl.Series([2**62, 3], dtype=pl.Int64))).to_series()
    assert _null_slots(s).tolist() == [2**62]
    t = build_event_table(pl.DataFrame({"ts": [1, 2], "i": s}), parse("PATTERN SEQ(A a) WHERE a.i > 0 WITHIN 1"))
    assert t.columns["i"].valid.tolist() == [False, True] and t.columns["i"].values[1] == 3


@pytest.mark.parametrize("text,kw", PATTERNS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=frames())
def test_junk_under_nulls_changes_no_match(text, kw, pair):
    clean, junky = pair
    q = jitcep.compile(text)
    expected = q.run(clean, type="type", engine="reference", **kw)
    got = q.run(junky, type="type", **kw)
    assert_frame_equal(got, expected)
