"""Negation: NOT(T v) / !T v / ~T v at the start, middle and end of a SEQ, and inside AND.

From DESIGN.md section 2: "no event e of type T passing v's filters, strictly
between the last event of the left neighbour and the first event of the right
neighbour, such that every predicate that mentions v holds with v := e.  At the
start of a SEQ: no such e before the first positive event and within the window
measured from the last event.  At the end: no such e after the last positive
event and within the window measured from the first event.  Inside AND: no such
e within the match's span."  SASE section 2.2.2 (SEQ_WITHOUT, negated start /
end).  Windows are inclusive (max ts - min ts <= W), so the negation's reach
"within the window" is inclusive too.  Negated variables never appear in the
output.
"""

from __future__ import annotations

from semantic_helpers import M, events, matches, run


def test_middle_negation_blocks_pairs_with_an_event_between():
    df = events("type ts", ("A", 1), ("C", 2), ("A", 3), ("B", 4), ("C", 5))
    # (0,1): nothing between; (0,4) and (2,4): B3 lies between
    assert matches("PATTERN SEQ(A a, !B b, C c) WITHIN 10", df) == M((0, 1))


def test_negation_spellings_are_equivalent():
    df = events("type ts", ("A", 1), ("C", 2), ("A", 3), ("B", 4), ("C", 5))
    for neg in ("!B b", "~B b", "NOT(B b)"):
        assert matches(f"PATTERN SEQ(A a, {neg}, C c) WITHIN 10", df) == M((0, 1)), neg


def test_negated_variable_has_no_output_column():
    df = events("type ts", ("A", 1), ("C", 2))
    out = run("PATTERN SEQ(A a, !B b, C c) WITHIN 10", df)
    assert "a" in out.columns and "c" in out.columns and "b" not in out.columns


def test_middle_negation_without_any_negated_event():
    df = events("type ts", ("A", 1), ("A", 2), ("C", 3))
    # no B at all: every (a, c) pair survives
    assert matches("PATTERN SEQ(A a, !B b, C c) WITHIN 10", df) == M((0, 2), (1, 2))


def test_negated_event_outside_the_gap_does_not_block():
    df = events("type ts", ("B", 1), ("A", 2), ("C", 3), ("B", 4))
    # B0 is before a, B3 after c: neither is strictly between
    assert matches("PATTERN SEQ(A a, !B b, C c) WITHIN 10", df) == M((1, 2))


def test_negation_only_blocks_the_gap_of_its_neighbours():
    df = events("type ts", ("A", 1), ("X", 2), ("B", 3), ("C", 4), ("B", 5), ("X", 6), ("C", 7))
    # !X sits between b and c: X1 (between a and b) does not matter; X5 is between B4 and C6.
    # candidates (a,b,c): (0,2,3) ok; (0,2,6) X5 between 2 and 6 -> out; (0,4,6) X5 between -> out
    assert matches("PATTERN SEQ(A a, B b, !X x, C c) WITHIN 10", df) == M((0, 2, 3))


def test_negation_filter_on_negated_variable():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 3), ("C", 3, 0), ("B", 4, 9), ("C", 5, 0))
    # only B with x > 5 blocks: B1 (x=3) does not block (0,2); B3 (x=9) blocks (0,4)
    q = "PATTERN SEQ(A a, !B b, C c) WHERE b.x > 5 WITHIN 10"
    assert matches(q, df) == M((0, 2))


def test_negation_parameterized_predicate():
    df = events("type ts x", ("A", 1, 5), ("A", 2, 1), ("B", 3, 3), ("C", 4, 0))
    # B2 blocks a only when b.x > a.x: blocks (A1, C3) since 3 > 1, not (A0, C3) since 3 < 5
    q = "PATTERN SEQ(A a, !B b, C c) WHERE b.x > a.x WITHIN 10"
    assert matches(q, df) == M((0, 3))


def test_negation_with_predicate_on_right_neighbour():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 7), ("C", 3, 7), ("C", 4, 8))
    # B1 blocks only when b.x = c.x: blocks (A0, C2), not (A0, C3)
    q = "PATTERN SEQ(A a, !B b, C c) WHERE b.x = c.x WITHIN 10"
    assert matches(q, df) == M((0, 3))


