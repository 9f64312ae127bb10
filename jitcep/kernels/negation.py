"""Negation over end-sorted match buffers (ZStream section 4.4.2 NSEQ; SASE section 3.3).

A negated variable is a leaf: its events after type test and single-variable
filters, sorted by (key partition, position) like any leaf buffer.  For each
record of a match buffer the kernel finds the record's *range* of that leaf
(docs/semantics.md section 7) by two searches inside the record's partition
— SASE 3.3's interval lookup on an index of the negated type, with ZStream's
time constraints ``A.end-ts < B.ts < C.start-ts`` as the bounds; a bound set
by a record's event is searched from the previous record's —
and then either decides the kill itself (a negation without conditions: any
candidate in range that is not one of the record's own events kills) or emits
``(record, event)`` pairs for the pattern's generated predicate code to test,
with the positions that code reads (:func:`candidate_rows`).
Keeping the predicates out keeps this kernel compiled once for every pattern.
With one partition and many records per event, the two searches are answered
for every position first, in one merge each (:func:`negation_ranges`), and a
record's bounds are read from those answers.

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
from .checks import check_index, check_lengths, fail
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
def _left_of(e, ts, p, order, strict):
    """Whether candidate ``e`` is before position p (``strict``: or at it), as :func:`_first_after` tests."""
    if order == 0:
        return e <= p if strict else e < p
    return ts[e] <= ts[p] if strict else ts[e] < ts[p]


_NEAR = 8  # candidates stepped over one by one from a hint before a binary search takes over


@njit(**NUMBA_FLAGS)
def _first_after_near(cand, ts, lo, hi, p, order, strict, hint):
    """:func:`_first_after` from ``hint`` (clipped to [lo, hi]): when the answer is below it, a search
    galloping down from it (steps 1, 2, 4, ...) then a binary search within the last step, else a step at a
    time up to ``_NEAR`` candidates past it, then a binary search.  Correct from any hint; fast from one
    near the answer (the last record's, in :func:`_ranges`: a buffer in end order goes back at each end
    to about where the end before started, a few candidates, where a search of the whole partition took
    ~17 steps)."""
    h = min(max(hint, lo), hi)
    if h > lo and not _left_of(cand[h - 1], ts, p, order, strict):
        a, b, step = lo, h - 1, 1  # cand[b] is not left of p, cand[a - 1] is (or a = lo): the answer is in [a, b]
        while b - step > lo:
            if _left_of(cand[b - step], ts, p, order, strict):
                a = b - step + 1
                break
            b -= step
            step *= 2
        return _first_after(cand, ts, a, b, p, order, strict)
    stop = min(hi, h + _NEAR)
    while h < stop and _left_of(cand[h], ts, p, order, strict):
        h += 1
    if h < stop or h == hi:
        return h
    return _first_after(cand, ts, h, hi, p, order, strict)


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
def _first_after_each(cand, ts, n, order, strict, out):
    """out[p] = :func:`_first_after` over all of ``cand`` for each position p < n, in one merge of the
    positions with the candidates (both ascend in position, hence in time)."""
    i = 0
    for p in range(n):
        while i < len(cand) and _left_of(cand[i], ts, p, order, strict):
            i += 1
        out[p] = i


@njit(**NUMBA_FLAGS)
def _bound_positions(pos, start, end, bcols, acols, in_conj, n, pb, pa):
    """pb[r] / pa[r]: the position bounding record r's range from below / above (the last bound ``bcols``
    event / the first bound ``acols`` one; with none, the record's first / last event when ``in_conj``,
    else -1); False when a record's positions are outside the ``n`` events.

    Column by column over all the records, each pass a loop without branches on the columns: a loop over
    the columns inside the loop over the records kept that loop's iterations from overlapping (simpleNot
    x100, perf/notes/opencep.md: 1.6 ms of ``_ranges``' 268,700 records, ~0.5 ms this way)."""
    m = len(pb)
    for r in range(m):
        pb[r] = -1
        pa[r] = -1
    low, top = 0, -1  # the least and greatest positions read (unbound columns are negative)
    for c in bcols:
        for r in range(m):
            pb[r] = max(pb[r], pos[r, c])
    for c in acols:
        for r in range(m):
            x = pos[r, c]
            top = max(top, x)
            if x >= 0 and (pa[r] < 0 or x < pa[r]):
                pa[r] = x
    for r in range(m):
        low = min(low, start[r], end[r])
        top = max(top, start[r], end[r], pb[r])
    if low < 0 or top >= n:
        return False
    if in_conj:
        for r in range(m):
            if pb[r] < 0:
                pb[r] = start[r]
            if pa[r] < 0:
                pa[r] = end[r]
    return True


