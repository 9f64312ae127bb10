"""Two adjacent Kleene constructs: the later one's lists after the earlier one's, and the earlier's lists kept.

A closure or group right after another (adjacent, docs/planning.md "Adjacent
closures") starts its range after the other's last member, so a record
carrying both counts only the pairs of lists in order over one range
(:func:`adjacent_share`, by :func:`~jitcep.plan.planner.ranges.ordered_pairs`
where those sums apply, else :func:`ordered_share` of the two growths); a
collection bounded by the closure after it (:func:`bounds`) keeps only the
lists a candidate of that one follows (:func:`kept_share`).  Both factor into
:func:`~jitcep.plan.planner.cardinality.join_problem`'s ``T'`` cards and
:func:`~jitcep.plan.planner.cardinality.estimate_work`'s collections, the lists
counted as :mod:`.kleene_lists` counts them (ZStream 4.4.5's KSEQ; Kolchinsky &
Schuster 4's ``T'``).
"""

from __future__ import annotations

import math

from ...pattern import expr as E
from ..logical import Group
from .kleene_lists import iterations
from .ranges import Chain, alone, before_last, ordered_pairs, range_of


def bounds(earlier, K) -> bool:
    """Whether closure ``K``, adjacent after ``earlier``, bounds ``earlier``'s collection from above
    (:attr:`~jitcep.plan.operators.KleeneCollect.bound`, as the Kleene rule's ``bounding`` sets it):
    ``earlier``'s lists are kept only where a candidate of ``K`` follows their last member.  (A closure
    further on bounds it too, but its candidates lie past ``earlier``'s range: it drops records, not lists.)"""
    return (not isinstance(K, Group) and not isinstance(earlier, Group) and earlier.after[:1] == (K.var,)
            and K.min >= 1 and K.anchor is None and K.scope == earlier.scope)


def _chain(K, mode: str, s: frozenset, W: float, rate, sel) -> Chain | None:
    """Closure or group ``K`` over records of ``s`` as :func:`~jitcep.plan.planner.ranges.ordered_pairs`
    reads it (its growth over the whole window, as :func:`~.kleene_lists.lists_per_record` /
    :func:`~.kleene_lists.iterations` count it),
    or None where those sums do not describe its lists: ``kleene="maximal"``, an anchor, an AND body, an
    empty range."""
    if not W:
        return None
    if isinstance(K, Group):
        if not K.seq or K.anchor:
            return None
        n, p, q, _, k = iterations(K, K.before, s, W, rate, sel)
        return Chain(math.factorial(k) * n * p * q, k, K.min, K.max, p)
    if mode != "all" or K.anchor is not None:
        return None
    member = math.prod(sel(e) for e in K.member if E.variables(e) - {K.var} <= s)
    p = max(math.prod(sel(e) for e in K.prev) if K.prev else 1.0, 1e-300)
    q = math.prod(sel(e) for e in K.each)
    m = min(rate(K.var) * member * W, 1000.0)
    return Chain(m * p * q, 1, K.min, K.max, p)


def _growth(c, s: frozenset, W: float, rate, sel) -> float:
    """``m * p * q`` of closure ``c`` per record of the variables ``s`` over its mean range
    (:func:`~.kleene_lists.lists_per_record`): its lists that end at a member grow as ``exp`` of this over the range
    (``E[(1 + p q)^N]`` of N Poisson)."""
    member = math.prod(sel(e) for e in c.member if E.variables(e) - {c.var} <= s)
    p = math.prod(sel(e) for e in c.prev) if c.prev else 1.0
    q = math.prod(sel(e) for e in c.each)
    return min(rate(c.var) * member * range_of(c.before, c.after, s, W).mean * p * q, 700.0)


def group_growth(g, s: frozenset, W: float, rate, sel) -> float:
    """:func:`_growth` of Kleene group ``g``, its iterations for members: ``E[n x^k] * p * q`` per record
    of the variables ``s`` (:func:`~.kleene_lists.iterations`), for :func:`ordered_share` of a group next to another
    construct (its iterations taken as points, their spread ignored)."""
    n, p, q, R, k = iterations(g, g.before, s, W, rate, sel)
    return min(n * R.moment(k) * p * q, 700.0)


