"""Closures that may be empty where nothing else binds an event (semantics §3, §4, §5, §6).

A closure ``T* v[]`` / ``{0,m}`` / ``KL(..){0,m}`` may bind the empty list ``()`` (bound, unlike a
variable of an OR branch not taken, ``None``), but a match binds at least one positive event (§3).
Cases where that decides the matches: a closure alone in an OR branch nested in a SEQ / AND (taking
the branch with an empty list binds nothing there, but the items outside bind), several closures
with nothing else (at least one is not empty), and the conjuncts read on an empty list (§4: a
member-wise one holds vacuously, ``count`` is 0, ``sum`` and ``v[1]`` NULL).  Expected matches are
written by hand; each test runs on both engines (tests/conftest.py) and, on the compiled one, checks
that the pattern compiles (no fallback, tests/semantic_helpers.py).  The generated differential of
these forms is tests/test_compiled_empty_closures.py.
"""

from __future__ import annotations

from semantic_helpers import M, events, matches

# B0 C1 B2 (ts 1, 2, 3; x 1, 2, 3)
BCB = events("type ts x", ("B", 1, 1), ("C", 2, 2), ("B", 3, 3))


def test_two_star_closures_at_least_one_not_empty():
    # every b before every c; c = (1,): b in {(), (0,)}; c = (): b a non-empty subsequence of B0, B2;
    # b = c = () binds nothing: no match
    assert matches("PATTERN SEQ(B* b[], C* c[]) WITHIN 10", BCB) == M(
        ((), (1,)), ((0,), (1,)), ((0,), ()), ((2,), ()), ((0, 2), ()))


def test_conjuncts_read_on_the_empty_list():
    # count(b) = 0 for b = (): c[1].x > 2 decides, and C1 has x = 2
    q = "PATTERN SEQ(B* b[], C* c[]) WHERE count(b) >= 1 OR c[1].x > 2 WITHIN 10"
    assert matches(q, BCB) == M(((0,), (1,)), ((0,), ()), ((2,), ()), ((0, 2), ()))
    # member-wise over b: vacuous for b = (); B0 (x 1) fails, B2 (x 3) passes
    assert matches("PATTERN SEQ(B* b[], C* c[]) WHERE b.x > 2 WITHIN 10", BCB) == M(((), (1,)), ((2,), ()))
    # sum over no member is NULL: b = () never holds
    assert matches("PATTERN SEQ(B* b[], C* c[]) WHERE sum(b.x) > 0 WITHIN 10", BCB) == M(
        ((0,), (1,)), ((0,), ()), ((2,), ()), ((0, 2), ()))


def test_closure_alone_in_a_nested_or_branch():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    # branch b: b = () (the branch taken, binding nothing beside a) or (1,); branch c: c unbound b
    assert matches("PATTERN SEQ(A a, OR(B* b[], C c)) WITHIN 10", df) == M(
        (0, (), None), (0, (1,), None), (0, None, 2))


def test_kl_closure_in_an_or_branch_under_and():
    df = events("type ts", ("C", 1), ("B", 2))
    # c = C0; branch a: any events but C0, so () or (1,); branch b: B1
    assert matches("PATTERN AND(OR(KL(* a)*, B b), C c) WITHIN 10", df) == M(
        ((), None, 0), ((1,), None, 0), (None, 1, 0))


def test_group_taken_empty_in_an_or_branch():
    one_a = events("type ts", ("A", 1))
    # q = A0; the group's body needs two distinct events besides q: only the empty list; a1 has no event
    q = "PATTERN AND(* q, OR(KL(AND(* c, * a)){0,3}, * a1)) WITHIN UNBOUNDED"
    assert matches(q, one_a) == M((0, (), (), None))
    # `ANY q` (no type list) is the type named ANY (docs/language.md, typespec), which no event has
    q = "PATTERN AND(ANY q, OR(KL(AND(* c, * a)){0,3}, * a1)) WITHIN UNBOUNDED"
    assert matches(q, one_a) == M()


