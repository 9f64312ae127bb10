"""One-pass grouping by small integer codes (type codes, key codes)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS


@njit(**NUMBA_FLAGS)
def _counting_sort(codes, n_codes):
    counts = np.zeros(n_codes + 1, dtype=np.int64)
    for c in codes:
        if c >= 0:
            counts[c + 1] += 1
    for g in range(n_codes):
        counts[g + 1] += counts[g]
    offsets = counts.copy()
    order = np.empty(counts[n_codes], dtype=np.int64)
    fill = counts[:n_codes].copy()
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            order[fill[c]] = i
            fill[c] += 1
    return order, offsets


def counting_sort(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable grouping of indices by ``codes`` in O(n + n_codes); negative codes are dropped.

    Returns ``order`` (indices i grouped by codes[i], each group in index order)
    and ``offsets`` (n_codes + 1): group c is ``order[offsets[c]:offsets[c+1]]``.
    """
    return _counting_sort(np.ascontiguousarray(codes), int(n_codes))


@njit(**NUMBA_FLAGS)
def _group_with_keys(codes, n_codes, keep_code, keys, with_keys):
    counts = np.zeros(n_codes + 1, dtype=np.int64)
    for c in codes:
        if c >= 0 and keep_code[c]:
            counts[c + 1] += 1
    for g in range(n_codes):
        counts[g + 1] += counts[g]
    offsets = counts.copy()
    m = counts[n_codes]
    order = np.empty(m, dtype=np.int32)
    okeys = np.empty(m if with_keys else 0, dtype=np.int32)
    fill = counts[:n_codes].copy()
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0 and keep_code[c]:
            f = fill[c]
            order[f] = i
            if with_keys:
                okeys[f] = keys[i]
            fill[c] = f + 1
    return order, okeys, offsets


def group_with_keys(codes: np.ndarray, n_codes: int, keys: np.ndarray | None, keep: np.ndarray | None = None):
    """:func:`counting_sort` that also carries each index's key, as int32 (n < 2**31).

    Returns ``order`` (int32 indices grouped by code, index order inside a
    group), ``okeys`` (``keys[order]``, int32; empty without keys) and
    ``offsets``.  ``keep`` (bool per code) drops the codes nobody asked for:
    their groups are empty.  One sequential pass over ``codes`` and ``keys``:
    later per-group work reads keys contiguously instead of gathering them.
    """
    if len(codes) >= 2**31:
        raise ValueError("group_with_keys handles fewer than 2**31 events")
    k = np.zeros(1, np.int64) if keys is None else np.ascontiguousarray(keys)
    kc = np.ones(max(int(n_codes), 1), np.bool_) if keep is None else np.ascontiguousarray(keep, dtype=np.bool_)
    return _group_with_keys(np.ascontiguousarray(codes), int(n_codes), kc, k, keys is not None)


@njit(**NUMBA_FLAGS)
def _leaf_by_key_filtered(cand, ckeys, G, keep):
    counts = np.zeros(G + 1, dtype=np.int64)
    for i in range(len(cand)):
        if keep[i] and ckeys[i] >= 0:
            counts[ckeys[i] + 1] += 1
    for g in range(G):
        counts[g + 1] += counts[g]
    out = np.empty(counts[G], dtype=np.int64)
    fill = counts[:G].copy()
    for i in range(len(cand)):
        g = ckeys[i]
        if keep[i] and g >= 0:
            out[fill[g]] = cand[i]
            fill[g] += 1
    return out, counts


def leaf_by_key(cand: np.ndarray, ckeys: np.ndarray, G: int, keep: np.ndarray | None = None):
    """Positions ``cand`` (ascending) kept by ``keep`` and grouped by key ``ckeys`` (stable), as int64.

    A leaf buffer (ZStream 4.2): returns the positions in (key, position)
    order and the G + 1 key offsets.  Keys < 0 (null key) are dropped.
    """
    if keep is None:
        keep = np.ones(len(cand), dtype=np.bool_)
    return _leaf_by_key_filtered(cand, ckeys, int(G), keep)


@njit(**NUMBA_FLAGS)
def _stream_positions(order, offsets, n):
    out = np.zeros(n, dtype=np.int64)
    for g in range(len(offsets) - 1):
        for j in range(offsets[g], offsets[g + 1]):
            out[order[j]] = j - offsets[g]
    return out


def stream_positions(order: np.ndarray, offsets: np.ndarray, n: int) -> np.ndarray:
    """Rank of every position inside its group (CSR ``order``/``offsets``); 0 where in no group."""
    return _stream_positions(order, offsets, int(n))
