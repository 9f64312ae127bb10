"""Canonical order of a match table (docs/semantics.md section 11) without a global sort.

Matches are ordered by last position, then first position, then each single
variable's position (variables in name order), then the list variables'
lists in name order, each lexicographically by its members' positions, a
prefix first (:func:`list_key`; :meth:`jitcep.matches.MatchTable.canonical_order`).
A depth-first enumeration of a record's members makes its lists in that
order, so the ties of one end are runs already in order, merged
(:func:`_sort_keyed`), not sorted; when the caller says so (``by_record``, a
closure's lists at the root) an end is only checked in place, record against
record (:func:`_end_in_order`), and merged if that finds it out of order.
A closure's lists at the root, its one list variable, skip the permutation
altogether: each is copied straight to its end's place, with its record's
columns, and checked there against the one before it as it is written
(:func:`lists_in_end_order`).  The joins emit
their records in end order within a key partition (ZStream section 4.2), so
on one partition the last positions already ascend: the order needs no sort
by end at all, only the matches that share an end sorted among themselves
(the matches completed by one event).  Several partitions (or a table of
unknown order, such as a closure's lists, which may end after their records)
are first bucketed stably by end, one bucket per position: a counting sort,
where a merge sort by end took 0.14 s of 0.33 s over 2.2 million Kleene
matches (perf/notes/output_and_core.md).

A lexicographic sort over every key (``np.lexsort``) took 0.8 s of a 5 s run
with 6.65M matches; this pass checks the end order, sorts only the runs of
equal ends, and reports whether anything moved, so an already ordered table
is not copied at all.

The wrapper checks every index the kernels use (:mod:`jitcep.kernels.checks`):
the column numbers against the matrix's width, the key arrays' lengths.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty, scratch
from .checks import check_index, check_lengths, check_offsets, fail

_NO_LOW = np.iinfo(np.int64).max

_INSERTION = 24
"""Runs up to this long are sorted by insertion (in place, no buffer); longer ones by merging."""

_BUCKETS, _BUCKETS_MIN = 8, 1 << 16
"""Ends out of order are bucketed per position (a counting sort) while the last position is below
``_BUCKETS * n + _BUCKETS_MIN`` (the count array stays within a few times the matches' arrays), merge
sorted otherwise."""


@njit(**NUMBA_FLAGS)
def _bounds(P, rows, cols, llo, lhi, lists, lo, hi):
    """First and last bound position of each match: its single columns ``cols`` of its row of ``P``
    (``rows[i]``; none: row i; -1 unbound) and, when ``lists``, the lists' own first / last members
    ``llo`` / ``lhi``."""
    for i in range(len(lo)):
        a = llo[i] if lists else _NO_LOW
        b = lhi[i] if lists else -1
        r = rows[i] if len(rows) else i
        for c in cols:
            x = P[r, c]
            if x >= 0:
                if x < a:
                    a = x
                if x > b:
                    b = x
        lo[i] = a
        hi[i] = b


@njit(**NUMBA_FLAGS)
def _less(i, j, hi, lo, P, cols, K):
    """Does match i come before match j? (last position, first position, the single columns in order,
    then the further keys ``K`` column by column: none in this module's sorts, whose list keys are
    compared by :func:`_key_less`)."""
    if hi[i] != hi[j]:
        return hi[i] < hi[j]
    if lo[i] != lo[j]:
        return lo[i] < lo[j]
    for c in cols:
        a, b = P[i, c], P[j, c]
        if a != b:
            return a < b
    for c in range(K.shape[1]):
        a, b = K[i, c], K[j, c]
        if a != b:
            return a < b
    return False


@njit(**NUMBA_FLAGS)
def _sort_range(perm, s, e, hi, lo, P, cols, K, tmp):
    """Stable sort of ``perm[s:e]`` by :func:`_less`; True if anything moved.

    Bottom-up: insertion sort of blocks of :data:`_INSERTION`, then merges of
    doubling width through ``tmp`` (no recursion: a recursive kernel costs Numba
    several compilations of itself and its callees on first use)."""
    ordered = True
    for k in range(s + 1, e):
        if _less(perm[k], perm[k - 1], hi, lo, P, cols, K):
            ordered = False
            break
    if ordered:
        return False
    for b in range(s, e, _INSERTION):
        for k in range(b + 1, min(b + _INSERTION, e)):
            x = perm[k]
            m = k
            while m > b and _less(x, perm[m - 1], hi, lo, P, cols, K):
                perm[m] = perm[m - 1]
                m -= 1
            perm[m] = x
    width = _INSERTION
    while width < e - s:
        for left in range(s, e - width, 2 * width):
            mid, stop = left + width, min(left + 2 * width, e)
            a, b, o = left, mid, left
            while a < mid and b < stop:
                if _less(perm[b], perm[a], hi, lo, P, cols, K):  # strictly: ties keep the left first
                    tmp[o] = perm[b]
                    b += 1
                else:
                    tmp[o] = perm[a]
                    a += 1
                o += 1
            _merged_back(perm, tmp, a, mid, b, stop, o, left)
        width *= 2
    return True


@njit(**NUMBA_FLAGS)
def _merged_back(perm, tmp, a, mid, b, stop, o, left):
    # A merge's end, whatever it compared by: the run not exhausted copied after the merged prefix
    # tmp[left:o], and perm[left:stop] written back from tmp.
    while a < mid:
        tmp[o] = perm[a]
        a += 1
        o += 1
    while b < stop:
        tmp[o] = perm[b]
        b += 1
        o += 1
    for k in range(left, stop):
        perm[k] = tmp[k]


@njit(**NUMBA_FLAGS)
def _sort_rows(T, n, perm, tmp, same, lo, cols, K0):
    """Stable sort of the rows ``T[:n]``, compared column by column, into ``perm[:n]``; True if anything
    moved.  ``same`` (zeros), ``lo``, ``cols`` (1..width-1) and ``K0`` (no columns) are the arguments
    :func:`_sort_range` reads ``T`` through for a long run; a short one is sorted by an insertion sort
    written out here (:func:`_less` called per comparison, with its arrays, took most of the time)."""
    w = T.shape[1]
    for j in range(n):
        perm[j] = j
    if n > _INSERTION:
        for j in range(n):
            lo[j] = T[j, 0]
        return _sort_range(perm, np.int64(0), n, same, lo, T, cols, K0, tmp)
    moved = False
    for j in range(1, n):
        x = perm[j]
        i = j
        while i > 0:
            y = perm[i - 1]
            c = 0
            while c < w - 1 and T[x, c] == T[y, c]:
                c += 1
            if T[x, c] >= T[y, c]:  # not before (equal rows keep their order)
                break
            perm[i] = y
            i -= 1
        if i != j:
            perm[i] = x
            moved = True
    return moved


@njit(**NUMBA_FLAGS)
def _key_less(x, y, T, w, rr, koff, kseq):
    """Does row x of ``T`` come before row y? Columns 0..w-1, then the list keys of matches ``rr[x]`` and
    ``rr[y]`` (``kseq[koff[r]:koff[r + 1]]``) lexicographically, a proper prefix first."""
    for c in range(w):
        a, b = T[x, c], T[y, c]
        if a != b:
            return a < b
    return _list_less(rr[x], rr[y], koff, kseq)


@njit(**NUMBA_FLAGS)
def _list_less(r, s, koff, kseq):
    """Does match r's list key ``kseq[koff[r]:koff[r + 1]]`` come before match s's? Lexicographically, a
    proper prefix first."""
    i, e = koff[r], koff[r + 1]
    j, f = koff[s], koff[s + 1]
    while i < e and j < f:
        a, b = kseq[i], kseq[j]
        if a != b:
            return a < b
        i += 1
        j += 1
    return i == e and j < f


@njit(**NUMBA_FLAGS)
def _sort_keyed(T, n, w, rr, koff, kseq, perm, tmp, bounds):
    """Stable sort of rows ``T[:n]`` by :func:`_key_less` into ``perm[:n]``; True if anything moved.

    A natural merge sort: the ascending runs are found first and merged pairwise, so rows that come
    in order already cost one comparison each, and a run of records whose lists each come in order
    (a depth-first enumeration of a record's members yields its lists lexicographically, semantics
    section 11) costs a merge of as many runs as records.  ``bounds``: room for n + 1 run starts."""
    for t in range(n):
        perm[t] = t
    runs = 0
    bounds[0] = 0
    for t in range(1, n):
        if _key_less(t, t - 1, T, w, rr, koff, kseq):
            runs += 1
            bounds[runs] = t
    if runs == 0:
        return False
    runs += 1
    bounds[runs] = n
    while runs > 1:
        merged = 0
        for q in range(0, runs - 1, 2):
            left, mid, stop = bounds[q], bounds[q + 1], bounds[q + 2]
            a, b, o = left, mid, left
            while a < mid and b < stop:
                if _key_less(perm[b], perm[a], T, w, rr, koff, kseq):  # strictly: ties keep the left first
                    tmp[o] = perm[b]
                    b += 1
                else:
                    tmp[o] = perm[a]
                    a += 1
                o += 1
            _merged_back(perm, tmp, a, mid, b, stop, o, left)
            bounds[merged] = left
            merged += 1
        if runs % 2:
            bounds[merged] = bounds[runs - 1]
            merged += 1
        bounds[merged] = n
        runs = merged
    return True


@njit(**NUMBA_FLAGS)
def _canonical_order(P, rows, cols, koff, kseq, llo, lhi, lists, lo, hi, perm, by_record):
    _bounds(P, rows, cols, llo, lhi, lists, lo, hi)
    moved = _order_by_end(P, hi, perm)
    return _order_within_ends(P, rows, cols, koff, kseq, lo, hi, perm, by_record) or moved


@njit(**NUMBA_FLAGS)
def _order_by_end(P, hi, perm):
    # perm: the matches stably by last position; True when that moved any
    n = len(perm)
    for i in range(n):
        perm[i] = i
    moved = False
    top = np.int64(-1)
    ascending = True
    for i in range(n):
        if hi[i] > top:
            top = hi[i]
        if i and hi[i] < hi[i - 1]:
            ascending = False
    if not ascending and top < _BUCKETS * n + _BUCKETS_MIN:
        # by last position only, one bucket per position (h + 1: a match with nothing bound, h = -1,
        # first), stable: O(n + positions) where a merge sort took most of the order's time
        # (several key partitions or lists ending after their records: the ends interleave)
        count = np.zeros(top + 3, np.int64)
        for i in range(n):
            count[hi[i] + 2] += 1
        for b in range(1, top + 3):
            count[b] += count[b - 1]
        for i in range(n):
            d = count[hi[i] + 1]
            count[hi[i] + 1] = d + 1
            perm[d] = i
        moved = True
    elif not ascending:
        # positions far beyond the matches' count: by last position only: no first positions (``hi``
        # again), no columns, no keys.  The arguments keep the types of its other calls and no argument
        # is a constant, so Numba compiles _sort_range once (a literal argument is a specialisation of
        # its own)
        tmp = np.empty(n, np.int64)
        moved = _sort_range(perm, np.int64(0), n, hi, hi, P, np.empty(0, np.int64),
                            np.empty((n, 0), np.int64), tmp)
    return moved


@njit(**NUMBA_FLAGS)
def _end_in_order(P, rows, cols, koff, kseq, lo, perm, i, j):
    # are matches perm[i:j] (one end's, stably by end) in canonical order already? Read in place: the
    # first positions, then a record's single columns only where two matches of different records tie
    # on it, the list keys only where those tie too.  Two matches of one record with one first position
    # are in order (``by_record``: a record's lists come in order, and the bucketing by end kept theirs)
    for t in range(i + 1, j):
        x, y = perm[t - 1], perm[t]
        if lo[x] != lo[y]:
            if lo[y] < lo[x]:
                return False
            continue
        px, py = (rows[x], rows[y]) if len(rows) else (x, y)
        if px == py:
            continue
        tied = True
        for c in cols:
            a, b = P[px, c], P[py, c]
            if a != b:
                if b < a:
                    return False
                tied = False
                break
        if tied and len(koff) and _list_less(y, x, koff, kseq):
            return False
    return True


@njit(**NUMBA_FLAGS)
def _order_within_ends(P, rows, cols, koff, kseq, lo, hi, perm, by_record):
    # perm (by last position) with each end's matches in canonical order; True when that moved any.
    # ``by_record``: each record's matches (rows, which ascend) come in order of their list keys
    n = len(perm)
    moved = False
    # the matches of each end sorted by the rest of the key on a copy of their first position and single
    # columns, contiguous: read through ``perm``, the rows of one end are scattered over the table (the
    # lists of different records), and comparing them in place took most of the order's time.  The list
    # keys are compared in place, only where those tie
    longest = np.int64(0)
    i = np.int64(0)
    while i < n:
        j = i + 1
        while j < n and hi[perm[j]] == hi[perm[i]]:
            j += 1
        longest = max(longest, j - i)
        i = j
    keyed = len(koff) > 0
    kc = len(cols)
    T = np.empty((longest, 1 + kc), np.int64)
    rlo, same = np.empty(longest, np.int64), np.zeros(longest, np.int64)
    rperm, rtmp, back = np.empty(longest, np.int64), np.empty(longest, np.int64), np.empty(longest, np.int64)
    rr, bounds = np.empty(longest if keyed else 0, np.int64), np.empty(longest + 1 if keyed else 0, np.int64)
    tcols = np.arange(1, 1 + kc)
    K0 = np.empty((longest, 0), np.int64)
    i = np.int64(0)
    while i < n:
        j = i + 1
        while j < n and hi[perm[j]] == hi[perm[i]]:
            j += 1
        if j - i > 1 and not (by_record and _end_in_order(P, rows, cols, koff, kseq, lo, perm, i, j)):
            for t in range(j - i):
                r = perm[i + t]
                T[t, 0] = lo[r]
                pr = rows[r] if len(rows) else r
                for c in range(kc):
                    T[t, 1 + c] = P[pr, cols[c]]
                if keyed:
                    rr[t] = r
            if keyed:
                sorted_ = _sort_keyed(T, j - i, 1 + kc, rr, koff, kseq, rperm, rtmp, bounds)
            else:
                sorted_ = _sort_rows(T, j - i, rperm, rtmp, same, rlo, tcols, K0)
            if sorted_:
                moved = True
                for t in range(j - i):
                    back[t] = perm[i + rperm[t]]
                for t in range(j - i):
                    perm[i + t] = back[t]
        i = j
    return moved


def canonical_order(P: np.ndarray, cols: np.ndarray, koff: np.ndarray | None = None, kseq: np.ndarray | None = None,
                    llo: np.ndarray | None = None, lhi: np.ndarray | None = None,
                    rows: np.ndarray | None = None, by_record: bool = False) -> np.ndarray | None:
    """The stable permutation sorting matches by (last position, first position, ``P[:, cols]`` column
    by column, then each match's list key), or None when the matches are in that order already.

    ``P``: (n, k) int64 positions, -1 unbound, or with ``rows`` the matches'
    rows ``P[rows]`` (read in place: a closure's lists at the root are rows of
    their records, which a copy would write once more before the columns are
    gathered through the order); ``cols``: the columns that are
    single variables, most significant first; ``koff`` / ``kseq``: match i's
    list key is ``kseq[koff[i]:koff[i + 1]]``, compared lexicographically, a
    proper prefix first (:func:`list_key`; semantics section 11), None for
    none; ``llo`` / ``lhi``: the first / last member of each
    match's lists (int64 max / -1 where they have none), or None without
    lists.  First and last positions are over the bound entries of
    ``P[:, cols]`` and the lists.  ``by_record``: the caller knows that the
    matches of one record (equal ``rows``, contiguous) come in order of their
    list keys, as a closure's lists do (depth first, semantics section 11;
    checked by :data:`jitcep.execute.kleene.CHECK_ORDER`): an end's matches are
    then checked in place, reading a list key only where two records tie on
    the rest, and sorted only if that finds them out of order (KleeneClosureSeq
    x20: most ends hold the lists of several records, each in order, whose
    merge compared their keys member by member); a wrong claim gives a wrong
    order, never a read outside the arrays.  KernelInputError if a column number is
    outside ``P``, a row outside it, the key offsets do not ascend inside
    the key or a key array has not n entries.
    """
    P = np.ascontiguousarray(P, dtype=np.int64)
    if P.ndim != 2:
        raise fail("canonical_order", f"positions must be a matrix, got {P.ndim} dimensions")
    n = P.shape[0] if rows is None else len(rows)
    rows = np.zeros(0, np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    check_index("canonical_order", "rows", rows, P.shape[0])
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    if len(cols) and (cols.min() < 0 or cols.max() >= P.shape[1]):
        raise fail("canonical_order", f"a column number is outside 0..{P.shape[1] - 1}")
    if (koff is None) != (kseq is None):
        raise fail("canonical_order", "list key offsets without the key, or the key without offsets")
    if koff is None:
        koff = kseq = np.zeros(0, np.int64)
    else:
        koff = np.ascontiguousarray(koff, dtype=np.int64)
        kseq = np.ascontiguousarray(kseq, dtype=np.int64)
        check_offsets("canonical_order", "the list key offsets", koff, len(kseq))
        check_lengths("canonical_order", n + 1, key_offsets=koff)
    lists = llo is not None
    if not lists:
        llo = lhi = np.zeros(0, np.int64)
    check_lengths("canonical_order", n, first=llo if lists else None, last=lhi if lists else None)
    # the O(n) arrays come from NumPy (huge pages, jitcep.kernels.alloc); the first and last positions
    # are scratch, reused from run to run
    lo, hi, perm = scratch("canonical_lo", n, np.int64), scratch("canonical_hi", n, np.int64), empty(n, np.int64)
    moved = _canonical_order(P, rows, cols, koff, kseq, np.ascontiguousarray(llo, dtype=np.int64),
                             np.ascontiguousarray(lhi, dtype=np.int64), lists, lo, hi, perm, by_record)
    return perm if moved else None


@njit(**NUMBA_FLAGS)
def _canonical_pairs(Lpos, Rpos, li, ri, src, key, n_events, bits, fields, count, out, ends, pk):
    # The rows gathered column by column in the pairs' order, then each row's end and packed sort key
    # (_row_keys) and each end's rows put in order (_order_ends): every pass a tight loop over one
    # column or array (the rows written a row at a time, their keys read through a loop over the
    # columns, took 10-15 ns a row, perf/notes/opencep.md).  When the ends do not ascend (several
    # partitions, ties under nondecreasing_ts), the rows are written again to their end's place:
    # ``count`` holds n_events + 2 buckets, or none (the pairs are then merge sorted by end:
    # canonical_pairs' rule).  False: a pair outside its input or a position not below ``n_events``.
    k, m, kl = len(src), len(li), Lpos.shape[1]
    for i in range(m):
        if not (0 <= li[i] < Lpos.shape[0] and 0 <= ri[i] < Rpos.shape[0]):
            return False
    for c in range(k):
        s = src[c]
        if s < kl:
            for i in range(m):
                out[c, i] = Lpos[li[i], s]
        else:
            for i in range(m):
                out[c, i] = Rpos[ri[i], s - kl]
    status = _row_keys(out, key, n_events, bits, fields, ends, pk)
    if status == 0:
        return False
    if status == 2:
        # each row's place (its end's next slot, or its rank in the sorted ends) into ``pk``, then the
        # columns written there from the pairs again
        if len(count):
            count[:] = 0
            for i in range(m):
                count[ends[i] + 2] += 1  # bucket h + 1: a row with nothing bound, h = -1, first
            for b in range(n_events + 1):
                count[b + 1] += count[b]
            for i in range(m):
                pk[i] = count[ends[i] + 1]
                count[ends[i] + 1] += 1
        else:
            order = np.argsort(ends, kind="mergesort")  # stable: the rows of one end keep the pairs' order
            for j in range(m):
                pk[order[j]] = j
        for c in range(k):
            s = src[c]
            if s < kl:
                for i in range(m):
                    out[c, pk[i]] = Lpos[li[i], s]
            else:
                for i in range(m):
                    out[c, pk[i]] = Rpos[ri[i], s - kl]
        if _row_keys(out, key, n_events, bits, fields, ends, pk) != 1:
            return False
    _order_ends(out, key, fields - 1, ends, pk)
    return True


@njit(**NUMBA_FLAGS)
def _row_keys(out, key, n_events, bits, fields, ends, pk):
    # Each row's end (last bound position, -1: none) and its sort key within the end packed into one
    # int64: its first bound position + 1 (0: none), then its first ``fields - 1`` columns in ``key``
    # order + 1, ``bits`` each.  0: a position not below ``n_events``; 1: the ends ascend; 2: they do not.
    k, m = out.shape
    for i in range(m):
        ends[i] = -1
        pk[i] = _NO_LOW
    for c in range(k):
        for i in range(m):
            x = out[c, i]
            ends[i] = max(ends[i], x)
            if 0 <= x < pk[i]:
                pk[i] = x
    status = 1
    for i in range(m):
        if not ends[i] < n_events:
            return 0
        if i and ends[i] < ends[i - 1]:
            status = 2
        pk[i] = 0 if pk[i] == _NO_LOW else pk[i] + 1
    for f in range(fields - 1):
        c = key[f]
        for i in range(m):
            pk[i] = (pk[i] << bits) | (out[c, i] + 1)
    return status


_RUN = 64
"""An end's rows are put in order by insertion up to this many (an end is the matches one event
completes: a handful); a longer end's rows are sorted by merging (:func:`_sort_run`)."""


