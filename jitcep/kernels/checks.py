"""Invariant checks of the kernel wrappers: no kernel indexes outside an array (DESIGN.md section 5).

A kernel compiled without bounds checks that reads ``a[i]`` with ``i`` out of
range reads or writes foreign memory and may crash the process.  So every
array a kernel indexes *with* (codes, offsets, positions, column numbers) is
checked before the kernel uses it, in one of three ways, and each wrapper's
docstring says which:

- O(1) or O(small) checks here, in the wrapper (lengths, column numbers);
- a one-pass check here (:func:`check_index`) where the array is small next
  to the kernel's own work or is read once per run;
- a check fused into the kernel's own pass over the array (a compare on a
  value it loads anyway, or a clamp plus a running maximum), reported back as
  a status, where a separate pass would cost as much as the kernel (the type
  grouping, the joins' partition offsets).

A refused input raises :class:`~jitcep.errors.KernelInputError`: the engine
never builds such arrays, so it names a bug rather than bad user input.
"""

from __future__ import annotations

import numpy as np

from ..errors import KernelInputError
from .extent import min_max


def fail(kernel: str, what: str):
    """The error for a refused input of ``kernel``."""
    return KernelInputError(f"{kernel}: {what}")


def check_lengths(kernel: str, n: int, **arrays) -> None:
    """Every array of ``arrays`` has ``n`` elements (rows)."""
    for name, a in arrays.items():
        if a is not None and len(a) != n:
            raise fail(kernel, f"{name} has {len(a)} elements, expected {n}")


def check_index(kernel: str, name: str, a: np.ndarray, n: int, *, low: int = 0) -> None:
    """Every value of ``a`` lies in [low, n) (one pass)."""
    if not len(a):
        return
    lo, hi, _ = min_max(np.ascontiguousarray(a), None)
    if lo < low or hi >= n:
        raise fail(kernel, f"{name} holds {lo if lo < low else hi}, outside [{low}, {n})")


def check_offsets(kernel: str, name: str, offsets: np.ndarray, n: int) -> None:
    """CSR offsets: 0 <= offsets[0] <= offsets[1] <= ... <= offsets[-1] <= n (one pass)."""
    if offsets.ndim != 1 or not len(offsets):
        raise fail(kernel, f"{name} must be a non-empty 1-d array")
    if offsets[0] < 0 or offsets[-1] > n or (len(offsets) > 1 and bool((offsets[1:] < offsets[:-1]).any())):
        raise fail(kernel, f"{name} are not ascending offsets into {n} elements")
