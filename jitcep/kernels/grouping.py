"""One-pass grouping by small integer codes (type codes, key codes).

Two rules shape these kernels (issue 3, measured at 10^7 events):

* Large outputs (O(n) or O(matches)) are allocated by NumPy in the Python
  wrapper (:mod:`jitcep.kernels.alloc` says why) and filled by the kernel;
  an upper bound is allocated and a view returned.
* The grouping loops are branch-free: every element is written, to its
  group's fill pointer or to one scratch slot past the output, and the
  pointer advances by the keep flag.  A branch on "kept?" mispredicts on
  every mixed input (3x slower with 12 of 32 types kept).  The type grouping
  first compacts the kept indices the same way and scatters only those.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty

_ALL_VALID = np.ones(1, dtype=np.bool_)


@njit(**NUMBA_FLAGS)
def _fill_pointers(cnt, adv):
    """Offsets of the kept slots and their fill pointers; a dropped slot's pointer is the scratch slot m.

    ``cnt[s]`` / ``adv[s]``: elements in slot s and whether slot s is kept;
    slot 0 (code -1 or a dropped element) is never kept.
    """
    S = len(cnt)
    offsets = np.zeros(S, dtype=np.int64)
    for s in range(1, S):
        offsets[s] = offsets[s - 1] + cnt[s] * adv[s]
    m = offsets[S - 1]
    fill = np.full(S, m, dtype=np.int64)
    for s in range(1, S):
        if adv[s]:
            fill[s] = offsets[s - 1]
    return offsets, fill


@njit(**NUMBA_FLAGS)
def _counting_sort(codes, n_codes, order):
    # slot c + 1 per code, slot 0 for negative codes: each slot has its own pointer
    cnt = np.zeros(n_codes + 1, dtype=np.int64)
    for c in codes:
        cnt[max(c, -1) + 1] += 1
    adv = np.ones(n_codes + 1, dtype=np.int64)
    adv[0] = 0
    offsets, fill = _fill_pointers(cnt, adv)
    for i in range(len(codes)):
        s = max(codes[i], -1) + 1
        f = fill[s]
        order[f] = i
        fill[s] = f + adv[s]
    return offsets


def counting_sort(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable grouping of indices by ``codes`` in O(n + n_codes); negative codes are dropped.

    Returns ``order`` (int64 indices i grouped by codes[i], each group in index
    order) and ``offsets`` (n_codes + 1): group c is ``order[offsets[c]:offsets[c+1]]``.
    """
    codes = np.ascontiguousarray(codes)
    order = empty(len(codes) + 1, np.int64)  # NumPy-allocated (jitcep.kernels.alloc), + scratch
    offsets = _counting_sort(codes, int(n_codes), order)
    return order[:offsets[-1]], offsets


_LOW = np.int64(0xFFFFFFFF)


@njit(**NUMBA_FLAGS)
def _group_with_keys(codes, adv, keys, kstride, kbase, kvalid, vstride, vals, kept, recs):
    # slot c + 1 per code (slot 0: code -1 or a null key); adv[s]: slot s is kept.
    # Pass 1 counts every slot and lists the kept indices (branch-free compaction); pass 2
    # scatters only those: with few types kept, most events are never read again, and no
    # dropped element queues on one scratch fill pointer (a store-to-load chain per element).
    cnt = np.zeros(len(adv), dtype=np.int64)
    m = 0
    for i in range(len(codes)):
        s = (codes[i] + 1) * kvalid[i * vstride]
        cnt[s] += 1
        kept[m] = i
        m += adv[s]
    offsets, fill = _fill_pointers(cnt, adv)
    for j in range(m):
        i = kept[j]
        s = codes[i] + 1
        f = fill[s]
        recs[f, 0] = ((np.int64(keys[i * kstride]) - kbase) << 32) | i
        recs[f, 1] = vals[i]
        fill[s] = f + 1
    return offsets


