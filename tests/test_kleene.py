"""Kleene closure: +, *, {n}, {n,m}, {n,}, KL(...), iterative predicates, aggregates, maximal mode.

Expected matches from DESIGN.md section 2 ("Kleene") and docs/semantics.md §4
(Kleene references), §6 (closure; §6.1 kleene="all": every qualifying
subsequence under skip_till_any_match; §6.2 kleene="maximal": ZStream's KSEQ),
§12 (caps).  A Kleene variable appears in a tuple as the tuple of its members'
input rows.
"""

from __future__ import annotations

import polars as pl
import pytest

from jitcep.errors import ExplosionError, UnsupportedPatternError
from semantic_helpers import M, column_values, events, matches, run

# four B events between an A and a C, used by the bound tests
FOUR_B = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("B", 4), ("C", 5))


def test_plus_every_nonempty_subsequence():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4))
    # non-empty subsequences of {B1, B2}
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df) == M(
        (0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_plus_members_lie_between_neighbours():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("B", 4), ("C", 5))
    # c=C2: only B1 is before it; c=C4: subsets of {B1, B3}
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df) == M(
        (0, (1,), 2), (0, (1,), 4), (0, (3,), 4), (0, (1, 3), 4))


def test_kl_spelling_equals_plus():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4))
    assert matches("PATTERN SEQ(A a, KL(B b), C c) WITHIN 10", df) == M(
        (0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_star_allows_an_empty_list():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("A", 4), ("C", 5))
    # (A0, C2): [] or [B1]; (A0, C4): [] or [B1]; (A3, C4): [] only
    assert matches("PATTERN SEQ(A a, B* b[], C c) WITHIN 10", df) == M(
        (0, (), 2), (0, (1,), 2), (0, (), 4), (0, (1,), 4), (3, (), 4))


def test_star_alone_never_matches_nothing():
    df = events("type ts", ("B", 1), ("B", 2), ("X", 3))
    # semantics.md §3: a match binds at least one positive event
    assert matches("PATTERN B* b[] WITHIN 10", df) == M(((0,),), ((1,),), ((0, 1),))


def test_exact_count():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4))
    # every pair of {B1, B2, B3}
    assert matches("PATTERN SEQ(A a, B{2} b[], C c) WITHIN 10", df) == M(
        (0, (1, 2), 4), (0, (1, 3), 4), (0, (2, 3), 4))


def test_bounded_count():
    pairs = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    triples = [(1, 2, 3), (1, 2, 4), (1, 3, 4), (2, 3, 4)]
    # {2,3}: the 6 pairs and 4 triples of {B1..B4}, not the quadruple
    assert matches("PATTERN SEQ(A a, B{2,3} b[], C c) WITHIN 10", FOUR_B) == M(
        *[(0, t, 5) for t in pairs + triples])
    assert matches("PATTERN SEQ(A a, KL(B b){2,3}, C c) WITHIN 10", FOUR_B) == M(
        *[(0, t, 5) for t in pairs + triples])


def test_at_least_count():
    pairs = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    triples = [(1, 2, 3), (1, 2, 4), (1, 3, 4), (2, 3, 4)]
    # {3,}: 4 triples and the quadruple
    assert matches("PATTERN SEQ(A a, B{3,} b[], C c) WITHIN 10", FOUR_B) == M(
        *[(0, t, 5) for t in triples + [(1, 2, 3, 4)]])
    # {2,}: everything of length >= 2
    assert matches("PATTERN SEQ(A a, B{2,} b[], C c) WITHIN 10", FOUR_B) == M(
        *[(0, t, 5) for t in pairs + triples + [(1, 2, 3, 4)]])


def test_member_filter_plain_reference():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, -1), ("B", 3, 2), ("C", 4, 0))
    # plain b.x > 0 applies to every member: lists drawn from {B1, B3}, never B2
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b.x > 0 WITHIN 10", df) == M(
        (0, (1,), 4), (0, (3,), 4), (0, (1, 3), 4))


def test_member_filter_i_reference_against_other_variable():
    df = events("type ts x", ("A", 0, 2), ("B", 1, 1), ("B", 2, 3), ("B", 3, 4), ("C", 4, 0))
    # b[i].x > a.x: every member above 2 -> lists from {B2, B3}
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > a.x WITHIN 10", df) == M(
        (0, (2,), 4), (0, (3,), 4), (0, (2, 3), 4))


def test_iterative_predicate_increasing():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 3), ("B", 3, 2), ("C", 4, 0))
    # b[i].x > b[i-1].x: singletons always; (B1,B2) 1<3, (B1,B3) 1<2; (B2,B3) 3>2 and (B1,B2,B3) fail
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10"
    assert matches(q, df) == M((0, (1,), 4), (0, (2,), 4), (0, (3,), 4), (0, (1, 2), 4), (0, (1, 3), 4))


def test_first_member_reference():
    df = events("type ts x", ("A", 0, 5), ("B", 1, 3), ("B", 2, 7), ("C", 3, 0))
    # b[1].x > a.x: the first member must be B2 (7 > 5); (B1, B2) starts with 3
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[1].x > a.x WITHIN 10", df) == M((0, (2,), 3))


def test_last_member_reference():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 9), ("C", 3, 5))
    # b[b.LEN].x < c.x: the last member must be B1 (1 < 5); lists ending in B2 (9) fail
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[b.LEN].x < c.x WITHIN 10"
    assert matches(q, df) == M((0, (1,), 3))


def test_fixed_member_reference_needs_that_member():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("B", 3, -1), ("C", 4, 0))
    # b[2].x > 0: lists of length >= 2 whose second member is B2; b[2] is NULL for singletons
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[2].x > 0 WITHIN 10"
    assert matches(q, df) == M((0, (1, 2), 4), (0, (1, 2, 3), 4))


def test_count_and_len():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4))
    pairs = M((0, (1, 2), 4), (0, (1, 3), 4), (0, (2, 3), 4))
    # count(b) = 2 and b.LEN = 2 both select exactly the pairs
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE count(b) = 2 WITHIN 10", df) == pairs
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b.LEN = 2 WITHIN 10", df) == pairs


# B1 x=1, B2 x=4, B3 x=2 between A0 and C4
AGG = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 4), ("B", 3, 2), ("C", 4, 0))


def test_sum_aggregate():
    # sums: {1}:1 {2}:4 {3}:2 {1,2}:5 {1,3}:3 {2,3}:6 {1,2,3}:7 -> >= 5: {1,2} {2,3} {1,2,3}
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b.x) >= 5 WITHIN 10"
    assert matches(q, AGG) == M((0, (1, 2), 4), (0, (2, 3), 4), (0, (1, 2, 3), 4))


def test_sum_with_brackets_spelling():
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b[].x) >= 5 WITHIN 10"
    assert matches(q, AGG) == M((0, (1, 2), 4), (0, (2, 3), 4), (0, (1, 2, 3), 4))


