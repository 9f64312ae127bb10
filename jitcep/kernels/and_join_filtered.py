"""An AND join whose predicates are tested in its loop: only the pairs that pass are written.

:func:`and_join_where` runs a function generated per (pattern, join) by
:func:`jitcep.codegen.join_where.and_join_where`: ZStream's AND join (section 4.4, Algorithm 3) exactly
as :func:`jitcep.kernels.join.and_join` runs it (the two inputs merged by end, the record ending first
pairing with the other input's records ending before it inside the window, distinct events), which on
each candidate pair then tests the join's predicates on the two records' events in place and writes
the pair only when every one is TRUE.  The pairs are those of ``and_join`` that pass, in its order;
its cap is the same: more than ``cap`` *candidate* pairs is an ExplosionError, whatever passes.

The generated function's statuses are :mod:`jitcep.kernels.join_filtered`'s: 0 done; 1 its pair arrays
are full at a driving step of partition ``g`` (the pairs before the step are returned with the
candidates counted before it, the merge's state at the step written to ``resume``, and a next call
resumes there into larger arrays); -1 past ``cap_max`` candidates; -2 partition offsets (or a resume
state) that do not ascend within the records; -3 a predicate's event outside the table.  Unlike
``and_join``, which counts past its arrays and runs again into arrays of that many (its merge keeps no
state a call could resume from), the merge's state here is four indexes: a full array costs a copy of
the pairs made, not the predicates tested again on every candidate.
"""

from __future__ import annotations

import numpy as np

from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import fail
from .join import _check, _checked, _timed
from .order import _RUN, _key_order, _sort_run, packed_fields
from .window import window_bound


def _first_size(records: int) -> int:
    """The first pair arrays' length: two pairs per record of the two inputs (an AND join pairs each
    record with those of the other input on either side of it; tests make it 1, so that the merge
    resumes).  Unwritten pages cost nothing: a second call copies the pairs made before it."""
    return max(16, 2 * records)


def and_join_where(fn, L, R, ts, wt, W: int, distinct: bool, cap: int, bound: tuple):
    """The pairs ``(li, ri, g)`` of :func:`jitcep.kernels.join.and_join` that pass the predicates generated
    into ``fn`` (:func:`jitcep.codegen.join_where.and_join_where`), ``bound`` its columns
    (:meth:`jitcep.codegen.predicates.PredicateSet.bind` over the table of ``ts``), in ``and_join``'s
    order.

    Invariants (KernelInputError otherwise): those of ``and_join``, and every position a predicate reads
    inside the table.  More than ``cap`` candidate pairs is an ExplosionError."""
    what = "an AND join"
    Lt, Rt = _checked(what, _timed(L, ts, wt), _timed(R, ts, wt))
    cap = int(cap)
    args = (window_bound(W), bool(distinct))
    resume = np.full(4, -1, np.int64)
    records = int(Lt[3][-1] - Lt[3][0] + Rt[3][-1] - Rt[3][0])
    # never more pairs than the cap allows: the arrays are written full before it is checked (the pairs
    # that pass are at most the candidates counted)
    out = _arrays(min(_first_size(records), cap), None, 0)
    n, made, g0 = 0, 0, 0
    while True:
        room = len(out[0]) - n
        li, _, _, status, gs, _, cand = fn(Lt, Rt, *args, cap - made, g0, resume, *(a[n:] for a in out), *bound)
        if status == -3:
            raise fail(what, "a predicate's event lies outside the event table")
        _check(status, what, cap)
        n += len(li)
        made += int(cand)
        if status == 0:
            break
        g0 = int(gs)
        out = _arrays(_next_size(n, room, records, resume, Lt, Rt, cap - made), out, n)
    li, ri, g = (a[:n] for a in out)
    if len(Lt[3]) == 2:  # one partition: the function wrote no partition numbers
        g.fill(0)
    return li, ri, g


_LONG = 64
"""Ends of more rows than the run buffers hold (``_RUN``), out of order, that :func:`and_join_rows`' function
lists for the wrapper to sort per call (an end is the matches one event completes: such ends are few)."""


def _arrays(size: int, old, n: int):
    """Pair arrays ``(li, ri, g)`` of ``size`` pairs, the first ``n`` copied from ``old``."""
    out = tuple(empty(size, np.int64) for _ in range(3))
    if n:
        for a, b in zip(out, old):
            a[:n] = b[:n]
    return out


