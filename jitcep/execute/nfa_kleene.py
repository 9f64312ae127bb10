"""NfaRuns with Kleene states (SASE+ 3.1-3.2; docs/semantics.md section 8).

A Kleene state k (``T+ b[]``, ``{n,m}``, min 0) has a take edge (allowed
while the run holds fewer than max members) and a proceed edge to k + 1
(allowed with at least min members and the proceed-edge conjuncts true).
After a selection at state s a run is at s (a Kleene state) or s + 1; from
its state c it reaches through proceed edges every state up to ``reach``,
the first whose proceed edge fails (the run's *range*: later Kleene states
are still empty, so their proceed edges are read on empty lists); ``reach``
past the last state is F, and the run is then a match.

The reference evaluator (:mod:`jitcep.reference.nfa`) keeps runs as (state,
buffer) pairs and merges equal ones.  At an event e a run at state a follows
the proceed edges up to the last state T of its range that can select e (the
peek), selects e at every state of [a, T] that can, and ignores e at the
others (skip-till-next-match ignores exactly what a state cannot select), so
one buffer may live at several states: the set A of its range.  Here a run is
a buffer with that set (``alive``):

- a selection makes a new buffer (one per state selecting e), alive at one
  state; no two runs share a buffer, so nothing is merged;
- skip-till-next-match: a run is unaffected by an event no state of its range
  from min A on can select; at the first one that some can (its *next
  relevant event* e), every such state selects e, and A becomes ([min A, T]
  minus the selecting states) plus the states of A after T.  Each state's
  first passing candidate after the run's ``cursor`` is kept (``nxt``) until
  the cursor passes it, so a state's candidates are tested once per buffer;
- strict / partition contiguity ignore nothing of the stream (of the key
  partition): at its next event every state of the range that can select it
  does, and the run ends (A stays one state).

Runs advance one relevant event per round, all at once, as records (a run
alive at a Kleene state but not at the next one, which its proceed edge
reaches, begins that next state with every candidate before its next other
selection in one round: those rounds leave the run as it was): the
singleton states' events (``pos``), per Kleene state its member count and
last member in a parent-pointer forest (:class:`Members`: a take appends one
node, shared by every run forked after it), ``alive``, ``reach``, first /
last event, cursor and partition.  The lists are made (CSR) only for the
(run, event) pairs a conjunct reading them is tested on and for the matches
(the edges: :mod:`jitcep.execute.nfa_kleene_edges`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExplosionError
from ..kernels.selection import (UNKNOWN, advance, contiguous_next, first_at_or_after, fork_runs, next_ranges,
                                 next_relevant, round_ranges)
from .buffer import Buffer, empty_buffer, offsets
from .next_match import first_passing
from .nfa_kleene_edges import KleeneEdges
from .nfa_kleene_runs import Members, Runs


def run(node, state, execute, succ: np.ndarray | None) -> Buffer:
    """The accepted runs of ``node`` (with Kleene states) as match records sorted by (partition, end);
    ``succ``: under contiguity, the event each position must be followed by
    (:func:`jitcep.execute.nfa._successors`), None under skip-till-next-match."""
    table, options = state.table, state.options
    leaves = [execute(s) for s in node.states]
    ctx = _Context(node, state, leaves, succ)
    matches: list[Runs] = []
    n_matches = 0

    def keep(new: Runs) -> Runs:
        nonlocal n_matches
        done = new.take(np.flatnonzero(new.reach == ctx.S))
        if len(done):
            matches.append(done)
            n_matches += len(done)
            if n_matches > options.max_matches:
                raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                                     f"or narrow the pattern")
        alive = np.flatnonzero(new.alive.any(axis=1))
        return new if len(alive) == len(new) else new.take(alive)  # (new is a fresh buffer)

    runs = keep(ctx.starts()) if table.n else ctx.empty(0)
    while len(runs):
        state.memory.check(runs.pos.nbytes * 4, "the NFA^b runs", ctx.members.pos, ctx.members.parent)
        runs, forks = ctx.step(runs)
        runs = Runs.concat([runs, keep(forks)])
    return _matches(node, state, ctx, matches)


class _Context:
    """The rounds of one NfaRuns node over the shared members (see the module docstring): each run's
    selections at its next relevant event, its edges tested by :class:`KleeneEdges`."""

    def __init__(self, node, state, leaves, succ):
        self.node, self.state, self.leaves, self.succ = node, state, leaves, succ
        self.names = [s.var for s in node.states]
        self.S = len(self.names)
        self.closures = {K.var: K for K in node.closures}
        self.kv = list(self.closures)                                            # Kleene index -> variable
        self.k = [self.kv.index(v) if v in self.closures else -1 for v in self.names]  # state -> Kleene index
        self.kleene = np.array(self.k) >= 0                                      # state -> is a Kleene state
        self.members = Members()
        self.edges = KleeneEdges(node, state, self.names, self.closures, self.kv, self.k, self.members)
        self.strict_ts = state.options.order == "strict_ts"  # the other orders consume in position order
        self.slots = []
        for leaf in leaves if succ is not None else ():
            slot = np.full(state.table.n, -1, dtype=np.int64)  # each candidate's partition, -1: not one
            slot[leaf.start] = leaf.partitions()
            self.slots.append(slot)

    def empty(self, m: int) -> Runs:
        S, K = self.S, len(self.kv)
        neg = np.full(m, -1, np.int64)
        return Runs(np.full((m, S), -1, np.int64), np.zeros((m, K), np.int64), np.full((m, K), -1, np.int64),
                     np.zeros((m, S), np.bool_), np.zeros(m, np.int64), np.full((m, S), UNKNOWN, np.int64),
                     neg, neg.copy(), neg.copy(), np.zeros(m, np.int64))

    # --- selection -------------------------------------------------------------

    def starts(self) -> Runs:
        """Runs begun by every candidate of each state an empty run reaches (the first, and past empty
        Kleene states whose proceed edge holds): every event may start a run, which must select it."""
        out = []
        probe = self.empty(1)
        for s in range(self.S):
            leaf = self.leaves[s]
            runs = self.empty(len(leaf.start))
            runs.g = leaf.partitions()
            e = leaf.start
            ok = self.edges.edge(runs, np.arange(len(e)), s, e)
            out.append(self.select(runs, np.flatnonzero(ok), s, e[ok]))
            if not self.edges.proceeds(probe, np.zeros(1, np.int64), s)[0]:
                break
        return Runs.concat(out)

    def select(self, runs: Runs, rows: np.ndarray, s: int, e: np.ndarray) -> Runs:
        """New buffers: run ``rows[i]``'s with event ``e[i]`` selected at state s (its edge already
        passed), each alive at its one state with its range (the fields in one pass,
        :func:`~jitcep.kernels.selection.fork_runs`, instead of a NumPy take or fill per field)."""
        k = self.k[s]
        at = s if k >= 0 else s + 1
        base = self.members.n
        if k >= 0:
            self.members.append(e, runs.tail[rows, k])
        new = Runs(*fork_runs(runs.pos, runs.count, runs.tail, runs.first, runs.g, rows, e, s, k, base))
        for r in range(at, self.S):  # the range: proceed edges from `at` on, the later lists empty
            idx = np.flatnonzero(new.reach == r)
            if not len(idx):
                break
            new.reach[idx[self.edges.proceeds(new, idx, r)]] = r + 1
        return new

    def step(self, runs: Runs) -> tuple[Runs, Runs]:
        """One round: every run meets its next relevant event; (the runs still alive, the new buffers)."""
        if self.succ is not None:
            return self._contiguous_step(runs)
        # per run its range [low, top] = [min A, reach], the states to search, and j: a run alive at a Kleene
        # state low, not at j = low + 1 but reaching it, makes its selections at j alone at once
        # (:meth:`_begin_each`), once the other states' next candidates are known
        low, top, j, want = round_ranges(runs.alive, runs.reach, runs.nxt, self.kleene)
        nxt = runs.nxt  # updated in place: the round's runs are not read again
        for s in range(self.S):
            rows = np.flatnonzero(want[s])
            if len(rows):
                nxt[rows, s] = self._first_passing(runs, rows, s)
        begun = self._begin_each(runs, np.flatnonzero(j >= 0), j, low, top, nxt)
        # the next relevant event p, the selecting states, and A' (in place, with nxt: the cursor passed p)
        cursor, sel, live = advance(runs.alive, nxt, low, top)
        forks = Runs.concat([begun, self._forks(runs, sel, np.broadcast_to(cursor, sel.shape))])
        runs.cursor = cursor
        return runs.take(np.flatnonzero(live)), forks

    def _contiguous_step(self, runs: Runs) -> tuple[Runs, Runs]:
        """Contiguity: the next event of the stream / partition, selected wherever the range can; every run
        ends (its new buffers go on)."""
        S = self.S
        col = np.arange(S)
        low = np.argmax(runs.alive, axis=1)  # min A
        rng = (col >= low[:, None]) & (col <= np.minimum(runs.reach, S - 1)[:, None])
        nxt = np.full((len(runs), S), -1, np.int64)
        for s in range(S):
            rows = np.flatnonzero(rng[:, s])
            if len(rows):
                e = contiguous_next(runs.last[rows], runs.first[rows], runs.g[rows], self.succ, self.slots[s],
                                    self.state.table.ts, self.state.wt, self.state.W, self.strict_ts)
                ok = np.flatnonzero(e >= 0)
                ok = ok[self.edges.edge(runs, rows[ok], s, e[ok])]
                nxt[rows[ok], s] = e[ok]
        return runs.take(np.zeros(0, np.int64)), self._forks(runs, (nxt >= 0).T, nxt.T)

    def _forks(self, runs: Runs, sel: np.ndarray, event: np.ndarray) -> Runs:
        """The new buffers of the runs selecting at each state s (``sel[s]``, per run) the event ``event[s]``."""
        parts = [self.select(runs, rows, s, event[s][rows])
                 for s in range(self.S) for rows in (np.flatnonzero(sel[s]),) if len(rows)]
        return Runs.concat(parts) if parts else self.empty(0)

    def _begin_each(self, runs: Runs, rows: np.ndarray, j: np.ndarray, low: np.ndarray, top: np.ndarray,
                    nxt: np.ndarray) -> Runs:
        """Skip-till-next-match: the new buffers of the rounds in which run ``rows[i]`` would select only at
        its state ``j[rows[i]]`` = min A + 1 (min A a Kleene state whose proceed edge holds, j not in A),
        begun at once, as before several Kleene states were compiled (one round per take, not per event);
        sets ``nxt`` at j (the first passing candidate at or after ``stop``).

        Up to ``stop``, the first passing candidate of another state of the
        run's range [``low``, ``top``], each passing candidate of j is a round
        whose selecting states are {j}: A' = ([min A, j] minus {j}) plus the
        states of A after j = A, so the run stays as it was and makes a new
        buffer per candidate.  A candidate of j at ``stop`` itself is left to
        the round (a tie: several states select it)."""
        out = []
        for s in np.unique(j[rows]):
            r = rows[j[rows] == s]
            stop = next_relevant(nxt, low, top, r, s)
            cand, lo, hi = self._candidates(runs, r, s)
            cut = first_at_or_after(cand, lo, hi, stop)
            take = cut - lo
            self.state.memory.check(24 * int(take.sum()), "the NFA^b runs' candidates before their next take",
                                    runs.pos)
            rr = np.repeat(r, take)
            idx = np.repeat(lo, take) + np.arange(len(rr)) - np.repeat(np.cumsum(take) - take, take)
            ok = np.flatnonzero(self.edges.edge(runs, rr, s, cand[idx]))
            out.append(self.select(runs, rr[ok], s, cand[idx[ok]]))
            nxt[r, s] = self._first_passing(runs, r, s, (cand, cut, hi))
        return Runs.concat(out) if out else self.empty(0)

    def _candidates(self, runs: Runs, rows: np.ndarray, s: int):
        """(candidates of state s, lo, hi): run ``rows[i]``'s are ``cand[lo[i]:hi[i]]``
        (:func:`jitcep.kernels.selection.next_ranges`: partition, window, after the cursor; under
        strict_ts also later than its last event; that low end may pass the window's end under a count
        window, and the range is then empty, never inverted)."""
        state, leaf = self.state, self.leaves[s]
        ts, wt, W = state.table.ts, state.wt, state.W
        cand = leaf.start
        lo, hi = next_ranges(runs.cursor[rows], runs.first[rows], runs.g[rows], (cand, leaf.goff), ts, wt, W, False)
        if self.strict_ts:
            lo = np.maximum(lo, next_ranges(runs.last[rows], runs.first[rows], runs.g[rows], (cand, leaf.goff), ts,
                                            wt, W, True)[0])
            hi = np.maximum(hi, lo)
        return cand, lo, hi

    def _first_passing(self, runs: Runs, rows: np.ndarray, s: int, ranges=None) -> np.ndarray:
        """Each run ``rows[i]``'s first candidate of state s after its cursor passing the begin / take edge
        (-1: none), skip-till-next-match: among :meth:`_candidates` (or ``ranges``, the same triple), tested
        on chunks of (run, candidate) pairs as for singleton states
        (:func:`jitcep.execute.next_match.first_passing`)."""
        cand, lo, hi = self._candidates(runs, rows, s) if ranges is None else ranges
        active = np.flatnonzero(lo < hi)
        k = self.k[s]
        if k >= 0 and self.closures[self.kv[k]].max is not None:
            active = active[runs.count[rows[active], k] < self.closures[self.kv[k]].max]  # full: only proceeds
        if not (self.node.edges[s] or self.node.list_edges[s]):
            return first_passing(cand, lo, hi, active, None)
        return first_passing(cand, lo, hi, active, lambda rr, ev: self.edges.edge(runs, rows[rr], s, ev))


def _matches(node, state, ctx: _Context, matches: list) -> Buffer:
    """The accepted runs as match records sorted by (partition, end), the Kleene members as lists."""
    if not matches:
        buf = empty_buffer(node.vars, state.G)
        buf.lists = {kv: (np.zeros(1, np.int64), np.empty(0, np.int64)) for kv in ctx.kv}
        return buf
    runs = Runs.concat(matches)
    order = np.lexsort((runs.last, runs.g))
    runs = runs.take(order)
    lists = {kv: ctx.members.lists(runs.tail[:, k], runs.count[:, k]) for k, kv in enumerate(ctx.kv)}
    cols = [s for s, v in enumerate(ctx.names) if v not in ctx.closures]
    start, end = runs.first, runs.last
    ts, wt = state.table.ts, state.wt
    tstart, tend = ts[start], ts[end]
    wstart, wend = (tstart, tend) if wt is ts else (wt[start], wt[end])
    return Buffer(node.vars, np.ascontiguousarray(runs.pos[:, cols]), start, end, offsets(runs.g, state.G),
                  tstart, tend, wstart, wend, lists)
