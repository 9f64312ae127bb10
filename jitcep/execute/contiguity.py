"""Contiguity: the records whose ``contiguous`` groups occupy consecutive positions (docs/semantics.md 9).

A group constrains a match only when all its variables are bound (an OR
branch not taken leaves it unchecked, as the reference evaluator does).
Positions count inside the ``partition_by`` stream (section 13): two events
of a stream are consecutive there although other streams' rows lie between
them in the table.
"""

from __future__ import annotations

import numpy as np

from .buffer import Buffer


def run(node, state, execute) -> Buffer:
    buf = execute(node.input)
    if not len(buf):
        return buf
    ctx = state.ctx
    spos = ctx.stream_positions() if ctx.streams is not None else None
    ok = np.ones(len(buf), dtype=np.bool_)
    for group in node.groups:
        cols = [buf.column(v) for v in group]
        bound = np.logical_and.reduce([c >= 0 for c in cols])
        if spos is not None:
            cols = [spos[np.maximum(c, 0)] for c in cols]
        consecutive = np.logical_and.reduce([b == a + 1 for a, b in zip(cols, cols[1:])])
        ok &= ~bound | consecutive
    return buf if ok.all() else buf.keep(np.flatnonzero(ok))
