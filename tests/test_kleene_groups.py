"""Kleene groups KL(SEQ(..)) / KL(AND(..)) with {n,m}, compiled (semantics §6, §2 ``kleene_window``).

Hand-enumerated cases run on both engines (tests/conftest.py); each first
checks that the compiled engine covers the pattern (no fallback).  Expected
matches come from docs/semantics.md: an iteration is one match of the group
body; a SEQ group's iteration k+1 lies after iteration k; an AND group binds
a set of distinct body matches in canonical order, which may share events;
``v[i-1]`` reads the previous iteration.  A group variable's value is the
tuple of its members' input rows, one per iteration.

The differential test on generated group forms is tests/test_compiled_groups.py.
"""

from __future__ import annotations

import pytest

import jitcep
from jitcep import runtime
from semantic_helpers import M, events, matches


def compiled(text: str, **options) -> str:
    """``text``, after checking the compiled engine covers it under ``options``."""
    q = jitcep.compile(text, **options)
    for p in q.patterns:
        runtime.check_supported(p, q.options)
    return text


# X0 A1 B2 A3 B4 Y5: body matches (a, b) = (1,2), (1,4), (3,4)
XABABY = events("type ts v", ("X", 1, 0), ("A", 2, 1), ("B", 3, 5), ("A", 4, 6), ("B", 5, 0), ("Y", 6, 0))


def test_seq_group_between_neighbours():
    # one iteration: each body match; two: (1,2) then (3,4), the only pair with the second after the first
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, Y y) WITHIN 10")
    assert matches(q, XABABY) == M((0, (1,), (2,), 5), (0, (1,), (4,), 5), (0, (3,), (4,), 5),
                                   (0, (1, 3), (2, 4), 5))


def test_and_group_between_neighbours_shares_events():
    # AND bodies (a, b): (1,2), (3,2), (1,4), (3,4); sets of two in canonical order (last, first position)
    q = compiled("PATTERN SEQ(X x, KL(AND(A a, B b)){2}, Y y) WITHIN 10")
    assert matches(q, XABABY) == M(
        (0, (1, 3), (2, 2), 5), (0, (1, 1), (2, 4), 5), (0, (1, 3), (2, 4), 5),
        (0, (3, 1), (2, 4), 5), (0, (3, 3), (2, 4), 5), (0, (1, 3), (4, 4), 5))


def test_iterative_predicate_reads_the_previous_iteration():
    df = events("type ts v", ("X", 1, 0), ("A", 2, 1), ("B", 3, 5), ("A", 4, 6), ("B", 5, 0), ("A", 6, 2),
                ("B", 7, 0))
    # bodies (1,2) (1,4) (1,6) (3,4) (3,6) (5,6); a[i].v > b[i-1].v: (1,2)->(3,4) 6 > 5, (1,2)->(3,6),
    # (1,4)->(5,6) 2 > 0, (3,4)->(5,6), (1,2)->(3,4)->(5,6); (1,2)->(5,6) fails (2 > 5)
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,3}) WHERE a[i].v > b[i-1].v WITHIN 20")
    singles = [((a,), (b,)) for a, b in ((1, 2), (1, 4), (1, 6), (3, 4), (3, 6), (5, 6))]
    chains = [((1, 3), (2, 4)), ((1, 3), (2, 6)), ((1, 5), (4, 6)), ((3, 5), (4, 6)), ((1, 3, 5), (2, 4, 6))]
    assert matches(q, df) == M(*[(0, *lst) for lst in singles + chains])


def test_member_and_list_conjuncts():
    # b.v > x.v keeps bodies with b = B2 (v 5); count(a) = 1 and sum over one iteration
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, Y y) WHERE b.v > x.v AND sum(a.v) < 5 WITHIN 10")
    assert matches(q, XABABY) == M((0, (1,), (2,), 5))
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, Y y) WHERE count(a) = 2 AND a[1].v < a[a.LEN].v "
                 "WITHIN 10")
    assert matches(q, XABABY) == M((0, (1, 3), (2, 4), 5))


def test_iteration_local_conjunct_and_filter():
    # a.v < b.v inside one iteration: (1,2) only (1 < 5); (1,4), (3,4) fail
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)), Y y) WHERE a.v < b.v AND a.v >= 0 WITHIN 10")
    assert matches(q, XABABY) == M((0, (1,), (2,), 5))


