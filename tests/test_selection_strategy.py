"""Event selection strategies (SASE+ section 2 and 3.2) on the same streams.

SASE+ section 2: strict contiguity (selected events contiguous in the stream),
partition contiguity (contiguous within the [attr] partition), skip till next
match (irrelevant events skipped until the next relevant one), skip till any
match (every combination).  SASE+ section 3.2 step 3 gives the ignore edges:
False / not(partition condition) / not(take or begin) / True.
docs/semantics.md §8 defines the runs: a run starts at every event that can
begin the first state; the linear-pattern restriction raises
UnsupportedPatternError otherwise.
"""

from __future__ import annotations

from collections import Counter

import pytest

import jitcep
import semantic_helpers
from jitcep.errors import UnsupportedPatternError
from semantic_helpers import M, as_tuples, events, matches, run

ABC = "PATTERN SEQ(A a, B b, C c) WITHIN 10"

# stream 1: A B C A D B B C (no key)
S1 = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("A", 4), ("D", 5), ("B", 6), ("B", 7), ("C", 8))

# stream 2: two partitions interleaved; k=1: A0 B2 D4 B6 C7, k=2: A1 B3 C5
S2 = events("type ts k", ("A", 1, 1), ("A", 2, 2), ("B", 3, 1), ("B", 4, 2), ("D", 5, 1), ("C", 6, 2),
            ("B", 7, 1), ("C", 8, 1))
ABC_K = "PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN 10"


def test_skip_till_any_match_every_combination():
    # a=0: b in {1,5,6} with c after b; a=3: b in {5,6}, c=7
    assert matches(ABC, S1, strategy="skip_till_any_match") == M(
        (0, 1, 2), (0, 1, 7), (0, 5, 7), (0, 6, 7), (3, 5, 7), (3, 6, 7))


def test_skip_till_next_match_takes_the_next_relevant_event():
    # run A0: next B is B1, next C is C2; run A3: skips D4, takes B5, skips B6, takes C7
    assert matches(ABC, S1, strategy="skip_till_next_match") == M((0, 1, 2), (3, 5, 7))


def test_strict_contiguity_needs_adjacent_events():
    # A0 B1 C2 are adjacent; after A3 comes D4, which kills that run
    assert matches(ABC, S1, strategy="strict_contiguity") == M((0, 1, 2))


def test_partition_contiguity_without_key_is_unsupported():
    with pytest.raises(UnsupportedPatternError):
        run(ABC, S1, strategy="partition_contiguity")


def test_four_strategies_differ_on_a_partitioned_stream():
    # any: k=1: (0,2,7) (0,6,7); k=2: (1,3,5)
    assert matches(ABC_K, S2, strategy="skip_till_any_match") == M((0, 2, 7), (0, 6, 7), (1, 3, 5))
    # next: run A0 takes the first k=1 B (B2) then the first k=1 C (C7); run A1: B3, C5
    assert matches(ABC_K, S2, strategy="skip_till_next_match") == M((0, 2, 7), (1, 3, 5))
    # partition contiguity: in k=1, D4 follows B2 and is not a C -> dies; k=2 is A1 B3 C5 back to back
    assert matches(ABC_K, S2, strategy="partition_contiguity") == M((1, 3, 5))
    # strict contiguity: A0 is followed by A1; A1 by B2 of another key -> nothing
    assert matches(ABC_K, S2, strategy="strict_contiguity") == M()


def test_skip_till_next_match_one_run_per_start():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    q = "PATTERN SEQ(A a, B b) WITHIN 10"
    # every A starts a run; each run takes the first B after it
    assert matches(q, df, strategy="skip_till_next_match") == M((0, 2), (1, 2))
    assert matches(q, df, strategy="skip_till_any_match") == M((0, 2), (0, 3), (1, 2), (1, 3))
    # strict: only A1 is directly followed by a B
    assert matches(q, df, strategy="strict_contiguity") == M((1, 2))