def test_negation_with_equivalence_key():
    df = events("type ts k", ("A", 1, 1), ("A", 2, 2), ("B", 3, 2), ("C", 4, 1), ("C", 5, 2))
    # [k] covers b too: B2 (k=2) blocks only the k=2 pair (A1, C4); (A0, C3) with k=1 survives
    q = "PATTERN SEQ(A a, !B b, C c) WHERE [k] WITHIN 10"
    assert matches(q, df) == M((0, 3))


def test_negation_predicate_combined_with_positive_predicates():
    df = events("type ts k x", ("A", 1, 1, 0), ("B", 2, 1, 1), ("C", 3, 1, 0), ("B", 4, 1, 9), ("C", 5, 1, 0))
    # [k] AND b.x > 5: B1 (x=1) does not block; B3 (x=9) blocks anything spanning it
    q = "PATTERN SEQ(A a, !B b, C c) WHERE [k] AND b.x > 5 WITHIN 10"
    assert matches(q, df) == M((0, 2))


def test_two_negations_in_a_row():
    df = events("type ts", ("A", 1), ("D", 2), ("A", 3), ("B", 4), ("A", 5), ("C", 6), ("A", 7), ("D", 8))
    # no B and no C between a and d: (0,1) clean; (2,7): B3 and C5 between; (4,7): C5 between; (6,7) clean
    q = "PATTERN SEQ(A a, !B b, !C c, D d) WITHIN 10"
    assert matches(q, df) == M((0, 1), (6, 7))


def test_two_negations_in_different_gaps():
    df = events("type ts", ("A", 1), ("C", 2), ("X", 3), ("C", 4), ("E", 5), ("Y", 6), ("E", 7))
    # SEQ(A, !X, C, !Y, E): c before X2 (C1) and e before Y5 (E4) -> (0,1,4)
    q = "PATTERN SEQ(A a, !X x, C c, !Y y, E e) WITHIN 10"
    assert matches(q, df) == M((0, 1, 4))


def test_negation_with_any_type():
    df = events("type ts", ("A", 1), ("D", 2), ("A", 3), ("C", 4), ("D", 5), ("A", 6), ("E", 7), ("D", 8))
    # NOT(ANY(B, C) x): C3 blocks pairs spanning it; E6 is not in the list
    q = "PATTERN SEQ(A a, NOT(ANY(B, C) x), D d) WITHIN 10"
    # pairs spanning C3: (0,4) (0,7) (2,4) (2,7) are blocked; (0,1) clean; (5,7) has only E6 between
    assert matches(q, df) == M((0, 1), (5, 7))


def test_negation_at_start():
    df = events("type ts", ("B", 0), ("A", 3), ("C", 4), ("A", 10), ("C", 12))
    # (1,2): B0@0 is before a and 4 - 0 = 4 <= 5 -> blocked; (1,4) spans 9 > 5;
    # (3,4): the window reaches back to 12 - 5 = 7, no B there -> match
    assert matches("PATTERN SEQ(!B b, A a, C c) WITHIN 5", df) == M((3, 4))


def test_negation_at_start_outside_window_does_not_block():
    df = events("type ts", ("B", 0), ("A", 6), ("C", 8))
    # the window reaches back to 8 - 5 = 3; B0@0 is older
    assert matches("PATTERN SEQ(!B b, A a, C c) WITHIN 5", df) == M((1, 2))


def test_negation_at_start_window_boundary_is_inclusive():
    df = events("type ts", ("B", 3), ("A", 6), ("C", 8))
    # 8 - 3 = 5 = W: B0 is within the (inclusive) window -> blocked
    assert matches("PATTERN SEQ(!B b, A a, C c) WITHIN 5", df) == M()


def test_negation_at_start_with_predicate():
    df = events("type ts k", ("B", 1, 2), ("A", 2, 1), ("C", 3, 1), ("B", 4, 1), ("A", 5, 1), ("C", 6, 1))
    # [k]: B0 has k=2, so it does not block (1,2); B3 (k=1) blocks (4,5); (1,5) spans B3 but
    # B3 is after a, not before it, and a start negation only looks before a
    assert matches("PATTERN SEQ(!B b, A a, C c) WHERE [k] WITHIN 10", df) == M((1, 2), (1, 5))


