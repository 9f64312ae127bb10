"""How a conjunct names a Kleene variable's members (semantics sections 4 and 6; SASE+ section 2).

A conjunct reads an array variable ``v`` member-wise (``v[i].x``, plain
``v.x``), iteratively (``v[i-1].x``, SASE+'s iterative predicates) or as a
whole list (aggregates, ``v[k]``, ``v[v.LEN]``).  The logical plan writes
each reading as a variable of its own (:func:`member_var`, :func:`prev_var`,
:func:`anchor_var`): names no pattern identifier can take, so the operators
and kernels that evaluate the conjunct bind them like any single variable;
:func:`display_expr` writes them back as pattern text.  A module of its own
because the planner, the rules and the executor all read these names, and the
logical plan (:mod:`jitcep.plan.logical`) only produces them.
"""

from __future__ import annotations

from ..pattern import expr as E
from ..pattern.expr import map_expr


def prev_var(kv: str) -> str:
    """The name an iterative conjunct's ``kv[i-1]`` reads as (not a pattern identifier: no clash)."""
    return f"{kv}[i-1]"


def member_var(kv: str) -> str:
    """The name a conjunct of :attr:`~jitcep.plan.logical.Closure.each` reads member ``kv[i]`` as (not a pattern
    identifier)."""
    return f"{kv}[i]"


def anchor_var(kv: str) -> str:
    """The name a closure's first member reads as when it anchors the closure (not a pattern identifier)."""
    return f"{kv}[1]"


def display_expr(e: E.Expr, kvs) -> E.Expr:
    """``e`` as pattern text writes it: the iterative reference ``prev_var(kv).x`` as ``kv[i-1].x`` (and
    ``member_var(kv).x`` as ``kv[i].x``) for each closure variable ``kv`` of ``kvs`` (a name, names, or
    None) (what explain prints and what keys a conjunct's selectivity)."""
    kvs = () if kvs is None else (kvs,) if isinstance(kvs, str) else tuple(kvs)
    if not kvs:
        return e
    refs = {**{prev_var(kv): (kv, "i-1") for kv in kvs}, **{member_var(kv): (kv, "i") for kv in kvs}}
    return map_expr(e, lambda x: E.Attr(refs[x.var][0], x.attr, refs[x.var][1])
                    if isinstance(x, E.Attr) and x.var in refs else None)


def kleene_ref_kind(e: E.Expr, kv: str) -> str:
    """How conjunct ``e`` reads Kleene variable ``kv``: "member", "list", "prev" or "mixed"."""
    kinds = set()
    for n in E.walk(e):
        if isinstance(n, E.Agg) and n.var == kv:
            kinds.add("list")
        elif isinstance(n, E.Attr) and n.var == kv:
            kinds.add({None: "member", "i": "member", "i-1": "prev"}.get(n.index, "list"))
    if "prev" in kinds:
        return "prev"
    return "mixed" if len(kinds) > 1 else kinds.pop()


def prev_ref(e: E.Expr, kv: str) -> E.Expr:
    """``e`` with ``kv[i-1].x`` as ``prev_var(kv).x`` and ``kv[i].x`` / plain ``kv.x`` as ``kv.x``."""
    return map_expr(e, lambda x: E.Attr(prev_var(kv) if x.index == "i-1" else kv, x.attr)
                    if isinstance(x, E.Attr) and x.var == kv else None)


def each_ref(e: E.Expr, kv: str) -> E.Expr:
    """``e`` with ``kv[i].x`` / plain ``kv.x`` as ``member_var(kv).x`` and ``kv[i-1].x`` as ``prev_var(kv).x``
    (the list references unchanged)."""
    names = {None: member_var(kv), "i": member_var(kv), "i-1": prev_var(kv)}
    return map_expr(e, lambda x: E.Attr(names[x.index], x.attr)
                    if isinstance(x, E.Attr) and x.var == kv and x.index in names else None)


def member_ref(e: E.Expr, kv: str) -> E.Expr:
    """``e`` with ``kv[i].x`` / plain ``kv.x`` as a single-event reference ``kv.x``."""
    return map_expr(e, lambda x: E.Attr(x.var, x.attr) if isinstance(x, E.Attr) and x.var == kv else None)