def test_skip_till_next_match_skips_events_failing_predicates():
    df = events("type ts x", ("A", 1, 5), ("B", 2, 1), ("B", 3, 7), ("B", 4, 9))
    # b.x > a.x: B1 fails the begin condition, so it is ignored; B2 is the next relevant one
    q = "PATTERN SEQ(A a, B b) WHERE b.x > a.x WITHIN 10"
    assert matches(q, df, strategy="skip_till_next_match") == M((0, 2))
    # strict contiguity cannot skip B1
    assert matches(q, df, strategy="strict_contiguity") == M()


def test_partition_contiguity_single_partition_equals_strict():
    df = events("type ts k", ("A", 1, 1), ("A", 2, 1), ("B", 3, 1), ("B", 4, 1))
    q = "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10"
    # one partition: only A1 is directly followed by a B
    assert matches(q, df, strategy="partition_contiguity") == M((1, 2))


def test_partition_contiguity_ignores_other_partitions():
    df = events("type ts k", ("A", 1, 1), ("X", 2, 2), ("B", 3, 1), ("X", 4, 1), ("B", 5, 1))
    q = "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10"
    # k=1 sequence is A0 B2 X3 B4: A0 is followed (in its partition) by B2; X1 is in k=2
    assert matches(q, df, strategy="partition_contiguity") == M((0, 2))
    assert matches(q, df, strategy="strict_contiguity") == M()
    assert matches(q, df, strategy="skip_till_any_match") == M((0, 2), (0, 4))


def test_kleene_strict_contiguity():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # the run must take B1 and B2 (a non-C next event cannot be ignored), then C3
    assert matches(q, df, strategy="strict_contiguity") == M((0, (1, 2), 3))
    assert matches(q, df, strategy="skip_till_any_match") == M((0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_kleene_strict_contiguity_broken_by_other_event():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("B", 4), ("C", 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # D2 interrupts the closure and is not C
    assert matches(q, df, strategy="strict_contiguity") == M()


def test_kleene_at_end_skip_till_next_match_one_match_per_proceed_point():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("B", 4), ("Z", 5))
    q = "PATTERN SEQ(A a, B+ b[]) WITHIN 10"
    # semantics.md §8: with a Kleene state last, every proceed point is a match:
    # (a; B1) and (a; B1, B3); B3 is relevant so it cannot be skipped to give (a; B3)
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1,)), (0, (1, 3)))
    assert matches(q, df, strategy="skip_till_any_match") == M((0, (1,)), (0, (3,)), (0, (1, 3)))


def test_kleene_in_the_middle_skip_till_next_match_is_greedy():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("B", 4), ("C", 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # SASE+ section 2: skip till next match "takes every relevant event": B1 and B3 are both taken;
    # SASE+ section 3.2 step 6: the proceed edge to state c is taken only when the current event can
    # begin c (C4), so the single match holds the whole greedy closure.
    # (docs/semantics.md §8 records this peek as a Choice.)
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1, 3), 4))


def test_kleene_iterative_predicate_skip_till_next_match():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 0), ("B", 3, 2), ("B", 4, 3), ("C", 5, 0))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10"
    # greedy run from A0: B1 (1), skip B2 (0 is not > 1), take B3 (2) and B4 (3), then C5;
    # the proceed edge peeks (semantics.md §8), so the prefixes (B1) and (B1, B3) are not reported
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1, 3, 4), 5))


def test_negation_filters_runs_after_selection():
    df = events("type ts", ("A", 1), ("X", 2), ("B", 3), ("B", 4), ("A", 5), ("B", 6))
    q = "PATTERN SEQ(A a, !X x, B b) WITHIN 10"
    # next-match runs: (A0, B2) and (A4, B5); X1 kills (A0, B2); the run does not retry with B3
    assert matches(q, df, strategy="skip_till_next_match") == M((4, 5))