def test_avg_aggregate():
    # avgs: 1, 4, 2, 2.5, 1.5, 3, 7/3 -> > 2: {2} {1,2} {2,3} {1,2,3}
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE avg(b.x) > 2 WITHIN 10"
    assert matches(q, AGG) == M((0, (2,), 4), (0, (1, 2), 4), (0, (2, 3), 4), (0, (1, 2, 3), 4))


def test_min_aggregate():
    # min >= 2 excludes every list holding B1 (x=1)
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE min(b.x) >= 2 WITHIN 10"
    assert matches(q, AGG) == M((0, (2,), 4), (0, (3,), 4), (0, (2, 3), 4))


def test_max_aggregate():
    # max <= 2 excludes every list holding B2 (x=4)
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE max(b.x) <= 2 WITHIN 10"
    assert matches(q, AGG) == M((0, (1,), 4), (0, (3,), 4), (0, (1, 3), 4))


def test_return_aggregates_as_columns():
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE count(b) >= 2 WITHIN 10 RETURN a, b, c, sum(b.x) AS total"
    # pairs and the triple, with their sums (1+4, 1+2, 4+2, 1+4+2)
    got = column_values(q, AGG, "total", variables=("a", "b", "c"))
    assert got == M((0, (1, 2), 4, 5), (0, (1, 3), 4, 3), (0, (2, 3), 4, 6), (0, (1, 2, 3), 4, 7))


def test_kleene_at_start():
    df = events("type ts", ("B", 1), ("B", 2), ("C", 3))
    assert matches("PATTERN SEQ(B+ b[], C c) WITHIN 10", df) == M(((0,), 2), ((1,), 2), ((0, 1), 2))


def test_kleene_at_start_window_bounds_members():
    df = events("type ts", ("B", 0), ("B", 2), ("C", 3))
    # WITHIN 2: B0@0 is 3 before C2@3 -> only [B1]
    assert matches("PATTERN SEQ(B+ b[], C c) WITHIN 2", df) == M(((1,), 2))


def test_kleene_at_end():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3))
    # WITHIN 2 from A0@0: members from {B1, B2}; B3@3 is too late
    assert matches("PATTERN SEQ(A a, B+ b[]) WITHIN 2", df) == M((0, (1,)), (0, (2,)), (0, (1, 2)))


def test_kleene_alone():
    df = events("type ts", ("B", 0), ("B", 1), ("B", 3))
    # WITHIN 2: {0} {1} {2} {0,1} {1,2}; {0,2} and {0,1,2} span 3
    assert matches("PATTERN B+ b[] WITHIN 2", df) == M(((0,),), ((1,),), ((2,),), ((0, 1),), ((1, 2),))


def test_kleene_with_equivalence_key():
    df = events("type ts k", ("A", 0, 1), ("B", 1, 1), ("B", 2, 2), ("B", 3, 1), ("C", 4, 1))
    # [k] covers every member: B2 (k=2) never joins
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE [k] WITHIN 10", df) == M(
        (0, (1,), 4), (0, (3,), 4), (0, (1, 3), 4))


def test_two_kleene_variables():
    df = events("type ts", ("A", 0), ("A", 1), ("B", 2), ("B", 3))
    # a from {A0, A1}, b from {B2, B3}: 3 x 3 combinations
    lists_a = [(0,), (1,), (0, 1)]
    lists_b = [(2,), (3,), (2, 3)]
    assert matches("PATTERN SEQ(A+ a[], B+ b[]) WITHIN 10", df) == M(
        *[(x, y) for x in lists_a for y in lists_b])


def test_kleene_group_of_seq():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4), ("C", 5))
    # iterations (a, b) in order, iteration 2 entirely after iteration 1 (semantics.md §6):
    # one iteration: (A0,B1) (A0,B3) (A2,B3); two: (A0,B1) then (A2,B3)
    assert matches("PATTERN SEQ(KL(SEQ(A a, B b)), C c) WITHIN 10", df) == M(
        ((0,), (1,), 4), ((0,), (3,), 4), ((2,), (3,), 4), ((0, 2), (1, 3), 4))


def test_kleene_group_of_and():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4), ("C", 5))
    # semantics.md §6 "AND groups": a set of 2 distinct AND-body matches, unordered, which may share
    # events, listed in canonical order.  Body matches (a, b) in canonical order:
    # m1 = (0,1), m2 = (2,1), m3 = (0,3), m4 = (2,3); every pair {mi, mj}, i < j, then C4.
    assert matches("PATTERN SEQ(KL(AND(A a, B b)){2}, C c) WITHIN 10", df) == M(
        ((0, 2), (1, 1), 4),    # {m1, m2}
        ((0, 0), (1, 3), 4),    # {m1, m3}
        ((0, 2), (1, 3), 4),    # {m1, m4}
        ((2, 0), (1, 3), 4),    # {m2, m3}
        ((2, 2), (1, 3), 4),    # {m2, m4}
        ((0, 2), (3, 3), 4))    # {m3, m4}


def test_maximal_takes_all_qualifying_events_between_neighbours():
    df = events("type ts x", ("A", 0, 0), ("A", 1, 0), ("B", 2, 1), ("B", 3, -1), ("C", 4, 0),
                ("B", 5, 2), ("C", 6, 0))
    # one list per (a, c): every B with x > 0 strictly between them
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b.x > 0 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M(
        (0, (2,), 4), (1, (2,), 4), (0, (2, 5), 6), (1, (2, 5), 6))


def test_maximal_plus_needs_a_member_star_does_not():
    df = events("type ts", ("A", 0), ("C", 1), ("B", 2), ("C", 3))
    # (A0, C1) has nothing between: no match for +, an empty list for *
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df, kleene="maximal") == M((0, (2,), 3))
    assert matches("PATTERN SEQ(A a, B* b[], C c) WITHIN 10", df, kleene="maximal") == M(
        (0, (), 1), (0, (2,), 3))


def test_maximal_closure_count_is_a_sliding_window():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, -1), ("B", 3, 1), ("B", 4, 1), ("C", 5, 0))
    # ZStream Figure 6: runs of 2 consecutive qualifying events (x > 0): B1 B3, B3 B4
    q = "PATTERN SEQ(A a, B{2} b[], C c) WHERE b.x > 0 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M((0, (1, 3), 5), (0, (3, 4), 5))


def test_maximal_aggregate_checked_on_the_whole_list():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("C", 2, 0), ("B", 3, 2), ("C", 4, 0))
    # (A0, C2): list [B1], sum 1 fails and no smaller list is tried; (A0, C4): [B1, B3], sum 3
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b.x) > 2 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M((0, (1, 3), 4))


