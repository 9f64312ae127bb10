"""The state of NfaRuns with Kleene states (:mod:`jitcep.execute.nfa_kleene`, SASE+ 3.1-3.2): the live runs
as records, one array per field, and the Kleene members of every run as one forest whose forks share their
prefix; read by the rounds (:mod:`.nfa_kleene`) and the edges tested on them (:mod:`.nfa_kleene_edges`)."""

from __future__ import annotations

import dataclasses

import numpy as np


class Members:
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
class Runs:
    """Live runs as records, one array per field (:mod:`jitcep.execute.nfa_kleene`'s docstring says what each holds)."""

    pos: np.ndarray     # (m, S) the singleton states' events, -1 unset (and at Kleene states)
    count: np.ndarray   # (m, K) members per Kleene state
    tail: np.ndarray    # (m, K) last member's node (-1: none)
    alive: np.ndarray   # (m, S) bool: the states the buffer is at
    reach: np.ndarray   # the last state of its range (S: F, a match)
    nxt: np.ndarray     # (m, S) each state's first passing candidate after the cursor (UNKNOWN, -1: none)
    first: np.ndarray
    last: np.ndarray
    cursor: np.ndarray  # the last event the run has seen (selected or ignored)
    g: np.ndarray

    def __len__(self) -> int:
        return len(self.g)

    def take(self, idx: np.ndarray) -> "Runs":
        return Runs(*(getattr(self, f.name)[idx] for f in dataclasses.fields(self)))

    @staticmethod
    def concat(parts: list) -> "Runs":
        """The runs of ``parts`` in order; the one part with runs itself when the others have none (every
        part is a fresh buffer, read no more: a round often adds no forks, and the runs' copies, here and
        in :meth:`take`, were a fifth of skip-till-next-match's time at 10^6 events, perf/notes/kleene.md)."""
        full = [p for p in parts if len(p)]
        if len(full) == 1:
            return full[0]
        return Runs(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(Runs)))
