"""Windows: time windows (inclusive), durations with units, count windows, UNBOUNDED, errors.

DESIGN.md section 2 and docs/semantics.md §2: ``WITHIN d``: max ts - min ts over
the positive events <= d (inclusive); a duration is converted with the time
column's unit (Datetime columns carry it, numeric columns need ``time_unit=``,
else WindowUnitError); ``WITHIN n EVENTS``: max pos - min pos < n over positions
in the whole (sorted) table; ``WITHIN UNBOUNDED``: no constraint; no WITHIN:
MissingWindowError; a window <= 0: InvalidWindowError.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest

from jitcep.errors import InvalidWindowError, MissingWindowError, PatternError, WindowUnitError
from semantic_helpers import M, events, matches, run


def test_time_window_is_inclusive():
    df = events("type ts", ("A", 0), ("B", 5), ("B", 6))
    # 5 - 0 = 5 <= 5 is in; 6 - 0 = 6 is out
    assert matches("PATTERN SEQ(A a, B b) WITHIN 5", df) == M((0, 1))


def test_time_window_spans_first_to_last_event():
    df = events("type ts", ("A", 0), ("B", 3), ("C", 6), ("A", 2), ("C", 8))
    # sorted: A0@0 A3@2 B1@3 C2@6 C4@8; WITHIN 6: (A0,B1,C2) spans 6 ok, (A0,B1,C4) spans 8 no,
    # (A3,B1,C2) spans 4, (A3,B1,C4) spans 6 ok
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 6", df) == M((0, 1, 2), (3, 1, 2), (3, 1, 4))


def test_window_applies_to_every_pair_not_just_neighbours():
    df = events("type ts", ("A", 0), ("B", 4), ("C", 8))
    # each neighbouring gap is 4 <= 5 but the whole span is 8 > 5
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 5", df) == M()


def test_duration_window_on_datetime_column():
    t0 = datetime(2024, 1, 1, 9, 0, 0)
    df = pl.DataFrame({
        "type": ["A", "B", "B"],
        "ts": [t0, t0 + timedelta(minutes=10), t0 + timedelta(minutes=10, seconds=1)],
    })
    # exactly 10 minutes is inside, one second more is outside
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10 minutes", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10 min", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 600 seconds", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 601 s", df) == M((0, 1), (0, 2))


def test_duration_window_hours_and_days():
    t0 = datetime(2024, 1, 1)
    df = pl.DataFrame({
        "type": ["A", "B", "B"],
        "ts": [t0, t0 + timedelta(hours=12), t0 + timedelta(days=1, seconds=1)],
    })
    # 12 hours is inside WITHIN 12 hours; a day and a second is outside WITHIN 1 d
    assert matches("PATTERN SEQ(A a, B b) WITHIN 12 hours", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 1 h", df) == M()
    assert matches("PATTERN SEQ(A a, B b) WITHIN 1 d", df) == M((0, 1))


def test_duration_window_on_numeric_column_with_declared_unit():
    df = events("type ts", ("A", 0), ("B", 2000), ("B", 2001))
    # timestamps in ms: 2 s = 2000 ms, inclusive
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2 s", df, time_unit="ms") == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2000 ms", df, time_unit="ms") == M((0, 1))


def test_duration_window_on_numeric_column_without_unit_is_an_error():
    df = events("type ts", ("A", 0), ("B", 2000))
    with pytest.raises(WindowUnitError):
        run("PATTERN SEQ(A a, B b) WITHIN 2 s", df)


def test_unitless_window_is_in_column_units():
    df = events("type ts", ("A", 0), ("B", 2000), ("B", 2001))
    # WITHIN 2000 (no unit) on an ms column is 2000 units
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2000", df, time_unit="ms") == M((0, 1))


def test_count_window():
    df = events("type ts", ("A", 0), ("Z", 1), ("B", 2), ("Z", 3), ("B", 4))
    # WITHIN 3 EVENTS: positions 0 and 2 differ by 2 < 3; 0 and 4 by 4; irrelevant Z events count
    assert matches("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", df) == M((0, 2))


def test_count_window_boundary():
    df = events("type ts", ("A", 0), ("Z", 1), ("Z", 2), ("B", 3))
    # max pos - min pos = 3: < 4 is in, < 3 is out
    assert matches("PATTERN SEQ(A a, B b) WITHIN 4 EVENTS", df) == M((0, 3))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", df) == M()


def test_count_window_uses_sorted_positions():
    df = events("type ts", ("B", 10), ("Z", 5), ("A", 1))
    # sorted: A2@1 (pos 0), Z1@5 (pos 1), B0@10 (pos 2): span 2 positions
    assert matches("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", df) == M((2, 0))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", df) == M()


def test_count_window_ignores_time_distance():
    df = events("type ts", ("A", 0), ("B", 1_000_000))
    # neighbours in position: 1 < 2 whatever their timestamps
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", df) == M((0, 1))


def test_unbounded_window():
    df = events("type ts", ("A", 0), ("B", 10**12))
    assert matches("PATTERN SEQ(A a, B b) WITHIN UNBOUNDED", df) == M((0, 1))


def test_missing_window_is_an_error():
    df = events("type ts", ("A", 0), ("B", 1))
    with pytest.raises(MissingWindowError):
        run("PATTERN SEQ(A a, B b)", df)


def test_zero_window_is_an_error():
    df = events("type ts", ("A", 0), ("B", 1))
    with pytest.raises((InvalidWindowError, PatternError)):
        run("PATTERN SEQ(A a, B b) WITHIN 0", df)
    with pytest.raises(InvalidWindowError):
        run("PATTERN SEQ(A a, B b) WITHIN 0 EVENTS", df)


def test_window_with_equal_timestamps_is_zero_span():
    df = events("type ts", ("A", 5), ("B", 5), ("C", 5))
    # all at the same time: span 0 fits any window (position order gives A, B, C)
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 1", df) == M((0, 1, 2))


def test_window_in_and():
    df = events("type ts", ("B", 0), ("A", 3), ("B", 7), ("B", 9))
    # AND(A a, B b) WITHIN 4: |3-0| = 3, |7-3| = 4 in; |9-3| = 6 out
    assert matches("PATTERN AND(A a, B b) WITHIN 4", df) == M((1, 0), (1, 2))


def test_window_counts_kleene_members():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 3), ("C", 4), ("C", 6))
    # WITHIN 4: (A0, C3) with any subset of {B1, B2}; C4@6 spans 6
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WITHIN 4", df) == M(
        (0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_negated_event_does_not_stretch_the_window():
    df = events("type ts", ("A", 0), ("B", 1), ("C", 3), ("A", 4), ("C", 6))
    # P (positive events) decides the window: (A3, C4) spans 2 <= 3; (A0, C2) spans 3 but B1 kills it
    assert matches("PATTERN SEQ(A a, !B b, C c) WITHIN 3", df) == M((3, 4))
