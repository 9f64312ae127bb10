"""A closure's range over a record and its expected lists (jitcep/plan/planner/ranges.py, kleene_lists.py).

Expected values are hand-derived closed forms, integrals by the midpoint rule, enumerations of subsets, or
counts over simulated Poisson streams: none comes from the series under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from jitcep.pattern.parser import parse
from jitcep.plan.logical import logical_plan
from jitcep.plan.planner.kleene_lists import lists_per_record
from jitcep.plan.planner.negation_range import none_in_range
from jitcep.plan.planner.ranges import (Chain, Range, before_last, chains, laplace, log_laplace, none_of,
                                        ordered_pairs, range_of, runs, subsets)


def _over(f, j: int, k: int, n: int = 200_000) -> float:
    """``E[f(x)]``, x ~ Beta(j, k - j), by the midpoint rule."""
    x = (np.arange(n) + 0.5) / n
    w = x ** (j - 1) * (1 - x) ** (k - j - 1)
    return float((f(x) * w).sum() / w.sum())


def _poisson(mean, n: int):
    return np.exp(-mean) * mean ** n / math.factorial(n)


@pytest.mark.parametrize("before, after, s, expected", [
    # SEQ(A a, B+ b[], C c) over (a, c): the one gap of the record's two parts (gap, slack)
    (("a",), ("c",), {"a", "c"}, (1, 2)),
    # over (a, c, d), d after c, or (a, d, c), d before a: a to c is one of three parts
    (("a",), ("c", "d"), {"a", "c", "d"}, (1, 3)),
    (("d", "a"), ("c",), {"a", "c", "d"}, (1, 3)),
    # over (a, c, d, e): from c's ... to e's, two inner gaps of four parts
    (("a",), ("d", "e"), {"a", "c", "d", "e"}, (2, 4)),
    # a at an end: from c to a + W, the slack
    (("a", "c"), (), {"a", "c"}, (1, 2)),
    (("a", "d", "c"), (), {"a", "c", "d"}, (1, 3)),
    # the neighbour after not bound: from a over the record's other events to the window's end
    (("a",), ("c",), {"a", "d"}, (2, 2)),
    (("a",), ("c",), {"a", "e", "d"}, (3, 3)),
    (("a",), ("c",), {"a"}, (1, 1)),
    # no neighbour bound: the whole window
    (("a",), ("c",), {"d", "e"}, (1, 1)),
])
def test_a_range_is_its_parts_of_the_records_window(before, after, s, expected):
    R = range_of(before, after, frozenset(s), 10.0)
    assert (R.W, R.j, R.k) == (10.0, *expected)
    j, k = expected
    assert R.mean == pytest.approx(10.0 * (j / k if j < k else 1.0))


@pytest.mark.parametrize("before, after, s, expected", [
    # a negation inside an AND: a side without a neighbour ends at the record's first / last event
    (("a",), (), {"a", "c"}, (1, 2)),  # from a to c, the record's last: its one gap
    ((), ("c",), {"a", "c", "d"}, (2, 3)),  # from the first event to c, the last: two gaps
    ((), (), {"a", "c", "d"}, (2, 3)),  # the record's whole span: two gaps of three parts
    ((), (), {"a"}, None),  # one event: no range
])
def test_a_range_inside_an_and_ends_at_the_records_events(before, after, s, expected):
    R = range_of(before, after, frozenset(s), 10.0, in_conj=True)
    assert (R.W, R.j, R.k) == ((10.0, *expected) if expected else (0.0, 1, 1))


@pytest.mark.parametrize("z", [1e-4, 0.3, 3.0, 12.0])
def test_subsets_sum_the_beta_poisson_moments(z):
    # 1F1(1; 2; z) = (e^z - 1) / z; 1F1(1; 3; z) = 2 (e^z - 1 - z) / z^2; 1F1(2; 3; z) = 2 ((z - 1) e^z + 1) / z^2
    for (j, k), closed in (((1, 2), math.expm1(z) / z), ((1, 3), 2 * (math.expm1(z) - z) / z ** 2),
                           ((2, 3), 2 * ((z - 1) * math.exp(z) + 1) / z ** 2)):
        R = Range(1.0, j, k)
        assert subsets(z, R, 0, None) == pytest.approx(closed, rel=1e-9 if z > 1e-3 else 1e-6)
        assert subsets(z, R, 1, None) == pytest.approx(_over(lambda x: np.expm1(z * x), j, k), rel=1e-6)
        # bounded: E[C(N, 1)] + E[C(N, 2)] = z E[x] + z^2 / 2 E[x^2]
        mean, square = j / k, j * (j + 1) / (k * (k + 1))
        assert subsets(z, R, 1, 2) == pytest.approx(z * mean + z * z / 2 * square)
    # a fixed length (j = k): Poisson alone, e^z; iterations of a 2-event body, n = z x^2
    assert subsets(z, Range(1.0, 3, 3), 0, None) == pytest.approx(math.exp(z))
    assert subsets(z, Range(1.0, 1, 2), 1, None, 2) == pytest.approx(_over(lambda x: np.expm1(z * x * x), 1, 2),
                                                                     rel=1e-6)


def test_subsets_far_out_are_the_leading_term():
    # 1F1(1; 2; z) ~ e^z / z above the series' reach: (e^z - 1) / z within 1/z
    assert subsets(80.0, Range(1.0, 1, 2), 0, None) == pytest.approx(math.expm1(80.0) / 80.0, rel=1e-12)
    assert subsets(5000.0, Range(1.0, 1, 2), 1, None) < math.inf


@pytest.mark.parametrize("t", [0.0, 0.5, 4.0, 30.0, 200.0])
def test_laplace_and_runs_against_the_integrals(t):
    for j, k in ((1, 2), (1, 3), (2, 3), (2, 5)):
        # past ASYMPTOTIC two terms of the expansion, within O(1/t^2)
        assert laplace(t, j, k) == pytest.approx(_over(lambda x: np.exp(-t * x), j, k), rel=1e-4 if t < 60 else 1e-3,
                                                 abs=1e-12)
    assert none_of(t, Range(1.0, 2, 2)) == pytest.approx(math.exp(-t))
    if t <= 30:  # runs of 3 consecutive members among N Poisson of mean t x, x uniform: sum over N
        expected = _over(lambda x: sum(_poisson(t * x, n) * (n - 2) for n in range(3, 120)), 1, 2, 20_000)
        assert runs(t, Range(1.0, 1, 2), 3)[2] == pytest.approx(expected, rel=1e-4, abs=1e-12)


def _anchored_lists_by_enumeration(n: int, p: float) -> float:
    """The expected lists of an anchored closure with n later members in range: the anchor followed by a
    nonempty subset of them (``{2,}``), each member following the one before it (the anchor for the first)
    with chance p: every subset enumerated."""
    return sum(p ** len(S) for L in range(1, n + 1) for S in itertools.combinations(range(n), L))


def test_an_anchored_closures_lists_count_each_link_from_the_anchor():
    # the table: n later members, p = 1/2: 0, 1/2, 5/4, 19/8 -- (1 + p)^n - 1, not ((1 + p)^n - 1) / p (which
    # counts a link less per list, as a closure whose first member is free of the iterative conjunct)
    table = [_anchored_lists_by_enumeration(n, 0.5) for n in range(4)]
    assert table == [0.0, 0.5, 1.25, 2.375]
    assert table == [1.5 ** n - 1 for n in range(4)]
    assert [((1 + 0.5) ** n - 1) / 0.5 for n in range(4)] == [2 * x for x in table]  # the other form: twice
    # the estimate, over records of (c[1], f): the later members in f - c[1] = W x, x uniform, Poisson of
    # mean r W x; with the enumerated table, E[sum_n P(n) table(n)] = E[e^(r W p x)] - 1
    # (members past 12 are too rare to count here)
    [c] = logical_plan(parse("PATTERN SEQ(A a, OR(C{2,} c[], E e), F f) WHERE c[i].x > c[i-1].x WITHIN 10")).closures
    r, W, p = 0.1, 10.0, 0.5
    got = lists_per_record(c, "all", frozenset({"c[1]", "f"}), W, {"c": r}.get, lambda e: p)
    by_table = _over(lambda x: sum(_poisson(r * W * x, n) * _anchored_lists_by_enumeration(n, p) for n in range(12)),
                     1, 2, 20_000)
    assert got == pytest.approx(by_table, rel=1e-6)
    assert got == pytest.approx(math.expm1(r * W * p) / (r * W * p) - 1)
    # C+ (the anchor alone is a list too): one more; {2,3}: one or two later members, E[C(N,1)] p + E[C(N,2)] p^2
    [c] = logical_plan(parse("PATTERN SEQ(A a, OR(C+ c[], E e), F f) WHERE c[i].x > c[i-1].x WITHIN 10")).closures
    assert lists_per_record(c, "all", frozenset({"c[1]", "f"}), W, {"c": r}.get, lambda e: p) == \
        pytest.approx(got + 1)
    [c] = logical_plan(parse("PATTERN SEQ(A a, OR(C{2,3} c[], E e), F f) WHERE c[i].x > c[i-1].x WITHIN 10")).closures
    assert lists_per_record(c, "all", frozenset({"c[1]", "f"}), W, {"c": r}.get, lambda e: p) == \
        pytest.approx(r * W / 2 * p + (r * W) ** 2 / 2 / 3 * p * p)


def _simulated_lists(rate_b: float, W: float, T: float, seed: int) -> tuple[float, int]:
    """Lists per (a, c) record of SEQ(A a, B+ b[], C c) WITHIN W over Poisson streams of rate 1 (A, C) and
    ``rate_b`` (B) on [0, T]: the mean over the records of 2^N - 1, N the Bs strictly between a and c."""
    rng = np.random.default_rng(seed)
    a, c, b = (np.sort(rng.uniform(0, T, rng.poisson(r * T))) for r in (1.0, 1.0, rate_b))
    total, records = 0.0, 0
    for t in a:
        cs = c[(c > t) & (c - t <= W)]
        n = np.searchsorted(b, cs) - np.searchsorted(b, t, side="right")
        total += float(np.sum(np.exp2(n) - 1.0))
        records += len(cs)
    return total / records, records


@pytest.mark.parametrize("rate_b", [0.05, 0.3])
def test_lists_per_record_match_simulated_poisson_streams(rate_b):
    # the members are Poisson given the range, and the range c - a is uniform over the window: a fixed
    # count at the mean range (2^m - 1, m = r W / 2) is far below at r W = 3, 2^1.5 - 1 = 1.83 against 5.36
    W = 10.0
    got, records = _simulated_lists(rate_b, W, 40_000.0, 5)
    [b] = logical_plan(parse("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10")).closures
    estimate = lists_per_record(b, "all", frozenset({"a", "c"}), W, {"b": rate_b}.get, lambda e: 1.0)
    assert records > 300_000
    assert estimate == pytest.approx(got, rel=0.05)
    if rate_b == 0.3:
        assert 2 ** (rate_b * W / 2) - 1 < 0.5 * got


def test_a_negations_survival_matches_simulated_poisson_streams():
    # SEQ(A a, !B n, C c) WITHIN 10: the share of (a, c) records with no B between them, over Poisson streams
    # (rates 1, 1 and rb); c - a is uniform over the window: E[exp(-rb W x)] = (1 - e^(-rb W)) / (rb W).  The
    # gaps-of-mean-W/3 estimate before, 1 / (1 + rb W / 3), is 2.5x this at rb W = 30
    W, T = 10.0, 40_000.0
    for rate_b in (0.05, 3.0):
        rng = np.random.default_rng(9)
        a, c, b = (np.sort(rng.uniform(0, T, rng.poisson(r * T))) for r in (1.0, 1.0, rate_b))
        kept = records = 0
        for t in a:
            cs = c[(c > t) & (c - t <= W)]
            kept += int(np.sum(np.searchsorted(b, cs) == np.searchsorted(b, t, side="right")))
            records += len(cs)
        estimate = none_in_range(rate_b, ("a",), ("c",), False, frozenset({"a", "c"}), W)
        assert estimate == pytest.approx(-math.expm1(-rate_b * W) / (rate_b * W))
        assert estimate == pytest.approx(kept / records, rel=0.05)
    assert 1 / (1 + 3.0 * W / 3) > 2.5 * estimate


@pytest.mark.parametrize("m, j, k", [(0.0, 1, 2), (0.7, 2, 2), (6.0, 1, 2), (40.0, 2, 5), (1000.0, 2, 4), (800.0, 1, 3)])
def test_runs_of_every_length_are_finite_and_match_the_sum_over_n(m, j, k):
    # the runs of L among N Poisson of mean m x over x ~ Beta(j, k - j) (x = 1 where j = k), summed over N
    # at each quadrature point (log-space Poisson terms): finite up to lengths far past the members, as
    # dense closures' bounds {1, 400} ask
    R = Range(1.0, j, k)
    got = runs(m, R, 400)
    assert len(got) == 400 and all(math.isfinite(r) and r >= 0.0 for r in got)
    n = np.arange(int(m + 12 * math.sqrt(m) + 20), dtype=np.float64)
    lgam = np.array([math.lgamma(v + 1) for v in n])

    def at(x, L):
        mu = m * x
        if mu <= 0:
            return 0.0
        return float((np.exp(n * math.log(mu) - mu - lgam) * np.maximum(n - L + 1, 0)).sum())
    for L in (1, 2, 5, 50, 388, 400):
        if j >= k:
            want = at(1.0, L)
        else:
            x = (np.arange(2_000) + 0.5) / 2_000
            w = x ** (j - 1) * (1 - x) ** (k - j - 1)
            want = float(sum(wi * at(xi, L) for xi, wi in zip(x, w)) / w.sum())
        assert got[L - 1] == pytest.approx(want, rel=2e-3, abs=1e-9), L


def _direct(z: float, j: int, k: int, g: int, every: int = 1) -> float:
    """``sum(L) z^L / L! E[x^(g L)] e^-z`` (``every`` = g: ``(g! z)^L E[x^(g L)] / (g L)!``), x ~ Beta(j, k - j),
    each term from log-gammas, summed far past the peak."""
    total = 0.0
    for L in range(int(z + 60 * math.sqrt(z) + 100)):
        n = g * L
        moment = math.lgamma(j + n) - math.lgamma(j) + math.lgamma(k) - math.lgamma(k + n)
        weight = L * math.log(z) - math.lgamma(L + 1) if every == 1 else \
            L * (math.log(z) + math.lgamma(g + 1)) - math.lgamma(n + 1)
        total += math.exp(weight + moment - z)
    return total


@pytest.mark.parametrize("z", [60.5, 100.0, 300.0])
def test_subsets_far_out_of_a_groups_iterations_against_the_direct_sum(z):
    # past ASYMPTOTIC the leading terms of E[x^(gL)] over L ~ Poisson(z): within O(1/z^2) for every g
    # (the g = 1 correction reused for g = 2, 3 was 0.8-6.6% off at z = 60)
    for j, k in ((1, 2), (1, 3), (2, 3), (2, 5)):
        for g in (1, 2, 3):
            got = subsets(z, Range(1.0, j, k), 0, None, g) * math.exp(-z)
            assert got == pytest.approx(_direct(z, j, k, g), rel=4e-3 if z < 100 else 1.5e-3), (j, k, g)


def test_chains_of_a_seq_groups_iterations_by_hand_and_simulated():
    # SEQ(B b, E e) iterations, b and e Poisson of 1.5 and 2 over a fixed range: a chain of L iterations is 2L
    # points in one increasing order, (1.5 * 2)^L / (2L)!; n = 1.5 * 2 / 2! = 1.5 iterations (z)
    assert chains(1.5, Range(1.0, 1, 1), 1, 1, 2) == pytest.approx(3.0 / 2)
    assert chains(1.5, Range(1.0, 1, 1), 2, 2, 2) == pytest.approx(9.0 / 24)
    # unbounded: cosh(sqrt(3)) - 1; over a uniform range (x ~ Beta(1, 2)): sinh(sqrt(3)) / sqrt(3) - 1
    y = math.sqrt(3.0)
    assert chains(1.5, Range(1.0, 1, 1), 1, None, 2) == pytest.approx(math.cosh(y) - 1)
    assert chains(1.5, Range(1.0, 1, 2), 1, None, 2) == pytest.approx(math.sinh(y) / y - 1)
    # every subset of the iterations (subsets) counts more: E[C(N, 2)] = 1.5^2 / 2 against 9 / 24
    assert subsets(1.5, Range(1.0, 1, 1), 2, 2, 2) == pytest.approx(1.125)
    # simulated: b, e Poisson over [0, 1], the chains counted by a pass over the events in time order
    rng = np.random.default_rng(11)
    n, total = 20_000, 0.0
    for _ in range(n):
        ev = sorted([(t, 0) for t in rng.random(rng.poisson(1.5))] + [(t, 1) for t in rng.random(rng.poisson(2.0))])
        ending_b = ending_e = 0.0  # chains ending at a b (open iteration) / at an e (complete)
        for _, kind in ev:
            if kind == 0:
                ending_b += 1.0 + ending_e
            else:
                ending_e += ending_b
        total += ending_e
    assert total / n == pytest.approx(math.cosh(y) - 1, rel=0.04)
    # far out: 1 / g of 1F1(j; k; (g! z)^(1/g)) against the direct sum
    for z in (2000.0, 5000.0):
        got = chains(z, Range(1.0, 1, 2), 0, None, 2) * math.exp(-z)
        assert got == pytest.approx(_direct(z, 1, 2, 2, every=2), rel=1e-3)


def _fixed(f, n: int = 4000) -> float:
    """``int_0^1 f(t) dt`` by the midpoint rule."""
    t = (np.arange(n) + 0.5) / n
    return float(f(t).mean())


def test_ordered_pairs_of_adjacent_constructs_by_hand():
    # two closures at growths u = v = 2 over a fixed range: pairs with every e after every b, sum(n >= 2)
    # (n - 1) 2^n / n! = 2 e^2 - e^2 + 1; b{1,1} e{1,1}: u v / 2! = 2; at u = 1, v = 3, iterative
    # conjuncts of 1/2 on e: each e list has a link fewer than members, divided once by 1/2
    fixed = Range(1.0, 1, 1)
    b, e = Chain(2.0, 1, 1, None), Chain(2.0, 1, 1, None)
    assert ordered_pairs(b, e, fixed) == pytest.approx(math.exp(2.0) + 1)
    assert ordered_pairs(Chain(2.0, 1, 1, 1), Chain(2.0, 1, 1, 1), fixed) == pytest.approx(2.0)
    pairs = _fixed(lambda t: np.exp(t) * np.expm1(1.5 * (1 - t))) / 0.5  # b lists ending at t: 1 e^(1 t) dt
    assert ordered_pairs(Chain(1.0, 1, 1, None), Chain(1.5, 1, 1, None, 0.5), fixed) == pytest.approx(pairs, rel=1e-6)
    # b* (the empty list too: e over the whole range) and e* (b alone): every (A, B) but (0, 0) plus it
    assert ordered_pairs(Chain(2.0, 1, 0, None), Chain(2.0, 1, 0, None), fixed) == \
        pytest.approx(math.exp(2.0) + 1 + 2 * math.expm1(2.0) + 1)
    # over a uniform range: u = v = 2x, int_0^1 (2x e^(2x) - e^(2x) + 1) dx = (e^2 + 1) / 2 - (e^2 - 1) / 2 + 1
    assert ordered_pairs(b, e, Range(1.0, 1, 2)) == pytest.approx(2.0)
    # far out (past PAIR_TERMS terms): the closed form, against the integral at a fixed length
    u, v = 300.0, 200.0
    exact = (v * math.expm1(u) - u * math.expm1(v)) / (u - v)
    assert ordered_pairs(Chain(u, 1, 1, None), Chain(v, 1, 1, None), fixed) == pytest.approx(exact, rel=1e-9)
    # a closure then a SEQ group of two events at 1.5 and 2 (chains as above): b lists ending at t, the
    # group's chains over the rest of the range, cosh(sqrt(3) (1 - t)) - 1
    pairs = _fixed(lambda t: 0.7 * np.exp(0.7 * t) * (np.cosh(math.sqrt(3.0) * (1 - t)) - 1))
    assert ordered_pairs(Chain(0.7, 1, 1, None), Chain(3.0, 2, 1, None), fixed) == pytest.approx(pairs, rel=1e-6)


@pytest.mark.parametrize("v", [0.4, 3.0, 45.0])
def test_before_last_keeps_the_lists_a_candidate_follows(v):
    # b's lists ending at t (u e^(u t) dt) times the chance of a candidate of rate v after t, 1 - e^(-v (1 - t))
    for u, j, k in ((2.0, 1, 1), (0.05, 1, 2), (6.0, 1, 3)):
        def kept(x):
            x = np.asarray(x)[:, None] if np.ndim(x) else x
            t = (np.arange(4000) + 0.5) / 4000
            return (u * x * np.exp(u * x * t) * -np.expm1(-v * x * (1 - t))).mean(axis=-1)
        expected = kept(1.0) if j == k else _over(kept, j, k, 4000)
        assert before_last(Chain(u, 1, 1, None), v, Range(1.0, j, k)) == pytest.approx(expected, rel=1e-5), (u, j, k)
    # b{1,3}: a list ending at t holds at most 2 earlier members, u e^(u t) cut to 1 + u t + (u t)^2 / 2
    t = (np.arange(4000) + 0.5) / 4000
    expected = float((2.0 * (1 + 2.0 * t + 2.0 * t * t) * -np.expm1(-v * (1 - t))).mean())
    if v <= 20:
        assert before_last(Chain(2.0, 1, 1, 3), v, Range(1.0, 1, 1)) == pytest.approx(expected, rel=1e-5)
    else:  # an alternating sum past its reach: the caller keeps every list
        assert before_last(Chain(2.0, 1, 1, 3), v, Range(1.0, 1, 1)) is None
    # at u = v over a uniform range: sinh(v) / v - 1 (hand-integrated)
    assert before_last(Chain(v, 1, 1, None), v, Range(1.0, 1, 2)) == pytest.approx(math.sinh(v) / v - 1, rel=1e-6)


@pytest.mark.parametrize("text", ["PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c) WITHIN 10",
                                  "PATTERN SEQ(A a, KL(AND(B b, E e)){1,3}, C c) WITHIN 10",
                                  "PATTERN SEQ(A a, KL(SEQ(E e, B b))+, C c) WITHIN 10"])
def test_a_group_with_a_variable_that_never_occurs_has_no_iterations_whatever_the_others_rates(text):
    # b's rate times a window of 1e9 overflows to inf; e never occurs: no iteration, not inf * 0 = NaN (a NaN
    # count made the unbounded group's series in ranges.subsets loop for ever: a query planned on these
    # user statistics hung)
    from jitcep.plan.planner.kleene_lists import group_lists_per_record, iterations
    [g] = logical_plan(parse(text)).groups
    s, rate, sel = frozenset({"a", "c"}), {"b": 1e300, "e": 0.0}.get, lambda e: 0.5
    n, *_ = iterations(g, g.before, s, 1e9, rate, sel)
    assert n == 0.0
    assert group_lists_per_record(g, s, 1e9, rate, sel) == 0.0


def test_a_nan_argument_ends_the_series():
    # NaN compares false everywhere: the series' stopping test never held (a hang), whatever made the NaN
    for hi in (None, 3):
        assert subsets(float("nan"), Range(10.0, 1, 2), 1, hi) == 0.0
        assert subsets(float("nan"), Range(10.0, 1, 2), 0, hi) == 1.0


def test_a_group_planned_on_a_zero_rate_beside_an_overflowing_one_finds_the_reference_matches():
    import polars as pl
    import jitcep
    df = pl.DataFrame({"type": list("ABEBECD"), "ts": [0, 1, 2, 3, 4, 5, 6]})
    stats = {"rates": {"b": 1e300, "e": 0.0}}
    for planner in ("dp_bushy", "greedy", "auto"):
        q = jitcep.compile("PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c, D d) WITHIN 1000000000", planner=planner)
        assert "kleene group" in q.explain(df, type="type", statistics=stats)  # planned, not hung
        assert q.run(df, type="type", statistics=stats).equals(q.run(df, type="type", engine="reference"))


@pytest.mark.parametrize("hi", [5_000, 10**9])
def test_a_maximal_closures_runs_are_asked_only_up_to_the_longest_its_members_reach(hi, monkeypatch):
    # runs longer than m + 10 sqrt(m) + 10 members are 0: a bound of 10^9 must not ask for (and list) 10^9 of
    # them (a planner hung on, then ran out of memory for, SEQ(A a, B{1,1000000000} b[], C c) under maximal)
    from jitcep.plan.planner import kleene_lists
    asked = []

    def spy(m, R, most):
        asked.append(most)
        assert most <= 2_000, most
        return runs(m, R, most)
    monkeypatch.setattr(kleene_lists, "runs", spy)
    [c] = logical_plan(parse(f"PATTERN SEQ(A a, B{{1,{hi}}} b[], C c) WITHIN 10")).closures
    rates = {"b": 5.0}.get  # m = 50 over the window
    got = lists_per_record(c, "maximal", frozenset({"a", "c"}), 10.0, rates, lambda e: 0.5)
    assert asked
    # every run of 1..N of N members (no bound reached): N (N + 1) / 2; N Poisson of mean m x, x uniform
    # (the range between a and c): E[(m x)^2 / 2 + m x] = m^2 / 6 + m / 2
    assert got == pytest.approx(50.0 ** 2 / 6 + 25.0, rel=1e-6)


@pytest.mark.parametrize("m", [1.0, 10.0, 50.0, 60.0, 61.0, 100.0, 300.0, 1000.0, 5000.0])
def test_runs_summed_over_their_lengths_are_the_pairs_of_members(m):
    # over a uniform range with no bound reached, sum(L) max(N - L + 1, 0) = N (N + 1) / 2 and N is Poisson of
    # mean m x, x uniform: E[N^2 + N] / 2 = (m^2 / 3 + 2 m / 2) / 2 = m^2 / 6 + m / 2
    got = runs(m, Range(1.0, 1, 2), int(m + 12 * math.sqrt(m) + 20))
    assert sum(got) == pytest.approx(m * m / 6 + m / 2, rel=1e-6)


def _pairs_by_quadrature(m: float, j: int, k: int) -> float:
    """``E[N (N + 1) / 2]``, N Poisson of mean m x, x ~ Beta(j, k - j), by the midpoint rule: each x's
    Poisson terms in log space, summed over N."""
    n = np.arange(int(m + 12 * math.sqrt(m) + 20), dtype=np.float64)
    lgam = np.array([math.lgamma(v + 1) for v in n])
    x = (np.arange(4_000) + 0.5) / 4_000
    w = x ** (j - 1) * (1 - x) ** (k - j - 1)
    per_x = [float((np.exp(n * math.log(m * xi) - m * xi - lgam) * n * (n + 1) / 2).sum()) for xi in x]
    return float(np.dot(per_x, w) / w.sum())


@pytest.mark.parametrize("m", [10.0, 100.0, 1000.0])
@pytest.mark.parametrize("j, k", [(1, 3), (2, 3)])
def test_runs_summed_over_their_lengths_on_a_non_uniform_range(m, j, k):
    got = runs(m, Range(1.0, j, k), int(m + 12 * math.sqrt(m) + 20))
    assert sum(got) == pytest.approx(_pairs_by_quadrature(m, j, k), rel=1e-4)


def _log_laplace_by_quadrature(t: float, a: int, b: int, n: int = 400_000) -> float:
    """``log E[exp(-t x)]``, x ~ Beta(a, b - a), by the midpoint rule on log-space weights (``x^(a - 1)`` and
    ``e^(-t x)`` each under- or overflow alone at a ~ t ~ 1000)."""
    x = (np.arange(n) + 0.5) / n
    log_w = (a - 1) * np.log(x) + (b - a - 1) * np.log1p(-x)
    log_f = log_w - t * x
    top, top_f = log_w.max(), log_f.max()
    return float(top_f + np.log(np.exp(log_f - top_f).sum()) - top - np.log(np.exp(log_w - top).sum()))


@pytest.mark.parametrize("t", [61.0, 100.0, 1000.0, 20_000.0])
@pytest.mark.parametrize("shift", [-30, -5, 0, 5, 30])
@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_laplace_with_parameters_near_its_argument(t, shift, d):
    # runs asks 1F1(j + n; k + n; -m) for n up to past m: a ~ t, where t^-a alone is not the transform (and
    # the transform is below a float's range: compared in log space)
    a = max(int(t) + shift, 1)
    want = _log_laplace_by_quadrature(t, a, a + d)
    assert log_laplace(t, a, a + d) == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert laplace(t, a, a + d) == pytest.approx(math.exp(want), rel=1e-5, abs=1e-300)


@pytest.mark.parametrize("t", [61.0, 150.0, 1000.0, 5000.0])
@pytest.mark.parametrize("a, b", [(1, 2), (1, 3), (2, 5), (3, 14), (40, 44)])
def test_laplace_of_small_parameters_far_out(t, a, b):
    want = _log_laplace_by_quadrature(t, a, b, 2_000_000 if t > 1000 else 400_000)
    assert log_laplace(t, a, b) == pytest.approx(want, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("z", [61.0, 150.0, 400.0])
@pytest.mark.parametrize("j, k, g", [(7, 15, 1), (4, 12, 1), (3, 9, 2)])
def test_subsets_far_out_with_wide_ranges_against_the_direct_sum(z, j, k, g):
    # 1F1(j; k; z)'s two-term expansion is off by ~ (j (k - j))^2 / (2 z^2): 30% at j = 7, k = 15, z = 61
    want = _direct(z, j, k, g)
    assert subsets(z, Range(1.0, j, k), 0, None, g) * math.exp(-z) == pytest.approx(want, rel=1e-6)


def test_chains_and_pairs_take_nan_growth_as_none_and_bound_the_exponent_not_z():
    # NaN (an inf * 0 upstream) would keep a series summed to its peak going forever: taken as no growth
    assert chains(math.nan, Range(1.0, 1, 3), 1, None, 2) == 0.0
    assert ordered_pairs(Chain(math.nan, 1, 1, None), Chain(2.0, 1, 1, None), Range(1.0, 1, 2)) is not None
    # a fixed range (every moment 1): sum (2 z)^L / (2 L)! = cosh(sqrt(2 z)); z = 5000 gives cosh(100) ~ 1.3e43,
    # which a cap on z at 700 (e^sqrt(1400) ~ 1.3e16 at most) could never reach
    assert chains(5000.0, Range(1.0, 1, 1), 0, None, 2) == pytest.approx(math.cosh(100.0), rel=1e-6)
    assert math.isfinite(chains(math.inf, Range(1.0, 1, 1), 0, None, 2))


@pytest.mark.parametrize("v", [1e300, 1.7e308, math.inf])
def test_before_last_of_a_later_closure_past_a_floats_range_keeps_every_list(v):
    # the later closure's candidates over the window, its rate times the window, overflow (a user rate of
    # 1e300 beside WITHIN 1000000000): a candidate follows every list's last member, so every list is kept.
    # b's nonempty lists over x ~ Beta(1, 2), u = 5: E[e^(5x)] - 1 = 2 (-1/5 + (e^5 - 1) / 25) - 1 (hand-integrated)
    every = 2.0 * (-0.2 + math.expm1(5.0) / 25.0) - 1.0
    assert before_last(Chain(5.0, 1, 1, None), v, Range(1.0, 1, 3)) == pytest.approx(every, rel=1e-9)
    # b* b[]: the empty list too, kept since a candidate lies in the range
    assert before_last(Chain(5.0, 1, 0, None), v, Range(1.0, 1, 3)) == pytest.approx(every + 1.0, rel=1e-9)


def test_adjacent_closures_planned_on_an_overflowing_later_rate_have_finite_estimates():
    # c's rate 1e300 times the window 1e9 is inf: b's kept lists were (inf * S - u) / (u + inf) = NaN, an est_rows
    # of nan on both collections in the plan (the matches were right)
    import polars as pl
    import jitcep
    df = pl.DataFrame({"type": list("ABCBCDABCCD"), "ts": list(range(11))})
    stats = {"rates": {"c": 1e300}}
    for text in ("PATTERN SEQ(A a, B+ b[], C+ c[], D d) WITHIN 1000000000",
                 "PATTERN SEQ(A a, B* b[], C+ c[]) WITHIN 1000000000"):
        for planner in ("dp_bushy", "greedy"):
            q = jitcep.compile(text, planner=planner)
            plan = q.explain(df, type="type", statistics=stats, format="dict")
            rows = [n["est_rows"] for n in _walk(plan)]
            assert rows and not any(math.isnan(r) for r in rows), (text, planner, rows)
            assert q.run(df, type="type", statistics=stats).equals(q.run(df, type="type", engine="reference"))


def _walk(node):
    """Every operator of an explain dict below its root (which carries no estimate)."""
    for child in node.get("children", ()):
        yield child
        yield from _walk(child)


def test_before_last_of_a_later_closure_with_a_tiny_rate_keeps_few_lists_and_no_nan():
    # a candidate of rate v follows a list ending at t with chance 1 - e^(-v (1 - t)) ~ v (1 - t): over a fixed
    # range the kept lists are v * integral((1 - t) u e^(u t)) = v ((e^u - 1) / u - 1) (hand-integrated); at a
    # denormal v the closed form's u / v overflowed, inf * 0 = NaN
    u = 12.0
    kept = before_last(Chain(u, 1, 1, None), 1e-300, Range(1.0, 1, 1))
    assert kept == pytest.approx(1e-300 * (math.expm1(u) / u - 1.0), rel=1e-3)
    for v in (1e-310, 6e-323, 5e-324):
        kept = before_last(Chain(u, 1, 1, None), v, Range(1.0, 1, 1))
        assert math.isfinite(kept) and 0.0 <= kept <= 1e-300, (v, kept)


def test_ordered_share_of_growths_past_exp_range_is_a_share():
    # math.expm1 raises OverflowError past ~709 (a closure's growth is capped at 1000, not there)
    from jitcep.plan.planner.adjacent_lists import ordered_share
    for u, v in ((1000.0, 5.0), (5.0, 1000.0), (1000.0, 1000.0), (710.0, 0.5)):
        share = ordered_share(u, v)
        assert 0.0 <= share <= 1.0, (u, v, share)


@pytest.mark.parametrize("rate_c", [1e-300, 1e-310, 5e-324])
def test_adjacent_closures_planned_on_a_tiny_later_rate_have_finite_estimates(rate_c):
    # b's kept lists and c's lists are each tiny, their product underflows to 0: pairs / (before * lists) was a
    # ZeroDivisionError in planning (explain and run), or at a denormal rate a NaN est_rows
    import polars as pl
    import jitcep
    df = pl.DataFrame({"type": list("ABCBCDABCCD"), "ts": list(range(11))})
    stats = {"rates": {"a": 1e10, "b": 1.0, "c": rate_c}}
    for text in ("PATTERN SEQ(A a, B+ b[], C{1,5} c[]) WITHIN UNBOUNDED",
                 "PATTERN SEQ(A a, B+ b[], C+ c[], D d) WITHIN 12"):
        for planner in ("dp_bushy", "greedy"):
            q = jitcep.compile(text, planner=planner)
            rows = [n["est_rows"] for n in _walk(q.explain(df, type="type", statistics=stats, format="dict"))]
            assert rows and not any(math.isnan(r) for r in rows), (text, planner, rows)
            assert q.run(df, type="type", statistics=stats).equals(q.run(df, type="type", engine="reference"))
