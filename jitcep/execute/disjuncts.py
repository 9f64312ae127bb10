"""DisjunctUnion: a pattern in DNF (Kolchinsky & Schuster 4), each alternative's records in the pattern's
columns, merged by (partition, end); a variable of a branch not taken unbound (-1, semantics section 5).

Alternatives bind different variables, so they find different matches even over the same events (section
5): nothing is deduplicated.  The planner splits only patterns without closures
(:mod:`jitcep.plan.rules.disjuncts`), so records carry no lists.
"""

from __future__ import annotations

import numpy as np

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
    return Buffer(node.vars, pos[o], cat("start")[o], end[o], sum(b.goff for b in bufs), tstart, tend,
                  tstart if same else cat("wstart")[o], tend if same else cat("wend")[o])