def test_maximal_closure_count_with_aggregates_over_the_runs():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 4), ("B", 2, -1), ("B", 3, 3), ("B", 4, 2), ("C", 5, 0))
    # the runs of 2..3 consecutive Bs, by hand with their sums: B1 B2 (3), B2 B3 (2), B3 B4 (5),
    # B1 B2 B3 (6), B2 B3 B4 (4); sum > 3 and min > -1 keep B3 B4 only, sum > 3 alone also the two
    # runs of three (the lists are tested as runs of the members, section 6.2, never gathered first)
    q = "PATTERN SEQ(A a, B{2,3} b[], C c) WHERE sum(b.x) > 3 AND min(b.x) > -1 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M((0, (3, 4), 5))
    q = "PATTERN SEQ(A a, B{2,3} b[], C c) WHERE sum(b.x) > 3 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M((0, (3, 4), 5), (0, (1, 2, 3), 5), (0, (2, 3, 4), 5))
    q = "PATTERN SEQ(A a, B{2,3} b[], C c) WHERE avg(b.x) = 2 AND count(b) = 3 WITHIN 10"
    assert matches(q, df, kleene="maximal") == M((0, (1, 2, 3), 5))


@pytest.mark.parametrize("kleene", ["maximal", "all"])
def test_int_sum_is_null_only_when_the_total_leaves_int64(kleene):
    big = 2**63 - 1
    df = events("type ts x", ("A", 0, 0), ("B", 1, big), ("B", 2, 1), ("B", 3, -1), ("C", 4, 0))
    # section 4: exact sums, NULL outside int64; big + 1 passes it on the way, big + 1 - 1 is back inside
    q = f"PATTERN SEQ(A a, B{{3}} b[], C c) WHERE sum(b.x) = {big} WITHIN 10"
    assert matches(q, df, kleene=kleene) == M((0, (1, 2, 3), 4))
    q = "PATTERN SEQ(A a, B{2} b[], C c) WHERE sum(b.x) IS NULL WITHIN 10"
    assert matches(q, df, kleene=kleene) == M((0, (1, 2), 4))  # of the pairs, {B1, B2} alone leaves int64


def test_maximal_rejects_iterative_predicate():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("C", 2, 0))
    with pytest.raises(UnsupportedPatternError):
        run("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10", df, kleene="maximal")


def test_kleene_cap_raises_explosion_error():
    df = events("type ts", ("A", 0), *[("B", t) for t in range(1, 7)], ("C", 7))
    # 6 Bs give 63 lists for the one (a, c) binding, over max_kleene=10: an error, never truncation
    with pytest.raises(ExplosionError):
        run("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df, max_kleene=10)


def test_kleene_under_cap_is_complete():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4))
    # 7 lists, cap 7: all of them
    got = matches("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df, max_kleene=7)
    assert sum(got.values()) == 7


def test_and_group_iteration_rejected_halfway():
    df = events("type ts", ("A", 0), ("B", 5), ("A", 8), ("B", 15))
    # body matches (a, b): m1 = (0,1), m2 = (2,1), m3 = (2,3); (0,3) spans 15 > 10.  Sets of two:
    # {m1,m2} spans 8 and {m2,m3} 10; {m1,m3} is rejected at B3 after A2 was already added to the
    # match (ts 15 - 0 > 10): the half-added iteration is taken back whole (Matcher.push_all)
    assert matches("PATTERN KL(AND(A a, B b)){2} WITHIN 10", df) == M(
        ((0, 2), (1, 1)), ((2, 2), (1, 3)))


def test_kleene_cap_counts_per_binding_in_each_engine(_semantic_engine):
    # docs/semantics.md section 12: the reference enumerates a's lists before c is bound (15 lists of
    # the four Bs > 3); the compiled engine per (a, c): the Bs between a0 and c3 give 3 lists
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("C", 3), ("B", 4), ("B", 5))
    q = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    if _semantic_engine == "reference":
        with pytest.raises(ExplosionError):
            run(q, df, max_kleene=3)
    else:
        assert matches(q, df, max_kleene=3) == M((0, (1,), 3), (0, (2,), 3), (0, (1, 2), 3))


def test_negation_next_to_a_closure_is_bounded_by_the_list():
    df = events("type ts", ("A", 0), ("B", 1), ("N", 2), ("B", 3), ("C", 4))
    # before the closure: n's range ends at the list's first member; [B3] alone lets N2 in
    assert matches("PATTERN SEQ(A a, !N n, B+ b[], C c) WITHIN 10", df) == M(
        (0, (1,), 4), (0, (1, 3), 4))
    # after the closure: the range starts at the last member; [B1] alone lets N2 in
    assert matches("PATTERN SEQ(A a, B+ b[], !N n, C c) WITHIN 10", df) == M(
        (0, (3,), 4), (0, (1, 3), 4))
    # an empty list bounds nothing: the range runs to the next variable (c), where N2 kills
    assert matches("PATTERN SEQ(A a, !N n, D* d[], C c) WITHIN 10", df) == M()
    assert matches("PATTERN SEQ(A a, !N n, B* b[], C c) WITHIN 10", df) == M(
        (0, (1,), 4), (0, (1, 3), 4))


def test_fixed_index_on_an_empty_list_is_null():
    df = events("type ts x", ("A", 0, 0), ("C", 1, 0), ("B", 2, 5), ("C", 3, 0))
    # section 4: b[1] of an empty list is NULL, so b[1].x > 0 rejects (A0, [], C1); a conjunct over
    # every member (b.x > 0) holds on the empty list
    assert matches("PATTERN SEQ(A a, B* b[], C c) WHERE b[1].x > 0 WITHIN 10", df) == M((0, (2,), 3))
    assert matches("PATTERN SEQ(A a, B* b[], C c) WHERE b.x > 0 WITHIN 10", df) == M(
        (0, (), 1), (0, (), 3), (0, (2,), 3))


def test_negation_condition_on_the_closure():
    df = events("type ts x", ("A", 0, 0), ("N", 1, 5), ("B", 2, 1), ("B", 3, 9), ("C", 4, 0))
    # N1 lies in n's range of every list (before the first member); it kills a list when the condition
    # holds, i.e. for every member (section 4): [B2] (1 < 5) dies, [B3] (9) and [B2, B3] (9) survive
    assert matches("PATTERN SEQ(A a, !N n, B+ b[], C c) WHERE b.x < n.x WITHIN 10", df) == M(
        (0, (3,), 4), (0, (2, 3), 4))


def test_maximal_closure_in_a_nested_seq():
    # normal form (section 5): SEQ(A a, SEQ(B+ b[], C c)) is SEQ(A a, B+ b[], C c)
    df = events("type ts", ("A", 1), ("B", 2), ("B", 3), ("C", 4))
    assert matches("PATTERN SEQ(A a, SEQ(B+ b[], C c)) WITHIN 5", df, kleene="maximal") == M((0, (1, 2), 3))
    assert matches("PATTERN SEQ(SEQ(A a, B+ b[]), C c) WITHIN 5", df, kleene="maximal") == M((0, (1, 2), 3))


def test_maximal_closure_under_and_or_is_refused():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("D", 4))
    with pytest.raises(UnsupportedPatternError):
        run("PATTERN AND(SEQ(A a, B+ b[], C c), D d) WITHIN 5", df, kleene="maximal")