def _any_growth(K, s: frozenset, W: float, rate, sel) -> float:
    """:func:`_growth` of a closure, :func:`group_growth` of a group."""
    return (group_growth if isinstance(K, Group) else _growth)(K, s, W, rate, sel)


_EXP_TOP = 700.0


def ordered_share(u: float, v: float) -> float:
    """The share of the pairs (list of a closure, list of the closure right after it) whose second list lies
    after the first one's last member, of growths ``u`` and ``v`` (:func:`_growth`) over one range.

    With members of each a Poisson process over the range [0, x] and ``a = u / x``, ``c = v / x``, the
    first's lists whose last member is at t are ``r_1 e^(a t) dt`` and the second's lists after t
    ``(r_2 / c) (e^(c (x - t)) - 1)``: integrated over t, over the product of their totals
    (``(r_1 / a) (e^u - 1)`` and ``(r_2 / c) (e^v - 1)``), ``[u (e^u - e^v) / (u - v) - (e^u - 1)] /
    ((e^u - 1) (e^v - 1))``: 1/2 for two single rare members (one before the other), falling as either
    closure grows (the first's long lists end late)."""
    if u < 1e-6 and v < 1e-6:
        return 0.5
    u, v = min(max(u, 1e-9), _EXP_TOP), min(max(v, 1e-9), _EXP_TOP)  # math.expm1 raises past ~709
    eu, ev = math.expm1(u), math.expm1(v)
    if abs(u - v) < 1e-9 * max(u, v):
        top = u * (eu + 1.0) - eu  # u e^u - (e^u - 1), the limit u -> v
    else:
        top = u * (eu - ev) / (u - v) - eu
    return min(max(top / eu / ev, 0.0), 1.0)


def adjacent_share(earlier, K, mode: str, s: frozenset, W: float, rate, sel, kept: bool = False) -> float:
    """The factor on closure or group ``K``'s lists per record of ``s`` (counted alone) that gives its lists
    per record carrying a list of ``earlier``, the construct right before it (adjacent, docs/planning.md
    "Adjacent closures"): ``pairs / (L_earlier * L_K)``, ``pairs`` the (earlier, K) list pairs in order
    over one range (:func:`~jitcep.plan.planner.ranges.ordered_pairs`: a record whose range holds a list of
    ``earlier`` is a long one, so holds more of ``K``'s) and ``L_earlier`` ``earlier``'s lists that its
    collection kept: those followed by a candidate of ``K`` where ``kept`` (:func:`bounds`,
    :func:`~jitcep.plan.planner.ranges.before_last`), else all of them.  Where those sums do not apply (an
    anchor, an AND body, ``kleene="maximal"``, too many terms): :func:`ordered_share` of the two growths."""
    R = range_of(earlier.before, K.after, s, W)
    first, second = _chain(earlier, mode, s, R.W, rate, sel), _chain(K, mode, s, R.W, rate, sel)
    if first is not None and second is not None:
        pairs, lists = ordered_pairs(first, second, R), alone(second, R)
        # kept: its candidates are the rate after its filter
        before = before_last(first, rate(K.var) * R.W, R) if kept else alone(first, R)
        # divided one at a time: both may be tiny (a rate of 1e-300), their product 0
        share = pairs / before / lists if pairs is not None and lists and before else math.nan
        if math.isfinite(share):
            return share
    return ordered_share(_any_growth(earlier, s, W, rate, sel), _any_growth(K, s, W, rate, sel))


def kept_share(c, later, mode: str, s: frozenset, W: float, rate, sel) -> float:
    """The share of closure ``c``'s lists per record of ``s`` that its collection keeps when the adjacent
    closure ``later`` bounds it (:func:`bounds`): those whose last member a candidate of ``later`` follows
    in the range (:func:`~jitcep.plan.planner.ranges.before_last`); 1 where those sums do not apply."""
    R = range_of(c.before, later.after, s, W)
    first = _chain(c, mode, s, R.W, rate, sel)
    if first is None:
        return 1.0
    kept, every = before_last(first, rate(later.var) * R.W, R), alone(first, R)
    return min(kept / every, 1.0) if kept is not None and every else 1.0
