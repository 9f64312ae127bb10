"""The share of tuples in a pattern's order: linear extensions of a partial order over exchangeable times.

A SEQ orders its items; nested in ANDs, the order on a set S of variables is a
partial order.  With the events' times in a window exchangeable (independent
arrivals: every order of S's events equally likely), the fraction of S's
tuples whose events are in the pattern's order is ``e(S) / |S|!``, ``e(S)``
the number of linear extensions of the order restricted to S.  ZStream (Mei &
Madden 2009, Table 1) and Kolchinsky & Schuster (2018, section 4) price the
order as a predicate of selectivity ``Pt`` = 1/2 per ordered pair, which is
exact for two variables and falls behind fast past them: a chain of 7 is
``2^-21`` pairwise, ``1/7!`` (413 times more) in fact.

A pattern of SEQs and ANDs orders its variables in a *series-parallel* order
(a SEQ is a series composition, an AND a parallel one), and so does its
restriction to any S, in which the blocks of S the series nodes see shrink
(empty ones drop).  Counting linear extensions there is closed-form: a
parallel composition multiplies them, a series composition of blocks of sizes
``s_1..s_m`` multiplies them too, so the share is ``prod_k s_k! / (sum s_k)!``
per series node times its blocks' shares.  :func:`series_blocks` decomposes
the order over every unit once; :func:`share` prices any subset in time
linear in the blocks (what the planner's searches memoise per set).  For a
chain of k it is ``1/k!``; for two SEQ chains of a and b joined,
``share(L | R) / (share(L) share(R)) = 1 / C(a + b, a)``; for an AND, 1.

An order that is not series-parallel (it has an induced N) is none of a
pattern's; :func:`series_blocks` returns None for it, and for a relation
that is not a strict partial order, and its caller keeps the pairwise factor.
"""

from __future__ import annotations

from typing import Sequence

ORDER_FACTOR = 0.5
"""Selectivity of the implicit time predicate between two events a SEQ orders (ZStream's Pt, Table 1): the
pairwise price of the order, which :func:`share` replaces where the order is series-parallel."""


def _factorials(n: int) -> tuple[float, ...]:
    out = [1.0]
    for k in range(1, n + 1):
        out.append(out[-1] * k)  # in floats, as the compiled searches multiply them (kernels.join_search)
    return tuple(out)


MAX_SIZE = 170
"""The most elements an order may have here: 170! is the largest factorial a float holds."""

FACTORIALS = _factorials(MAX_SIZE)
"""``FACTORIALS[k]``: k!, as the float product ``1.0 * 1 * 2 * ... * k`` (the kernels read this table)."""


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _components(mask: int, adjacent) -> list[int]:
    """The connected components (bitmasks) of the graph on ``mask`` whose neighbours of i are ``adjacent(i)``."""
    out, left = [], mask
    while left:
        comp = frontier = left & -left
        while frontier:
            i = frontier.bit_length() - 1
            frontier ^= 1 << i
            new = adjacent(i) & mask & ~comp
            comp |= new
            frontier |= new
        out.append(comp)
        left &= ~comp
    return out


def series_blocks(below: Sequence[int]) -> tuple[tuple[int, ...], ...] | None:
    """The series nodes of the series-parallel decomposition of the order on elements ``0..n-1``
    (``below[i]``: bitmask of the elements before i), each as its blocks' bitmasks; None when the
    relation is not a strict partial order (irreflexive, transitive), is not series-parallel, or has more
    than :data:`MAX_SIZE` elements.

    Split by the comparability graph's components (parallel: no factor) and, when it is connected, by
    the components of its complement (series: the blocks are totally ordered one after another), down to
    single elements; a set connected in both graphs is an induced N (Valdes, Tarjan & Lawler 1982)."""
    n = len(below)
    if n > MAX_SIZE:
        return None
    above = [0] * n
    for i, b in enumerate(below):
        if b >> i & 1 or b >> n:
            return None
        for j in _bits(b):
            if below[j] & ~b:  # not transitive
                return None
            above[j] |= 1 << i
    out: list[tuple[int, ...]] = []
    todo = [(1 << n) - 1] if n else []
    while todo:
        mask = todo.pop()
        if not mask & (mask - 1):
            continue
        parts = _components(mask, lambda i: below[i] | above[i])
        if len(parts) == 1:
            parts = _components(mask, lambda i: ~(below[i] | above[i] | 1 << i))
            if len(parts) == 1:
                return None
            out.append(tuple(parts))
        todo.extend(parts)
    return tuple(out)


def share(blocks: tuple[tuple[int, ...], ...], mask: int) -> float:
    """The fraction of the orders of the elements in ``mask`` that keep the order ``blocks`` decomposes
    (:func:`series_blocks`): ``e(S) / |S|!``, per series node ``prod s_k! / (sum s_k)!``, ``s_k`` the
    elements of S in its k-th block.  The compiled searches compute it in this order
    (:func:`jitcep.kernels.join_search._share`), so both give the same float."""
    out = 1.0
    for node in blocks:
        num, total = 1.0, 0
        for b in node:
            c = (mask & b).bit_count()
            num *= FACTORIALS[c]
            total += c
        out *= num / FACTORIALS[total]
    return out
