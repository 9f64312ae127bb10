"""A large SEQ join's predicates tested in its loop (:mod:`jitcep.kernels.join_filtered`).

:func:`jitcep.execute.join._joined` asks :func:`in_loop` first: where it answers yes, the join's pairs
are :func:`pairs`' (the candidate pairs that pass every predicate, made by a function generated for
the join, :mod:`jitcep.codegen.join_where`) instead of candidates made, then read back and cut one
predicate at a time.  The same pairs in the same order, and the same cap on the candidates.
"""

from __future__ import annotations

from .. import config
from ..codegen.join_where import join_where
from ..kernels.join import driven_by_left
from ..kernels.join_filtered import seq_join_where
from ..plan.operators import SeqJoin

def in_loop(node, L, R, state) -> bool:
    """Does this join test its predicates in its loop?  A SEQ join with predicates and no reduction test
    (``extends``, made on the candidates before the predicates), at least ``config.JOIN_WHERE_MIN_RIGHT`` right
    records, and one key partition or one thread (the pairs of several partitions are otherwise made on
    several threads)."""
    return (isinstance(node, SeqJoin) and bool(node.predicates) and not node.extends and len(R) >= config.JOIN_WHERE_MIN_RIGHT
            and (state.threads == 1 or len(L.goff) == 2))


def pairs(node, L, R, state, cap: int):
    """The join's pairs ``(li, ri, g)`` that pass its predicates, more than ``cap`` candidates an
    ExplosionError: those that :func:`jitcep.execute.join._tested` keeps of ``seq_join``'s."""
    Lt, Rt = L.timed(), R.timed()
    by_left = driven_by_left(Lt, Rt, node.driver)  # the plan's driver, as seq_join takes it
    fn = join_where(state.preds, [state.pid[id(p)] for p in node.predicates], L.vars, R.vars, by_left)
    options = state.options
    distinct = node.overlap and options.order == "nondecreasing_ts"
    return seq_join_where(fn, Lt, Rt, state.table.ts, state.wt, state.W, options.order, distinct, cap,
                          state.bound, by_left)
