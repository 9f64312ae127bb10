"""Exact int64 arithmetic and int/float comparison (docs/semantics.md §4), for generated predicates and kernels.

Numba computes int64 arithmetic modulo 2^64 and compares an int64 with a
float64 by first rounding the int to a float, so ``3e9 * 4e9`` would be
negative and ``2^53 + 1 == 2^53`` true.  The semantics make an integer result
outside int64 NULL and compare numbers by their values; the reference
evaluator gets both from Python's integers, and generated code calls these
helpers instead of the bare operators.  Each returns ``(value, ok)`` — ok False
meaning NULL — or a three-way comparison code, and inlines into the caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..config import NUMBA_FLAGS

_MIN = np.int64(-(1 << 63))
_MAX = np.int64((1 << 63) - 1)
# |a|, |b| <= 3037000499 = floor(sqrt(2^63 - 1)): the product fits, no division needed
_SQRT_MAX = 3037000499
_TWO_63 = 9223372036854775808.0

# Overflow is tested *before* the operation: Numba's signed arithmetic lets LLVM assume that it does
# not wrap, and it folds a test made on a wrapped result (``(a * b) // b == a``) to True.


@njit(**NUMBA_FLAGS)
def add_i(a, b):
    if (b > 0 and a > _MAX - b) or (b < 0 and a < _MIN - b):
        return np.int64(0), False
    return a + b, True


@njit(**NUMBA_FLAGS)
def sub_i(a, b):
    if (b < 0 and a > _MAX + b) or (b > 0 and a < _MIN + b):
        return np.int64(0), False
    return a - b, True


@njit(**NUMBA_FLAGS)
def _magnitude(a):
    """|a| as uint64 (2^63 for the minimum, which has no int64 negation)."""
    if a >= 0:
        return np.uint64(a)
    return np.uint64(-(a + 1)) + np.uint64(1)


@njit(**NUMBA_FLAGS)
def mul_i(a, b):
    if -_SQRT_MAX <= a <= _SQRT_MAX and -_SQRT_MAX <= b <= _SQRT_MAX:
        return a * b, True
    if a == 0 or b == 0:
        return np.int64(0), True
    limit = np.uint64(1 << 63) if (a < 0) != (b < 0) else np.uint64((1 << 63) - 1)
    if _magnitude(b) > limit // _magnitude(a):
        return np.int64(0), False
    return a * b, True


@njit(**NUMBA_FLAGS)
def neg_i(a):
    if a == _MIN:
        return np.int64(0), False
    return -a, True


@njit(**NUMBA_FLAGS)
def abs_i(a):
    if a == _MIN:
        return np.int64(0), False
    return abs(a), True


@njit(**NUMBA_FLAGS)
def cmp_if(i, f):
    """Sign of ``i - f`` for an int64 i and a float64 f, exactly: -1, 0, 1, or 2 when f is NaN."""
    if f != f:
        return 2
    if f >= _TWO_63:
        return -1
    if f < -_TWO_63:
        return 1
    t = np.int64(f)  # |f| < 2^63: truncation toward zero is exact
    if i < t:
        return -1
    if i > t:
        return 1
    frac = f - np.float64(t)  # exact: f and t share their integer part
    if frac > 0:
        return -1
    if frac < 0:
        return 1
    return 0


def checked_add(a, b):
    """``a + b`` and whether it is exact: int64 as :func:`add_i`, floats always (IEEE)."""
    if isinstance(a, (int, np.integer)):
        r = int(a) + int(b)
        return np.int64(r if -(1 << 63) <= r < (1 << 63) else 0), -(1 << 63) <= r < (1 << 63)
    return a + b, True


@overload(checked_add, jit_options={"cache": NUMBA_FLAGS["cache"]})
def _checked_add_nb(a, b):
    # chosen by operand type when a kernel is compiled: one specialisation per dtype
    if isinstance(a, types.Integer):
        return lambda a, b: add_i(a, b)
    return lambda a, b: (a + b, True)