def and_join_rows(fn, L, R, ts, wt, W: int, distinct: bool, cap: int, bound: tuple, k: int,
                  key=None) -> tuple[np.ndarray, bool] | None:
    """The matches that are the pairs of :func:`and_join_where` (one key partition) in canonical order
    (docs/semantics.md section 11), written by ``fn`` (:func:`jitcep.codegen.join_where.and_join_rows`,
    generated for the match table's ``k`` variables) as a C-ordered (k, pairs) matrix, and True when no
    position in it is unbound because no record's is (as
    :func:`jitcep.kernels.final_join.seq_join_rows` says it).  ``key``: the rows in the order the
    canonical order compares them (the variables' name order, as the function was generated); None: row
    order.  None where a record of either input ends before the one before it: the merge is then not by
    end, and the pairs are to be ordered as any join's (:func:`jitcep.kernels.order.canonical_pairs`).

    The merge (and its cap on candidates) is :func:`and_join_where`'s; each end's rows are written as
    their pairs pass and put in order among themselves where one came before the row before it.  Where
    the matrix fills, the function hands back the merge's state at the first step of the end it was
    writing and the next call writes that end again into a larger matrix holding a copy of the rows so
    far.  Invariants as :func:`and_join_where`'s, and one key partition."""
    what = "an AND join"
    Lt, Rt = _checked(what, _timed(L, ts, wt), _timed(R, ts, wt))
    if len(Lt[3]) != 2:
        raise fail("and_join_rows", "the match table's rows are written over one key partition")
    key = _key_order("and_join_rows", key, int(k))
    cap, k = int(cap), int(k)
    args = (window_bound(W), bool(distinct))
    resume = np.full(4, -1, np.int64)
    kr, kb, ib, tmp = (np.empty(_RUN, np.int64) for _ in range(4))
    long = np.zeros(1 + 2 * _LONG, np.int64)  # ends past the run buffers, out of order: sorted here
    bits, fields = packed_fields(len(ts), k)  # a row's key within its end, as canonical_pairs packs it
    records = int(Lt[3][-1] - Lt[3][0] + Rt[3][-1] - Rt[3][0])
    size = min(_first_size(records), cap)
    rows = empty(k * size, np.int64).reshape(k, size)
    n, made = 0, 0
    while True:
        room = size - n
        n, status, cand = fn(Lt, Rt, *args, cap - made, resume, rows, n, key, bits, fields, kr, kb, ib, tmp,
                                 long, *bound)
        if status == -3:
            raise fail(what, "a predicate's event lies outside the event table")
        if status == -5:
            return None
        _check(int(status), what, cap)
        n, made = int(n), made + int(cand)
        for t in range(int(long[0])):
            _sort_run(rows, key, long[1 + 2 * t], long[2 + 2 * t])
        long[0] = 0
        if status == 0:
            break
        if status == 2:  # the long runs' list was full: sorted, the next call goes on from the run's start
            continue
        size = _next_size(n, room, records, resume, Lt, Rt, cap - made)
        grown = empty(k * size, np.int64).reshape(k, size)
        grown[:, :n] = rows[:, :n]
        rows = grown
    if n < size:  # the rows end to end, as the output reads them (MatchTable.block)
        rows = _packed(rows.reshape(-1), size, n).reshape(k, n)
    return rows, not n or (Lt[0].min(initial=0) >= 0 and Rt[0].min(initial=0) >= 0)


def _next_size(n: int, room: int, records: int, resume, Lt, Rt, left: int) -> int:
    """The next arrays' size after a call that filled them, ``n`` written so far: the pairs (rows) per
    merged record so far times the records left, plus a quarter, and at least twice the last call's
    ``room`` (a step may write nothing into arrays too small for its own pairs: doubling bounds the calls
    by the log of its pairs), at most what the cap leaves (``left``)."""
    done = int(resume[0] - Lt[3][0] + resume[1] - Rt[3][0])
    ahead = n * (records - done) // max(done, 1)
    return n + min(max(ahead + ahead // 4 + 16, 2 * room + 1), left)


@njit(**NUMBA_FLAGS)
def _packed(flat, size, n):
    # the first n entries of each row of a (k, size) matrix moved to the front, end to end: each moves
    # toward the front, so copying forward never reads an entry already overwritten
    k = len(flat) // size
    for c in range(1, k):
        for t in range(n):
            flat[c * n + t] = flat[c * size + t]
    return flat[:k * n]
