"""Run a physical plan over an event table: one executor per operator type, bottom-up.

Each executor is ``run(node, state, execute) -> Buffer``; it calls
``execute(child)`` for the inputs it needs (a join with an empty left input
never runs its right one).  ``execute`` records each operator's output
records and time in the run's :class:`~jitcep.execute.state.Profile` when one
is given (``explain(analyze=True)``).
"""

from __future__ import annotations

import numpy as np

from ..matches import MatchTable, canonical_table
from ..options import Options
from ..plan.operators import (AndJoin, Contiguity, DisjunctUnion, GroupCollect, KleeneCollect, ListFilter,
                              NegationFilter, NfaRuns, OutputPolicy, PhysicalPlan, Scan, SemiJoinReduce, SeqJoin, Union)
from . import (contiguity, disjuncts, group, join, kleene, list_filter, negation, nfa, output_policy, reduction, scan,
               union)
from .state import Profile, RunState
from .tables import TableContext

EXECUTORS = {
    Scan: scan.run,
    SeqJoin: join.run,
    AndJoin: join.run,
    Union: union.run,
    DisjunctUnion: disjuncts.run,
    SemiJoinReduce: reduction.run,
    NegationFilter: negation.run,
    KleeneCollect: kleene.run,
    ListFilter: list_filter.run,
    GroupCollect: group.run,
    Contiguity: contiguity.run,
    OutputPolicy: output_policy.run,
    NfaRuns: nfa.run,
}


def execute(plan: PhysicalPlan, ctx: TableContext, options: Options, profile: Profile | None = None,
            threads: int = 1) -> tuple[MatchTable, int]:
    """The matches of ``plan`` over ``ctx``'s table, in canonical order, the joins on up to ``threads``
    threads (the same matches for any number), and how many matches the pattern has before its output
    policy chooses among them (what docs/semantics.md section 12's ``max_matches`` counts)."""
    state = RunState(plan, ctx, options, threads)
    names, list_vars = plan.variables, plan.list_vars
    # a conjunct that mentions no variable applies to every match (section 4); a negative
    # window admits no match; either way the result still has every variable's column
    for c in plan.constants:
        if not state.mask(c, np.zeros((0, 1), np.int64))[0]:
            return MatchTable.from_bindings([], names, list_vars), 0
    if state.W < 0:
        return MatchTable.from_bindings([], names, list_vars), 0

    state.final, state.profiled = _final_join(plan.root), profile is not None
    buf = _run(plan.root, state, profile)
    if not isinstance(buf, MatchTable):  # else the final join's own, or a root closure's (execute.join, .kleene)
        buf = canonical_table(buf.pos, {v: buf.vars.index(v) for v in names}, {v: buf.lists[v] for v in list_vars},
                              {v: u for v, u in buf.unbound.items() if u.any()})
    return buf, buf.n if state.found is None else state.found



def _final_join(root):
    """The join whose pairs are the matches themselves (the plan's root, or the input of a reduction at
    the root, which passes its input's records through), else None."""
    node = root.input if isinstance(root, SemiJoinReduce) else root
    return node if isinstance(node, (SeqJoin, AndJoin)) else None


def _run(node, state: RunState, profile: Profile | None):
    """``node``'s buffer: its executor, given how to run its inputs.

    ``inputs`` is made afresh per call and refers to nothing that refers to
    it: a function that called itself through its own closure would keep the
    run's state (leaf arrays, the table) in a reference cycle, freed only by
    the cyclic garbage collector, so every run would fault in fresh pages.
    """
    def inputs(child):
        return _run(child, state, profile)

    go = EXECUTORS[type(node)]
    if profile is None:
        return go(node, state, inputs)
    return profile.timed(node, lambda: go(node, state, inputs))
