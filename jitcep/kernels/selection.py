"""NFA^b run steps for the selection strategies other than skip-till-any-match (SASE+ sections 2, 3.2).

The executor (:mod:`jitcep.execute.nfa`) advances every live run of a linear
pattern one singleton state at a time; a run is its partition ``g``, its first
selected event ``first`` and its last one ``last`` (docs/semantics.md section
8).  What the next state's begin edge may select depends on the strategy's
ignore edge (SASE+ 3.2 step 3):

- skip-till-next-match ignores every event the begin edge refuses, so the run
  selects the *first* later candidate of the state (its leaf: type, filters,
  same key partition) that passes the edge's predicates.  :func:`next_ranges`
  gives each run its candidates in the leaf: after ``last`` (by position, or
  by timestamp under ``strict_ts``) and within the window from ``first`` (step
  5); the executor tests them a chunk at a time with the pattern's generated
  predicates and keeps the first that passes.
- strict / partition contiguity ignore nothing of the stream (of the run's key
  partition): the run must select the very next event, ``succ[last]``.
  :func:`contiguous_next` checks that event against the leaf (``slot``: the
  partition of each candidate position, -1 elsewhere), the window and the
  strict_ts order: one step per run, a scan's work.

The runs with Kleene states (:mod:`jitcep.execute.nfa_kleene`) are buffers alive
at a set of states, kept as (runs, states) arrays; a skip-till-next-match round's
per-run work over them is one pass per step: the states each run reads
(:func:`round_ranges`), the next relevant event before a batched begin
(:func:`next_relevant`) and the candidates before it (:func:`first_at_or_after`),
the round's choice and the runs' new state sets (:func:`advance`), and the new
buffers of a selection (:func:`fork_runs`).  As NumPy expressions over those
arrays, a dozen temporaries per round, they took about a third of a round (perf/notes/kleene.md).

Every kernel reads only positions its wrapper checked or clamped (jitcep/kernels/checks.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import check_index, check_lengths, check_offsets, fail
# the binary searches of a negation's range are the same searches: a run's candidates form a range too
from .negation import _first_after, _first_out_of_window_from
from .window import exceeds, window_bound


@njit(**NUMBA_FLAGS)
def _not_after(cand, ts, k, p, strict_ts):
    """Is candidate k not after position p (by position; ``strict_ts``: by timestamp)?"""
    return ts[cand[k]] <= ts[p] if strict_ts else cand[k] <= p


@njit(**NUMBA_FLAGS)
def _first_after_from(cand, ts, c0, c1, p, strict_ts, h):
    """:func:`_first_after` over [c0, c1) by galloping from index ``h`` (c0 <= h <= c1): exponential steps
    away from h bracket the answer, then a binary search inside the bracket."""
    if h < c1 and _not_after(cand, ts, h, p, strict_ts):  # the answer lies past h
        a, step = h + 1, 1
        b = a
        while b < c1 and _not_after(cand, ts, b, p, strict_ts):
            a = b + 1
            b = a + step
            step *= 2
        return _first_after(cand, ts, a, min(b, c1), p, 1 if strict_ts else 0, True)
    b, step = h, 1  # the answer is h or before it
    while True:
        a = b - step
        if a < c0:
            a = c0
            break
        if _not_after(cand, ts, a, p, strict_ts):
            a += 1
            break
        b = a
        step *= 2
    return _first_after(cand, ts, a, b, p, 1 if strict_ts else 0, True)


@njit(**NUMBA_FLAGS)
def _first_out_of_window_galloping(cand, wt, i, c1, first, W):
    """:func:`_first_out_of_window_from` over [i, c1) by galloping forward from i: the window holds a
    few candidates of a partition, so the answer is a few steps away, not a binary search of the
    partition away."""
    t = wt[first]
    a, b, step = i, i, 1
    while b < c1 and not exceeds(t, wt[cand[b]], W):
        a = b + 1
        b = a + step
        step *= 2
    return _first_out_of_window_from(cand, wt, a, min(b, c1), first, W)


@njit(**NUMBA_FLAGS)
def _next_ranges(last, first, g, cand, goff, ts, wt, W, strict_ts, lo, hi):
    # the runs come nearly sorted by (partition, last) (99% of consecutive runs at 10^6 events,
    # perf/notes/kleene.md), so a run's range starts a few candidates from the previous run's: galloping
    # from there, where two binary searches per run over the whole partition took most of the call
    for r in range(len(last)):
        c0, c1 = goff[g[r]], goff[g[r] + 1]
        # position order: after last; strict_ts: a later timestamp (cand is sorted by position, hence by ts)
        if r and g[r] == g[r - 1]:
            i = _first_after_from(cand, ts, c0, c1, last[r], strict_ts, lo[r - 1])
        else:
            i = _first_after(cand, ts, c0, c1, last[r], 1 if strict_ts else 0, True)
        lo[r] = i
        hi[r] = _first_out_of_window_galloping(cand, wt, i, c1, first[r], W)


def next_ranges(last, first, g, leaf, ts, wt, W: int, strict_ts: bool):
    """Per run, the index range [lo, hi) of ``leaf`` (cand, goff) it may select next (skip-till-next-match).

    ``cand[goff[g]:goff[g + 1]]``: the candidate positions of partition g,
    ascending.  A run (``last``, ``first``, ``g``) may select the candidates of
    its partition after ``last`` (``ts`` later than ``ts[last]`` when
    ``strict_ts``) with ``wt[e] - wt[first] <= W`` (exact,
    :func:`jitcep.kernels.window.exceeds`).

    Invariants (KernelInputError otherwise), checked here: the run arrays
    have one length, ``g`` lies in the partitions, ``last`` / ``first`` and
    ``cand`` are positions of ``ts`` and ``wt``, ``goff`` ascending offsets
    into ``cand`` (one pass over each).
    """
    cand, goff = leaf
    m, n = len(last), len(ts)
    check_lengths("next_ranges", m, first=first, g=g)
    check_lengths("next_ranges", n, wt=wt)
    check_offsets("next_ranges", "goff", goff, len(cand))
    check_index("next_ranges", "g", g, len(goff) - 1)
    check_index("next_ranges", "last", last, n)
    check_index("next_ranges", "first", first, n)
    check_index("next_ranges", "cand", cand, n)
    lo, hi = empty(m, np.int64), empty(m, np.int64)  # NumPy-allocated (kernels.alloc)
    _next_ranges(last, first, g, cand, goff, ts, wt, window_bound(W), bool(strict_ts), lo, hi)
    return lo, hi


# --- skip-till-next-match rounds of runs with Kleene states (jitcep.execute.nfa_kleene) ----------------

UNKNOWN = -2                      # a state's next passing candidate not searched yet (-1: none)
NO_EVENT = np.iinfo(np.int64).max  # a run with no relevant event left


@njit(**NUMBA_FLAGS)
def _round_ranges(alive, reach, nxt, kleene, low, top, j, want):
    S = alive.shape[1]
    for r in range(alive.shape[0]):
        lo = 0  # the first state of A (0 when none: NumPy's argmax)
        for s in range(S - 1, -1, -1):
            if alive[r, s]:
                lo = s
        hi = min(max(reach[r], 0), S - 1)
        low[r], top[r] = lo, hi
        b = lo + 1 if kleene[lo] and lo + 1 <= hi and not alive[r, lo + 1] else -1
        j[r] = b
        for s in range(S):
            want[s, r] = lo <= s <= hi and nxt[r, s] == UNKNOWN and s != b


def round_ranges(alive, reach, nxt, kleene):
    """Per run (rows of ``alive`` (m, S): the states its buffer is at), the states a round of
    skip-till-next-match reads: (``low`` = min A, ``top`` = min(reach, S - 1): its range is [low, top];
    ``j``: the state whose selections alone are begun at once (low a Kleene state, ``kleene[low]``, j =
    low + 1 in the range and not in A; -1: none); ``want`` (S, m): the states of the range other than j
    whose next candidate is ``UNKNOWN`` in ``nxt`` (m, S), to be searched).  A run alive nowhere reads as
    alive at its first state.

    Invariants (KernelInputError otherwise), checked here: ``alive`` and ``nxt`` are (m, S), ``reach`` has
    m entries and ``kleene`` S; ``reach`` is clamped into the states, so no value of it is read unchecked.
    """
    m, S = alive.shape
    if nxt.shape != (m, S) or len(kleene) != S or S == 0:
        raise fail("round_ranges", f"nxt {nxt.shape} and kleene ({len(kleene)}) do not fit alive {alive.shape}")
    check_lengths("round_ranges", m, reach=reach)
    low, top, j = empty(m, np.int64), empty(m, np.int64), empty(m, np.int64)
    want = np.empty((S, m), np.bool_)
    _round_ranges(alive, reach, nxt, kleene, low, top, j, want)
    return low, top, j, want


@njit(**NUMBA_FLAGS)
def _clamped(low, top, r, S):
    return max(low[r], 0), min(top[r], S - 1)


@njit(**NUMBA_FLAGS)
def _next_relevant(nxt, low, top, rows, skip, out):
    S = nxt.shape[1]
    for i in range(len(rows)):
        r = rows[i]
        a, b = _clamped(low, top, r, S)
        p = NO_EVENT
        for s in range(a, b + 1):
            if s != skip and 0 <= nxt[r, s] < p:
                p = nxt[r, s]
        out[i] = p


def next_relevant(nxt, low, top, rows, skip: int):
    """Per run ``rows[i]``, the first next candidate (``nxt`` (m, S), -1 / UNKNOWN: none) of the states of
    its range [``low``, ``top``] but ``skip``; NO_EVENT: none.

    Invariants (KernelInputError otherwise), checked here: ``low`` and ``top`` have m entries, ``rows``
    lie in [0, m) (one pass); [low, top] is clamped into the states.
    """
    m = nxt.shape[0]
    check_lengths("next_relevant", m, low=low, top=top)
    check_index("next_relevant", "rows", rows, m)
    out = empty(len(rows), np.int64)
    _next_relevant(nxt, low, top, rows, int(skip), out)
    return out


@njit(**NUMBA_FLAGS)
def _advance(alive, nxt, low, top, cursor, sel, live):
    S = alive.shape[1]
    for r in range(alive.shape[0]):
        a, b = _clamped(low, top, r, S)
        p = NO_EVENT
        for s in range(a, b + 1):
            if 0 <= nxt[r, s] < p:
                p = nxt[r, s]
        cursor[r] = p
        T = -1
        for s in range(S):
            sel[s, r] = p < NO_EVENT and a <= s <= b and nxt[r, s] == p
            if sel[s, r]:
                T = s
        any_alive = False
        for s in range(S):
            # A' = ([min A, T] minus the selecting states) plus the states of A after T; none without an event
            x = p < NO_EVENT and ((s > T and alive[r, s]) or (a <= s <= T and not sel[s, r]))
            alive[r, s] = x
            any_alive |= x
            if nxt[r, s] <= p:  # the cursor passed it
                nxt[r, s] = UNKNOWN
        live[r] = any_alive


def advance(alive, nxt, low, top):
    """One skip-till-next-match round's choice (SASE+ 3.2; docs/semantics.md section 8): each run meets
    its next relevant event p, the first next candidate ``nxt`` (m, S) of the states of its range
    [``low``, ``top``]; every state of the range whose candidate is p selects it.  In place: ``alive``
    (m, S) becomes ([low, T] minus the selecting states) plus the states of A after T (T: the last
    selecting state; no state without an event), and ``nxt`` entries at or before p become UNKNOWN.
    Returns (``cursor`` = p, NO_EVENT: none; ``sel`` (S, m): the selecting states; ``live``: alive
    anywhere).

    Invariants (KernelInputError otherwise), checked here: ``nxt`` is (m, S) like ``alive``, ``low`` and
    ``top`` have m entries; [low, top] is clamped into the states.
    """
    m, S = alive.shape
    if nxt.shape != (m, S):
        raise fail("advance", f"nxt {nxt.shape} does not fit alive {alive.shape}")
    check_lengths("advance", m, low=low, top=top)
    cursor, live = empty(m, np.int64), empty(m, np.bool_)
    sel = np.empty((S, m), np.bool_)
    _advance(alive, nxt, low, top, cursor, sel, live)
    return cursor, sel, live


@njit(**NUMBA_FLAGS)
def _fork_runs(pos, count, tail, first, g, rows, e, s, k, base, at, npos, ncount, ntail, nalive, nreach, nnxt,
               nfirst, nlast, ncursor, ng):
    S, K = pos.shape[1], count.shape[1]
    for i in range(len(rows)):
        r = rows[i]
        for c in range(S):
            npos[i, c] = pos[r, c]
            nalive[i, c] = False
            nnxt[i, c] = UNKNOWN
        for c in range(K):
            ncount[i, c] = count[r, c]
            ntail[i, c] = tail[r, c]
        if k >= 0:  # a take: the member node appended for this buffer
            ntail[i, k] = base + i
            ncount[i, k] += 1
        else:
            npos[i, s] = e[i]
        if at < S:
            nalive[i, at] = True
        nreach[i] = at
        nfirst[i] = e[i] if first[r] < 0 else first[r]
        nlast[i] = e[i]
        ncursor[i] = e[i]
        ng[i] = g[r]


def fork_runs(pos, count, tail, first, g, rows, e, s: int, k: int, base: int):
    """The new buffers of runs ``rows[i]`` selecting event ``e[i]`` at state s (docs/semantics.md section 8):
    each copies its run's singleton events ``pos`` (m, S), member counts ``count`` and last member nodes
    ``tail`` (m, K); at a Kleene state (its index ``k`` >= 0) the take's member is node ``base + i`` and
    the count grows by one, at a singleton state (k = -1) ``pos[:, s]`` is e.  The buffer is alive at its
    one state ``at`` (s, or s + 1 after a singleton state; S: none) with ``reach`` = at, every next
    candidate UNKNOWN, first event its run's (e when none), last event and cursor e.  Returns (pos, count,
    tail, alive, reach, nxt, first, last, cursor, g).

    Invariants (KernelInputError otherwise), checked here: ``count`` and ``tail`` have the rows of
    ``pos``, ``first`` and ``g`` one entry per run, ``e`` one per row of ``rows``, ``rows`` lie in the runs
    (one pass), s in the states and k in the Kleene states.
    """
    m, S = pos.shape
    K = count.shape[1]
    check_lengths("fork_runs", m, count=count, tail=tail, first=first, g=g)
    check_lengths("fork_runs", len(rows), e=e)
    if tail.shape[1] != K or not 0 <= s < S or not -1 <= k < K:
        raise fail("fork_runs", f"state {s} / Kleene state {k} outside {S} / {K}, or tail {tail.shape}")
    check_index("fork_runs", "rows", rows, m)
    at = s if k >= 0 else s + 1
    n = len(rows)
    out = (np.empty((n, S), np.int64), np.empty((n, K), np.int64), np.empty((n, K), np.int64),
           np.empty((n, S), np.bool_), empty(n, np.int64), np.empty((n, S), np.int64), empty(n, np.int64),
           empty(n, np.int64), empty(n, np.int64), empty(n, np.int64))
    _fork_runs(pos, count, tail, first, g, rows, e, s, k, base, at, *out)
    return out


@njit(**NUMBA_FLAGS)
def _first_at_or_after(cand, lo, hi, stop, out):
    n = len(cand)
    for r in range(len(lo)):
        a, c1 = max(lo[r], 0), min(hi[r], n)
        # gallop: the stop is a few candidates away (the next other selection of the run)
        b, step = a, 1
        while b < c1 and cand[b] < stop[r]:
            a = b + 1
            b = a + step
            step *= 2
        b = min(b, c1)
        while a < b:  # the first index of [a, b) with cand >= stop (b if none)
            mid = (a + b) // 2
            if cand[mid] < stop[r]:
                a = mid + 1
            else:
                b = mid
        out[r] = max(a, lo[r])


def first_at_or_after(cand, lo, hi, stop):
    """Per run, the first index i of [``lo``, ``hi``) with ``cand[i] >= stop`` (``cand`` ascending there),
    ``hi`` if none: the candidates of a range before a position.

    Invariants (KernelInputError otherwise), checked here: ``lo``, ``hi``, ``stop`` have one length and
    lo <= hi (one pass); the range is clamped into ``cand``.
    """
    m = len(lo)
    check_lengths("first_at_or_after", m, hi=hi, stop=stop)
    if m and bool((np.asarray(hi) < np.asarray(lo)).any()):
        raise fail("first_at_or_after", "a range ends before it starts")
    out = empty(m, np.int64)
    _first_at_or_after(cand, lo, hi, stop, out)
    return out


@njit(**NUMBA_FLAGS)
def _contiguous_next(last, first, g, succ, slot, ts, wt, W, strict_ts, out):
    for r in range(len(last)):
        p = succ[last[r]]
        if p < 0 or slot[p] != g[r] or exceeds(wt[first[r]], wt[p], W) or (strict_ts and ts[p] <= ts[last[r]]):
            out[r] = -1
        else:
            out[r] = p


def contiguous_next(last, first, g, succ, slot, ts, wt, W: int, strict_ts: bool) -> np.ndarray:
    """Per run, the event it selects next under strict / partition contiguity, or -1 where the run dies.

    The event is ``succ[last]`` (the next event of the stream, or of the
    run's key partition; -1: none); the run selects it iff it is a candidate
    of the state in the run's partition (``slot[p] == g``), lies within the
    window from ``first`` (``wt[p] - wt[first] <= W``, exact) and, when
    ``strict_ts``, has a later timestamp than ``last``.

    Invariants (KernelInputError otherwise), checked here: the run arrays
    have one length, ``succ``, ``slot``, ``ts`` and ``wt`` one entry per
    event, ``last`` / ``first`` positions and ``succ`` positions or -1 (one
    pass over each).
    """
    m, n = len(last), len(ts)
    check_lengths("contiguous_next", m, first=first, g=g)
    check_lengths("contiguous_next", n, succ=succ, slot=slot, wt=wt)
    check_index("contiguous_next", "last", last, n)
    check_index("contiguous_next", "first", first, n)
    check_index("contiguous_next", "succ", succ, n, low=-1)
    out = empty(m, np.int64)
    _contiguous_next(last, first, g, succ, slot, ts, wt, window_bound(W), bool(strict_ts), out)
    return out


def successors(order: np.ndarray, offsets: np.ndarray, n: int) -> np.ndarray:
    """``succ[p]``: the position after p in its group (``order[offsets[k]:offsets[k + 1]]``, ascending), -1
    for a group's last position and for a position in no group."""
    order = np.asarray(order, dtype=np.int64)
    check_offsets("successors", "offsets", offsets, len(order))
    if offsets[0] != 0 or offsets[-1] != len(order):
        raise fail("successors", f"offsets {offsets[0]}..{offsets[-1]} do not cover the {len(order)} positions")
    check_index("successors", "order", order, n)
    succ = np.full(n, -1, dtype=np.int64)
    if len(order) > 1:
        succ[order[:-1]] = order[1:]
    ends = offsets[1:][offsets[1:] > offsets[:-1]] - 1
    succ[order[ends]] = -1
    return succ
