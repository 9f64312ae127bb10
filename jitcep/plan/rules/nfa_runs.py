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

A Kleene state ``T+ b[]`` (take / proceed edges), any number of them: its
leaf holds the member-wise filter.  Every conjunct is placed as the
reference evaluator places it (:mod:`jitcep.reference.nfa`): on the edge of
its last identifier, where ``b[i]``, ``b[i-1]``, plain ``b`` and ``b[1]``
belong to b's take edge and aggregates, ``b[k]`` (k >= 2) and ``b[b.LEN]`` to
its proceed edge.  One over single events only (the new event, earlier
singleton states, and at a take edge its own ``b[i-1]``: the run's last
member) is tested by the generated predicate function; the others read the
run's lists (:func:`~jitcep.plan.operators.nfa_form`).  A closure with no
single variable beside it (its anchor, which the joins would bind) is a
Kleene state like any other: the runs take its first member.
"""

from __future__ import annotations

import dataclasses

from ...pattern import expr as E
from ...pattern.ast import EventVar, Neg, Seq
from ...pattern.expr import map_expr
from ...pattern.normalize import normalize
from ..kleene_refs import member_var, prev_var
from ..operators import NfaRuns, Scan, nfa_form


def build(plan, planning):
    strategy = planning.options.strategy
    if strategy == "skip_till_any_match":
        return plan
    logical = planning.logical
    closures = logical.closures
    kvs = {K.var for K in closures}
    anchors = {K.anchor for K in closures if K.anchor is not None}  # the runs bind it as a member
    names = _state_order(logical.pattern)
    leaves = {v: Scan(v, logical.variables[v], logical.filters[v]) for v in names if v not in kvs}
    leaves.update({K.var: Scan(K.var, K.types, K.filter) for K in closures})
    state_of = {v: s for s, v in enumerate(names)}
    edges: list[list[E.Expr]] = [[] for _ in names]
    list_edges: list[list[E.Expr]] = [[] for _ in names]
    proceeds: list[list[E.Expr]] = [[] for _ in names]
    conjuncts = [p for p in logical.joins if not E.variables(p) & anchors]  # over the anchor: K.member's
    for K in closures:  # plain kv.x: member i, prev_var(kv).x: member i - 1, kv[k].x and aggregates: the list
        conjuncts += [nfa_form(c, kvs) for c in (*K.member, *K.prev, *K.cross, *K.lists, *K.each)]
    for c in conjuncts:
        s, proceed = _slot(c, state_of, kvs)
        if proceed:
            proceeds[s].append(c)
        elif _single_events(c, names[s], kvs):
            edges[s].append(map_expr(c, lambda x: E.Attr(names[s], x.attr) if isinstance(x, E.Attr)
                                     and x.var == member_var(names[s]) else None))
        else:
            list_edges[s].append(c)
    states = tuple(leaves[v] for v in names)
    stream = Scan("*", None) if strategy == "partition_contiguity" else None
    runs = NfaRuns(states, tuple(map(tuple, edges)), strategy, stream, closures,
                   tuple(map(tuple, list_edges)) if closures else (), tuple(map(tuple, proceeds)) if closures else ())
    return dataclasses.replace(plan, root=runs, variables=runs.vars)


def _state_order(pattern) -> list[str]:
    """The positive items of the linear pattern in SEQ order: one state each (semantics section 8)."""
    body = normalize(pattern.body)
    items = body.items if isinstance(body, Seq) else (body,)
    return [it.name if isinstance(it, EventVar) else it.body.name for it in items if not isinstance(it, Neg)]


def _slot(c: E.Expr, state_of: dict, kvs) -> tuple[int, bool]:
    """(state, on its proceed edge?) of conjunct ``c`` in :func:`nfa_form`: its last identifier's (SASE+
    3.2 step 2; a list read past ``b[1]`` is on b's proceed edge, semantics section 8)."""
    own = {member_var(kv): kv for kv in kvs} | {prev_var(kv): kv for kv in kvs}
    slot = (-1, False)
    for n in E.walk(c):
        if isinstance(n, E.Agg):
            slot = max(slot, (state_of[n.var], True))
        elif isinstance(n, E.Attr):
            v = own.get(n.var, n.var)
            slot = max(slot, (state_of[v], n.var in kvs and n.index != 1))
    return slot


def _single_events(c: E.Expr, var: str, kvs) -> bool:
    """Does ``c``, on the begin / take edge of ``var``'s state, read single events only: no list, and of a
    closure only ``var``'s own new member and previous member?"""
    for n in E.walk(c):
        if isinstance(n, E.Agg) or isinstance(n, E.Attr) and (
                n.var in kvs or n.var in {member_var(kv) for kv in kvs} - {member_var(var)}
                or n.var in {prev_var(kv) for kv in kvs} - {prev_var(var)}):
            return False
    return True
