"""NfaRuns: the NFA^b runs of a linear pattern under skip-till-next-match or contiguity (SASE+ 3.1-3.2).

docs/semantics.md section 8.  Over singleton states every run is
deterministic: at each event a run either begins the next state or ignores
the event, never both (skip-till-next-match ignores exactly what the begin
edge refuses; partition contiguity ignores only other partitions' events,
which the begin edge, keeping the run's ``[attr]`` key, refuses too; strict
contiguity ignores nothing), and a run dies
where it can do neither.  So a run is fixed by the event that started it,
yields at most one match, and no two runs are ever merged.  The runs
therefore advance state by state, all at once: every candidate of the first
state starts one, and at each later state every live run selects its next
event or dies:

- skip-till-next-match: the first candidate of the state's leaf after the
  run's last event, in its partition and window, passing the state's begin
  edge (:func:`jitcep.kernels.selection.next_ranges`, then the edge's
  conjuncts on chunks of (run, candidate) pairs, doubling per round: most
  runs settle on their first candidate, a selective edge costs a few rounds);
- strict / partition contiguity: the next event of the stream / of the
  run's partition, if it passes the edge
  (:func:`jitcep.kernels.selection.contiguous_next`, then the conjuncts once).

The accepted runs are match records sorted by (partition, end); negations
filter them afterwards (semantics section 8).  With a Kleene state runs fork:
:mod:`jitcep.execute.nfa_kleene`.
"""

from __future__ import annotations

import numpy as np

from ..kernels.selection import contiguous_next, next_ranges, successors
from . import nfa_kleene
from .next_match import first_passing
from .buffer import Buffer, empty_buffer, offsets


def run(node, state, execute) -> Buffer:
    if node.closures:  # Kleene states: runs fork
        contiguous = node.strategy != "skip_till_next_match"
        return nfa_kleene.run(node, state, execute, _successors(node, state, execute) if contiguous else None)
    table, options = state.table, state.options
    strict_ts = options.order == "strict_ts"  # the other orders consume events in position order
    first_leaf = execute(node.states[0])
    pos = first_leaf.start.reshape(-1, 1)  # a run per candidate of the first state: its selected events
    g = first_leaf.partitions()
    succ = None  # contiguity: the event each position must be followed by, made when first needed
    for s in range(1, len(node.states)):
        if not len(pos):
            return empty_buffer(node.vars, state.G)
        leaf = execute(node.states[s])
        if node.strategy == "skip_till_next_match":
            nxt = _next_match(state, node, s, leaf, pos, g, strict_ts)
        else:
            if succ is None:
                succ = _successors(node, state, execute)
            slot = np.full(table.n, -1, dtype=np.int64)  # each candidate's partition, -1: not a candidate
            slot[leaf.start] = leaf.partitions()
            nxt = contiguous_next(pos[:, -1], pos[:, 0], g, succ, slot, table.ts, state.wt, state.W, strict_ts)
            alive = np.flatnonzero(nxt >= 0)
            nxt[alive[~_edge_passes(state, node, s, pos, alive, nxt[alive])]] = -1
        keep = np.flatnonzero(nxt >= 0)
        pos = np.concatenate([pos[keep], nxt[keep, None]], axis=1)
        g = g[keep]
    return _matches(node, state, pos, g)


def _successors(node, state, execute) -> np.ndarray:
    """The event each position must be followed by in a run: the next of its ``partition_by`` stream
    (strict contiguity; the next position without streams) or of its key partition (partition
    contiguity: the ``stream`` leaf holds every event with a key, by partition)."""
    n = state.table.n
    if node.stream is not None:
        every = execute(node.stream)
        return successors(every.start, every.goff, n)
    streams = state.ctx.streams
    if streams is not None:
        return successors(streams.order, streams.offsets, n)
    succ = np.arange(1, n + 1, dtype=np.int64)
    succ[-1:] = -1
    return succ


def _next_match(state, node, s: int, leaf: Buffer, pos: np.ndarray, g: np.ndarray, strict_ts: bool) -> np.ndarray:
    """Each run's next event under skip-till-next-match at state ``s`` (-1: none), see the module docstring."""
    cand = leaf.start
    lo, hi = next_ranges(pos[:, -1], pos[:, 0], g, (cand, leaf.goff), state.table.ts, state.wt, state.W, strict_ts)
    active = np.flatnonzero(lo < hi)
    if not node.edges[s]:
        return first_passing(cand, lo, hi, active, None)
    return first_passing(cand, lo, hi, active, lambda runs, ev: _edge_passes(state, node, s, pos, runs, ev))


def _edge_passes(state, node, s: int, pos: np.ndarray, runs: np.ndarray, events: np.ndarray) -> np.ndarray:
    """Whether run ``runs[i]`` (its events ``pos``) with ``events[i]`` at state ``s`` passes every conjunct
    of that state's begin edge."""
    return state.pairs_pass(pos, node.vars, node.edges[s], runs, {node.vars[s]: events})


def _matches(node, state, pos: np.ndarray, g: np.ndarray) -> Buffer:
    """The accepted runs as match records sorted by (partition, end)."""
    if not len(pos):
        return empty_buffer(node.vars, state.G)
    start, end = pos[:, 0], pos[:, -1]
    order = np.lexsort((end, g))
    pos, start, end, g = pos[order], start[order], end[order], g[order]
    ts, wt = state.table.ts, state.wt
    tstart, tend = ts[start], ts[end]
    wstart, wend = (tstart, tend) if wt is ts else (wt[start], wt[end])
    return Buffer(node.vars, np.ascontiguousarray(pos), start, end, offsets(g, state.G), tstart, tend, wstart, wend)
