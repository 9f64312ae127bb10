"""A closure's lists at the plan's root written straight into canonical order (docs/semantics.md section
11), without the permutation :func:`jitcep.kernels.order.canonical_order` makes: each list is copied to
its end's place (ZStream section 4.2: buffers by end time, a counting pass per last position), with its
record's single columns and the lists its record holds, and checked there against the one before it as
it is written; an end found out of order is sorted afterwards with the canonical order's merge
(:func:`jitcep.kernels.order._sort_keyed`).  Entry point :func:`lists_in_end_order`, from
:func:`jitcep.matches.closure_table`.

The wrapper checks every index the kernels use (:mod:`jitcep.kernels.checks`): the rows and column
numbers against the records' matrix, the offsets inside the members.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty, scratch
from .checks import check_index, check_lengths, check_offsets, fail
from .list_columns import _list_key, take_lists
from .order import _BUCKETS, _BUCKETS_MIN, _NO_LOW, _sort_keyed


@njit(**NUMBA_FLAGS)
def _closure_ends(P, rows, cols, off, pos, ends):
    # Lists and members per last position (``ends[h + 2, 0]`` and ``[h + 2, 1]``, prefix summed: the first
    # slot of bucket h + 1; h = -1, nothing bound, first).  A list's last position is over its record's
    # single columns and its members, of which it reads the first and last: they ascend after the first.
    # (Written out here, in _lists_by_end and in the held-list kernels _held_ends / _held_lists_by_end: a
    # helper called per list, with its arrays, costs several times the loop.)
    ends[:, :2] = 0
    for j in range(len(rows)):
        h = np.int64(-1)
        r = rows[j]
        for c in cols:
            h = max(h, P[r, c])
        s, e = off[j], off[j + 1]
        if s < e:
            h = max(h, max(pos[s], pos[e - 1]))
        ends[h + 2, 0] += 1
        ends[h + 2, 1] += e - s
    for b in range(1, ends.shape[0]):
        ends[b, 0] += ends[b - 1, 0]
        ends[b, 1] += ends[b - 1, 1]


@njit(**NUMBA_FLAGS)
def _lists_by_end(P, rows, cols, off, pos, ends, bad, single, new_off, out):
    # Each list written where its end's bucket puts it (stably: in list order within an end): its
    # record's single columns, its offset and its members.  Per bucket, one row of ``ends``: its next
    # slot, its next member, the record and the first position of the list written last.  Each list is
    # compared with the one before it in its bucket as it is written: by first position, then, if that
    # is another record's, by single columns and lists (a record's own lists come in order of their
    # lists, which is their order at one end and one first position); a bucket found out of order
    # (``bad``) is sorted once every list is written.  Each list's first / last position is read off its
    # single columns and its first two and last members, as its members after the first ascend.
    n, kc = len(rows), len(cols)
    ends[:, 2] = -1
    bad[:] = False
    for j in range(n):
        r = rows[j]
        h, a = np.int64(-1), _NO_LOW
        for c in cols:
            x = P[r, c]
            h = max(h, x)
            if 0 <= x < a:
                a = x
        s, e = off[j], off[j + 1]
        if s < e:
            h = max(h, max(pos[s], pos[e - 1]))
            a = min(a, pos[s])
            if e - s > 1:
                a = min(a, pos[s + 1])
        b = h + 1
        d, m = ends[b, 0], ends[b, 1]
        if ends[b, 2] >= 0 and not bad[b]:
            w = ends[b, 3]  # is the list before (d - 1) before this one?
            if a != w:
                bad[b] = a < w
            elif ends[b, 2] != r:
                tied = True
                for c in range(kc):
                    x, y = single[c, d - 1], P[r, cols[c]]
                    if x != y:
                        bad[b] = y < x
                        tied = False
                        break
                if tied:  # lexicographically, a proper prefix first
                    p, q = new_off[d - 1], s
                    while p < m and q < e and out[p] == pos[q]:
                        p += 1
                        q += 1
                    bad[b] = q == e or (p < m and pos[q] < out[p])
        ends[b, 0], ends[b, 2], ends[b, 3] = d + 1, r, a
        new_off[d] = m
        for i in range(s, e):
            out[m] = pos[i]
            m += 1
        ends[b, 1] = m
        for c in range(kc):
            single[c, d] = P[r, cols[c]]
    new_off[n] = off[n] - off[0]
    for b in range(ends.shape[0]):
        if bad[b]:
            _sort_end(single, new_off, out, ends[b - 1, 0] if b else 0, ends[b, 0])


@njit(**NUMBA_FLAGS)
def _sort_end(single, new_off, out, i, j):
    # lists i..j-1 (one end's, out of order) sorted by first position, single columns and lists
    # (_sort_keyed) and written back in that order
    kc = single.shape[0]
    T = np.empty((j - i, 1 + kc), np.int64)
    rr, rperm, rtmp = np.empty(j - i, np.int64), np.empty(j - i, np.int64), np.empty(j - i, np.int64)
    bounds, back = np.empty(j - i + 1, np.int64), np.empty(j - i, np.int64)
    for t in range(j - i):
        a = _NO_LOW
        for c in range(kc):
            x = single[c, i + t]
            T[t, 1 + c] = x
            if 0 <= x < a:
                a = x
        s, e = new_off[i + t], new_off[i + t + 1]
        if s < e:
            a = min(a, out[s])
            if e - s > 1:
                a = min(a, out[s + 1])
        T[t, 0] = a
        rr[t] = i + t
    if _sort_keyed(T, j - i, 1 + kc, rr, new_off, out, rperm, rtmp, bounds):
        _rewrite_end(single, new_off, out, rperm, back, np.empty(new_off[j] - new_off[i], np.int64), i, j)


@njit(**NUMBA_FLAGS)
def _rewrite_end(single, new_off, out, rperm, back, mtmp, i, j):
    # lists i..j-1 written back in the order rperm (relative to i): their single columns, their members
    # (through mtmp, the end's members) and the offsets between them
    n = j - i
    for c in range(single.shape[0]):
        for t in range(n):
            back[t] = single[c, i + rperm[t]]
        for t in range(n):
            single[c, i + t] = back[t]
    w = np.int64(0)
    for t in range(n):
        r = i + rperm[t]
        back[t] = new_off[r + 1] - new_off[r]
        for x in range(new_off[r], new_off[r + 1]):
            mtmp[w] = out[x]
            w += 1
    m0 = new_off[i]
    for x in range(w):
        out[m0 + x] = mtmp[x]
    for t in range(n - 1):
        new_off[i + t + 1] = new_off[i + t] + back[t]


@njit(**NUMBA_FLAGS)
def _held_ends(P, rows, cols, off, pos, rlo, rhi, ends):
    # _closure_ends where the records hold lists (closures collected below the root): a list's last
    # position is also over its record's held lists (``rhi``).  Returns whether, taken in list order, each
    # end's lists come in order of their first positions (over its record's columns and held lists
    # ``rlo`` and its first two members, as _held_lists_by_end reads it; ``ends[h + 2, 3]``: the last
    # one's), where the records need not be visited by first position (_visit_order).
    ends[:, :2] = 0
    ends[:, 3] = -1
    ordered = True
    for j in range(len(rows)):
        r = rows[j]
        h, a = rhi[r], rlo[r]
        for c in cols:
            x = P[r, c]
            h = max(h, x)
            if 0 <= x < a:
                a = x
        s, e = off[j], off[j + 1]
        if s < e:
            h = max(h, max(pos[s], pos[e - 1]))
            a = min(a, pos[s])
            if e - s > 1:
                a = min(a, pos[s + 1])
        if a < ends[h + 2, 3]:
            ordered = False
        ends[h + 2, 3] = a
        ends[h + 2, 0] += 1
        ends[h + 2, 1] += e - s
    for b in range(1, ends.shape[0]):
        ends[b, 0] += ends[b - 1, 0]
        ends[b, 1] += ends[b - 1, 1]
    return ordered


@njit(**NUMBA_FLAGS)
def _record_key_less(r, s, koff, kseq):
    # records r and s compared by their held lists' key (kseq[koff[r]:koff[r + 1]], a proper prefix
    # first): -1 (r's first), 1 (s's first) or 0 (equal)
    i, e = koff[r], koff[r + 1]
    j, f = koff[s], koff[s + 1]
    while i < e and j < f:
        a, b = kseq[i], kseq[j]
        if a != b:
            return -1 if a < b else 1
        i += 1
        j += 1
    return 0 if (i == e and j == f) else (-1 if i == e else 1)


@njit(**NUMBA_FLAGS)
def _held_lists_by_end(P, rows, cols, off, pos, rlo, rhi, boff, bkey, aoff, akey, seg, ends, bad, single, new_off,
                       out):
    # _lists_by_end where the records hold lists (closures collected below the root): each list's record
    # is written too (the last row of ``single``, for the held lists' copy), its first / last position is
    # also over its record's held lists (``rlo`` / ``rhi``), and two records' lists tied on first position
    # and single columns compare by the held lists before the closure's by name (``bkey``: each record's
    # key), then the closure's lists, then the held lists after it (``akey``).  The lists are visited in
    # the ranges ``seg`` (pairs: start, stop; each whole records' lists), in list order or the records by
    # first position (_visit_order).
    n, kc = len(rows), len(cols)
    ends[:, 2] = -1
    bad[:] = False
    for g in range(len(seg) // 2):
        for j in range(seg[2 * g], seg[2 * g + 1]):
            r = rows[j]
            h, a = rhi[r], rlo[r]
            for c in cols:
                x = P[r, c]
                h = max(h, x)
                if 0 <= x < a:
                    a = x
            s, e = off[j], off[j + 1]
            if s < e:
                h = max(h, max(pos[s], pos[e - 1]))
                a = min(a, pos[s])
                if e - s > 1:
                    a = min(a, pos[s + 1])
            b = h + 1
            d, m = ends[b, 0], ends[b, 1]
            w = ends[b, 2]  # the record of the list before (d - 1) in this end
            if w >= 0 and not bad[b]:
                u = ends[b, 3]  # is the list before this one?
                if a != u:
                    bad[b] = a < u
                elif w != r:
                    tied = True
                    for c in range(kc):
                        x, y = single[c, d - 1], P[r, cols[c]]
                        if x != y:
                            bad[b] = y < x
                            tied = False
                            break
                    if tied:
                        k = _record_key_less(r, w, boff, bkey)
                        if k != 0:
                            bad[b] = k < 0
                            tied = False
                    if tied:  # lexicographically, a proper prefix first
                        p, q = new_off[d - 1], s
                        while p < m and q < e and out[p] == pos[q]:
                            p += 1
                            q += 1
                        if q == e and p == m:
                            bad[b] = _record_key_less(r, w, aoff, akey) < 0
                        else:
                            bad[b] = q == e or (p < m and pos[q] < out[p])
            ends[b, 0], ends[b, 2], ends[b, 3] = d + 1, r, a
            new_off[d] = m
            for i in range(s, e):
                out[m] = pos[i]
                m += 1
            ends[b, 1] = m
            for c in range(kc):
                single[c, d] = P[r, cols[c]]
            single[kc, d] = r
    new_off[n] = off[n] - off[0]
    _sort_held_ends(ends, bad, single, kc, new_off, out, rlo, boff, bkey, aoff, akey)


@njit(**NUMBA_FLAGS)
def _sort_held_ends(ends, bad, single, kc, new_off, out, rlo, boff, bkey, aoff, akey):
    # every end found out of order sorted (_sort_held_end), in buffers sized once for the largest (an
    # allocation per end cost more than the sort where half the ends of 17,280 are out of order)
    most, mem, key = 0, 0, 0
    for b in range(ends.shape[0]):
        if bad[b]:
            i, j = ends[b - 1, 0] if b else 0, ends[b, 0]
            most = max(most, j - i)
            mem = max(mem, new_off[j] - new_off[i])
            k = new_off[j] - new_off[i] + j - i
            for t in range(i, j):
                r = single[kc, t]
                k += boff[r + 1] - boff[r] + aoff[r + 1] - aoff[r]
            key = max(key, k)
    if most == 0:
        return
    T = np.empty((most, 1 + kc), np.int64)
    rr, rperm, rtmp, back = (np.empty(most, np.int64), np.empty(most, np.int64), np.empty(most, np.int64),
                             np.empty(most, np.int64))
    bounds, koff = np.empty(most + 1, np.int64), np.empty(most + 1, np.int64)
    mtmp, kseq = np.empty(mem, np.int64), np.empty(key, np.int64)
    for b in range(ends.shape[0]):
        if bad[b]:
            _sort_held_end(single, kc, new_off, out, rlo, boff, bkey, aoff, akey, ends[b - 1, 0] if b else 0,
                           ends[b, 0], T, rr, rperm, rtmp, back, bounds, koff, kseq, mtmp)


@njit(**NUMBA_FLAGS)
def _sort_held_end(single, kc, new_off, out, rlo, boff, bkey, aoff, akey, i, j, T, rr, rperm, rtmp, back, bounds,
                   koff, kseq, mtmp):
    # lists i..j-1 (one end's, out of order; their records in row kc of ``single``) sorted by first
    # position, single columns (the first kc rows) and key (_sort_keyed) and written back in that order
    # (_rewrite_end, every row of ``single``).  A list's key, built in ``koff`` / ``kseq``: its record's
    # held lists before the closure's, its list and a separator, its record's held lists after it.  The
    # other arrays are buffers at least as long as the end (``mtmp``: its members).
    koff[0] = 0
    w = np.int64(0)
    for t in range(j - i):
        r = single[kc, i + t]
        a = rlo[r]
        for c in range(kc):
            x = single[c, i + t]
            T[t, 1 + c] = x
            if 0 <= x < a:
                a = x
        s, e = new_off[i + t], new_off[i + t + 1]
        if s < e:
            a = min(a, out[s])
            if e - s > 1:
                a = min(a, out[s + 1])
        T[t, 0] = a
        rr[t] = t
        for x in range(boff[r], boff[r + 1]):
            kseq[w] = bkey[x]
            w += 1
        for x in range(s, e):
            kseq[w] = out[x]
            w += 1
        kseq[w] = -1
        w += 1
        for x in range(aoff[r], aoff[r + 1]):
            kseq[w] = akey[x]
            w += 1
        koff[t + 1] = w
    if _sort_keyed(T, j - i, 1 + kc, rr, koff, kseq, rperm, rtmp, bounds):
        _rewrite_end(single, new_off, out, rperm, back, mtmp, i, j)


@njit(**NUMBA_FLAGS)
def _visit_order(P, rows, cols, rlo, top, count, first, at, by, seg):
    # The ranges of lists _held_lists_by_end visits where an end's lists do not come in order of their first
    # positions in list order (pairs start, stop in ``seg``; returns how many entries): each record's
    # lists, the records stably by first position over their single columns and held lists ``rlo`` (a
    # counting sort; one with none bound last).  Lists of different records then share an end mostly in
    # order (TwoKL x20: 8,320 of its 17,280 ends out of order in list order, none so)
    # (``count``, ``first``, ``at``, ``by``: buffers of m + 1, m, top + 3 and m entries, the run's pool's)
    m, n = P.shape[0], len(rows)
    count[:] = 0
    at[:] = 0
    for j in range(n):
        count[rows[j] + 1] += 1
    for r in range(m):
        count[r + 1] += count[r]
        a = rlo[r] if len(rlo) else _NO_LOW
        for c in cols:
            x = P[r, c]
            if 0 <= x < a:
                a = x
        first[r] = min(a, top + 1)
        at[first[r] + 1] += 1
    for b in range(1, top + 3):
        at[b] += at[b - 1]
    for r in range(m):
        by[at[first[r]]] = r
        at[first[r]] += 1
    k = 0
    for t in range(m):
        r = by[t]
        if count[r + 1] > count[r]:
            seg[k], seg[k + 1] = count[r], count[r + 1]
            k += 2
    return k


def _held_keys(name: str, m: int, held) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(koff, kseq, lo, hi): each of the m records' key over the CSR lists ``held`` (one list per record;
    :func:`~jitcep.kernels.list_columns.list_key`'s parts end to end), and its first / last member over them."""
    lo, hi, size = empty(m, np.int64), empty(m, np.int64), empty(m, np.int64)  # the run's pool: no fresh pages
    lo.fill(_NO_LOW)
    hi.fill(-1)
    size.fill(len(held))
    for off, pos in held:
        off = np.ascontiguousarray(off, dtype=np.int64)
        check_offsets(name, "a held list's offsets", off, len(pos))
        check_lengths(name, m + 1, held_offsets=off)
        size += np.diff(off)
    koff = empty(m + 1, np.int64)
    koff[0] = 0
    np.cumsum(size, out=koff[1:])
    kseq = empty(int(koff[-1]), np.int64)
    at = size  # (each record's key starts where koff says)
    at[:] = koff[:-1]
    for off, pos in held:
        _list_key(np.ascontiguousarray(off, dtype=np.int64), np.ascontiguousarray(pos, dtype=np.int64),
                  np.zeros(0, np.bool_), False, at, kseq, lo, hi)
    return koff, kseq, lo, hi


