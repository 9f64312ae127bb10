"""A large AND join's predicates tested in its loop (:mod:`jitcep.kernels.and_join_filtered`).

:func:`jitcep.execute.join._joined` asks :func:`in_loop` for an AND join: where it answers yes, the
join's pairs are :func:`pairs`' (the candidate pairs that pass every predicate, made by a function
generated for the join, :func:`jitcep.codegen.join_where.and_join_where`) instead of candidates made,
then read back and cut one predicate at a time (:func:`jitcep.execute.join._tested`).  The same pairs
in the same order, and the same cap on the candidates.
"""

from __future__ import annotations

from .. import config
from ..codegen.join_where import and_join_where
from ..kernels import and_join_filtered
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
