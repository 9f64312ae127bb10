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
a range of ``W x``, taken as Poisson given the range like a closure's members:
the same sums with ``E[x^(g L)]``.  A negation's range is read the same way:
no negated event in it with chance ``E[exp(-r W x)]`` (:func:`none_of`).
docs/planning.md ("How many lists a closure makes") checks this against
measured lists.
"""

from __future__ import annotations

import math
from typing import NamedTuple

ASYMPTOTIC = 60.0
"""Above this argument an unbounded sum is its leading asymptotic term (``e^60`` lists per record price any
plan out; the relative error is O(1/z)), and ``e^(-t)`` mixtures likewise."""
_TOP = 700.0  # e^700 is still a float
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


def subsets(z: float, R: Range, lo: int, hi: int | None, g: int = 1) -> float:
    """``sum(L = lo .. hi) z^L / L! * E[x^(g L)]`` over ``R``'s x (``hi`` None: to infinity): with ``z = m y``,
    the expected ``sum C(N, L) y^L`` of N members Poisson of mean ``m x^g`` (module docstring)."""
    z = min(z, _TOP) if z > 0.0 else 0.0  # NaN (an inf * 0 upstream) as 0: its series would never end
    if hi is None and z > ASYMPTOTIC:  # 1F1(j; k; z) ~ Gamma(k) / Gamma(j) (g z)^(j - k) e^z (1 + (k - j)(1 - j) / z)
        if R.j >= R.k:
            return math.exp(z)
        lead = math.exp(z + math.lgamma(R.k) - math.lgamma(R.j) + (R.j - R.k) * math.log(g * z))
        return lead * (1.0 + (R.k - R.j) * (1 - R.j) / (g * z))
    if hi is not None and hi < lo:
        return 0.0
    j, k = (R.j, R.k) if R.j < R.k else (1, 1)  # j = k: every moment 1
    total, term, L = 0.0, 1.0, 0
    while True:
        if L >= lo:
            total += term
            if L >= hi if hi is not None else L > z and term <= _TINY * total:
                return total
        L += 1
        if g == 1:
            term *= z * (j + L - 1) / (L * (k + L - 1))
        else:
            term *= z / L
            for i in range(g * (L - 1), g * L):
                term *= (j + i) / (k + i)
        if term == 0.0:
            return total


def laplace(t: float, a: int, b: int) -> float:
    """``E[exp(-t x)]`` for ``x ~ Beta(a, b - a)`` (``1F1(a; b; -t)``, ``t >= 0``), by Kummer's
    ``e^(-t) 1F1(b - a; b; t)``, a sum of positive terms; ``a >= b``: ``e^(-t)``."""
    if a >= b or t <= 0.0:
        return math.exp(-max(t, 0.0))
    if t > ASYMPTOTIC:  # Gamma(b) / Gamma(b - a) t^-a (1 + a (1 + a - b) / t)
        return math.exp(math.lgamma(b) - math.lgamma(b - a) - a * math.log(t)) * (1.0 + a * (1 + a - b) / t)
    return math.exp(-t) * subsets(t, Range(1.0, b - a, b), 0, None)


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
    mean, log_m, log_moment = m * R.moment(1), math.log(m), 0.0
    below = below_n = 0.0  # sum(n < L - 1) P(N = n), and of n P(N = n)
    for L in range(1, min(hi, longest_run(m)) + 1):
        out[L - 1] = max(mean - (L - 1) + (L - 1) * below - below_n, 0.0)
        n = L - 1  # P(N = n) enters the sums of L + 1
        tail = laplace(m, R.j + n, R.k + n) if R.j < R.k else math.exp(-m)
        if tail > 0.0:
            p_n = math.exp(n * log_m - math.lgamma(n + 1) + log_moment + math.log(tail))
            below, below_n = below + p_n, below_n + n * p_n
        if R.j < R.k:
            log_moment += math.log((R.j + n) / (R.k + n))
    return out
