"""The semi-join reduction of a SEQ over its leaves (Yannakakis' full reducer, the window as a band).

For a SEQ of single variables v_1 .. v_k, an event e of v_i lies on a *chain*
when some events e_1 .. e_k of the leaves, one per variable and in the same
key partition, satisfy before(e_1, e_2), .., before(e_{k-1}, e_k) with e_i = e
and the window ``wt[e_k] - wt[e_1] <= W``.  Every event of a match lies on a
chain (the joins test these conditions and more: predicates, negations), so
dropping the events on no chain changes no match.

Two linear passes decide it exactly (Yannakakis 1981, semi-joins along a
path; Bucchi et al., CORE, VLDB 2022, evaluate the same reachability with
their automaton's runs):

- backward (:func:`earliest_end`): for each event of v_i, the smallest
  ``wt[e_k]`` over the suffixes e, e_{i+1} .. e_k (a suffix minimum over
  v_{i+1}'s events after it, which is where the chain can end soonest);
- forward (:func:`latest_start`): for each event of v_i, the largest
  ``wt[e_1]`` over the prefixes e_1 .. e (a prefix maximum over v_{i-1}'s
  events before it).

A prefix and a suffix through e combine freely, so e lies on a chain iff
both exist and ``end - start <= W`` (:func:`chain_fits`): one pass each way,
no fixpoint.  The same two bounds decide whether a partial record binding
the run v_a .. v_b extends to a chain: ``end[e_b] - start[e_a] <= W``.

The window measure ``wt`` must ascend along a chain: ts under a time window
(before() never goes back in time), positions under a count window when
before() is position or strict_ts order (under nondecreasing_ts two tied
events are ordered both ways, and the span is no longer first-to-last; the
plan rule does not reduce there).  Inside a key partition each leaf lists
its events in position order, so ts and wt ascend too.

Orders (``order``): 0 position, 1 strict_ts, 2 nondecreasing_ts, as in
:mod:`jitcep.kernels.join`.  The kernels index only with loop counters bounded
by the partition offsets, checked as the loops read them (status -2).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from ..threads import partition_ranges, run_ranges
from .checks import check_lengths, fail
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _before(p, pt, q, qt, order):
    """before(p, q) of semantics section 1 for positions p, q with times pt, qt (a tie under
    nondecreasing_ts counts, even for one event on both sides: a superset of the pairs, still sound)."""
    if order == 0:
        return p < q
    if order == 1:
        return pt < qt
    return pt <= qt


@njit(**NUMBA_FLAGS)
def _earliest_end(P, PT, Pg, Q, QT, Qg, qend, qok, order, end, ok, g0, g1):
    # the partitions [g0, g1): a range writes only its partitions' events, so ranges run side by side
    for g in range(g0, g1):
        p0, p1 = Pg[g], Pg[g + 1]
        q0, q1 = Qg[g], Qg[g + 1]
        if not (0 <= p0 <= p1 <= len(P) and 0 <= q0 <= q1 <= len(Q)):
            return -2
        # P from its last event down: the events of Q after P[p] only grow, so a running minimum
        # over them is the suffix minimum
        j = q1
        have = False
        best = np.int64(0)
        for p in range(p1 - 1, p0 - 1, -1):
            while j > q0 and _before(P[p], PT[p], Q[j - 1], QT[j - 1], order):
                j -= 1
                if qok[j] and (not have or qend[j] < best):
                    best = qend[j]
                    have = True
            end[p] = best
            ok[p] = have
    return 0


@njit(**NUMBA_FLAGS)
def _latest_start(P, PT, Pg, pstart, pok, Q, QT, Qg, order, start, ok, g0, g1):
    for g in range(g0, g1):
        p0, p1 = Pg[g], Pg[g + 1]
        q0, q1 = Qg[g], Qg[g + 1]
        if not (0 <= p0 <= p1 <= len(P) and 0 <= q0 <= q1 <= len(Q)):
            return -2
        # Q in position order: the events of P before Q[q] only grow (the mirror of _earliest_end)
        i = p0
        have = False
        best = np.int64(0)
        for q in range(q0, q1):
            while i < p1 and _before(P[i], PT[i], Q[q], QT[q], order):
                if pok[i] and (not have or pstart[i] > best):
                    best = pstart[i]
                    have = True
                i += 1
            start[q] = best
            ok[q] = have
    return 0


@njit(**NUMBA_FLAGS)
def _chain_fits(start, sok, end, eok, W, out):
    for i in range(len(out)):
        out[i] = sok[i] and eok[i] and not exceeds(start[i], end[i], W)


def _leaf(kernel: str, leaf):
    """A leaf (positions, times, partition offsets) as contiguous int64 arrays, its lengths checked."""
    P, T, g = (np.ascontiguousarray(a, dtype=np.int64) for a in leaf)
    check_lengths(kernel, len(P), times=T)
    if g.ndim != 1 or not len(g):
        raise fail(kernel, "partition offsets must be a non-empty 1-d array")
    return P, T, g


def _by_partitions(kernel: str, fn, Pg, Qg, threads: int) -> None:
    """``fn(g0, g1)`` (a kernel's status) over ranges of the partitions of two leaves with offsets
    ``Pg`` / ``Qg``, side by side (:func:`jitcep.threads.partition_ranges`: each range writes only its
    partitions' events); KernelInputError when a range reads offsets outside the leaves."""
    if len(Pg) != len(Qg):
        raise fail(kernel, f"{len(Pg) - 1} and {len(Qg) - 1} partitions")
    # the ranges are cut by record counts, so the offsets must ascend before they are read
    split = threads > 1 and _ascending(Pg) and _ascending(Qg)
    ranges = partition_ranges((Pg, Qg), threads) if split else [(0, len(Pg) - 1)]
    if any(run_ranges(fn, ranges)):
        raise fail(kernel, "partition offsets outside the leaves")


def _ascending(g: np.ndarray) -> bool:
    return bool(np.all(g[1:] >= g[:-1]))


def earliest_end(leaf, nxt, nxt_end: np.ndarray, nxt_ok: np.ndarray, order: int, threads: int = 1):
    """For each event of ``leaf`` (v_i), the smallest ``nxt_end`` (with ``nxt_ok``) over the events of
    ``nxt`` (v_{i+1}) after it in its partition: (end, ok), ok False where there is none.

    ``leaf`` / ``nxt``: (positions, ts, partition offsets), each partition in position order, both
    with the same number of partitions.  Lengths checked here, offsets as the kernel reads them.
    ``threads``: the partitions are split into up to that many ranges run side by side (each
    partition is its own: the same answer on any count).
    """
    P, PT, Pg = _leaf("earliest_end", leaf)
    Q, QT, Qg = _leaf("earliest_end", nxt)
    check_lengths("earliest_end", len(Q), nxt_end=nxt_end, nxt_ok=nxt_ok)
    return _earliest_ends((P, PT, Pg), (Q, QT, Qg), np.ascontiguousarray(nxt_end, dtype=np.int64),
                          np.ascontiguousarray(nxt_ok, dtype=np.bool_), order, threads)


def _earliest_ends(leaf, nxt, qend: np.ndarray, qok: np.ndarray, order: int, threads: int):
    """:func:`earliest_end` of leaves as :func:`_leaf` makes them, ``qend`` / ``qok`` contiguous and as long
    as ``nxt`` (the caller checked)."""
    (P, PT, Pg), (Q, QT, Qg) = leaf, nxt
    end, ok = np.empty(len(P), np.int64), np.empty(len(P), np.bool_)
    _by_partitions("earliest_end", lambda g0, g1: _earliest_end(P, PT, Pg, Q, QT, Qg, qend, qok, order, end, ok,
                                                                g0, g1), Pg, Qg, threads)
    return end, ok


def latest_start(prev, prev_start: np.ndarray, prev_ok: np.ndarray, leaf, order: int, threads: int = 1):
    """For each event of ``leaf`` (v_i), the largest ``prev_start`` (with ``prev_ok``) over the events of
    ``prev`` (v_{i-1}) before it in its partition: (start, ok), ok False where there is none.
    Arrays and ``threads`` as for :func:`earliest_end`."""
    P, PT, Pg = _leaf("latest_start", prev)
    Q, QT, Qg = _leaf("latest_start", leaf)
    check_lengths("latest_start", len(P), prev_start=prev_start, prev_ok=prev_ok)
    return _latest_starts((P, PT, Pg), np.ascontiguousarray(prev_start, dtype=np.int64),
                          np.ascontiguousarray(prev_ok, dtype=np.bool_), (Q, QT, Qg), order, threads)


def _latest_starts(prev, pstart: np.ndarray, pok: np.ndarray, leaf, order: int, threads: int):
    """:func:`latest_start` of leaves as :func:`_leaf` makes them, ``pstart`` / ``pok`` contiguous and as
    long as ``prev`` (the caller checked)."""
    (P, PT, Pg), (Q, QT, Qg) = prev, leaf
    start, ok = np.empty(len(Q), np.int64), np.empty(len(Q), np.bool_)
    _by_partitions("latest_start", lambda g0, g1: _latest_start(P, PT, Pg, pstart, pok, Q, QT, Qg, order, start,
                                                                ok, g0, g1), Pg, Qg, threads)
    return start, ok


def chain_fits(start, start_ok, end, end_ok, W) -> np.ndarray:
    """``start_ok & end_ok & (end - start <= W)`` element-wise, the difference exact
    (:func:`jitcep.kernels.window.exceeds`)."""
    start = np.ascontiguousarray(start, dtype=np.int64)
    check_lengths("chain_fits", len(start), start_ok=start_ok, end=end, end_ok=end_ok)
    return _fits(start, np.ascontiguousarray(start_ok, dtype=np.bool_), np.ascontiguousarray(end, dtype=np.int64),
                 np.ascontiguousarray(end_ok, dtype=np.bool_), window_bound(W))


def _fits(start, start_ok, end, end_ok, bound: np.uint64) -> np.ndarray:
    """:func:`chain_fits` of contiguous arrays of one length (the caller checked), ``bound`` from
    :func:`~jitcep.kernels.window.window_bound`."""
    out = np.empty(len(start), np.bool_)
    _chain_fits(start, start_ok, end, end_ok, bound, out)
    return out


def chain_reach(leaves, measures, order: int, W, threads: int = 1):
    """The reduction of a SEQ over its ``leaves`` (in SEQ order; each (positions, ts, partition offsets))
    with window measures ``measures`` (wt of each leaf's events) and inclusive bound ``W``; each pass
    splits its partitions over ``threads`` (:func:`earliest_end`).

    Returns, per leaf, (on_chain, start, end): whether each event lies on a chain (module docstring),
    the latest chain start and the earliest chain end through it (meaningful where on_chain).

    Each pass drops what the window already rules out, and the next pass reads only the survivors
    (:func:`_survivors`): an event of v_i whose earliest end is more than W after its own measure is
    on no chain (a chain through it starts at or before it), nor is one whose latest start is more
    than W before it (under orders 0 and 1; under nondecreasing_ts two tied events are ordered both
    ways, so a count window's positions need not ascend along a chain, and only the end and start
    events' measures are compared).  The forward pass reads only the backward pass's survivors (from
    :data:`_PRUNE_MIN` leaf events on; below it the passes read whole leaves).  Every event of a
    chain survives with its exact bounds: the event a bound comes from lies on the chain that bound
    closes, so it survives too; an event that does not survive is on no chain, and a bound read over
    fewer events is looser, never admitting an event off every chain.  On a long SEQ whose chains are
    rare the passes thus shrink to the few partitions that still hold survivors (seq_len24: 23 of 24
    backward passes read next to nothing, perf/notes/reduction.md).
    """
    k = len(leaves)
    if k != len(measures) or k == 0:
        raise fail("chain_reach", f"{k} leaves and {len(measures)} measures")
    # each leaf and measure made contiguous and checked once, here: the passes below read each leaf twice
    # and take their survivors and bounds as the kernels wrote them (a small table's reduction was ~280
    # Python calls, most of them these checks again, perf/notes/opencep.md)
    leaves = [_leaf("chain_reach", leaf) for leaf in leaves]
    wts = [np.ascontiguousarray(m, dtype=np.int64) for m in measures]
    for leaf, wt in zip(leaves, wts):
        check_lengths("chain_reach", len(leaf[0]), measure=wt)
    bound = window_bound(W)
    # a few thousand events: the passes over whole leaves cost less than taking survivors out of them
    prune = order != 2 and sum(len(wt) for wt in wts) >= _PRUNE_MIN
    ends = [None] * k
    ends[-1] = (wts[-1], np.ones(len(wts[-1]), np.bool_))
    nxt = (leaves[-1], *ends[-1])
    for i in range(k - 2, -1, -1):
        end, ok = _earliest_ends(leaves[i], *nxt, order, threads)
        if prune:
            ok = _fits(wts[i], ok, end, ok, bound)
        if not ok.any():  # no chain: nothing to read further
            return [(np.zeros(len(wt), np.bool_), np.zeros(len(wt), np.int64), np.zeros(len(wt), np.int64))
                    for wt in wts]
        ends[i] = (end, ok)
        nxt = _survivors(leaves[i], end, ok) if prune else (leaves[i], end, ok)
    out = []
    prev = None
    for i in range(k):
        end, ok = ends[i]
        idx = _most(ok) if prune else None
        leaf, wt = (leaves[i], wts[i]) if idx is None else (_taken(leaves[i], idx), wts[i][idx])
        sok = ok if idx is None else np.ones(len(idx), np.bool_)
        if prev is None:
            start = wt
        else:
            start, got = _latest_starts(*prev, leaf, order, threads)
            sok = _fits(start, got & sok, wt, sok, bound) if prune else got & sok
        prev = (leaf, start, sok)
        if idx is not None:
            start, sok = np.zeros(len(ok), np.int64), np.zeros(len(ok), np.bool_)
            start[idx], sok[idx] = prev[1], prev[2]
        out.append((_fits(start, sok, end, ok, bound), start, end))
    return out


_PRUNE_MIN = 1 << 14
"""Leaf events from which the passes drop what the window rules out and read only survivors: below it
(OpenCEP's files) the extra calls cost ~0.1 ms, more than the passes over whole leaves save."""


def _most(ok: np.ndarray) -> np.ndarray | None:
    """The indices with ``ok`` (ascending), or None when most are: taking them would cost more than the
    pass over fewer events saves, so the pass reads the whole leaf and its flags."""
    if 2 * int(np.count_nonzero(ok)) > len(ok):
        return None
    return np.flatnonzero(ok)


def _taken(leaf, idx: np.ndarray):
    """The events ``idx`` (ascending) of ``leaf`` as a leaf: positions, times and partition offsets."""
    P, T, g = leaf
    return P[idx], T[idx], np.searchsorted(idx, g).astype(np.int64)


def _survivors(leaf, end: np.ndarray, ok: np.ndarray):
    """(leaf, end, ok) of the events of ``leaf`` with ``ok``, as the next backward pass reads them
    (the whole leaf and its flags when most survive, :func:`_most`)."""
    idx = _most(ok)
    if idx is None:
        return leaf, end, ok
    return _taken(leaf, idx), end[idx], np.ones(len(idx), np.bool_)
