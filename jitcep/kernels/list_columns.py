"""A match table's list columns (CSR: offsets into the members' positions), read and copied for their
canonical order (docs/semantics.md section 11): each list's part of a match's list key
(:func:`list_key`, compared lexicographically, a prefix first), the first / last positions its members
give a match (:func:`list_bounds`), and the lists taken in a new order (:func:`take_lists`).  The order
itself is :func:`jitcep.kernels.order.canonical_order`'s.

The wrappers check every index the kernels use (:mod:`jitcep.kernels.checks`): the offsets ascend inside
the members, the per-list arrays hold an entry per list.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import check_lengths, check_offsets, fail


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
    """One list variable's part of each match's list key for
    :func:`~jitcep.kernels.order.canonical_order`, in place, in one pass over the members: at
    ``kseq[at[r]]`` for list r, whether it is unbound (1) or not (0) when
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
