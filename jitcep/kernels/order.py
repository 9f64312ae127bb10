"""Canonical order of a match table (docs/semantics.md section 11) without a global sort.

Matches are ordered by last position, then first position, then each single
variable's position (variables in name order), then the list variables'
lists in name order, each lexicographically by its members' positions, a
prefix first (:func:`jitcep.kernels.list_columns.list_key`; :meth:`jitcep.matches.MatchTable.canonical_order`).
A depth-first enumeration of a record's members makes its lists in that
order, so the ties of one end are runs already in order, merged
(:func:`_sort_keyed`), not sorted; when the caller says so (``by_record``, a
closure's lists at the root) an end is only checked in place, record against
record (:func:`_end_in_order`), and merged if that finds it out of order.
A closure's lists at the root, its one list variable, skip the permutation
altogether: each is copied straight to its end's place, with its record's
columns, and checked there against the one before it as it is written
(:func:`jitcep.kernels.closure_order.lists_in_end_order`).  The joins emit
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
    proper prefix first (:func:`~jitcep.kernels.list_columns.list_key`; semantics section 11), None for
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


def packed_fields(n_events: int, k: int) -> tuple[int, int]:
    """(bits, fields): a row's sort key within its end packed into one int64, its first position and then
    as many of its ``k`` columns (in key order) as fit, each + 1 (-1 unbound) in ``bits`` bits."""
    bits = max(int(n_events).bit_length(), 1)
    return bits, min(63 // bits, k + 1)


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
    bits, fields = packed_fields(n_events, len(src))
    ends, pk = empty(m, np.int64), empty(m, np.int64)  # each row's end and packed key (_row_keys)
    if not _canonical_pairs(Lpos, Rpos, li, ri, src, key, n_events, bits, fields, count, out, ends, pk):
        raise fail("canonical_pairs", f"a pair is outside its input or a position is not below {n_events}")
    return out


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
