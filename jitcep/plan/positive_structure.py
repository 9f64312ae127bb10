"""The positive structure: the tree of single variables the joins build (semantics sections 3 and 5).

The pattern's normal form (:func:`flatten`) without its negations and
closures (:func:`positive`) is what the positive plan joins; the negations
and closures then filter and extend its matches (sections 6, 7).  A match
binds at least one event, so a part of the pattern made only of closures
binds its first closure's first member as a single variable, its anchor
(:func:`anchor_vars`); a part where no closure can lend one is refused here
and planned as alternatives instead (:func:`needs_alternatives`).
"""

from __future__ import annotations

from ..errors import UnsupportedPatternError
from ..pattern.ast import Conj, Disj, EventVar, Kleene, Neg, Node, Pattern, Seq
from ..pattern.normalize import normalize
from ..pattern.printer import node_to_text
from ..pattern.structure import single_vars, walk_nodes
from .kleene_refs import anchor_var


def flatten(node: Node) -> Node:
    """The normal form (:func:`~jitcep.pattern.normalize.normalize`, semantics section 5), checked for
    what the compiled engine evaluates.

    Merging same-kind operators never changes matches; it makes every binary
    split of a run of items a valid join.
    """
    node = normalize(node)
    for n in walk_nodes(node):
        if isinstance(n, Neg) and not isinstance(n.var, EventVar):
            raise UnsupportedPatternError("a negation must be of a single variable")
        if isinstance(n, Kleene) and not isinstance(n.body, EventVar) and not (
                isinstance(n.body, (Seq, Conj)) and all(isinstance(i, EventVar) for i in n.body.items)):
            raise UnsupportedPatternError(f"a Kleene group is a SEQ or AND of plain variables: {node_to_text(n)!r}")
        if not isinstance(n, (Seq, Conj, Disj, Neg, Kleene, EventVar)):
            raise UnsupportedPatternError(f"unknown structure node {type(n).__name__}")
    return node


def array_var(k: Kleene) -> str | None:
    """The array variable of closure ``k``; None for a group."""
    return k.body.name if isinstance(k.body, EventVar) else None


def lead_var(k: Kleene) -> str:
    """The variable naming closure ``k`` (in :func:`anchor_vars`, ``kleene_order``): its array variable or
    its group's first variable."""
    return array_var(k) or k.body.items[0].name


def positive(body: Node) -> Node:
    """The flattened structure without its negations and closures (the tree the positive plan joins).

    Dropping an item of a SEQ / AND never changes the relation of the other
    items (SEQ orders every pair of items, AND none), so the positive matches
    are those of this structure; the negations then filter them (section 7).
    A SEQ / AND item made only of negations and closures that lend no
    anchor binds no single variable and is dropped too: its closures and
    negations keep their ranges from the full structure (:func:`~jitcep.plan.kleene_contexts.kleene_contexts`,
    section 7), and something outside it binds an event (:func:`anchor_vars`).
    """
    body = flatten(body)
    anchors = anchor_vars(body)

    def rec(n):
        if isinstance(n, Kleene) and lead_var(n) in anchors:
            if array_var(n) is None:  # a group's first iteration
                return flatten(type(n.body)(tuple(EventVar(anchors[v.name], v.types) for v in n.body.items)))
            return EventVar(anchors[n.body.name], n.body.types)
        if isinstance(n, (EventVar, Neg, Kleene)):
            return n
        items = tuple(r for r in (rec(c) for c in n.items if not isinstance(c, Neg)
                                  and not (isinstance(c, Kleene) and lead_var(c) not in anchors)) if r is not None)
        if not items:
            if isinstance(n, Disj):
                raise UnsupportedPatternError(f"the compiled engine needs a single variable in "
                                              f"{node_to_text(n)!r}: it joins single variables and collects "
                                              f"closures around them")
            return None
        return flatten(type(n)(items))
    if isinstance(body, Neg) or isinstance(body, Kleene) and lead_var(body) not in anchors:
        raise UnsupportedPatternError("the compiled engine needs a positive variable outside negations and "
                                      "Kleene closures")
    return rec(body)


def anchor_vars(body: Node) -> dict[str, str]:
    """Closure variable -> its anchor, for the closures whose first member the joins bind.

    A match binds at least one positive event (semantics section 3), so a
    part of the pattern made only of closures (the whole pattern, an OR
    branch) still has one list with a first member: the first closure with
    ``min >= 1`` there lends it as a single variable (its anchor) that the
    joins bind and its collection extends (:class:`~jitcep.plan.logical.Closure`); a Kleene group
    lends its first iteration, one anchor per variable (:class:`~jitcep.plan.logical.Group`), also
    when it is the whole part with ``min = 0`` (its empty list binds nothing).
    Innermost OR branches first.  Where nothing outside the part can bind an
    event (the whole pattern, a branch of a top-level OR), a part whose only
    closure may be empty lends it too: a match binding nothing is none, so its
    list holds at least its anchor (``T* v[]`` there means ``T+ v[]``).
    Otherwise (several closures that may all be empty, a branch of a nested OR
    that may match with nothing): refused (:func:`needs_alternatives`).
    """
    anchors: dict[str, str] = {}
    must_bind = (body, *(body.items if isinstance(body, Disj) else ()))

    def covered(n) -> bool:
        return bool(single_vars(n)) or any(isinstance(k, Kleene) and lead_var(k) in anchors for k in walk_nodes(n))

    def lend(n) -> None:
        ks = [k for k in walk_nodes(n) if isinstance(k, Kleene)]
        k = next((k for k in ks if k.min >= 1), None)
        if any(n is m for m in must_bind):  # nothing outside n binds an event: n binds at least one
            if k is None and isinstance(n, Kleene) and array_var(n) is None:
                k = n  # a group alone: its empty list would bind nothing, so it has a first iteration
            if k is None and len(ks) == 1 and array_var(ks[0]) is not None:
                k = ks[0]
        if k is None:
            raise UnsupportedPatternError(f"the compiled engine needs a single variable or a closure of at least "
                                          f"one member in {node_to_text(n)!r}")
        # a group lends its first iteration, one anchor per variable
        for v in ((k.body,) if array_var(k) else k.body.items):
            anchors[v.name] = anchor_var(v.name)

    def rec(n) -> None:
        for c in n.children():
            rec(c)
        if isinstance(n, Disj):
            for item in n.items:
                if not covered(item):
                    lend(item)
    rec(body)
    if not covered(body) and not isinstance(body, Neg):
        lend(body)
    return anchors


def needs_alternatives(pattern: Pattern) -> bool:
    """Whether :func:`~jitcep.plan.logical.logical_plan` refuses ``pattern`` for a part that may bind nothing
    (:func:`anchor_vars`) and nothing else structural: such a pattern is planned as alternatives that each bind an event
    (:func:`jitcep.plan.rules.disjuncts.alternatives_plan`)."""
    try:
        full = flatten(pattern.body)
    except UnsupportedPatternError:
        return False
    try:
        anchor_vars(full)
    except UnsupportedPatternError:
        return True
    return False