def test_maximal_list_that_breaks_a_count_window_is_no_match():
    # nondecreasing_ts: A3 (ts 2) counts as before C2 (ts 2), so the list is (1, 3); with a and c the
    # match spans positions 0..3, not < 3 (section 2), and no smaller list is tried (section 6.2)
    df = events("type ts", ("B", 1), ("A", 2), ("C", 2), ("A", 2))
    q = "PATTERN SEQ(B a, A+ b[], C c) WITHIN 3 EVENTS"
    assert matches(q, df, kleene="maximal", order="nondecreasing_ts") == M()
    assert matches(q.replace("3 EVENTS", "4 EVENTS"), df, kleene="maximal", order="nondecreasing_ts") == M(
        (0, (1, 3), 2))
    df = events("type ts", ("A", 2), ("C", 2), ("A", 2))
    q = "PATTERN SEQ(A+ b[], C c) WITHIN 2 EVENTS"
    assert matches(q, df, kleene="maximal", order="nondecreasing_ts") == M()
    assert matches(q.replace("2 EVENTS", "3 EVENTS"), df, kleene="maximal", order="nondecreasing_ts") == M(
        ((0, 2), 1))


# --- several closures, closures inside AND and OR (semantics §6.1, §5, §3) -----------------------------
# Each form runs compiled (semantic_helpers asserts no FallbackWarning for a covered pattern) and on the
# reference; test_forms_are_compiled pins that these patterns are covered.

FORMS = {
    "two": "PATTERN SEQ(A a, B+ b[], C c, D+ d[], E e) WITHIN 10",
    "adjacent": "PATTERN SEQ(A a, B+ b[], B+ d[], C c) WITHIN 10",
    "and": "PATTERN AND(A a, B+ b[]) WITHIN 2",
    "and_two": "PATTERN AND(A a, B+ b[], B* d[]) WITHIN 10",
    "and_negation": "PATTERN AND(A a, B+ b[], !B n) WITHIN 10",
    "or": "PATTERN OR(SEQ(A a, B+ b[]), C c) WITHIN 3",
}


def _assert_compiled(text: str) -> None:
    from jitcep import compile as compile_, runtime

    q = compile_(text)
    runtime.check_supported(q.patterns[0], q.options)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms_are_compiled(name):
    _assert_compiled(FORMS[name])


def test_two_closures_in_one_seq():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("C", 3), ("D", 4), ("D", 5), ("E", 6))
    # every non-empty subsequence of {B1, B2} times every one of {D4, D5}: 3 x 3
    bs, ds = [(1,), (2,), (1, 2)], [(4,), (5,), (4, 5)]
    assert matches(FORMS["two"], df) == M(*[(0, b, 3, d, 6) for b in bs for d in ds])


def test_adjacent_closures_split_the_events_between_them():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4))
    # every b-list before every d-list, both non-empty, disjoint (section 3)
    assert matches(FORMS["adjacent"], df) == M(
        (0, (1,), (2,), 4), (0, (1,), (3,), 4), (0, (1,), (2, 3), 4), (0, (2,), (3,), 4), (0, (1, 2), (3,), 4))


def test_closure_inside_and_is_bounded_by_the_window_only():
    df = events("type ts", ("B", 0), ("A", 1), ("B", 2), ("B", 3), ("B", 4))
    # members on either side of a; every two events of the match within 2 (section 2): B0 and B3 are
    # 3 apart, B4 is 3 after a
    assert matches(FORMS["and"], df) == M((1, (0,)), (1, (2,)), (1, (3,)), (1, (0, 2)), (1, (2, 3)))


def test_two_closures_inside_and_bind_distinct_events():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2))
    # b non-empty, d possibly empty, no event in both (section 3)
    assert matches(FORMS["and_two"], df) == M(
        (0, (1,), ()), (0, (2,), ()), (0, (1, 2), ()), (0, (1,), (2,)), (0, (2,), (1,)))


def test_negation_in_the_closures_and_ignores_the_members():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2))
    # a list's members are positive events of the match, never its negated event (section 7 rule 1):
    # [B1] spans (A0, B1), nothing inside; [B2] dies by B1 inside (A0, B2); [B1, B2] holds B1 itself
    assert matches(FORMS["and_negation"], df) == M((0, (1,)), (0, (1, 2)))


def test_closure_in_an_or_branch_is_unbound_in_the_other():
    df = events("type ts", ("A", 0), ("B", 1), ("C", 2), ("B", 3))
    assert matches(FORMS["or"], df) == M((0, (1,), None), (0, (3,), None), (0, (1, 3), None), (None, None, 2))


def test_negation_beside_a_closure_under_nondecreasing_ts():
    # B1 and B2 tie in time with C: a list member is never the negated event, but the other B,
    # tied with the list's last member, lies between it and c (section 7, ties admitted)
    df = events("type ts", ("A", 0), ("B", 1), ("B", 1), ("C", 1))
    q = "PATTERN SEQ(A a, B+ b[], !B n, C c) WITHIN 10"
    assert matches(q, df, order="nondecreasing_ts") == M((0, (1, 2), 3))


def test_maximal_two_closures_in_one_seq():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("C", 3), ("D", 4), ("D", 5), ("E", 6))
    assert matches(FORMS["two"], df, kleene="maximal") == M((0, (1, 2), 3, (4, 5), 6))


def test_list_conjunct_over_two_closures():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("C", 3, 0), ("D", 4, 2), ("D", 5, 3))
    # tested once both lists are made: count(b) = count(d) pairs lists of equal length, 3 + 1 of them;
    # sum(b.x) > max(d.x) keeps those with b's sum above d's maximum
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE count(b) = count(d) WITHIN 10"
    assert matches(q, df) == M(*[(0, b, 3, d) for b in [(1,), (2,)] for d in [(4,), (5,)]],
                               (0, (1, 2), 3, (4, 5)))
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE count(b) = count(d) AND sum(b.x) > max(d.x) WITHIN 10"
    assert matches(q, df) == M((0, (1,), 3, (4,)), (0, (1,), 3, (5,)), (0, (1, 2), 3, (4, 5)))


def test_member_wise_conjunct_over_two_closures_holds_for_every_pair():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("C", 3, 0), ("D", 4, 2), ("D", 5, 3))
    # every b member below every d member (section 4: every i, every j): only b = [B2] (x=1)
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE b.x < d.x WITHIN 10"
    assert matches(q, df) == M((0, (2,), 3, (4,)), (0, (2,), 3, (5,)), (0, (2,), 3, (4, 5)))
    # d may be empty: then the conjunct holds vacuously for every b list
    q = "PATTERN SEQ(A a, B+ b[], C c, D* d[]) WHERE b.x < d.x WITHIN 10"
    assert matches(q, df.head(4)) == M((0, (1,), 3, ()), (0, (2,), 3, ()), (0, (1, 2), 3, ()))


