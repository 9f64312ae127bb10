"""The pattern AST: immutable nodes for the structure, window and RETURN of a pattern.

Structure nodes (SASE section 2, SASE+ section 2, ZStream section 3):

- ``EventVar(name, types)``: binds one event whose type is in ``types``
  (``None`` = any type; several types = SASE's ``ANY(T1, T2) v``).
- ``Neg(var)``: ``!T v`` / ``~T v``: non-occurrence, only as an element of a
  ``Seq`` or ``Conj`` (DESIGN.md section 2 defines where).
- ``Kleene(body, min, max)``: ``T+ v[]`` (1, None), ``T* v[]`` (0, None),
  ``T{n} v[]`` (n, n), ``T{n,m} v[]`` (n, m), ``KL(...)``; ``body`` is an
  ``EventVar`` (an array variable) or a group ``Seq`` / ``Conj``.
- ``Seq``, ``Conj`` (AND), ``Disj`` (OR): n-ary operators that nest.

A ``Pattern`` is a structure plus WHERE (an :mod:`jitcep.pattern.expr`
tree), a window and an optional RETURN list.  Semantics live in
docs/semantics.md; this module only describes shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from .expr import Expr, python_scalar

# --- structure --------------------------------------------------------------


class Node:
    """Base of structure nodes."""

    __slots__ = ()

    def children(self) -> tuple["Node", ...]:
        return ()


@dataclass(frozen=True, slots=True)
class EventVar(Node):
    """A variable bound to one event of one of ``types`` (None: any type)."""

    name: str
    types: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Neg(Node):
    """Non-occurrence of an event matching ``var`` (and every predicate mentioning it)."""

    var: EventVar

    def children(self):
        return (self.var,)


@dataclass(frozen=True, slots=True)
class Kleene(Node):
    """Kleene closure with bounds ``min <= count <= max`` (``max=None``: unbounded)."""

    body: Union[EventVar, "Seq", "Conj"]
    min: int = 1
    max: int | None = None

    def __post_init__(self):  # NumPy bounds become Python ints, as literals do (expr.python_scalar)
        object.__setattr__(self, "min", python_scalar(self.min))
        object.__setattr__(self, "max", python_scalar(self.max))

    def children(self):
        return (self.body,)


@dataclass(frozen=True, slots=True)
class Seq(Node):
    """SEQ(P1..Pn): every event of Pi before every event of Pi+1."""

    items: tuple[Node, ...]

    def children(self):
        return self.items


@dataclass(frozen=True, slots=True)
class Conj(Node):
    """AND(P1..Pn): all present, any order."""

    items: tuple[Node, ...]

    def children(self):
        return self.items


@dataclass(frozen=True, slots=True)
class Disj(Node):
    """OR(P1..Pn): any one branch."""

    items: tuple[Node, ...]

    def children(self):
        return self.items


# --- window -----------------------------------------------------------------

UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
           "min": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``WITHIN amount [unit]``: max ts - min ts <= the window (inclusive).

    ``unit=None`` means the amount is in the time column's own unit.
    """

    amount: int | float
    unit: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "amount", python_scalar(self.amount))


@dataclass(frozen=True, slots=True)
class CountWindow:
    """``WITHIN n EVENTS``: max pos - min pos < n."""

    n: int

    def __post_init__(self):
        object.__setattr__(self, "n", python_scalar(self.n))


@dataclass(frozen=True, slots=True)
class Unbounded:
    """``WITHIN UNBOUNDED``: no window, asked for explicitly."""


Window = Union[TimeWindow, CountWindow, Unbounded]


# --- pattern ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReturnItem:
    """One RETURN item: an expression (``a``, ``a.price``, ``avg(c.price)``) and an optional alias.

    A bare variable is ``Attr(var, "*")``: the whole event.
    """

    expr: Expr
    alias: str | None = None


@dataclass(frozen=True, slots=True)
class Pattern:
    """A complete pattern: structure, WHERE, window, RETURN, optional name."""

    body: Node
    where: Expr | None = None
    window: Window | None = None
    returns: tuple[ReturnItem, ...] = ()
    name: str | None = field(default=None, compare=True)


# --- helpers ----------------------------------------------------------------


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal of a structure."""
    yield node
    for c in node.children():
        yield from walk(c)


def levels(tree) -> Iterator[tuple[object, int]]:
    """Every node of a structure or expression tree with its depth (the root's is 1), without recursion.

    Iterative, so it reaches into trees too deep for the recursive passes (``validate`` refuses those
    past ``config.MAX_NESTING``).  Anything that is not a node (a malformed tree built in Python) is
    yielded as a leaf, for ``validate`` to name.
    """
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, (Node, Expr)):
            try:
                children = tuple(node.children())
            except TypeError:  # e.g. In.values not a tuple
                children = ()
            stack.extend((c, depth + 1) for c in children)


def nesting(tree) -> int:
    """Depth of a structure or expression tree: 1 for a leaf, 1 + the deepest child otherwise."""
    return max(depth for _, depth in levels(tree))


def event_vars(node: Node) -> tuple[EventVar, ...]:
    """All EventVars in structure order (positive, negated and Kleene)."""
    return tuple(n for n in walk(node) if isinstance(n, EventVar))


def negated_vars(node: Node) -> tuple[str, ...]:
    return tuple(n.var.name for n in walk(node) if isinstance(n, Neg))


def kleene_vars(node: Node) -> tuple[str, ...]:
    """Variables that bind lists: array variables and variables inside a Kleene group."""
    out: list[str] = []
    for n in walk(node):
        if isinstance(n, Kleene):
            out.extend(v.name for v in event_vars(n.body))
    return tuple(out)


def positive_vars(node: Node) -> tuple[str, ...]:
    neg = set(negated_vars(node))
    return tuple(v.name for v in event_vars(node) if v.name not in neg)
