"""The normal form of a pattern's structure (docs/semantics.md §5), shared by every engine.

SEQ, AND and OR are associative, so an operator nested directly in one of
the same kind is merged into it, and an operator of one item is that item
(``AND(P)`` is ``P``).  Both engines evaluate the normal form, so a rule
that looks at the structure — a negation's range (§7: "has an AND
ancestor"), where ``kleene="maximal"`` is allowed (§6.2), which patterns are
linear for the NFA^b strategies (§8) — reads the same tree whichever engine
applies it.  Kleene bodies are left as written: ``KL(SEQ(A a))`` is a group,
not the array variable ``A+ a[]`` (they differ under
``kleene_window="iteration"``, §2).

>>> from jitcep.pattern.parser import parse
>>> from jitcep.pattern.printer import node_to_text
>>> node_to_text(normalize(parse("PATTERN AND(SEQ(A a, SEQ(B b, C c))) WITHIN 5").body))
'SEQ(A a, B b, C c)'
"""

from __future__ import annotations

from .ast import Conj, Disj, Node, Seq


def normalize(node: Node) -> Node:
    """``node`` with same-kind operators merged and one-item operators unwrapped (§5)."""
    if not isinstance(node, (Seq, Conj, Disj)):
        return node
    items: list[Node] = []
    for c in node.items:
        c = normalize(c)
        if type(c) is type(node):
            items.extend(c.items)
        else:
            items.append(c)
    if len(items) == 1:
        return items[0]
    return type(node)(tuple(items))