def test_member_of_one_closure_with_the_list_of_another():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("C", 3, 0), ("D", 4, 2), ("D", 5, 3))
    # every b member above max(d.x) (b collected first, its members read when d's lists are made):
    # b = [B1] (5) with every d list; [B2] (1) and [B1, B2] with none
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE b.x > max(d.x) WITHIN 10"
    assert matches(q, df) == M(*[(0, (1,), 3, d) for d in [(4,), (5,), (4, 5)]])
    # every d member below min(b.x) + 2: [B1] (7) with every d list, [B2] and [B1, B2] (3) with [D4] (2) only
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE d[i].x < min(b.x) + 2 WITHIN 10"
    assert matches(q, df) == M(*[(0, (1,), 3, d) for d in [(4,), (5,), (4, 5)]],
                               (0, (2,), 3, (4,)), (0, (1, 2), 3, (4,)))


def test_previous_member_or_another_closures_count():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("C", 3, 0), ("D", 4, 3), ("D", 5, 2))
    # d[i].x > d[i-1].x fails for [D4, D5] (2 after 3), which passes only where b has two members
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE d[i].x > d[i-1].x OR count(b) > 1 WITHIN 10"
    assert matches(q, df) == M(*[(0, b, 3, d) for b in [(1,), (2,), (1, 2)] for d in [(4,), (5,)]],
                               (0, (1, 2), 3, (4, 5)))


def test_previous_member_or_an_aggregate_of_the_same_closure():
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("B", 3, 4), ("C", 4, 0))
    # b[i].x > b[i-1].x OR sum(b.x) > 8 for every i >= 2: [5, 1] fails (1 < 5, sum 6); [5, 4] (sum 9),
    # [1, 4] (4 > 1) and [5, 1, 4] (sum 10) pass; one member: vacuous
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x OR sum(b.x) > 8 WITHIN 10"
    assert matches(q, df) == M(*[(0, b, 4) for b in [(1,), (2,), (3,), (2, 3), (1, 3), (1, 2, 3)]])


def test_min_and_max_of_string_and_boolean_members():
    df = events("type ts s f", ("A", 0, "m", True), ("B", 1, "q", False), ("B", 2, None, True),
                ("B", 3, "c", None), ("C", 4, "", False))
    # strings compare lexicographically, a null member is skipped (section 4); FALSE < TRUE
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE max(b.s) > a.s WITHIN 10"
    assert matches(q, df) == M(*[(0, b, 4) for b in [(1,), (1, 2), (1, 3), (1, 2, 3)]])
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE min(b.s) IS NULL WITHIN 10"
    assert matches(q, df) == M((0, (2,), 4))
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE min(b.f) = c.f AND max(b.f) = a.f WITHIN 10"
    assert matches(q, df) == M((0, (1, 2), 4), (0, (1, 2, 3), 4))


def test_conjunct_reading_two_closures_member_wise_with_a_list():
    # every member of b against every member of d (section 4), d's count read on its whole list
    df = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 5), ("C", 3, 0), ("D", 4, 4), ("D", 5, 9))
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE b.x < d.x - count(d) WITHIN 10"
    # d = (4): b.x < 3, so b = (1); d = (5): b.x < 8, every b; d = (4, 5): b.x < min(4, 9) - 2 = 2
    assert matches(q, df) == M((0, (1,), 3, (4,)), (0, (1,), 3, (5,)), (0, (2,), 3, (5,)), (0, (1, 2), 3, (5,)),
                               (0, (1,), 3, (4, 5)))
    # b[i-1] over b with every member of d: b = (1, 2) needs 1 < d.x - 3 for each d member (i = 2 only)
    q = "PATTERN SEQ(A a, B+ b[], C c, D+ d[]) WHERE b[i-1].x < d.x - 3 WITHIN 10"
    assert matches(q, df) == M(*[(0, b, 3, d) for b in [(1,), (2,)] for d in [(4,), (5,), (4, 5)]],
                               (0, (1, 2), 3, (5,)))


def test_negation_condition_reading_two_closures():
    # N1 lies between b and d in every match; it kills iff n.x > b.x + d.x for every pair of members
    df = events("type ts x", ("B", 0, 1), ("N", 1, 5), ("D", 2, 3), ("D", 3, 4))
    q = "PATTERN SEQ(B+ b[], !N n, D+ d[]) WHERE n.x > b.x + d.x WITHIN 10"
    # d = (2,): 5 > 1 + 3 kills; d = (3,): 5 > 1 + 4 fails; d = (2, 3): the pair with D3 fails
    assert matches(q, df) == M(((0,), (3,)), ((0,), (2, 3)))
    q = "PATTERN SEQ(B+ b[], !N n, D+ d[]) WHERE n.x > count(b) + count(d) + 2 WITHIN 10"
    assert matches(q, df) == M(((0,), (2, 3)))  # 5 > 1 + 1 + 2 kills the one-member d lists


# --- negation conditions that read a closure (semantics §7 with §4's quantification) ---------------------

NEG_B = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("B", 2, 1), ("D", 3, 3), ("C", 4, 0))


def test_negation_condition_on_every_member():
    # D3 (x=3) lies between every list and C4; it kills a list only if 3 > x of every member:
    # [B1] (5) no, [B2] (1) yes, [B1, B2] no
    q = "PATTERN SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b.x WITHIN 10"
    assert matches(q, NEG_B) == M((0, (1,), 4), (0, (1, 2), 4))


def test_negation_condition_on_the_whole_list():
    # 3 < count(b) + 2 only for the two-member list
    q = "PATTERN SEQ(A a, B+ b[], !D n, C c) WHERE n.x < count(b) + 2 WITHIN 10"
    assert matches(q, NEG_B) == M((0, (1,), 4), (0, (2,), 4))


def test_negation_condition_on_the_members_of_an_empty_list_holds():
    # b = []: "for every member" holds vacuously, so D2 (after a, before c) kills; [B1]: 3 > 5 fails
    df = events("type ts x", ("A", 0, 0), ("B", 1, 5), ("D", 2, 3), ("C", 3, 0))
    q = "PATTERN SEQ(A a, B* b[], !D n, C c) WHERE n.x > b.x WITHIN 10"
    assert matches(q, df) == M((0, (1,), 3))


def test_negation_condition_on_a_closure_of_an_or_branch_not_taken_does_not_apply():
    df = events("type ts x", ("A", 0, 1), ("D", 1, 5), ("E", 2, 3), ("F", 3, 2), ("B", 4, 0), ("C", 5, 9),
                ("E", 6, 1), ("F", 7, 0))
    # branch d: b unbound, so the condition does not apply and any E between d and f kills (E2, E6);
    # branch (b, c): only E6 lies between C5 and F7, and 1 > count([B4]) = 1 fails
    q = "PATTERN SEQ(A a, OR(SEQ(B+ b[], C c), D d), !E n, F f) WHERE n.x > count(b) WITHIN 10"
    assert matches(q, df) == M((0, (4,), 5, None, 7))


