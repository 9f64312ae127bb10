"""What the operators of one plan share while it runs: bound predicates, the window measure, caches.

One :class:`RunState` per (plan, table): the plan's conjuncts compiled into
its generated predicate function (:mod:`jitcep.codegen`) and bound to the
table's columns, the window as a measure and an inclusive bound
(docs/semantics.md section 2), the number of key partitions, the memory
budget, and the per-operator counters (:class:`Profile`).
"""

from __future__ import annotations

import time

import numpy as np

from ..budget import MemoryBudget
from ..codegen import PredicateSet
from ..codegen.predicates import ColumnSpec, KeptPredicateSets, column_specs
from ..events import window_span
from ..kernels.alloc import empty
from ..kernels.window import MAX_SPAN
from ..matches import MatchTable
from ..options import Options
from ..pattern import expr as E
from ..pattern.ast import CountWindow, Unbounded
from ..plan.operators import PhysicalPlan
from .tables import TableContext


class Profile:
    """Records out and seconds (children included) per operator of the plans that ran, and those plans."""

    def __init__(self):
        self.stats: dict[int, tuple[int, float]] = {}
        self.plans: list = []

    def timed(self, node, run):
        t0 = time.perf_counter()
        buf = run()
        # the final join returns the match table itself (jitcep.execute.join)
        self.stats[id(node)] = (buf.n if isinstance(buf, MatchTable) else len(buf), time.perf_counter() - t0)
        return buf


class RunState:
    def __init__(self, plan: PhysicalPlan, ctx: TableContext, options: Options, threads: int = 1):
        self.plan, self.ctx, self.options = plan, ctx, options
        self.threads = threads  # joins and predicates split their work over this many (jitcep/threads.py)
        table = self.table = ctx.table
        preds, used = plan.predicates_read
        self.pid = {id(p): i for i, p in enumerate(preds)}
        self.preds = _predicate_set(plan, preds, column_specs(table, used))
        self.bound = self.preds.bind(table) if preds else ()
        # window: wt is the measure, W the inclusive bound (docs/semantics.md section 2)
        window = plan.window
        if isinstance(window, CountWindow):
            # positions count inside the stream (semantics section 13); within one stream
            # the order of global positions is the stream's order, so only the measure changes
            wt = ctx.stream_positions() if ctx.streams is not None else np.arange(table.n, dtype=np.int64)
            self.wt, self.W = wt, int(window.n) - 1
        elif isinstance(window, Unbounded):
            self.wt, self.W = table.ts, MAX_SPAN  # no pair of int64 times is farther apart
        else:
            self.wt, self.W = table.ts, window_span(window, table)
        self.G = ctx.key_codes(plan.key)[1]
        self.unfiltered: dict[tuple[str, ...] | None, tuple] = {}  # leaf arrays by types (no filter)
        # a SemiJoinReduce's survivors by id(Scan), and their chain bounds (jitcep/execute/reduction.py);
        # also the leaves a final join read before leaving its match table to its joins (past a cap or at
        # an empty leaf, jitcep/execute/join.py), so the joins do not read them again
        self.reduced: dict[int, object] = {}
        self.reach = None
        # the join whose pairs are the matches themselves: it writes the match table in canonical order
        # (jitcep.execute.executor sets it)
        self.final = None
        self.profiled = False  # explain(analyze=True) records every operator's output (executor sets it)
        # the matches an output policy chose from (docs/semantics.md section 12 counts them; output_policy sets it)
        self.found: int | None = None
        self.memory = MemoryBudget(options.max_memory)

    def mask(self, pred: E.Expr, P: np.ndarray) -> np.ndarray:
        """Whether ``pred`` is TRUE for each column of ``P`` (its sorted variables x candidates)."""
        return self.preds.mask(self.pid[id(pred)], P, self.bound, self.threads)

    def mask_where_bound(self, pred: E.Expr, P: np.ndarray) -> np.ndarray:
        """:meth:`mask` over the columns of ``P`` whose variables are all bound, True elsewhere.

        A conjunct with an unbound variable (an OR branch not taken) does not
        apply (semantics section 4).
        """
        bound = (P >= 0).all(axis=0)
        if bound.all():
            return self.mask(pred, P)
        keep = np.ones(P.shape[1], dtype=np.bool_)
        if bound.any():
            keep[bound] = self.mask(pred, P[:, bound])
        return keep

    def pairs_pass(self, pos: np.ndarray, names, conds, rec: np.ndarray, extra: dict[str, np.ndarray]) -> np.ndarray:
        """Which records ``rec[i]`` (rows of ``pos``, whose columns bind the variables ``names``), each
        with the events ``extra[v][i]`` bound to the variables ``v`` of ``extra``, pass every conjunct
        (:meth:`conjuncts_pass`: each tested only on the candidates still passing)."""
        def rows(vs, idx):
            at = rec if idx is None else rec[idx]
            P = empty(len(vs) * len(at), np.int64).reshape(len(vs), len(at))  # the run's pool (kernels.alloc)
            for k, v in enumerate(vs):
                if v in extra:
                    P[k] = extra[v] if idx is None else extra[v][idx]
                else:
                    P[k] = pos[at, names.index(v)]
            return P

        return self.conjuncts_pass(conds, len(rec), rows)

    def conjuncts_pass(self, conds, n: int, rows) -> np.ndarray:
        """Which of ``n`` items pass every conjunct of ``conds``, each conjunct tested only on the items
        still passing (on all of them, with no index, while all pass).  ``rows(vs, idx)``: the positions
        bound to the variables ``vs`` (sorted) for the items ``idx`` (None: every item), a row per
        variable (:meth:`mask_where_bound`'s matrix)."""
        ok = np.ones(n, dtype=np.bool_)
        for k, c in enumerate(conds):
            vs = sorted(E.variables(c))
            if k and not ok.all():
                idx = np.flatnonzero(ok)
                if not len(idx):
                    break
                ok[idx] = self.mask_where_bound(c, rows(vs, idx))
            elif n:
                ok[:] = self.mask_where_bound(c, rows(vs, None))
        return ok


# a plan's predicate set kept per plan root and constants, both by identity (1 == 1.0 as values)
_PREDICATE_SETS = KeptPredicateSets()


def _predicate_set(plan: PhysicalPlan, preds: list, specs: dict[str, ColumnSpec]) -> PredicateSet:
    """The predicate set of ``preds`` (``plan.predicates()``: the same objects, in the same order, for
    the same root and constants) over columns ``specs``."""
    return _PREDICATE_SETS((plan.root, plan.constants), preds, specs)
