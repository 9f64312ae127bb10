"""Negation over end-sorted match buffers (ZStream section 4.4.2 NSEQ; SASE section 3.3).

A negated variable is a leaf: its events after type test and single-variable
filters, sorted by (key partition, position) like any leaf buffer.  For each
record of a match buffer the kernel finds the record's *range* of that leaf
(docs/semantics.md section 7) by two binary searches inside the record's
partition — SASE 3.3's interval lookup on an index of the negated type, with
ZStream's time constraints ``A.end-ts < B.ts < C.start-ts`` as the bounds —
and then either decides the kill itself (a negation without conditions: any
candidate in range that is not one of the record's own events kills) or emits
``(record, event)`` pairs for the pattern's generated predicate code to test.
Keeping the predicates out keeps this kernel compiled once for every pattern.

Range of record r (``bcols`` / ``acols``: the record columns of the positive
variables ordered before / after the negation; unbound columns, -1, are
skipped):

- lower: after the last bound ``bcols`` event in the order; with none, after
  the record's first event when ``in_conj`` (an AND ancestor), else within
  the window measured from the record's last event (``wt[last] - wt[e] <= W``);
- upper: before the first bound ``acols`` event; with none, before the
  record's last event when ``in_conj``, else ``wt[e] - wt[first] <= W``

(both tested exactly for any int64 times: :func:`jitcep.kernels.window.exceeds`).

Orders (``order``): 0 position, 1 strict_ts, 2 nondecreasing_ts ("before"
admits ties).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .join import ORDER_CODE
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _first_after(cand, ts, lo, hi, p, order, strict):
    """First index in [lo, hi) whose event is after position p (``strict``) or not before it.

    Position order compares positions; the others compare timestamps
    (cand is sorted by position, hence by ts).
    """
    t = ts[p]
    while lo < hi:
        mid = (lo + hi) >> 1
        e = cand[mid]
        if order == 0:
            left = e <= p if strict else e < p
        else:
            left = ts[e] <= t if strict else ts[e] < t
        if left:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**NUMBA_FLAGS)
def _first_in_window_from(cand, wt, lo, hi, last, W):
    """First index in [lo, hi) with wt[last] - wt[e] <= W."""
    t = wt[last]
    while lo < hi:
        mid = (lo + hi) >> 1
        if exceeds(wt[cand[mid]], t, W):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**NUMBA_FLAGS)
def _first_out_of_window_from(cand, wt, lo, hi, first, W):
    """First index in [lo, hi) with wt[e] - wt[first] > W."""
    t = wt[first]
    while lo < hi:
        mid = (lo + hi) >> 1
        if not exceeds(t, wt[cand[mid]], W):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**NUMBA_FLAGS)
def _ranges(pos, start, end, goff, cand, cgoff, ts, wt, W, order, bcols, acols, in_conj, lo, hi):
    G = len(goff) - 1
    for g in range(G):
        c0, c1 = cgoff[g], cgoff[g + 1]
        for r in range(goff[g], goff[g + 1]):
            if c0 == c1:
                lo[r] = c0
                hi[r] = c0
                continue
            pb = -1
            for c in bcols:
                x = pos[r, c]
                if x > pb:
                    pb = x
            if pb < 0 and in_conj:
                pb = start[r]
            if pb >= 0:
                # before(u, e): strict except under nondecreasing_ts
                i = _first_after(cand, ts, c0, c1, pb, order, order != 2)
            else:
                i = _first_in_window_from(cand, wt, c0, c1, end[r], W)
            pa = -1
            for c in acols:
                x = pos[r, c]
                if x >= 0 and (pa < 0 or x < pa):
                    pa = x
            if pa < 0 and in_conj:
                pa = end[r]
            if pa >= 0:
                # before(e, w): e's index ends at the first event not before w
                j = _first_after(cand, ts, i, c1, pa, order, order == 2)
            else:
                j = _first_out_of_window_from(cand, wt, i, c1, start[r], W)
            lo[r] = i
            hi[r] = max(i, j)


@njit(**NUMBA_FLAGS)
def _in_record(row, e):
    for x in row:
        if x == e:
            return True
    return False


@njit(**NUMBA_FLAGS)
def _any_outside(pos, lo, hi, cand, killed):
    """killed[r]: some candidate in [lo[r], hi[r]) is not one of record r's own events."""
    for r in range(len(lo)):
        for i in range(lo[r], hi[r]):  # at most (record width + 1) steps: the record's events are distinct
            if not _in_record(pos[r], cand[i]):
                killed[r] = True
                break


@njit(**NUMBA_FLAGS)
def _pairs_end(lo, hi, skip, r0, budget):
    """The record after the chunk that starts at r0 and holds about ``budget`` pairs, and its size."""
    m = len(lo)
    n = 0
    r = r0
    while r < m and n < budget:
        if not skip[r]:
            n += hi[r] - lo[r]
        r += 1
    return r, n


@njit(**NUMBA_FLAGS)
def _pairs(pos, lo, hi, cand, skip, r0, r1, rec, ev):
    """Fill (record, event) pairs of records [r0, r1); returns how many.

    ``skip[r]``: record r is already decided (killed).
    """
    k = 0
    for q in range(r0, r1):
        if skip[q]:
            continue
        for i in range(lo[q], hi[q]):
            e = cand[i]
            if _in_record(pos[q], e):
                continue
            rec[k] = q
            ev[k] = e
            k += 1
    return k


def negation_ranges(buf, leaf, ts, wt, W: int, order: str, bcols, acols, in_conj: bool):
    """Per record of ``buf`` (pos, start, end, goff), the index range [lo, hi) of ``leaf`` (cand, cgoff)."""
    pos, start, end, goff = buf
    cand, cgoff = leaf
    lo, hi = empty(len(start), np.int64), empty(len(start), np.int64)  # NumPy-allocated (kernels.alloc)
    _ranges(pos, start, end, goff, cand, cgoff, ts, wt, window_bound(W), ORDER_CODE[order],
            np.asarray(bcols, dtype=np.int64), np.asarray(acols, dtype=np.int64), bool(in_conj), lo, hi)
    return lo, hi


def killed_unconditionally(pos, lo, hi, cand):
    """Records with a candidate in range other than their own events (a negation without conditions)."""
    killed = np.zeros(len(lo), dtype=np.bool_)  # NumPy-allocated (jitcep.kernels.alloc)
    _any_outside(pos, lo, hi, cand, killed)
    return killed


def candidate_pairs(pos, lo, hi, cand, skip, r0: int, budget: int):
    """(record, event position) pairs of the ranges, the record's own events left out, and the next start record.

    The pairs a negation's conditions (or a Kleene closure's member-wise
    conjuncts) are tested on, about ``budget`` at a time.
    """
    r1, n = _pairs_end(lo, hi, skip, int(r0), int(budget))
    rec, ev = empty(n, np.int64), empty(n, np.int64)  # NumPy-allocated (jitcep.kernels.alloc)
    k = _pairs(pos, lo, hi, cand, skip, int(r0), r1, rec, ev)
    return rec[:k], ev[:k], r1