def group_with_keys(codes: np.ndarray, n_codes: int, keys: np.ndarray | None, values: np.ndarray,
                    keep: np.ndarray | None = None, valid: np.ndarray | None = None, key_base: int = 0):
    """:func:`counting_sort` that carries each index's key and a value: ``(recs, offsets)``.

    ``recs`` (m x 2 int64) holds one record per kept index, grouped by code,
    index order inside a group: column 0 packs ``key << 32 | index`` (key 0
    without keys; unpack with :func:`record_fields`), column 1 is
    ``values[index]``.  One 16-byte record per index means one write stream
    per group (three separate arrays took 2.4x as long with 24 groups kept).
    ``keep`` (bool per code) drops the codes nobody asked for: their groups
    are empty.  ``valid`` (bool per index) drops the indices whose key is
    null (they join nothing).  The record's key is ``keys[index] - key_base``
    (an integer column's values serve as key codes without a copy).  One
    sequential pass over ``codes``, ``keys`` and ``values``: later per-group
    work reads them contiguously instead of gathering them at scattered
    indices (a cache miss each).
    """
    n = len(codes)
    if n >= 2**31:
        raise ValueError("group_with_keys handles fewer than 2**31 events")
    n_codes = int(n_codes)
    adv = np.ones(n_codes + 1, dtype=np.int64)
    adv[0] = 0
    if keep is not None:
        adv[1:] = np.asarray(keep, dtype=np.bool_)[:n_codes]
    # NumPy-allocated upper bounds (kernels.alloc): the kept indices (+ a scratch slot), the records
    kept = empty(n + 1, np.int32)
    recs = empty(2 * n, np.int64).reshape(n, 2)
    k, kst = (np.zeros(1, np.int32), 0) if keys is None else (np.ascontiguousarray(keys), 1)
    v, vs = (_ALL_VALID, 0) if valid is None else (np.ascontiguousarray(valid, dtype=np.bool_), 1)
    offsets = _group_with_keys(np.ascontiguousarray(codes), adv, k, kst, np.int64(key_base), v, vs,
                               np.ascontiguousarray(values, dtype=np.int64), kept, recs)
    return recs[:offsets[-1]], offsets


def record_fields(recs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, key, value) columns of :func:`group_with_keys` records, as int64 arrays."""
    return recs[:, 0] & _LOW, recs[:, 0] >> 32, np.ascontiguousarray(recs[:, 1])


@njit(**NUMBA_FLAGS)
def _leaf_by_key(recs, G, keep, kstride, wt, out, tout, wout):
    # slot g + 1 per key, slot 0 for a null key or a candidate the filter dropped
    cnt = np.zeros(G + 1, dtype=np.int64)
    n = len(recs)
    for i in range(n):
        cnt[(max(recs[i, 0] >> 32, -1) + 1) * keep[i * kstride]] += 1
    adv = np.ones(G + 1, dtype=np.int64)
    adv[0] = 0
    offsets, fill = _fill_pointers(cnt, adv)
    for i in range(n):
        s = (max(recs[i, 0] >> 32, -1) + 1) * keep[i * kstride]
        f = fill[s]
        p = recs[i, 0] & 0xFFFFFFFF
        out[f] = p
        tout[f] = recs[i, 1]
        if wout is not None:
            wout[f] = wt[p]
        fill[s] = f + adv[s]
    return offsets


def leaf_by_key(recs: np.ndarray, G: int, keep: np.ndarray | None, wt: np.ndarray | None = None):
    """Candidates ``recs`` (:func:`group_with_keys` records, ascending index) kept by ``keep`` and
    grouped by key (stable): a leaf buffer (ZStream 4.2).

    Returns the positions (int64) in (key, position) order, the G + 1 key
    offsets and the records' times, moved along in the same pass
    (:mod:`jitcep.kernels.join` reads them): the carried values (the
    candidates' timestamps) and the window measure ``wt[position]`` (None:
    the window measure is ``ts``, the times array is returned twice).  Keys
    < 0 (null key) are dropped.
    """
    k, ks = (_ALL_VALID, 0) if keep is None else (np.ascontiguousarray(keep, dtype=np.bool_), 1)
    # NumPy-allocated upper bounds (jitcep.kernels.alloc)
    out = empty(len(recs) + 1, np.int64)
    tout = empty(len(recs) + 1, np.int64)
    wout = None if wt is None else empty(len(recs) + 1, wt.dtype)
    goff = _leaf_by_key(np.ascontiguousarray(recs), int(G), k, ks, np.zeros(1, np.int64) if wt is None else wt,
                        out, tout, wout)
    m = goff[-1]
    tout = tout[:m]
    return out[:m], goff, tout, tout if wout is None else wout[:m]


@njit(**NUMBA_FLAGS)
def _stream_positions(order, offsets, out):
    for g in range(len(offsets) - 1):
        for j in range(offsets[g], offsets[g + 1]):
            out[order[j]] = j - offsets[g]


def stream_positions(order: np.ndarray, offsets: np.ndarray, n: int) -> np.ndarray:
    """Rank of every position inside its group (CSR ``order``/``offsets``); 0 where in no group."""
    out = np.zeros(int(n), dtype=np.int64)  # NumPy-allocated (jitcep.kernels.alloc)
    _stream_positions(order, offsets, out)
    return out