def test_zero_iterations_is_an_empty_list():
    df = events("type ts", ("X", 1), ("A", 2), ("Y", 3), ("B", 4), ("Y", 5))
    # (x0, y2): no body before Y2; (x0, y4): none, or the body (1,3)
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){0,1}, Y y) WITHIN 10")
    assert matches(q, df) == M((0, (), (), 2), (0, (), (), 4), (0, (1,), (3,), 4))


def test_group_alone_never_matches_nothing():
    df = events("type ts", ("A", 1), ("B", 2), ("A", 3), ("B", 4))
    # semantics §3: a match binds a positive event, so KL(..)* alone lists at least one iteration
    q = compiled("PATTERN KL(SEQ(A a, B b))* WITHIN 10")
    assert matches(q, df) == M(((0,), (1,)), ((0,), (3,)), ((2,), (3,)), ((0, 2), (1, 3)))


def test_group_in_an_or_branch():
    df = events("type ts", ("X", 1), ("A", 2), ("B", 3), ("Y", 4))
    # the Y branch leaves x and the group unbound (None)
    q = compiled("PATTERN OR(SEQ(X x, KL(SEQ(A a, B b)){1}), Y y) WITHIN 10")
    assert matches(q, df) == M((0, (1,), (2,), None), (None, None, None, 3))


def test_negation_after_the_group():
    df = events("type ts", ("X", 1), ("A", 2), ("B", 3), ("C", 4), ("A", 5), ("B", 6), ("Y", 7))
    # C3 lies between the group and Y6 unless the list ends after it: its last body is (1,5) or (4,5)
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, !C c, Y y) WITHIN 10")
    assert matches(q, df) == M((0, (1,), (5,), 6), (0, (4,), (5,), 6), (0, (1, 4), (2, 5), 6))


@pytest.mark.parametrize("body", ["SEQ", "AND"])
def test_kleene_window_per_iteration(body):
    df = events("type ts", ("A", 0), ("B", 1), ("A", 10), ("B", 11))
    # bodies within 3: (0,1), (2,3) (a SEQ body; the AND body (2,1) spans 9).  "match": the two together
    # span 11 > 3, no list of two; "iteration": each fits alone (there is no event outside the group)
    text = compiled(f"PATTERN KL({body}(A a, B b)){{2}} WITHIN 3", kleene_window="iteration")
    assert matches(text, df) == M()
    assert matches(text, df, kleene_window="iteration") == M(((0, 2), (1, 3)))


def test_kleene_window_per_iteration_beside_a_single_variable():
    df = events("type ts", ("A", 0), ("B", 1), ("X", 2), ("A", 4), ("B", 5))
    # AND(X x, KL(..)): x sits between the bodies (0,1) and (3,4); each fits with x within 3, together 5
    text = compiled("PATTERN AND(X x, KL(SEQ(A a, B b)){2}) WITHIN 3", kleene_window="iteration")
    assert matches(text, df) == M()
    assert matches(text, df, kleene_window="iteration") == M((2, (0, 3), (1, 4)))


@pytest.mark.parametrize("order", ["position", "strict_ts", "nondecreasing_ts"])
def test_kleene_window_per_iteration_beside_a_closure(order):
    df = events("type ts", ("A", 0), ("B", 1), ("B", 3), ("A", 5), ("B", 7))
    # the group's two iterations A0, A5 span 5 > 4; under "iteration" only R (the members of d) must fit,
    # each with every iteration: d's members lie within 4 of ts 0 and of ts 5, so B1 and B3, never B7
    text = compiled("PATTERN AND(KL(AND(A g)){2}, B+ d[]) WITHIN 4", kleene_window="iteration", order=order)
    assert matches(text, df, order=order) == M()
    assert matches(text, df, order=order, kleene_window="iteration") == M(((0, 3), (1,)), ((0, 3), (2,)),
                                                                           ((0, 3), (1, 2)))


def test_kleene_window_per_iteration_ties_put_iterations_past_a_closure():
    df = events("type ts", ("A", 0), ("A", 0), ("B", 0), ("A", 0), ("A", 0), ("A", 0))
    # under nondecreasing_ts a tie orders every A before d = (B2,); WITHIN 3 EVENTS: positions less than 3
    # apart.  "iteration": each A within 2 of B2 (A0, A1, A3, A4, never A5), any two of them;
    # "match": the two A's and B2 within 3 consecutive positions
    text = compiled("PATTERN SEQ(KL(AND(A g)){2}, B+ d[]) WITHIN 3 EVENTS", kleene_window="iteration",
                    order="nondecreasing_ts")
    assert matches(text, df, order="nondecreasing_ts") == M(((0, 1), (2,)), ((1, 3), (2,)), ((3, 4), (2,)))
    assert matches(text, df, order="nondecreasing_ts", kleene_window="iteration") == M(
        *(((i, j), (2,)) for i, j in [(0, 1), (0, 3), (0, 4), (1, 3), (1, 4), (3, 4)]))


