"""Several patterns in one compile: a `pattern` column, independent results.

DESIGN.md section 2 ("multiple patterns run in one pass ... sharing never
changes results"), docs/semantics.md §10 (each pattern evaluated independently
over the same table; options apply to every pattern; output policies per
pattern) and §12 (max_matches counts all patterns).  The public contract: a
`pattern` column (0-based index in the order given) when several patterns run.
Tuples are (pattern index, rows of that pattern's variables...).
"""

from __future__ import annotations

import pytest

from jitcep.errors import ExplosionError
from semantic_helpers import M, events, matches_by_pattern, run

DF = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("B", 4), ("C", 5))
P_AB = "PATTERN SEQ(A a, B b) WITHIN 10"
P_BC = "PATTERN SEQ(B x, C y) WITHIN 10"


def test_two_patterns_as_a_list():
    # pattern 0: (A0,B1) (A0,B3); pattern 1: (B1,C2) (B1,C4) (B3,C4)
    assert matches_by_pattern([P_AB, P_BC], DF) == M(
        (0, 0, 1), (0, 0, 3), (1, 1, 2), (1, 1, 4), (1, 3, 4))


def test_pattern_index_follows_the_given_order():
    assert matches_by_pattern([P_BC, P_AB], DF) == M(
        (1, 0, 1), (1, 0, 3), (0, 1, 2), (0, 1, 4), (0, 3, 4))


def test_two_patterns_in_one_text():
    assert matches_by_pattern(P_AB + ";\n" + P_BC, DF) == M(
        (0, 0, 1), (0, 0, 3), (1, 1, 2), (1, 1, 4), (1, 3, 4))


def test_pattern_column_is_an_integer_index():
    out = run([P_AB, P_BC], DF)
    assert "pattern" in out.columns
    assert out["pattern"].dtype.is_integer()
    assert sorted(set(out["pattern"].to_list())) == [0, 1]


def test_single_pattern_has_no_pattern_column():
    out = run(P_AB, DF)
    assert "pattern" not in out.columns


def test_same_pattern_twice_reports_each_match_twice():
    # sharing the whole pattern never merges the two result sets
    assert matches_by_pattern([P_AB, P_AB], DF) == M(
        (0, 0, 1), (0, 0, 3), (1, 0, 1), (1, 0, 3))


def test_patterns_with_different_windows():
    w1 = "PATTERN SEQ(A a, B b) WITHIN 1"
    w3 = "PATTERN SEQ(A a, B b) WITHIN 3"
    # WITHIN 1: only B1@2; WITHIN 3: B1@2 and B3@4
    assert matches_by_pattern([w1, w3], DF) == M((0, 0, 1), (1, 0, 1), (1, 0, 3))


def test_pattern_without_matches_leaves_others_intact():
    none = "PATTERN SEQ(C p, A q) WITHIN 10"
    # no A after a C: pattern 0 is empty, pattern 1 unchanged
    assert matches_by_pattern([none, P_AB], DF) == M((1, 0, 1), (1, 0, 3))


def test_output_policy_is_per_pattern():
    # match_single within each pattern: pattern 0 keeps (A0,B1) and pattern 1 keeps (B1,C2), (B3,C4)
    # although B1 is used by both patterns
    assert matches_by_pattern([P_AB, P_BC], DF, output="match_single") == M(
        (0, 0, 1), (1, 1, 2), (1, 3, 4))


def test_patterns_of_different_shapes():
    neg = "PATTERN SEQ(A a, !C n, B b) WITHIN 10"
    kl = "PATTERN SEQ(A p, B+ q[]) WITHIN 10"
    # neg: (A0,B1); (A0,B3) has C2 between; kl: [B1], [B3], [B1,B3]
    assert matches_by_pattern([neg, kl], DF) == M(
        (0, 0, 1), (1, 0, (1,)), (1, 0, (3,)), (1, 0, (1, 3)))


def test_max_matches_counts_all_patterns():
    # 2 + 3 = 5 matches in total: a cap of 4 is exceeded although each pattern alone fits
    with pytest.raises(ExplosionError):
        run([P_AB, P_BC], DF, max_matches=4)
    assert sum(matches_by_pattern([P_AB, P_BC], DF, max_matches=5).values()) == 5
