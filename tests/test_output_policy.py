"""Output policies: all, non_overlapping, match_single, match_next, consume_types; the match cap.

docs/semantics.md §9: policies are applied per pattern, after strategies and
negation, scanning the matches in canonical order (by last position, then
first position, then bindings).  non_overlapping (SASE+ section 2): per
partition, keep a match iff its first position is greater than the last
position of the previously kept match.  match_single: keep a match iff none
of its consumable events is in an already kept match.  match_next: ... none of
its consumable events is bound to the same variable in a kept match.  §12:
more than max_matches matches is an ExplosionError, never a truncation.
"""

from __future__ import annotations

import pytest

from jitcep.errors import ExplosionError, OptionError
from semantic_helpers import M, events, matches, run

AB = "PATTERN SEQ(A a, B b) WITHIN 10"
AB_X = "PATTERN SEQ(A a, B b) WHERE a.x = b.x WITHIN 10"


def test_all_is_the_default():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4))
    assert matches(AB, df) == matches(AB, df, output="all") == M((0, 1), (0, 3), (2, 3))


def test_non_overlapping_keeps_matches_starting_after_the_last_kept_end():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 2), ("B", 3, 1), ("B", 4, 2), ("A", 5, 1), ("B", 6, 1))
    # all: (0,2) (1,3) (0,5) (4,5); keep (0,2); (1,3) starts at 1 <= 2; (0,5) at 0; (4,5) at 4 > 2
    assert matches(AB_X, df) == M((0, 2), (1, 3), (0, 5), (4, 5))
    assert matches(AB_X, df, output="non_overlapping") == M((0, 2), (4, 5))


def test_non_overlapping_is_per_partition():
    df = events("type ts k", ("A", 1, 1), ("A", 2, 2), ("B", 3, 1), ("B", 4, 2), ("A", 5, 1), ("B", 6, 1))
    q = "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10"
    # k=1: (0,2) kept, (0,5) overlaps, (4,5) kept; k=2: (1,3) kept although it overlaps (0,2) in time
    assert matches(q, df, output="non_overlapping") == M((0, 2), (4, 5), (1, 3))


def test_non_overlapping_ties_follow_canonical_order():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # canonical order: (0,2) (1,2) (0,3) (1,3); (0,2) is kept first, every other starts <= 2
    assert matches(AB, df, output="non_overlapping") == M((0, 2))


def test_match_single_uses_each_event_once():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4))
    # canonical: (0,1) kept; (0,3) reuses A0; (2,3) is fresh
    assert matches(AB, df, output="match_single") == M((0, 1), (2, 3))


def test_match_single_ties_follow_canonical_order():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # canonical: (0,2) kept; (1,2) reuses B2; (0,3) reuses A0; (1,3) fresh
    assert matches(AB, df, output="match_single") == M((0, 2), (1, 3))


def test_match_single_differs_from_non_overlapping():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 2), ("B", 3, 1), ("B", 4, 2))
    # (0,2) and (1,3) share no event (match_single keeps both) but overlap in time
    assert matches(AB_X, df, output="match_single") == M((0, 2), (1, 3))
    assert matches(AB_X, df, output="non_overlapping") == M((0, 2))


def test_match_single_with_consume_types():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4))
    # only B events are consumed: (0,1) kept, (0,3) reuses A0 (not consumable) with a fresh B3,
    # (2,3) reuses B3
    assert matches(AB, df, output="match_single", consume_types=["B"]) == M((0, 1), (0, 3))


def test_match_next_consumes_per_variable():
    df = events("type ts", ("A", 1), ("A", 2), ("A", 3))
    q = "PATTERN SEQ(A a1, A a2) WITHIN 10"
    # canonical: (0,1) (0,2) (1,2); (0,2) has A0 as a1 again -> dropped;
    # (1,2) has A1 as a1 (it was a2 before) -> kept under match_next, dropped under match_single
    assert matches(q, df, output="match_next") == M((0, 1), (1, 2))
    assert matches(q, df, output="match_single") == M((0, 1))


