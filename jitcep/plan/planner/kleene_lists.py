"""Expected lists per record of a Kleene closure or group, and the share of them passing a conjunct split off.

A collection turns each record into its lists (ZStream, Mei & Madden 2009,
4.4.5 / Table 2 KSEQ; Kolchinsky & Schuster 2018, section 4 "Kleene closure":
2^N subsets of N events).  A closure's N members in the range are Poisson of
mean ``r_c * sel(member) * len``, and ``len`` varies over the records as a Beta
share of the window (:mod:`~jitcep.plan.planner.ranges`: ``E[f(len)]``, not
``f(E[len])``): :func:`lists_per_record`.  A group's members are its
iterations, matches of its body in the range (:func:`iterations`):
:func:`group_lists_per_record`, :func:`anchored_group_lists`.

A conjunct the collection leaves to a :class:`~jitcep.plan.operators.ListFilter`
keeps its selectivity as the share of the lists passing it
(:func:`split_shares`, :func:`group_split_shares`; section 4's ``T'`` keeps its
predicates), in an OR branch over the records through it
(:func:`branch_split_shares`).  Read by
:func:`~jitcep.plan.planner.cardinality.join_problem` (``T'``'s card) and
:func:`~jitcep.plan.planner.cardinality.estimate_work` (a collection's rows).
"""

from __future__ import annotations

import dataclasses
import math

from ...pattern import expr as E
from ..logical import Group
from .ranges import Range, chains, longest_run, none_of, range_of, runs, subsets


def lists_per_record(c, mode: str, s: frozenset, W: float, rate, sel, bound: frozenset | None = None) -> float:
    """Expected lists of closure ``c`` under ``kleene=mode`` per record of the variables ``s`` (module
    docstring; ``rate(var)``, ``sel(conjunct)``), its member-wise conjuncts applying where the variables
    ``bound`` (default ``s``) bind all they read.

    Its members in the range are Poisson given the range's length, and the length varies over the
    records (:mod:`~jitcep.plan.planner.ranges`): with ``m`` the members expected over the whole window,
    ``p`` the iterative conjuncts' selectivity and ``q`` an ``each`` conjunct's (one reading a member
    with the whole list, ``b[i].x > avg(b.x)``: the user's, or the default, as it is read on lists, not
    sampled; a list of L members passes with ``q^L``), ``kleene="all"`` makes ``sum(L) E[C(N, L)]
    p^(L-1) q^L`` lists (``(e^(m p q) - 1) / p`` at a fixed length), an anchored closure (its first
    member bound by the joins, the others after it) ``q sum(L) E[C(N, L)] (p q)^L`` over its L later
    members, each following one, and ``"maximal"`` one list when a member is there, passing with
    ``q^N`` (``E[e^(-m (1 - q) x)] - E[e^(-m x)]``), or every run of lo..hi consecutive members."""
    bound = s if bound is None else bound
    member = math.prod(sel(e) for e in c.member if E.variables(e) - {c.var} <= bound)
    q = math.prod(sel(e) for e in c.each)
    before, lo, hi = c.before, c.min, c.max
    if c.anchor is not None and c.anchor in s:
        # the anchor is the first member of every list: the others lie after it, and number one fewer
        before, lo, hi = (*before, c.anchor), max(lo - 1, 0), None if hi is None else hi - 1
    R = range_of(before, c.after, s, W)
    m = min(rate(c.var) * member * R.W, 1000.0)  # members expected over the whole window
    anchored = before is not c.before
    first = q if anchored else 1.0  # the anchor is a member the each-conjuncts read too
    if mode == "maximal":
        if hi is None:
            lists = none_of(m * (1.0 - q), R) - (none_of(m, R) if lo >= 1 else 0.0)
        else:
            # the runs past the longest the members reach are 0: a bound of 10^9 lists none of them
            lists = (sum(r * q ** L for L, r in enumerate(runs(m, R, min(hi, longest_run(m))), 1) if L >= lo)
                     + (anchored and lo == 0))
    else:
        p = max(math.prod(sel(e) for e in c.prev) if c.prev else 1.0, 1e-300)
        if anchored:  # each of the L members after the anchor follows one: p^L
            lists = subsets(m * p * q, R, lo, hi)
        else:
            lists = subsets(m * p * q, R, max(lo, 1), hi) / p + (1.0 if lo == 0 else 0.0)
    return lists * first * math.prod(sel(e) for e in c.lists)


