"""Structure analysis of a pattern body, written once for every engine and the planner.

The walks both engines need over a normalised body (docs/semantics.md
section 5): its variables, which of them are positive, the lowest operator
covering a set of variables, the OR branches (a conjunct may not span two,
section 4), and each negation's context (section 7): what the SEQ structure
orders before and after it and whether it has an AND ancestor.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._memo import PerObject, PerObjectAndKey
from .ast import Conj, Disj, EventVar, Kleene, Neg, Node, Seq


def walk_nodes(node: Node):
    """Every structure node, pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children()))


def variables(node: Node) -> tuple[str, ...]:
    """Every variable of ``node`` (negated and Kleene ones too), in pattern order."""
    return tuple(n.name for n in walk_nodes(node) if isinstance(n, EventVar))


def vars_of(node: Node) -> frozenset[str]:
    return frozenset(variables(node))


def bound_vars(node: Node) -> tuple[str, ...]:
    """The variables of ``node`` a match binds: all but the negated ones (Kleene variables included)."""
    if isinstance(node, EventVar):
        return (node.name,)
    if isinstance(node, Neg):
        return ()
    return tuple(v for c in node.children() for v in bound_vars(c))


def single_vars(node: Node) -> tuple[str, ...]:
    """The positive single-event variables of ``node``: not negated, not inside a Kleene closure."""
    if isinstance(node, EventVar):
        return (node.name,)
    if isinstance(node, (Neg, Kleene)):
        return ()
    return tuple(v for c in node.children() for v in single_vars(c))


def lca(body: Node, vs: frozenset[str]) -> Node:
    """The lowest structure node whose variables include ``vs``."""
    node = body
    while not isinstance(node, EventVar):
        for c in node.children():
            if vs <= vars_of(c):
                node = c
                break
        else:
            return node
    return node


_RELATIONS = PerObjectAndKey(size=256)  # body -> {(x, y): relation}


def relation(body: Node, x: str, y: str) -> str:
    """How the structure relates variables x and y: "before" (x's item first in their lowest common
    SEQ), "after", "and" (their lowest common operator an AND) or "or".

    Kept per body (bodies are immutable): the planner asks for every pair of a pattern's variables
    many times per run, and each answer walks the body (a third of planning a SEQ of 6)."""
    return _RELATIONS(body, (x, y), lambda: _relation(body, x, y))


def relations(body: Node, xs, ys) -> dict[tuple[str, str], str]:
    """:func:`relation` of every pair (x in ``xs``, y in ``ys``), by (x, y), the kept answers looked up once (a
    join of a SEQ of 24 asks for up to 23 pairs, a first plan for ~280)."""
    known = _RELATIONS.kept(body)
    out = {}
    for x in xs:
        for y in ys:
            got = known.get((x, y))
            if got is None:
                got = _RELATIONS.put(body, (x, y), _relation(body, x, y))
            out[(x, y)] = got
    return out


def _relation(body: Node, x: str, y: str) -> str:
    node = lca(body, frozenset((x, y)))
    if isinstance(node, Disj):
        return "or"
    if isinstance(node, Conj):
        return "and"
    ix = next(i for i, it in enumerate(node.items) if x in vars_of(it))
    iy = next(i for i, it in enumerate(node.items) if y in vars_of(it))
    return "before" if ix < iy else "after"


# body -> its OR nodes: the join rule asks splits_or of every join it builds, and most bodies hold none
_ORS = PerObject(lambda body: tuple(n for n in walk_nodes(body) if isinstance(n, Disj)), size=256)


def splits_or(body: Node, vs: frozenset[str]) -> bool:
    """Does the variable set ``vs`` hold part of an OR together with variables outside that part?

    A set may meet an OR inside one of its branches, or as whole branches of
    it; it may reach outside the OR only holding all of it (an OR is one
    union of its items: its branches are never joined apart).
    """
    for o in _ORS(body):
        inside = vs & vars_of(o)
        if not inside or inside == vars_of(o) or any(vs <= vars_of(item) for item in o.items):
            continue
        whole = all(vars_of(item) <= vs or not vars_of(item) & vs for item in o.items)
        if not whole or not vs <= vars_of(o):
            return True
    return False


def disjunction_branches(body: Node) -> list[list[frozenset[str]]]:
    """For each OR of ``body``: the variables of each of its branches."""
    return [[vars_of(b) for b in n.items] for n in walk_nodes(body) if isinstance(n, Disj)]


@dataclass(frozen=True)
class NegationContext:
    """Where a negation stands (section 7).

    ``before`` / ``after``: the bound variables the SEQ structure orders
    before / after it (its range lies between the last bound one of
    ``before`` and the first bound one of ``after``); ``in_conj``: it has an
    AND ancestor; ``near_before`` / ``near_after``: the single variables of
    its nearest SEQ neighbours that bind one; ``top``: every ancestor is a SEQ.
    """

    var: EventVar
    before: tuple[str, ...]
    after: tuple[str, ...]
    in_conj: bool
    near_before: tuple[str, ...]
    near_after: tuple[str, ...]
    top: bool


def negation_contexts(body: Node) -> dict[str, NegationContext]:
    """The context of each negated variable of ``body``, in pattern order."""
    out: dict[str, NegationContext] = {}

    def rec(node, before, after, in_conj, top):
        if isinstance(node, Neg):
            near_b = next((single_vars(n) for n in reversed(before) if single_vars(n)), ())
            near_a = next((single_vars(n) for n in after if single_vars(n)), ())
            b = tuple(v for n in before for v in bound_vars(n))
            a = tuple(v for n in after for v in bound_vars(n))
            out[node.var.name] = NegationContext(node.var, b, a, in_conj, near_b, near_a, top)
            return
        if isinstance(node, Seq):
            for i, item in enumerate(node.items):
                rec(item, before + node.items[:i], node.items[i + 1:] + after, in_conj, top)
            return
        for c in node.children():
            rec(c, before, after, in_conj or isinstance(node, Conj), False)

    rec(body, (), (), False, True)
    return out
