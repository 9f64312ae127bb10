"""DisjunctUnion: a pattern in DNF (Kolchinsky & Schuster 4), each alternative's records in the pattern's
columns, merged by (partition, end); a variable of a branch not taken unbound (-1, semantics section 5).

Alternatives bind different variables, so they find different matches even over the same events (section
5): nothing is deduplicated.  An array variable an alternative does not bind gets an empty list marked
unbound (``Buffer.unbound``), as a branch not taken leaves it (semantics section 3).
"""

from __future__ import annotations

import numpy as np

from ..kernels.kleene import gather_lists
from .buffer import Buffer


def run(node, state, execute) -> Buffer:
    bufs = [execute(alt) for alt in node.inputs]
    m, k = sum(len(b) for b in bufs), len(node.vars)
    pos = np.full((m, k), -1, dtype=np.int64)
    at = 0
    for b in bufs:
        cols = [node.vars.index(v) for v in b.vars]
        pos[at:at + len(b), cols] = b.pos
        at += len(b)

    def cat(field):
        return np.concatenate([getattr(b, field) for b in bufs])
    g, end = np.concatenate([b.partitions() for b in bufs]), cat("end")
    o = np.lexsort((end, g))
    tstart, tend = cat("tstart")[o], cat("tend")[o]
    same = all(b.wstart is b.tstart for b in bufs)  # a time window: the kernels test `wstart is tstart`
    lists, unbound = {}, {}
    for v in dict.fromkeys(v for b in bufs for v in b.lists):
        length = np.concatenate([np.diff(b.lists[v][0]) if v in b.lists else np.zeros(len(b), np.int64)
                                 for b in bufs])
        members = [b.lists[v][1] for b in bufs if v in b.lists]
        first = np.concatenate([b.lists[v][0][:-1] for b in bufs if v in b.lists])
        base = np.cumsum([0] + [len(x) for x in members[:-1]])  # each alternative's members, one after another
        start = np.zeros(m, np.int64)
        have = np.concatenate([np.full(len(b), v in b.lists) for b in bufs])
        start[have] = first + np.repeat(base, [len(b) for b in bufs if v in b.lists])
        lists[v] = gather_lists(np.concatenate(members), start[o], length[o])
        unbound[v] = np.concatenate([b.unbound.get(v, np.zeros(len(b), np.bool_)) if v in b.lists
                                     else np.ones(len(b), np.bool_) for b in bufs])[o]
    return Buffer(node.vars, pos[o], cat("start")[o], end[o], sum(b.goff for b in bufs), tstart, tend,
                  tstart if same else cat("wstart")[o], tend if same else cat("wend")[o], lists,
                  {v: u for v, u in unbound.items() if u.any()})
