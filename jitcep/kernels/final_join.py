"""The final SEQ join written as the match table's rows, in canonical order (docs/semantics.md section 11).

At the root of a SEQ's join tree, with no predicate left to test on its pairs,
the join's output is the match table itself: instead of candidate pairs
(:func:`jitcep.kernels.join.seq_join`) read back to build records and then
sorted, :func:`seq_join_rows` counts the pairs ending at each position and
writes each end's rows once, in their place and already in order.  The join
is ZStream's SEQ join (section 4.4, Algorithm 1) with one leaf input; the
order of the rows within an end comes from scanning the other input in the
canonical order (a left leaf: event by event; a right leaf: the left records
put once in order of their first position by a counting sort).  Where the
window times follow the positions, as the engine's always do (checked, not
assumed), the pairs within the search bounds cannot fail the window: they are
counted and written without a test per pair (perf/notes/output_and_core.md, session 14).

Buffers, time arguments and the checks on partition offsets are those of
:mod:`jitcep.kernels.join`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from ..threads import partition_ranges, run_ranges
from .alloc import empty, scratch
from .checks import fail
from .join import ORDER_CODE, _before, _check, _checked, _first_after, _overlap, _timed
from .order import _INSERTION, _key_order, _sort_range
from .window import exceeds, window_bound


_NO_ROWS = np.zeros((0, 0), np.int64)  # the counting pass's matrix: no row, no column


@njit(**NUMBA_FLAGS)
def _within(lo, hi, W):
    """``not exceeds(lo, hi, W)`` (:func:`jitcep.kernels.window.exceeds`) without a branch: the uint64
    difference is formed either way and only read when ``hi > lo``."""
    return (hi <= lo) | (np.uint64(hi) - np.uint64(lo) <= W)


@njit(**NUMBA_FLAGS)
def _first_after_near(Len, Lten, lo, hi, x, tx, order):
    """:func:`~jitcep.kernels.join._first_after` by galloping from ``lo`` (probes lo, lo + 1, lo + 3,
    ..., then a binary search of the last step): the bound is a window's worth of left records past
    ``lo``, found among the few records after it rather than by halving the whole partition."""
    step = 1
    while True:
        p = lo + step - 1
        if p >= hi:
            return _first_after(Len, Lten, lo, hi, x, tx, order)
        if (Len[p] >= x) if order == 0 else ((Lten[p] > tx) if order == 2 else (Lten[p] >= tx)):
            return _first_after(Len, Lten, lo, p + 1, x, tx, order)
        lo = p + 1
        step *= 2


@njit(**NUMBA_FLAGS)
def _one_ascending_time(Lwst, Lwen, l0, l1):
    """Has each left record in [l0, l1) one window time (a leaf's), ascending?  Then every left record
    in [lo, hi) fits a right record's window (window times wst <= wen) when ``lo`` is within it (the EAT
    bound) and the last of them comes no later than wst: record l's span is wen - t_l <= wen - t_lo <= W.
    The kernels below then count and write such ranges whole instead of testing each pair."""
    for l in range(l0, l1):
        if Lwst[l] != Lwen[l] or (l > l0 and Lwen[l] < Lwen[l - 1]):
            return False
    return True


@njit(**NUMBA_FLAGS)
def _count_left_leaf(L, R, W, order, distinct, cap_max, at):
    # The counting pass of seq_join_rows with a left leaf: at[e + 1] += the pairs ending at position e
    # (the right record's end: outside nondecreasing_ts a left record ends before its right one starts).
    # Returns the number of pairs or a status: -1 past cap_max, -2 partition offsets outside the
    # records, -3 an end outside ``at``.
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    n = np.int64(0)
    for g in range(len(Lg) - 1):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        if not (0 <= l0 <= l1 <= len(Len) and 0 <= r0 <= r1 <= len(Ren)):
            return np.int64(-2)
        if l0 == l1:
            continue
        fits = not distinct and _one_ascending_time(Lwst, Lwen, l0, l1)
        lo = l0
        for r in range(r0, r1):
            e = Ren[r]
            if not 0 <= e < len(at) - 1:
                return np.int64(-3)
            rend = Rwen[r]
            # EAT (ZStream 4.3), as _seq_join (right records ascend by end)
            while lo < l1 and exceeds(Lwen[lo], rend, W):
                lo += 1
            hi = _first_after_near(Len, Lten, lo, l1, Rst[r], Rtst[r], order)
            if fits and Rwst[r] <= rend and (hi == lo or Lwen[hi - 1] <= Rwst[r]):
                cnt = hi - lo  # every one fits (_one_ascending_time)
            else:
                cnt = np.int64(0)
                for l in range(lo, hi):
                    # counted without a branch: whether a record in the range is past the window
                    # follows no pattern a branch predicts
                    ok = _within(min(Lwst[l], Rwst[r]), max(Lwen[l], rend), W)
                    if distinct and ok:
                        ok = not _overlap(Lpos[l], Rpos[r])
                    cnt += ok
            if n + cnt > cap_max:
                return np.int64(-1)
            at[e + 1] += cnt
            n += cnt
    return n


@njit(**NUMBA_FLAGS)
def _rows_left_leaf(L, R, W, order, distinct, src, key, at, rows):
    # The writing pass of seq_join_rows with a left leaf: ``at[e]`` is where end e's rows go (then
    # advanced past them); each end's rows are written once, in canonical order: the left records one by
    # one, each with the end's right records in the order of their columns.  Returns the number of rows
    # or a status: -2 partition offsets outside the records, -3 an end outside ``at``, -4 a run past
    # the matrix.  (One kernel: helpers taking the arrays made it 1.2x slower, perf/notes/output_and_core.md.)
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    k, kl = len(src), Lpos.shape[1]
    n = np.int64(0)
    # a run's right records in the order of their columns and their left bounds, grown as needed
    room = np.int64(_INSERTION)
    ordR, hiR = np.empty(room, np.int64), np.empty(room, np.int64)
    for g in range(len(Lg) - 1):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        if not (0 <= l0 <= l1 <= len(Len) and 0 <= r0 <= r1 <= len(Ren)):
            return np.int64(-2)
        if l0 == l1:
            continue
        fits = not distinct and _one_ascending_time(Lwst, Lwen, l0, l1)
        lo = l0
        a = r0
        while a < r1:
            e = Ren[a]  # the run [a, b) of right records ending at e
            b = a + 1
            while b < r1 and Ren[b] == e:
                b += 1
            if not 0 <= e < len(at) - 1:
                return np.int64(-3)
            rend = Rwen[a]
            while lo < l1 and exceeds(Lwen[lo], rend, W):
                lo += 1
            # left records are single events in position order, so left record by left record is
            # first position by first position (semantics section 11); for one, the rows differ in
            # the right record's columns alone: the run's right records sorted by them, in key order
            # (by insertion: a run is a handful), each with its bound
            m = b - a
            if m > room:
                room = max(m, 2 * room)
                ordR, hiR = np.empty(room, np.int64), np.empty(room, np.int64)
            top = lo
            for j in range(m):
                r = a + j
                i = j
                while i > 0:
                    y = ordR[i - 1]
                    c = 0
                    # the first right column in key order where r and y differ decides
                    while c < k and (src[key[c]] < kl or Rpos[r, src[key[c]] - kl] == Rpos[y, src[key[c]] - kl]):
                        c += 1
                    if c == k or Rpos[r, src[key[c]] - kl] > Rpos[y, src[key[c]] - kl]:
                        break
                    ordR[i], hiR[i] = y, hiR[i - 1]
                    i -= 1
                ordR[i] = r
                hiR[i] = _first_after_near(Len, Lten, lo, l1, Rst[r], Rtst[r], order)
                top = max(top, hiR[i])
            # suffixes: the bounds ascend in the sorted order (its first column is usually the
            # records' first event) and every pair below a bound fits (_one_ascending_time), so left
            # record l pairs with the sorted run from the first right record whose bound is above l
            suffixes = fits
            for j in range(m):
                r = ordR[j]
                if (j > 0 and hiR[j] < hiR[j - 1]) or not (
                        Rwst[r] <= rend and (hiR[j] == lo or Lwen[hiR[j] - 1] <= Rwst[r])):
                    suffixes = False
            d = at[e]
            if suffixes:
                j0 = 0
                for l in range(lo, top):
                    while hiR[j0] <= l:
                        j0 += 1
                    cnt = m - j0
                    if d + cnt > rows.shape[1]:
                        return np.int64(-4)
                    # column by column: a left column is one value repeated, a right one the run's slice
                    for c in range(k):
                        s = src[c]
                        if s < kl:
                            v = Lpos[l, s]
                            for jj in range(cnt):
                                rows[c, d + jj] = v
                        else:
                            for jj in range(cnt):
                                rows[c, d + jj] = Rpos[ordR[j0 + jj], s - kl]
                    d += cnt
            else:
                for l in range(lo, top):
                    for j in range(m):
                        r = ordR[j]
                        if l >= hiR[j] or exceeds(min(Lwst[l], Rwst[r]), max(Lwen[l], rend), W):
                            continue
                        if distinct and _overlap(Lpos[l], Rpos[r]):
                            continue
                        if d >= rows.shape[1]:
                            return np.int64(-4)
                        for c in range(k):
                            s = src[c]
                            rows[c, d] = Lpos[l, s] if s < kl else Rpos[r, s - kl]
                        d += 1
            n += d - at[e]
            at[e] = d
            a = b
    return n


@njit(**NUMBA_FLAGS)
def _fits_by_position(L, R, by_start, order, W, fits, at):
    """Per partition (``fits[g]``), for a right leaf: 1 when every left record that ends before a right
    event fits its window from the first left record starting in it on, 2 when besides the pairs of
    a right event can be counted by two pointers, else 0.  1 when the window times follow the
    positions: the left records' window times (wst <= wen) with wst ascending in ``by_start``'s order
    and wen in theirs, their ends (the order's key) ascending, the right events' single times
    ascending with their positions, and each right event's time at least the last left record ending
    before it.  Then a record l in the scan of right event r (its start at least the first's, which is
    within the window) spans rend - wst_l <= W, and only "ends before r" is tested.  2 when also the
    left records are within the window themselves (wen - wst <= W), start no later than they end,
    (outside ``position`` order) their first times ascend in ``by_start``'s order, and each right
    event's time is at most that of the first left record not ending before it: a record starting
    before the window then ends before r (else it would span more than W), so r's pairs are the
    records ending before it less those before the window in ``by_start``.  0 for a partition whose
    offsets are outside the records (the kernel reports them).

    Counted so as it goes: ``at[e + 1]`` the pairs ending at each right event's position e, and the
    number of them all returned, which hold when every partition says 2 (else ``at`` is to be cleared;
    a position outside ``at`` or two right events at one make the partition's answer 1 at most, and
    the kernel then reports them)."""
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    n = np.int64(0)
    for g in range(len(Lg) - 1):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        fits[g] = 0
        if not (0 <= l0 <= l1 <= min(len(Len), len(by_start)) and 0 <= r0 <= r1 <= len(Ren)):
            continue
        ok = counts = True
        for i in range(l0, l1):
            l, h = by_start[i], by_start[max(i - 1, l0)]
            if not (0 <= l < len(Len) and 0 <= h < len(Len)) or Lwst[l] > Lwen[l] or Lwst[l] < Lwst[h]:
                ok = False
                break
            if exceeds(Lwst[l], Lwen[l], W) or ((Lst[l] > Len[l]) if order == 0 else (
                    Ltst[l] > Lten[l] or Ltst[l] < Ltst[h])):
                counts = False
            if i > l0 and (Lwen[i] < Lwen[i - 1] or (Len[i] < Len[i - 1] if order == 0 else Lten[i] < Lten[i - 1])):
                ok = False
                break
        # the left records ending before right event r: [l0, p); before its window: by_start[l0:first)
        p = first = l0
        for r in range(r0, r1):
            if not ok:
                break
            if Rwst[r] != Rwen[r] or (r > r0 and (Rwen[r] < Rwen[r - 1] or (
                    Rst[r] < Rst[r - 1] if order == 0 else Rtst[r] < Rtst[r - 1]))):
                ok = False
            while p < l1 and _before(Len, Lten, p, Rst[r], Rtst[r], order):
                p += 1
            if p > l0 and Lwen[p - 1] > Rwst[r]:
                ok = False
            if p > l0 and Len[p - 1] >= Rst[r]:
                counts = False  # nondecreasing_ts: a record ends with r's time after it; the scan decides
            if p < l1 and Lwen[p] < Rwen[r]:
                counts = False
            e = Ren[r]
            if not (0 <= e < len(at) - 1) or (r > r0 and e == Ren[r - 1]):
                counts = False
            if counts:
                while first < l1 and exceeds(Lwst[by_start[first]], Rwen[r], W):
                    first += 1
                at[e + 1] = max(p - first, 0)
                n += at[e + 1]
        fits[g] = (1 + counts) if ok else 0
    return n


@njit(**NUMBA_FLAGS)
def _canonical_join_by_start(L, R, W, order, distinct, src, by_start, fits, cap_max, at, rows):
    # Both passes of seq_join_rows with a right leaf (``rows`` with no column: counting, as
    # _count_left_leaf; else writing, as _rows_left_leaf): each right record (one per end) with the left
    # records in the order ``by_start`` (partition, first position, then their columns: canonical order
    # within an end), scanned from the first starting in the window to the last starting before the
    # right event, both bounds moving forward only (starts and window times ascend in that order within
    # a partition, as ends do in the record order); a record that does not end before the right event
    # is skipped.  Both passes scan the same, so they find the same pairs (where _fits_by_position
    # counted them instead, seq_join_rows checks that the writing pass wrote as many).  Status as the
    # left-leaf kernels'; -4 also two right records ending at one position; -5 a pair whose left record
    # does not end at a position before the right event (nondecreasing_ts: a tie in time), so that the
    # right event is not the match's last: the rows would not be this end's.
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    G = len(Lg) - 1
    k, kl = len(src), Lpos.shape[1]
    writing = rows.shape[1] > 0
    n = np.int64(0)
    picked = np.empty(_INSERTION, np.int64)  # the left records pairing with the right one, grown as needed
    for g in range(G):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        if not (0 <= l0 <= l1 <= len(Len) and 0 <= r0 <= r1 <= len(Ren) and l1 <= len(by_start)):
            return np.int64(-2)
        first = last = l0  # the scanned range of by_start
        fit = fits[g] >= 1 and not distinct
        for r in range(r0, r1):
            e = Ren[r]
            if not 0 <= e < len(at) - 1:
                return np.int64(-3)
            if r > r0 and e == Ren[r - 1]:
                return np.int64(-4)
            rend = Rwen[r]
            while first < l1 and exceeds(Lwst[by_start[first]], rend, W):
                first += 1
            last = max(last, first)
            while last < l1 and _before(Lst, Ltst, by_start[last], Rst[r], Rtst[r], order):  # starts before r
                last += 1
            if last - first > len(picked):
                picked = np.empty(2 * (last - first), np.int64)
            cnt = np.int64(0)
            late = False
            for i in range(first, last):
                l = by_start[i]
                if not 0 <= l < len(Len):
                    return np.int64(-2)
                ok = _before(Len, Lten, l, Rst[r], Rtst[r], order)
                if not fit:  # else it fits the window if it ends before r (_fits_by_position)
                    ok = ok and _within(min(Lwst[l], Rwst[r]), max(Lwen[l], rend), W)
                if distinct and ok:
                    ok = not _overlap(Lpos[l], Rpos[r])
                picked[cnt] = l  # kept only if it pairs: no branch on ``ok`` (nor on ``writing``: 1.2x)
                cnt += ok
                late |= ok & (Len[l] >= Rst[r])  # only under nondecreasing_ts
            if late:
                return np.int64(-5)
            if writing:
                d = at[e]
                if d + cnt > rows.shape[1]:
                    return np.int64(-4)
                # column by column: a right column is one value repeated, a left one read through
                # ``picked`` (no branch per pair and column)
                for c in range(k):
                    s = src[c]
                    if s < kl:
                        for t in range(cnt):
                            rows[c, d + t] = Lpos[picked[t], s]
                    else:
                        v = Rpos[r, s - kl]
                        for t in range(cnt):
                            rows[c, d + t] = v
                at[e] = d + cnt
            elif n + cnt > cap_max:
                return np.int64(-1)
            else:
                at[e + 1] += cnt
            n += cnt
    return n


@njit(**NUMBA_FLAGS)
def _start_order(Lpos, Lst, Lg, cols, count, part, tmp, by_start):
    # The left records by (partition, first position, columns ``cols`` in turn) into ``by_start``:
    # counted out by first position (stable: O(records + positions)), then by partition when there are
    # several (stable again; each partition's records keep their place, Lg), then each first position's
    # records sorted by the columns (_sort_range: nothing moves when they come in order).  False: a
    # first position outside ``count`` or partition offsets outside the records.
    m, G = len(Lst), len(Lg) - 1
    if Lg[0] != 0 or Lg[G] != m:
        return False
    count[:] = 0
    for i in range(m):
        if not 0 <= Lst[i] < len(count) - 1:
            return False
        count[Lst[i] + 1] += 1
    for p in range(1, len(count)):
        count[p] += count[p - 1]
    out = by_start if G == 1 else tmp
    ordered = True  # each record after the one before it at its first position, by the columns
    for i in range(m):
        slot = count[Lst[i]]
        out[slot] = i
        count[Lst[i]] += 1
        # slot - 1 holds the record before i at its first position, unless i is the first there: then
        # another position's record or nothing yet (any value: one in [0, i) at i's first position only
        # costs the sort below)
        y = out[slot - 1] if slot > 0 else -1
        if ordered and 0 <= y < i and Lst[y] == Lst[i]:
            c = 0
            while c < len(cols) and Lpos[i, cols[c]] == Lpos[y, cols[c]]:
                c += 1
            ordered = c == len(cols) or Lpos[i, cols[c]] > Lpos[y, cols[c]]
    if G > 1:
        for g in range(G):
            if not 0 <= Lg[g] <= Lg[g + 1] <= m:
                return False
            part[Lg[g]:Lg[g + 1]] = g
            count[g] = Lg[g]
        for i in range(m):
            g = part[tmp[i]]
            by_start[count[g]] = tmp[i]
            count[g] += 1
    if ordered:  # as a join below writes its records (by end, then start): no run to sort
        return True
    K0 = np.empty((m, 0), np.int64)
    a = 0
    while a < m:
        b = a + 1
        while b < m and Lst[by_start[b]] == Lst[by_start[a]]:
            b += 1
        if b - a > 1:
            _sort_range(by_start, np.int64(a), np.int64(b), Lst, Lst, Lpos, cols, K0, tmp)
        a = b
    return True


def _right_leaf_counts(Lt, Rt, src, key, kl: int, n_events: int, code: int, W: int, distinct: bool):
    """For :func:`seq_join_rows` over a right leaf: (by_start, fits, at, pairs): the left records in their order
    within an end (first position, then their columns in ``key`` order), each partition's fit
    (:func:`_fits_by_position`), the per-position counts zeroed or already counted, and the pairs when
    the pointers counted them all (None: the counting pass scans the records)."""
    m = len(Lt[2])
    by_start, tmp = empty(m, np.int64), scratch("seq_join_rows_tmp", m, np.int64)
    part = scratch("seq_join_rows_part", m if len(Lt[3]) > 2 else 0, np.int64)
    cols = np.array([src[c] for c in key if src[c] < kl], np.int64)
    starts = scratch("seq_join_rows_starts", max(int(n_events), len(Lt[3])) + 1, np.int64)
    if not _start_order(Lt[0], Lt[1], Lt[3], cols, starts, part, tmp, by_start):
        raise fail("seq_join_rows", f"a position not below {n_events}, or partition offsets outside the records")
    fits = np.zeros(len(Lt[3]) - 1, np.int8)
    at = scratch("seq_join_rows_at", int(n_events) + 1, np.int64)
    at[:] = 0
    pairs = _fits_by_position(Lt, Rt, by_start, code, W, fits, at)
    if distinct or not (fits == 2).all():
        at[:], pairs = 0, None  # counted by scanning the records
    return by_start, fits, at, pairs


def seq_join_rows(L, R, ts, wt, W: int, order: str, distinct: bool, cap: int, src, n_events: int,
                  key=None, threads: int = 1) -> tuple[np.ndarray, bool] | None:
    """The matches that are the pairs of :func:`~jitcep.kernels.join.seq_join`, in canonical order
    (docs/semantics.md section 11), when one input is a leaf (one-event records): a C-ordered
    (len(src), pairs) matrix, row c column ``src[c]`` of each pair's left record's positions then its
    right one's; ``src`` names every column once (the match's first and last events are its rows').
    With it, True when no position written is unbound (negative) because no record's is: the output
    then needs no pass over the rows to know it (False: it may be).
    ``key``: the rows in the order the
    canonical order compares them (the variables' name order), a permutation of ``range(len(src))``;
    None: row order.  For the join at the root with no predicate left to test: no pair arrays are
    written and read back, and the rows are written once, in their place (6.65M matches: 107 MB of
    pairs, then a pass re-reading and sorting 160 MB of rows, perf/notes/output_and_core.md).

    The join runs twice: counting the pairs ending at each position (below ``n_events``), then writing
    each end's rows where the earlier ends' leave off, so key partitions come out merged by end with no
    sort.  With a right leaf whose window times follow the positions the count takes no pass over the
    pairs: :func:`_fits_by_position` counts them by two pointers as it checks the partitions.  Each
    end's rows are written in order: with a left leaf (its records in position order), left event by
    left event, each with the end's right records sorted by their columns; with a right leaf, the end's
    one right record with its left records scanned in their order by first position and columns, put
    in that order once for the whole join (:func:`_start_order`, a counting sort), from the first
    starting within the window to the last starting before the right event (the records in between
    that do not end before it are skipped; no sort per end).  ``threads``: the partitions are split
    into up to that many ranges joined side by side (their ends, and so their rows, are disjoint).

    Each end's matches are its right records' only where a left record ends at a position before its
    right one starts, as ``position`` and ``strict_ts`` say.  Under ``nondecreasing_ts`` a left record
    may end at the right event's time but after it (a tie): a match's last event is then the left
    record's.  There the right input must be a leaf, and the join returns None (having written
    nothing the caller sees) at the first pair whose left record does not end before its right event's
    position: its matches are then to be ordered from the pairs (the events of a table sorted by time
    with ties in a fixed order of types, as OpenCEP's files are, have none).  Each end position in one
    partition (an event has one key), as the engine's buffers have.  Invariants and ``cap`` as
    :func:`~jitcep.kernels.join.seq_join`'s; neither input a leaf (or, under ``nondecreasing_ts``, the
    right one not a leaf), a column of ``src`` outside the records or named twice, ``key`` no
    permutation, a position not below ``n_events`` or two records of a leaf at one position is a
    KernelInputError.
    """
    Lt, Rt = _checked("a SEQ join", _timed(L, ts, wt), _timed(R, ts, wt))
    if order == "nondecreasing_ts" and Rt[1] is not Rt[2]:
        raise fail("seq_join_rows", "under nondecreasing_ts a left record may end after its right one")
    src = np.ascontiguousarray(src, dtype=np.int64)
    kl, width = Lt[0].shape[1], Lt[0].shape[1] + Rt[0].shape[1]
    if sorted(src.tolist()) != list(range(width)):
        raise fail("seq_join_rows", f"the columns {src.tolist()} are not the pairs' {width} columns, once each")
    key = _key_order("seq_join_rows", key, len(src))
    W, code, distinct, cap = window_bound(W), ORDER_CODE[order], bool(distinct), int(cap)
    if Lt[1] is Lt[2] and order != "nondecreasing_ts":
        at, pairs = scratch("seq_join_rows_at", int(n_events) + 1, np.int64), None
        at[:] = 0

        def run(Lr, Rr, g0, g1, at, rows):  # partitions [g0, g1); rows None: the counting pass
            if rows is None:
                return _count_left_leaf(Lr, Rr, W, code, distinct, cap, at)
            return _rows_left_leaf(Lr, Rr, W, code, distinct, src, key, at, rows)
    else:
        if Rt[1] is not Rt[2]:
            raise fail("seq_join_rows", "neither input is a leaf")
        by_start, fits, at, pairs = _right_leaf_counts(Lt, Rt, src, key, kl, n_events, code, W, distinct)

        def run(Lr, Rr, g0, g1, at, rows):
            return _canonical_join_by_start(Lr, Rr, W, code, distinct, src, by_start, fits[g0:g1], cap, at,
                                            _NO_ROWS if rows is None else rows)

    Lg, Rg = Lt[3], Rt[3]
    ranges = partition_ranges((Lg, Rg), threads)

    def join(g0: int, g1: int, rows):  # the pairs or rows of partitions [g0, g1); None: a late left record
        Lr, Rr = (*Lt[:3], Lg[g0:g1 + 1], *Lt[4:]), (*Rt[:3], Rg[g0:g1 + 1], *Rt[4:])
        status = run(Lr, Rr, g0, g1, at, rows)
        if status == -3:
            raise fail("seq_join_rows", f"a position is not below {n_events}")
        if status == -4:
            raise fail("seq_join_rows", "two records of a leaf at one position, or an end in two partitions")
        if status == -5:
            return None
        _check(status, "a SEQ join", cap)
        return status

    def passes(rows):  # the pairs over all ranges, or None
        done = run_ranges(lambda g0, g1: join(g0, g1, rows), ranges)
        return None if any(d is None for d in done) else sum(done)

    m = passes(None) if pairs is None else int(pairs)
    if m is None:
        return None
    if m > cap:
        _check(-1, "a SEQ join", cap)
    rows = empty(len(src) * m, np.int64).reshape(len(src), m)
    if m:
        np.cumsum(at, out=at)  # at[e]: the rows ending before e
        written = passes(rows)
        if written is None:
            return None
        if written != m:  # no row left unwritten
            raise fail("seq_join_rows", "the pairs counted are not those written")
    # every row a record's position: none is unbound when no record's is (a pass over the records, not
    # over the rows: 3 times fewer on core_seq3, perf/notes/output_and_core.md)
    return rows, not m or (Lt[0].min(initial=0) >= 0 and Rt[0].min(initial=0) >= 0)
