"""A large AND join's predicates tested in its loop (:mod:`jitcep.kernels.and_join_filtered`).

:func:`jitcep.execute.join._joined` asks :func:`in_loop` for an AND join: where it answers yes, the
join's pairs are :func:`pairs`' (the candidate pairs that pass every predicate, made by a function
generated for the join, :func:`jitcep.codegen.join_where.and_join_where`) instead of candidates made,
then read back and cut one predicate at a time (:func:`jitcep.execute.join._tested`).  The same pairs
in the same order, and the same cap on the candidates.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..codegen.join_where import and_join_rows, and_join_where
from ..kernels import and_join_filtered
from ..matches import MatchTable, name_order
from ..plan.operators import AndJoin


def in_loop(node, L, R, state) -> bool:
    """Does this AND join test its predicates in its loop?  One with predicates and neither orderings
    (``sequence``) nor a reduction test (``extends``), both tested on the candidates before the predicates;
    at least ``config.JOIN_WHERE_MIN_RIGHT`` records in its two inputs together (the merge is driven by
    both: below, the join is cheap either way and the generated function would be compiled for
    nothing); and one key partition or one thread (the pairs of several partitions are otherwise made
    on several threads)."""
    return (isinstance(node, AndJoin) and bool(node.predicates) and not (node.sequence or node.extends)
            and len(L) + len(R) >= config.JOIN_WHERE_MIN_RIGHT and (state.threads == 1 or len(L.goff) == 2))


def pairs(node, L, R, state, cap: int):
    """The join's pairs ``(li, ri, g)`` that pass its predicates, more than ``cap`` candidates an
    ExplosionError: those that :func:`jitcep.execute.join._tested` keeps of ``and_join``'s."""
    fn = and_join_where(state.preds, [state.pid[id(p)] for p in node.predicates], L.vars, R.vars)
    return and_join_filtered.and_join_where(fn, L.timed(), R.timed(), state.table.ts, state.wt, state.W,
                                            node.overlap, cap, state.bound)


def writes_rows(node, L, R, state) -> bool:
    """Does this AND join, taking the in-loop path (:func:`in_loop`), write the match table's rows itself
    (:func:`rows`)?  When it is the final join, no list variable is anywhere (its rows are single
    events) and its inputs hold one key partition (the rows then come by end from its merge alone)."""
    return (node is state.final and not (L.lists or R.lists or state.plan.list_vars) and len(L.goff) == 2
            and sorted(L.vars + R.vars) == sorted(state.plan.variables))


def rows(node, L, R, state, cap: int) -> MatchTable | None:
    """The match table of the join's passing pairs, written in canonical order by a function generated
    for the join (:func:`jitcep.kernels.and_join_filtered.and_join_rows`), more than ``cap`` candidates an
    ExplosionError; None where an input's records do not come by end (the pairs are then made and
    ordered as any join's)."""
    names = state.plan.variables
    fn = and_join_rows(state.preds, [state.pid[id(p)] for p in node.predicates], L.vars, R.vars, names)
    key = np.array(name_order(names), np.int64)
    out = and_join_filtered.and_join_rows(fn, L.timed(), R.timed(), state.table.ts, state.wt, state.W,
                                          node.overlap, cap, state.bound, len(names), key)
    if out is None:
        return None
    block, bound = out
    return MatchTable(block.shape[1], dict(zip(names, block)), block=block, bound=bound)
