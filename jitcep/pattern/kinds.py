"""Kinds of predicate values, and which operations accept which: the one type checker (semantics §4).

A *kind* is what a predicate value is, whatever its width or unit:

- ``INT`` / ``FLOAT``: an int64 / float64 number (``NUMBER``: a number whose width is not known,
  such as ``sum`` of an attribute not seen yet);
- ``BOOL``, ``STR``;
- the temporal kinds of attributes: ``DATETIME`` (a Date, or a Datetime without a time zone),
  ``DATETIME_TZ`` (a Datetime with one: an instant), ``DURATION``, ``TIME`` (of day);
- ``None``: no kind — the ``NULL`` literal, an attribute none of whose values is non-null in the table
  (a pandas column of ``None`` has no dtype), and at ``compile`` every attribute (the table is not read
  yet).  A value without a kind may stand wherever a value may: every operation on it is NULL.

The rules, each stated once below (semantics §4):

- numbers compare with numbers (an int with a float by their exact values), strings with strings
  (``<`` etc. lexicographically), booleans with booleans by ``=`` / ``!=`` only, each temporal kind
  with itself; any other pairing is an error;
- arithmetic (``+ - * /``, unary ``-``, ``abs``) and ``sum`` / ``avg`` take numbers only: int with int
  gives an int, anything with a float a float, ``/`` and ``avg`` always a float; ``count`` is an int,
  ``min`` / ``max`` are of their attribute's kind;
- the operands of AND / OR / NOT, and a WHERE conjunct itself, are conditions: of kind ``BOOL`` or
  none;
- ``IN`` compares its operand with each listed value by ``=``; ``[attr = v]`` compares attr with v.

One checker, four callers, each giving what it knows of attribute kinds through ``kind_of_attr``:
:func:`jitcep.pattern.validate.validate` (nothing: kinds of literals only, raising
PatternValidationError at ``compile``), :func:`jitcep.events.check_types` (the table's columns, raising
AttributeTypeError before any event is matched, on every engine),
:mod:`jitcep.codegen.predicates` (column specs; it takes the width of every arithmetic result from
:func:`arith_kind`) and :mod:`jitcep.reference.exprs` (the kinds of the Python values it meets, through
:func:`value_kind`).
"""

from __future__ import annotations

from typing import Callable, Optional

from ..errors import AttributeTypeError
from .expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary, conjuncts

__all__ = [
    "INT", "FLOAT", "NUMBER", "BOOL", "STR", "DATETIME", "DATETIME_TZ", "DURATION", "TIME", "TEMPORAL",
    "Kind", "noun", "family", "literal_kind", "value_kind", "arith_kind", "result_kind", "infer", "check_predicate",
    "check_pattern", "INT64_MIN", "INT64_MAX",
]

INT, FLOAT, NUMBER, BOOL, STR = "int", "float", "number", "bool", "str"
DATETIME, DATETIME_TZ, DURATION, TIME = "datetime", "datetime_tz", "duration", "time"
TEMPORAL = (DATETIME, DATETIME_TZ, DURATION, TIME)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # the values of INT: integer literals, columns read as int, exact results
Kind = Optional[str]
KindOfAttr = Callable[[str, str], Kind]

_NUMBERS = (INT, FLOAT, NUMBER)
# What a kind is called in messages (ints and floats are both "a number" to the user).
_NOUN = {INT: "a number", FLOAT: "a number", NUMBER: "a number", BOOL: "a boolean", STR: "a string",
         DATETIME: "a datetime", DATETIME_TZ: "a datetime with a time zone", DURATION: "a duration",
         TIME: "a time of day"}
_ARITH = ("+", "-", "*", "/", "neg", "abs")
_CMP = ("=", "!=", "<", "<=", ">", ">=")
# Why arithmetic refuses a temporal value (semantics §4, the Choice on temporal attributes).
_NO_DURATION_LITERALS = (" (jitcep has no duration literals, so the result's unit would be a guess; compare "
                         "instants directly, or use a.ts, in time-column units)")


def family(kind: Kind) -> Kind:
    """What a kind compares with: ints and floats are both numbers (§4); every other kind is its own."""
    return NUMBER if kind in _NUMBERS else kind


def noun(kind: Kind) -> str:
    """What a kind is called in messages: "a number", "a string", "a datetime with a time zone" ..."""
    return _NOUN.get(kind, "a value")


_PYTHON_KINDS = ((bool, BOOL), (int, INT), (float, FLOAT), (str, STR))  # bool first: it is an int in Python


def literal_kind(value) -> Kind:
    """The kind of a literal's value: None (NULL), BOOL, INT, FLOAT or STR.

    A value of another type has none here: ``validate`` refuses such a literal at ``compile``, and a
    query built past it is refused where it is used (it cannot be shipped, or evaluated).
    """
    return next((kind for t, kind in _PYTHON_KINDS if isinstance(value, t)), None)


