"""The three orders (position, strict_ts, nondecreasing_ts) with duplicate timestamps; unsorted input.

docs/semantics.md §1: rows are sorted stably by timestamp; before(u, w) is
pos(u) < pos(w) under "position" (equal timestamps in input order), ts(u) <
ts(w) under "strict_ts", ts(u) <= ts(w) under "nondecreasing_ts" (each of two
simultaneous events is before the other).  §6: Kleene iterations also need
increasing positions.  §7: negation ranges use the same "before".  The output
``row`` is the input row number as given, whatever the sort did.
"""

from __future__ import annotations

import pytest

from jitcep.errors import OptionError
from semantic_helpers import M, events, matches, run

SEQ_AB = "PATTERN SEQ(A a, B b) WITHIN 10"


def test_unsorted_input_reports_input_rows():
    df = events("type ts", ("B", 5), ("A", 1), ("B", 3), ("A", 4))
    # sorted: A1@1 B2@3 A3@4 B0@5 -> (A1,B2) (A1,B0) (A3,B0), reported by input row
    assert matches(SEQ_AB, df) == M((1, 2), (1, 0), (3, 0))


def test_position_orders_equal_timestamps_by_input_order():
    df = events("type ts", ("A", 1), ("B", 1))
    # same ts, A is the earlier input row -> A before B
    assert matches(SEQ_AB, df, order="position") == M((0, 1))


def test_position_is_the_default():
    df = events("type ts", ("A", 1), ("B", 1))
    assert matches(SEQ_AB, df) == M((0, 1))


def test_position_rejects_reverse_input_order_at_equal_timestamps():
    df = events("type ts", ("B", 1), ("A", 1))
    # same ts, B is the earlier input row -> B before A, so no SEQ(A, B)
    assert matches(SEQ_AB, df, order="position") == M()


def test_strict_ts_never_orders_simultaneous_events():
    df = events("type ts", ("A", 1), ("B", 1), ("B", 2))
    # only B2@2 is strictly later than A0@1
    assert matches(SEQ_AB, df, order="strict_ts") == M((0, 2))


def test_nondecreasing_ts_orders_simultaneous_events_both_ways():
    df = events("type ts", ("B", 1), ("A", 1), ("B", 0))
    # A1@1 with B0@1 (equal ts, either order); B2@0 is strictly earlier
    assert matches(SEQ_AB, df, order="nondecreasing_ts") == M((1, 0))
    assert matches(SEQ_AB, df, order="position") == M()
    assert matches(SEQ_AB, df, order="strict_ts") == M()


def test_stable_sort_keeps_input_order_of_ties():
    df = events("type ts", ("A", 2), ("B", 1), ("B", 2))
    # sorted: B1@1, A0@2, B2@2 (A0 stays before B2: stable) -> (A0, B2) under position
    assert matches(SEQ_AB, df, order="position") == M((0, 2))
    assert matches(SEQ_AB, df, order="strict_ts") == M()
    assert matches(SEQ_AB, df, order="nondecreasing_ts") == M((0, 2))


def test_three_simultaneous_events_in_reverse_input_order():
    df = events("type ts", ("C", 1), ("B", 1), ("A", 1))
    q = "PATTERN SEQ(A a, B b, C c) WITHIN 10"
    # input order is C, B, A: only nondecreasing_ts accepts A, B, C at one instant
    assert matches(q, df, order="position") == M()
    assert matches(q, df, order="strict_ts") == M()
    assert matches(q, df, order="nondecreasing_ts") == M((2, 1, 0))


def test_nondecreasing_same_type_binds_both_ways():
    df = events("type ts", ("A", 1), ("A", 1))
    q = "PATTERN SEQ(A a1, A a2) WITHIN 10"
    # semantics.md §1: two simultaneous A events give (0,1) and (1,0)
    assert matches(q, df, order="nondecreasing_ts") == M((0, 1), (1, 0))
    assert matches(q, df, order="position") == M((0, 1))
    assert matches(q, df, order="strict_ts") == M()


def test_mixed_ties_and_strict_gaps():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 2), ("B", 3))
    # position: (0,2) (0,3) (1,2) (1,3); strict_ts drops (1,2) [2 = 2]
    assert matches(SEQ_AB, df, order="position") == M((0, 2), (0, 3), (1, 2), (1, 3))
    assert matches(SEQ_AB, df, order="strict_ts") == M((0, 2), (0, 3), (1, 3))
    assert matches(SEQ_AB, df, order="nondecreasing_ts") == M((0, 2), (0, 3), (1, 2), (1, 3))


def test_kleene_members_under_strict_ts():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 1), ("C", 2))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # the two Bs are simultaneous: strict_ts cannot put both in one list
    assert matches(q, df, order="strict_ts") == M((0, (1,), 3), (0, (2,), 3))
    # position orders them by input row
    assert matches(q, df, order="position") == M((0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_kleene_members_under_nondecreasing_ts_form_one_list():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 1), ("C", 2))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # semantics.md §6: iterations also need increasing position, so no (2, 1) list
    assert matches(q, df, order="nondecreasing_ts") == M((0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_negation_between_simultaneous_events():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 2))
    q = "PATTERN SEQ(A a, !B b, C c) WITHIN 10"
    # position: B1 (pos 1) is between A0 and C2 -> killed
    assert matches(q, df, order="position") == M()
    # strict_ts: B1@2 is not strictly before C2@2 -> not between -> match
    assert matches(q, df, order="strict_ts") == M((0, 2))
    # nondecreasing_ts: "before" admits ties, so B1 counts as between (semantics.md §7)
    assert matches(q, df, order="nondecreasing_ts") == M()


def test_and_is_unaffected_by_order():
    df = events("type ts", ("B", 1), ("A", 1))
    q = "PATTERN AND(A a, B b) WITHIN 10"
    for order in ("position", "strict_ts", "nondecreasing_ts"):
        assert matches(q, df, order=order) == M((1, 0)), order


def test_unknown_order_is_an_option_error():
    df = events("type ts", ("A", 1), ("B", 2))
    with pytest.raises(OptionError):
        run(SEQ_AB, df, order="by_arrival")


def test_kleene_list_tied_before_its_neighbour_counts_in_the_window():
    df = events("type ts", ("A", 0), ("B", 0), ("A", 0), ("A", 0))
    # under nondecreasing_ts A0 is after B1 (same ts); each A fits WITHIN 3 EVENTS with B1 alone,
    # but the list (A0, A3) stretches the match over positions 0..3 (section 2): not a match
    q = "PATTERN SEQ(B v, A{2} b[]) WITHIN 3 EVENTS"
    assert matches(q, df, order="nondecreasing_ts") == M((1, (0, 2)), (1, (2, 3)))
