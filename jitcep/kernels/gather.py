"""Gathers for the output (jitcep.output): each output column filled in one compiled pass.

The output of a run with millions of matches is a few columns per variable
gathered at the matches' event positions.  Built with NumPy and Polars calls
(positions with the unbound -1 replaced, concatenated, mapped to input rows,
then a Polars ``gather`` per field) it took 1.1 s of a 5 s run with 6.65M
matches; here every variable's positions become input rows in one pass into
one array, and a numeric field is read at those rows in one more.

The wrappers check every index (:mod:`jitcep.kernels.checks`): positions
against the row map, rows against the column, in the kernel's own pass
(status False).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import fail


@njit(**NUMBA_FLAGS)
def _input_rows(pos, row, n, identity, out, at):
    for i in range(len(pos)):
        p = pos[i]
        if p < 0:
            out[at + i] = 0  # unbound: a valid row all the same, masked to null by the caller
        elif p >= n:
            return False
        else:
            out[at + i] = p if identity else row[p]
    return True


def input_rows(parts: list[np.ndarray], row: np.ndarray | None, n: int) -> np.ndarray:
    """The input row of every position of ``parts`` end to end (``row[p]``; ``p`` itself when ``row`` is
    None: the input was sorted), 0 for an unbound position (-1).  ``n``: the number of events; a
    position past it is a KernelInputError."""
    out = empty(sum(len(p) for p in parts), np.int64)
    identity = row is None
    row = np.zeros(0, np.int64) if identity else np.ascontiguousarray(row, dtype=np.int64)
    if not identity and len(row) < n:
        raise fail("input_rows", f"{len(row)} input rows for {n} events")
    at = 0
    for p in parts:
        if not _input_rows(np.ascontiguousarray(p, dtype=np.int64), row, n, identity, out, at):
            raise fail("input_rows", f"a position is past the {n} events")
        at += len(p)
    return out


@njit(**NUMBA_FLAGS)
def _count_up(out):
    for i in range(len(out)):
        out[i] = i


def row_numbers(n: int) -> np.ndarray:
    """0 .. n - 1 as int64 (the output's ``match_id``), written into an array of the run's pool: NumPy's
    arange and Polars' int_range are fresh pages every run (about 2,000 faults a million matches)."""
    out = empty(n, np.int64)
    _count_up(out)
    return out


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@njit(**NUMBA_FLAGS)
def _take(values, idx, out):
    n = len(values)
    for i in range(len(idx)):
        j = idx[i]
        if not 0 <= j < n:
            return False
        out[i] = values[j]
    return True


@njit(**NUMBA_FLAGS)
def _take_rows(values, idx, out):
    n, k = values.shape
    for i in range(len(idx)):
        j = idx[i]
        if not 0 <= j < n:
            return False
        for c in range(k):
            out[i, c] = values[j, c]
    return True


def take(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``values[idx]`` in one pass into a fresh array (huge pages when large, from the run's pool inside a
    run: :mod:`jitcep.kernels.alloc`), or the rows ``idx`` of a 2-d int64 ``values`` (a buffer's
    positions); an index outside ``values`` is a KernelInputError."""
    values = np.ascontiguousarray(values)
    if values.ndim == 2:
        if values.dtype != np.int64:
            raise fail("take", f"rows of {values.dtype} values (int64 positions expected)")
        out = empty(len(idx) * values.shape[1], np.int64).reshape(len(idx), values.shape[1])
        if not _take_rows(values, np.ascontiguousarray(idx, dtype=np.int64), out):
            raise fail("take", f"an index is outside the {len(values)} rows")
        return out
    out = empty(len(idx), values.dtype)
    # a copy moves bits: every dtype of one width is taken as the unsigned integer of that width, so
    # one compiled kernel serves int64, float64 and datetime64 alike
    bits = _BITS.get(values.dtype.itemsize) if values.dtype.kind in "biufmM" else None
    src, dst = (values, out) if bits is None else (values.view(bits), out.view(bits))
    if not _take(src, np.ascontiguousarray(idx, dtype=np.int64), dst):
        raise fail("take", f"an index is outside the {len(values)} values")
    return out