def value_kind(value) -> Kind:
    """The kind of a non-null Python value met while interpreting a predicate (the reference evaluator)."""
    kind = literal_kind(value)
    if kind is None:
        raise AttributeTypeError(f"cannot use a value of type {type(value).__name__} in a predicate: {value!r}")
    return kind


def arith_kind(op: str, left: Kind, right: Kind = None) -> Kind:
    """Width of an arithmetic result from its operands' (already checked) kinds (§4, Numbers).

    ``/`` divides float64 values, a float operand makes the result a float, int with int (and the
    unary ``neg`` / ``abs`` of an int) is an exact int; an operand without a kind (NULL, or not known
    yet) leaves the width open (NUMBER) unless a float or ``/`` fixes it.
    """
    if op == "/" or FLOAT in (left, right):
        return FLOAT
    if left == INT and (right == INT or op in ("neg", "abs")):
        return INT
    return NUMBER


def _temporal_hint(lk: Kind, rk: Kind) -> str:
    if {lk, rk} == {DATETIME, DATETIME_TZ}:
        return (" (a datetime without a time zone names no instant: attach one with "
                "dt.replace_time_zone before comparing it with a zoned one)")
    if (lk in _NUMBERS or rk in _NUMBERS) and (lk in TEMPORAL or rk in TEMPORAL):
        return " (a temporal value compares only with its own kind; a.ts is a number in time-column units)"
    return ""


def result_kind(op: str, left: Kind, right: Kind = None, *, shown: tuple[str, str] | None = None,
                error: type[Exception] = AttributeTypeError, context: str = "") -> Kind:
    """The kind of ``left op right`` (§4), or ``error`` naming the misuse.

    ``op``: an arithmetic operator (``+ - * /``, unary ``neg`` / ``abs``: ``right`` unused), a
    comparison (``= != < <= > >=``), an aggregate (``count sum avg min max`` over an attribute of
    kind ``left``) or ``"condition"`` (``left`` used where TRUE / FALSE / NULL is needed: an operand of
    AND / OR / NOT, a WHERE conjunct).  ``shown``: how the operands are named in the message (default:
    by their kinds); ``context``: appended to it (the predicate).

    >>> result_kind("+", INT, FLOAT), result_kind("/", INT, INT), result_kind("<", INT, FLOAT)
    ('float', 'float', 'bool')
    >>> result_kind("<", BOOL, BOOL)
    Traceback (most recent call last):
    ...
    jitcep.errors.AttributeTypeError: comparing a boolean value with a boolean value by <: booleans compare only ...
    """
    def name(i: int, kind: Kind) -> str:
        return shown[i] if shown is not None else f"{noun(kind)} value"

    if op in _ARITH:
        for i, kind in enumerate((left,) if op in ("neg", "abs") else (left, right)):
            if kind is not None and kind not in _NUMBERS:
                why = _NO_DURATION_LITERALS if kind in TEMPORAL else ""
                raise error(f"arithmetic on {name(i, kind)}, which is not a number{why}{context}")
        return arith_kind(op, left, right)
    if op in _CMP:
        if left is None or right is None:
            return BOOL  # NULL compares with anything, as NULL
        if family(left) != family(right):
            raise error(f"comparing {name(0, left)} with {name(1, right)}{_temporal_hint(left, right)}{context}")
        if left == BOOL and op not in ("=", "!="):
            raise error(f"comparing {name(0, left)} with {name(1, right)} by {op}: booleans compare only with "
                        f"= and !={context}")
        return BOOL
    if op == "count":
        return INT
    if op in ("sum", "avg"):
        if left is not None and left not in _NUMBERS:
            why = _NO_DURATION_LITERALS if left in TEMPORAL else ""
            raise error(f"{op}() over {name(0, left)}, which is not a number{why}{context}")
        return FLOAT if op == "avg" else (left if left in (INT, FLOAT) else NUMBER)
    if op in ("min", "max"):
        return left
    if op == "condition":
        if left not in (BOOL, None):
            raise error(f"{name(0, left)} is a value, not a condition{context}")
        return BOOL
    raise ValueError(f"no kind rule for the operator {op!r}")


def _text(expr: Expr) -> str:
    from .printer import expr_to_text  # the printer imports this package's modules: import when needed
    try:
        return expr_to_text(expr)
    except Exception:  # a malformed node has no text form; its repr still names it
        return repr(expr)


def _show(node: Expr, kind: Kind) -> str:
    if isinstance(node, Lit):
        return f"{noun(kind)} literal ({_text(node)})"
    if isinstance(node, Attr):  # the attribute of [attr = v] has no variable: Attr("*", attr)
        return f"{noun(kind)} attribute ({node.attr if node.var == '*' else _text(node)})"
    return f"{noun(kind)} expression ({_text(node)})"