def group_lists_per_record(g, s: frozenset, W: float, rate, sel) -> float:
    """Expected lists of Kleene group ``g`` per record of the variables ``s`` (``rate(var)``,
    ``sel(conjunct)``), as :func:`lists_per_record` counts a closure's, its iterations for members: an
    iteration is a match of its body inside the range between its neighbours (:func:`iterations`), and
    the lists are the sets of them the bounds allow, consecutive ones passing the iterative conjuncts:
    for a SEQ body the chains of iterations each after the one before (:func:`_sets`), for an AND body
    every subset (``(e^(n p q) - 1) / p`` unbounded at a fixed length; its iterations may share events,
    which makes N over-dispersed, so this is below the truth for frequent bodies); the rates of its
    variables are sampled like a closure's (:func:`~jitcep.plan.planner.statistics.leaves`)."""
    n, p, q, R, k = iterations(g, g.before, s, W, rate, sel)
    lists = _sets(g, n * p * q, R, max(g.min, 1), g.max, k) / p + (1.0 if g.min == 0 else 0.0)
    return lists * math.prod(sel(e) for e in g.lists)


def _sets(g, z: float, R: Range, lo: int, hi: int | None, k: int) -> float:
    """The sets of ``lo..hi`` iterations of group ``g`` (``z`` their growth over the whole window): a SEQ
    body's are chains, each iteration wholly after the one before
    (:func:`~jitcep.plan.planner.ranges.chains`, exact for Poisson arrivals); an AND body's iterations are
    unordered and may share events, taken as Poisson points (:func:`~jitcep.plan.planner.ranges.subsets`)."""
    return chains(z, R, lo, hi, k) if g.seq else subsets(z, R, lo, hi, k)


def iterations(g, before, s: frozenset, W: float, rate, sel) -> tuple[float, float, float, Range, int]:
    """(n, p, q, R, k) of Kleene group ``g`` per record of ``s``: ``n`` its iterations in a range of the
    whole window after ``before`` (matches of its body, ``prod(r_v W) * sel(joins) * sel(member)``, over
    ``k!`` for a SEQ body's k events in order, at most 1000; in a range of ``W x`` they are ``n x^k``),
    ``p`` the chance one iteration follows another (the iterative conjuncts), ``q`` the chance one
    passes the ``each`` conjuncts, ``R`` the range (:func:`~jitcep.plan.planner.ranges.range_of`), ``k``
    the body's events."""
    R = range_of(before, g.after, s, W)
    k = len(g.vars)
    factors = [rate(v) * R.W for v in g.vars]
    shares = math.prod(sel(e) for e in (*g.joins, *g.member))
    # a variable that never occurs, or a conjunct none passes, makes no iteration, even beside rates times the
    # window past a float's range (inf * 0 would be a NaN count, which ranges.subsets cannot sum)
    n = 0.0 if 0.0 in factors or shares == 0.0 else math.prod(factors) * shares
    if g.seq:
        n /= math.factorial(k)
    p = max(math.prod(sel(e) for e in g.prev) if g.prev else 1.0, 1e-300)
    return min(n, 1000.0), p, math.prod(sel(e) for e in g.each), R, k


def anchored_group_lists(g, s: frozenset, W: float, rate, sel) -> float:
    """Expected lists of an anchored Kleene group ``g`` per record of the variables ``s`` (its first
    iteration, the anchors, bound by the joins), as :func:`group_lists_per_record` counts them: the
    lists are the anchor and a subset of the ``n`` later iterations in range that the bounds allow, one
    fewer each, every later iteration following one (the anchor or an earlier one: ``p``) and every
    iteration, the anchor too, passing the ``each`` conjuncts (``q``): ``q sum E[C(N, L)] (p q)^L``,
    ``q e^(n p q)`` unbounded from 0 at a fixed length (for a SEQ body the chains of them, :func:`_sets`).
    A SEQ group's later iterations lie after the anchor's, so its range starts there (the anchors stand
    for the neighbour before it); an AND group's lie after it in canonical order only, within its outside
    neighbours: all of those are counted (an upper bound)."""
    n, p, q, R, k = iterations(g, (*g.before, *g.anchor) if g.seq else g.before, s, W, rate, sel)
    lo, hi = max(g.min - 1, 0), None if g.max is None else g.max - 1
    return q * _sets(g, n * p * q, R, lo, hi, k) * math.prod(sel(e) for e in g.lists)