@njit(**NUMBA_FLAGS)
def _ranges(pos, start, end, goff, cand, cgoff, ts, wt, W, order, bcols, acols, in_conj, lower_at, upper_at,
            lo, hi):
    # False at partition offsets or record positions out of range (the wrapper checks the rest).
    # ``lower_at`` / ``upper_at``: empty, or (one partition holding all of ``cand``) the bounds' searches
    # answered for every position (_first_after_each): then a bound is read, not searched.  The bounding
    # positions are found first, into ``lo`` / ``hi`` (_bound_positions), then turned into ranges
    if not _bound_positions(pos, start, end, bcols, acols, in_conj, len(ts), lo, hi):
        return False
    for g in range(len(goff) - 1):
        c0, c1 = cgoff[g], cgoff[g + 1]
        r0, r1 = goff[g], goff[g + 1]
        if not (0 <= c0 <= c1 <= len(cand) and 0 <= r0 <= r1 <= len(start)):
            return False
        if len(lower_at) > 0:
            _read_ranges(cand, wt, W, start, end, lower_at, upper_at, c0, c1, r0, r1, lo, hi)
        else:
            _searched_ranges(cand, ts, wt, W, order, start, end, c0, c1, r0, r1, lo, hi)
    return True


@njit(**NUMBA_FLAGS)
def _read_ranges(cand, wt, W, start, end, lower_at, upper_at, c0, c1, r0, r1, lo, hi):
    """The ranges of records [r0, r1) of the partition [c0, c1) of ``cand``, their bounds read from the
    answers per position (over that partition: indexes in [c0, c1]); lo / hi hold the bounding positions
    (:func:`_bound_positions`) on entry."""
    for r in range(r0, r1):
        pb, pa = lo[r], hi[r]
        if c0 == c1:
            i = j = c0
        else:
            if pb >= 0:
                i = lower_at[pb]
            else:
                i = _first_in_window_from(cand, wt, c0, c1, end[r], W)
            if pa >= 0:
                j = upper_at[pa]
            else:
                j = _first_out_of_window_from(cand, wt, i, c1, start[r], W)
        lo[r] = i
        hi[r] = max(i, j)


@njit(**NUMBA_FLAGS)
def _searched_ranges(cand, ts, wt, W, order, start, end, c0, c1, r0, r1, lo, hi):
    """:func:`_read_ranges` with each bound searched in the partition."""
    # the last bounds searched and their indexes: a bound is searched only when it changes (a buffer
    # in end order holds each end's records together: one search for their upper bound), from
    # the last one's index (each end's first events ascend, and the ends are close)
    lb, ib, la, ja = -1, c0, -1, c0
    for r in range(r0, r1):
        pb, pa = lo[r], hi[r]
        if c0 == c1:
            lo[r] = hi[r] = c0
            continue
        if pb >= 0:
            # before(u, e): strict except under nondecreasing_ts
            if pb != lb:
                ib = _first_after_near(cand, ts, c0, c1, pb, order, order != 2, ib)
                lb = pb
            i = ib
        else:
            i = _first_in_window_from(cand, wt, c0, c1, end[r], W)
        if pa >= 0:
            # before(e, w): e's index ends at the first event not before w, searched over the
            # partition (the first at or past i is then the later of the two)
            if pa != la:
                ja = _first_after_near(cand, ts, c0, c1, pa, order, order == 2, ja)
                la = pa
            j = ja
        else:
            j = _first_out_of_window_from(cand, wt, i, c1, start[r], W)
        lo[r] = i
        hi[r] = max(i, j)