@pytest.mark.parametrize("text", [
    "PATTERN AND(A a, B+ b[]) WITHIN 5",                        # not an element of a SEQ (§6.2)
    "PATTERN OR(SEQ(A a, B+ b[]), C c) WITHIN 5",
    "PATTERN SEQ(A a, B+ b[], D+ d[], C c) WITHIN 5",           # adjacent closures: no boundary
    "PATTERN SEQ(B+ b[], A a, D+ d[]) WITHIN 5",                # both ends
    "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 5",
])
def test_maximal_forms_the_semantics_leaves_undefined_are_refused_at_compile(text):
    import jitcep

    with pytest.raises(UnsupportedPatternError, match="kleene=\"maximal\"") as info:
        jitcep.compile(text, kleene="maximal")
    assert "B+ b[]" in str(info.value) or "'b[i].x > b[i-1].x'" in str(info.value)  # quotes the text at fault


def test_closures_that_may_all_be_empty_without_a_single_variable_run_as_alternatives():
    from jitcep import compile as compile_, runtime
    from jitcep.plan.operators import DisjunctUnion

    # several closures that may all be empty; a nested OR branch that may match with nothing: the union of
    # alternatives that each bind an event (matches: tests/test_kleene_empty.py)
    for text in ("PATTERN AND(B* b[], C* c[]) WITHIN 5", "PATTERN SEQ(A a, OR(B* b[], C c)) WITHIN 5"):
        q = compile_(text)
        assert isinstance(runtime.check_supported(q.patterns[0], q.options).root, DisjunctUnion)
    # under the NFA^b strategies too: a run takes its first event at one of the closures (docs/planning.md)
    q = compile_("PATTERN SEQ(B* b[], C* c[]) WITHIN 5", strategy="skip_till_next_match")
    assert isinstance(runtime.check_supported(q.patterns[0], q.options).root, DisjunctUnion)


# closures where no single variable binds an event: the first closure of at least one member there lends
# its first member to the joins (its anchor) and its collection extends it

ANCHORED = {
    "alone": "PATTERN B+ b[] WITHIN 2",
    "or": "PATTERN OR(B+ b[], D d) WITHIN 2",
    "seq": "PATTERN SEQ(B* b[], C+ c[]) WITHIN 3",
    "and": "PATTERN AND(B+ b[], C+ c[]) WITHIN 1",
}


@pytest.mark.parametrize("name", sorted(ANCHORED))
def test_anchored_forms_are_compiled(name):
    from jitcep import compile as compile_, runtime

    q = compile_(ANCHORED[name])
    runtime.check_supported(q.patterns[0], q.options)


ANCHOR_EVENTS = events("type ts", ("B", 0), ("B", 1), ("C", 2), ("B", 3), ("D", 4))


def test_a_closure_alone_is_every_subsequence_within_the_window():
    # B0, B1, B3 within 2 of each other: B0-B1 and B1-B3, not B0-B3
    assert matches(ANCHORED["alone"], ANCHOR_EVENTS) == M(((0,),), ((1,),), ((3,),), ((0, 1),), ((1, 3),))


def test_a_closure_alone_in_an_or_branch():
    assert matches(ANCHORED["or"], ANCHOR_EVENTS) == M(
        ((0,), None), ((1,), None), ((3,), None), ((0, 1), None), ((1, 3), None), (None, 4))


def test_a_seq_of_closures_in_an_or_branch():
    # the branch's later closure applies to the records that took the branch, though by then the first
    # closure's anchor is its list (the compiled engine raised ValueError; found by the generated corpus)
    # rows: B0 B1 C2 B3 D4, within 2: b a subsequence of B's ending before C2 within 2 of it, c = [] or [C2]
    got = matches("PATTERN OR(D d, SEQ(B+ b[], C* c[])) WITHIN 2", ANCHOR_EVENTS, variables=("d", "b", "c"))
    assert got == M((4, None, None),
                    (None, (0,), ()), (None, (1,), ()), (None, (3,), ()), (None, (0, 1), ()), (None, (1, 3), ()),
                    (None, (0,), (2,)), (None, (1,), (2,)), (None, (0, 1), (2,)))


def test_a_seq_of_closures():
    # c = [C2]; b any subsequence of {B0, B1} before it, empty allowed
    assert matches(ANCHORED["seq"], ANCHOR_EVENTS) == M(((), (2,)), ((0,), (2,)), ((1,), (2,)), ((0, 1), (2,)))


def test_an_and_of_closures():
    # every two events within 1: B1 or B3 with C2 (B0 is 2 before C2, B1 and B3 are 2 apart)
    assert matches(ANCHORED["and"], ANCHOR_EVENTS) == M(((1,), (2,)), ((3,), (2,)))


def test_kleene_window_iteration_leaves_array_variables_in_the_match_window():
    # semantics §2 (Choice): array-variable members stay in R, so "iteration" bounds them as "match"
    # does: the same five lists as test_closure_inside_and_is_bounded_by_the_window_only
    df = events("type ts", ("B", 0), ("A", 1), ("B", 2), ("B", 3), ("B", 4))
    assert matches(FORMS["and"], df, kleene_window="iteration") == M(
        (1, (0,)), (1, (2,)), (1, (3,)), (1, (0, 2)), (1, (2, 3)))


# closures that may be empty where nothing else binds an event (semantics §3: a match binds at least one
# positive event, so such a closure alone there has a first member: T* there is T+); SEQ / AND items made
# only of closures and negations beside a single variable elsewhere

MAY_BE_EMPTY = {
    "alone": "PATTERN B* b[] WITHIN 2",
    "or": "PATTERN OR(B* b[], D d) WITHIN 2",
    "and negation": "PATTERN AND(B* b[], !C c) WITHIN 2",
    "closure and negation item": "PATTERN SEQ(B b, AND(C* c[], !D n)) WITHIN 4",
    "closures item": "PATTERN SEQ(AND(B* b[], C* c[]), D d) WITHIN 4",
}


@pytest.mark.parametrize("name", sorted(MAY_BE_EMPTY))
def test_closures_that_may_be_empty_are_compiled(name):
    _assert_compiled(MAY_BE_EMPTY[name])


def test_a_star_closure_alone_is_its_plus_closure():
    # the empty list would bind nothing: the same five lists as the B+ closure alone
    assert matches(MAY_BE_EMPTY["alone"], ANCHOR_EVENTS) == M(((0,),), ((1,),), ((3,),), ((0, 1),), ((1, 3),))


def test_a_star_closure_alone_in_a_top_level_or_branch():
    assert matches(MAY_BE_EMPTY["or"], ANCHOR_EVENTS) == M(
        ((0,), None), ((1,), None), ((3,), None), ((0, 1), None), ((1, 3), None), (None, 4))


