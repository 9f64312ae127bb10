"""SEQ patterns: ordering, typed/untyped variables, ANY, predicates, equivalence tests.

Expected matches are enumerated by hand from DESIGN.md section 2 ("SEQ(P1..Pn):
every event of Pi is before every event of Pi+1"; "distinct variables bind
distinct events"; "[attr] = equality of attr across all variables") and SASE
section 2.2.2 (SEQ operator, ANY operator).  Default options: order="position",
skip_till_any_match, output="all".  Row k of each table is input row k.
"""

from __future__ import annotations

import polars as pl
import pytest

from jitcep.errors import AttributeTypeError
from semantic_helpers import M, events, matches, run


def test_single_variable_binds_every_event_of_its_type():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 1), ("A", 3, 1))
    # rows 0 and 2 are A; row 1 is B and is never bound to an A variable
    assert matches("PATTERN A a WITHIN 10", df) == M((0,), (2,))


def test_single_variable_with_filter():
    df = events("type ts x", ("A", 1, 3), ("A", 2, 7), ("A", 3, 5), ("A", 4, 9))
    # x > 5 holds for rows 1 (7) and 3 (9) only; 5 is not > 5
    assert matches("PATTERN A a WHERE a.x > 5 WITHIN 10", df) == M((1,), (3,))


def test_seq_of_two_every_ordered_pair():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4))
    # (0,1) (0,3) (2,3); (2,1) is out of order: B@2 is before A@3
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10", df) == M((0, 1), (0, 3), (2, 3))


def test_seq_of_three_with_interleaving():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4), ("C", 5))
    # C@5 closes every ordered (a, b) pair: (0,1) (0,3) (2,3); (2,1) is out of order
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 10", df) == M((0, 1, 4), (0, 3, 4), (2, 3, 4))


def test_seq_of_four():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("C", 4), ("D", 5), ("B", 6), ("D", 7))
    # a=0, b=1, c in {2,3}, d in {4,6}: 4 matches; b=5 (B@6) has no C after it
    assert matches("PATTERN SEQ(A a, B b, C c, D d) WITHIN 10", df) == M(
        (0, 1, 2, 4), (0, 1, 2, 6), (0, 1, 3, 4), (0, 1, 3, 6))


def test_seq_no_match_when_a_type_is_missing():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3))
    # no C event at all
    assert matches("PATTERN SEQ(A a, B b, C c) WITHIN 10", df) == M()


def test_seq_no_match_when_order_is_reversed():
    df = events("type ts", ("B", 1), ("B", 2), ("A", 3))
    # every B precedes the only A
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10", df) == M()


def test_same_type_twice_binds_distinct_events():
    df = events("type ts", ("A", 1), ("A", 2), ("A", 3))
    # pairs of distinct events in order; never (k, k)
    assert matches("PATTERN SEQ(A a1, A a2) WITHIN 10", df) == M((0, 1), (0, 2), (1, 2))


def test_same_type_three_times():
    df = events("type ts", ("A", 1), ("A", 2), ("A", 3), ("A", 4))
    # all C(4,3) = 4 increasing triples
    assert matches("PATTERN SEQ(A a1, A a2, A a3) WITHIN 10", df) == M(
        (0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))


def test_equality_predicate_between_variables():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 2), ("B", 3, 2), ("B", 4, 1))
    # a.x = b.x: A0(1)-B3(1) and A1(2)-B2(2)
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x = b.x WITHIN 10", df) == M((0, 3), (1, 2))


def test_equality_with_double_equals_and_not_equal():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 1), ("B", 3, 2))
    # == is the same as =; != / <> select the other B
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x == b.x WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x != b.x WITHIN 10", df) == M((0, 2))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x <> b.x WITHIN 10", df) == M((0, 2))


def test_range_predicate():
    df = events("type ts x", ("A", 1, 10), ("B", 2, 9), ("B", 3, 10), ("B", 4, 15), ("B", 5, 20), ("B", 6, 21))
    # 10 <= b.x <= 20 excludes B1 (9) and B5 (21)
    q = "PATTERN SEQ(A a, B b) WHERE b.x >= a.x AND b.x <= a.x + 10 WITHIN 10"
    assert matches(q, df) == M((0, 2), (0, 3), (0, 4))


def test_strict_inequalities():
    df = events("type ts x", ("A", 1, 5), ("B", 2, 5), ("B", 3, 6), ("B", 4, 4))
    # b.x > a.x: only B2 (6); b.x < a.x: only B3 (4); equality satisfies neither
    assert matches("PATTERN SEQ(A a, B b) WHERE b.x > a.x WITHIN 10", df) == M((0, 2))
    assert matches("PATTERN SEQ(A a, B b) WHERE b.x < a.x WITHIN 10", df) == M((0, 3))