def test_strict_ts_begin_needs_a_later_timestamp():
    df = events("type ts", ("A", 1), ("B", 1), ("B", 2))
    q = "PATTERN SEQ(A a, B b) WITHIN 10"
    # semantics.md §8: under strict_ts a begin edge needs ts > the previous selected ts, so B1 is skipped
    assert matches(q, df, strategy="skip_till_next_match", order="strict_ts") == M((0, 2))
    assert matches(q, df, strategy="skip_till_next_match", order="position") == M((0, 1))


def test_skip_till_next_match_run_dies_at_the_window():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 0), ("A", 3, 0), ("B", 5, 5))
    q = "PATTERN SEQ(A a, B b) WHERE b.x > 2 WITHIN 3"
    # run A0: its next relevant B (B3, ts 5) lies past its window (ts <= 3), so the run dies;
    # run A2 takes B3 (5 - 3 <= 3)
    assert matches(q, df, strategy="skip_till_next_match") == M((2, 3))


def test_skip_till_next_match_skips_many_events_failing_a_join_predicate():
    df = events("type ts x", ("A", 0, 5), ("B", 1, 1), ("B", 2, 2), ("B", 3, 3), ("A", 4, 0), ("B", 5, 9),
                ("B", 6, 7))
    q = "PATTERN SEQ(A a, B b) WHERE b.x > a.x WITHIN 10"
    # A0 (x 5) ignores B1, B2, B3 and takes B5 (9); A4 (x 0) takes the next B, B5 too
    assert matches(q, df, strategy="skip_till_next_match") == M((0, 5), (4, 5))


def test_strict_contiguity_count_window():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 3 EVENTS", df, strategy="strict_contiguity") == M((0, 1, 2))
    # positions 0..2 span 2, not < 2
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 2 EVENTS", df, strategy="strict_contiguity") == M()


def test_strict_ts_contiguity_needs_a_later_timestamp():
    df = events("type ts", ("A", 1), ("B", 1), ("C", 2))
    q = "PATTERN SEQ(A a, B b, C c) WITHIN 10"
    # B1 is the next event but not later than A0: under strict_ts the run dies (strict contiguity
    # ignores nothing); by position it is after A0
    assert matches(q, df, strategy="strict_contiguity", order="strict_ts") == M()
    assert matches(q, df, strategy="strict_contiguity", order="position") == M((0, 1, 2))
    # nondecreasing_ts consumes events in position order too (semantics section 8)
    assert matches(q, df, strategy="skip_till_next_match", order="nondecreasing_ts") == M((0, 1, 2))


def test_negations_filter_contiguous_runs():
    q = "PATTERN SEQ(A a, !X x, B b) WITHIN 10"
    # A0's next event is X1, not a B: the run dies before the negation is asked
    assert matches(q, events("type ts", ("A", 1), ("X", 2), ("B", 3)), strategy="strict_contiguity") == M()
    assert matches(q, events("type ts", ("A", 1), ("B", 2), ("X", 3)), strategy="strict_contiguity") == M((0, 1))
    # at the end: no X after b within the window from a
    q_end = "PATTERN SEQ(A a, B b, !X x) WITHIN 5"
    df = events("type ts", ("A", 1), ("B", 2), ("X", 3), ("A", 10), ("B", 11))
    assert matches(q_end, df, strategy="strict_contiguity") == M((3, 4))
    assert matches(q_end, df, strategy="skip_till_next_match") == M((3, 4))


def test_partition_by_streams_are_contiguous_on_their_own():
    df = events("type ts k", ("A", 1, 1), ("A", 2, 2), ("B", 3, 1), ("B", 4, 2))
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10", strategy="strict_contiguity")
    # semantics section 13: in stream k=1, A0 is followed by B2; in k=2, A1 by B3
    out = semantic_helpers.run_checked(q, df, semantic_helpers.ENGINE, type="type", partition_by="k")
    assert Counter(as_tuples(out)) == M((0, 2), (1, 3))
    # one stream: only A1 is followed by a B
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10", df, strategy="strict_contiguity") == M((1, 2))


