"""Union: OR (ZStream 4.4.4), both inputs merged by (partition, end); the other side's variables unbound."""

from __future__ import annotations

import numpy as np

from .buffer import Buffer


def run(node, state, execute) -> Buffer:
    L, R = execute(node.left), execute(node.right)
    kl, kr = len(L.vars), len(R.vars)
    pos = np.full((len(L) + len(R), kl + kr), -1, dtype=np.int64)
    pos[:len(L), :kl] = L.pos
    pos[len(L):, kl:] = R.pos
    g = np.concatenate([L.partitions(), R.partitions()])
    end = np.concatenate([L.end, R.end])
    o = np.lexsort((end, g))
    same = L.wstart is L.tstart and R.wstart is R.tstart
    tstart, tend = np.concatenate([L.tstart, R.tstart])[o], np.concatenate([L.tend, R.tend])[o]
    return Buffer(L.vars + R.vars, pos[o], np.concatenate([L.start, R.start])[o], end[o], L.goff + R.goff,
                  tstart, tend, tstart if same else np.concatenate([L.wstart, R.wstart])[o],
                  tend if same else np.concatenate([L.wend, R.wend])[o])