@njit(**NUMBA_FLAGS)
def _in_record(pos, r, e):
    """Whether event ``e`` is one of record r's own (a row of ``pos``).  Indexed in place: a row view
    ``pos[r]`` per record costs its reference counting (simpleNot x100's 268,700 records: ~2.6 ms of
    a 3.6 ms loop)."""
    for j in range(pos.shape[1]):
        if pos[r, j] == e:
            return True
    return False


@njit(**NUMBA_FLAGS)
def _any_outside(pos, lo, hi, cand, killed):
    """killed[r]: some candidate in [lo[r], hi[r]) is not one of record r's own events; False at the
    first range outside ``cand``."""
    for r in range(len(lo)):
        if not (0 <= lo[r] and hi[r] <= len(cand)):
            return False
        for i in range(lo[r], hi[r]):  # at most (record width + 1) steps: the record's events are distinct
            if not _in_record(pos, r, cand[i]):
                killed[r] = True
                break
    return True


@njit(**NUMBA_FLAGS)
def _pairs_end(lo, hi, skip, r0, budget, n_cand):
    """The record after the chunk that starts at r0 and holds about ``budget`` pairs, and its size;
    size -1 at a range that is not inside [0, n_cand) (the pairs pass then never runs)."""
    m = len(lo)
    n = 0
    r = r0
    while r < m and n < budget:
        if not (0 <= lo[r] <= hi[r] <= n_cand):
            return r, -1
        if not skip[r]:
            n += hi[r] - lo[r]
        r += 1
    return r, n


@njit(**NUMBA_FLAGS)
def _pair_rows(pos, lo, hi, cand, skip, r0, r1, cols, rec, P):
    """Fill (record, event) pairs of records [r0, r1), the records ``skip`` marks (already decided)
    left out: pair k's record in rec[k], its event in P[t, k] where ``cols[t]`` is negative and its
    record's column ``cols[t]`` elsewhere; returns how many."""
    k = 0
    for q in range(r0, r1):
        if skip[q]:
            continue
        for i in range(lo[q], hi[q]):
            e = cand[i]
            if _in_record(pos, q, e):
                continue
            rec[k] = q
            for t in range(len(cols)):
                c = cols[t]
                P[t, k] = e if c < 0 else pos[q, c]
            k += 1
    return k


_RANKED = 8
"""negation_ranges answers the bounds' searches for every position first (two passes over the events)
when there is one partition and at least one record per _RANKED events: a search per record costs a
record more than reading an answer (simpleNot x100, perf/notes/opencep.md: 268,700 records, 136,500
events)."""


def negation_ranges(buf, leaf, ts, wt, W: int, order: str, bcols, acols, in_conj: bool,
                    ranked: bool | None = None):
    """Per record of ``buf`` (pos, start, end, goff), the index range [lo, hi) of ``leaf`` (cand, cgoff).

    ``ranked``: whether the bounds are read from an answer per position (one partition only; None: by
    the rule of ``_RANKED``) or searched per record; the same ranges either way.

    Invariants (KernelInputError otherwise), checked here: ``pos`` has a row
    per record and the columns ``bcols`` / ``acols``, ``ts`` and ``wt`` one
    entry per event, both buffers the same number of partitions, and ``cand``
    positions of events (one pass over the leaf); checked by the kernel as it
    reads them: the partition offsets and each record's positions.  The
    ranges it returns lie in the record's partition of ``cand``.
    """
    pos, start, end, goff = buf
    cand, cgoff = leaf
    m, n = len(start), len(ts)
    if pos.ndim != 2 or pos.shape[0] != m or len(goff) != len(cgoff) or not len(goff):
        raise fail("negation_ranges", "the buffer's arrays do not have one entry per record, or the buffer "
                                      "and the leaf differ in partitions")
    check_lengths("negation_ranges", m, end=end)
    check_lengths("negation_ranges", n, wt=wt)
    bcols, acols = np.asarray(bcols, dtype=np.int64), np.asarray(acols, dtype=np.int64)
    check_index("negation_ranges", "bcols / acols", np.concatenate([bcols, acols]), pos.shape[1])
    check_index("negation_ranges", "cand", cand, n)
    code = ORDER_CODE[order]
    one = len(goff) == 2 and cgoff[0] == 0 and cgoff[1] == len(cand) and m
    if ranked is None:
        ranked = one and m * _RANKED >= n
    if ranked and one:
        # before(u, e) is strict except under nondecreasing_ts, before(e, w) the other way round
        lower_at, upper_at = empty(n, np.int64), empty(n, np.int64)
        _first_after_each(cand, ts, n, code, code != 2, lower_at)
        _first_after_each(cand, ts, n, code, code == 2, upper_at)
    else:
        lower_at = upper_at = np.zeros(0, np.int64)
    lo, hi = empty(m, np.int64), empty(m, np.int64)  # NumPy-allocated (kernels.alloc)
    if not _ranges(pos, start, end, goff, cand, cgoff, ts, wt, window_bound(W), code,
                   bcols, acols, bool(in_conj), lower_at, upper_at, lo, hi):
        raise fail("negation_ranges", f"partition offsets or record positions outside the arrays ({n} events)")
    return lo, hi