def test_output_policy_applies_after_negation():
    df = events("type ts", ("A", 1), ("X", 2), ("B", 3), ("A", 4), ("B", 5))
    q = "PATTERN SEQ(A a, !X x, B b) WITHIN 10"
    # negation first kills (0,2) and (0,4); match_single then sees only (3,4)
    assert matches(q, df, output="match_single") == M((3, 4))


def test_match_single_with_kleene_members():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("A", 4), ("C", 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # all: (0,[1],2) (0,[1],4); canonical keeps (0,[1],2); (0,[1],4) reuses A0 and B1
    assert matches(q, df) == M((0, (1,), 2), (0, (1,), 4))
    assert matches(q, df, output="match_single") == M((0, (1,), 2))


def test_max_matches_cap_raises():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # 4 matches: a cap of 3 is an error, a cap of 4 returns all of them
    with pytest.raises(ExplosionError):
        run(AB, df, max_matches=3)
    assert matches(AB, df, max_matches=4) == M((0, 2), (0, 3), (1, 2), (1, 3))


@pytest.mark.parametrize("policy, kept", [("non_overlapping", M((0, 2))),
                                           ("match_single", M((0, 2), (1, 3))),
                                           ("match_next", M((0, 2), (1, 3)))])
def test_max_matches_counts_the_matches_before_the_policy(policy, kept):
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # 4 matches, in canonical order (0,2) (1,2) (0,3) (1,3): non_overlapping keeps (0,2) (the others
    # start before its end); match_single / match_next also (1,3), whose A1 and B3 no kept match uses.
    # Section 12 counts the 4, not the ones kept.
    with pytest.raises(ExplosionError, match="max_matches"):
        run(AB, df, output=policy, max_matches=3)
    assert matches(AB, df, output=policy, max_matches=4) == kept


def test_max_matches_counts_every_pattern_before_its_policy():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # each pattern has 4 matches and keeps 1: 8 are counted against the cap, not 2
    both = f"{AB}; PATTERN SEQ(A a, B b) WITHIN 5"
    with pytest.raises(ExplosionError, match="max_matches"):
        run(both, df, output="non_overlapping", max_matches=7)
    assert run(both, df, output="non_overlapping", max_matches=8).height == 2


def test_unknown_output_policy_is_an_option_error():
    df = events("type ts", ("A", 1), ("B", 2))
    with pytest.raises(OptionError):
        run(AB, df, output="first_only")


def test_unknown_option_is_an_option_error():
    df = events("type ts", ("A", 1), ("B", 2))
    with pytest.raises(OptionError):
        run(AB, df, selection="skip_till_any_match")


# --- partition_by streams (semantics 13) and OpenCEP's match-level constraints (semantics 9) ----------


def test_non_overlapping_is_per_partition_by_stream():
    df = events("type ts g", ("A", 1, "x"), ("A", 2, "y"), ("B", 3, "x"), ("B", 4, "y"), ("A", 5, "x"),
                ("B", 6, "x"))
    # stream x: (0,2) (0,5) (4,5) -> keep (0,2), (4,5); stream y: (1,3) kept although it overlaps (0,2)
    assert matches(AB, df, output="non_overlapping", partition_by="g") == M((0, 2), (4, 5), (1, 3))


def test_match_next_with_a_kleene_list_consumes_its_members_per_variable():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4), ("C", 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # canonical: (0,[1],3) (0,[2],3) (0,[1,2],3) (0,[1],4) ...; the first is kept and every other one
    # binds A0 to a again, under match_next as under match_single
    assert matches(q, df, output="match_next") == M((0, (1,), 3))
    # consuming only C: (0,[1],3) kept, C3 used; the first match with C4 is (0,[1],4)
    assert matches(q, df, output="match_single", consume_types=["C"]) == M((0, (1,), 3), (0, (1,), 4))


def test_contiguous_keeps_consecutive_positions_in_the_listed_order():
    df = events("type ts", ("A", 1), ("B", 2), ("X", 3), ("B", 4), ("A", 5), ("B", 6), ("C", 7))
    q = "PATTERN SEQ(A a, B b, C c) WITHIN 10"
    # all: (0,1,6) (0,3,6) (0,5,6) (4,5,6); a and b adjacent: (0,1,6) (4,5,6); b and c adjacent: the
    # ones with b = 5
    assert matches(q, df, contiguous=[("a", "b")]) == M((0, 1, 6), (4, 5, 6))
    assert matches(q, df, contiguous=[("b", "c")]) == M((0, 5, 6), (4, 5, 6))
    assert matches(q, df, contiguous=[("a", "b", "c")]) == M((4, 5, 6))
    # listed out of pattern order: pos(a) = pos(b) + 1 never holds in a SEQ
    assert matches(q, df, contiguous=[("b", "a")]) == M()


def test_contiguous_counts_positions_inside_the_partition_by_stream():
    df = events("type ts g", ("A", 1, "x"), ("X", 2, "y"), ("B", 3, "x"))
    # rows 0 and 2 are consecutive in stream x although row 1 (stream y) lies between them
    assert matches(AB, df, contiguous=[("a", "b")]) == M()
    assert matches(AB, df, contiguous=[("a", "b")], partition_by="g") == M((0, 2))


def test_contiguous_and_negation_both_filter_the_matches():
    df = events("type ts", ("A", 1), ("B", 2), ("X", 3), ("A", 4), ("B", 5))
    q = "PATTERN SEQ(A a, B b, !X x) WITHIN 10"
    # all: (0,1) (0,4) (3,4); X2 after b kills (0,1); contiguous keeps (0,1) (3,4); both: (3,4)
    assert matches(q, df) == M((0, 4), (3, 4))
    assert matches(q, df, contiguous=[("a", "b")]) == M((3, 4))
    # and the output policy after both: match_single keeps it
    assert matches(q, df, contiguous=[("a", "b")], output="match_single") == M((3, 4))


def test_freeze_binds_only_active_candidates():
    df = events("type ts", ("A", 0), ("A", 1), ("B", 2), ("A", 5), ("B", 6))
    # A0 is open until ts 3 (WITHIN 3): A1 is frozen out, A5 is active again
    assert matches("PATTERN SEQ(A a, B b) WITHIN 3", df) == M((0, 2), (1, 2), (3, 4))
    assert matches("PATTERN SEQ(A a, B b) WITHIN 3", df, freeze=["a"]) == M((0, 2), (3, 4))


def test_freeze_scans_candidates_after_filters_and_per_stream():
    df = events("type ts x g", ("A", 0, 0, "p"), ("A", 1, 1, "q"), ("A", 2, 1, "p"), ("B", 3, 0, "p"),
                ("B", 3, 0, "q"))
    q = "PATTERN SEQ(A a, B b) WHERE a.x > 0 WITHIN 5"
    # A0 fails the filter, so it is no candidate: A1 is active and freezes A2 (within 5 of it)
    assert matches(q, df, freeze=["a"]) == M((1, 3), (1, 4))
    # per stream: p has A2 (active; A0 is no candidate) and B3; q has A1 and B4
    assert matches(q, df, freeze=["a"], partition_by="g") == M((2, 3), (1, 4))


def test_freeze_measures_a_count_window():
    df = events("type ts", ("A", 0), ("A", 0), ("A", 0), ("B", 0))
    # WITHIN 2 EVENTS: A0 is open for A1 (1 position later), not for A2 (2 later); A1 is frozen
    # out, so only A2 is adjacent enough to B3
    assert matches("PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", df, freeze=["a"]) == M((2, 3))