def test_negation_at_end():
    df = events("type ts", ("A", 0), ("C", 2), ("B", 4), ("A", 10), ("C", 11), ("B", 20), ("Z", 30))
    # (0,1): B2@4 is after c and 4 <= 0 + 5 -> blocked; (0,4) spans 11 > 5;
    # (3,4): reach is up to 10 + 5 = 15, B5@20 is later -> match
    assert matches("PATTERN SEQ(A a, C c, !B b) WITHIN 5", df) == M((3, 4))


def test_negation_at_end_window_boundary_is_inclusive():
    df = events("type ts", ("A", 0), ("C", 2), ("B", 5), ("Z", 30))
    # B2@5 = a.ts + W: within the inclusive window -> blocked
    assert matches("PATTERN SEQ(A a, C c, !B b) WITHIN 5", df) == M()


def test_negation_at_end_just_outside_window():
    df = events("type ts", ("A", 0), ("C", 2), ("B", 6), ("Z", 30))
    # B2@6 > 0 + 5 -> outside the reach -> match
    assert matches("PATTERN SEQ(A a, C c, !B b) WITHIN 5", df) == M((0, 1))


def test_negation_at_end_when_input_ends_inside_window():
    df = events("type ts", ("A", 0), ("C", 2))
    # batch input: the whole table is known and holds no B, so "no such e" is true;
    # DESIGN.md: only a *streaming* run must wait for the window to pass
    assert matches("PATTERN SEQ(A a, C c, !B b) WITHIN 5", df) == M((0, 1))


def test_negation_at_end_with_predicate():
    df = events("type ts x", ("A", 0, 1), ("C", 1, 0), ("B", 2, 2), ("A", 10, 2), ("C", 11, 0), ("B", 12, 1))
    # !B b with b.x = a.x: B2 (x=2) does not block A0 (x=1); B5 (x=1) does not block A3 (x=2)
    q = "PATTERN SEQ(A a, C c, !B b) WHERE b.x = a.x WITHIN 5"
    assert matches(q, df) == M((0, 1), (3, 4))


def test_negation_inside_and():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("C", 5), ("A", 6))
    # no B within the match's span: (A0, C2), (A0, C3) span B1; (A4, C2), (A4, C3) do not
    assert matches("PATTERN AND(A a, C c, !B b) WITHIN 10", df) == M((4, 2), (4, 3))


def test_negation_inside_and_with_predicate():
    df = events("type ts k", ("A", 1, 1), ("B", 2, 2), ("C", 3, 1), ("A", 4, 2), ("C", 5, 2))
    # [k]: B1 (k=2) cannot block the k=1 match (A0, C2); k=2 match (A3, C4) spans pos 3..4, B1 outside
    assert matches("PATTERN AND(A a, C c, !B b) WHERE [k] WITHIN 10", df) == M((0, 2), (3, 4))


def test_negation_inside_nested_seq():
    df = events("type ts", ("D", 0), ("A", 1), ("B", 2), ("C", 3), ("A", 4), ("C", 5))
    # AND(SEQ(A a, !B b, C c), D d): the negation applies inside the SEQ: (1,3) has B2 between,
    # (1,5) too; (4,5) is clean; d = D0 in any position
    q = "PATTERN AND(SEQ(A a, !B b, C c), D d) WITHIN 10"
    assert matches(q, df) == M((4, 5, 0))


def test_negation_in_a_one_item_and_is_at_the_start_of_its_seq():
    # normal form (section 5): AND(SEQ(!C n, A a, B b)) is SEQ(!C n, A a, B b), so C0 before a
    # kills (unbounded window); with a second item the AND bounds the range by the match's span
    df = events("type ts", ("C", 1), ("A", 2), ("B", 3))
    assert matches("PATTERN AND(SEQ(!C n, A a, B b)) WITHIN UNBOUNDED", df) == M()
    assert matches("PATTERN SEQ(!C n, A a, B b) WITHIN UNBOUNDED", df) == M()
    df = events("type ts", ("C", 1), ("A", 2), ("B", 3), ("D", 4))
    assert matches("PATTERN AND(SEQ(!C n, A a, B b), D d) WITHIN UNBOUNDED", df) == M((1, 2, 3))

