"""Node buffers (ZStream 4.2): the records an operator produces, sorted by (key partition, end).

A record binds one event position per variable (-1: unbound, an OR branch
not taken) and, below a Kleene operator, a list of positions per array
variable.  Every buffer carries its records' start and end positions and
times, so the joins read times in record order instead of at scattered
positions (a cache miss per record at 10^7 events).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..kernels.alloc import empty
from ..kernels.list_columns import take_lists
from ..matches import lists_ascend


@dataclass
class Buffer:
    vars: tuple[str, ...]
    pos: np.ndarray      # (m, k) int64 event positions, -1 = unbound (OR branch not taken)
    start: np.ndarray    # (m,) first position of each record
    end: np.ndarray      # (m,) last position of each record
    goff: np.ndarray     # (G + 1,) partition offsets
    tstart: np.ndarray   # (m,) ts[start]
    tend: np.ndarray     # (m,) ts[end]
    wstart: np.ndarray   # (m,) wt[start] (the window measure; the tstart array itself for a time window)
    wend: np.ndarray     # (m,) wt[end]
    # array variable -> (offsets (m + 1), member positions): CSR lists, one per record
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # array variable -> (m,) bool, True where it is unbound (its OR branch not taken; its list is empty);
    # absent: bound in every record
    unbound: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.start)

    def as_tuple(self):
        return (self.pos, self.start, self.end, self.goff)

    def timed(self):
        """The 8-tuple the join kernels take (:mod:`jitcep.kernels.join`)."""
        return (self.pos, self.start, self.end, self.goff, self.tstart, self.tend, self.wstart, self.wend)

    def column(self, var: str) -> np.ndarray:
        return self.pos[:, self.vars.index(var)]

    def partitions(self) -> np.ndarray:
        """Each record's partition number."""
        G = len(self.goff) - 1
        if G == 1:  # written into the run's pool (jitcep.kernels.alloc), not a fresh array each run
            out = empty(int(self.goff[-1]), np.int64)
            out.fill(0)
            return out
        return np.repeat(np.arange(G), np.diff(self.goff))

    def take(self, idx: np.ndarray, goff: np.ndarray) -> "Buffer":
        """Records ``idx`` (in order) with partition offsets ``goff``."""
        # the kernels read "a leaf" (one event per record) and "the window measures time" from shared
        # arrays (start is end, wstart is tstart): keep them shared
        leaf, wstart = self.start is self.end, self.tstart is self.wstart
        start, tstart = self.start[idx], self.tstart[idx]
        end, tend = (start, tstart) if leaf else (self.end[idx], self.tend[idx])
        lists = {v: take_lists(off, lpos, idx) for v, (off, lpos) in self.lists.items()}
        return Buffer(self.vars, self.pos[idx], start, end, goff, tstart, tend,
                      tstart if wstart else self.wstart[idx], tend if wstart else self.wend[idx], lists,
                      {v: u[idx] for v, u in self.unbound.items()})

    def list_bounds(self, before, after) -> "Buffer":
        """This buffer with a column per array variable holding the member that bounds a range lying
        after ``before`` and before ``after`` (the variables a SEQ orders so): its last member if it is
        in ``before``, its first if in ``after``, else -1 (none; an empty list bounds nothing either); the
        lists themselves stay.  (Last and first by position: a Kleene group over AND lists its
        iterations in canonical order, not each variable's members in position order.)"""
        cols, names = [self.pos], self.vars
        for v, (off, lpos) in self.lists.items():
            first, last = list_extent(off, lpos)
            bound = last if v in before else first if v in after else np.full(len(self), -1, np.int64)
            cols.append(bound[:, None])
            names = names + (v,)
        return Buffer(names, np.concatenate(cols, axis=1), self.start, self.end, self.goff, self.tstart, self.tend,
                      self.wstart, self.wend, self.lists, self.unbound)

    def ascending_lists(self):
        """Each list's (offsets, members in position order): what ``outside_lists`` searches (an AND
        group lists its iterations in canonical order, not its variables' members in position order)."""
        out = []
        for off, lpos in self.lists.values():
            if lists_ascend(off, lpos):  # a closure's lists: in position order already
                out.append((off, lpos))
                continue
            owner = np.repeat(np.arange(len(off) - 1), np.diff(off))
            out.append((off, lpos[np.lexsort((lpos, owner))]))
        return out

    def keep(self, idx: np.ndarray) -> "Buffer":
        """Records ``idx`` (ascending: the partition order stays)."""
        return self.take(idx, offsets(self.partitions()[idx], len(self.goff) - 1))


def list_ends(off: np.ndarray, lpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) member of each CSR list (``off`` / ``lpos``), -1 for an empty list."""
    nonempty = off[1:] > off[:-1]
    if not len(lpos):
        none = np.full(len(off) - 1, -1, np.int64)
        return none, none.copy()
    first = np.where(nonempty, lpos[np.minimum(off[:-1], len(lpos) - 1)], -1)
    last = np.where(nonempty, lpos[np.maximum(off[1:] - 1, 0)], -1)
    return first, last


def list_extent(off: np.ndarray, lpos: np.ndarray, last_of: np.ndarray | None = None):
    """(smallest of ``lpos``, largest of ``last_of``, default ``lpos``) over each CSR list ``off``; -1 for
    an empty list."""
    if last_of is None and len(off) > 1 and lists_ascend(off, lpos):  # a closure's lists: first and last
        return list_ends(off, lpos)
    last_of = lpos if last_of is None else last_of
    n = len(off) - 1
    lo, hi = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    nonempty = np.flatnonzero(off[1:] > off[:-1])
    if len(nonempty):  # the empty lists between two starts hold nothing, so each segment is one list
        lo[nonempty] = np.minimum.reduceat(lpos, off[:-1][nonempty])
        hi[nonempty] = np.maximum.reduceat(last_of, off[:-1][nonempty])
    return lo, hi


def offsets(g: np.ndarray, G: int) -> np.ndarray:
    """Partition offsets (G + 1) of records whose partitions ``g`` are ascending."""
    if G == 1:  # every record's is 0: not read (a join's are zeros never written, jitcep.kernels.join)
        return np.array([0, len(g)], dtype=np.int64)
    goff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=G), out=goff[1:])
    return goff


def empty_buffer(vars_: tuple[str, ...], G: int, list_vars: tuple[str, ...] = ()) -> Buffer:
    """No records of ``vars_``, with an (empty) list of each of ``list_vars`` (those collected below)."""
    none = np.zeros(0, dtype=np.int64)
    return Buffer(vars_, np.zeros((0, len(vars_)), dtype=np.int64), none, none, np.zeros(G + 1, dtype=np.int64),
                  none, none, none, none, {v: (np.zeros(1, np.int64), none) for v in list_vars})
