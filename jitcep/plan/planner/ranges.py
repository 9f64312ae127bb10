"""A closure's range in a record, and its members' expected subsets over it (ZStream 4.4.5, Kolchinsky 4).

A Kleene closure (or group) collected over a record of k events of the
variables ``s`` makes its lists from the members that fall in its range: the
stretch between its nearest neighbours among the record's events, or between
a neighbour and the window's edge where ``s`` holds none on that side.  Its
expected lists are ``E[f(N)]`` over the members N in the range (``2^N - 1``
under ``kleene="all"``), and N varies from record to record in two ways:

- given the range's length ``len``, the members are a Poisson process:
  ``N ~ Poisson(rho * len)`` (``rho`` the closure's rate times its member-wise
  selectivity).  Taking N fixed at its mean, as ``2^m`` lists, is below
  ``E[2^N] = e^m`` by ``(e / 2)^m``;
- the length itself varies.  With every variable a Poisson process, the
  records of k events whose span fits the window W are spread uniformly over
  their k - 1 inner gaps (``sum <= W``): the count of k-tuples at gaps
  ``g_1 .. g_(k-1)`` is ``T * prod(r) * dg``, the same at every gap vector.
  With the slack ``W - span`` as a k-th part, the k parts are a flat
  Dirichlet, so a range of j of them (the inner gaps between the neighbours,
  plus the slack where a side is open) has length ``W * x``,
  ``x ~ Beta(j, k - j)``, of mean ``j W / k`` (``j = k``: the whole window).
  Evaluating f at the mean length is below the mean of f by Jensen's
  inequality, for f as convex as ``e^(rho len)``.

Both together are exact in closed form through the moments of the Beta,
``E[x^n] = prod(i < n) (j + i) / (k + i)``: the expected subsets of L members
are ``E[C(N, L)] = E[(rho W x)^L] / L! = m^L / L! * E[x^L]`` (``m = rho W``,
Poisson factorial moments), so the lists of every bound ``{lo, hi}`` are
sums of these (:func:`subsets`), ``1F1(j; k; m)`` summed to infinity.  A Kleene
group's iterations are matches of its body of g events, ``n(x) = n_W x^g`` in
a range of ``W x``: a SEQ body's lists are chains of them, each after the one
before (:func:`chains`), an AND body's every subset of them taken as Poisson
given the range like a closure's members, the same sums with ``E[x^(g L)]``.
Two adjacent constructs' lists are counted together, in order, over one
range (:func:`ordered_pairs`, :func:`before_last`).  A negation's range is read the same way:
no negated event in it with chance ``E[exp(-r W x)]`` (:func:`none_of`).
docs/planning.md ("How many lists a closure makes") checks this against
measured lists.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

ASYMPTOTIC = 60.0
"""Above this argument (and far past the Beta's parameters) an unbounded sum is its leading asymptotic term
(``e^60`` lists per record price any plan out; the relative error is O(1/z)), and ``e^(-t)`` mixtures likewise."""
_TOP = 700.0  # e^700 is still a float
_FAR = 25.0  # z past this times j (k - j): 1F1(j; k; z)'s next term, ~ (j (k - j))^2 / (2 z^2), below 1e-3
_TINY = 1e-12  # a sum stops where its term is this share of it: an estimate, not a special function


class Range(NamedTuple):
    """The length of a range in a record: ``W * x``, ``x ~ Beta(j, k - j)``; ``j >= k``: ``W`` exactly."""

    W: float
    j: int
    k: int

    def moment(self, n: int) -> float:
        """``E[x^n]``."""
        out = 1.0
        if self.j < self.k:
            for i in range(n):
                out *= (self.j + i) / (self.k + i)
        return out

    @property
    def mean(self) -> float:
        return self.W * self.moment(1)


def range_of(before, after, s: frozenset, W: float, in_conj: bool = False) -> Range:
    """The range of a closure, group or negation whose neighbours are the variables ``before`` / ``after``
    in a record of the variables ``s`` (module docstring): the inner gaps between the last neighbour
    before and the first one after among the record's events, one part more (the slack) where ``s``
    holds none on a side, the whole window where it holds none on either; ``in_conj``: a side without a
    neighbour ends at the record's first / last event instead (a negation inside an AND, docs/semantics.md
    section 7), no slack."""
    k = len(s)
    b = sum(1 for v in before if v in s)
    a = sum(1 for v in after if v in s)
    if not k or not a and not b and not in_conj:
        return Range(W, 1, 1)
    first = b if b else 1  # the record's events in time order, 1-based: where the range starts / ends
    last = k - a + 1 if a else k
    j = last - first + (0 if a and b or in_conj else 1)
    if j <= 0:
        return Range(0.0, 1, 1)
    return Range(W, min(j, k), k)


def _capped(z: float, floor: float = 0.0) -> float:
    """``z`` within ``[floor, _TOP]`` (past it ``e^z`` is no float); NaN, from an ``inf * 0`` upstream, as 0:
    a series summed to its peak would never end on it."""
    if z != z:
        return 0.0
    return min(max(z, floor), _TOP)


def subsets(z: float, R: Range, lo: int, hi: int | None, g: int = 1) -> float:
    """``sum(L = lo .. hi) z^L / L! * E[x^(g L)]`` over ``R``'s x (``hi`` None: to infinity): with ``z = m y``,
    the expected ``sum C(N, L) y^L`` of N members Poisson of mean ``m x^g`` (module docstring)."""
    z = _capped(z)
    if hi is None and z > ASYMPTOTIC and (R.j >= R.k or z > _FAR * R.j * (R.k - R.j)):
        if R.j >= R.k:
            return math.exp(z)
        # E[x^(g L)] = Gamma(k) / Gamma(j) (g L)^a (1 + a (j + k - 1) / (2 g L)), a = j - k, and over L ~
        # Poisson(z) E[L^a] = z^a (1 + a (a - 1) / (2 z)): the sum is e^z times their product, to O(1/z^2)
        # (g = 1: 1F1(j; k; z)'s own expansion, (k - j)(1 - j) / z)
        a = R.j - R.k
        lead = math.exp(z + math.lgamma(R.k) - math.lgamma(R.j) + a * math.log(g * z))
        return lead * (1.0 + a * ((a - 1) + (R.j + R.k - 1) / g) / (2.0 * z))
    if hi is not None and hi < lo:
        return 0.0
    j, k = (R.j, R.k) if R.j < R.k else (1, 1)  # j = k: every moment 1
    if g == 1:
        return _series(lo, hi, z, lambda L: z * (j + L - 1) / (L * (k + L - 1)))
    return _series(lo, hi, z, lambda L: z / L * math.prod((j + i) / (k + i) for i in range(g * (L - 1), g * L)))


def _series(lo: int, hi: int | None, peak: float, ratio) -> float:
    """``sum(L = lo .. hi) t_L`` with ``t_0 = 1`` and ``t_L = t_(L-1) ratio(L)``: up to ``hi``, or (``hi`` None)
    until past ``peak`` a term is below :data:`_TINY` of the sum; a term that underflowed to 0 ends it."""
    total, term, L = 0.0, 1.0, 0
    while True:
        if L >= lo:
            total += term
            if L >= hi if hi is not None else L > peak and term <= _TINY * total:
                return total
        L += 1
        term *= ratio(L)
        if term == 0.0:
            return total


def laplace(t: float, a: int, b: int) -> float:
    """``E[exp(-t x)]`` for ``x ~ Beta(a, b - a)`` (``1F1(a; b; -t)``, ``t >= 0``; :func:`log_laplace`)."""
    return math.exp(log_laplace(t, a, b))


def log_laplace(t: float, a: int, b: int) -> float:
    """``log E[exp(-t x)]`` for ``x ~ Beta(a, b - a)`` (``log 1F1(a; b; -t)``, ``t >= 0``); ``a >= b``: ``-t``.
    :func:`log_laplaces` at one ``a``."""
    if a >= b or t <= 0.0:
        return -max(t, 0.0)
    return float(log_laplaces(t, np.array([a]), b - a)[0])


def log_laplaces(t: float, a: np.ndarray, d: int) -> np.ndarray:
    """``log E[exp(-t x)]`` for ``x ~ Beta(a, d)`` at each of the integers ``a >= 1`` (``d >= 1``, ``t > 0``).

    Up to :data:`ASYMPTOTIC` Kummer's ``e^(-t) 1F1(d; a + d; t)``, a sum of positive terms.  Far out (t past
    ``b = a + d`` by many of its standard deviations: the mass of ``x^(a - 1) e^(-t x)`` beyond x = 1
    negligible) the asymptotic series ``Gamma(b) / Gamma(d) t^-a sum(s < d) (a)_s (1 - d)_s / (s! t^s)``,
    which ends after d terms for an integer d, so exact there, taken where its alternating terms do not
    cancel.  Between (``a`` near ``t``, as :func:`runs` asks), a quadrature of the log-concave integrand."""
    out = np.empty(len(a))
    rest = np.zeros(len(a), dtype=bool)
    for i, ai in enumerate(a.tolist()):
        b = ai + d
        if t <= ASYMPTOTIC:
            out[i] = -t + math.log(subsets(t, Range(1.0, d, b), 0, None))
            continue
        if t >= b + 12.0 * math.sqrt(b) + 30.0:
            total, size, term = 0.0, 0.0, 1.0
            for s in range(d):
                total, size = total + term, size + abs(term)
                term *= -(d - 1 - s) / (s + 1) * (ai + s) / t
            if total > 1e-8 * size:
                out[i] = math.lgamma(b) - math.lgamma(d) - ai * math.log(t) + math.log(total)
                continue
        rest[i] = True
    if rest.any():
        ar = a[rest].astype(np.float64)
        lg = np.array([math.lgamma(v + d) - math.lgamma(v) - math.lgamma(d) for v in ar.tolist()])
        out[rest] = _log_integrals(t, ar, d) + lg
    return out


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)
_DROP = 60.0  # the integrand's log falls this far from its peak at the quadrature's ends: e^-60 of it left


def _phi(x: np.ndarray, t: float, a: np.ndarray, d: int) -> np.ndarray:
    """``log(x^(a - 1) (1 - x)^(d - 1) e^(-t x))``, ``0 <= x <= 1`` (``0 log 0`` as 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(a > 1, (a - 1) * np.log(x), 0.0)
        right = (d - 1) * np.log1p(-x) if d > 1 else 0.0
    return left + right - t * x


def _log_integrals(t: float, a: np.ndarray, d: int) -> np.ndarray:
    """``log int(0..1) x^(a - 1) (1 - x)^(d - 1) e^(-t x) dx`` at each ``a`` by Gauss-Legendre on each side of
    the integrand's peak, out to where its log has fallen by :data:`_DROP` (the log is concave: found by
    doubling from the peak's width)."""
    c = t + a + d - 2.0  # the peak: the smaller root of t x^2 - c x + (a - 1), in [0, 1]
    peak = np.minimum(2.0 * (a - 1) / (c + np.sqrt(np.maximum(c * c - 4.0 * t * (a - 1), 0.0))), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        curve = np.where(peak > 0.0, (a - 1) / np.maximum(peak, 1e-300) ** 2, 0.0)
        curve = curve + np.where(peak < 1.0, (d - 1) / np.maximum(1.0 - peak, 1e-300) ** 2, 0.0)
        width = np.minimum(np.where(curve > 0.0, 1.0 / np.sqrt(curve), 1.0), 1.0 / t)  # 1 / t: a peak at an end
    top = _phi(peak, t, a, d)
    total = np.full(len(a), -np.inf)
    for side in (-1.0, 1.0):
        step, open_ = width.copy(), np.ones(len(a), dtype=bool)
        end = peak.copy()
        for _ in range(80):
            end = np.where(open_, np.clip(peak + side * step, 0.0, 1.0), end)
            open_ &= (end > 0.0) & (end < 1.0) & (_phi(end, t, a, d) >= top - _DROP)
            if not open_.any():
                break
            step = np.where(open_, 2.0 * step, step)
        lo, hi = (end, peak) if side < 0 else (peak, end)
        half = 0.5 * (hi - lo)
        x = half[:, None] * _NODES + (0.5 * (hi + lo))[:, None]
        f = _phi(x, t, a[:, None], d) - top[:, None]
        with np.errstate(divide="ignore"):
            part = top + np.log(np.exp(f) @ _WEIGHTS * half)
        total = np.logaddexp(total, part)
    return total


def none_of(t: float, R: Range) -> float:
    """The chance that a Poisson process of mean ``t x`` over ``R`` has no point: ``E[exp(-t x)]``."""
    return laplace(t, R.j, R.k)


def longest_run(m: float) -> int:
    """The longest run :func:`runs` counts for members Poisson of mean at most ``m`` (``m + 10 sqrt(m) + 10``):
    past it a run is all but impossible, and its entry 0."""
    return int(m + 10.0 * math.sqrt(m) + 10.0) if m > 0.0 else 0


def runs(m: float, R: Range, hi: int) -> list[float]:
    """``[E[max(N - L + 1, 0)] for L = 1 .. hi]``, N Poisson of mean ``m x`` over ``R``: the runs of L
    consecutive members (``kleene="maximal"`` under bounds), ``E[N] - (L - 1) + sum(n < L - 1) (L - 1 - n)
    P(N = n)`` with ``P(N = n) = m^n / n! E[x^n e^(-m x)] = m^n / n! E[x^n] 1F1(j + n; k + n; -m)``.

    One pass over L with running sums of ``P(N = n)`` and ``n P(N = n)``, each in log space (``m^n / n!``
    overflows a float from n ~ 170 at m = 1000 while its factor ``1F1`` underflows); past
    :func:`longest_run` members (N <= Poisson(m): x <= 1) a run of L is all but impossible, 0."""
    out = [0.0] * max(hi, 0)
    if m <= 0.0:
        return out
    top = min(hi, longest_run(m))
    mean, log_m, log_moment = m * R.moment(1), math.log(m), 0.0
    tails = log_laplaces(m, R.j + np.arange(top), R.k - R.j).tolist() if R.j < R.k else [-m] * top
    below = below_n = 0.0  # sum(n < L - 1) P(N = n), and of n P(N = n)
    for L in range(1, top + 1):
        out[L - 1] = max(mean - (L - 1) + (L - 1) * below - below_n, 0.0)
        n = L - 1  # P(N = n) enters the sums of L + 1
        p_n = math.exp(n * log_m - math.lgamma(n + 1) + log_moment + tails[n])
        below, below_n = below + p_n, below_n + n * p_n
        if R.j < R.k:
            log_moment += math.log((R.j + n) / (R.k + n))
    return out


def _step(n: int, g: int, j: int, k: int) -> float:
    """``E[x^(n + g)] / (n + g)! / (E[x^n] / n!)``: the factor from one exponent to the next one ``g`` on."""
    if g == 1:
        return (j + n) / ((k + n) * (n + 1))
    out = 1.0
    for i in range(n, n + g):
        out *= (j + i) / ((k + i) * (i + 1))
    return out


def chains(z: float, R: Range, lo: int, hi: int | None, g: int) -> float:
    """``sum(L = lo .. hi) (g! z)^L E[x^(g L)] / (g L)!`` over ``R``'s x: with ``z`` a SEQ body's matches of
    g events over the whole window (each of its events a Poisson process, ``n_W = prod(r W) / g!``), the
    expected chains of L of them in a range of ``W x`` each wholly after the one before (semantics section 6,
    "Iteration order"): ``(g! n_W x^g)^L / (g L)!``, the gL events of a chain being one increasing sequence.
    (:func:`subsets` counts every set of L matches, ``n_W^L x^(g L) / L!``: ``(g L)! / (g!^L L!)`` times as
    many, 3 at L = 2 and 15 at L = 3 for g = 2.)  g = 1 is :func:`subsets`.  Far out the sum over the
    exponents that are multiples of g is ``1 / g`` of the sum over all of them, ``1F1(j; k; (g! z)^(1/g))``,
    the other g-th roots of unity adding terms of at most ``e^(y cos(2 pi / g))``."""
    if g == 1:
        return subsets(z, R, lo, hi)
    # the lists grow as e^y: y is what a float bounds, not z (at g = 2 a z capped at 700 stopped them near 1e13)
    y = _capped(math.exp((math.log(math.factorial(g)) + math.log(z)) / g)) if z > 0.0 else 0.0
    if hi is None and y > ASYMPTOTIC:
        return subsets(y, R, 0, None) / g
    if hi is not None and hi < lo:
        return 0.0
    j, k = (R.j, R.k) if R.j < R.k else (1, 1)
    w = y ** g  # g! z
    return _series(lo, hi, y, lambda L: w * _step(g * (L - 1), g, j, k))


class Chain(NamedTuple):
    """One of two adjacent constructs in a range, for :func:`ordered_pairs`: ``w`` its growth over the whole
    window (a closure's members ``m p q``, a SEQ group's ``g! n p q``), ``g`` the events of an iteration,
    ``lo`` / ``hi`` its bounds, ``p`` its iterative conjuncts' selectivity (a nonempty list has one link
    fewer than members: divided once)."""

    w: float
    g: int
    lo: int
    hi: int | None
    p: float = 1.0


PAIR_TERMS = 4000
""":func:`ordered_pairs` sums at most this many terms (a few ms): beyond, the caller's cruder estimate."""
_PAIR_TINY = 1e-9  # a double sum stops at this share: an estimate, its series short
_LONG = 1.0  # a growth past which the closed form replaces the series (its cancellation is in u v there)


def alone(K: Chain, R: Range) -> float:
    """The lists of ``K`` alone in a range over ``R`` (:func:`ordered_pairs` with an empty other side)."""
    return chains(K.w / math.factorial(K.g), R, max(K.lo, 1), K.hi, K.g) / K.p + (1.0 if K.lo == 0 else 0.0)


def ordered_pairs(first: Chain, second: Chain, R: Range) -> float | None:
    """The expected pairs (list of ``first``, list of ``second``) in a range over ``R`` with every event of the
    second after every event of the first (adjacent constructs, semantics section 3: the second's range
    starts after the first's last member; an empty first list leaves it the whole range):
    ``sum(A, B) w1^A w2^B E[x^n] / n!``, ``n = g1 A + g2 B``, each nonempty list divided by its ``p``.

    Given the range's length the members (iterations' events) of the pair are one increasing sequence
    of n points of independent Poisson processes, ``(w1 x)^A (w2 x)^B / n!`` of them expected (a single
    construct's own lists being the terms with the other at 0, :func:`subsets` / :func:`chains`); the range
    mixes over x as the module docstring says.  The independent product of the two totals counts pairs
    in the wrong order too, and misses that a record whose range holds a list of the first is a long one.
    ``w2 < 0`` is allowed (an alternating sum: :func:`before_last`).  Two unbounded closures far out:
    the closed form ``[w2 (S(w1) - 1) - w1 (S(w2) - 1)] / (w1 - w2)`` over ``A, B >= 1``, ``S`` being
    ``subsets(., R, 0, None)``; None where neither applies within :data:`PAIR_TERMS` terms."""
    first, second = first._replace(w=_capped(first.w)), second._replace(w=_capped(second.w, -_TOP))
    if max(first.w, second.w) > _LONG:  # a longer series: the closed form where it applies
        far = _far(first, second, R)
        if far is not None:
            return far
    j, k = (R.j, R.k) if R.j < R.k else (1, 1)
    w1, w2 = first.w, second.w
    g1, g2 = first.g, second.g
    if g1 == g2 == 1 and first.hi is None and second.hi is None and first.lo <= 1 and second.lo <= 1:
        return _by_exponent(first, second, w1, w2, j, k)
    total, row0, A, terms, last = 0.0, 1.0, 0, 0, math.inf  # row0: the term (A, 0)
    while (first.hi is None or A <= first.hi) and (row0 != 0.0 or not A):
        row, term, B, n = 0.0, row0, 0, g1 * A
        while (second.hi is None or B <= second.hi) and (term != 0.0 or not B):
            if B >= second.lo:
                row += term / (second.p if B else 1.0)
                if second.hi is None and B > 2 and abs(term) <= _PAIR_TINY * abs(row):
                    break
            term *= w2 * _step(n, g2, j, k)
            B, n, terms = B + 1, n + g2, terms + 1
            if terms > PAIR_TERMS:
                return _far(first, second, R)
        if A >= first.lo:
            total += row / (first.p if A else 1.0)
            if first.hi is None and A > 2 and abs(row) <= _PAIR_TINY * abs(total) and abs(row) <= last:
                break
            last = abs(row)
        row0 *= w1 * _step(g1 * A, g1, j, k)
        A += 1
    return total


def _by_exponent(first: Chain, second: Chain, w1: float, w2: float, j: int, k: int) -> float:
    """:func:`ordered_pairs` of two unbounded closures (``lo <= 1``) as one sum over ``n = A + B``: the terms of
    one n share ``E[x^n] / n!``, and ``P_n = sum(A = 1 .. n - 1) w1^A w2^(n - A)`` (both lists nonempty)
    grows as ``P_(n+1) = w2 (P_n + w1^n)``; an empty first list adds ``w2^n``, an empty second ``w1^n``."""
    total = 1.0 if first.lo == 0 and second.lo == 0 else 0.0
    m, a1, a2, both, bound, n = 1.0, 1.0, 1.0, 0.0, 0.0, 0  # E[x^n] / n!, w1^n, w2^n, P_n, P_n over |w|
    b1, b2, big = abs(w1), abs(w2), max(abs(w1), abs(w2))
    while True:
        if n:  # P_1 = 0: no split of one member into two nonempty lists
            both, bound = w2 * (both + a1), b2 * (bound + abs(a1))
        m, a1, a2, n = m * (j + n) / ((k + n) * (n + 1)), a1 * w1, a2 * w2, n + 1
        term = m * (both / (first.p * second.p) + (a2 / second.p if first.lo == 0 else 0.0)
                    + (a1 / first.p if second.lo == 0 else 0.0))
        total += term
        size = m * (bound + b1 ** n + b2 ** n) / min(first.p * second.p, first.p, second.p)
        if n > big + 2 and size <= _PAIR_TINY * abs(total) or size == 0.0:
            return total


def _far(first: Chain, second: Chain, R: Range) -> float | None:
    """:func:`ordered_pairs` in closed form, for two unbounded closures (``g = 1``, ``lo <= 1``)."""
    if first.g != 1 or second.g != 1 or first.hi is not None or second.hi is not None or first.lo > 1 \
            or second.lo > 1 or second.w < 0:
        return None
    u, v = first.w, second.w
    su, sv = subsets(u, R, 1, None), subsets(v, R, 1, None)
    if abs(u - v) < 1e-3 * max(u, v):  # the limit u -> v: sum (n - 1) E[x^n] u^n / n! = u S'(u) - (S(u) - 1)
        slope = subsets(u, Range(1.0, R.j + 1, R.k + 1), 0, None) * R.moment(1) if R.j < R.k else math.exp(u)
        both = (u * slope - su) / (first.p * second.p)
    else:
        both = (v * su - u * sv) / (u - v) / (first.p * second.p)
    return both + (sv / second.p if first.lo == 0 else 0.0) + (su / first.p if second.lo == 0 else 0.0) + \
        (1.0 if first.lo == 0 and second.lo == 0 else 0.0)


def before_last(first: Chain, v: float, R: Range) -> float | None:
    """The expected lists of ``first`` whose last member has a point of a Poisson process of mean ``v x``
    (the candidates of the closure after it, over the whole window ``v``) after it in the range (an empty
    list: any point in the range), which is what a collection bounded by that closure keeps
    (:attr:`~jitcep.plan.operators.KleeneCollect.bound`): ``-ordered_pairs(first, (-v, 1, 1, None))``, as
    ``1 - e^(-v x (1 - t))`` is minus the sum of ``(-v x (1 - t))^B / B!`` over ``B >= 1``.  Alternating:
    summed up to ``v = 20``; beyond, for an unbounded closure from the closed form ``[v (S(u) - 1) - u (1 -
    E[e^(-v x)])] / (u + v) / p`` (``S`` as in :func:`ordered_pairs`; it too past ``u + v = 1``, where its
    cancellation costs no more than a factor ``1 / (u + v)``), else None."""
    if v <= 0.0:
        return 0.0
    if v <= 20.0 and (first.g != 1 or first.hi is not None or first.lo > 1 or first.w + v <= _LONG):
        got = ordered_pairs(first, Chain(-v, 1, 1, None), R)
        return None if got is None else max(-got, 0.0)
    if first.g != 1 or first.hi is not None or first.lo > 1:
        return None
    u, hit = first.w, 1.0 - none_of(v, R)
    # divided through by the larger of u and v: neither u / v nor v * S overflows (v past a float's range,
    # a rate times the window, keeps every list; a denormal v next to u gave inf * 0)
    if v >= u:
        share = u / v
        out = (subsets(u, R, 1, None) - share * hit) / (1.0 + share) / first.p
    else:
        share = v / u
        out = (share * subsets(u, R, 1, None) - hit) / (share + 1.0) / first.p
    return out + (hit if first.lo == 0 else 0.0)