def test_group_and_closure_that_may_both_be_empty():
    df = events("type ts", ("A", 1), ("B", 2), ("C", 3))
    # the group's one iteration (A0, B1) or none; c = () or (2,); not both empty
    assert matches("PATTERN SEQ(KL(SEQ(A a, B b)){0,1}, C* c[]) WITHIN 10", df) == M(
        ((0,), (1,), ()), ((0,), (1,), (2,)), ((), (), (2,)))


def test_negation_between_closures_that_may_be_empty():
    # B0 C1 N2: b = (0,), c = (): N2 after b0 within the window from the first event kills it;
    # with c = (1,), N2 is not between b0 and c1; b = (): N2 is not before c1
    df = events("type ts", ("B", 1), ("C", 2), ("N", 3))
    assert matches("PATTERN SEQ(B* b[], !N n, C* c[]) WITHIN 10", df) == M(((0,), (1,)), ((), (1,)))
    # B0 N1 C2: N1 is after b0, between b0 and c2, and before c2: every match killed
    df = events("type ts", ("B", 1), ("N", 2), ("C", 3))
    assert matches("PATTERN SEQ(B* b[], !N n, C* c[]) WITHIN 10", df) == M()


def test_closures_in_a_top_level_or_branch():
    df = events("type ts", ("B", 1), ("D", 2))
    # branch 1: b = (0,) with c = () (no C); branch 2: d
    assert matches("PATTERN OR(SEQ(B* b[], C* c[]), D d) WITHIN 10", df) == M(
        ((0,), (), None), (None, None, 1))


def test_negation_keeps_its_and_when_the_closures_beside_it_are_empty():
    # A0 C1 B2: n's range lies after a's events and (its AND ancestor, §7) before the match's last event.
    # (a0; b2): C1 between them kills it; (a0; ()): the range ends at a0, empty (a SEQ end would have
    # bounded it by the window instead, and C1 would kill it); ((); b2): starts and ends at b2, empty
    df = events("type ts", ("A", 1), ("C", 2), ("B", 3))
    q = "PATTERN SEQ(A* a[], AND(B* b[], !C n)) WITHIN 10"
    assert matches(q, df) == M(((0,), ()), ((), (2,)))
    # under nondecreasing_ts a C tied with a0 is both after and before it: in the range of (a0; ())
    tied = events("type ts", ("A", 1), ("C", 1))
    assert matches(q, tied) == M(((0,), ()))
    assert matches(q, tied, order="nondecreasing_ts") == M()


# --- under the NFA^b strategies (semantics §8): a run takes its first event at one of the closures ----------

BCC = events("type ts", ("B", 1), ("C", 2), ("C", 3))


def test_closures_that_may_all_be_empty_under_strict_contiguity():
    # a run starting at B0 takes it at b, then C1 (peeking through b to c), then C2, and every proceed
    # point is a match: (0;), (0; 1), (0; 1, 2); runs starting at C1 / C2 pass b empty; b = c = () none
    assert matches("PATTERN SEQ(B* b[], C* c[]) WITHIN 10", BCC, strategy="strict_contiguity") == M(
        ((0,), ()), ((0,), (1,)), ((0,), (1, 2)), ((), (1,)), ((), (1, 2)), ((), (2,)))


def test_closures_that_may_all_be_empty_under_skip_till_next_match():
    # B0 B1 C2: a run starting at B0 takes B1 too (the next relevant event for b); runs at b proceed to
    # c at C2.  The run starting at B1 is its own: (1;) and (1; 2)
    df = events("type ts", ("B", 1), ("B", 2), ("C", 3))
    assert matches("PATTERN SEQ(B* b[], C* c[]) WITHIN 10", df, strategy="skip_till_next_match") == M(
        ((0,), ()), ((0, 1), ()), ((0, 1), (2,)), ((1,), ()), ((1,), (2,)), ((), (2,)))
