"""A large SEQ join's predicates tested in its loop (:mod:`jitcep.kernels.join_filtered`).

:func:`jitcep.execute.join._joined` asks :func:`in_loop` first: where it answers yes, the join's pairs
are :func:`pairs`' (the candidate pairs that pass every predicate, made by a function generated for
the join, :mod:`jitcep.codegen.join_where`) instead of candidates made, then read back and cut one
predicate at a time.  The same pairs in the same order, and the same cap on the candidates.
"""

from __future__ import annotations

from ..codegen.join_where import join_where
from ..kernels.join import driven_by_left
from ..kernels.join_filtered import seq_join_where
from ..plan.operators import SeqJoin

MIN_RIGHT = 1 << 12
"""Right records from which a join with predicates runs them in its loop.  Below, the join is cheap
either way and the generated function would be compiled for nothing (a second compiled function per
pattern with join predicates: ~0.9 s the first time for googleIncrease's, at load 15; on disk after,
perf/notes/opencep.md, session 20)."""


def in_loop(node, L, R, state) -> bool:
    """Does this join test its predicates in its loop?  A SEQ join with predicates and no reduction test
    (``extends``, made on the candidates before the predicates), at least :data:`MIN_RIGHT` right
    records, and one key partition or one thread (the pairs of several partitions are otherwise made on
    several threads)."""
    return (isinstance(node, SeqJoin) and bool(node.predicates) and not node.extends and len(R) >= MIN_RIGHT
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
