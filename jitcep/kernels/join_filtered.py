"""A SEQ join whose predicates are tested in its loop: only the pairs that pass are written.

:func:`seq_join_where` runs a function generated per (pattern, join) by
:mod:`jitcep.codegen.join_where`: ZStream's SEQ join (section 4.4, Algorithm 1) with the right records
driving, exactly as :func:`jitcep.kernels.join.seq_join` runs it (the EAT pointer, the left range
searched or stepped, the window and distinctness tests), which on each candidate pair then tests the
join's predicates on the two records' events in place and writes the pair only when every one is TRUE.
The pairs are those of ``seq_join`` that pass, in its (partition, right record, left record) order;
its cap is the same: more than ``cap`` *candidate* pairs is an ExplosionError, whatever passes.

The generated function's statuses: 0 done; 1 its pair arrays are full at right record ``r`` of
partition ``g`` (the pairs before it are returned with the candidates counted before it, and a next
call resumes there into fresh arrays); -1 past ``cap_max`` candidates; -2 partition offsets that do not
ascend within the records; -3 a predicate's event outside the table.  Buffers, time arguments and the
checks on them are :mod:`jitcep.kernels.join`'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .checks import fail
from .join import ORDER_CODE, _check, _checked, _first_later, _timed, resume_join
from .window import window_bound


@njit(**NUMBA_FLAGS)
def first_later_near(Rst, Rtst, lo, hi, x, tx, order):
    """:func:`~jitcep.kernels.join._first_later` (the first one-event right record in [lo, hi) after a
    left end at position x, time tx) by galloping from ``lo`` (probes lo, lo + 1, lo + 3, ..., then a
    binary search of the last step).  The left-driven loop searches from the previous left record's
    answer when this record ends no earlier: its answer is then a few right records on, not a halving
    of the whole partition away (googleAscend x100's second join: 61,200 searches over 46,300 GOOG
    events, most of the join's time; perf/notes/opencep.md)."""
    step = 1
    while True:
        p = lo + step - 1
        if p >= hi:
            return _first_later(Rst, Rtst, lo, hi, x, tx, order)
        if (Rst[p] > x) if order == 0 else ((Rtst[p] >= tx) if order == 2 else (Rtst[p] > tx)):
            return _first_later(Rst, Rtst, lo, p + 1, x, tx, order)
        lo = p + 1
        step *= 2


def _first_size(driving_records: int) -> int:
    """The first pair arrays' length: two pairs per driving record (tests make it 1, so that joins resume).
    At one, a join keeping 1.3 pairs per record (googleAscend x100's first) stops and resumes, copying its
    pairs once more: 0.15-0.2 ms of its ~1 ms (perf/notes/opencep.md); the arrays' unwritten pages cost
    nothing."""
    return max(16, 2 * driving_records)


def seq_join_where(fn, L, R, ts, wt, W: int, order: str, distinct: bool, cap: int, bound: tuple,
                   by_left: bool = False):
    """The pairs ``(li, ri, g)`` of :func:`jitcep.kernels.join.seq_join` that pass the predicates generated
    into ``fn`` (:func:`jitcep.codegen.join_where.join_where`, its loop driven by the right records, or by
    the left ones when ``by_left``: a leaf on the right), ``bound`` its columns
    (:meth:`jitcep.codegen.predicates.PredicateSet.bind` over the table of ``ts``); in ``seq_join``'s
    (partition, right record, left record) order, the left-driven loop's pairs sorted into it.

    Invariants (KernelInputError otherwise): those of ``seq_join``, and every position a predicate reads
    inside the table.  More than ``cap`` candidate pairs is an ExplosionError."""
    what = "a SEQ join"
    Lt, Rt = _checked(what, _timed(L, ts, wt), _timed(R, ts, wt))
    if by_left and R[1] is not R[2]:
        raise fail(what, "a join driven by its left input needs a leaf on the right")
    args = (window_bound(W), ORDER_CODE[order], bool(distinct), R[1] is R[2])

    def call(L, R, left, arrays, base):
        li, ri, g, status, gs, d, cand = fn(L, R, *args, left, *arrays, *bound)
        if status == -3:
            raise fail(what, "a predicate's event lies outside the event table")
        _check(status, what, cap)
        return li, ri, g + base if base else g, status, gs, d, int(cand)
    off = (Lt if by_left else Rt)[3]
    li, ri, g = resume_join(call, Lt, Rt, int(cap), _first_size(int(off[-1] - off[0])), by_left, 0)
    if by_left and len(li) > 1:  # (partition, r, l) order, as the right-driven loop gives
        o = np.lexsort((li, ri, g))
        li, ri, g = li[o], ri[o], g[o]
    return li, ri, g
