"""A Python builder producing the same AST as the text language.

>>> p = (seq(var("Stock", "a"), neg(var("Stock", "b")), kleene(var("Stock", "c"), min=1), var("Stock", "d"))
...      .where(equiv("symbol"), col("a.price") > 100, col("c[i].price") > col("c[i-1].price"),
...             col("d.volume") < 0.8 * col("a.volume"))
...      .within(minutes=10)
...      .returns("a", "c", avg_c=col("c.price").avg()))
>>> from jitcep.pattern.parser import parse
>>> p.build() == parse('''PATTERN SEQ(Stock a, !Stock b, Stock+ c[], Stock d)
...     WHERE [symbol] AND a.price > 100 AND c[i].price > c[i-1].price AND d.volume < 0.8 * a.volume
...     WITHIN 10 minutes RETURN a, c, avg(c.price) AS avg_c''')
True

Two layers, as in Polars: :class:`Builder` (structure, WHERE, window, RETURN;
every method returns a new builder) and :class:`E`, a wrapper around an
expression node whose Python operators build expression nodes (``&``, ``|``,
``~`` for AND, OR, NOT, since Python's ``and``/``or``/``not`` cannot be
overloaded).  The AST nodes themselves stay plain frozen dataclasses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from ..config import MAX_NESTING
from ..errors import InvalidWindowError, PatternError, PatternValidationError
from .ast import (Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem, Seq, TimeWindow,
                  Unbounded, Window, nesting)
from .expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary, python_scalar
from .parser import UNIT_ALIASES, parse_expr

__all__ = ["E", "Builder", "var", "neg", "kleene", "seq", "and_", "or_", "conj", "disj", "col", "lit", "expr",
           "count", "equiv"]

_Scalar = (bool, int, float, str, type(None))


# --- expressions ------------------------------------------------------------


class E:
    """An expression under construction; ``.node`` is the :mod:`jitcep.pattern.expr` tree.

    Operators: ``+ - * /``, unary ``-``, ``abs()``, comparisons ``== != < <= > >=``,
    ``&`` (AND), ``|`` (OR), ``~`` (NOT).  Python and NumPy scalars on either side become literals
    (holding the Python value).
    """

    __slots__ = ("node", "_chain")
    __hash__ = None  # == builds an expression, so E cannot be a dict key

    def __init__(self, node: Expr, _chain: bool = False):
        if not isinstance(node, Expr):
            raise PatternValidationError(f"E wraps an expression node, got {type(node).__name__}")
        self.node = node
        self._chain = _chain  # an AND built by '&' or [a1, a2]: flattened into the next AND like the text

    def __repr__(self) -> str:
        from .printer import expr_to_text
        try:
            return f"E({expr_to_text(self.node)})"
        except PatternError as e:  # no text form (nested too deep, an infinite literal): say why
            return f"E(<{type(self.node).__name__}: {e}>)"

    def __bool__(self):
        raise PatternValidationError(
            "a pattern expression has no truth value: use & | ~ instead of and / or / not, and write "
            "(lo < x) & (x < hi) instead of lo < x < hi")

    # arithmetic
    def __add__(self, o): return E(Arith("+", self.node, _node(o)))
    def __radd__(self, o): return E(Arith("+", _node(o), self.node))
    def __sub__(self, o): return E(Arith("-", self.node, _node(o)))
    def __rsub__(self, o): return E(Arith("-", _node(o), self.node))
    def __mul__(self, o): return E(Arith("*", self.node, _node(o)))
    def __rmul__(self, o): return E(Arith("*", _node(o), self.node))
    def __truediv__(self, o): return E(Arith("/", self.node, _node(o)))
    def __rtruediv__(self, o): return E(Arith("/", _node(o), self.node))
    def __neg__(self): return E(Unary("neg", self.node))
    def __abs__(self): return E(Unary("abs", self.node))

    # comparisons
    def __eq__(self, o): return E(Cmp("=", self.node, _node(o)))  # type: ignore[override]
    def __ne__(self, o): return E(Cmp("!=", self.node, _node(o)))  # type: ignore[override]
    def __lt__(self, o): return E(Cmp("<", self.node, _node(o)))
    def __le__(self, o): return E(Cmp("<=", self.node, _node(o)))
    def __gt__(self, o): return E(Cmp(">", self.node, _node(o)))
    def __ge__(self, o): return E(Cmp(">=", self.node, _node(o)))

    # boolean
    def __and__(self, o): return E(BoolOp("and", (*_and_items(self), *_and_items(_wrap(o), right=True))), True)
    def __rand__(self, o): return _wrap(o) & self
    def __or__(self, o): return E(BoolOp("or", (self.node, _node(o))))
    def __ror__(self, o): return E(BoolOp("or", (_node(o), self.node)))
    def __invert__(self): return E(Not(self.node))

    # named forms
    def abs(self) -> "E":
        return E(Unary("abs", self.node))

    def is_null(self) -> "E":
        return E(IsNull(self.node))

    def is_not_null(self) -> "E":
        return E(IsNull(self.node, True))

    def is_in(self, *values) -> "E":
        """``x IN (v1, ...)``; values as arguments or one iterable."""
        return E(In(self.node, _literals(values)))

    def not_in(self, *values) -> "E":
        return E(In(self.node, _literals(values), True))

    def _agg(self, func: str) -> "E":
        n = self.node
        if not isinstance(n, Attr) or n.index is not None or n.attr == "*":
            raise PatternValidationError(
                f"{func}() aggregates a Kleene attribute such as col('c.price'), not {self!r}")
        return E(Agg(func, n.var, n.attr))

    def sum(self) -> "E":
        return self._agg("sum")

    def avg(self) -> "E":
        return self._agg("avg")

    def min(self) -> "E":
        return self._agg("min")

    def max(self) -> "E":
        return self._agg("max")

    def alias(self, name: str) -> ReturnItem:
        """A RETURN item with a name: ``col("c.price").avg().alias("avg_c")``."""
        return ReturnItem(self.node, name)


def _wrap(o) -> E:
    return o if isinstance(o, E) else E(_node(o))


def _node(o) -> Expr:
    if isinstance(o, E):
        return o.node
    if isinstance(o, Expr):
        return o
    if isinstance(python_scalar(o), _Scalar):
        return Lit(o)
    raise PatternValidationError(
        f"cannot use a {type(o).__name__} in a pattern expression; use numbers, strings, booleans, None, "
        "col(...) or lit(...)")


def _and_items(e: E, right: bool = False) -> tuple[Expr, ...]:
    # p & q & r is (p & q) & r in Python; like the parser's AND chain it becomes one n-ary AND.
    # On the right only an [a1, a2] group is spliced, as the parser does.
    if e._chain and isinstance(e.node, BoolOp) and e.node.op == "and":
        if not right or all(isinstance(i, Equiv) for i in e.node.items):
            return e.node.items
    return (e.node,)


def _literals(values) -> tuple[Lit, ...]:
    if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
        values = tuple(values[0])
    out = []
    for v in values:
        n = _node(v)
        if not isinstance(n, Lit):
            raise PatternValidationError(f"IN lists take literals only, got {v!r}")
        out.append(n)
    return tuple(out)


def col(ref: str) -> E:
    """A reference: ``"a.price"``, ``"c[i].price"``, ``"c[i-1].price"``, ``"c[1].price"``,
    ``"c[c.LEN].price"``, ``"c.LEN"``, ``"a.`Opening Price`"``."""
    node = parse_expr(ref)
    if not isinstance(node, (Attr, Agg)):
        raise PatternValidationError(f"col() takes a reference such as 'a.price', got {ref!r}; use expr()")
    return E(node)


def lit(value) -> E:
    """A literal (number, string, boolean or None; a NumPy scalar stands for its Python value)."""
    if not isinstance(python_scalar(value), _Scalar):
        raise PatternValidationError(f"not a literal: {value!r}")
    return E(Lit(value))


def expr(text: str) -> E:
    """Any WHERE expression written as text: ``expr("a.x + 1 > b.y OR [k]")``."""
    return E(parse_expr(text), _chain=True)


def count(variable: str) -> E:
    """``count(c)``: the number of members of Kleene variable c (SASE+'s ``c.LEN``)."""
    return E(Agg("count", variable))


def equiv(*attrs: str, **fixed) -> E:
    """Equivalence tests: ``equiv("symbol")`` is ``[symbol]``, ``equiv("a1", "a2")`` is ``[a1, a2]``,
    ``equiv(symbol="IBM")`` is ``[symbol = 'IBM']`` (SASE section 2)."""
    items = [Equiv(a) for a in attrs] + [Equiv(k, Lit(v)) for k, v in fixed.items()]
    if not items:
        raise PatternValidationError("equiv() needs at least one attribute")
    if not all(isinstance(i.attr, str) and i.attr for i in items):
        raise PatternValidationError(f"equiv() takes attribute names, got {attrs!r}")
    if len(items) == 1:
        return E(items[0])
    return E(BoolOp("and", tuple(items)), _chain=True)


# --- patterns ---------------------------------------------------------------


@dataclass(frozen=True)
class Builder:
    """A pattern under construction; ``build()`` returns the :class:`~jitcep.pattern.ast.Pattern`."""

    node: Node
    where_: Expr | None = None
    window: Window | None = None
    returns_: tuple[ReturnItem, ...] = ()
    name: str | None = None

    def __repr__(self) -> str:
        from .printer import to_text
        try:
            return f"Builder({to_text(self.build())!r})"
        except Exception:
            if max(nesting(t) for t in (self.node, self.where_) if t is not None) > MAX_NESTING:
                return f"Builder(<a pattern nested more than {MAX_NESTING} levels deep>)"
            return f"Builder({self.build()!r})"  # a malformed node has no text form; its repr still names it

    def _whole(self) -> bool:
        return self.where_ is None and self.window is None and not self.returns_ and self.name is None

    def where(self, *conditions) -> "Builder":
        """AND the conditions (E, expression nodes or expression text) to WHERE."""
        items: list[Expr] = [] if self.where_ is None else list(_conjunct_items(E(self.where_, True)))
        for c in conditions:
            items.extend(_conjunct_items(expr(c) if isinstance(c, str) else _wrap(c)))
        if not items:
            return self
        return replace(self, where_=items[0] if len(items) == 1 else BoolOp("and", tuple(items)))

    def within(self, amount: int | float | None = None, unit: str | None = None, *, events: int | None = None,
               unbounded: bool = False, **duration) -> "Builder":
        """``within(300)``, ``within(10, "min")``, ``within(minutes=10)``, ``within(events=100)``,
        ``within(unbounded=True)``."""
        given = [amount is not None, events is not None, bool(unbounded), bool(duration)]
        if sum(given) != 1 or len(duration) > 1 or (unit is not None and amount is None):
            raise InvalidWindowError(
                "within() takes exactly one of: an amount (with an optional unit), a duration keyword "
                "(minutes=10), events=n or unbounded=True")
        if unbounded:
            return replace(self, window=Unbounded())
        if events is not None:
            return replace(self, window=CountWindow(events))
        if duration:
            (key, amount), = duration.items()
            unit = key
        if unit is not None:
            canonical = UNIT_ALIASES.get(unit.lower())
            if canonical is None:
                raise InvalidWindowError(
                    f"unknown time unit {unit!r}; use one of {', '.join(sorted(set(UNIT_ALIASES)))}")
            unit = canonical
        return replace(self, window=TimeWindow(amount, unit))

    def returns(self, *items, **aliased) -> "Builder":
        """RETURN items: variable names (``"a"``), E, expression text, ReturnItem, ``(E, alias)``,
        or ``alias=E`` keywords (after the positional ones)."""
        out = list(self.returns_)
        for item in items:
            out.append(_return_item(item))
        for alias, item in aliased.items():
            out.append(ReturnItem(_return_item(item).expr, alias))
        return replace(self, returns_=tuple(out))

    def named(self, name: str) -> "Builder":
        return replace(self, name=name)

    def build(self) -> Pattern:
        """The pattern AST (not validated; ``jitcep.compile`` and ``validate`` check it)."""
        return Pattern(self.node, self.where_, self.window, self.returns_, self.name)


def _conjunct_items(e: E) -> tuple[Expr, ...]:
    # where(a, b) is "a AND b"; an [a1, a2] group or a text "x AND y" joins the chain like the parser's
    if e._chain and isinstance(e.node, BoolOp) and e.node.op == "and":
        return e.node.items
    return (e.node,)


_NAME = re.compile(r"[^\W\d]\w*\Z")


def _return_item(item) -> ReturnItem:
    if isinstance(item, ReturnItem):
        return item
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        return ReturnItem(_return_item(item[0]).expr, item[1])
    if isinstance(item, str):
        if _NAME.match(item):
            return ReturnItem(Attr(item, "*"))
        return ReturnItem(parse_expr(item))
    return ReturnItem(_node(item))


def _element(x) -> Node:
    if isinstance(x, Builder):
        if not x._whole():
            raise PatternValidationError(
                "where() / within() / returns() / named() apply to the whole pattern: call them on the "
                "outermost element, not on an element nested inside it")
        return x.node
    if isinstance(x, Node):
        return x
    raise PatternValidationError(f"not a pattern element: {x!r}; build elements with var(), seq(), ...")


def var(types: str | Iterable[str] | None, name: str) -> Builder:
    """``var("Stock", "a")`` is ``Stock a``; ``var("*", "x")`` / ``var(None, "x")`` any type;
    ``var(["A", "B"], "x")`` is ``ANY(A, B) x``."""
    if types is None or types == "*":
        t = None
    elif isinstance(types, str):
        t = (types,)
    else:
        t = tuple(types)
    if not isinstance(name, str):
        raise PatternValidationError(f"variable name must be a string, got {name!r}")
    return Builder(EventVar(name, t))


def neg(x) -> Builder:
    """``!T v``: non-occurrence (SASE section 2)."""
    return Builder(Neg(_element(x)))


def kleene(x, min: int = 1, max: int | None = None) -> Builder:  # noqa: A002 - the paper's names
    """Kleene closure with ``min <= count <= max`` (SASE+ section 2; ZStream KSEQ)."""
    return Builder(Kleene(_element(x), min, max))


def seq(*items) -> Builder:
    """``SEQ(...)``: each element's events before the next's."""
    return Builder(Seq(tuple(_element(i) for i in items)))


def and_(*items) -> Builder:
    """``AND(...)``: all elements, in any order."""
    return Builder(Conj(tuple(_element(i) for i in items)))


def or_(*items) -> Builder:
    """``OR(...)``: any one element."""
    return Builder(Disj(tuple(_element(i) for i in items)))


conj, disj = and_, or_
