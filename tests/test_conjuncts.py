"""How WHERE splits into conjuncts and which conjuncts apply (docs/semantics.md §4).

Expected matches written by hand from §4: WHERE is split through every level
of AND, parenthesised or not; a conjunct applies when every variable it
mentions is bound (so one that mentions none applies to every match) and holds
only when it is TRUE.
"""

from __future__ import annotations

import pytest

from semantic_helpers import M, events, matches

AB = events("type ts", ("A", 1), ("B", 2))


@pytest.mark.parametrize("where", ["1 > 2", "NULL IS NOT NULL", "NOT TRUE", "1 / 0 = 1", "'x' = 'y'"])
def test_constant_conjunct_that_is_not_true_leaves_no_match(where):
    # 1 / 0 is NULL (§4), so the comparison is NULL: not TRUE
    assert matches(f"PATTERN A a WHERE {where} WITHIN UNBOUNDED", AB) == M()


@pytest.mark.parametrize("where", ["1 < 2", "NULL IS NULL", "2 * 3 = 6", "'x' != 'y'"])
def test_constant_conjunct_that_is_true_changes_nothing(where):
    assert matches(f"PATTERN A a WHERE {where} WITHIN UNBOUNDED", AB) == M((0,))


def test_constant_conjunct_beside_other_conjuncts():
    df = events("type ts x", ("A", 1, 5), ("B", 2, 7), ("A", 3, 9))
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x < b.x AND 1 > 2 WITHIN 10", df) == M()
    assert matches("PATTERN SEQ(A a, B b) WHERE a.x < b.x AND 2 > 1 WITHIN 10", df) == M((0, 1))


def test_constant_conjunct_with_a_kleene_variable():
    # the result has no match but keeps its columns (the compiled engine once failed here)
    df = events("type ts", ("A", 1), ("B", 2))
    assert matches("PATTERN SEQ(A+ b[], B c) WHERE 1 > 2 WITHIN 5", df) == M()
    assert matches("PATTERN SEQ(A+ b[], B c) WHERE 1 < 2 WITHIN 5", df) == M(((0,), 1))


@pytest.mark.parametrize("strategy", ["skip_till_next_match", "strict_contiguity"])
def test_constant_conjunct_under_nfa_strategies(strategy):
    df = events("type ts", ("A", 1), ("B", 2))
    assert matches("PATTERN SEQ(A a, B b) WHERE 1 > 2 WITHIN 5", df, strategy=strategy) == M()
    assert matches("PATTERN SEQ(A a, B b) WHERE 1 < 2 WITHIN 5", df, strategy=strategy) == M((0, 1))


# --- parentheses do not group conjuncts -----------------------------------------------------------


def test_parenthesised_and_with_an_or_branch_variable():
    df = events("type ts x y", ("A", 1, 0, 0), ("B", 2, 0, 0), ("A", 3, 1, 0), ("C", 4, 0, 1),
                ("C", 5, 0, 2))
    # a.x > 0 applies to every match; c.y = 1 only to the C branch.  B branch: a must be A2 and
    # before B1: none.  C branch: a = A2 (x=1) with C3 (y=1); C4 has y=2.
    q = "PATTERN SEQ(A a, OR(B b, C c)) WHERE (a.x > 0 AND c.y = 1) WITHIN 10"
    assert matches(q, df, variables=["a", "b", "c"]) == M((2, None, 3))
    # the same without parentheses
    q = "PATTERN SEQ(A a, OR(B b, C c)) WHERE a.x > 0 AND c.y = 1 WITHIN 10"
    assert matches(q, df, variables=["a", "b", "c"]) == M((2, None, 3))


def test_parenthesised_and_with_a_negated_variable():
    df = events("type ts x y", ("A", 1, 0, 0), ("N", 2, 0, 2), ("B", 3, 0, 0), ("A", 4, 1, 0),
                ("N", 5, 0, 1), ("B", 6, 0, 0))
    # a.x > 0 filters the positive match: a = A3 only; n.y = 2 is the negation's condition:
    # between A3 and B5 lies N4 with y=1, which does not kill.  (Grouped, (a.x > 0 AND n.y = 2)
    # would be one negation condition and A0 would match too.)
    q = "PATTERN SEQ(A a, !N n, B b) WHERE (a.x > 0 AND n.y = 2) WITHIN 10"
    assert matches(q, df) == M((3, 5))


def test_parenthesised_and_with_an_iterative_reference():
    df = events("type ts x", ("A", 0, 0), ("B", 1, -1), ("B", 2, 3), ("B", 3, 5), ("C", 4, 0))
    # b[i].x > 0 holds for every member, the first included; only b[i].x > b[i-1].x is vacuous
    # at i = 1.  Members with x > 0: B2, B3 (3 < 5): lists (2,), (3,), (2, 3).
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE (b[i].x > 0 AND b[i].x > b[i-1].x) WITHIN 10"
    assert matches(q, df) == M((0, (2,), 4), (0, (3,), 4), (0, (2, 3), 4))
