"""AND (conjunction), OR (disjunction) and nesting of operators.

From DESIGN.md section 2: "AND(P1..Pn): all present, any order. OR(P1..Pn):
any one branch (the output says which; other branches' columns are null).
Operators nest."  ZStream section 3.1: conjunction = both occur within the
window, order does not matter.  Window: max ts - min ts over the positive
events of a match <= W.  Unbound variables appear as ``None`` in the tuples.
"""

from __future__ import annotations

from semantic_helpers import M, events, matches, run


def test_and_of_two_in_either_order():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3))
    # A0 before B1 and A2 after B1 both count: order does not matter
    assert matches("PATTERN AND(A a, B b) WITHIN 10", df) == M((0, 1), (2, 1))


def test_and_respects_window():
    df = events("type ts", ("A", 1), ("B", 5), ("A", 20))
    # |5 - 1| = 4 <= 10; |20 - 5| = 15 > 10
    assert matches("PATTERN AND(A a, B b) WITHIN 10", df) == M((0, 1))


def test_and_of_three_all_orders():
    df = events("type ts", ("C", 1), ("A", 2), ("B", 3), ("A", 4))
    # one C and one B; a is either A: two matches
    assert matches("PATTERN AND(A a, B b, C c) WITHIN 10", df) == M((1, 2, 0), (3, 2, 0))


def test_and_same_type_binds_distinct_events_in_both_roles():
    df = events("type ts", ("A", 1), ("A", 2))
    # AND has no order: (a1, a2) = (0, 1) and (1, 0) are distinct bindings; never (k, k)
    assert matches("PATTERN AND(A a1, A a2) WITHIN 10", df) == M((0, 1), (1, 0))


def test_and_with_predicate():
    df = events("type ts x", ("B", 1, 2), ("A", 2, 1), ("A", 3, 2), ("B", 4, 1))
    # a.x = b.x: (A1, B3) with x = 1 (a before b), (A2, B0) with x = 2 (b before a)
    assert matches("PATTERN AND(A a, B b) WHERE a.x = b.x WITHIN 10", df) == M((1, 3), (2, 0))


def test_and_with_equivalence_key():
    df = events("type ts k", ("A", 1, 1), ("B", 2, 2), ("B", 3, 1), ("A", 4, 2))
    # [k]: (A0, B2) key 1, (A3, B1) key 2
    assert matches("PATTERN AND(A a, B b) WHERE [k] WITHIN 10", df) == M((0, 2), (3, 1))


def test_and_window_is_inclusive():
    df = events("type ts", ("B", 0), ("A", 10), ("B", 21))
    # |10 - 0| = 10 = W is inside; |21 - 10| = 11 is outside
    assert matches("PATTERN AND(A a, B b) WITHIN 10", df) == M((1, 0))


def test_or_of_two_variables():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    # each A is a match of branch a, each B of branch b; the other column is null
    assert matches("PATTERN OR(A a, B b) WITHIN 10", df) == M((0, None), (None, 1))


def test_or_null_columns_in_output():
    df = events("type ts", ("A", 1), ("B", 2))
    out = run("PATTERN OR(A a, B b) WITHIN 10", df)
    # one row per branch taken; the branch not taken is a null struct, not a struct of nulls
    assert out.height == 2
    by_a = out.filter(out["a"].is_not_null())
    by_b = out.filter(out["b"].is_not_null())
    assert by_a.height == 1 and by_b.height == 1
    assert by_a["b"].null_count() == 1 and by_b["a"].null_count() == 1
    assert by_a["a"].struct.field("row").to_list() == [0]
    assert by_b["b"].struct.field("row").to_list() == [1]


def test_or_same_event_matches_each_branch_it_fits():
    df = events("type ts", ("A", 1))
    # A0 fits branch a and branch x = ANY(A, B): two matches, each saying which branch
    assert matches("PATTERN OR(A a, ANY(A, B) x) WITHIN 10", df) == M((0, None), (None, 0))


def test_or_with_branch_filters():
    df = events("type ts x", ("A", 1, 1), ("A", 2, 9), ("B", 3, 1), ("B", 4, 9))
    # a.x > 5 filters branch a only, b.x < 5 branch b only
    q = "PATTERN OR(A a, B b) WHERE a.x > 5 AND b.x < 5 WITHIN 10"
    assert matches(q, df) == M((1, None), (None, 2))


def test_or_of_sequences():
    df = events("type ts", ("A", 1), ("C", 2), ("B", 3), ("D", 4), ("D", 5))
    # branch 1: (A0, B2); branch 2: (C1, D3), (C1, D4); null for the other branch's variables
    assert matches("PATTERN OR(SEQ(A a, B b), SEQ(C c, D d)) WITHIN 10", df) == M(
        (0, 2, None, None), (None, None, 1, 3), (None, None, 1, 4))


def test_or_inside_seq():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("D", 4), ("B", 5))
    # a=0, then B1 or C2 before D3; B4 is after the only D
    assert matches("PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 10", df) == M((0, 1, None, 3), (0, None, 2, 3))


def test_and_inside_seq():
    df = events("type ts", ("A", 1), ("C", 2), ("B", 3), ("D", 4), ("B", 5), ("C", 6), ("D", 7))
    # b and c both strictly between a and d, in either order:
    # d=3: (B2, C1); d=6: B in {2, 4}, C in {1, 5} -> 4 more
    assert matches("PATTERN SEQ(A a, AND(B b, C c), D d) WITHIN 10", df) == M(
        (0, 2, 1, 3), (0, 2, 1, 6), (0, 2, 5, 6), (0, 4, 1, 6), (0, 4, 5, 6))


def test_seq_inside_and():
    df = events("type ts", ("C", 1), ("A", 2), ("B", 3), ("C", 4))
    # (a, b) ordered A1 < B2; c is either C, before or after the sequence
    assert matches("PATTERN AND(SEQ(A a, B b), C c) WITHIN 10", df) == M((1, 2, 0), (1, 2, 3))


def test_seq_inside_and_requires_inner_order():
    df = events("type ts", ("B", 1), ("A", 2), ("C", 3))
    # the only B precedes the only A: the inner SEQ fails, so AND fails
    assert matches("PATTERN AND(SEQ(A a, B b), C c) WITHIN 10", df) == M()


def test_or_respects_window_per_branch():
    df = events("type ts", ("A", 0), ("B", 20), ("C", 25))
    # branch SEQ(a, b) spans 20 > 10: no; branch c alone spans 0: yes
    assert matches("PATTERN OR(SEQ(A a, B b), C c) WITHIN 10", df) == M((None, None, 2))


def test_nested_and_or():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    # AND(A a, OR(B b, C c)): a with b, or a with c
    assert matches("PATTERN AND(A a, OR(B b, C c)) WITHIN 10", df) == M((0, 1, None), (0, None, 2))


def test_and_predicate_across_seq_parts():
    df = events("type ts x", ("A", 1, 1), ("B", 2, 5), ("C", 3, 5), ("C", 4, 7))
    # SEQ(a, AND(b, c)) with b.x = c.x: only C2 has x = 5
    q = "PATTERN SEQ(A a, AND(B b, C c)) WHERE b.x = c.x WITHIN 10"
    assert matches(q, df) == M((0, 1, 2))
