"""SEQ and AND joins over end-sorted buffers (ZStream section 4.4, Algorithms 1 and 3).

Both kernels return *candidate pairs* ``(li, ri, g)``: record ``li`` of the left
buffer and ``ri`` of the right buffer, in partition ``g``, that satisfy the
structural constraints (order, window, distinct events).  The value predicates
of the join are then applied to the candidates by the pattern's generated
predicate function; keeping predicates out of the kernels is what lets these
kernels be compiled once for every pattern.  At the root, where no predicate
is left, :func:`jitcep.kernels.final_join.seq_join_rows` writes the pairs as the matches' rows
instead.

Time arguments: ``ts`` (event timestamps by position) decides order for
``strict_ts`` / ``nondecreasing_ts``; ``wt`` is the window measure (``ts`` for a
time window, the position itself for a count window) with the inclusive bound
``wt[last] - wt[first] <= W``, tested exactly for any int64 times by
:func:`jitcep.kernels.window.exceeds` (W a uint64: never an int64 difference).  Like ZStream's records (section 4.2), a buffer
may carry its records' times: ``(pos, start, end, goff, tstart, tend, wstart,
wend)`` with ``tstart = ts[start]`` and so on; the kernels read only those, in
record order.  A record's events are scattered over the table, so reading
``ts[end[r]]`` instead costs a cache miss per record (most of a join's time at
10^7 events).  A 4-tuple buffer gets its times gathered here.

Orders (``order`` argument): 0 position, 1 strict_ts, 2 nondecreasing_ts.

The kernels index only with loop counters bounded by the partition offsets
``goff``; each partition's offsets are checked as the loop reads them (status
-2, a KernelInputError), the arrays' lengths by the wrappers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import config
from ..config import NUMBA_FLAGS
from ..errors import ExplosionError
from ..threads import even_ranges, partition_ranges, run_ranges
from .alloc import empty
from .checks import check_lengths, fail
from .window import exceeds, window_bound

ORDER_CODE = {"position": 0, "strict_ts": 1, "nondecreasing_ts": 2}


@njit(**NUMBA_FLAGS)
def _overlap(a, b):
    """Do two records share an event? (distinct variables bind distinct events)"""
    for x in a:
        if x < 0:
            continue
        for y in b:
            if x == y:
                return True
    return False


@njit(**NUMBA_FLAGS)
def _done(li, ri, gg, n):
    """The AND join's result: the ``n`` pairs, or when they outgrew the arrays none and status ``n``.

    Past the arrays it only counts (up to the cap), and the wrapper runs it again into arrays of
    exactly that size: growing them by doubling copied each pair up to twice into fresh small
    pages, and left the last arrays up to half unused (6.65M pairs: 0.1-0.3 s, perf/notes/output_and_core.md).  Its
    merge cannot resume at a record, as the SEQ joins do (:func:`_stopped`): both inputs' earlier
    records take part in every later step.
    ``gg`` is written only with several partitions: with one, every pair's is 0, and the wrapper
    returns zeros that are never written (a third of the pairs' fresh memory)."""
    if n > len(li):
        return li[:0], ri[:0], gg[:0], n
    return li[:n], ri[:n], gg[:n], 0


@njit(**NUMBA_FLAGS)
def _stopped(li, ri, gg, at, n, cap_max, g, d):
    """A SEQ join kernel's result when its pair arrays are full at driving record ``d`` of partition
    ``g``: the ``at`` pairs of the records before it, status 1 and where a next call resumes, (g, d);
    or status -1 when the pairs are past ``cap_max`` (a pair is due beyond the ``n`` written).

    The caller resumes into fresh arrays from record ``d`` on and concatenates
    (:func:`_split_join`).  Counting past the arrays and running again into
    arrays of the exact size, as :func:`_and_join` does, cost a whole second
    join whenever the first arrays fell short by a single pair (zstream_q4:
    49,875 pairs for 49,723 right records, 1 of a 9 ms run)."""
    if n >= cap_max:
        return li[:0], ri[:0], gg[:0], -1, g, d
    return li[:at], ri[:at], gg[:at], 1, g, d


@njit(**NUMBA_FLAGS)
def _search(P, T, lo, hi, x, tx, order, strict):
    """First index i in [lo, hi) whose key — the position P[i] (order 0) or the time T[i] — is past
    the bound x (tx): above it when ``strict``, else at least it.  Keys ascend (binary search)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if order == 0:
            k, b = P[mid], x
        else:
            k, b = T[mid], tx
        if strict:
            below = k <= b
        else:
            below = k < b
        if below:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**NUMBA_FLAGS, inline="always")
def _room(n, size, cap_max):
    """Where pair ``n`` of the AND join goes: 1 into the pair arrays (``size`` long), 0 nowhere (past
    them the kernel only counts, :func:`_done`), -1 past ``cap_max`` (the kernel stops).  Scalars only:
    a helper taking the arrays, inlined or called, made the joins 1.4x slower (it counts references
    to each array per pair)."""
    if n < size:
        return 1
    return -1 if n >= cap_max else 0


@njit(**NUMBA_FLAGS)
def _first_after(Len, Lten, lo, hi, x, tx, order):
    """First left record in [lo, hi) whose end is not before position x (time tx) in the order:
    order 0 Len >= x, 1 Lten >= tx, 2 Lten > tx (a tie is not "before" under nondecreasing_ts)."""
    return _search(Len, Lten, lo, hi, x, tx, order, order == 2)


@njit(**NUMBA_FLAGS)
def _before(Len, Lten, l, x, tx, order):
    """Does left record ``l`` end before position x (time tx) in the order?  (:func:`_first_after`'s test)"""
    if order == 0:
        return Len[l] < x
    return Lten[l] <= tx if order == 2 else Lten[l] < tx


@njit(**NUMBA_FLAGS)
def _seq_join(L, R, W, order, distinct, right_leaf, cap_max, li, ri, gg):
    # ``right_leaf``: R's records are one event each (start = end), so their starts ascend with r
    # and the upper bound of the left range only moves forward: it steps on from the previous one
    # instead of a binary search per right record (zstream_q4's leaf join, 49,723 right records and
    # one or two left ones in each window: 1.10 -> 0.73 ms).  Every left record is stepped over
    # once at most, as the EAT pointer steps over it: still O(left + right + pairs).
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    G = len(Lg) - 1
    n = np.int64(0)  # not a literal 0: the slices would be compiled once more for Literal[int](0)
    for g in range(G):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        if not (0 <= l0 <= l1 <= len(Len) and 0 <= r0 <= r1 <= len(Ren)):
            return li[:n], ri[:n], gg[:n], -2, g, 0
        if l0 == l1:
            continue
        lo = hi = l0
        for r in range(r0, r1):
            rend = Rwen[r]
            # EAT (ZStream 4.3): left records ending before r.end - W match neither r
            # nor any later r (R is in end order), so the lower pointer only advances.
            while lo < l1 and exceeds(Lwen[lo], rend, W):
                lo += 1
            if right_leaf:
                hi = max(hi, lo)
                while hi < l1 and _before(Len, Lten, hi, Rst[r], Rtst[r], order):
                    hi += 1
            else:
                hi = _first_after(Len, Lten, lo, l1, Rst[r], Rtst[r], order)
            at = n  # r's first pair: where a call resumed at r writes it
            for l in range(lo, hi):
                # wt is monotone in position inside a partition: wt[min(a, b)] = min(wt[a], wt[b])
                if exceeds(min(Lwst[l], Rwst[r]), max(Lwen[l], rend), W):
                    continue
                if distinct and _overlap(Lpos[l], Rpos[r]):
                    continue
                if n == len(li):
                    return _stopped(li, ri, gg, at, n, cap_max, g, r)
                li[n], ri[n] = l, r
                if G > 1:
                    gg[n] = g
                n += 1
    return li[:n], ri[:n], gg[:n], 0, G, 0


@njit(**NUMBA_FLAGS)
def _first_later(Rst, Rtst, lo, hi, x, tx, order):
    """First one-event right record in [lo, hi) after a left end at position x (time tx) in the
    order: order 0 Rst > x, 1 Rtst > tx, 2 Rtst >= tx."""
    return _search(Rst, Rtst, lo, hi, x, tx, order, order != 2)


@njit(**NUMBA_FLAGS)
def _seq_join_by_left(L, R, W, order, distinct, cap_max, li, ri, gg):
    # The same pairs as _seq_join, driven by the left records: for each, a binary search finds the
    # first later right record and the window ends the scan.  Needs one-event right records (a
    # leaf: start = end, so starts ascend in a partition); pairs come in (partition, l) order.
    # The admission tests are _seq_join's, written out again: a helper taking the buffers per pair
    # made the join 4x slower (Numba counts references to every array of the tuples each call).
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    G = len(Lg) - 1
    n = np.int64(0)
    for g in range(G):
        l0, l1 = Lg[g], Lg[g + 1]
        r0, r1 = Rg[g], Rg[g + 1]
        if not (0 <= l0 <= l1 <= len(Len) and 0 <= r0 <= r1 <= len(Ren)):
            return li[:n], ri[:n], gg[:n], -2, g, 0
        if r0 == r1:
            continue
        for l in range(l0, l1):
            at = n
            for r in range(_first_later(Rst, Rtst, r0, r1, Len[l], Lten[l], order), r1):
                if exceeds(Lwst[l], Rwen[r], W):
                    break  # and every later r (wt ascends with r)
                if exceeds(min(Lwst[l], Rwst[r]), max(Lwen[l], Rwen[r]), W):
                    continue
                if distinct and _overlap(Lpos[l], Rpos[r]):
                    continue
                if n == len(li):
                    return _stopped(li, ri, gg, at, n, cap_max, g, l)
                li[n], ri[n] = l, r
                if G > 1:
                    gg[n] = g
                n += 1
    return li[:n], ri[:n], gg[:n], 0, G, 0


@njit(**NUMBA_FLAGS)
def _and_join(L, R, W, distinct, cap_max, li, ri, gg):
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    G = len(Lg) - 1
    n = np.int64(0)
    for g in range(G):
        i, i1 = Lg[g], Lg[g + 1]
        j, j1 = Rg[g], Rg[g + 1]
        if not (0 <= i <= i1 <= len(Len) and 0 <= j <= j1 <= len(Ren)):
            return li[:n], ri[:n], gg[:n], -2
        if i == i1 or j == j1:
            continue
        loL, loR = i, j
        # merge by end (Algorithm 3): the record ending first drives and joins every
        # earlier-ending record of the other buffer inside the window.
        while i < i1 or j < j1:
            from_left = j == j1 or (i < i1 and Len[i] <= Ren[j])
            if from_left:
                d_end, d_wend, d_wst = Len[i], Lwen[i], Lwst[i]
                while loR < j and exceeds(Rwen[loR], d_wend, W):
                    loR += 1
                for r in range(loR, j):
                    if Ren[r] >= d_end:
                        continue
                    if exceeds(min(d_wst, Rwst[r]), d_wend, W):
                        continue
                    if distinct and _overlap(Lpos[i], Rpos[r]):
                        continue
                    room = _room(n, len(li), cap_max)
                    if room < 0:
                        return li[:0], ri[:0], gg[:0], -1
                    if room:
                        li[n], ri[n] = i, r
                        if G > 1:
                            gg[n] = g
                    n += 1
                i += 1
            else:
                d_end, d_wend, d_wst = Ren[j], Rwen[j], Rwst[j]
                while loL < i and exceeds(Lwen[loL], d_wend, W):
                    loL += 1
                for l in range(loL, i):
                    if Len[l] >= d_end:
                        continue
                    if exceeds(min(d_wst, Lwst[l]), d_wend, W):
                        continue
                    if distinct and _overlap(Lpos[l], Rpos[j]):
                        continue
                    room = _room(n, len(li), cap_max)
                    if room < 0:
                        return li[:0], ri[:0], gg[:0], -1
                    if room:
                        li[n], ri[n] = l, j
                        if G > 1:
                            gg[n] = g
                    n += 1
                j += 1
    return _done(li, ri, gg, n)


@njit(**NUMBA_FLAGS)
def _pair_records(L, R, li, ri, a, b, window_too, pos, start, end, tstart, tend, wstart, wend):
    # Records [a, b) of the join's output, one pass over the surviving pairs: the left record's
    # events then the right one's; start (end) and its times from whichever record starts first
    # (ends last): ts and wt grow with the position inside a partition.  False: a pair indexes
    # past its buffer.
    Lpos, Lst, Len, Lg, Ltst, Lten, Lwst, Lwen = L
    Rpos, Rst, Ren, Rg, Rtst, Rten, Rwst, Rwen = R
    kl, kr = Lpos.shape[1], Rpos.shape[1]
    for i in range(a, b):
        l, r = li[i], ri[i]
        if not (0 <= l < len(Len) and 0 <= r < len(Ren)):
            return False
        for k in range(kl):
            pos[i, k] = Lpos[l, k]
        for k in range(kr):
            pos[i, kl + k] = Rpos[r, k]
        if Lst[l] <= Rst[r]:
            start[i], tstart[i] = Lst[l], Ltst[l]
            if window_too:
                wstart[i] = Lwst[l]
        else:
            start[i], tstart[i] = Rst[r], Rtst[r]
            if window_too:
                wstart[i] = Rwst[r]
        if Len[l] >= Ren[r]:
            end[i], tend[i] = Len[l], Lten[l]
            if window_too:
                wend[i] = Lwen[l]
        else:
            end[i], tend[i] = Ren[r], Rten[r]
            if window_too:
                wend[i] = Rwen[r]
    return True


def pair_records(L, R, li, ri, threads: int = 1):
    """The records of pairs ``(li[i], ri[i])`` of two 8-tuple buffers (:func:`seq_join`'s, after the
    join's predicates): ``(pos, start, end, tstart, tend, wstart, wend)``, ``pos`` the left record's
    events then the right one's, the span from the record that starts first and the one that ends
    last.  When both buffers' window times are their times (a time window), ``wstart`` and ``wend``
    are ``tstart`` and ``tend`` themselves, as in the inputs.  ``threads``: the pairs are split into
    up to that many ranges filled side by side.  A pair past its buffer is a KernelInputError.
    """
    L, R = _checked("pair_records", L, R)
    li, ri = np.ascontiguousarray(li, dtype=np.int64), np.ascontiguousarray(ri, dtype=np.int64)
    if len(li) != len(ri):
        raise fail("pair_records", f"{len(li)} left and {len(ri)} right records")
    m = len(li)
    window_too = not (L[6] is L[4] and R[6] is R[4])
    k = L[0].shape[1] + R[0].shape[1]
    pos = empty(m * k, np.int64).reshape(m, k)
    start, end, tstart, tend = (empty(m, np.int64) for _ in range(4))
    wstart, wend = (empty(m if window_too else 0, np.int64) for _ in range(2))

    def fill(a: int, b: int) -> bool:
        return _pair_records(L, R, li, ri, a, b, window_too, pos, start, end, tstart, tend, wstart, wend)

    if not all(run_ranges(fill, even_ranges(m, threads))):
        raise fail("pair_records", "a pair indexes past its buffer's records")
    return pos, start, end, tstart, tend, (wstart if window_too else tstart), (wend if window_too else tend)


@njit(**NUMBA_FLAGS)
def _pair_columns(Lpos, Rpos, li, ri, side, col, out, a, b):
    # Columns [a, b) of ``out``: row k is the event of column col[k] of the pair's left record
    # (side 0) or right record (side 1), one pass over the pairs instead of a NumPy gather per
    # variable and a stack.  False: a pair indexes past its buffer.
    for i in range(a, b):
        l, r = li[i], ri[i]
        if not (0 <= l < Lpos.shape[0] and 0 <= r < Rpos.shape[0]):
            return False
        for k in range(len(col)):
            out[k, i] = Lpos[l, col[k]] if side[k] == 0 else Rpos[r, col[k]]
    return True


def pair_columns(Lpos: np.ndarray, Rpos: np.ndarray, li: np.ndarray, ri: np.ndarray, where, threads: int = 1):
    """The events the pairs ``(li[i], ri[i])`` bind to some variables, as the predicates take them
    (k x m int64): row k holds column ``c`` of the left records' positions ``Lpos`` where ``where[k]`` is
    ``(0, c)``, of the right ones' ``Rpos`` where it is ``(1, c)``.  ``threads``: the pairs are split
    into up to that many ranges filled side by side.  Below :data:`jitcep.config.KERNEL_MIN_PAIRS`
    pairs NumPy gathers them (a kernel call's dispatch costs more than such a gather).  A pair past
    its buffer, or a column past its records' width, is a KernelInputError."""
    if len(li) != len(ri) or Lpos.ndim != 2 or Rpos.ndim != 2 or any(
            s not in (0, 1) or not 0 <= c < (Rpos if s else Lpos).shape[1] for s, c in where):
        raise fail("pair_columns", f"columns {list(where)} of {len(li)} and {len(ri)} pairs of records "
                                   f"{Lpos.shape[1:]} and {Rpos.shape[1:]} wide")
    m = len(li)
    if m < config.KERNEL_MIN_PAIRS:
        out = np.empty((len(where), m), np.int64)
        try:  # NumPy refuses an index past the end; one below 0 would count from the end
            if m and (li.min() < 0 or ri.min() < 0):
                raise IndexError
            for k, (s, c) in enumerate(where):
                out[k] = Rpos[ri, c] if s else Lpos[li, c]
        except IndexError:
            raise fail("pair_columns", "a pair indexes past its buffer's records") from None
        return out
    li, ri = np.ascontiguousarray(li, dtype=np.int64), np.ascontiguousarray(ri, dtype=np.int64)
    side = np.array([s for s, _ in where], dtype=np.int64)
    col = np.array([c for _, c in where], dtype=np.int64)
    out = empty(len(col) * m, np.int64).reshape(len(col), m)
    Lpos, Rpos = np.ascontiguousarray(Lpos, dtype=np.int64), np.ascontiguousarray(Rpos, dtype=np.int64)

    def fill(a: int, b: int) -> bool:
        return _pair_columns(Lpos, Rpos, li, ri, side, col, out, a, b)

    if not all(run_ranges(fill, even_ranges(m, threads))):
        raise fail("pair_columns", "a pair indexes past its buffer's records")
    return out


@njit(**NUMBA_FLAGS)
def _count_kept(keep, a, b):
    n = 0
    for i in range(a, b):
        n += keep[i]
    return n


@njit(**NUMBA_FLAGS)
def _keep_pairs(li, ri, g, keep, a, b, at, stop, oli, ori, og):
    # The kept pairs of [a, b) written to [at, stop): branch-free (every pair is written, the slot
    # advances by its keep flag; a branch on the flag mispredicts on every mixed mask), but never at
    # ``stop``, the next range's first slot, which that range writes at the same time: the test on
    # j < stop is true until the range's last kept pair, so it predicts well.
    j = at
    for i in range(a, b):
        if j < stop:
            oli[j], ori[j], og[j] = li[i], ri[i], g[i]
        j += keep[i]


def keep_pairs(li: np.ndarray, ri: np.ndarray, g: np.ndarray, keep: np.ndarray, threads: int = 1):
    """``(li[keep], ri[keep], g[keep])`` in one pass over the pairs instead of three: a join's pairs
    that pass a test.  ``threads``: the pairs are split into up to that many ranges, each counted and
    then copied to its place side by side (a parallel compaction: the same arrays on any count).
    Below :data:`jitcep.config.KERNEL_MIN_PAIRS` pairs NumPy takes them (a kernel call's dispatch
    costs more than such a pass)."""
    keep = np.asarray(keep, dtype=np.bool_)
    check_lengths("keep_pairs", len(li), ri=ri, g=g, keep=keep)
    if len(li) < config.KERNEL_MIN_PAIRS:
        return li[keep], ri[keep], g[keep]
    li, ri, g, keep = (np.ascontiguousarray(a) for a in (li, ri, g, keep))
    ranges = even_ranges(len(li), threads)
    at = np.cumsum([0, *run_ranges(lambda a, b: _count_kept(keep, a, b), ranges)])  # where each range writes
    out = [empty(int(at[-1]), np.int64) for _ in range(3)]
    each = [(r, r + 1) for r in range(len(ranges))]  # run_ranges over the ranges by number
    run_ranges(lambda r, _: _keep_pairs(li, ri, g, keep, *ranges[r], at[r], at[r + 1], *out), each)
    return tuple(out)


_MIN_PAIRS = 16
"""The first pair arrays hold at least this many pairs (tests set 0, so that most joins outgrow them)."""


def _pair_arrays(n: int):
    """(li, ri, g) output arrays for ``n`` pairs, NumPy-allocated (:mod:`jitcep.kernels.alloc`)."""
    n = max(_MIN_PAIRS, n)
    return empty(n, np.int64), empty(n, np.int64), empty(n, np.int64)


def _timed(buf, ts, wt):
    """The 8-tuple buffer: a 4-tuple gets its records' times gathered (module docstring)."""
    if len(buf) == 8:
        return buf
    pos, start, end, goff = buf
    return (pos, start, end, goff, ts[start], ts[end], wt[start], wt[end])


def _checked(kernel: str, L, R):
    """The two buffers after the checks the kernels rely on: each record array has one entry per
    record, and both buffers have the same number of partitions (their offsets are checked by the
    kernel as it reads them)."""
    for side, buf in (("left", L), ("right", R)):
        pos, start, end, goff, *times = buf
        m = len(end)
        if pos.ndim != 2 or pos.shape[0] != m or goff.ndim != 1 or not len(goff) or \
                any(len(a) != m for a in (start, *times)):
            raise fail(kernel, f"the {side} buffer's arrays do not all have one entry per record")
    if len(L[3]) != len(R[3]):
        raise fail(kernel, f"{len(L[3]) - 1} partitions on the left, {len(R[3]) - 1} on the right")
    return L, R


def _check(status: int, what: str, cap: int) -> None:
    if status == -2:
        raise fail(what, "partition offsets are not ascending offsets into the records")
    if status < 0:
        raise too_many_pairs(what, cap)


def too_many_pairs(what: str, cap: int) -> ExplosionError:
    """The error of a join past ``cap`` candidate pairs (``max_partials`` or the memory budget's share)."""
    return ExplosionError(f"{what} produced more than {cap} candidate partial matches "
                          f"(raise max_partials, narrow the window or add predicates)")


def driven_by_left(L, R, driver: str) -> bool:
    """Do :func:`seq_join`'s left records drive (``driver``: its argument)?"""
    if driver not in ("right", "left", "smaller"):
        raise ValueError(f"unknown SEQ join driver {driver!r}")
    # left-driven search needs one-event right records (a leaf: its start array is its end array)
    leaf = R[1] is R[2]
    if driver == "left" and not leaf:
        raise ValueError("a SEQ join driven by its left input needs a leaf on the right")
    return driver == "left" or driver == "smaller" and leaf and config.JOIN_BY_LEFT * len(L[2]) < len(R[2])


def seq_join(L, R, ts, wt, W: int, order: str, distinct: bool, cap: int, driver: str = "right", threads: int = 1,
             pairs: int = 0):
    """SEQ join (ZStream Algorithm 1): pairs (l, r) with l before r in ``order`` and within W.

    Right records are the outer loop in end order, so output pairs come in the end
    order of r; the left range is [EAT pointer, binary-searched upper bound).
    ``driver="smaller"`` (the plan's choice when the right input is a leaf,
    :mod:`jitcep.plan.rules.join_driver`): when the right leaf is many times
    larger than the left input — the partial matches of a long SEQ thin out,
    every leaf keeps its size — the left records drive instead (a binary
    search into the right leaf each) and the few pairs are sorted into the
    same order: the cost follows the smaller input.  ``driver="left"``: the
    left records drive whatever the sizes (the plan priced both on its
    statistics; the right input must be a leaf).  ``threads``: the partitions
    are split into up to that many ranges joined side by side
    (:func:`_split_join`); the pairs are the same, in the same order.
    ``pairs``: how many pairs the caller expects (0: not known), to size the first pair arrays.

    Invariants (KernelInputError otherwise): every record array of a buffer
    has one entry per record and both buffers the same number of partitions
    (checked here), partition offsets ascend within the records (checked by
    the kernel per partition); W >= 0.  More than ``cap`` pairs is an
    ExplosionError.
    """
    by_left = driven_by_left(L, R, driver)
    kernel = _seq_join_by_left if by_left else _seq_join
    Lt, Rt = _checked("a SEQ join", _timed(L, ts, wt), _timed(R, ts, wt))
    args = (window_bound(W), ORDER_CODE[order], bool(distinct), *(() if by_left else (R[1] is R[2],)), int(cap))
    li, ri, g = _split_join(kernel, Lt, Rt, args, 0 if by_left else 2, "a SEQ join", cap, threads, pairs)
    if by_left and len(li) > 1:  # (partition, r, l) order, as the right-driven kernel gives
        o = np.lexsort((li, ri, g))
        li, ri, g = li[o], ri[o], g[o]
    return li, ri, g


def and_join(L, R, ts, wt, W: int, distinct: bool, cap: int, threads: int = 1):
    """AND join (ZStream Algorithm 3): pairs within W, in the end order of the later record.

    Invariants and ``threads`` as :func:`seq_join`'s.
    """
    Lt, Rt = _checked("an AND join", _timed(L, ts, wt), _timed(R, ts, wt))
    return _split_join(_and_join, Lt, Rt, (window_bound(W), bool(distinct), int(cap)), 1, "an AND join", cap,
                       threads)


def _split_join(kernel, L, R, args, sized_by: int, what: str, cap: int, threads: int, pairs: int = 0):
    """``kernel(L, R, *args, pair arrays)``'s pairs, the partitions split into ranges joined side by side
    (:func:`jitcep.threads.partition_ranges`), their pairs concatenated in partition order.

    The kernels loop over partitions in order and a pair never spans two, so one call over partitions
    ``[g0, g1)`` — the buffers with partition offsets ``goff[g0 : g1 + 1]``, which index the same
    record arrays — gives exactly the pairs of those partitions (numbered from ``g0``).  The first
    pair arrays are sized by the range's left (``sized_by`` 0) or right (2) records, or two per record
    of both (1, at most the cap), or with one range by ``pairs`` when given; a SEQ kernel resumes where
    they fill (:func:`_resumed`), the AND kernel counts past them and runs again (:func:`_done`).  More
    than ``cap`` pairs in all is an ExplosionError, whatever the split.

    ``cap`` is the last of ``args``.  Each of k ranges may hold ``cap / k`` pairs, so the ranges
    together hold no more than one call would (the memory budget, semantics section 12, whatever the
    thread count); a range past its share does not prove the whole past ``cap``, so the join then
    runs again as one call with the whole cap.
    """
    Lg, Rg = L[3], R[3]

    def join(g0: int, g1: int, range_cap: int):
        Lr = (*L[:3], Lg[g0:g1 + 1], *L[4:])
        Rr = (*R[:3], Rg[g0:g1 + 1], *R[4:])
        size = (sized_by != 2) * (Lg[g1] - Lg[g0]) + (sized_by != 0) * (Rg[g1] - Rg[g0])
        if sized_by == 1:  # an AND join pairs a record with others on either side of it; never past its cap
            size = min(2 * size, range_cap)
        if pairs and (g0, g1) == (0, len(Lg) - 1):
            size = pairs
        if kernel is not _and_join:
            return _resumed(kernel, Lr, Rr, args[:-1], range_cap, int(size), sized_by == 0, g0, what)
        li, ri, g, status = kernel(Lr, Rr, *args[:-1], range_cap, *_pair_arrays(int(size)))
        if status > 0:  # more pairs than the first arrays held: again, into arrays of that many (_done)
            li, ri, g, status = kernel(Lr, Rr, *args[:-1], range_cap, *_pair_arrays(status))
        _check(status, what, range_cap)
        return li, ri, _partitions(g, g0, g1 - g0)

    ranges = partition_ranges((Lg, Rg), threads)
    share = -(-cap // len(ranges))
    try:
        parts = run_ranges(lambda g0, g1: join(g0, g1, share), ranges)
    except ExplosionError:
        if len(ranges) == 1:
            raise
        parts = [join(0, len(Lg) - 1, cap)]
    li, ri, g = parts[0] if len(parts) == 1 else _concatenated(parts)
    if len(li) > cap:  # the kernels stop a little past the cap (at a full output array), or per range
        _check(-1, what, cap)
    return li, ri, g


def _partitions(g: np.ndarray, g0: int, count: int) -> np.ndarray:
    """The pairs' partitions from a kernel call over ``count`` partitions numbered from ``g0``: over one,
    the kernel wrote none (:func:`_done`).  Filled, not calloc's zero pages: the pairs' tests read them,
    a fault per page, and :func:`empty` takes them from the run's pool."""
    if count == 1:
        out = empty(len(g), np.int64)
        out.fill(g0)
        return out
    return g + g0 if g0 else g


def _resumed(kernel, L, R, args, cap: int, size: int, by_left: bool, g0: int, what: str):
    """The pairs of a SEQ join kernel over the buffers ``L``, ``R`` (partitions numbered from ``g0``),
    at most ``cap`` of them, through :func:`resume_join`."""
    def call(L, R, left, arrays, base):
        li, ri, g, status, gs, d = kernel(L, R, *args, left, *arrays)
        _check(status, what, cap)
        return li, ri, _partitions(g, base, len(L[3]) - 1), status, gs, d, len(li)
    return resume_join(call, L, R, cap, size, by_left, g0)


def resume_join(call, L, R, cap: int, size: int, by_left: bool, g0: int):
    """The pairs a SEQ join's kernel makes over the buffers ``L``, ``R`` into arrays of ``size`` pairs
    and, each time they are full, into fresh ones from the driving record where it stopped
    (:func:`_stopped`): the right records', or the left ones' when ``by_left``.

    ``call(L, R, left, arrays, base)`` runs the kernel with ``left`` candidate pairs allowed, into
    ``arrays`` (li, ri, g), its partitions numbered from ``base``, raising on an error status; it
    returns ``(li, ri, g, status, gs, d, counted)``: status 0 done, else full at driving record ``d``
    of partition ``gs``, ``counted`` the candidates counted against the cap (the pairs themselves, or
    more where predicates in the loop drop some).  Its partitions from there are the offsets from that
    one on, the first moved to the record.  The parts are concatenated (a copy of the pairs, where
    running the join again into arrays of the exact size, as the AND join does, cost the join twice).
    The next arrays hold the pairs per driving record seen so far times the records left, plus a
    quarter, and at least twice as many as the last ones: a call may write nothing (one record with
    more pairs than they held), and pairs crowded at the end would otherwise make each estimate fall
    short again (a call per few records); doubling bounds the calls by the log of the pairs, and the
    arrays' unwritten pages cost nothing.  No arrays hold more pairs than the cap still allows: the
    kernel writes them full before it finds the cap passed."""
    off = (L if by_left else R)[3]
    first, last = int(off[0]), int(off[-1])
    parts, done, made, base = [], 0, 0, g0
    while True:
        # never more pairs than the cap allows: the kernel fills its arrays before it checks the cap, and an
        # estimate past it wrote gigabytes under a max_memory of one (semantics section 12)
        li, ri, g, status, gs, d, counted = call(L, R, cap - made, _pair_arrays(min(size, cap - made)), base)
        parts.append((li, ri, g))
        done += len(li)
        made += counted
        if status == 0:
            break
        gs, d = int(gs), int(d)
        moved = np.array(off[gs:], np.int64)  # the driving partitions from gs on, gs's from record d
        moved[0] = d
        L = (*L[:3], moved, *L[4:]) if by_left else (*L[:3], L[3][gs:], *L[4:])
        R = (*R[:3], R[3][gs:], *R[4:]) if by_left else (*R[:3], moved, *R[4:])
        off, base = moved, base + gs
        ahead = done * (last - d) // max(d - first, 1)
        size = max(ahead + ahead // 4 + _MIN_PAIRS, 2 * size + 1)
    if len(parts) == 1:
        return parts[0]
    total = sum(len(p[0]) for p in parts)
    # into the run's pool: a concatenation of its own was fresh pages every run (seqAAPLAMZNGOOG at x100)
    return tuple(np.concatenate([p[k] for p in parts], out=empty(total, np.int64)) for k in range(3))


def _concatenated(parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranges' ``(li, ri, g)`` one after another, each range's copied by the thread of its range
    (NumPy's copy releases the GIL), not one after another on one thread."""
    at = np.cumsum([0, *(len(p[0]) for p in parts)])
    out = tuple(empty(int(at[-1]), np.int64) for _ in range(3))

    def copy(r: int, _) -> None:
        for o, a in zip(out, parts[r]):
            o[at[r]:at[r + 1]] = a

    run_ranges(copy, [(r, r + 1) for r in range(len(parts))])
    return out
