"""NfaRuns with a Kleene state under strict / partition contiguity (SASE+ 3.1-3.2; docs/semantics.md section 8).

A Kleene state k (``T+ b[]``, ``{n,m}``, min 0) has a take edge (allowed
while the run holds fewer than max members) and a proceed edge to k + 1
(allowed with at least min members and the list conjuncts true).  Under
contiguity a run ignores nothing of its stream (of its key partition), so at
its next event e it must select e at some state it can reach by proceed
edges: it *forks*, taking e at k and beginning e at k + 1 (the peek rule of
section 8 never drops a state that selects e, and a proceed that selects
nothing leaves a run that can neither select nor ignore e: it dies).  So
every run is created by a selection, and no two runs share (state, members):
there is nothing to merge.

The runs advance one event per round, all at once, as records: the singleton
states' events (``pos``), the state, first / last event, partition, and the
Kleene members as a parent-pointer chain (:class:`_Members`: a take appends
one node, shared by every run forked after it), made a CSR list only for the
runs whose proceed edge is tested and for the accepted runs.  A run that
reaches F is a match; with the Kleene state last, every run at it whose
proceed edge holds is one too (section 8).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ExplosionError
from ..kernels.selection import contiguous_next
from ..pattern import expr as E
from ..plan.logical import prev_var
from .buffer import Buffer, empty_buffer, offsets
from .lists import list_mask


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


def run(node, state, execute, succ: np.ndarray) -> Buffer:
    """The accepted runs of ``node`` (a Kleene state, contiguity) as match records sorted by (partition, end);
    ``succ``: the event each position must be followed by (:func:`jitcep.execute.nfa._successors`)."""
    table, options = state.table, state.options
    strict_ts = options.order == "strict_ts"
    S = len(node.states)
    K = node.closure
    k = [s.var for s in node.states].index(K.var)
    leaves = [execute(s) for s in node.states]
    slots = []
    for leaf in leaves:
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
            # at state s a run selects at s, and at k: also at k + 1 once its proceed edge holds
            for target, idx in ((s, at), (s + 1, at[runs.pok[at]] if s == k and s + 1 < S else at[:0])):
                if not len(idx):
                    continue
                sub = runs.take(idx)
                e = contiguous_next(sub.last, sub.first, sub.g, succ, slots[target], table.ts, state.wt,
                                    state.W, strict_ts)
                ok = np.flatnonzero(e >= 0)
                nxt.append(advance(sub.take(ok), target, e[ok]))
        runs = _Runs.concat(nxt) if nxt else ctx.empty(0)
    return _matches(node, state, ctx, matches)


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
        # semantics section 8: b[1] belongs to the take edge, so an empty list does not test it
        self.K_empty = dataclasses.replace(self.K, lists=tuple(c for c in self.K.lists if _whole(c, self.K.var)))

    def empty(self, m: int) -> _Runs:
        neg = np.full(m, -1, np.int64)
        return _Runs(np.full((m, self.S), -1, np.int64), np.zeros(m, np.int64), neg, neg.copy(),
                     np.zeros(m, np.int64), np.zeros(m, np.int64), neg.copy(), np.zeros(m, np.bool_))

    def consume(self, runs: _Runs, s: int, e: np.ndarray) -> tuple[_Runs, _Runs]:
        """The begin / take edge at state s for events ``e`` (already the runs' contiguous candidates):
        the runs that continue and the accepted ones."""
        k, K = self.k, self.K
        ok = np.ones(len(e), np.bool_)
        if s == k and K.max is not None:
            ok &= runs.count < K.max
        ok[ok] = self._edge(runs.take(np.flatnonzero(ok)), s, e[ok])
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

    def _edge(self, runs: _Runs, s: int, e: np.ndarray) -> np.ndarray:
        """Whether each run with event ``e[i]`` at state s passes every conjunct of its begin / take edge
        (``b[i-1]``: the run's last member; at the first member such a conjunct holds, section 4)."""
        ok = np.ones(len(e), np.bool_)
        kv, prev = self.K.var, prev_var(self.K.var)
        for pred in self.node.edges[s]:
            vs = sorted(E.variables(pred))
            idx = np.flatnonzero(ok & (runs.count > 0)) if prev in vs else np.flatnonzero(ok)
            if not len(idx):
                continue
            P = np.empty((len(vs), len(idx)), dtype=np.int64)
            for j, v in enumerate(vs):
                P[j] = e[idx] if v == kv or v == self.names[s] else (
                    self.members.pos[runs.tail[idx]] if v == prev else runs.pos[idx, self.names.index(v)])
            ok[idx] = self.state.mask(pred, P)
        return ok

    def proceeds(self, runs: _Runs) -> np.ndarray:
        """The proceed edge of the Kleene state: at least min members and the list conjuncts TRUE."""
        ok = runs.count >= self.K.min
        if not self.K.lists or not ok.any():
            return ok
        idx = np.flatnonzero(ok)
        sub = runs.take(idx)
        single = {v: sub.pos[:, s] for s, v in enumerate(self.names) if s != self.k}
        full = sub.count > 0
        res = np.ones(len(idx), np.bool_)
        for K, rows in ((self.K, np.flatnonzero(full)), (self.K_empty, np.flatnonzero(~full))):
            if len(rows) and K.lists:
                # the empty rows add no member: the full rows' lists are every member, in row order
                off, lpos = self.members.lists(sub.tail[rows], sub.count[rows])
                res[rows] = list_mask(self.state, K, {v: c[rows] for v, c in single.items()}, off, lpos)
        ok[idx] = res
        return ok


def _whole(c: E.Expr, kv: str) -> bool:
    """Does conjunct c read the whole list (an aggregate, ``v[k]`` k >= 2, ``v[v.LEN]``): the proceed edge?"""
    return any(isinstance(n, E.Agg) and n.var == kv or isinstance(n, E.Attr) and n.var == kv
               and n.index not in (None, "i", "i-1", 1, "1") for n in E.walk(c))


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
