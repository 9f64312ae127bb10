"""The matches of a SEQ of three leaves with nothing to test on them, written as the match table's rows.

``SEQ(A a, B b, C c)`` with no predicate, under a window only, runs as two
ZStream SEQ joins (section 4.4, Algorithm 1): the pairs (a, b), made into
records, then joined with c (:func:`jitcep.kernels.final_join.seq_join_rows`),
which puts those records in order by first position to write each end's rows
in canonical order.  Every event of the three leaves has a window time and
an order time that follow its position (the engine's tables are sorted by
time: checked, an error when not), so the matches ending at c are, for each a within c's
window from the earliest allowed on (ZStream 4.3's EAT), the events of B
after a and before c: a slice of B's leaf.  So the rows are written straight
from the leaves, in canonical order (docs/semantics.md section 11: the end c,
then the first event a, then b, whatever the variables' names, since a and c
are the first and last), a column at a time, with no pair, record or sort
between; the pairs (a, b) the first join would have made are only counted,
for its cap (measured: perf/notes/output_and_core.md).

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
from .join import ORDER_CODE, _checked, _timed, too_many_pairs
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _follows(p, t, w, i0, i1, n):
    """0 when the leaf's events [i0, i1) have positions strictly ascending and order and window times
    ascending with them, -5 when not, -3 a position outside [0, n)."""
    for i in range(i0, i1):
        if not 0 <= p[i] < n:
            return -3
        if i > i0 and (p[i] <= p[i - 1] or t[i] < t[i - 1] or w[i] < w[i - 1]):
            return -5
    return 0


@njit(**NUMBA_FLAGS, inline="always")
def _reversed_tie(p, t, y, end, step, px, tx):
    """Is leaf event ``y`` -- or, where it is the event at position ``px`` itself, the next one from it by
    ``step`` -- short of ``end`` and at order time ``tx``?  With ``y`` the last event of a leaf before
    ``px`` in position (step -1, ``end`` the leaf's first index less one) or the first after it (step 1,
    ``end`` one past its last), that is whether an event of the leaf before (after) ``px`` in position
    shares its time: the leaf's times ascend with its positions, so its nearest such event is the latest
    (earliest) in time.  Under ``nondecreasing_ts`` such a pair of adjacent variables' leaves is before
    each other both ways, so a match may bind them out of position order (docs/semantics.md section 1).
    The same event at ``px`` is no such pair: distinct variables bind distinct events."""
    if y != end and p[y] == px:
        y += step
    return y != end and t[y] == tx


@njit(**NUMBA_FLAGS)
def _triples_count(A, B, C, W, order, n, inner_cap, cap_max, fb, sfb, at, inner_out, inner_bc, ties):
    # Per partition: fb[a] = the first event of B after a (B's events from it on all are; sfb their
    # sums from the partition's first a: sfb[a + 1] = fb[a0] + ... + fb[a], the empty sum at a0 never
    # stored, since sfb[a0] is the partition before's last sum, written by another thread), the pairs
    # (a, b) within the window (with ``inner_bc`` the pairs (b, c): a right-deep plan's first join) counted
    # against ``inner_cap`` (into inner_out[0]), then per event c of C its matches,
    # into at[c's position + 1] when ``at`` has room for every position.  Returns the number of matches
    # or a status: -1 past a cap, -2 partition offsets outside the leaves, -3 a position outside
    # [0, n), -5 times that do not follow the positions, -6 (with ``ties``, under nondecreasing_ts run
    # in position order) a reversed tie: an event of B at the order time of an event of A after it in
    # position, or of C before it (_reversed_tie).
    pA, tA, wA, Ag = A[1], A[4], A[6], A[3]
    pB, tB, wB, Bg = B[1], B[4], B[6], B[3]
    pC, tC, wC, Cg = C[1], C[4], C[6], C[3]
    per_end = len(at) > 0
    inner = np.int64(0)
    m = np.int64(0)
    for g in range(len(Ag) - 1):
        a0, a1, b0, b1, c0, c1 = Ag[g], Ag[g + 1], Bg[g], Bg[g + 1], Cg[g], Cg[g + 1]
        if not (0 <= a0 <= a1 <= len(pA) and 0 <= b0 <= b1 <= len(pB) and 0 <= c0 <= c1 <= len(pC)
                and a1 <= len(fb)):
            return np.int64(-2)
        for status in (_follows(pA, tA, wA, a0, a1, n), _follows(pB, tB, wB, b0, b1, n),
                       _follows(pC, tC, wC, c0, c1, n)):
            if status < 0:
                return np.int64(status)
        j = k = b0
        run = np.int64(0)
        for a in range(a0, a1):
            while j < b1 and ((pB[j] <= pA[a]) if order == 0 else (tB[j] <= tA[a])):
                j += 1
            # the window times of a, then of its first b, ascend (each leaf's ascend, checked above)
            if j < b1 and wB[j] < wA[a]:
                return np.int64(-5)
            if ties and _reversed_tie(pB, tB, j - 1, b0 - 1, -1, pA[a], tA[a]):
                return np.int64(-6)
            while k < b1 and not exceeds(wA[a], wB[k], W):
                k += 1
            fb[a] = j
            run += j
            sfb[a + 1] = run
            if not inner_bc:
                inner += max(k - j, 0)
        inner_out[0] = inner
        if inner > inner_cap:
            return np.int64(-1)
        lo = k = a0
        hb = kb = b0  # the first event of B not before c; the first within c's window
        for c in range(c0, c1):
            while hb < b1 and ((pB[hb] < pC[c]) if order == 0 else (tB[hb] < tC[c])):
                hb += 1
            if hb > b0 and wC[c] < wB[hb - 1]:
                return np.int64(-5)
            if ties and _reversed_tie(pB, tB, hb, b1, 1, pC[c], tC[c]):
                return np.int64(-6)
            if inner_bc:
                while kb < hb and exceeds(wB[kb], wC[c], W):
                    kb += 1
                inner += hb - kb
                inner_out[0] = inner
                if inner > inner_cap:
                    return np.int64(-1)
            while lo < a1 and exceeds(wA[lo], wC[c], W):
                lo += 1
            # the a's with a b before c: [lo, k), those from lo whose first b is below hb (fb ascends
            # with a, hb with c); c's matches are hb - fb[a] summed over them
            k = max(k, lo)
            while k < a1 and fb[k] < hb:
                k += 1
            cnt = (k - lo) * hb - ((sfb[k] if k > a0 else 0) - (sfb[lo] if lo > a0 else 0))
            if m + cnt > cap_max:
                return np.int64(-1)
            if per_end:  # pC[c] < n = len(at) - 1 (_follows)
                at[pC[c] + 1] += cnt
            m += cnt
    return m


@njit(**NUMBA_FLAGS)
def _triples_rows(A, B, C, W, order, fb, at, ia, ib, ic, rows, times):
    # The writing pass over what _triples_count counted (its fb): each c's rows at at[c's position]
    # (then advanced past them) when ``at`` is given, else one after another; for each a from the
    # earliest in c's window, a's value, B's slice [fb[a], hb) and c's value written column by column,
    # and their order times into ``times`` alike.  Returns the number of rows or -4 past the matrix.
    pA, tA, wA, Ag = A[1], A[4], A[6], A[3]
    pB, tB, Bg = B[1], B[4], B[3]
    pC, tC, wC, Cg = C[1], C[4], C[6], C[3]
    per_end = len(at) > 0
    d = np.int64(0)
    n = np.int64(0)
    for g in range(len(Ag) - 1):
        a0, a1, b0, b1, c0, c1 = Ag[g], Ag[g + 1], Bg[g], Bg[g + 1], Cg[g], Cg[g + 1]
        lo = a0
        hb = b0
        for c in range(c0, c1):
            while hb < b1 and ((pB[hb] < pC[c]) if order == 0 else (tB[hb] < tC[c])):
                hb += 1
            while lo < a1 and exceeds(wA[lo], wC[c], W):
                lo += 1
            if per_end:
                d = at[pC[c]]
            start = d
            a = lo
            while a < a1 and fb[a] < hb:
                j = fb[a]
                cnt = hb - j
                if d + cnt > min(rows.shape[1], times.shape[1]):
                    return np.int64(-4)
                u, tu = pA[a], tA[a]
                for t in range(cnt):
                    rows[ia, d + t] = u
                    rows[ib, d + t] = pB[j + t]
                    times[ia, d + t] = tu
                    times[ib, d + t] = tB[j + t]
                d += cnt
                a += 1
            v, tv = pC[c], tC[c]
            for t in range(start, d):  # c's column: one value for all its rows
                rows[ic, t] = v
                times[ic, t] = tv
            n += d - start
            if per_end:
                at[pC[c]] = d
    return n


def leaf_inputs(kernel: str, leaves, ts, wt, order: str, src):
    """The fused kernels' inputs checked (:func:`seq3_leaf_rows`,
    :func:`jitcep.kernels.final_join_chain.seq_chain_rows`): (the leaves' timed buffers, ``ridx``: each
    leaf's row of the output matrix, the order code the kernels run in, ``ties``).  Under
    ``nondecreasing_ts`` they run in position order with ``ties`` True: they decline at a reversed tie
    (:func:`_reversed_tie`), and where there is none every match is in position order (below).  An
    unknown order, buffers of different partitions or arrays of different lengths, a buffer that is no
    leaf, or ``src`` (the leaf of each row) no permutation of the leaves is a KernelInputError."""
    if order not in ORDER_CODE:
        raise fail(kernel, f"order {order!r} is none of {sorted(ORDER_CODE)}")
    timed = [_timed(x, ts, wt) for x in leaves]
    for x in timed[1:]:
        _checked(kernel, timed[0], x)
    if any(x[1] is not x[2] or x[0].shape[1] != 1 for x in timed):
        raise fail(kernel, "an input is not a leaf (one-event records, start array = end array)")
    rows = [int(s) for s in src]
    if sorted(rows) != list(range(len(leaves))):
        raise fail(kernel, f"the rows {rows} are not the {len(leaves)} leaves once each")
    ties = order == "nondecreasing_ts"
    ridx = np.array([rows.index(v) for v in range(len(leaves))], np.int64)
    return timed, ridx, ORDER_CODE["position" if ties else order], ties


def seq3_leaf_rows(A, B, C, ts, wt, W: int, order: str, inner_cap: int, cap: int, src, n_events: int,
                   threads: int = 1, inner_bc: bool = False):
    """The matches of ``SEQ(a, b, c)`` over the leaves ``A``, ``B``, ``C`` (their one-event records; no
    predicate) within the window: (rows, times, pairs), or None under ``nondecreasing_ts`` at a reversed
    tie (below); rows a C-ordered (3, matches) matrix in canonical order, row i holding the events of
    the variable ``src[i]`` (0: a, 1: b, 2: c), times their order times alike (the leaves' ``ts``, the output's time fields: written as the rows are,
    read in order from the leaves, instead of gathered at the rows again), and the number of pairs
    (a, b) within the window (with ``inner_bc``: (b, c), the first join of a right-deep plan).  Every row
    is a leaf event's position, so none is unbound.

    ``inner_cap`` bounds those pairs (the first join's, counted, not made) and
    ``cap`` the matches: past either, an ExplosionError.  ``order``: any.  Under ``nondecreasing_ts``
    simultaneous events are before each other, so a match may bind an event of b before one of a in
    position, or one of c before one of b, at the same time (a tie), and then its last or first event is
    not c's or a's: its row would not be c's.  There the rows are those of ``position`` order unless an
    event of B shares its time with one of A after it, or with one of C before it (a reversed tie),
    where None is returned (nothing written the caller sees; the caller's joins then make and order
    the pairs).  Without one, every match under ``nondecreasing_ts`` has its positions ascending (a
    time ahead is a position ahead in a table sorted by time, a tie is not reversed, distinct
    variables bind distinct events), so it is a match in position order and back, its window the
    same, and the first join's pairs too (OpenCEP's files, each minute's events in a fixed order of
    types, have no reversed tie between types in that order).  ``threads``: the partitions are
    split into up to that many ranges counted and written side by side.  A buffer that is no leaf,
    partitions that differ or fall outside the records, ``src`` no permutation of (0, 1, 2), a
    position not below ``n_events`` or times that do not follow the positions (the event table is
    sorted by time) is a KernelInputError.
    """
    (A, B, C), (ia, ib, ic), code, ties = leaf_inputs("seq3_leaf_rows", (A, B, C), ts, wt, order, src)
    W = window_bound(W)
    G = len(A[3]) - 1
    fb = scratch("seq3_leaf_rows_fb", len(A[2]), np.int64)
    sfb = scratch("seq3_leaf_rows_sfb", len(A[2]) + 1, np.int64)
    at = scratch("seq3_leaf_rows_at", int(n_events) + 1 if G > 1 else 0, np.int64)
    at[:] = 0
    ranges = partition_ranges((A[3], B[3], C[3]), threads)

    def parts(g0: int, g1: int):
        return tuple((*x[:3], x[3][g0:g1 + 1], *x[4:]) for x in (A, B, C))

    inner = np.zeros(len(ranges), np.int64)

    def count(g0: int, g1: int) -> int:
        i = ranges.index((g0, g1))
        status = _triples_count(*parts(g0, g1), W, code, int(n_events), int(inner_cap), int(cap), fb, sfb, at,
                                inner[i:i + 1], bool(inner_bc), ties)
        if status == -2:
            raise fail("seq3_leaf_rows", "partition offsets are not ascending offsets into the leaves")
        if status == -3:
            raise fail("seq3_leaf_rows", f"a position is not below {n_events}")
        return status

    counts = run_ranges(count, ranges)
    if -5 in counts:
        raise fail("seq3_leaf_rows", "a leaf's order or window times do not ascend with its positions")
    if -6 in counts:
        return None
    m = sum(counts)
    if -1 in counts or int(inner.sum()) > inner_cap or m > cap:  # each range checks its own share only
        raise too_many_pairs("a SEQ join", min(inner_cap, cap))
    rows, times = (empty(3 * m, np.int64).reshape(3, m) for _ in range(2))
    if m:
        np.cumsum(at, out=at)  # at[e]: the matches ending before position e
        written = run_ranges(lambda g0, g1: _triples_rows(*parts(g0, g1), W, code, fb, at, ia, ib, ic, rows, times),
                             ranges)
        if sum(written) != m:  # no row left unwritten
            raise fail("seq3_leaf_rows", "the matches counted are not those written")
    return rows, times, int(inner.sum())