def test_arithmetic_in_predicates():
    df = events("type ts x", ("A", 1, 4), ("B", 2, 7), ("B", 3, 8), ("B", 4, 9), ("B", 5, 3))
    # b.x >= 2 * a.x: only 8 and 9; abs(b.x - a.x) < 2: only 3 (|3-4| = 1)
    assert matches("PATTERN SEQ(A a, B b) WHERE b.x >= 2 * a.x WITHIN 10", df) == M((0, 2), (0, 3))
    assert matches("PATTERN SEQ(A a, B b) WHERE abs(b.x - a.x) < 2 WITHIN 10", df) == M((0, 4))


def test_arithmetic_precedence_and_unary_minus():
    df = events("type ts x", ("A", 1, 2), ("B", 2, 7), ("B", 3, 8), ("B", 4, -2))
    # 1 + a.x * 3 = 7 (not (1 + 2) * 3 = 9); -a.x = -2
    assert matches("PATTERN SEQ(A a, B b) WHERE b.x = 1 + a.x * 3 WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(A a, B b) WHERE b.x = -a.x WITHIN 10", df) == M((0, 3))


def test_division():
    df = events("type ts x", ("A", 1, 10), ("B", 2, 5), ("B", 3, 4))
    # a.x / b.x = 2 only for b.x = 5 (true division: 10 / 4 = 2.5)
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x / b.x = 2 WITHIN 10", df) == M((0, 1))


def test_three_variable_predicate():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 2), ("B", 3, 5), ("C", 4, 3), ("C", 5, 6))
    # c.x = a.x + b.x: (A0,B1,C3) 1+2=3 and (A0,B2,C4) 1+5=6
    q = "PATTERN SEQ(A a, B b, C c) WHERE c.x = a.x + b.x WITHIN 10"
    assert matches(q, df) == M((0, 1, 3), (0, 2, 4))


def test_string_equality_literal():
    df = events("type ts sym", ("A", 1, "IBM"), ("A", 2, "MSFT"), ("B", 3, "IBM"))
    # only A0 has sym 'IBM'; double-quoted strings are the same literal
    assert matches("PATTERN SEQ(A a, B b) WHERE a.sym = 'IBM' WITHIN 10", df) == M((0, 2))
    assert matches('PATTERN SEQ(A a, B b) WHERE a.sym = "IBM" WITHIN 10', df) == M((0, 2))


def test_string_equality_between_variables():
    df = events("type ts sym", ("A", 1, "IBM"), ("A", 2, "MSFT"), ("B", 3, "MSFT"), ("B", 4, "IBM"))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.sym = b.sym WITHIN 10", df) == M((0, 3), (1, 2))


def test_in_and_not_in_lists():
    df = events("type ts sym", ("A", 1, "IBM"), ("A", 2, "MSFT"), ("A", 3, "GOOG"))
    assert matches("PATTERN A a WHERE a.sym IN ('IBM', 'GOOG') WITHIN 10", df) == M((0,), (2,))
    assert matches("PATTERN A a WHERE a.sym NOT IN ('IBM', 'GOOG') WITHIN 10", df) == M((1,))


def test_numeric_in_list():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 2), ("A", 3, 3))
    assert matches("PATTERN A a WHERE a.x IN (1, 3) WITHIN 10", df) == M((0,), (2,))


def test_is_null_and_is_not_null():
    df = events("type ts x", ("A", 1, 1.0), ("A", 2, None), ("A", 3, 3.0))
    assert matches("PATTERN A a WHERE a.x IS NULL WITHIN 10", df) == M((1,))
    assert matches("PATTERN A a WHERE a.x IS NOT NULL WITHIN 10", df) == M((0,), (2,))


def test_boolean_or_and_not_in_where():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 5), ("A", 3, 9))
    # x < 2 OR x > 8 -> rows 0 and 2; NOT (x < 2 OR x > 8) -> row 1
    assert matches("PATTERN A a WHERE a.x < 2 OR a.x > 8 WITHIN 10", df) == M((0,), (2,))
    assert matches("PATTERN A a WHERE NOT (a.x < 2 OR a.x > 8) WITHIN 10", df) == M((1,))


def test_and_binds_tighter_than_or():
    df = events("type ts x y", ("A", 1, 1, 0), ("A", 2, 1, 1), ("A", 3, 0, 0), ("A", 4, 0, 1))
    # x = 1 OR x = 0 AND y = 1  ==  x = 1 OR (x = 0 AND y = 1): rows 0, 1, 3
    q = "PATTERN A a WHERE a.x = 1 OR a.x = 0 AND a.y = 1 WITHIN 10"
    assert matches(q, df) == M((0,), (1,), (3,))