def group_lists(g, s: frozenset, W: float, rate, sel) -> float:
    """:func:`anchored_group_lists` or :func:`group_lists_per_record`, as ``g`` is anchored or not."""
    return (anchored_group_lists if g.anchor else group_lists_per_record)(g, s, W, rate, sel)


def construct_lists(K, mode: str, s: frozenset, W: float, rate, sel) -> float:
    """Lists per record of the variables ``s`` of closure or group ``K``."""
    return group_lists(K, s, W, rate, sel) if isinstance(K, Group) else lists_per_record(K, mode, s, W, rate, sel)


def split_shares(c, mode: str, split: dict, s: frozenset, W: float, rate, sel) -> list[float]:
    """The share of closure ``c``'s lists per record of ``s`` (collected without the conjuncts ``split``,
    form -> conjuncts, :class:`~jitcep.plan.operators.ListFilter`'s) that pass each of those conjuncts
    in turn, in the order ``member``, ``prev``, ``lists``, ``each``: each the lists with it and those
    before over the lists with those before only, so the product is the lists with all of them over
    the lists without (Kolchinsky & Schuster 4: ``T'``'s predicates keep their selectivities).  Lists
    conjuncts multiply the lists by their selectivity; member-wise and iterative ones thin the members
    and the runs of them (``2^(m p) - 1`` lists of ``2^m - 1``)."""
    every = frozenset().union(s, *(E.variables(e) for cs in split.values() for e in cs))
    shares, have = [], c
    before = lists_per_record(have, mode, s, W, rate, sel)
    for form in ("member", "prev", "lists", "each"):
        for e in split.get(form, ()):
            have = dataclasses.replace(have, **{form: getattr(have, form) + (e,)})
            after = lists_per_record(have, mode, s, W, rate, sel, every)
            shares.append(min(max(after / before, 0.0), 1.0) if before > 0 else 1.0)
            before = after
    return shares


def group_split_shares(g, mode: str, split: dict, s: frozenset, W: float, rate, sel) -> list[float]:
    """:func:`split_shares` of Kleene group ``g`` (collected without the conjuncts ``split``): the share of
    its lists per record of ``s`` passing each split conjunct in turn, the lists counted by
    :func:`anchored_group_lists` / :func:`group_lists_per_record` with the conjuncts added one by one (a
    member-wise one thins the iterations, an iterative one their chains, a list one multiplies the lists,
    an ``each`` one passes each iteration with its selectivity).  ``mode`` is unused: a group's lists are
    every chain of its iterations under either ``kleene=``."""
    shares, have = [], g
    before = group_lists(have, s, W, rate, sel)
    for form in ("member", "prev", "lists", "each"):
        for e in split.get(form, ()):
            have = dataclasses.replace(have, **{form: getattr(have, form) + (e,)})
            after = group_lists(have, s, W, rate, sel)
            shares.append(min(max(after / before, 0.0), 1.0) if before > 0 else 1.0)
            before = after
    return shares


def construct_split_shares(K, mode: str, split: dict, s: frozenset, W: float, rate, sel) -> list[float]:
    """:func:`split_shares` of closure or group ``K`` (:func:`group_split_shares`)."""
    return (group_split_shares if isinstance(K, Group) else split_shares)(K, mode, split, s, W, rate, sel)


def branch_split_shares(shares, lists: float, took: float) -> list[float]:
    """:func:`split_shares` of a closure in an OR branch as shares of the mean lists over its OR unit's
    records (:func:`~.cardinality.join_problem`'s ``T'`` in an OR branch): a record that took another
    branch keeps its one unbound list, which no split conjunct reads (semantics section 4), so with
    ``L_i`` the lists of a record through the branch with the first i conjuncts (``lists`` times the
    first i shares), the i-th share is ``(took L_i + 1 - took) / (took L_(i-1) + 1 - took)``, their
    product the mean lists with all of them over those without."""
    out, have = [], lists
    for passing in shares:
        before, have = took * have + 1.0 - took, have * passing
        out.append((took * have + 1.0 - took) / before if before > 0 else 1.0)
    return out