@njit(**NUMBA_FLAGS)
def _order_ends(out, key, rest, ends, pk):
    # The rows of each end (``ends`` ascending) put in canonical order: by packed key ``pk`` (_row_keys),
    # ties by the key columns from ``rest`` on, equal rows in their order.  An end's rows are checked in
    # place and, if out of order, inserted into ``kb``/``ib`` (packed key, row) and written back in that
    # order.  The buffers are never reassigned inside the loop (a growth there, even one that never ran,
    # made this pass 2-8x slower, perf/notes/opencep.md): an end past _RUN rows goes to _sort_run.
    k, m = out.shape
    kb, ib, tmp = np.empty(_RUN, np.int64), np.empty(_RUN, np.int64), np.empty(_RUN, np.int64)
    a = np.int64(0)  # not the literal 0: _sort_run would be typed, and compiled, for Literal[int](0) too
    while a < m:
        e = a + 1
        ordered = True
        while e < m and ends[e] == ends[a]:
            if ordered and pk[e] <= pk[e - 1]:
                if pk[e] < pk[e - 1]:
                    ordered = False
                else:
                    c = rest
                    while c < k and out[key[c], e] == out[key[c], e - 1]:
                        c += 1
                    ordered = c == k or out[key[c], e] > out[key[c], e - 1]
            e += 1
        n = e - a
        if not ordered and n > _RUN:
            _sort_run(out, key, a, e)
        elif not ordered:
            for j in range(n):
                x = a + j
                v = pk[x]
                i = j
                while i > 0:
                    w = kb[i - 1]
                    if w < v:
                        break
                    if w == v:  # tied packed keys: the rest of the columns decide
                        y = ib[i - 1]
                        c = rest
                        while c < k and out[key[c], x] == out[key[c], y]:
                            c += 1
                        if c == k or out[key[c], x] > out[key[c], y]:
                            break
                    kb[i] = w
                    ib[i] = ib[i - 1]
                    i -= 1
                kb[i] = v
                ib[i] = x
            for c in range(k):
                for j in range(n):
                    tmp[j] = out[c, ib[j]]
                for j in range(n):
                    out[c, a + j] = tmp[j]
        a = e