def test_boolean_attribute_literal():
    df = events("type ts ok", ("A", 1, True), ("A", 2, False), ("A", 3, True))
    assert matches("PATTERN A a WHERE a.ok = TRUE WITHIN 10", df) == M((0,), (2,))
    assert matches("PATTERN A a WHERE a.ok = FALSE WITHIN 10", df) == M((1,))


def test_timestamp_reference():
    df = events("type ts", ("A", 1), ("B", 2), ("B", 4), ("B", 6))
    # b.ts - a.ts >= 3: B@4 and B@6
    assert matches("PATTERN SEQ(A a, B b) WHERE b.ts - a.ts >= 3 WITHIN 10", df) == M((0, 2), (0, 3))


def test_equivalence_test():
    df = events("type ts sym",
                ("A", 1, "X"), ("A", 2, "Y"), ("B", 3, "X"), ("B", 4, "Y"), ("C", 5, "Y"), ("C", 6, "X"))
    # [sym]: all three share sym: X -> (0, 2, 5), Y -> (1, 3, 4)
    assert matches("PATTERN SEQ(A a, B b, C c) WHERE [sym] WITHIN 10", df) == M((0, 2, 5), (1, 3, 4))


def test_equivalence_test_with_value():
    df = events("type ts sym",
                ("A", 1, "X"), ("A", 2, "Y"), ("B", 3, "X"), ("B", 4, "Y"), ("C", 5, "Y"), ("C", 6, "X"))
    # [sym = 'Y'] keeps only the Y partition
    assert matches("PATTERN SEQ(A a, B b, C c) WHERE [sym = 'Y'] WITHIN 10", df) == M((1, 3, 4))


def test_equivalence_on_two_attributes():
    df = events("type ts s k",
                ("A", 1, "X", 1), ("A", 2, "X", 2), ("B", 3, "X", 1), ("B", 4, "X", 2), ("B", 5, "Y", 1))
    # [s, k] = [s] AND [k]: A0-B2 (X,1) and A1-B3 (X,2); B4 differs in s
    assert matches("PATTERN SEQ(A a, B b) WHERE [s, k] WITHIN 10", df) == M((0, 2), (1, 3))
    assert matches("PATTERN SEQ(A a, B b) WHERE [s] AND [k] WITHIN 10", df) == M((0, 2), (1, 3))


def test_equivalence_combined_with_other_predicates():
    df = events("type ts sym x",
                ("A", 1, "X", 5), ("A", 2, "Y", 5), ("B", 3, "X", 6), ("B", 4, "Y", 4), ("B", 5, "X", 4))
    # same sym and b.x > a.x: only A0-B2 (X: 6 > 5); A1-B3 is Y but 4 < 5; A0-B4 is X but 4 < 5
    assert matches("PATTERN SEQ(A a, B b) WHERE [sym] AND b.x > a.x WITHIN 10", df) == M((0, 2))


def test_untyped_variable_accepts_any_type():
    df = events("type ts", ("A", 1), ("C", 2), ("A", 3), ("B", 4))
    # x is any event strictly between a and b: for a=0, x in {1, 2}; for a=2 nothing lies between 2 and 3
    assert matches("PATTERN SEQ(A a, * x, B b) WITHIN 10", df) == M((0, 1, 3), (0, 2, 3))


def test_untyped_without_type_column():
    df = events("ts x", (1, 3), (2, 1), (3, 5))
    # no type column: only untyped variables, a.x < b.x: (0,2) 3<5, (1,2) 1<5; (0,1) 3>1
    assert matches("PATTERN SEQ(* a, * b) WHERE a.x < b.x WITHIN 10", df, type=None) == M((0, 2), (1, 2))


def test_any_of_types():
    df = events("type ts", ("A", 1), ("B", 2), ("D", 3), ("C", 4))
    # ANY(B, C) binds B1 or C3, never D2
    assert matches("PATTERN SEQ(A a, ANY(B, C) x) WITHIN 10", df) == M((0, 1), (0, 3))


def test_any_with_predicate():
    df = events("type ts x", ("A", 1, 0), ("B", 2, 1), ("C", 3, 5), ("C", 4, 1))
    # ANY(B, C) x with x.x > 2: only C2
    assert matches("PATTERN SEQ(A a, ANY(B, C) x) WHERE x.x > 2 WITHIN 10", df) == M((0, 2))