def test_single_variable_pattern_every_candidate_is_a_match():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 0), ("A", 3, -1))
    for strategy in ("skip_till_next_match", "strict_contiguity"):
        assert matches("PATTERN A a WHERE a.x > 0 WITHIN 10", df, strategy=strategy) == M((0,))


def test_nested_pattern_is_unsupported_under_non_default_strategy():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    with pytest.raises(UnsupportedPatternError):
        run("PATTERN SEQ(A a, AND(B b, C c)) WITHIN 10", df, strategy="skip_till_next_match")


def test_maximal_kleene_only_under_skip_till_any_match():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    with pytest.raises(UnsupportedPatternError):
        run("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df, strategy="skip_till_next_match", kleene="maximal")


def _compiled(q: str, strategy: str) -> bool:
    """The compiled engine covers ``q`` under ``strategy`` (no fallback: semantics §8's Kleene states)."""
    return not semantic_helpers.refusals(jitcep.compile(q, strategy=strategy))


def test_kleene_strict_contiguity_forks_at_each_event():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("B", 4))
    q = "PATTERN SEQ(A a, B* b[], B c) WITHIN 10"
    # at each B the run at b both takes it and proceeds (count >= 0) to begin c with it:
    # c=B1 after the empty list, c=B2 after (B1), c=B3 after (B1, B2)
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M((0, (), 1), (0, (1,), 2), (0, (1, 2), 3))


def test_kleene_last_bounded_yields_at_each_proceed_point():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("B", 4), ("B", 5))
    q = "PATTERN SEQ(A a, B{2,3} b[]) WITHIN 10"
    # proceed needs 2 members, take stops at 3: (B1, B2), (B1, B2, B3); B4 cannot be taken, the run dies
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M((0, (1, 2)), (0, (1, 2, 3)))


def test_kleene_partition_contiguity_with_an_aggregate_on_the_proceed_edge():
    # k=1: A0 B2(1) B4(1) C6; k=2: A1 B3(5) C5
    df = events("type ts k x", ("A", 1, 1, 0), ("A", 2, 2, 0), ("B", 3, 1, 1), ("B", 4, 2, 5), ("B", 5, 1, 1),
                ("C", 6, 2, 0), ("C", 7, 1, 0))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] AND sum(b.x) >= 3 WITHIN 10"
    assert _compiled(q, "partition_contiguity")
    # k=1: the list (B2, B4) sums to 2, so the proceed edge to c is never enabled; k=2: (B3) sums to 5
    assert matches(q, df, strategy="partition_contiguity") == M((1, (3,), 5))
    # in the whole stream A0 is followed by A1: no run reaches b
    assert matches(q, df, strategy="strict_contiguity") == M()


def test_kleene_iterative_predicate_strict_contiguity():
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10"
    up = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 2), ("C", 3, 0))
    down = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 0), ("C", 3, 0))
    assert _compiled(q, "strict_contiguity")
    assert matches(q, up, strategy="strict_contiguity") == M((0, (1, 2), 3))
    # B2 fails the take edge and is no C: the run can neither select nor ignore it
    assert matches(q, down, strategy="strict_contiguity") == M()


def test_kleene_first_member_is_not_tested_on_an_empty_list():
    df = events("type ts x", ("A", 1, 0), ("C", 2, 0), ("A", 3, 0), ("B", 4, -1), ("C", 5, 0))
    q = "PATTERN SEQ(A a, B* b[], C c) WHERE b[1].x > 0 WITHIN 10"
    # semantics §8: b[1] is on the take edge, so the empty list proceeds (A0, C1); B3 fails it (A2 dies)
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M((0, (), 1))


