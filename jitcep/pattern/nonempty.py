"""A pattern whose closures may bind nothing, as alternatives that each bind an event (semantics 3, 4, 5, 6).

A closure ``T* v[]`` (or ``T{0,m} v[]``, ``KL(..){0,m}``) is the OR of two
cases: at least one member (``T+ v[]``, ``{1,m}``), or ``v`` bound to the
empty list.  A match binds at least one positive event (section 3), so where
nothing but such closures can bind an event, one of them is not empty.  This
module writes a pattern as the union of alternatives that say which:

1. an OR with a branch that may bind nothing (:func:`may_bind_nothing`: only
   negations and closures that may be empty), or with a branch split below,
   becomes one alternative per branch (Kolchinsky & Schuster's DNF, section 4,
   for that OR alone; SEQ and AND distribute over it, :mod:`jitcep.pattern.dnf`):
   a branch that may bind nothing is then an item beside what the other items
   bind, or the whole alternative.  The other ORs stay as written;
2. an alternative that may bind nothing splits by its *first non-empty
   closure* k in pattern order: the closures before k are bound to the empty
   list, k takes at least one member, the ones after k are as written.  The
   case "all empty" binds nothing and is no match.

The alternatives are disjoint: two from different branches of one OR leave
different branches unbound (a list variable unbound is ``None``, bound empty
``()``, section 3), and two splits of one differ in which closure is the
first non-empty.  So their union holds each match of the pattern exactly once.
Each alternative keeps the WHERE conjuncts whose variables it binds (section
4: a conjunct on a branch not taken does not apply), and those over none.

A closure bound to the empty list is removed from the alternative's
structure (removing an item of a SEQ / AND changes no relation between the
others, section 5) and its conjuncts are read on the empty list (section 4):
one that quantifies over its members (``v[i].x``, ``v[i-1].x``, a plain
``v.x``) holds vacuously and is dropped; in the others ``count(v)`` and
``v.LEN`` are 0, ``sum / avg / min / max(v.x)``, ``v[k].x`` and
``v[v.LEN].x`` NULL (:func:`on_empty`).  A conjunct that then mentions no
variable is a constant of that alternative alone.

A negation keeps its range (section 7): its Before / After sets lose only
the events of the empty lists, which bind none, but removing them may leave
its AND with nothing positive, and the normal form then drops the AND
(``SEQ(A* a[], AND(B* b[], !C n))`` with b empty is ``SEQ(A+ a[], !C n)``).
Section 7 bounds an empty side of a negation with an AND ancestor by the
match's span, of one without by the window, so the alternative records the
negations that keep their AND ancestor (:attr:`Alternative.in_conj`); a
SEQ / AND left with negations alone gives them to its parent (they bind
nothing, so no order among them or with the parent's items changes).

>>> from jitcep.pattern.parser import parse
>>> from jitcep.pattern.printer import expr_to_text, node_to_text
>>> p = parse("PATTERN SEQ(B* b[], C* c[]) WHERE count(b) < 2 AND c[i].x > 0 WITHIN 5")
>>> [(node_to_text(a.pattern.body), a.empty) for a in nonempty_alternatives(p)]
[('SEQ(B+ b[], C* c[])', ()), ('C+ c[]', ('b',))]
>>> expr_to_text(nonempty_alternatives(p)[1].pattern.where)
'0 < 2 AND c[i].x > 0'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import product

from ..errors import UnsupportedPatternError
from . import expr as E
from .ast import Conj, Disj, Kleene, Neg, Node, Pattern, Seq
from .normalize import normalize
from .structure import disjunction_branches, negation_contexts, variables, walk_nodes


@dataclass(frozen=True)
class Alternative:
    """A ``pattern`` that binds an event in every match, with the list variables it binds to the empty
    list (``empty``: their closures are not in its structure) and the negated variables that have an
    AND ancestor in the whole pattern but not in ``pattern`` (``in_conj``, module docstring)."""

    pattern: Pattern
    empty: tuple[str, ...] = ()
    in_conj: tuple[str, ...] = ()


def on_empty(c: E.Expr, empty: frozenset[str]) -> E.Expr | None:
    """Conjunct ``c`` with the list variables ``empty`` bound to the empty list (section 4): None when
    it quantifies over the members of one of them (it holds vacuously), else ``c`` with their whole-list
    references replaced by their values (``count`` 0, the other aggregates and indexed members NULL)."""
    if any(isinstance(n, E.Attr) and n.var in empty and n.index in (None, "i", "i-1") for n in E.walk(c)):
        return None

    def value(x):
        if isinstance(x, E.Agg) and x.var in empty:
            return E.Lit(0 if x.func == "count" else None)
        if isinstance(x, E.Attr) and x.var in empty:  # v[k].x, v[v.LEN].x
            return E.Lit(None)
        return None
    return E.map_expr(c, value)


def may_bind_nothing(node: Node) -> bool:
    """Whether some match of ``node`` alone binds no event: it is a negation or a closure that may be
    empty, a SEQ / AND of such, or an OR with such a branch."""
    if isinstance(node, Kleene):
        return node.min == 0
    if isinstance(node, (Seq, Conj)):
        return all(may_bind_nothing(i) for i in node.items)
    if isinstance(node, Disj):
        return any(may_bind_nothing(i) for i in node.items)
    return isinstance(node, Neg)


def _split(node: Node) -> list[Node]:
    """``node``'s alternatives by step 1 of the module docstring (``[node]`` when no OR of it splits)."""
    if isinstance(node, Disj):
        branches = [_split(b) for b in node.items]
        if not any(may_bind_nothing(b) for b in node.items) and all(len(b) == 1 for b in branches):
            return [type(node)(tuple(b for (b,) in branches))]
        return [a for b in branches for a in b]
    if isinstance(node, (Seq, Conj)):
        return [type(node)(items) for items in product(*(_split(c) for c in node.items))]
    return [node]


