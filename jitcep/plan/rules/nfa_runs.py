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
reading ``b`` together with a variable after it goes on that variable's
begin edge, read over the run's list: member-wise for every member,
iterative for every two consecutive ones, or on the whole list.  A closure
with no single variable beside it (its anchor, which the joins would bind)
is a Kleene state like any other: the runs take its first member.  Several
closures are refused before any work.
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
    if len(logical.closures) > 1:
        # Not yet, for two reasons.  Every strategy: a run would carry a member count and chain per closure,
        # and the take edge of a later closure would test member-wise conjuncts over every pair of two closures'
        # members.  Skip-till-next-match also: a run at Kleene state j whose proceed chain reaches a later
        # state t selecting e (the peek, SASE+ step 6) ignores e at every state strictly between that cannot
        # select it (step 3), so one buffer lives at several states; the reference merges such runs by
        # (state, buffer), and a run left at a later state outlives the one at j once j takes.  A compiled
        # run would then be a buffer with the set of states it is alive at, not one state.
        raise UnsupportedPatternError(
            f"the compiled engine runs strategy={strategy!r} over at most one Kleene state; "
            f"{', '.join(c.var + '[]' for c in logical.closures)} (semantics section 8) not yet")
    K = logical.closures[0] if logical.closures else None
    if K is not None and K.each:
        raise UnsupportedPatternError(
            f"the compiled engine does not evaluate a conjunct reading a member of {K.var}[] and its whole list "
            f"under strategy={strategy!r} yet")
    anchor = K.anchor if K is not None else None  # the runs bind the closure's first member as a member
    names = [v for v in logical.variables if v != anchor]  # pattern order: the SEQ's
    leaves = {v: Scan(v, logical.variables[v], logical.filters[v]) for v in names}
    if K is not None:
        names.insert(sum(v in K.before for v in names), K.var)
        leaves[K.var] = Scan(K.var, K.types, K.filter)
    state_of = {v: s for s, v in enumerate(names)}
    edges: list[list[E.Expr]] = [[] for _ in names]
    list_edges: list[list[E.Expr]] = [[] for _ in names]
    for p in logical.joins:
        if anchor not in E.variables(p):  # those over the anchor are the closure's member-wise conjuncts
            edges[max(state_of[v] for v in E.variables(p))].append(p)
    first = ()
    if K is not None:
        k = state_of[K.var]

        def last(p):  # the state of p's last identifier (b[i-1]'s variable is no state)
            return max(state_of[v] for v in E.variables(p) if v in state_of)
        # SASE+ step 2: a conjunct on the list and a later variable is on that variable's begin edge, read
        # over the run's whole list (semantics section 8)
        for p in (*K.member, *K.prev, *K.lists):
            if last(p) > k:
                list_edges[last(p)].append(p)
        edges[k] += [p for p in (*K.member, *K.prev) if last(p) == k]
        own = [c for c in K.lists if last(c) == k]
        # b[1] is on the take edge (fixed by the first take), the rest of the list conjuncts on the proceed edge
        first = tuple(map_expr(c, lambda x: E.Attr(x.var, x.attr) if isinstance(x, E.Attr) and x.var == K.var
                               else None) for c in own if not reads_whole_list(c, K.var))
        K = dataclasses.replace(K, lists=tuple(c for c in own if reads_whole_list(c, K.var)))
    states = tuple(leaves[v] for v in names)
    stream = Scan("*", None) if strategy == "partition_contiguity" else None
    runs = NfaRuns(states, tuple(map(tuple, edges)), strategy, stream, K, first,
                   tuple(map(tuple, list_edges)) if K is not None else ())
    return dataclasses.replace(plan, root=runs, variables=runs.vars)


def reads_whole_list(c: E.Expr, kv: str) -> bool:
    """Does conjunct c read more of ``kv``'s list than its first member (an aggregate, ``kv[k]`` k >= 2,
    ``kv[kv.LEN]``): a proceed-edge conjunct (section 8)?"""
    return any(isinstance(n, E.Agg) and n.var == kv or isinstance(n, E.Attr) and n.var == kv
               and n.index not in (None, "i", "i-1", 1) for n in E.walk(c))
