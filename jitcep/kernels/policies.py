"""The sequential greedy scans of the output policies and of ``freeze`` (docs/semantics.md section 9).

Each policy is a rule over matches *in canonical order* (section 11): whether
a match is kept depends on the matches kept before it, so it is one pass with
a little state, not a vectorised filter.  SASE+ section 2 defines
non-overlapping output; ``match_single`` / ``match_next`` and ``freeze`` are
OpenCEP's consumption policies as jitcep states them.

- :func:`non_overlapping`: per partition, keep a match iff its first
  position is after the last position of the previously kept match.
- :func:`consume_once`: keep a match iff none of its (consumable) events is
  already used; ``match_single`` gives every event one slot, ``match_next``
  one slot per variable, so an event is used only under the variable it was
  kept with.
- :func:`freeze_active`: a variable's candidates in position order, a
  candidate active unless the last active candidate of its stream is still
  open (within the window).

The wrappers check every index the kernels use (:mod:`jitcep.kernels.checks`):
partitions, slots and streams in one pass each (small next to the caller's
canonical sort), positions against the table size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .checks import check_index, check_lengths, check_offsets
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _non_overlapping(part, lo, hi, G, keep):
    last = np.full(G, -1, dtype=np.int64)  # positions are >= 0: -1 is "nothing kept yet"
    for i in range(len(part)):
        g = part[i]
        if lo[i] > last[g]:
            keep[i] = True
            last[g] = hi[i]


def non_overlapping(part: np.ndarray, lo: np.ndarray, hi: np.ndarray, G: int) -> np.ndarray:
    """Which matches (in canonical order; partition ``part``, first / last position ``lo`` / ``hi``)
    non-overlapping output keeps (SASE+ section 2; semantics section 9).  Checks: lengths, and
    ``part`` in [0, G) in one pass."""
    m = len(part)
    check_lengths("non_overlapping", m, lo=lo, hi=hi)
    check_index("non_overlapping", "part", part, G)
    keep = np.zeros(m, dtype=np.bool_)
    _non_overlapping(np.ascontiguousarray(part, np.int64), np.ascontiguousarray(lo, np.int64),
                     np.ascontiguousarray(hi, np.int64), max(int(G), 1), keep)
    return keep


@njit(**NUMBA_FLAGS)
def _consume_once(off, pos, slot, n, nslots, keep):
    used = np.zeros(n * nslots, dtype=np.bool_)
    for i in range(len(off) - 1):
        fresh = True
        for j in range(off[i], off[i + 1]):
            if used[slot[j] * n + pos[j]]:
                fresh = False
                break
        if fresh:
            keep[i] = True
            for j in range(off[i], off[i + 1]):
                used[slot[j] * n + pos[j]] = True


def consume_once(off: np.ndarray, pos: np.ndarray, slot: np.ndarray, n: int, nslots: int) -> np.ndarray:
    """Which matches (in canonical order) a consumption policy keeps: match i's consumable events are
    ``pos[off[i]:off[i+1]]``, each in slot ``slot[j]`` (``match_single``: one slot; ``match_next``: one
    per variable); a match is kept iff none of them is used in its slot, and then uses them (semantics
    section 9).  ``n``: the table's events.  Checks: ``off`` ascending into ``pos``, ``pos`` in
    [0, n), ``slot`` in [0, nslots), one pass each."""
    check_offsets("consume_once", "off", off, len(pos))
    check_lengths("consume_once", len(pos), slot=slot)
    check_index("consume_once", "pos", pos, n)
    check_index("consume_once", "slot", slot, nslots)
    keep = np.zeros(len(off) - 1, dtype=np.bool_)
    _consume_once(np.ascontiguousarray(off, np.int64), np.ascontiguousarray(pos, np.int64),
                  np.ascontiguousarray(slot, np.int64), int(n), max(int(nslots), 1), keep)
    return keep


@njit(**NUMBA_FLAGS)
def _freeze_active(pos, stream, S, wt, W, keep):
    last = np.zeros(S, dtype=np.int64)   # window measure of the last active candidate per stream
    seen = np.zeros(S, dtype=np.bool_)
    for i in range(len(pos)):
        s = stream[i]
        w = wt[pos[i]]
        if seen[s] and not exceeds(last[s], w, W):
            continue  # the last active candidate is still open: this one is frozen out
        keep[i] = True
        seen[s] = True
        last[s] = w


def freeze_active(pos: np.ndarray, stream: np.ndarray, S: int, wt: np.ndarray, W) -> np.ndarray:
    """Which candidates (positions ``pos``, ascending; stream ``stream``) are active under ``freeze``
    (semantics section 9): not within the window (``wt[p] - wt[q] <= W``, :mod:`jitcep.kernels.window`)
    of the last active candidate q of the same stream.  Checks: lengths, ``pos`` in [0, len(wt)),
    ``stream`` in [0, S), one pass each."""
    check_lengths("freeze_active", len(pos), stream=stream)
    check_index("freeze_active", "pos", pos, len(wt))
    check_index("freeze_active", "stream", stream, S)
    keep = np.zeros(len(pos), dtype=np.bool_)
    _freeze_active(np.ascontiguousarray(pos, np.int64), np.ascontiguousarray(stream, np.int64),
                   max(int(S), 1), np.ascontiguousarray(wt, np.int64), window_bound(W), keep)
    return keep
