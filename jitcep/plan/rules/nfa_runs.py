"""Rule: under a selection strategy other than skip-till-any-match, NFA^b runs replace the join tree.

SASE+ section 3.1 defines these strategies' matches as the accepted runs of
the pattern's NFA^b automaton (docs/semantics.md section 8); the pattern is
linear (:mod:`jitcep.pattern.combinations` refused the rest at compile): one
state per positive item, in SEQ order.  Each conjunct over several variables
goes on the begin edge of its last identifier (SASE+ 3.2 step 2): the state
of the latest of its variables; a single variable's conjuncts stay that
state's leaf filter; negations filter the accepted matches (the next rule,
:mod:`.negation_placement`, puts them over this operator).  Under partition
contiguity a run must take the next event of its key partition whatever its
type, so the operator also reads every event (its ``stream`` leaf).

Kleene states (take / proceed edges) are not compiled yet: a pattern with a
closure is refused here, before any work, and runs on the reference evaluator.
"""

from __future__ import annotations

import dataclasses

from ...errors import UnsupportedPatternError
from ...pattern import expr as E
from ..operators import NfaRuns, Scan


def build(plan, planning):
    strategy = planning.options.strategy
    if strategy == "skip_till_any_match":
        return plan
    logical = planning.logical
    if logical.closures:
        raise UnsupportedPatternError(
            f"the compiled engine runs strategy={strategy!r} over singleton states only; the Kleene state "
            f"{logical.closures[0].var}[] (take / proceed edges, semantics section 8) is not compiled yet")
    names = list(logical.variables)  # pattern order: the SEQ's
    state_of = {v: s for s, v in enumerate(names)}
    edges: list[list[E.Expr]] = [[] for _ in names]
    for p in logical.joins:
        edges[max(state_of[v] for v in E.variables(p))].append(p)
    states = tuple(Scan(v, logical.variables[v], logical.filters[v]) for v in names)
    stream = Scan("*", None) if strategy == "partition_contiguity" else None
    return dataclasses.replace(plan, root=NfaRuns(states, tuple(map(tuple, edges)), strategy, stream))