@pytest.mark.parametrize("order, expected", [("position", M(((0, 2), (1, 3)))), ("strict_ts", M())])
def test_iterations_follow_in_time_under_strict_ts(order, expected):
    df = events("type ts", ("A", 1), ("B", 2), ("A", 2), ("B", 3))
    # (0,1) then (2,3): B1 and A2 are simultaneous, ordered by position only (semantics §1, §6)
    assert matches(compiled("PATTERN KL(SEQ(A a, B b)){2} WITHIN 10"), df, order=order) == expected


def test_and_group_iterative_predicate_reads_canonical_order():
    df = events("type ts x", ("X", 1, 0), ("A", 1, 1), ("A", 1, 0))
    # an AND group's set lists its iterations in canonical order (A1 then A2, by position), and g[i-1]
    # is the one before in that order: x 1 then 0 is decreasing
    up = compiled("PATTERN SEQ(X v, KL(AND(A g)){2}) WHERE g[i].x >= g[i-1].x WITHIN 10")
    down = compiled("PATTERN SEQ(X v, KL(AND(A g)){2}) WHERE g[i].x <= g[i-1].x WITHIN 10")
    assert matches(up, df) == M()
    assert matches(down, df) == M((0, (1, 2)))


def test_a_group_after_a_closure_in_an_or_branch():
    # the group applies to the records that took its branch, though by then the closure's anchor is its list
    # (the compiled engine raised ValueError; found by the generated corpus).  B0 C1 C2 A3 B4 within 4: the
    # branch needs B's before one iteration (C1, C2): b = [B0]; D never occurs
    df = events("type ts", ("B", 0), ("C", 1), ("C", 2), ("A", 3), ("B", 4))
    got = matches("PATTERN OR(D d, SEQ(B+ b[], KL(SEQ(C c1, C c2)))) WITHIN 4", df, variables=("d", "b", "c1", "c2"))
    assert got == M((None, (0,), (1,), (2,)))


def test_a_group_that_may_be_empty_in_a_nested_or_branch():
    # the branch may match with no event (the group's empty list) while q binds one: a match binding c and
    # a to () (the compiled engine runs it as alternatives that each bind an event, pattern/nonempty.py).
    # A0 B1 C2 D3: body matches (c, a) = (1, 2) only
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3), ("D", 4))
    q = compiled("PATTERN AND(A q, OR(KL(AND(B c, C a)){0,3}, D d)) WITHIN 5")
    assert matches(q, df, variables=("q", "c", "a", "d")) == M(
        (0, (), (), None), (0, (1,), (2,), None), (0, None, None, 3))
    # a group alone, or alone in a top-level OR branch, still lends its first iteration
    for text in ("PATTERN KL(SEQ(A a, B b)){0,2} WITHIN 5", "PATTERN OR(KL(SEQ(A a, B b)){0,2}, D d) WITHIN 5"):
        q = jitcep.compile(text)
        runtime.check_supported(q.patterns[0], q.options)


# --- conjuncts reading an iteration with whole lists (semantics §4: for every iteration i) ---------------


def test_iteration_with_an_aggregate_holds_for_every_iteration():
    # a.v <= max(b.v) + 1 for every iteration: (1,2) 1 <= 6; (1,4) 1 <= 1; (3,4) 6 <= 1 fails;
    # (1,2)(3,4): max 5, 1 <= 6 and 6 <= 6
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, Y y) WHERE a.v <= max(b.v) + 1 WITHIN 10")
    assert matches(q, XABABY) == M((0, (1,), (2,), 5), (0, (1,), (4,), 5), (0, (1, 3), (2, 4), 5))


