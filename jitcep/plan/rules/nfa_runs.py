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

A Kleene state ``T+ b[]`` (take / proceed edges): its leaf holds the
member-wise filter, its take edge the member-wise and iterative (``b[i-1]``)
conjuncts and, on the first take, those reading ``b[1]``; its proceed edge
the other list conjuncts (aggregates, ``b[k]``, ``b[b.LEN]``).  A conjunct
reading ``b`` together with a variable after it is refused before any work.
"""

from __future__ import annotations

import dataclasses

from ...errors import UnsupportedPatternError
from ...pattern import expr as E
from ..logical import map_expr
from ..operators import NfaRuns, Scan


def build(plan, planning):
    strategy = planning.options.strategy
    if strategy == "skip_till_any_match":
        return plan
    logical = planning.logical
    if len(logical.closures) > 1 or any(c.anchor is not None for c in logical.closures):
        # the runs hold one Kleene state beside singleton states; a closure lending its first member to
        # the joins (no single variable binds an event) has no singleton state to start a run
        raise UnsupportedPatternError(
            f"the compiled engine runs strategy={strategy!r} over one Kleene state beside singleton states; "
            f"{', '.join(c.var + '[]' for c in logical.closures)} (semantics section 8) not yet")
    K = logical.closures[0] if logical.closures else None
    if K is not None and K.each:
        raise UnsupportedPatternError(
            f"the compiled engine does not evaluate a conjunct reading a member of {K.var}[] and its whole list "
            f"under strategy={strategy!r} yet")
    names = list(logical.variables)  # pattern order: the SEQ's
    leaves = {v: Scan(v, logical.variables[v], logical.filters[v]) for v in names}
    if K is not None:
        names.insert(sum(v in K.before for v in names), K.var)
        leaves[K.var] = Scan(K.var, K.types, K.filter)
    state_of = {v: s for s, v in enumerate(names)}
    edges: list[list[E.Expr]] = [[] for _ in names]
    for p in logical.joins:
        edges[max(state_of[v] for v in E.variables(p))].append(p)
    if K is not None:
        for p in (*K.member, *K.prev, *K.lists):
            later = [v for v in E.variables(p) if v in state_of and state_of[v] > state_of[K.var]]
            if later:
                raise UnsupportedPatternError(
                    f"the compiled engine does not evaluate a conjunct on the Kleene state {K.var}[] and the "
                    f"later variable {later[0]!r} under strategy={strategy!r} yet")
        edges[state_of[K.var]] += [*K.member, *K.prev]
        # SASE+ step 2 as section 8 attaches it: b[1] is on the take edge (fixed by the first take), the
        # rest of the list conjuncts on the proceed edge
        first = tuple(map_expr(c, lambda x: E.Attr(x.var, x.attr) if isinstance(x, E.Attr) and x.var == K.var
                               else None) for c in K.lists if not reads_whole_list(c, K.var))
        K = dataclasses.replace(K, lists=tuple(c for c in K.lists if reads_whole_list(c, K.var)))
    states = tuple(leaves[v] for v in names)
    stream = Scan("*", None) if strategy == "partition_contiguity" else None
    return dataclasses.replace(plan, root=NfaRuns(states, tuple(map(tuple, edges)), strategy, stream, K,
                                                  first if K is not None else ()))


def reads_whole_list(c: E.Expr, kv: str) -> bool:
    """Does conjunct c read more of ``kv``'s list than its first member (an aggregate, ``kv[k]`` k >= 2,
    ``kv[kv.LEN]``): a proceed-edge conjunct (section 8)?"""
    return any(isinstance(n, E.Agg) and n.var == kv or isinstance(n, E.Attr) and n.var == kv
               and n.index not in (None, "i", "i-1", 1) for n in E.walk(c))
