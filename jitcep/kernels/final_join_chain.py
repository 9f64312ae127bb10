"""The matches of a SEQ of k leaves with nothing to test on them, written as the match table's rows.

``SEQ(A1 a1, ..., Ak ak)`` with no predicate, under a window only, runs as
k - 1 ZStream SEQ joins (section 4.4, Algorithm 1) whose every inner join
makes and keeps records.  With every event's window and order times
following its position (the engine's tables are sorted by time: checked, an
error when not), the matches ending at an event c of Ak are the chains
a1 < ... < a(k-1) before c whose first event is within c's window (ZStream
4.3's EAT), and within one end canonical order (docs/semantics.md section 11:
last, first, then the variables in name order) is the chains' lexicographic
order when the middle variables' names ascend in SEQ order (the caller's
condition).  So the rows are written straight from the leaves, a nested
enumeration per c with no pair, record or sort between.

Per leaf event x, ``F[x]`` is the first event of the next leaf after it (the
"next" pointers, one merge per pair of adjacent leaves).  Per end c and
level i, ``h[i]`` is one past the last event of leaf i that still begins a
chain to c (the events of leaf i whose next pointer falls below ``h[i + 1]``):
every event of leaf i from ``F`` of an event of leaf i - 1 up to ``h[i]``
continues to c, so the enumeration never meets a dead end, and the number of
chains through each is one suffix sum per level over those ranges (their
length bounded by the matches of c), the level before c's read from prefix
sums of ``F`` instead (its chains to c are ``h[i + 1] - F[x]``), so a chain of
three is counted in constant time per c.  The same count over a run of the leaves
is the number of candidate pairs the plan's join over that run makes at most
(its inputs may be thinned by a reduction): the caller prices the plan's caps
with it; a run of two leaves is counted beside ``F`` (measured:
perf/notes/output_and_core.md).

Leaves are the join kernels' 8-tuple buffers (:mod:`jitcep.kernels.join`) of
one-event records, each partition's in position order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from ..threads import partition_ranges, run_ranges
from .alloc import empty, scratch
from .checks import fail
from .final_join_leaves import _follows, _reversed_tie, leaf_inputs
from .window import exceeds, window_bound

_MAX_COUNT = 1 << 61
"""Caps are clamped to this: a running sum is checked against a cap's remainder before each addition of a
count itself at most the cap, so it stays below 2^62 and never overflows int64."""


@njit(**NUMBA_FLAGS)
def _links(P, T, Wt, off, g0, g1, W, order, ties, n, F, SF, pairs):
    # Per partition of [g0, g1): each leaf checked (positions in [0, n) strictly ascending, times with
    # them), then F[x] = the first event of the next leaf after x, whose window time must not be below
    # x's, and SF their running sums (SF[x + 1] = F[x0] + ... + F[x] from the partition's first x0; slot
    # x0 is the segment before's, another thread's, never read: _sum_f); where pairs[i] >= 0, pairs[i] +=
    # the chains of leaves i, i + 1 (x, then an event from F[x] up to the first past x's window).  0, or
    # -3 a position outside [0, n), -5 times that do not follow the positions, -6 (with ``ties``, under
    # nondecreasing_ts run in position order) an event of leaf i + 1 before x in position at x's order
    # time (a reversed tie, _reversed_tie).
    k = off.shape[0]
    for g in range(g0, g1):
        for i in range(k):
            status = _follows(P, T, Wt, off[i, g], off[i, g + 1], n)
            if status < 0:
                return status
        for i in range(k - 1):
            j = w = off[i + 1, g]
            j1 = off[i + 1, g + 1]
            run = made = np.int64(0)
            counted = pairs[i] >= 0
            for x in range(off[i, g], off[i, g + 1]):
                while j < j1 and ((P[j] <= P[x]) if order == 0 else (T[j] <= T[x])):
                    j += 1
                if j < j1 and Wt[j] < Wt[x]:
                    return np.int64(-5)
                if ties and _reversed_tie(P, T, j - 1, off[i + 1, g] - 1, -1, P[x], T[x]):
                    return np.int64(-6)
                F[x] = j
                run += j
                SF[x + 1] = run
                if counted:
                    while w < j1 and not exceeds(Wt[x], Wt[w], W):
                        w += 1
                    made += max(w - j, 0)
            if counted:
                pairs[i] += made
    return np.int64(0)


@njit(**NUMBA_FLAGS, inline="always")
def _sum_f(SF, x0, y, h):
    # F[y] + ... + F[h - 1] within one leaf's partition starting at x0 (y <= h)
    return (SF[h] if h > x0 else 0) - (SF[y] if y > x0 else 0)


@njit(**NUMBA_FLAGS, inline="always")
def _ends(Wt, off, g, i0, i1, W, F, c, h, lo):
    # Advances the pointers to end c (of leaf i1): h[i] for the leaves [i0, i1), and returns the first
    # event of leaf i0 within c's window from ``lo`` on.  An event x of leaf i1 - 1 is before c exactly
    # when its next event in leaf i1 is c or before it.
    e = off[i1 - 1, g + 1]
    while h[i1 - 1] < e and F[h[i1 - 1]] <= c:
        h[i1 - 1] += 1
    for i in range(i1 - 2, i0 - 1, -1):
        e = off[i, g + 1]
        while h[i] < e and F[h[i]] < h[i + 1]:
            h[i] += 1
    e = off[i0, g + 1]
    while lo < e and exceeds(Wt[lo], Wt[c], W):
        lo += 1
    return lo


@njit(**NUMBA_FLAGS)
def _chains_count(P, Wt, off, g0, g1, i0, i1, W, cap, F, SF, S, at):
    # The chains of leaves i0..i1 within the window, over the partitions [g0, g1), or -1 past ``cap``;
    # with ``at`` (room for every position), each end's count into at[its position + 1].  The chains
    # from an event x of level i1 - 2 to c are h[i1 - 1] - F[x], summed over a range of x by SF
    # (_sum_f); S holds, per event x of a lower level's live range, the chains from x to c (written and
    # read for this c only, in the partition's own slots).
    per_end = len(at) > 0
    h = np.empty(off.shape[0], np.int64)
    st = np.empty(off.shape[0], np.int64)
    m = np.int64(0)
    for g in range(g0, g1):
        lo = off[i0, g]
        for i in range(i0, i1):
            h[i] = off[i, g]
        for c in range(off[i1, g], off[i1, g + 1]):
            lo = _ends(Wt, off, g, i0, i1, W, F, c, h, lo)
            if lo >= h[i0]:
                continue
            if i1 - i0 == 1:
                cnt = h[i0] - lo
            else:
                # level i1 - 2's range [st, h) by prefix sums; below it suffix sums level by level, over
                # [first reachable, h[i]): the first reachable event of level i + 1 is F of level i's first
                hl, b, x0 = h[i1 - 1], i1 - 2, off[i1 - 2, g]
                st[i0] = lo
                for i in range(i0 + 1, i1 - 1):
                    st[i] = F[st[i - 1]]
                if b == i0:
                    cnt = (h[b] - lo) * hl - _sum_f(SF, x0, lo, h[b])
                    if cnt > cap - m:
                        return np.int64(-1)
                else:
                    for i in range(b - 1, i0 - 1, -1):
                        acc = np.int64(0)
                        for x in range(h[i] - 1, st[i] - 1, -1):
                            y = F[x]
                            acc += (h[b] - y) * hl - _sum_f(SF, x0, y, h[b]) if i == b - 1 else S[y]
                            if acc > cap - m:  # every chain from x is a match of c
                                return np.int64(-1)
                            S[x] = acc
                    cnt = S[lo]
            m += cnt
            if m > cap:
                return np.int64(-1)
            if per_end:  # P[c] < len(at) - 1 (_links)
                at[P[c] + 1] += cnt
    return m


@njit(**NUMBA_FLAGS)
def _chains_rows(P, T, Wt, off, g0, g1, W, F, at, ridx, rows, times):
    # The writing pass over what _chains_count counted for all k leaves: per end c, the chains from the
    # first a1 in its window in lexicographic order, each level's event written once over the rows below
    # it (a column fill when it is left), the last level before c a slice of its leaf written beside the
    # level above it; c's column once for all its rows.  Each c's rows at at[its position] (then advanced)
    # when ``at`` is given, else one after another.  Returns the number of rows, or -4 past the matrices.
    k = off.shape[0]
    per_end = len(at) > 0
    lim = min(rows.shape[1], times.shape[1])
    h = np.empty(k, np.int64)
    cur = np.empty(k, np.int64)
    ds = np.empty(k, np.int64)
    d = np.int64(0)
    n = np.int64(0)
    for g in range(g0, g1):
        lo = off[0, g]
        for i in range(k - 1):
            h[i] = off[i, g]
        for c in range(off[k - 1, g], off[k - 1, g + 1]):
            lo = _ends(Wt, off, g, 0, k - 1, W, F, c, h, lo)
            if per_end:
                d = at[P[c]]
            start = d
            if lo < h[0]:
                i = 0
                cur[0], ds[0] = lo, d
                while i >= 0:
                    while i < k - 3:  # down to the level above the slice
                        i += 1
                        cur[i], ds[i] = F[cur[i - 1]], d
                    j = F[cur[k - 3]]
                    cnt = h[k - 2] - j
                    if d + cnt > lim:
                        return np.int64(-4)
                    r, ru = ridx[k - 2], ridx[k - 3]
                    u, tu = P[cur[k - 3]], T[cur[k - 3]]
                    for t in range(cnt):
                        rows[r, d + t] = P[j + t]
                        times[r, d + t] = T[j + t]
                        rows[ru, d + t] = u
                        times[ru, d + t] = tu
                    d += cnt
                    while i >= 0:  # leave level i's event: its column over its rows (written above at
                        # level k - 3), then its next
                        if i < k - 3:
                            r, v, tv = ridx[i], P[cur[i]], T[cur[i]]
                            for t in range(ds[i], d):
                                rows[r, t] = v
                                times[r, t] = tv
                        cur[i] += 1
                        if cur[i] < h[i]:
                            ds[i] = d
                            break
                        i -= 1
            r, v, tv = ridx[k - 1], P[c], T[c]
            for t in range(start, d):
                rows[r, t] = v
                times[r, t] = tv
            n += d - start
            if per_end:
                at[P[c]] = d
    return n


def seq_chain_rows(leaves, ts, wt, W: int, order: str, spans, cap_of, src, n_events: int, threads: int = 1):
    """The matches of ``SEQ(a1, ..., ak)`` (k >= 3) over the leaves (their one-event records; no predicate)
    within the window, in canonical order when the middle variables' names ascend in SEQ order (the
    caller's condition): (rows, times, counts), rows a C-ordered (k, matches) matrix whose row i holds
    the events of leaf ``src[i]``, times their order times alike (the leaves' ``ts``, the output's time
    fields), and ``counts`` the number of chains within the window over each run of leaves of
    ``spans``.  None past a cap, or at a reversed tie (below).  Every row is a leaf event's position, so
    none is unbound.

    ``spans``: runs ``(i0, i1)`` of the leaves (first and last leaf, i0 < i1), those of the plan's joins,
    each after the runs it is built from, the last ``(0, k - 1)``; ``cap_of(span, counts)``: its cap
    given the counts of the runs before it.  The chains over a run are at least the candidate pairs of
    the plan's join over it, exactly without a reduction between; past its cap the count stops and None
    is returned, and the caller runs the joins, which say which cap (a reduction may thin their inputs
    below it).  ``order``: any; under ``nondecreasing_ts`` the rows and counts are those of ``position``
    order, or None where an event of a leaf shares its time with one of the leaf before it that is after
    it in position (a reversed tie: a match could bind them out of position order; the caller's joins
    then make and order the pairs), as :func:`~jitcep.kernels.final_join_leaves.seq3_leaf_rows` decides
    for three.  ``threads``: the partitions are split into up to that many ranges counted and written
    side by side.  A buffer that is no leaf, partitions that differ or fall outside the
    records, ``src`` no permutation of the leaves, a position not below ``n_events`` or times that do
    not follow the positions (the event table is sorted by time) is a KernelInputError.
    """
    k = len(leaves)
    if k < 3:
        raise fail("seq_chain_rows", f"{k} leaves: a chain has three at least")
    timed, ridx, code, ties = leaf_inputs("seq_chain_rows", leaves, ts, wt, order, src)
    spans = [(int(i0), int(i1)) for i0, i1 in spans]
    if spans[-1:] != [(0, k - 1)] or any(not 0 <= i0 < i1 < k for i0, i1 in spans):
        raise fail("seq_chain_rows", f"the runs {list(spans)} are no runs of the leaves ending with the whole")
    P, T, Wt, off = _stacked(timed)
    W, G = window_bound(W), off.shape[1] - 1
    ranges = partition_ranges([x[3] for x in timed], threads)
    links = _next_pointers(P, T, Wt, off, W, code, ties, n_events, spans, ranges)
    if links is None:
        return None
    F, SF, pairs = links
    at = scratch("seq_chain_rows_at", int(n_events) + 1 if G > 1 else 0, np.int64)
    counts = _span_counts(P, Wt, off, W, F, SF, pairs, spans, cap_of, ranges, at)
    if counts is None:
        return None
    m = counts[(0, k - 1)]
    rows, times = (empty(k * m, np.int64).reshape(k, m) for _ in range(2))
    if m:
        if G > 1:
            np.cumsum(at, out=at)  # at[e]: the matches ending before position e
        none = np.zeros(0, np.int64)
        written = run_ranges(lambda g0, g1: _chains_rows(P, T, Wt, off, g0, g1, W, F, at if G > 1 else none, ridx,
                                                         rows, times), ranges)
        if sum(written) != m:  # no row left unwritten
            raise fail("seq_chain_rows", "the matches counted are not those written")
    return rows, times, counts


def _stacked(timed):
    """The leaves as one array per field (positions P, order times T, window times Wt) and each leaf's
    partition offsets into them (a (k, partitions + 1) matrix), the offsets checked."""
    base = np.cumsum([0] + [len(x[1]) for x in timed])
    for x, b in zip(timed, base[:-1]):
        goff = x[3]
        if goff[0] < 0 or goff[-1] > len(x[1]) or np.any(goff[1:] < goff[:-1]):
            raise fail("seq_chain_rows", "partition offsets are not ascending offsets into the leaves")
    off = np.stack([np.asarray(x[3], np.int64) + b for x, b in zip(timed, base[:-1])])
    P, T, Wt = (np.concatenate([x[f] for x in timed]).astype(np.int64, copy=False) for f in (1, 4, 6))
    return P, T, Wt, off


def _next_pointers(P, T, Wt, off, W, code, ties, n_events, spans, ranges):
    """(F, SF, pairs): every leaf event's next pointer ``F`` and their running sums ``SF`` (:func:`_links`),
    and per range of partitions the chains of each two adjacent leaves ``spans`` joins (-1 for the
    others), counted in the same pass; the leaves checked on the way.  None at a reversed tie (with
    ``ties``)."""
    k = off.shape[0]
    F = scratch("seq_chain_rows_F", len(P), np.int64)
    SF = scratch("seq_chain_rows_SF", len(P) + 1, np.int64)
    pairs = np.tile(np.array([0 if (i, i + 1) in spans else -1 for i in range(k - 1)], np.int64), (len(ranges), 1))
    status = run_ranges(lambda g0, g1: _links(P, T, Wt, off, g0, g1, W, code, ties, int(n_events), F, SF,
                                              pairs[ranges.index((g0, g1))]), ranges)
    if -3 in status:
        raise fail("seq_chain_rows", f"a position is not below {n_events}")
    if -5 in status:
        raise fail("seq_chain_rows", "a leaf's order or window times do not ascend with its positions")
    return None if -6 in status else (F, SF, pairs)


def _span_counts(P, Wt, off, W, F, SF, pairs, spans, cap_of, ranges, at):
    """The chains over each run of ``spans``, in order, each against its cap (``cap_of`` given the counts
    before it); None past one.  A run of two leaves was counted with the next pointers (``pairs``); the
    whole run's count also fills ``at`` with the matches per end (where there are partitions to order)."""
    k = off.shape[0]
    counts: dict[tuple[int, int], int] = {}
    S = scratch("seq_chain_rows_S", len(P), np.int64)
    none = np.zeros(0, np.int64)
    for i0, i1 in spans:
        cap = min(int(cap_of((i0, i1), counts)), _MAX_COUNT)
        if i1 == i0 + 1:  # counted with the links
            counts[(i0, i1)] = int(pairs[:, i0].sum())
            if counts[(i0, i1)] > cap:
                return None
            continue
        whole = (i0, i1) == (0, k - 1)
        if whole:
            at[:] = 0
        got = run_ranges(lambda g0, g1: _chains_count(P, Wt, off, g0, g1, i0, i1, W, cap, F, SF, S,
                                                      at if whole else none), ranges)
        if -1 in got or sum(got) > cap:  # each range checks its own share only
            return None
        counts[(i0, i1)] = sum(got)
    return counts
