"""Kleene closure of an array variable over whole matches (ZStream section 4.4.5 KSEQ; SASE+ section 2).

``kleene="maximal"`` (docs/semantics.md section 6.2): for each match of the
other variables the closure takes the qualifying events of its range.  The
range is found like a negation's (:func:`jitcep.kernels.negation.negation_ranges`);
the qualifying members of every match form a CSR list (``offsets`` into
``members``).  This module turns those lists into the closure's lists:

- unbounded ``+`` / ``*`` / ``{n,}``: the one list, if long enough;
- ``{n}`` / ``{n,m}``: ZStream's closure count (Figure 6), every run of k
  consecutive qualifying events, n <= k <= m, plus the empty list when n = 0;

and computes SASE+ aggregates (count, sum, avg, min, max over non-null
values) per list.  Everything here is generic: no per-pattern code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS

AGG_CODE = {"sum": 0, "min": 1, "max": 2, "avg": 3}


@njit(**NUMBA_FLAGS)
def _count_runs(offsets, nmin, nmax):
    n = 0
    for r in range(len(offsets) - 1):
        q = offsets[r + 1] - offsets[r]
        if nmax < 0:
            if q >= nmin:
                n += 1
        else:
            for k in range(max(nmin, 1), nmax + 1):
                if q >= k:
                    n += q - k + 1
            if nmin == 0:
                n += 1
    return n


@njit(**NUMBA_FLAGS)
def _runs(offsets, nmin, nmax, src, start, length):
    t = 0
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        if nmax < 0:
            if q >= nmin:
                src[t] = r
                start[t] = o
                length[t] = q
                t += 1
        else:
            for k in range(max(nmin, 1), nmax + 1):
                for s in range(q - k + 1):
                    src[t] = r
                    start[t] = o + s
                    length[t] = k
                    t += 1
            if nmin == 0:
                src[t] = r
                start[t] = o
                length[t] = 0
                t += 1


def closure_runs(offsets: np.ndarray, nmin: int, nmax: int | None):
    """(src record, start index into members, length) of every list the bounds allow (section 6.2)."""
    hi = -1 if nmax is None else int(nmax)
    n = _count_runs(offsets, int(nmin), hi)
    src = np.empty(n, np.int64)
    start = np.empty(n, np.int64)
    length = np.empty(n, np.int64)
    _runs(offsets, int(nmin), hi, src, start, length)
    return src, start, length


def gather_lists(members: np.ndarray, start: np.ndarray, length: np.ndarray):
    """CSR (offsets, positions) of the lists ``members[start[j] : start[j] + length[j]]``."""
    off = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=off[1:])
    idx = np.repeat(start - off[:-1], length) + np.arange(off[-1], dtype=np.int64)
    return off, np.ascontiguousarray(members[idx], dtype=np.int64)


@njit(**NUMBA_FLAGS)
def _segment_agg(off, vals, valid, code, out, ok):
    for j in range(len(off) - 1):
        first = True
        acc = vals[0] if len(vals) else out[0]
        cnt = 0
        for i in range(off[j], off[j + 1]):
            if not valid[i]:
                continue
            v = vals[i]
            if first:
                acc = v
                first = False
            elif code == 0 or code == 3:
                acc += v
            elif code == 1:
                if v < acc:
                    acc = v
            elif v > acc:
                acc = v
            cnt += 1
        if cnt:
            out[j] = acc
            ok[j] = True
        else:
            ok[j] = False


def segment_aggregate(off: np.ndarray, vals: np.ndarray, valid: np.ndarray, func: str):
    """Per list (CSR ``off`` over ``vals``): sum / min / max / avg of the valid values and whether any exists.

    Sum of an int64 column stays int64 (exact); avg is float64 (SASE+ aggregates,
    SQL null handling: no non-null member gives NULL).
    """
    n = len(off) - 1
    if func == "avg":
        vals = vals.astype(np.float64)
    out = np.zeros(n, dtype=vals.dtype)
    ok = np.zeros(n, dtype=np.bool_)
    if n:
        _segment_agg(off, vals, valid, AGG_CODE[func], out, ok)
    if func == "avg":
        cs = np.zeros(len(valid) + 1, dtype=np.int64)
        np.cumsum(valid, out=cs[1:])
        cnt = cs[off[1:]] - cs[off[:-1]]
        out = np.where(ok, out / np.maximum(cnt, 1), 0.0)
    return out, ok