@pytest.mark.parametrize("bound, pair", [(10, False), (5, True)])
def test_previous_iteration_or_an_aggregate(bound, pair):
    # one iteration: b[i-1] is vacuous at i = 1; (1,2)(3,4): b 0 > 5 fails, so sum(a.v) = 7 > bound decides
    q = compiled(f"PATTERN SEQ(X x, KL(SEQ(A a, B b)){{1,2}}, Y y) WHERE b[i].v > b[i-1].v OR sum(a.v) > {bound} "
                 f"WITHIN 10")
    singles = [(0, (1,), (2,), 5), (0, (1,), (4,), 5), (0, (3,), (4,), 5)]
    assert matches(q, XABABY) == M(*singles, *([(0, (1, 3), (2, 4), 5)] if pair else []))


# X0 A1 B2 A3 B4 C5 Y6: C5 (v=3) lies after every list, before Y6
XABABCY = events("type ts v", ("X", 1, 0), ("A", 2, 1), ("B", 3, 5), ("A", 4, 6), ("B", 5, 0), ("C", 6, 3),
                 ("Y", 7, 0))


def test_negation_condition_on_a_groups_list():
    # C5 kills the lists whose a maximum is below 3: (1,2) and (1,4)
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, !C n, Y y) WHERE n.v > max(a.v) WITHIN 10")
    assert matches(q, XABABCY) == M((0, (3,), (4,), 6), (0, (1, 3), (2, 4), 6))


def test_negation_condition_on_every_iteration_of_a_group():
    # C5 kills a list if 3 > a.v + b.v of every iteration (the a and b of one iteration): only (1,4), 1 + 0
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, !C n, Y y) WHERE n.v > a.v + b.v WITHIN 10")
    assert matches(q, XABABCY) == M((0, (1,), (2,), 6), (0, (3,), (4,), 6), (0, (1, 3), (2, 4), 6))


# X0 A1 B2 A3 B4 C5 C6 Y7: the C lists [5] (v 3), [6] (v 7), [5, 6]
XABABCCY = events("type ts v", ("X", 1, 0), ("A", 2, 1), ("B", 3, 5), ("A", 4, 6), ("B", 5, 0), ("C", 6, 3),
                  ("C", 7, 7), ("Y", 8, 0))
GROUP_LISTS = [((1,), (2,)), ((1,), (4,)), ((3,), (4,)), ((1, 3), (2, 4))]


def test_group_iteration_with_a_later_closures_list():
    # every a below max(c.v): c = [5] (max 3) keeps the lists with a = 1 only; [6] and [5, 6] (max 7) all
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, C+ c[], Y y) WHERE a.v < max(c.v) WITHIN 10")
    expected = [(0, a, b, (5,), 7) for a, b in GROUP_LISTS[:2]]
    expected += [(0, a, b, c, 7) for a, b in GROUP_LISTS for c in [(6,), (5, 6)]]
    assert matches(q, XABABCCY) == M(*expected)


def test_closure_member_with_an_earlier_groups_list():
    # every c above max(b.v): b maximum 5 for (1,2) and (1,2)(3,4) (only c = [6] passes), 0 otherwise (all)
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, C+ c[], Y y) WHERE c.v > max(b.v) WITHIN 10")
    expected = [(0, a, b, (6,), 7) for a, b in (GROUP_LISTS[0], GROUP_LISTS[3])]
    expected += [(0, a, b, c, 7) for a, b in GROUP_LISTS[1:3] for c in [(5,), (6,), (5, 6)]]
    assert matches(q, XABABCCY) == M(*expected)


def test_lists_of_a_group_and_a_closure():
    # count(a) = count(c): one iteration with one C, two with [5, 6]
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, C+ c[], Y y) WHERE count(a) = count(c) WITHIN 10")
    expected = [(0, a, b, c, 7) for a, b in GROUP_LISTS[:3] for c in [(5,), (6,)]]
    assert matches(q, XABABCCY) == M(*expected, (0, (1, 3), (2, 4), (5, 6), 7))


def test_member_wise_over_a_group_and_a_closure_holds_for_every_pair():
    # c.v > a.v + b.v for every (iteration, C member), a and b of one iteration: sums 6 (1,2), 1 (1,4),
    # 6 (3,4), and 6, 6 for (1,2)(3,4); C5 is 3, C6 is 7
    q = compiled("PATTERN SEQ(X x, KL(SEQ(A a, B b)){1,2}, C+ c[], Y y) WHERE c.v > a.v + b.v WITHIN 10")
    expected = [(0, a, b, (6,), 7) for a, b in GROUP_LISTS]
    expected += [(0, (1,), (4,), c, 7) for c in [(5,), (5, 6)]]
    assert matches(q, XABABCCY) == M(*expected)
