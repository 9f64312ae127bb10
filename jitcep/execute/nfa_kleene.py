"""NfaRuns with a Kleene state (SASE+ 3.1-3.2; docs/semantics.md section 8).

A Kleene state k (``T+ b[]``, ``{n,m}``, min 0) has a take edge (allowed
while the run holds fewer than max members) and a proceed edge to k + 1
(allowed with at least min members and the list conjuncts true).  A run at k
forks: it may take an event at k or, through the proceed edge, begin one at
k + 1.  With one Kleene state, followed by a singleton state or F, every run
the automaton makes is created by a selection:

- strict / partition contiguity ignore nothing of the stream (of the key
  partition), so at its next event e the run takes e at k and begins e at
  k + 1, where each edge allows (the peek never drops a state that selects
  e; a proceed that selects nothing leaves a run that can neither select nor
  ignore e: it dies);
- skip-till-next-match: the run ignores every event it cannot take, up to its
  first take t; meanwhile, at each event that k + 1 can begin, the peek
  holds and the run begins it there (a run of its own), t included.  So a
  run at k selects its first passing candidate of k and every passing
  candidate of k + 1 up to it; at a singleton state only the first passing
  candidate, as without a Kleene state.

So no two runs share (state, members): there is nothing to merge.

The runs advance one event per round, all at once, as records: the singleton
states' events (``pos``), the state, first / last event, partition, and the
Kleene members as a parent-pointer chain (:class:`_Members`: a take appends
one node, shared by every run forked after it), made a CSR list only for the
runs whose proceed edge is tested and for the accepted runs.  A run that
reaches F is a match; with the Kleene state last, every run at it whose
proceed edge holds is one too (section 8).  A conjunct on the list and a
later state's variable is tested on that state's begin edge, over the list
made for each (run, candidate) pair tested there.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ExplosionError
from ..kernels.selection import contiguous_next, next_ranges
from ..pattern import expr as E
from ..plan.logical import prev_var
from ..plan.operators import list_edge_kind
from .buffer import Buffer, empty_buffer, offsets
from .lists import list_mask
from .next_match import first_passing


class _Members:
    """Kleene members of every run as a forest: node j holds event ``pos[j]``, its previous member
    ``parent[j]`` (-1: the first), so a take appends one node and forks share their prefix."""

    def __init__(self):
        self.n = 0
        self._pos = np.empty(1024, np.int64)
        self._parent = np.empty(1024, np.int64)

    @property
    def pos(self) -> np.ndarray:
        return self._pos[:self.n]

    @property
    def parent(self) -> np.ndarray:
        return self._parent[:self.n]

    def append(self, pos: np.ndarray, parent: np.ndarray) -> np.ndarray:
        base, self.n = self.n, self.n + len(pos)
        if self.n > len(self._pos):  # capacity doubles: a round's takes cost their own size, amortised
            cap = max(self.n, 2 * len(self._pos))
            self._pos = np.concatenate([self._pos[:base], np.empty(cap - base, np.int64)])
            self._parent = np.concatenate([self._parent[:base], np.empty(cap - base, np.int64)])
        self._pos[base:self.n] = pos
        self._parent[base:self.n] = parent
        return np.arange(base, self.n, dtype=np.int64)

    def lists(self, tail: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """CSR lists (offsets, positions in order) of the runs whose last member is ``tail`` (-1: none)."""
        off = np.zeros(len(tail) + 1, np.int64)
        np.cumsum(count, out=off[1:])
        lpos = np.empty(int(off[-1]), np.int64)
        cur, rows = tail.copy(), np.flatnonzero(count > 0)
        depth = 0
        while len(rows):  # member count - 1 - depth of each row, walking back from its last member
            lpos[off[rows] + count[rows] - 1 - depth] = self.pos[cur[rows]]
            cur[rows] = self.parent[cur[rows]]
            depth += 1
            rows = rows[count[rows] > depth]
        return off, lpos


@dataclasses.dataclass
class _Runs:
    """Live runs as records, one array per field (see the module docstring)."""

    pos: np.ndarray    # (m, S) the singleton states' events, -1 unset (the Kleene column too)
    st: np.ndarray     # the state the run is at
    first: np.ndarray
    last: np.ndarray
    g: np.ndarray
    count: np.ndarray  # Kleene members
    tail: np.ndarray   # last Kleene member's node (-1: none)
    pok: np.ndarray    # bool: at the Kleene state with its proceed edge enabled

    def __len__(self) -> int:
        return len(self.st)

    def take(self, idx: np.ndarray) -> "_Runs":
        return _Runs(*(getattr(self, f.name)[idx] for f in dataclasses.fields(self)))

    @staticmethod
    def concat(parts: list) -> "_Runs":
        return _Runs(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(_Runs)))


def run(node, state, execute, succ: np.ndarray | None) -> Buffer:
    """The accepted runs of ``node`` (with a Kleene state) as match records sorted by (partition, end);
    ``succ``: under contiguity, the event each position must be followed by
    (:func:`jitcep.execute.nfa._successors`), None under skip-till-next-match."""
    table, options = state.table, state.options
    strict_ts = options.order == "strict_ts"
    S = len(node.states)
    K = node.closure
    k = [s.var for s in node.states].index(K.var)
    leaves = [execute(s) for s in node.states]
    slots = []
    for leaf in leaves if succ is not None else ():
        slot = np.full(table.n, -1, dtype=np.int64)  # each candidate's partition, -1: not a candidate
        slot[leaf.start] = leaf.partitions()
        slots.append(slot)
    members = _Members()
    ctx = _Context(node, state, k, members)
    matches: list[_Runs] = []
    n_matches = 0

    def advance(runs: _Runs, s: int, e: np.ndarray):
        nonlocal n_matches
        live, done = ctx.consume(runs, s, e)
        if len(done):
            matches.append(done)
            n_matches += len(done)
            if n_matches > options.max_matches:
                raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                                     f"or narrow the pattern")
        return live

    # every event may start a run at the first state, or past an empty Kleene state whose proceed edge holds
    # (the proceed edge is read only with a candidate at state 1: list conjuncts gather from a non-empty table)
    starts = [0, 1] if k == 0 and S > 1 and len(leaves[1].start) and ctx.proceeds(ctx.empty(1))[0] else [0]
    runs = _Runs.concat([_start(ctx, leaves[s], s, advance) for s in starts])
    while len(runs):
        state.memory.check(runs.pos.nbytes * 2, "the NFA^b runs", members.pos, members.parent)
        nxt = []
        for s, at in ((s, np.flatnonzero(runs.st == s)) for s in range(S)):
            if not len(at):
                continue
            sub = runs.take(at)
            proceeding = np.flatnonzero(sub.pok) if s == k and s + 1 < S else at[:0]
            if node.strategy == "skip_till_next_match":
                # the run takes / begins its first candidate passing the edge at s and ignores what
                # comes before; at k it also begins k + 1 with every candidate up to that take (peek)
                e = _first_passing(ctx, sub, s, leaves[s], strict_ts)
                if len(proceeding):
                    nxt.append(_begin_each(ctx, sub.take(proceeding), e[proceeding], leaves[s + 1], strict_ts,
                                           advance))
            else:
                # the run selects its next event at s, and at k also at k + 1 once its proceed edge holds
                e = contiguous_next(sub.last, sub.first, sub.g, succ, slots[s], table.ts, state.wt, state.W,
                                    strict_ts)
                if len(proceeding):
                    p = sub.take(proceeding)
                    f = contiguous_next(p.last, p.first, p.g, succ, slots[s + 1], table.ts, state.wt, state.W,
                                        strict_ts)
                    ok = np.flatnonzero(f >= 0)
                    nxt.append(advance(p.take(ok), s + 1, f[ok]))
            ok = np.flatnonzero(e >= 0)
            nxt.append(advance(sub.take(ok), s, e[ok]))
        runs = _Runs.concat(nxt) if nxt else ctx.empty(0)
    return _matches(node, state, ctx, matches)


def _first_passing(ctx, runs: _Runs, s: int, leaf: Buffer, strict_ts: bool) -> np.ndarray:
    """Each run's first candidate of state s passing its begin / take edge (-1: none), skip-till-next-match.

    :func:`jitcep.kernels.selection.next_ranges` gives each run its candidates (partition, window, after
    its last event); the edge is tested on chunks of (run, candidate) pairs doubling per round, as for
    singleton states (:func:`jitcep.execute.next_match.first_passing`)."""
    state, cand = ctx.state, leaf.start
    lo, hi = next_ranges(runs.last, runs.first, runs.g, (cand, leaf.goff), state.table.ts, state.wt, state.W,
                         strict_ts)
    active = np.flatnonzero(lo < hi)
    if s == ctx.k and ctx.K.max is not None:
        active = active[runs.count[active] < ctx.K.max]  # a full list cannot take: the run only proceeds
    if not ctx.tests(s):
        return first_passing(cand, lo, hi, active, None)
    return first_passing(cand, lo, hi, active, lambda rr, ev: ctx.edge(runs, rr, s, ev))


def _begin_each(ctx, runs: _Runs, until: np.ndarray, leaf: Buffer, strict_ts: bool, advance) -> _Runs:
    """Runs at the Kleene state k with their proceed edge enabled begin state k + 1 with each of its
    candidates up to ``until`` (the run's next take; -1: none, up to the window's end).

    Until it takes, the run ignores every other event, so at each event that k + 1 can select the
    proceed edge's peek holds (section 8): every such candidate begins its own run."""
    state, cand = ctx.state, leaf.start
    n = state.table.n
    lo, hi = next_ranges(runs.last, runs.first, runs.g, (cand, leaf.goff), state.table.ts, state.wt, state.W,
                         strict_ts)
    # a candidate's key (partition, position) is ascending over the leaf: a binary search per run
    key = np.repeat(np.arange(len(leaf.goff) - 1), np.diff(leaf.goff)) * n + cand
    cut = np.searchsorted(key, runs.g * n + until, side="right")
    hi = np.where(until >= 0, np.minimum(hi, cut), hi)
    take = np.maximum(hi - lo, 0)
    state.memory.check(24 * int(take.sum()), "the NFA^b runs' proceed candidates", runs.pos)
    rr = np.repeat(np.arange(len(runs)), take)
    idx = np.repeat(lo, take) + np.arange(len(rr)) - np.repeat(np.cumsum(take) - take, take)
    ok = np.flatnonzero(ctx.edge(runs, rr, ctx.k + 1, cand[idx]))
    return advance(runs.take(rr[ok]), ctx.k + 1, cand[idx[ok]])


