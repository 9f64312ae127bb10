"""Exact window tests over int64 times (docs/semantics.md section 2, "Time is exact").

Two int64 timestamps can lie up to 2**64 - 1 apart (events at 1800 and 2200
in nanoseconds, or the int64 extremes), so ``hi - lo`` formed in int64 can
wrap around to a small or negative number and let a pair 400 years apart pass
``WITHIN 1 hour``.  Every window and time-difference test of the compiled
engine goes through :func:`exceeds`: it forms the difference only when it is
positive, as a uint64, where every such difference fits.  The bound is a
uint64 as well, so a window wider than int64 (clamped at :data:`MAX_SPAN`,
the widest possible difference) and ``WITHIN UNBOUNDED`` are the same test.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .checks import fail

MAX_SPAN = 2**64 - 1  # the largest difference of two int64 values: a bound this wide excludes nothing


@njit(**NUMBA_FLAGS)
def exceeds(lo, hi, W):
    """Is ``hi - lo > W``?  Exact for any int64 ``lo``, ``hi`` and uint64 ``W``.

    The difference is formed only when ``hi > lo``, as a uint64 (it lies in
    [1, 2**64 - 1]); otherwise it is at most 0, which no bound is below.
    """
    return hi > lo and np.uint64(hi) - np.uint64(lo) > W


@njit(**NUMBA_FLAGS)
def _spans_within(lo, hi, W, out):
    for i in range(len(lo)):
        out[i] = not exceeds(lo[i], hi[i], W)


def spans_within(lo: np.ndarray, hi: np.ndarray, W) -> np.ndarray:
    """``hi[i] - lo[i] <= W`` for every i, exactly (:func:`exceeds`), as a bool array."""
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    if lo.shape != hi.shape:
        raise fail("spans_within", f"{len(lo)} starts and {len(hi)} ends")
    out = np.empty(len(lo), dtype=np.bool_)
    _spans_within(lo, hi, window_bound(W), out)
    return out


def window_bound(W) -> np.uint64:
    """The inclusive window bound a kernel takes: ``W`` (an int >= 0) as a uint64, at most :data:`MAX_SPAN`.

    Any bound from :data:`MAX_SPAN` up admits every pair, so larger ones (a
    window of 10**30 days, an unbounded window) are clamped to it exactly.
    """
    if isinstance(W, (bool, np.bool_)) or not isinstance(W, (int, np.integer)):
        raise TypeError(f"a window bound is an integer, got {W!r}")
    W = int(W)
    if W < 0:
        raise fail("window_bound", f"a window bound is at least 0, got {W}")
    return np.uint64(min(W, MAX_SPAN))


_EXACT = np.uint64(1 << 52)  # below it a float product of r and 1 / width is within one of r // width


@njit(**NUMBA_FLAGS)
def _most_per_window(type_code, ts, allowed, W):
    V, T = allowed.shape[0], allowed.shape[1] - 1
    n = len(type_code)
    # The ts of each type slot together (a counting sort), so that a row of one type reads its events
    # without a test per event: a pass per row testing each event's type took 3-4x as long in a run
    # (the tests' outcomes are as random as the types, so most mispredict).
    slot = np.empty(n, np.int64)
    start = np.zeros(T + 2, np.int64)
    for i in range(n):
        c = np.int64(type_code[i])
        s = c if 0 <= c < T else T
        slot[i] = s
        start[s + 1] += 1
    for s in range(T + 1):
        start[s + 1] += start[s]
    fill = start[:T + 1].copy()
    by_slot = np.empty(n, np.int64)
    for i in range(n):
        s = slot[i]
        by_slot[fill[s]] = ts[i]
        fill[s] += 1
    count = np.zeros(V, np.int64)
    most = np.zeros(V, np.int64)
    mine = np.empty(n, np.int64)
    for v in range(V):
        one, slots = -1, 0
        for s in range(T + 1):
            if allowed[v, s]:
                one, slots = s, slots + 1
        if slots == 1:
            got = by_slot[start[one]:start[one + 1]]
        else:  # several types: their events in position order, kept without a branch
            k = 0
            for i in range(n):
                mine[k] = ts[i]
                k += np.int64(allowed[v, slot[i]])
            got = mine[:k]
        count[v] = len(got)
        most[v] = _most_in_two_bins(got, W)
    return count, most


@njit(**NUMBA_FLAGS)
def _most_in_two_bins(ts, W):
    """The most events of ascending ``ts`` in bins b and b + 1 of width W + 1 counted from ts[0] (all of
    them when one window of W holds them), without a branch per event: where the bins hold few events
    their changes are as random as the gaps."""
    k = len(ts)
    if k == 0 or np.uint64(ts[k - 1]) - np.uint64(ts[0]) <= W:
        return k
    width = W + np.uint64(1)  # W < MAX_SPAN here: the events do not fit in one window
    inv = 1.0 / np.float64(width)
    t0 = np.uint64(ts[0])
    qp = np.uint64(0)
    run_n = prev_n = best = 0  # events in the current bin, in the bin before it (0: empty), most so far
    for i in range(k):
        r = np.uint64(ts[i]) - t0
        if r >= _EXACT:  # rare: a float product is no longer within one of the quotient
            q = r // width
        else:
            q = np.uint64(np.float64(r) * inv)
            q = q - np.uint64(q * width > r) + np.uint64((q + np.uint64(1)) * width <= r)
        new = np.int64(q != qp)
        best = max(best, new * (prev_n + run_n))
        prev_n = new * np.int64(q == qp + np.uint64(1)) * run_n + (1 - new) * prev_n
        run_n = (1 - new) * run_n + 1
        qp = q
    return max(best, prev_n + run_n)


def most_per_window(type_code: np.ndarray, ts: np.ndarray, allowed: np.ndarray, W) -> tuple[np.ndarray, np.ndarray]:
    """(count, most): per row v of ``allowed`` (per type code 0..T-1 whether v takes it; the last
    column: the null type and any other code) the events of its types, and an upper bound on how many
    of them one window of ``W`` (``max - min <= W``, an int, :func:`window_bound`) holds: all of them
    when they fit in one window, else the most in two adjacent bins of width W + 1 counted from v's
    first event (a window meets at most two).  ``ts`` ascends.  A pass over the events per row,
    where NumPy took a mask and ~8 calls per row (:func:`jitcep.runtime.small_work`, which bounds a
    small table's partial matches with it)."""
    if len(ts) != len(type_code):
        raise fail("most_per_window", f"{len(ts)} timestamps for {len(type_code)} events")
    if allowed.ndim != 2 or not allowed.shape[1]:
        raise fail("most_per_window", "no slot for the null type")
    return _most_per_window(type_code, ts, np.ascontiguousarray(allowed, dtype=np.bool_), window_bound(W))
