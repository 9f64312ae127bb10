"""The order of matches that tie on everything but their Kleene lists (docs/semantics.md section 11).

Matches that tie on last position, first position and every single variable's position are ordered by
their list variables in name order, each list lexicographically by its members' positions, a proper
prefix first.  These tests write that order by hand and run on both engines (tests/conftest.py
parametrises them); tests/test_compiled_kleene_list_order.py compares the two engines row for row on
generated streams.
"""

from __future__ import annotations

from semantic_helpers import as_tuples, events, run


def test_one_list_variable_lists_come_lexicographically_a_prefix_before_its_extensions():
    df = events("type ts", ("A", 0), ("B", 1), ("B", 2), ("B", 3), ("C", 4))
    # one (a, c): every non-empty subsequence of rows 1..3, tied on first (0) and last (4) position;
    # lists of lengths 1, 2 and 3, each prefix right before its extensions
    assert as_tuples(run("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", df)) == [
        (0, (1,), 4), (0, (1, 2), 4), (0, (1, 2, 3), 4), (0, (1, 3), 4), (0, (2,), 4), (0, (2, 3), 4),
        (0, (3,), 4)]


def test_an_empty_list_first_and_records_merged_by_first_position():
    df = events("type ts", ("A", 0), ("A", 1), ("B", 2), ("B", 3), ("C", 4))
    # two records end at C4: a=0 (first position 0) before a=1 (1); each one's lists the empty one first
    assert as_tuples(run("PATTERN SEQ(A a, B* b[], C c) WITHIN 10", df)) == [
        (0, (), 4), (0, (2,), 4), (0, (2, 3), 4), (0, (3,), 4),
        (1, (), 4), (1, (2,), 4), (1, (2, 3), 4), (1, (3,), 4)]


def test_two_list_variables_in_name_order_not_pattern_order():
    df = events("type ts", ("A", 0), ("C", 1), ("C", 2), ("B", 3), ("B", 4), ("D", 5))
    # z (rows 1, 2) comes before b (rows 3, 4) in the pattern, but b sorts first by name: the rows go by b's
    # list, then by z's; every match ties on first (0) and last (5) position
    want = [(0, z, b, 5) for b in ((3,), (3, 4), (4,)) for z in ((1,), (1, 2), (2,))]
    assert as_tuples(run("PATTERN SEQ(A a, C+ z[], B+ b[], D d) WITHIN 10", df)) == want


def test_a_seq_group_orders_by_its_variables_lists_not_by_iterations():
    df = events("type ts", ("A", 0), ("B", 1), ("E", 2), ("B", 3), ("E", 4), ("C", 5))
    # iterations (1, 2), (1, 4), (3, 4) and the list of (1, 2) then (3, 4); by b's list first, then e's:
    # b=(1) e=(2); b=(1) e=(4); b=(1, 3) e=(2, 4); b=(3) e=(4).  (By iterations, (1, 2)(3, 4) would
    # come second, right after its prefix (1, 2).)
    assert as_tuples(run("PATTERN SEQ(A a, KL(SEQ(B b, E e)), C c) WITHIN 10", df)) == [
        (0, (1,), (2,), 5), (0, (1,), (4,), 5), (0, (1, 3), (2, 4), 5), (0, (3,), (4,), 5)]


def test_lists_that_move_the_first_position_order_by_it_first():
    df = events("type ts", ("B", 0), ("B", 1), ("B", 2), ("C", 3))
    # the lists start the match: (0..) first, then (1..), then (2); within a first position, a prefix first
    assert as_tuples(run("PATTERN SEQ(B+ b[], C c) WITHIN 10", df)) == [
        ((0,), 3), ((0, 1), 3), ((0, 1, 2), 3), ((0, 2), 3), ((1,), 3), ((1, 2), 3), ((2,), 3)]