def test_kleene_state_first_with_min_zero_may_begin_at_the_next_state():
    df = events("type ts", ("C", 1), ("B", 2), ("C", 3))
    q = "PATTERN SEQ(B* b[], C c) WITHIN 10"
    # every event starts a run: C0 past the empty list, B1 taken then C2 (B1 also proceeds, C2 past B1)
    # and C2 past the empty list
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M(((), 0), ((1,), 2), ((), 2))


def test_kleene_skip_till_next_match_begins_the_next_state_at_each_peek():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("C", 4), ("B", 5), ("C", 6))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    # the run at b = (B1) cannot take C2 or C3, so it ignores them and stays; at each the proceed
    # edge's peek holds and c begins: (B1; C2), (B1; C3); then B4 is taken and C5 begins c
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1,), 2), (0, (1,), 3), (0, (1, 4), 5))


def test_kleene_skip_till_next_match_an_event_both_taken_and_begun_ends_the_run():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("B", 4))
    q = "PATTERN SEQ(A a, B+ b[], B c) WITHIN 10"
    # the run (a; B1) at b meets B2, which b can take and c can begin: both select it (a match (B1; B2) and
    # the run (a; B1, B2) at b), and the buffer (a; B1) ignores it nowhere, so it ends; the same at B3.
    # The compiled runs begin c with every candidate before the next take at once, not this one
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1,), 2), (0, (1, 2), 3))


def test_kleene_skip_till_next_match_first_member_test_is_on_the_take_edge():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 0), ("B", 3, 1), ("C", 4, 0))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[1].x > 0 WITHIN 10"
    # semantics §8: b[1] on the take edge, so B1 (x = 0) cannot be taken and is ignored; B2 is taken
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (2,), 3))


def test_closure_alone_strict_contiguity_yields_at_each_proceed_point():
    df = events("type ts", ("B", 1), ("B", 2), ("C", 3), ("B", 4))
    q = "PATTERN B+ b[] WITHIN 10"
    # every B starts a run; the Kleene state is last, so each take is a match; C2 can be neither taken nor
    # ignored, so the runs of B0 and B1 die there
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M(((0,),), ((0, 1),), ((1,),), ((3,),))


def test_closure_alone_skip_till_next_match_skips_what_it_cannot_take():
    df = events("type ts", ("B", 1), ("B", 2), ("C", 3), ("B", 4))
    q = "PATTERN B+ b[] WITHIN 10"
    # C2 is ignored: the run of B0 goes on to B3
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M(
        ((0,),), ((0, 1),), ((0, 1, 3),), ((1,),), ((1, 3),), ((3,),))


def test_bounded_closure_alone_partition_contiguity():
    # k=1: B0 B2 B3 B5 (C4 is k=2); k=2: B1 C4
    df = events("type ts k", ("B", 1, 1), ("B", 2, 2), ("B", 3, 1), ("B", 4, 1), ("C", 5, 2), ("B", 6, 1))
    q = "PATTERN B{2,3} b[] WHERE [k] WITHIN 10"
    # proceed needs two members, take stops at three (the run of B0 cannot take B5); in k=2, C4 kills B1's run
    assert _compiled(q, "partition_contiguity")
    assert matches(q, df, strategy="partition_contiguity") == M(
        ((0, 2),), ((0, 2, 3),), ((2, 3),), ((2, 3, 5),), ((3, 5),))


def test_member_wise_conjunct_with_a_later_variable_is_on_its_begin_edge():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 1), ("B", 3, 5), ("C", 4, 3), ("C", 5, 9))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x < c.x WITHIN 10"
    # SASE+ 3.2 step 2: the conjunct's last identifier is c, so c's begin edge reads every member of the
    # run's list: (B1, B2) has x 1, 5; C3 (x 3) fails it and is ignored, C4 (x 9) begins c
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1, 2), 4))
    # strict contiguity cannot ignore C3: the run dies
    assert matches(q, df, strategy="strict_contiguity") == M()
    assert matches(q, df, strategy="skip_till_any_match") == M(
        (0, (1,), 3), (0, (1,), 4), (0, (2,), 4), (0, (1, 2), 4))


