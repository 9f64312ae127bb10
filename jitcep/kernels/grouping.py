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
