"""The (min, max) of integer values in one pass.

Both the wrappers' index checks (:func:`jitcep.kernels.checks.check_index`)
and the key coding (:func:`jitcep.kernels.encode.value_range`, which splits
it over threads) need an array's extent; it lives here, below both, so that
neither imports the other.
"""

from __future__ import annotations

from numba import njit

from ..config import NUMBA_FLAGS


@njit(**NUMBA_FLAGS)
def min_max(values, valid):
    """(lo, hi, found) over the rows of ``values`` where ``valid`` (None: every row); ``found`` is False
    when no row is valid (lo, hi are then values[0]).  ``values`` must be non-empty and ``valid``, when
    given, as long as ``values``: the callers check both."""
    lo = values[0]
    hi = values[0]
    if valid is None:  # min / max without branches: the loop vectorises
        for i in range(len(values)):
            lo = min(lo, values[i])
            hi = max(hi, values[i])
        return lo, hi, True
    found = False
    for i in range(len(values)):
        if valid[i]:
            x = values[i]
            if not found:
                lo = x
                hi = x
                found = True
            lo = min(lo, x)
            hi = max(hi, x)
    return lo, hi, found