def lists_in_end_order(P: np.ndarray, rows: np.ndarray, cols: np.ndarray, off: np.ndarray, pos: np.ndarray,
                       before=(), after=()) -> tuple[np.ndarray, np.ndarray, np.ndarray, list] | None:
    """A closure's lists at the plan's root written straight into canonical order (semantics section 11):
    ``(single, new_off, members, held)``, where row c of the C-ordered (len(cols), n) ``single`` is column
    ``cols[c]`` of the matches' records, ``new_off`` / ``members`` their lists (CSR) and ``held`` the
    records' held lists (``before``, then ``after``), each as CSR (offsets, members) per match; None when
    the positions lie far beyond the lists' count (the rule of ``_BUCKETS``:
    :func:`~jitcep.kernels.order.canonical_order` sorts those instead).

    List j belongs to record ``rows[j]`` of ``P`` ((records, k) positions, -1 unbound; ``cols``: the
    single variables' columns, in name order) and is CSR list j of ``off`` into ``pos``.  ``before`` /
    ``after``: the lists the records hold already (closures collected below the root, all bound), one CSR
    (offsets, members) per list variable, a list per record of ``P``, for the variables named before /
    after the closure's, in name order: each match repeats its record's.  The caller knows what a
    closure's lists make true (:mod:`jitcep.execute.kleene`, checked under its ``CHECK_ORDER``): ``rows``
    ascend and each record's lists come in order (depth first), and a list's members after its first
    ascend, so its first and last positions are read off its ends.  Then the order is a bucketing by last
    position (ZStream section 4.2: buffers by end time) that writes each list, its members and its
    record's columns straight to their place, and each end's lists are only checked in place, sorted
    where two records' lists are out of order.  This replaces
    :func:`~jitcep.kernels.order.canonical_order`'s bounds and permutation,
    :func:`~jitcep.kernels.order.gather_columns`' gather through it and
    :func:`~jitcep.kernels.list_columns.take_lists`' copy of the lists through it (each a pass over the
    lists in random order); a held list is copied once, from its record, in the matches' order.  A wrong
    claim gives a wrong order, never a read or write outside the arrays.
    KernelInputError if a column number or a row is outside ``P``, ``off`` does not ascend inside ``pos``
    or has not an entry per list and one more, or a held list's offsets have not an entry per record of
    ``P`` and one more or do not ascend inside its members.
    """
    P = np.ascontiguousarray(P, dtype=np.int64)
    if P.ndim != 2:
        raise fail("lists_in_end_order", f"positions must be a matrix, got {P.ndim} dimensions")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    check_index("lists_in_end_order", "rows", rows, P.shape[0])
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    if len(cols) and (cols.min() < 0 or cols.max() >= P.shape[1]):
        raise fail("lists_in_end_order", f"a column number is outside 0..{P.shape[1] - 1}")
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("lists_in_end_order", "the list offsets", off, len(pos))
    n = len(rows)
    check_lengths("lists_in_end_order", n + 1, list_offsets=off)
    pos = np.ascontiguousarray(pos, dtype=np.int64)
    none = np.zeros(0, np.int64)
    rlo = rhi = boff = bkey = aoff = akey = none
    if before or after:
        m = P.shape[0]
        boff, bkey, blo, bhi = _held_keys("lists_in_end_order", m, before)
        aoff, akey, alo, ahi = _held_keys("lists_in_end_order", m, after)
        rlo, rhi = np.minimum(blo, alo, out=blo), np.maximum(bhi, ahi, out=bhi)
    # a bound on every list's end (over all its members: a wrong claim of ascending members stays inside)
    members = pos[off[0]:off[-1]]
    top = max(int(P[:, cols].max()) if len(cols) and P.shape[0] else -1, int(members.max()) if len(members) else -1,
              int(rhi.max()) if len(rhi) else -1)
    if top >= _BUCKETS * n + _BUCKETS_MIN:
        return None
    ends = scratch("closure_ends", 4 * (top + 3), np.int64).reshape(top + 3, 4)
    bad = scratch("closure_bad", top + 3, np.bool_)
    new_off, out = empty(n + 1, np.int64), empty(int(off[-1] - off[0]), np.int64)
    if not (before or after):
        _closure_ends(P, rows, cols, off, pos, ends)
        single = empty(len(cols) * n, np.int64).reshape(len(cols), n)
        _lists_by_end(P, rows, cols, off, pos, ends, bad, single, new_off, out)
        return single, new_off, out, []
    seg = np.array([0, n], np.int64)
    if not _held_ends(P, rows, cols, off, pos, rlo, rhi, ends):
        m = P.shape[0]
        seg = empty(2 * m, np.int64)
        seg = seg[:_visit_order(P, rows, cols, rlo, top, empty(m + 1, np.int64), empty(m, np.int64),
                                empty(top + 3, np.int64), empty(m, np.int64), seg)]
    single = empty((len(cols) + 1) * n, np.int64).reshape(len(cols) + 1, n)
    _held_lists_by_end(P, rows, cols, off, pos, rlo, rhi, boff, bkey, aoff, akey, seg, ends, bad, single, new_off,
                       out)
    recs = single[len(cols)]
    return single[:len(cols)], new_off, out, [take_lists(o, p, recs) for o, p in (*before, *after)]
