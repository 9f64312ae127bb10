"""A pattern in disjunctive normal form: one OR-free pattern per alternative (Kolchinsky & Schuster 2018, 4).

Kolchinsky & Schuster, section 4 "nested patterns": a pattern whose OR is
nested under a SEQ / AND "is converted to DNF ... each conjunctive
sub-pattern is planned separately", the matches being the union of the
sub-patterns'.  An *alternative* chooses one branch of every OR; SEQ and AND
distribute over OR (``SEQ(A a, OR(B b, C c))`` is ``OR(SEQ(A a, B b), SEQ(A
a, C c))``), so the alternatives are the product of their items' alternatives
under SEQ / AND and the concatenation of the branches' under OR.

Each alternative is a whole :class:`~jitcep.pattern.ast.Pattern`: its
structure in normal form (docs/semantics.md section 5), the window, and the
WHERE conjuncts whose variables it binds or negates, plus those over no
variable (constants, ``[attr]``): a conjunct applies to a match only if every
variable it mentions is bound in it (section 4), and the variables of a branch
not taken are unbound (section 5), so a match of the pattern taking those
branches is a match of the alternative and back.  Two alternatives may find
the same events; they bind them to different variables or under different
branches, which section 5 counts as different matches, so the union keeps both.

>>> from jitcep.pattern.parser import parse
>>> from jitcep.pattern.printer import node_to_text
>>> p = parse("PATTERN SEQ(A a, OR(B b, C c), D d) WHERE a.x < b.x AND a.x < d.x WITHIN 5")
>>> count(p.body)
2
>>> [node_to_text(q.body) for q in alternatives(p)]
['SEQ(A a, B b, D d)', 'SEQ(A a, C c, D d)']
>>> [len(E.conjuncts(q.where)) for q in alternatives(p)]
[2, 1]
"""

from __future__ import annotations

import dataclasses
import math
from itertools import product

from . import expr as E
from .ast import Conj, Disj, Kleene, Neg, Node, Pattern, Seq
from .normalize import normalize
from .structure import variables


def count(node: Node) -> int:
    """The number of DNF alternatives of ``node``, without making them (it grows as a product)."""
    if isinstance(node, Disj):
        return sum(count(c) for c in node.items)
    if isinstance(node, (Seq, Conj)):
        return math.prod(count(c) for c in node.items)
    return 1  # a variable, a negation, a closure: Kleene bodies are kept whole (semantics 5)


def has_or(node: Node) -> bool:
    """Whether ``node`` holds an OR outside Kleene bodies (a pattern :func:`alternatives` would split)."""
    if isinstance(node, Disj):
        return True
    if isinstance(node, (Neg, Kleene)):
        return False
    return any(has_or(c) for c in node.children())


def _split(node: Node) -> list[Node]:
    if isinstance(node, Disj):
        return [a for c in node.items for a in _split(c)]
    if isinstance(node, (Seq, Conj)):
        return [type(node)(items) for items in product(*(_split(c) for c in node.items))]
    return [node]


def alternatives(pattern: Pattern) -> list[Pattern]:
    """``pattern``'s DNF alternatives in pattern order (the first branch of each OR first), each with its
    own WHERE (module docstring).  Callers bound :func:`count` first: the number is exponential in the
    ORs a SEQ / AND holds."""
    where = E.conjuncts(pattern.where)
    out = []
    for body in _split(normalize(pattern.body)):
        body = normalize(body)
        mine = set(variables(body))
        conds = [c for c in where if E.variables(c) <= mine]
        out.append(dataclasses.replace(pattern, body=body, where=E.conjoin(conds)))
    return out