def test_a_star_closure_beside_a_negation_in_and():
    # the negation's range is the match's span (§7, AND): C2 lies inside (1, 3) only
    assert matches(MAY_BE_EMPTY["and negation"], ANCHOR_EVENTS) == M(((0,),), ((1,),), ((3,),), ((0, 1),))


def test_an_and_of_a_closure_and_a_negation_after_a_single_variable():
    # c: C's after b (C2, C5); the negation kills a match with D4 between b and its last event;
    # (0, (5,)) spans 5 > 4
    df = events("type ts", ("B", 0), ("B", 1), ("C", 2), ("B", 3), ("D", 4), ("C", 5))
    assert matches(MAY_BE_EMPTY["closure and negation item"], df) == M(
        (0, ()), (0, (2,)), (1, ()), (1, (2,)), (3, ()))


def test_an_and_of_closures_before_a_single_variable():
    # d = D4; b any subsequence of B0, B1, B3 (all within 4 of D4), c of C2, both may be empty
    bs = [(), (0,), (1,), (3,), (0, 1), (0, 3), (1, 3), (0, 1, 3)]
    assert matches(MAY_BE_EMPTY["closures item"], ANCHOR_EVENTS) == M(
        *((b, c, 4) for b in bs for c in ((), (2,))))


# conjuncts reading a member and the whole list (semantics §4: TRUE for every member i; with b[i-1], for
# every i >= 2), compiled once per member of each list

EACH = events("type ts x", ("A", 0, 0), ("B", 1, 1), ("B", 2, 5), ("B", 3, 2), ("B", 4, 4), ("C", 5, 7))


def test_every_member_against_the_first():
    # x = 1, 5, 2, 4: a list passes when its first member has the least x
    lists = [(1,), (1, 2), (1, 3), (1, 4), (1, 2, 3), (1, 2, 4), (1, 3, 4), (1, 2, 3, 4), (2,), (3,), (3, 4), (4,)]
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x >= b[1].x WITHIN 10", EACH) == M(
        *((0, b, 5) for b in lists))


def test_plain_member_reference_against_the_count_and_a_single_variable():
    # every member x < c.x - count(b) = 7 - L: L = 1 any one (x < 6); L = 2 two of B1, B3, B4 (x < 5);
    # L = 3 would need three with x < 4; the empty list holds vacuously
    lists = [(), (1,), (2,), (3,), (4,), (1, 3), (1, 4), (3, 4)]
    assert matches("PATTERN SEQ(A a, B* b[], C c) WHERE b.x < c.x - count(b) WITHIN 10", EACH) == M(
        *((0, b, 5) for b in lists))


def test_iterative_conjunct_with_a_list_reference():
    # x_i > x_{i-1} + b[1].x - 1: from B1 increasing, from B2 (5) nothing more, from B3 (2) up by 2 or more
    lists = [(1,), (1, 2), (1, 3), (1, 4), (1, 3, 4), (2,), (3,), (3, 4), (4,)]
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x + b[1].x - 1 WITHIN 10", EACH) == M(
        *((0, b, 5) for b in lists))


def test_every_member_on_the_maximal_list():
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x >= b[1].x WITHIN 10", EACH,
                   kleene="maximal") == M((0, (1, 2, 3, 4), 5))
    # B2 (5) is above the last member (4): the one list fails, no smaller list is tried (§6.2)
    assert matches("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x <= b[b.LEN].x WITHIN 10", EACH,
                   kleene="maximal") == M()


def test_every_member_of_an_anchored_closure():
    # a list of two or more has a member at its minimum
    assert matches("PATTERN B+ b[] WHERE b[i].x > min(b.x) OR count(b) = 1 WITHIN 10", EACH) == M(
        ((1,),), ((2,),), ((3,),), ((4,),))


def test_negation_condition_on_every_member_and_its_predecessor():
    # NEG_B: D3 (x=3) lies between every list and C4; n.x > b[i-1].x for every i >= 2 holds vacuously on a
    # one-member list (killed), and fails at i = 2 on [B1, B2] (3 > 5 is false)
    assert matches("PATTERN SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b[i-1].x WITHIN 10", NEG_B) == M(
        (0, (1, 2), 4))


def test_negation_condition_on_every_member_and_the_whole_list():
    # n.x > b[i].x - avg(b.x) + 1: [B1] 3 > 1, [B2] 3 > 1 (killed); [B1, B2] (avg 3) at B1: 3 > 3 is false
    assert matches("PATTERN SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b[i].x - avg(b.x) + 1 WITHIN 10",
                   NEG_B) == M((0, (1, 2), 4))


def test_negation_condition_on_every_member_and_its_predecessor_under_skip_till_next_match():
    # the run takes B1 then B2 (each next B); D3 is no kill for [B1, B2] (3 > 5 is false at i = 2)
    assert matches("PATTERN SEQ(A a, B+ b[], !D n, C c) WHERE n.x > b[i-1].x WITHIN 10", NEG_B,
                   strategy="skip_till_next_match") == M((0, (1, 2), 4))


def test_an_aggregate_of_an_attribute_with_no_value_is_null():
    # s holds no value, so it has no kind and sum(a.s) is NULL though its column is a String one (semantics
    # §4); the compiled engine raised AttributeTypeError (found by the generated corpus)
    df = pl.DataFrame({"type": ["A", "A"], "ts": [0, 1], "s": pl.Series([None, None], dtype=pl.String)})
    assert matches("PATTERN SEQ(A b, A+ a[]) WHERE sum(a.s) IS NULL WITHIN 3", df) == M((0, (1,)))
    assert matches("PATTERN SEQ(A b, A+ a[]) WHERE count(a) = sum(a.s) WITHIN 3", df) == M()


def test_a_negation_condition_on_a_member_with_no_value_and_no_candidate_is_no_type_error():
    # s and x hold no value, so they have no kind (semantics §4): a[2].s + 0 is NULL, not arithmetic on a
    # string.  The one event is c's, so the negation has no (match, candidate) pair to test; the compiled
    # engine then checked the kinds of an empty virtual column as non-null and raised AttributeTypeError
    # (found by the generated corpus)
    df = pl.DataFrame({"type": ["A"], "ts": [0], "x": pl.Series([None], dtype=pl.Int64),
                       "s": pl.Series([None], dtype=pl.String)})
    assert matches("PATTERN SEQ(!* n, A* a[], * c) WHERE a[2].s + 0 = n.x WITHIN 1", df) == M(((), 0))


# a closure that a later closure of at least one member must follow is bounded by that one's candidates
# before its lists are made (jitcep/plan/rules/kleene_collection.py): records with no candidate in range
# are dropped and the members end before the last candidate; the matches are those of semantics §6.1

