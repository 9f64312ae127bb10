"""The edges of NfaRuns with Kleene states (SASE+ 3.1-3.2; docs/semantics.md sections 4 and 8), tested on
runs as records (:mod:`jitcep.execute.nfa_kleene`): a state's begin / take edge (its conjuncts on the run's
singleton events, its last member and the new event, then the conjuncts reading lists), and a Kleene
state's proceed edge (at least min members, its conjuncts on the lists).  A run's lists are made (CSR)
from the shared member forest only for the conjuncts that read them, and a conjunct reading a closure
member-wise is tested on every member (every two consecutive ones with ``kv[i-1]``) of it.
"""

from __future__ import annotations

import numpy as np

from ..pattern import expr as E
from ..plan.kleene_refs import member_var, prev_var
from .lists import list_mask, member_combinations
from .nfa_kleene_runs import Members, Runs



class KleeneEdges:
    """The begin / take and proceed edges of one NfaRuns node over its runs' shared members."""

    def __init__(self, node, state, names: list[str], closures: dict, kv: list[str], k: list[int],
                 members: Members):
        # names: state -> variable; closures: Kleene variable -> its closure; kv: Kleene index -> variable;
        # k: state -> Kleene index (-1: a singleton state); members: the runs' member forest
        self.node, self.state, self.names, self.closures, self.kv, self.k = node, state, names, closures, kv, k
        self.members = members

    def edge(self, runs: Runs, rows: np.ndarray, s: int, e: np.ndarray) -> np.ndarray:
        """Whether run ``rows[i]`` with event ``e[i]`` at state s passes its begin / take edge (``b[i-1]``:
        the run's last member; at the first member such a conjunct holds, section 4)."""
        ok = np.ones(len(e), np.bool_)
        k = self.k[s]
        if k >= 0 and self.closures[self.kv[k]].max is not None:
            ok &= runs.count[rows, k] < self.closures[self.kv[k]].max
        prev = prev_var(self.names[s])
        for pred in self.node.edges[s]:
            vs = sorted(E.variables(pred))
            idx = np.flatnonzero(ok & (runs.count[rows, k] > 0) if prev in vs else ok)
            if not len(idx):
                continue
            r = rows[idx]
            P = np.empty((len(vs), len(idx)), dtype=np.int64)
            for j, v in enumerate(vs):
                P[j] = e[idx] if v == self.names[s] else (
                    self.members.pos[runs.tail[r, k]] if v == prev else runs.pos[r, self.names.index(v)])
            ok[idx] = self.state.mask(pred, P)
        if self.node.list_edges and self.node.list_edges[s] and ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = self._holds(runs, rows[idx], s, e[idx], self.node.list_edges[s])
        return ok

    def last_member(self, tail: np.ndarray) -> np.ndarray:
        """The event of member node ``tail`` (-1: none, the list is empty)."""
        out = np.full(len(tail), -1, np.int64)
        has = np.flatnonzero(tail >= 0)
        out[has] = self.members.pos[tail[has]]
        return out

    def proceeds(self, runs: Runs, rows: np.ndarray, s: int) -> np.ndarray:
        """The proceed edge of state s for runs ``rows``: a Kleene state with at least min members and its
        proceed-edge conjuncts TRUE on the lists (a singleton state has none)."""
        k = self.k[s]
        if k < 0:
            return np.zeros(len(rows), np.bool_)
        ok = runs.count[rows, k] >= self.closures[self.kv[k]].min
        if self.node.proceeds[s] and ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = self._holds(runs, rows[idx], s, None, self.node.proceeds[s])
        return ok

    def _holds(self, runs: Runs, rows: np.ndarray, s: int, e: np.ndarray | None, conds) -> np.ndarray:
        """Whether run ``rows[j]`` (with event ``e[j]`` at state s; None: its proceed edge) satisfies every
        conjunct of ``conds`` (:func:`~jitcep.plan.operators.nfa_form`), quantified as section 4 reads it:
        for every member (every two consecutive ones with ``kv[i-1]``) of each closure it reads member-wise,
        independently per closure; at a take edge, its own closure only on the new member (the others
        passed at their own takes); lists whole (at a take edge the own list with the new member)."""
        own = self.names[s] if e is not None and self.k[s] >= 0 else None
        read = set().union(*map(E.variables, conds))
        lists = {}
        for k, kv in enumerate(self.kv):
            if not {kv, member_var(kv), prev_var(kv)} & read:
                continue
            count = runs.count[rows, k]
            self.state.memory.check(8 * (int(count.sum()) + 2 * len(rows) + 1), f"the lists of {kv!r}", runs.pos,
                                    self.members.pos, self.members.parent, *lists.values())
            lists[kv] = self.members.lists(runs.tail[rows, k], count)
            if kv == own:
                off, lpos = lists[kv]
                lists[kv] = (off + np.arange(len(off)), np.insert(lpos, off[1:], e))
        ok = np.ones(len(rows), np.bool_)
        for c in conds:
            vs = E.variables(c)
            # every member (two consecutive ones with kv[i-1]) of each other closure read member-wise; at
            # i = 1, kv[i-1] holds vacuously; own: the new member
            constructs = [((kv,), int(prev_var(kv) in vs)) for kv in self.kv
                          if kv != own and {member_var(kv), prev_var(kv)} & vs]
            kvs = ", ".join(repr(ks[0]) for ks, _ in constructs)
            for item, single in member_combinations(constructs, lists, np.arange(len(rows)), lambda k: (
                    self.state.memory.check(8 * (2 * len(constructs) + 3) * k, f"the members of {kvs}", runs.pos,
                                            *lists.values()))):
                for j, v in enumerate(self.names):
                    if v in vs and v not in self.closures:
                        single[v] = e[item] if j == s else runs.pos[rows[item], j]
                if own is not None:
                    k = self.k[s]
                    single[member_var(own)] = e[item]
                    single[prev_var(own)] = self.last_member(runs.tail[rows[item], k])
                # a prev_var of -1 (the first member) leaves the conjunct unapplied: it holds (section 4)
                ok[item[~list_mask(self.state, (c,), single, lists, rows=item)]] = False
        return ok
