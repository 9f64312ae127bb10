"""Predicate expressions: data, never lambdas.

The planner reads these trees to place predicates and estimate selectivities;
codegen turns them into Numba source; the reference evaluator interprets them.
Every node is an immutable frozen dataclass, so trees compare and hash by value
(the printer/parser round trip relies on it).

References to events (SASE section 2, SASE+ section 2):

- ``Attr("a", "price")``            ``a.price``
- ``Attr("b", "price", "i")``       ``b[i].price``   (each member of Kleene variable b)
- ``Attr("b", "price", "i-1")``     ``b[i-1].price`` (the member before it)
- ``Attr("b", "price", 1)``         ``b[1].price``   (1-based fixed member)
- ``Attr("b", "price", "len")``     ``b[b.LEN].price`` (last member)
- ``Agg("count", "b")``             ``count(b)`` or ``b.LEN``
- ``Agg("avg", "b", "price")``      ``avg(b.price)`` / ``avg(b[].price)``
- ``Equiv("symbol")``               ``[symbol]``: equal across every variable
- ``Equiv("symbol", Lit("IBM"))``   ``[symbol = 'IBM']``
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator, Literal, Union

import numpy as np

Scalar = Union[int, float, str, bool, None]
KIndex = Union[Literal["i", "i-1", "len"], int]

ARITH_OPS = ("+", "-", "*", "/")
CMP_OPS = ("=", "!=", "<", "<=", ">", ">=")
AGG_FUNCS = ("count", "sum", "avg", "min", "max")


def python_scalar(value):
    """``value`` as a Python scalar if it is a NumPy bool, integer, float or string scalar, else unchanged.

    The nodes that hold scalars (literals, Kleene bounds, windows) convert in their constructors, so
    ``np.float64(2.5)`` from a builder or a hand-made AST reaches the printer, codegen and the reference
    evaluator as the Python ``2.5`` (its repr ``np.float64(2.5)`` is neither pattern text nor Numba
    source).  Other NumPy scalars (datetime64, complex) stay as they are for ``validate`` to refuse.
    """
    if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
        value = value.item()
    return value


class Expr:
    """Base of all predicate expression nodes."""

    __slots__ = ()

    def children(self) -> tuple["Expr", ...]:
        return ()


@dataclass(frozen=True, slots=True)
class Lit(Expr):
    """A literal: number, string, boolean or null (a NumPy scalar is stored as its Python value)."""

    value: Scalar

    def __post_init__(self):
        object.__setattr__(self, "value", python_scalar(self.value))


@dataclass(frozen=True, slots=True)
class Attr(Expr):
    """An attribute of the event bound to ``var``; ``index`` selects a Kleene member.

    ``attr`` may be ``"ts"`` for the event's timestamp.  ``index=None`` on a
    Kleene variable outside an aggregate means "every member" (like ``[i]``).
    """

    var: str
    attr: str
    index: KIndex | None = None


@dataclass(frozen=True, slots=True)
class Agg(Expr):
    """An aggregate over the members of Kleene variable ``var`` (SASE+ section 2)."""

    func: Literal["count", "sum", "avg", "min", "max"]
    var: str
    attr: str | None = None  # None only for count


@dataclass(frozen=True, slots=True)
class Arith(Expr):
    """Binary arithmetic ``left op right`` with op in + - * /."""

    op: Literal["+", "-", "*", "/"]
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    """Unary minus (``neg``) or absolute value (``abs``)."""

    op: Literal["neg", "abs"]
    operand: Expr

    def children(self):
        return (self.operand,)


@dataclass(frozen=True, slots=True)
class Cmp(Expr):
    """Comparison ``left op right`` with op in = != < <= > >=."""

    op: Literal["=", "!=", "<", "<=", ">", ">="]
    left: Expr
    right: Expr

    def children(self):
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    """N-ary AND / OR of boolean expressions."""

    op: Literal["and", "or"]
    items: tuple[Expr, ...]

    def children(self):
        return self.items


@dataclass(frozen=True, slots=True)
class Not(Expr):
    """Boolean negation."""

    operand: Expr

    def children(self):
        return (self.operand,)


@dataclass(frozen=True, slots=True)
class In(Expr):
    """``operand IN (v1, v2, ...)``; ``negated`` for NOT IN."""

    operand: Expr
    values: tuple[Lit, ...]
    negated: bool = False

    def children(self):
        return (self.operand, *self.values)


@dataclass(frozen=True, slots=True)
class IsNull(Expr):
    """``operand IS NULL``; ``negated`` for IS NOT NULL."""

    operand: Expr
    negated: bool = False

    def children(self):
        return (self.operand,)


@dataclass(frozen=True, slots=True)
class Equiv(Expr):
    """Equivalence test ``[attr]`` / ``[attr = value]`` over all variables of the pattern.

    Allowed only as a top-level conjunct of WHERE.  It covers positive and
    negated variables and every member of Kleene variables (SASE section 2,
    SASE+ section 3.1 step 2).
    """

    attr: str
    value: Lit | None = None

    def children(self):
        return (self.value,) if self.value is not None else ()


TRUE = Lit(True)


# --- helpers ----------------------------------------------------------------


def walk(expr: Expr) -> Iterator[Expr]:
    """Pre-order traversal."""
    yield expr
    for c in expr.children():
        yield from walk(c)


def map_expr(e: Expr, fn) -> Expr:
    """``e`` with every node ``x`` for which ``fn(x)`` is not None replaced by that (bottom-up rebuild)."""
    r = fn(e)
    if r is not None:
        return r
    if not e.children():
        return e
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, Expr):
            changes[f.name] = map_expr(v, fn)
        elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
            changes[f.name] = tuple(map_expr(x, fn) for x in v)
    return dataclasses.replace(e, **changes)


def variables(expr: Expr) -> frozenset[str]:
    """Names of the variables an expression reads (Equiv reads all, so it contributes none here)."""
    return frozenset(n.var for n in walk(expr) if isinstance(n, (Attr, Agg)))


def columns_read(exprs) -> frozenset[str]:
    """The event columns ``exprs`` read: every attribute they name but ``ts``, the event's time (semantics §4),
    which generated predicates take apart from the columns (:class:`jitcep.codegen.PredicateSet`)."""
    return frozenset(n.attr for p in exprs for n in walk(p) if isinstance(n, Attr)) - {"ts"}


def conjuncts(expr: Expr | None) -> tuple[Expr, ...]:
    """Split a predicate on its top-level ANDs (None -> no conjuncts)."""
    if expr is None:
        return ()
    if isinstance(expr, BoolOp) and expr.op == "and":
        out: list[Expr] = []
        for item in expr.items:
            out.extend(conjuncts(item))
        return tuple(out)
    if expr == TRUE:
        return ()
    return (expr,)


def conjoin(items) -> Expr | None:
    """Inverse of :func:`conjuncts`: None for no items, the item for one, else an AND."""
    items = tuple(items)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return BoolOp("and", items)