def test_a_closure_a_later_closure_must_follow_ends_before_its_last_candidate():
    # key 1: B0 B2 C3 B5 B7; key 2: B1 B4 C6.  Within 3: key 1's c = [C3] with b any subsequence of
    # {B0, B2} (B5, B7 have no C after them); key 2's C6 is 4 after B1, so b = [B4] only
    df = events("type ts k", ("B", 0, 1), ("B", 0, 2), ("B", 1, 1), ("C", 2, 1), ("B", 2, 2), ("B", 3, 1),
                ("C", 4, 2), ("B", 4, 1))
    assert matches("PATTERN SEQ(B+ b[], C+ c[]) WHERE [k] WITHIN 3", df) == M(
        ((0,), (3,)), ((2,), (3,)), ((0, 2), (3,)), ((4,), (6,)))
    # two C's in B0's window: b's members lie before the last one (B2 between them), not the first
    df = events("type ts", ("B", 0), ("C", 1), ("B", 2), ("C", 3))
    assert matches("PATTERN SEQ(B+ b[], C+ c[]) WITHIN 5", df) == M(
        ((0,), (1,)), ((0,), (3,)), ((0,), (1, 3)), ((2,), (3,)), ((0, 2), (3,)))


def test_a_closure_a_later_closure_must_follow_keeps_members_tied_with_its_last_candidate():
    # nondecreasing_ts: B2@1 is before C1@1 (a tie), B3@2 is not
    df = events("type ts", ("B", 0), ("C", 1), ("B", 1), ("B", 2))
    assert matches("PATTERN SEQ(B+ b[], C+ c[]) WITHIN 5", df, order="nondecreasing_ts") == M(
        ((0,), (1,)), ((2,), (1,)), ((0, 2), (1,)))
    # position order: B2 lies after C1
    assert matches("PATTERN SEQ(B+ b[], C+ c[]) WITHIN 5", df) == M(((0,), (1,)))


def test_a_closure_bounded_by_a_later_one_after_a_single_variable():
    # a = A0; C's after b: C3 (within 4 of A0), C6 is 6 after it; b before C3: B1, B2 (B4 has no C after
    # it in the window); c = [C3]
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("C", 3), ("B", 4), ("B", 5), ("C", 6))
    assert matches("PATTERN SEQ(A a, B+ b[], C+ c[]) WITHIN 4", df) == M(
        (0, (1,), (3,)), (0, (2,), (3,)), (0, (1, 2), (3,)))
    # a later closure that may be empty bounds nothing: B4 alone and with B1, B2 make matches too
    assert matches("PATTERN SEQ(A a, B+ b[], C* c[]) WITHIN 4", df) == M(
        *((0, b, c) for b in [(1,), (2,), (1, 2)] for c in [(), (3,)]),
        *((0, b, ()) for b in [(4,), (1, 4), (2, 4), (1, 2, 4)]))


# a negation over an AND span kills every list holding a member it kills alone, so the compiled engine
# drops such members before making lists (KleeneCollect.prune); the matches are those of semantics §6.1, §7

def test_a_negation_over_an_and_span_kills_the_lists_reaching_its_events():
    # a = A3, c = C5; b's candidates B0 B2 B4 B6 B8; D1 lies in the span of any list holding B0, D7 in that
    # of any list holding B8 (each right beside the span B2 .. B6 gives): b = the subsets of {B2, B4, B6}
    df = events("type ts", ("B", 0), ("D", 1), ("B", 2), ("A", 3), ("B", 4), ("C", 5), ("B", 6), ("D", 7),
                ("B", 8))
    subsets = [(2,), (4,), (6,), (2, 4), (2, 6), (4, 6), (2, 4, 6)]
    assert matches("PATTERN AND(A a, B+ b[], C c, !D n) WITHIN 10", df) == M(*((3, b, 5) for b in subsets))
    # B* adds the empty list; a D inside the span of a and c kills every list of the record
    assert matches("PATTERN AND(A a, B* b[], C c, !D n) WITHIN 10", df) == M(
        (3, (), 5), *((3, b, 5) for b in subsets))
    df = events("type ts", ("B", 0), ("A", 1), ("D", 2), ("C", 3), ("B", 4))
    assert matches("PATTERN AND(A a, B+ b[], C c, !D n) WITHIN 10", df) == M()


def test_a_negation_over_an_and_span_and_ties():
    # D1 and B2 share a timestamp: nondecreasing_ts admits the tie, so D1 lies in the span of b = [B2]
    df = events("type ts", ("B", 0), ("D", 1), ("B", 1), ("A", 2), ("C", 3))
    for order, expected in [("position", M((3, (2,), 4))), ("strict_ts", M((3, (2,), 4))),
                            ("nondecreasing_ts", M())]:
        assert matches("PATTERN AND(A a, B+ b[], C c, !D n) WITHIN 10", df, order=order) == expected, order


@pytest.mark.parametrize("text, options, pruned", [
    ("AND(A a, B+ b[], C c, !D n)", {}, True),
    ("AND(A a, B* b[], C c, !D n) WHERE b[i].x > b[i-1].x", {}, True),
    ("AND(SEQ(A a, B+ b[]), !D n)", {}, True),
    ("SEQ(C c, AND(A a, B+ b[], !D n))", {}, True),  # c bounds the range below, the span above
    ("AND(A a, B+ b[], C c, !B n)", {}, False),  # n's candidates may be members
    ("AND(A a, B+ b[], * c, !D n)", {}, False),  # or c
    ("AND(A a, B+ b[], C c, !D n) WHERE n.x > a.x", {}, False),  # a condition: a killer of some lists only
    ("SEQ(A a, B+ b[], !D n, C c)", {}, False),  # b's last member bounds the range: longer lists narrow it
    ("SEQ(A a, AND(B+ b[], !D n), C c)", {}, False),  # a and c fix the range
    ("SEQ(B+ b[], AND(A a, !D n))", {}, False),  # b's last member bounds the range
    ("OR(AND(A a, B+ b[]), C c)", {}, False),  # no negation
])
def test_which_closures_a_negation_prunes(text, options, pruned):
    import jitcep

    plan = jitcep.compile(f"PATTERN {text} WITHIN 5", **options).explain()
    assert ("members no negation kills alone: (!n)" in plan) == pruned


@pytest.mark.parametrize("text, bounded", [
    ("SEQ(B+ b[], C+ c[])", True),
    ("SEQ(A a, B+ b[], X x, C{2,3} c[])", True),
    ("OR(SEQ(B+ b[], C+ c[]), D d)", True),
    ("SEQ(A a, B+ b[], C* c[])", False),  # c may be empty
    ("SEQ(B+ b[], OR(C+ c[], D d))", False),  # c binds its first member (an anchor), in another OR branch
    ("SEQ(A a, OR(SEQ(B+ b[], E e), D d), C+ c[])", False),  # b is in an OR branch, c is not
    ("AND(B+ b[], C+ c[])", False),  # AND orders neither first
])
def test_which_closures_a_later_one_bounds(text, bounded):
    import jitcep

    plan = jitcep.compile(f"PATTERN {text} WITHIN 5").explain()
    assert ("members before the last candidate of" in plan) == bounded