def test_dashed_and_quoted_type_names():
    df = events("type ts", ("SHELF-READING", 1), ("EXIT-READING", 2), ("Exit Reading", 3))
    assert matches("PATTERN SEQ(SHELF-READING s, EXIT-READING e) WITHIN 10", df) == M((0, 1))
    assert matches("PATTERN SEQ(SHELF-READING s, 'Exit Reading' e) WITHIN 10", df) == M((0, 2))


def test_backquoted_attribute():
    df = events("type ts", ("A", 1), ("A", 2)).with_columns(pl.Series("Opening Price", [10.0, 20.0]))
    assert matches("PATTERN A a WHERE a.`Opening Price` > 15 WITHIN 10", df) == M((1,))


def test_keywords_are_case_insensitive_and_comments_ignored():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 2), ("B", 3, 0))
    q = """pattern seq(A a, B b)  -- a comment
           where b.x > a.x       # another comment
           within 10"""
    assert matches(q, df) == M((0, 1))


def test_event_keyword_is_pattern():
    df = events("type ts", ("A", 1), ("B", 2))
    assert matches("EVENT SEQ(A a, B b) WITHIN 10", df) == M((0, 1))


def test_many_matches_multiset_has_no_duplicates():
    df = events("type ts", ("A", 1), ("A", 2), ("B", 3), ("B", 4))
    # 2 x 2 pairs, each exactly once
    got = matches("PATTERN SEQ(A a, B b) WITHIN 10", df)
    assert got == M((0, 2), (0, 3), (1, 2), (1, 3))
    assert max(got.values()) == 1


def test_irrelevant_types_are_ignored():
    df = events("type ts", ("Z", 0), ("A", 1), ("Z", 2), ("Z", 3), ("B", 4), ("Z", 5))
    # Z events neither bind nor block under skip_till_any_match
    assert matches("PATTERN SEQ(A a, B b) WITHIN 10", df) == M((1, 4))


# --- three-valued logic (docs/semantics.md §4: a conjunct holds only if TRUE; NULL rejects) ---


def test_comparison_with_null_rejects_both_ways():
    df = events("type ts x", ("A", 1, 7.0), ("A", 2, None), ("A", 3, 3.0))
    # row 1 (null) satisfies neither x > 5 nor NOT (x > 5)
    assert matches("PATTERN A a WHERE a.x > 5 WITHIN 10", df) == M((0,))
    assert matches("PATTERN A a WHERE NOT (a.x > 5) WITHIN 10", df) == M((2,))


def test_or_with_a_true_side_holds_despite_null():
    df = events("type ts x y", ("A", 1, None, 1), ("A", 2, None, 0), ("A", 3, 9.0, 0))
    # TRUE OR NULL = TRUE (row 0); FALSE OR NULL = NULL (row 1) rejects; row 2 TRUE via x
    assert matches("PATTERN A a WHERE a.x > 5 OR a.y = 1 WITHIN 10", df) == M((0,), (2,))


def test_division_by_zero_is_null():
    df = events("type ts x y", ("A", 1, 4, 2), ("A", 2, 4, 0), ("A", 3, 1, 2))
    # 4/2 = 2 > 1 (row 0); 4/0 is NULL: neither the test nor its negation holds for row 1
    assert matches("PATTERN A a WHERE a.x / a.y > 1 WITHIN 10", df) == M((0,))
    assert matches("PATTERN A a WHERE NOT (a.x / a.y > 1) WITHIN 10", df) == M((2,))


def test_in_list_with_null_member():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 2))
    # 1 IN (1, NULL) is TRUE; 2 IN (1, NULL) is NULL, and so is 2 NOT IN (1, NULL)
    assert matches("PATTERN A a WHERE a.x IN (1, NULL) WITHIN 10", df) == M((0,))
    assert matches("PATTERN A a WHERE a.x NOT IN (1, NULL) WITHIN 10", df) == M()


def test_null_key_never_joins_an_equivalence_test():
    df = events("type ts k", ("A", 1, None), ("B", 2, None), ("A", 3, "x"), ("B", 4, "x"))
    # [k]: the two null-key events do not form a partition (A2, B3) does; (A0, B3) differs
    assert matches("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10", df) == M((2, 3))


def test_type_pseudo_attribute():
    df = events("type ts", ("B", 1), ("C", 2), ("B", 3))
    # x.type is the event's type name (semantics.md §4)
    assert matches("PATTERN ANY(B, C) x WHERE x.type = 'C' WITHIN 10", df) == M((1,))


def test_string_compared_with_number_is_an_error():
    df = events("type ts sym", ("A", 1, "IBM"))
    with pytest.raises(AttributeTypeError):
        run("PATTERN A a WHERE a.sym > 5 WITHIN 10", df)