def test_aggregate_with_a_later_variable_partition_contiguity():
    # k=1: A0 B1(1) B3(2) C4(4); k=2: B2 A5 B6(5) C7(5)
    df = events("type ts k x", ("A", 1, 1, 0), ("B", 2, 1, 1), ("B", 3, 2, 7), ("B", 4, 1, 2), ("C", 5, 1, 4),
                ("A", 6, 2, 0), ("B", 7, 2, 5), ("C", 8, 2, 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] AND sum(b.x) < c.x WITHIN 10"
    # k=1: 1 + 2 < 4 begins c; k=2: 5 < 5 fails and C7 cannot be taken at b either, so A5's run dies
    assert _compiled(q, "partition_contiguity")
    assert matches(q, df, strategy="partition_contiguity") == M((0, (1, 3), 4))


def test_iterative_conjunct_with_a_later_variable_reads_consecutive_members():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 0), ("B", 3, 3), ("B", 4, 4), ("C", 5, 2), ("C", 6, 4))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x - b[i-1].x < c.x WITHIN 10"
    # the steps of (B1, B2, B3) are 3 and 1: C4 (x 2) fails c's begin edge, C5 (x 4) passes it
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1, 2, 3), 5))


def test_conjunct_with_a_later_variable_holds_on_an_empty_list():
    df = events("type ts x", ("A", 1, 0), ("C", 2, 0), ("D", 3, 0), ("A", 4, 0), ("B", 5, 5), ("C", 6, 0),
                ("D", 7, 9))
    q = "PATTERN SEQ(A a, B* b[], C c, D d) WHERE b[i].x < d.x WITHIN 10"
    # A0's run proceeds past the empty list (the conjunct holds for no member, section 4); A3's takes B4,
    # whose x 5 < 9
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M((0, (), 1, 2), (3, (4,), 5, 6))


def test_several_kleene_states_one_buffer_at_several_states():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("B", 4), ("C", 5), ("D", 6))
    q = "PATTERN SEQ(A a, B+ b[], C* c[], D d) WITHIN 10"
    # at D2 the run (a; B1) at b peeks through the empty c to d: it begins d (a match), ignores D2 at b and
    # also at c, so the buffer (a; B1) lives at b and at c.  At b it takes B3; at c it takes C4.  The run
    # (a; B1, B3) at b peeks at C4: c takes it, and b ignores it (it stays); at D5 both reach d.
    # The compiled runs keep that set of states per buffer (jitcep/execute/nfa_kleene.py).
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M(
        (0, (1,), (), 2), (0, (1,), (4,), 5), (0, (1, 3), (), 5), (0, (1, 3), (4,), 5))


def test_adjacent_kleene_states_strict_contiguity_and_skip_till_next_match():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4), ("C", 5))
    q = "PATTERN SEQ(A a, B+ b[], C+ c[]) WITHIN 10"
    # strict: b takes B1, B2; C3 cannot be taken at b, so the run proceeds and c takes it (a match, c last),
    # then C4 too.  Next match also: the run (a; B1, B2) at b ignores C3 (its peek begins c there) and begins
    # c again at C4
    assert _compiled(q, "strict_contiguity")
    assert matches(q, df, strategy="strict_contiguity") == M((0, (1, 2), (3,)), (0, (1, 2), (3, 4)))
    assert matches(q, df, strategy="skip_till_next_match") == M(
        (0, (1, 2), (3,)), (0, (1, 2), (3, 4)), (0, (1, 2), (4,)))


