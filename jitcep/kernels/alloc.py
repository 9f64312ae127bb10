"""Output arrays for the kernels: allocated by NumPy, never inside a kernel (issue 3, measured at 10^7 events).

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

import numpy as np

_HUGE = 1 << 22     # bytes: NumPy's threshold for advising huge pages
_ROUND_UP = 1 << 19  # bytes: from here on, a bigger array that gets huge pages faults in faster


def empty(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)``, as a view of a 4 MB array when it is between 512 KB and 4 MB."""
    dtype = np.dtype(dtype)
    if _ROUND_UP <= n * dtype.itemsize < _HUGE:
        return np.empty(_HUGE // dtype.itemsize, dtype)[:n]
    return np.empty(n, dtype)