def nonempty_alternatives(pattern: Pattern) -> list[Alternative]:
    """``pattern``'s alternatives (module docstring), in pattern order; raises UnsupportedPatternError
    for a conjunct over two branches of one OR (section 4)."""
    body = normalize(pattern.body)
    where = E.conjuncts(pattern.where)
    for c in where:
        vs = E.variables(c)
        for branches in disjunction_branches(body):
            if sum(1 for b in branches if vs & b) > 1:
                raise UnsupportedPatternError(f"predicate over variables of different OR branches: {sorted(vs)}")
    in_and = {v for v, n in negation_contexts(body).items() if n.in_conj}
    out = []
    for alt_body in map(normalize, _split(body)):
        mine = set(variables(alt_body))
        alt = dataclasses.replace(pattern, body=alt_body, where=E.conjoin(c for c in where if E.variables(c) <= mine))
        if not may_bind_nothing(alt_body):
            out.append(Alternative(alt))
            continue
        ks = [k for k in walk_nodes(alt_body) if isinstance(k, Kleene)]
        out += [_first_nonempty(alt, ks[:i], k, in_and) for i, k in enumerate(ks)]
    return out


def _first_nonempty(alt: Pattern, empties: list[Kleene], first: Kleene, in_and: set[str]) -> Alternative:
    """``alt`` with the closures ``empties`` bound to the empty list and ``first`` taking a member;
    ``in_and``: the negated variables with an AND ancestor in the whole pattern."""
    gone = frozenset(v for k in empties for v in variables(k.body))

    def rec(n: Node) -> tuple[Node, ...]:
        if any(n is k for k in empties):
            return ()
        if n is first:
            return (Kleene(n.body, 1, n.max),)
        if not isinstance(n, (Seq, Conj)):  # the ORs that may bind nothing were split (step 1)
            return (n,)
        items = tuple(r for i in n.items for r in rec(i))
        if all(isinstance(i, Neg) for i in items):  # negations alone: the parent's items (module docstring)
            return items
        return (type(n)(items),)
    (body,) = rec(alt.body)  # ``first`` binds: the root keeps a positive item
    body = normalize(body)
    lost = tuple(v for v, n in negation_contexts(body).items() if v in in_and and not n.in_conj)
    where = [c for c in (on_empty(c, gone) for c in E.conjuncts(alt.where)) if c is not None]
    return Alternative(dataclasses.replace(alt, body=body, where=E.conjoin(where)),
                       tuple(v for v in variables(alt.body) if v in gone), lost)
