"""NFA^b run steps for the selection strategies other than skip-till-any-match (SASE+ sections 2, 3.2).

The executor (:mod:`jitcep.execute.nfa`) advances every live run of a linear
pattern one singleton state at a time; a run is its partition ``g``, its first
selected event ``first`` and its last one ``last`` (docs/semantics.md section
8).  What the next state's begin edge may select depends on the strategy's
ignore edge (SASE+ 3.2 step 3):

- skip-till-next-match ignores every event the begin edge refuses, so the run
  selects the *first* later candidate of the state (its leaf: type, filters,
  same key partition) that passes the edge's predicates.  :func:`next_ranges`
  gives each run its candidates in the leaf: after ``last`` (by position, or
  by timestamp under ``strict_ts``) and within the window from ``first`` (step
  5); the executor tests them a chunk at a time with the pattern's generated
  predicates and keeps the first that passes.
- strict / partition contiguity ignore nothing of the stream (of the run's key
  partition): the run must select the very next event, ``succ[last]``.
  :func:`contiguous_next` checks that event against the leaf (``slot``: the
  partition of each candidate position, -1 elsewhere), the window and the
  strict_ts order: one step per run, a scan's work.

Both kernels read only positions their wrappers checked (jitcep/kernels/checks.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import check_index, check_lengths, check_offsets, fail
# the binary searches of a negation's range are the same searches: a run's candidates form a range too
from .negation import _first_after, _first_out_of_window_from
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _not_after(cand, ts, k, p, strict_ts):
    """Is candidate k not after position p (by position; ``strict_ts``: by timestamp)?"""
    return ts[cand[k]] <= ts[p] if strict_ts else cand[k] <= p


@njit(**NUMBA_FLAGS)
def _first_after_from(cand, ts, c0, c1, p, strict_ts, h):
    """:func:`_first_after` over [c0, c1) by galloping from index ``h`` (c0 <= h <= c1): exponential steps
    away from h bracket the answer, then a binary search inside the bracket."""
    if h < c1 and _not_after(cand, ts, h, p, strict_ts):  # the answer lies past h
        a, step = h + 1, 1
        b = a
        while b < c1 and _not_after(cand, ts, b, p, strict_ts):
            a = b + 1
            b = a + step
            step *= 2
        return _first_after(cand, ts, a, min(b, c1), p, 1 if strict_ts else 0, True)
    b, step = h, 1  # the answer is h or before it
    while True:
        a = b - step
        if a < c0:
            a = c0
            break
        if _not_after(cand, ts, a, p, strict_ts):
            a += 1
            break
        b = a
        step *= 2
    return _first_after(cand, ts, a, b, p, 1 if strict_ts else 0, True)


@njit(**NUMBA_FLAGS)
def _first_out_of_window_galloping(cand, wt, i, c1, first, W):
    """:func:`_first_out_of_window_from` over [i, c1) by galloping forward from i: the window holds a
    few candidates of a partition, so the answer is a few steps away, not a binary search of the
    partition away."""
    t = wt[first]
    a, b, step = i, i, 1
    while b < c1 and not exceeds(t, wt[cand[b]], W):
        a = b + 1
        b = a + step
        step *= 2
    return _first_out_of_window_from(cand, wt, a, min(b, c1), first, W)


@njit(**NUMBA_FLAGS)
def _next_ranges(last, first, g, cand, goff, ts, wt, W, strict_ts, lo, hi):
    # the runs come nearly sorted by (partition, last) (99% of consecutive runs at 10^6 events,
    # perf/README.md), so a run's range starts a few candidates from the previous run's: galloping
    # from there, where two binary searches per run over the whole partition took most of the call
    for r in range(len(last)):
        c0, c1 = goff[g[r]], goff[g[r] + 1]
        # position order: after last; strict_ts: a later timestamp (cand is sorted by position, hence by ts)
        if r and g[r] == g[r - 1]:
            i = _first_after_from(cand, ts, c0, c1, last[r], strict_ts, lo[r - 1])
        else:
            i = _first_after(cand, ts, c0, c1, last[r], 1 if strict_ts else 0, True)
        lo[r] = i
        hi[r] = _first_out_of_window_galloping(cand, wt, i, c1, first[r], W)


def next_ranges(last, first, g, leaf, ts, wt, W: int, strict_ts: bool):
    """Per run, the index range [lo, hi) of ``leaf`` (cand, goff) it may select next (skip-till-next-match).

    ``cand[goff[g]:goff[g + 1]]``: the candidate positions of partition g,
    ascending.  A run (``last``, ``first``, ``g``) may select the candidates of
    its partition after ``last`` (``ts`` later than ``ts[last]`` when
    ``strict_ts``) with ``wt[e] - wt[first] <= W`` (exact,
    :func:`jitcep.kernels.window.exceeds`).

    Invariants (KernelInputError otherwise), checked here: the run arrays
    have one length, ``g`` lies in the partitions, ``last`` / ``first`` and
    ``cand`` are positions of ``ts`` and ``wt``, ``goff`` ascending offsets
    into ``cand`` (one pass over each).
    """
    cand, goff = leaf
    m, n = len(last), len(ts)
    check_lengths("next_ranges", m, first=first, g=g)
    check_lengths("next_ranges", n, wt=wt)
    check_offsets("next_ranges", "goff", goff, len(cand))
    check_index("next_ranges", "g", g, len(goff) - 1)
    check_index("next_ranges", "last", last, n)
    check_index("next_ranges", "first", first, n)
    check_index("next_ranges", "cand", cand, n)
    lo, hi = empty(m, np.int64), empty(m, np.int64)  # NumPy-allocated (kernels.alloc)
    _next_ranges(last, first, g, cand, goff, ts, wt, window_bound(W), bool(strict_ts), lo, hi)
    return lo, hi


@njit(**NUMBA_FLAGS)
def _contiguous_next(last, first, g, succ, slot, ts, wt, W, strict_ts, out):
    for r in range(len(last)):
        p = succ[last[r]]
        if p < 0 or slot[p] != g[r] or exceeds(wt[first[r]], wt[p], W) or (strict_ts and ts[p] <= ts[last[r]]):
            out[r] = -1
        else:
            out[r] = p


def contiguous_next(last, first, g, succ, slot, ts, wt, W: int, strict_ts: bool) -> np.ndarray:
    """Per run, the event it selects next under strict / partition contiguity, or -1 where the run dies.

    The event is ``succ[last]`` (the next event of the stream, or of the
    run's key partition; -1: none); the run selects it iff it is a candidate
    of the state in the run's partition (``slot[p] == g``), lies within the
    window from ``first`` (``wt[p] - wt[first] <= W``, exact) and, when
    ``strict_ts``, has a later timestamp than ``last``.

    Invariants (KernelInputError otherwise), checked here: the run arrays
    have one length, ``succ``, ``slot``, ``ts`` and ``wt`` one entry per
    event, ``last`` / ``first`` positions and ``succ`` positions or -1 (one
    pass over each).
    """
    m, n = len(last), len(ts)
    check_lengths("contiguous_next", m, first=first, g=g)
    check_lengths("contiguous_next", n, succ=succ, slot=slot, wt=wt)
    check_index("contiguous_next", "last", last, n)
    check_index("contiguous_next", "first", first, n)
    check_index("contiguous_next", "succ", succ, n, low=-1)
    out = empty(m, np.int64)
    _contiguous_next(last, first, g, succ, slot, ts, wt, window_bound(W), bool(strict_ts), out)
    return out


def successors(order: np.ndarray, offsets: np.ndarray, n: int) -> np.ndarray:
    """``succ[p]``: the position after p in its group (``order[offsets[k]:offsets[k + 1]]``, ascending), -1
    for a group's last position and for a position in no group."""
    order = np.asarray(order, dtype=np.int64)
    check_offsets("successors", "offsets", offsets, len(order))
    if offsets[0] != 0 or offsets[-1] != len(order):
        raise fail("successors", f"offsets {offsets[0]}..{offsets[-1]} do not cover the {len(order)} positions")
    check_index("successors", "order", order, n)
    succ = np.full(n, -1, dtype=np.int64)
    if len(order) > 1:
        succ[order[:-1]] = order[1:]
    ends = offsets[1:][offsets[1:] > offsets[:-1]] - 1
    succ[order[ends]] = -1
    return succ
