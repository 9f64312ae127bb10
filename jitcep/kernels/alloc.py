"""Output and work arrays for the kernels: allocated by NumPy, never inside a kernel (issue 3, measured at 10^7 events).

NumPy advises arrays of at least 4 MB for transparent huge pages (Linux THP in
``madvise`` mode, the common default); an array allocated inside an ``@njit``
function (Numba's NRT allocator), or a smaller NumPy one, is not, and filling
it pays a page fault per 4 KB page: about 3x the fill itself.  So every
output that can be large (O(n) or O(matches)) is allocated here by the Python
wrapper and filled by the kernel.  An upper bound is fine (the wrapper returns
a view): untouched pages cost nothing.  Small tables (per code, per key) stay
inside the kernels.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import config

_HUGE = 1 << 22     # bytes: NumPy's threshold for advising huge pages (a fact of NumPy, not a tuning)
_MAPPED = 33 << 20  # bytes: above glibc's largest mmap threshold (32 MB), so always a fresh mapping
#                     (tuning thresholds: jitcep/config.py)


def empty(n: int, dtype, mapped: bool = False) -> np.ndarray:
    """``np.empty(n, dtype)``, as a view of a 4 MB array when it is between 512 KB and 4 MB.

    ``mapped``: an array of 4 MB or more is cut from one of at least 33 MB.
    glibc maps large blocks fresh (page-aligned: huge pages) but, once it has
    freed such blocks, raises its threshold up to 32 MB and serves the next
    from its heap, in small pages: for an output filled right away that cost
    2-3 ms per 10-40 MB at 10^7 events (the kept records of the type grouping).
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if config.ALLOC_ROUND_UP <= size < _HUGE:  # a bigger array that gets huge pages faults in faster
        return np.empty(_HUGE // dtype.itemsize, dtype)[:n]
    if mapped and _HUGE <= size < _MAPPED:
        return np.empty(_MAPPED // dtype.itemsize + 1, dtype)[:n]
    return np.empty(n, dtype)


def optional_mask(mask) -> np.ndarray | None:
    """A bool mask argument for a kernel: None stays None, so Numba compiles a specialisation without
    the test (a one-element mask read with stride 0 instead made the loops 1.3-3x slower)."""
    return None if mask is None else np.ascontiguousarray(mask, dtype=np.bool_)


_scratch = threading.local()  # kernels release the GIL: one set of buffers per thread


def scratch(name: str, n: int, dtype) -> np.ndarray:
    """An ``n``-element work array that does not outlive the call, reused from call to call.

    A kernel's working space sized by an upper bound (every event's record,
    before the kept ones are counted) is mostly never touched; freshly mapped
    it still costs page faults on the part that is, and on this kind of
    virtual machine a fresh page costs about 0.6 ms per MB (10^6 events, three
    of 32 types grouped: 3.5 -> 1.9 ms with the buffer reused).  Buffers up to
    64 MB are kept per thread and per ``name``; the caller must not return or
    keep the array.
    """
    dtype = np.dtype(dtype)
    if n * dtype.itemsize > config.SCRATCH_KEEP:  # larger scratch is allocated per call, not kept
        return empty(n, dtype)
    pool = _scratch.__dict__
    buf = pool.get((name, dtype))
    if buf is None or len(buf) < n:
        buf = pool[(name, dtype)] = empty(n, dtype)
    return buf[:n]