class _Refused(Exception):
    """A rule refused: raised without a message, so the walk prints operands only when one is needed."""


class _Infer:
    """One walk of a predicate: the kind of every node, bottom up, checked by :func:`result_kind`."""

    def __init__(self, kind_of_attr: KindOfAttr, error: type[Exception], context: str,
                 predicate: Expr | None = None):
        # ``predicate``: named after the message (" in predicate ..."), printed only if one is raised
        self.kind_of_attr, self.error, self.context, self.predicate = kind_of_attr, error, context, predicate

    def rule(self, op: str, nodes: tuple[Expr, ...], kinds: tuple[Kind, ...]) -> Kind:
        try:
            return result_kind(op, *kinds, error=_Refused)
        except _Refused:  # again, naming the operands as written: printed only for the message
            shown = tuple(_show(n, k) for n, k in zip(nodes, kinds)) + ("", "")
            context = self.context + (f" in predicate {_text(self.predicate)}" if self.predicate is not None else "")
            return result_kind(op, *kinds, shown=shown[:2], error=self.error, context=context)

    def condition(self, node: Expr) -> Kind:
        return self.rule("condition", (node,), (self.kind(node),))

    def kind(self, e: Expr) -> Kind:
        if isinstance(e, Lit):
            return literal_kind(e.value)
        if isinstance(e, Attr):
            return self.kind_of_attr(e.var, e.attr)
        if isinstance(e, Agg):
            if e.func == "count":
                return INT
            attr = Attr(e.var, e.attr)  # named as the attribute it aggregates
            return self.rule(e.func, (attr,), (self.kind_of_attr(e.var, e.attr),))
        if isinstance(e, Arith):
            return self.rule(e.op, (e.left, e.right), (self.kind(e.left), self.kind(e.right)))
        if isinstance(e, Unary):
            return self.rule(e.op, (e.operand,), (self.kind(e.operand),))
        if isinstance(e, Cmp):
            return self.rule(e.op, (e.left, e.right), (self.kind(e.left), self.kind(e.right)))
        if isinstance(e, In):
            k = self.kind(e.operand)
            for v in e.values:  # x IN (v1, ..) is x = v1 OR ..: each listed value compares with x
                self.rule("=", (e.operand, v), (k, self.kind(v)))
            return BOOL
        if isinstance(e, Equiv):
            if e.value is not None:  # [attr = v]: every event's attr = v
                self.rule("=", (Attr("*", e.attr), e.value), (self.kind_of_attr("*", e.attr), self.kind(e.value)))
            return BOOL
        if isinstance(e, IsNull):
            self.kind(e.operand)  # any kind may be null
            return BOOL
        if isinstance(e, Not):
            return self.condition(e.operand)
        if isinstance(e, BoolOp):
            for item in e.items:
                self.condition(item)
            return BOOL
        raise TypeError(f"not an expression: {e!r}")


def infer(expr: Expr, kind_of_attr: KindOfAttr, *, error: type[Exception] = AttributeTypeError,
          context: str = "") -> Kind:
    """The kind of ``expr``, checking every operation in it (§4); ``error`` names the first misuse.

    ``kind_of_attr(var, attr)`` gives an attribute's kind (None: no kind, or not known); ``var`` is
    ``"*"`` for the attribute of an equivalence test ``[attr = v]``, which every variable reads.

    >>> from jitcep.pattern.parser import parse_expr
    >>> columns = {"x": INT, "y": FLOAT, "s": STR}
    >>> infer(parse_expr("a.x * 2 + a.y"), lambda var, attr: columns[attr])
    'float'
    >>> infer(parse_expr("a.s = 1 OR a.x > 0"), lambda var, attr: columns[attr])
    Traceback (most recent call last):
    ...
    jitcep.errors.AttributeTypeError: comparing a string attribute (a.s) with a number literal (1)
    """
    return _Infer(kind_of_attr, error, context).kind(expr)


def check_predicate(expr: Expr, kind_of_attr: KindOfAttr, *, condition: bool,
                    error: type[Exception] = AttributeTypeError) -> Kind:
    """Check one predicate — a WHERE conjunct (``condition=True``: it must be a condition) or a RETURN
    item — and return its kind; the message names the predicate."""
    walk = _Infer(kind_of_attr, error, "", expr)
    return walk.condition(expr) if condition else walk.kind(expr)


def check_pattern(pattern, kind_of_attr: KindOfAttr, *, error: type[Exception] = AttributeTypeError) -> None:
    """Check every WHERE conjunct (as a condition) and every RETURN item of ``pattern`` (§4)."""
    for c in conjuncts(pattern.where):
        check_predicate(c, kind_of_attr, condition=True, error=error)
    for item in pattern.returns:
        check_predicate(item.expr, kind_of_attr, condition=False, error=error)
