"""Scan: a leaf buffer (ZStream 4.1), the events a variable may bind, in (key partition, position) order.

Candidates come from the shared type grouping (:class:`~jitcep.execute.tables.TableContext`:
only the leaf's types are read), the filter runs on those candidates only,
and one counting pass groups the survivors by key (leaves built from type
codes computed once; only what survives is sorted).  Negated variables
and closures read their events through the same :func:`leaf`.  A frozen
variable's leaf keeps only its active candidates (``freeze``, semantics
section 9: :func:`~jitcep.kernels.policies.freeze_active`).
"""

from __future__ import annotations

import numpy as np

from ..kernels import leaf_by_key, leaf_of_run
from ..kernels.grouping import record_fields
from ..kernels.policies import freeze_active
from .buffer import Buffer


def run(node, state, execute) -> Buffer:
    reduced = state.reduced.get(id(node))  # the survivors of a semi-join reduction over this scan
    if reduced is not None:
        return reduced
    buf = leaf(state, node.var, node.types, node.filter)
    return _active(state, buf) if node.frozen and len(buf) else buf


def _active(state, buf: Buffer) -> Buffer:
    """``buf`` (a frozen variable's leaf) without the candidates ``freeze`` leaves inactive (semantics
    section 9): the scan runs over all of them in position order, whatever their key (a candidate of
    another key still freezes this one), per ``partition_by`` stream (section 13)."""
    pos = buf.start
    order = np.argsort(pos, kind="stable")
    ctx = state.ctx
    if ctx.streams is not None:
        stream, S = ctx.streams.key_code[pos[order]], len(ctx.streams.offsets) - 1
    else:
        stream, S = np.zeros(len(pos), dtype=np.int64), 1
    keep = np.empty(len(pos), dtype=np.bool_)
    keep[order] = freeze_active(pos[order], stream, S, state.wt, state.W)
    return buf if keep.all() else buf.keep(np.flatnonzero(keep))


def leaf(state, var: str, types, filter_) -> Buffer:
    """The buffer of the events of ``types`` (None: any) passing ``filter_``, bound to ``var``."""
    shared = filter_ is None  # SEQ(A a, A b): one grouping serves both unfiltered leaves
    arrays = state.unfiltered.get(types) if shared else None
    if arrays is None:
        arrays = _leaf_arrays(state, types, filter_)
        if shared:
            state.unfiltered[types] = arrays
    cand, goff, t, w = arrays
    return Buffer((var,), cand.reshape(-1, 1), cand, cand, goff, t, t, w, w)


def _leaf_arrays(state, types, filter_) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~jitcep.kernels.grouping.leaf_by_key` of the leaf's candidates: positions, key offsets, times."""
    table, key, ctx = state.table, state.plan.key, state.ctx
    if types is None:  # every event: one group, in position order
        recs = ctx.all_events(key)
    else:
        wanted = set(types)
        codes = frozenset(i for i, t in enumerate(ctx.type_names) if t in wanted)  # the run's numbering
        recs, off, key_runs = ctx.type_groups(key, codes)
        if len(codes) == 1 and filter_ is None and key_runs is not None:  # grouped by key already
            return leaf_of_run(recs, key_runs[next(iter(codes))], None if state.wt is table.ts else state.wt,
                               state.threads)
        runs = [recs[off[i]:off[i + 1]] for i in sorted(codes)]
        if len(runs) == 1:
            recs = runs[0]
        else:  # ANY(T1, T2) (or no type present): merge the types' runs back into position order
            recs = np.concatenate(runs or [recs[:0]])
            recs = recs[np.argsort(record_fields(recs)[0])]
    keep = None
    if filter_ is not None and len(recs):
        keep = state.mask(filter_, record_fields(recs)[0][None, :])
    return leaf_by_key(recs, state.G, keep, None if state.wt is table.ts else state.wt, state.threads)
