"""Negation as a nested query over a found positive match (docs/semantics.md §7; SASE §2, SASE+ §3.1).

For each negated variable n the match fixes a range (between its SEQ
neighbours, or the window / the AND span on a side with no neighbour); the
match is killed if an event in that range has n's type, is not one of the
match's positive events, agrees on every ``[attr]`` key, and makes every
conjunct that mentions n TRUE.
"""

from __future__ import annotations

import numpy as np

from .analysis import NegInfo
from .candidates import search_time


def _positions(m, names) -> list[int]:
    out: list[int] = []
    for v in names:
        x = m.b[v]
        if x is None:
            continue
        if isinstance(x, (list, tuple)):
            out.extend(x)
        else:
            out.append(x)
    return out


def _lower(m, neg: NegInfo, cand, cand_ts, first: int, last: int) -> int:
    """First index of ``cand`` inside n's range: the §7 lower bound.

    before(u, e) of §1 picks the search side: strict under ``position`` and
    ``strict_ts``, ties admitted under ``nondecreasing_ts``.  :func:`_upper` is
    its mirror image (every side flipped); they stay two functions because a
    merged one would need the flips spelled out as parameters.
    """
    before = _positions(m, neg.before)
    if not before and neg.in_conj:
        before = [first]
    ts = m.table.ts
    if before:
        p = max(before)
        if m.order == "position":
            return int(np.searchsorted(cand, p, side="right"))
        side = "right" if m.order == "strict_ts" else "left"
        return int(np.searchsorted(cand_ts, ts[p], side=side))
    i = 0  # start of the pattern: within the window measured from the last event
    if m.info.span is not None:
        i = max(i, search_time(cand_ts, int(ts[last]) - m.info.span, "left"))
    if m.info.count is not None:
        i = max(i, int(np.searchsorted(cand, last - m.info.count, side="right")))
    return i


def _upper(m, neg: NegInfo, cand, cand_ts, first: int, last: int) -> int:
    """End (exclusive) index of ``cand`` inside n's range: the §7 upper bound (mirror of :func:`_lower`)."""
    after = _positions(m, neg.after)
    if not after and neg.in_conj:
        after = [last]
    ts = m.table.ts
    if after:
        p = min(after)
        if m.order == "position":
            return int(np.searchsorted(cand, p, side="left"))
        side = "left" if m.order == "strict_ts" else "right"
        return int(np.searchsorted(cand_ts, ts[p], side=side))
    j = len(cand)  # end of the pattern: within the window measured from the first event
    if m.info.span is not None:
        j = min(j, search_time(cand_ts, int(ts[first]) + m.info.span, "right"))
    if m.info.count is not None:
        j = min(j, int(np.searchsorted(cand, first + m.info.count, side="left")))
    return j


def killed_by(m, neg: NegInfo) -> int | None:
    """The position of an event that kills the current match through ``neg``, or None."""
    if not m.trail:
        return None
    first, last = min(m.trail), max(m.trail)
    name = neg.var.name
    cand, cand_ts = m.cand[name], m.cand_ts[name]
    i = _lower(m, neg, cand, cand_ts, first, last)
    j = _upper(m, neg, cand, cand_ts, first, last)
    conjs = [c for c in neg.conjs if all(m.b[u] is not None for u in c.vars if u != name)]
    for idx in range(i, j):
        e = int(cand[idx])
        if e in m.used:
            continue
        if m.info.equiv_attrs and m.event_key(e) != m.key:
            continue
        m.b[name] = e
        try:
            if all(m.holds(c) for c in conjs):
                return e
        finally:
            m.b[name] = None
    return None


def negations_hold(m) -> bool:
    """True iff no negated variable has a killing event for the current match (§7)."""
    return all(killed_by(m, n) is None for n in m.info.negs)