@njit(**NUMBA_FLAGS)
def _sort_run(out, key, a, e):
    # Rows [a, e) of one end (more than _RUN) sorted by first position, then the rows in ``key`` order,
    # on a copy with the first position in front (_sort_rows merges them).
    k, n = out.shape[0], e - a
    T, K = np.empty((n, k + 1), np.int64), np.empty((n, 0), np.int64)
    lo, same = np.empty(n, np.int64), np.zeros(n, np.int64)
    perm, tmp = np.empty(n, np.int64), np.empty(n, np.int64)
    for j in range(n):
        low = _NO_LOW
        for c in range(k):
            x = out[key[c], a + j]
            T[j, c + 1] = x
            if 0 <= x < low:
                low = x
        T[j, 0] = low
    if _sort_rows(T, n, perm, tmp, same, lo, np.arange(1, k + 1), K):
        for j in range(n):
            for c in range(k):
                out[key[c], a + j] = T[perm[j], c + 1]


def _key_order(where: str, key, k: int) -> np.ndarray:
    """The rows in the order the sort compares them (``key``; None: row order), checked to be a
    permutation of ``range(k)``."""
    key = np.arange(k) if key is None else np.ascontiguousarray(key, dtype=np.int64)
    if sorted(key.tolist()) != list(range(k)):
        raise fail(where, f"the key order {key.tolist()} is no permutation of the {k} rows")
    return key


