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