def _start(ctx, leaf: Buffer, s: int, advance) -> "_Runs":
    """Runs begun at state s by every candidate of its leaf (an empty run selects it)."""
    runs = ctx.empty(len(leaf.start))
    runs.g = leaf.partitions()
    return advance(runs, s, leaf.start)


class _Context:
    """The edges of one NfaRuns node over the shared members (see the module docstring)."""

    def __init__(self, node, state, k: int, members: _Members):
        self.node, self.state, self.k, self.members = node, state, k, members
        self.K = node.closure
        self.S = len(node.states)
        self.names = [s.var for s in node.states]

    def empty(self, m: int) -> _Runs:
        neg = np.full(m, -1, np.int64)
        return _Runs(np.full((m, self.S), -1, np.int64), np.zeros(m, np.int64), neg, neg.copy(),
                     np.zeros(m, np.int64), np.zeros(m, np.int64), neg.copy(), np.zeros(m, np.bool_))

    def consume(self, runs: _Runs, s: int, e: np.ndarray) -> tuple[_Runs, _Runs]:
        """The begin / take edge at state s for events ``e`` (candidates each run may select there: its
        partition, window and order checked): the runs that continue and the accepted ones."""
        k, K = self.k, self.K
        ok = np.ones(len(e), np.bool_)
        if s == k and K.max is not None:
            ok &= runs.count < K.max
        ok[ok] = self.edge(runs, np.flatnonzero(ok), s, e[ok])
        idx = np.flatnonzero(ok)
        runs, e = runs.take(idx), e[idx]
        runs.pos = runs.pos.copy()
        if s == k:
            runs.tail = self.members.append(e, runs.tail)
            runs.count = runs.count + 1
            runs.st = np.full(len(e), k, np.int64)
        else:
            runs.pos[:, s] = e
            runs.st = np.full(len(e), s + 1, np.int64)
        runs.first = np.where(runs.first < 0, e, runs.first)
        runs.last = e
        at_k = np.flatnonzero(runs.st == k)
        runs.pok = np.zeros(len(e), np.bool_)
        runs.pok[at_k] = self.proceeds(runs.take(at_k))
        accepted = (runs.st == self.S) | (runs.pok & (k == self.S - 1))
        return runs.take(np.flatnonzero(runs.st < self.S)), runs.take(np.flatnonzero(accepted))

    def edge(self, runs: _Runs, rows: np.ndarray, s: int, e: np.ndarray) -> np.ndarray:
        """Whether run ``rows[i]`` with event ``e[i]`` at state s passes every conjunct of its begin / take
        edge (``b[i-1]``: the run's last member; at the first member such a conjunct holds, section 4)."""
        ok = np.ones(len(e), np.bool_)
        kv, prev = self.K.var, prev_var(self.K.var)
        first = self.node.first if s == self.k else ()
        for pred, on_first in [(p, False) for p in self.node.edges[s]] + [(p, True) for p in first]:
            vs = sorted(E.variables(pred))
            # b[i-1] holds at the first member (section 4); b[1] is fixed by the first take
            count = runs.count[rows]
            idx = np.flatnonzero(ok & (count > 0) if prev in vs else ok & (count == 0) if on_first else ok)
            if not len(idx):
                continue
            r = rows[idx]
            P = np.empty((len(vs), len(idx)), dtype=np.int64)
            for j, v in enumerate(vs):
                P[j] = e[idx] if v == kv or v == self.names[s] else (
                    self.members.pos[runs.tail[r]] if v == prev else runs.pos[r, self.names.index(v)])
            ok[idx] = self.state.mask(pred, P)
        if self.node.list_edges and self.node.list_edges[s] and ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = self._list_edge(runs, rows[idx], s, e[idx])
        return ok

    def _list_edge(self, runs: _Runs, rows: np.ndarray, s: int, e: np.ndarray) -> np.ndarray:
        """Whether run ``rows[i]`` with event ``e[i]`` at state s (after the Kleene state) passes the
        conjuncts of its begin edge that read the run's list (:func:`list_edge_kind`: every member, every two
        consecutive members, or the whole list once; an empty list passes the first two, section 4)."""
        kv, prev = self.K.var, prev_var(self.K.var)
        off, lpos = self.members.lists(runs.tail[rows], runs.count[rows])
        single = {v: e if j == s else runs.pos[rows, j] for j, v in enumerate(self.names) if j != self.k}
        by_kind = {kind: [p for p in self.node.list_edges[s] if list_edge_kind(p, kv) == kind]
                   for kind in ("member", "prev", "list")}
        ok = np.ones(len(e), np.bool_)
        if by_kind["list"]:
            ok &= list_mask(self.state, by_kind["list"], single, {kv: (off, lpos)})
        # one item per (run, member): the member and, for "prev", the one before it (none at the first)
        item = np.repeat(np.arange(len(e)), np.diff(off))
        at = np.arange(len(lpos))
        for kind in ("member", "prev"):
            sel = at if kind == "member" else at[at > off[item]]
            for pred in by_kind[kind] if len(sel) else ():
                P = np.stack([lpos[sel] if v == kv else lpos[sel - 1] if v == prev else single[v][item[sel]]
                              for v in sorted(E.variables(pred))])
                ok[item[sel][~self.state.mask(pred, P)]] = False
        return ok

    def tests(self, s: int) -> bool:
        """Does the begin / take edge at state s test any conjunct?"""
        return bool(self.node.edges[s]) or (s == self.k and bool(self.node.first)) \
            or bool(self.node.list_edges and self.node.list_edges[s])

    def proceeds(self, runs: _Runs) -> np.ndarray:
        """The proceed edge of the Kleene state: at least min members and the list conjuncts TRUE."""
        ok = runs.count >= self.K.min
        if not self.K.lists or not ok.any():
            return ok
        idx = np.flatnonzero(ok)
        sub = runs.take(idx)
        off, lpos = self.members.lists(sub.tail, sub.count)
        single = {v: sub.pos[:, s] for s, v in enumerate(self.names) if s != self.k}
        ok[idx] = list_mask(self.state, self.K.lists, single, {self.K.var: (off, lpos)})
        return ok


def _matches(node, state, ctx: _Context, matches: list) -> Buffer:
    """The accepted runs as match records sorted by (partition, end), the Kleene members as lists."""
    if not matches:
        buf = empty_buffer(node.vars, state.G)
        buf.lists = {node.closure.var: (np.zeros(1, np.int64), np.empty(0, np.int64))}
        return buf
    runs = _Runs.concat(matches)
    order = np.lexsort((runs.last, runs.g))
    runs = runs.take(order)
    off, lpos = ctx.members.lists(runs.tail, runs.count)
    cols = [s for s, v in enumerate(ctx.names) if s != ctx.k]
    start, end = runs.first, runs.last
    ts, wt = state.table.ts, state.wt
    tstart, tend = ts[start], ts[end]
    wstart, wend = (tstart, tend) if wt is ts else (wt[start], wt[end])
    return Buffer(node.vars, np.ascontiguousarray(runs.pos[:, cols]), start, end, offsets(runs.g, state.G),
                  tstart, tend, wstart, wend, {node.closure.var: (off, lpos)})