def canonical_pairs(Lpos: np.ndarray, Rpos: np.ndarray, li: np.ndarray, ri: np.ndarray, src: np.ndarray,
                    n_events: int, key: np.ndarray | None = None) -> np.ndarray:
    """The single columns of the matches that are the pairs ``(li[i], ri[i])`` of a join's two inputs, in
    canonical order, as a C-ordered (len(src), m) matrix: row c is column ``src[c]`` of the pairs' rows
    (``Lpos``'s columns then ``Rpos``'s; -1 unbound).  ``key``: the rows in the order the sort compares
    them (the variables' name order), a permutation of ``range(len(src))``; None: row order.

    The rows are gathered in the pairs' order; where their ends ascend (one key partition, a join
    driven by the record that ends its matches) only each end's rows are then put in order.  Otherwise
    (several key partitions, or a left record that ends after the right one: ties under
    ``nondecreasing_ts``) they are written again, each to its place, bucketed by last position
    (positions are below ``n_events``): a bucket per end is a partition merge in O(pairs + events)
    instead of a sort.  With far more events than pairs (``n_events`` not
    below ``_BUCKETS * pairs + _BUCKETS_MIN``, as :func:`canonical_order` decides) the ends are merge
    sorted instead, in O(pairs log pairs).  Then the rows of each end are sorted by first
    position and the columns, as :func:`canonical_order` sorts them, on a key packed into one integer
    per row (:func:`_order_ends`).  This replaces the join's output
    records, :func:`canonical_order`'s permutation and :func:`gather_columns`' copy through it: on
    6.65M matches those wrote 12 arrays of the matches' length, this writes ``len(src)``.

    KernelInputError if a column number of ``src`` is outside the rows, ``key`` no permutation, a pair
    outside its input or a position not below ``n_events``.
    """
    Lpos = np.ascontiguousarray(Lpos, dtype=np.int64)
    Rpos = np.ascontiguousarray(Rpos, dtype=np.int64)
    li, ri = np.ascontiguousarray(li, dtype=np.int64), np.ascontiguousarray(ri, dtype=np.int64)
    src = np.ascontiguousarray(src, dtype=np.int64)
    width = Lpos.shape[1] + Rpos.shape[1] if Lpos.ndim == Rpos.ndim == 2 else -1
    if width < 0 or not len(src) or src.min() < 0 or src.max() >= width:
        raise fail("canonical_pairs", f"no column, or a column number outside the pairs' {width} columns")
    check_lengths("canonical_pairs", len(li), right=ri)
    key = _key_order("canonical_pairs", key, len(src))
    m = len(li)
    out = empty(len(src) * m, np.int64).reshape(len(src), m)
    # the per-end counts are scratch, reused from run to run (jitcep.kernels.alloc); none when the ends
    # are far more than the pairs (the rule of _BUCKETS): zeroing and summing a bucket per event then
    # cost more than sorting the pairs (1 ms per run at 1M events and 97 matches, perf seq_len3)
    n_events = int(n_events)
    count = scratch("canonical_ends", n_events + 2, np.int64) if n_events < _BUCKETS * m + _BUCKETS_MIN \
        else np.zeros(0, np.int64)
    # a row's sort key within its end packed into one int64: its first position and then as many of its
    # columns (in key order) as fit, each + 1 (-1 unbound) in ``bits``
    bits = max(n_events.bit_length(), 1)
    fields = min(63 // bits, len(src) + 1)
    ends, pk = empty(m, np.int64), empty(m, np.int64)  # each row's end and packed key (_row_keys)
    if not _canonical_pairs(Lpos, Rpos, li, ri, src, key, n_events, bits, fields, count, out, ends, pk):
        raise fail("canonical_pairs", f"a pair is outside its input or a position is not below {n_events}")
    return out


@njit(**NUMBA_FLAGS)
def _list_key(off, pos, unbound, flagged, at, kseq, lo, hi):
    for r in range(len(off) - 1):
        a, b = lo[r], hi[r]
        d = at[r]
        if flagged:
            kseq[d] = 1 if unbound[r] else 0
            d += 1
        for i in range(off[r], off[r + 1]):
            p = pos[i]
            kseq[d] = p
            d += 1
            if p < a:
                a = p
            if p > b:
                b = p
        kseq[d] = -1
        at[r] = d + 1
        lo[r], hi[r] = a, b


def list_key(off: np.ndarray, pos: np.ndarray, unbound: np.ndarray | None, at: np.ndarray, kseq: np.ndarray,
             lo: np.ndarray, hi: np.ndarray) -> None:
    """One list variable's part of each match's list key for :func:`canonical_order`, in place, in one pass
    over the members: at ``kseq[at[r]]`` for list r, whether it is unbound (1) or not (0) when
    ``unbound`` is given, its members, then -1 (below every position: a list sorts before its
    extensions, and the next variable's part is compared only when this one's are equal); ``at[r]``
    advanced past it; ``lo[r]`` / ``hi[r]`` lowered / raised to its first / last position (semantics
    section 11: a match's first and last positions count its lists' members).  The parts of the list
    variables in name order, end to end, make a key whose lexicographic order is section 11's order of
    the lists (a variable bound first, then its list lexicographically by its members' positions).

    KernelInputError unless ``off`` ascends inside ``pos``, ``unbound`` (when given), ``at``, ``lo`` and
    ``hi`` hold an entry per list, ``at`` / ``lo`` / ``hi`` are contiguous int64 arrays (updated in
    place) and every list's part fits in ``kseq`` from ``at[r]`` on and before ``at[r + 1]``.
    """
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("list_key", "off", off, len(pos))
    n = len(off) - 1
    check_lengths("list_key", n, unbound=unbound, at=at, first=lo, last=hi)
    for name, x in (("at", at), ("first", lo), ("last", hi), ("the key", kseq)):
        if x.dtype != np.int64 or not x.flags.c_contiguous:
            raise fail("list_key", f"{name} must be a contiguous int64 array, updated in place")
    flagged = unbound is not None
    need = np.diff(off) + (2 if flagged else 1)
    if n and (at.min() < 0 or bool((at[:-1] + need[:-1] > at[1:]).any()) or at[-1] + need[-1] > len(kseq)):
        raise fail("list_key", "a list's part of the key overlaps the next one's or lies outside the key")
    unbound = np.zeros(0, np.bool_) if unbound is None else np.ascontiguousarray(unbound, dtype=np.bool_)
    _list_key(off, np.ascontiguousarray(pos, dtype=np.int64), unbound, flagged, at, kseq, lo, hi)


@njit(**NUMBA_FLAGS)
def _gather_columns(P, cols, perm, ordered, out):
    # one pass over the records (each row of P read once), not one per column
    k = len(cols)
    for i in range(out.shape[1]):
        r = i if ordered else perm[i]
        for c in range(k):
            out[c, i] = P[r, cols[c]]


def gather_columns(P: np.ndarray, cols: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
    """``P[perm][:, cols].T`` in one pass, as a C-ordered (len(cols), n) matrix: each output row is one
    variable's contiguous column of the match table (``perm`` None: the rows as they are).
    KernelInputError if a column number or a row of ``perm`` is outside ``P``."""
    P = np.ascontiguousarray(P, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    if P.ndim != 2 or (len(cols) and (cols.min() < 0 or cols.max() >= P.shape[1])):
        raise fail("gather_columns", f"a column number is outside the {P.shape} matrix")
    ordered = perm is None
    perm = np.zeros(0, np.int64) if ordered else np.ascontiguousarray(perm, dtype=np.int64)
    check_index("gather_columns", "the rows", perm, P.shape[0])  # one pass, not min() and max()
    m = P.shape[0] if ordered else len(perm)
    out = empty(len(cols) * m, np.int64).reshape(len(cols), m)
    _gather_columns(P, cols, perm, ordered, out)
    return out


@njit(**NUMBA_FLAGS)
def _list_bounds(off, pos, lo, hi):
    for j in range(len(off) - 1):
        a, b = lo[j], hi[j]
        for i in range(off[j], off[j + 1]):
            x = pos[i]
            if x < a:
                a = x
            if x > b:
                b = x
        lo[j], hi[j] = a, b


@njit(**NUMBA_FLAGS)
def _tail_ascending_bounds(off, pos, lo, hi):
    # the members after the first ascend: the smallest is the first or the second, the largest the first
    # or the last
    for j in range(len(off) - 1):
        a, b = off[j], off[j + 1]
        if a < b:
            x, y = pos[a], pos[b - 1]
            if b - a > 1 and pos[a + 1] < x:
                x = pos[a + 1]
            if pos[a] > y:
                y = pos[a]
            if x < lo[j]:
                lo[j] = x
            if y > hi[j]:
                hi[j] = y


def list_bounds(off: np.ndarray, pos: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                tail_ascending: bool = False) -> None:
    """Lower ``lo[j]`` / raise ``hi[j]`` (int64, in place) to the first / last position among the members
    of CSR list j (``off`` into ``pos``), for the first / last position of each match over its lists
    (semantics section 11).

    One pass over the members, whatever their order in a list (a Kleene group over AND lists its
    iterations in canonical order, not by position): NumPy's ``reduceat`` or a check that the lists
    ascend followed by masked ``minimum`` / ``maximum`` took 0.06 s over 2.2 million lists, this 0.01 s.
    ``tail_ascending``: the caller knows that each list's members after its first ascend (a closure's
    lists: its members in position order, after its anchor, which under ``nondecreasing_ts`` a member
    tied in time may precede by position; :mod:`jitcep.execute.kleene`), so only a list's first two and
    last members are read (a list's middle members are not touched: a third less time on MinMax_2 at x100's
    657,800 lists of 3M members, whose lists of 4-5 members still have their ends on most cache lines); a list out of that order gets wrong bounds, never
    a read outside ``pos``.
    KernelInputError unless ``off`` ascends inside ``pos`` and ``lo`` / ``hi`` hold one entry per list.
    """
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("list_bounds", "off", off, len(pos))
    check_lengths("list_bounds", len(off) - 1, first=lo, last=hi)
    if lo.dtype != np.int64 or hi.dtype != np.int64 or not (lo.flags.c_contiguous and hi.flags.c_contiguous):
        raise fail("list_bounds", "the bounds must be contiguous int64 arrays, updated in place")
    (_tail_ascending_bounds if tail_ascending else _list_bounds)(off, np.ascontiguousarray(pos, dtype=np.int64),
                                                                 lo, hi)


@njit(**NUMBA_FLAGS)
def _taken_offsets(off, idx, new_off):
    for k in range(len(idx)):
        new_off[k + 1] = new_off[k] + off[idx[k] + 1] - off[idx[k]]


@njit(**NUMBA_FLAGS)
def _take_lists(off, pos, idx, new_off, out):
    for k in range(len(idx)):
        d = new_off[k]
        for i in range(off[idx[k]], off[idx[k] + 1]):
            out[d] = pos[i]
            d += 1


def take_lists(off: np.ndarray, pos: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets, positions) of the lists ``idx`` of CSR ``off`` into ``pos``, in that order: a match
    table's list column put in canonical order (semantics section 11).  The offsets, then the members
    (allocated between the two by NumPy, :mod:`jitcep.kernels.alloc`), where NumPy's ``repeat`` of each
    list's shift plus a gather took 0.07-0.15 s over 2.2 million lists.  KernelInputError unless ``off``
    ascends inside ``pos`` and every index names a list."""
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("take_lists", "off", off, len(pos))
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    if len(idx) and (idx.min() < 0 or idx.max() >= len(off) - 1):
        raise fail("take_lists", f"a list index is outside 0..{len(off) - 2}")
    new_off = empty(len(idx) + 1, np.int64)
    new_off[0] = 0
    _taken_offsets(off, idx, new_off)
    out = empty(int(new_off[-1]), np.int64)
    _take_lists(off, np.ascontiguousarray(pos, dtype=np.int64), idx, new_off, out)
    return new_off, out


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
    :func:`list_key`'s parts end to end), and its first / last member over them."""
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
    the positions lie far beyond the lists' count (the rule of ``_BUCKETS``: :func:`canonical_order` sorts
    those instead).

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
    where two records' lists are out of order.  This replaces :func:`canonical_order`'s bounds and
    permutation, :func:`gather_columns`' gather through it and :func:`take_lists`' copy of the lists
    through it (each a pass over the lists in random order); a held list is copied once, from its record,
    in the matches' order.  A wrong claim gives a wrong order, never a read or write outside the arrays.
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