def killed_unconditionally(pos, lo, hi, cand):
    """Records with a candidate in range other than their own events (a negation without conditions).

    Invariants: ``pos``, ``lo`` and ``hi`` have one entry per record (checked
    here) and every range lies in ``cand`` (checked by the kernel per record).
    """
    check_lengths("killed_unconditionally", len(lo), pos=pos, hi=hi)
    killed = np.zeros(len(lo), dtype=np.bool_)  # NumPy-allocated (jitcep.kernels.alloc)
    if not _any_outside(pos, lo, hi, cand, killed):
        raise fail("killed_unconditionally", f"a range is outside the {len(cand)} candidates")
    return killed


def candidate_pairs(pos, lo, hi, cand, skip, r0: int, budget: int):
    """(record, event position) pairs of the ranges, the record's own events left out, and the next start record.

    The pairs a negation's conditions (or a Kleene closure's member-wise
    conjuncts) are tested on, about ``budget`` at a time.

    Invariants: ``pos``, ``lo``, ``hi`` and ``skip`` have one entry per record
    and ``r0`` is one of them (checked here); every range of the chunk lies in
    ``cand`` (checked by the sizing pass, before anything is written).
    """
    rec, ev, r1 = candidate_rows(pos, lo, hi, cand, skip, r0, budget, [-1])
    return rec, ev[0], r1


def candidate_rows(pos, lo, hi, cand, skip, r0: int, budget: int, cols):
    """:func:`candidate_pairs` with the positions a predicate reads: (records, P, next start record), P a
    (len(cols), pairs) matrix whose row t is the pair's event where ``cols[t]`` is negative, else its
    record's column ``cols[t]``: the rows of every conjunct's variables, written as the pairs are found
    (no array of events, no gather per conjunct).

    Invariants as :func:`candidate_pairs`', and ``cols`` within the record's columns (checked here).
    """
    check_lengths("candidate_rows", len(lo), pos=pos, hi=hi, skip=skip)
    cols = np.asarray(cols, dtype=np.int64)
    check_index("candidate_rows", "cols", cols, pos.shape[1], low=-1)
    if not 0 <= r0 <= len(lo):
        raise fail("candidate_rows", f"start record {r0} of {len(lo)}")
    r1, n = _pairs_end(lo, hi, skip, int(r0), int(budget), len(cand))
    if n < 0:
        raise fail("candidate_rows", f"record {r1}'s range is outside the {len(cand)} candidates")
    rec = empty(n, np.int64)  # NumPy-allocated (jitcep.kernels.alloc)
    P = empty(len(cols) * n, np.int64).reshape(len(cols), n)
    k = _pair_rows(pos, lo, hi, cand, skip, int(r0), r1, cols, rec, P)
    return rec[:k], P[:, :k], r1