def test_adjacent_kleene_states_skip_what_neither_takes():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("B", 4), ("C", 5), ("D", 6), ("C", 7))
    q = "PATTERN SEQ(A a, B+ b[], C+ c[]) WITHIN 10"
    # strict: D2 is neither B nor C and kills the run; next match skips D2 and D5: (B1, B3) then c begins at
    # C4 and at C6 (the run at b ignores both), and (C4) takes C6
    assert matches(q, df, strategy="strict_contiguity") == M()
    assert matches(q, df, strategy="skip_till_next_match") == M(
        (0, (1, 3), (4,)), (0, (1, 3), (4, 6)), (0, (1, 3), (6,)))


def test_adjacent_kleene_states_strict_ts_count_window_past_the_later_timestamp():
    # A0 A1 A2 at ts 0, A3 at ts 1; WITHIN 2 EVENTS.  Under strict_ts a take needs a later timestamp, so the
    # runs at A0 and A1 can take nothing (their window ends at A1 / A2, before the first later event, A3):
    # they give (c=(0,)) and (c=(1,)).  The run at A2 takes A3 at c or begins e with it.  The run at A0 once
    # asked for e's candidates from A3 (the first later timestamp) to A1 (its window's last event), a range
    # whose low end passes its high end: under a count window only (a time window reaches the last event's
    # timestamp, so its first later event never lies past the window's end).  A crash found by the runs form of
    # tests/test_compiled_empty_closures.py (seed 4)
    df = events("type ts", ("A", 0), ("A", 0), ("A", 0), ("A", 1))
    q = "PATTERN SEQ(A+ c[], A* e[]) WITHIN 2 EVENTS"
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match", order="strict_ts") == M(
        ((0,), ()), ((1,), ()), ((2,), ()), ((2, 3), ()), ((2,), (3,)), ((3,), ()))
    assert matches("PATTERN SEQ(A+ c[], A+ e[]) WITHIN 2 EVENTS", df, strategy="skip_till_next_match",
                   order="strict_ts") == M(((2,), (3,)))


def test_bounded_kleene_states_with_iterative_and_aggregate_conjuncts():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 0), ("B", 3, 0), ("C", 4, 5), ("C", 5, 3), ("C", 6, 7),
                ("D", 7, 0))
    q = ("PATTERN SEQ(A a, B{1,2} b[], C+ c[], D d) WHERE c[i].x > c[i-1].x AND count(b) = count(c) "
         "WITHIN 10")
    # next match: (B1, B2) is full, so b ignores every C and begins c at each: (C3) cannot take C4 (3 < 5)
    # and takes C5; (C4) takes C5; (C5) alone has one member, not two; count(b) = count(c) is on c's
    # proceed edge.  Strict: (C3) must take C4, which fails the iterative conjunct: no match
    assert _compiled(q, "skip_till_next_match")
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1, 2), (3, 5), 6), (0, (1, 2), (4, 5), 6))
    assert matches(q, df, strategy="strict_contiguity") == M()


def test_kleene_states_beside_a_negation_and_a_key():
    # k=1: A0 B1(x 1) C3(2) C7(0); k=2: A2 B4(5) N5 C6(6)
    df = events("type ts k x", ("A", 1, 1, 0), ("B", 2, 1, 1), ("A", 3, 2, 0), ("C", 4, 1, 2), ("B", 5, 2, 5),
                ("N", 6, 2, 0), ("C", 7, 2, 6), ("C", 8, 1, 0))
    q = "PATTERN SEQ(A a, B+ b[], !N n, C+ c[]) WHERE [k] AND b[i].x < c[i].x WITHIN 10"
    # b[i].x < c[i].x holds for every pair of members (c's take edge): C7 (x 0) fails it.  In k=2 the run
    # must take N5 under partition contiguity (it dies); under next match it skips N5 and takes C6, but
    # the negation then kills (A2; B4; C6)
    assert _compiled(q, "partition_contiguity")
    assert matches(q, df, strategy="partition_contiguity") == M((0, (1,), (3,)))
    assert matches(q, df, strategy="skip_till_next_match") == M((0, (1,), (3,)))
