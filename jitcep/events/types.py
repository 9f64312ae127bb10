"""The type check: predicates that mix kinds of values (string vs number, temporal kinds), semantics §4.

:func:`check_types` raises AttributeTypeError naming the predicate; the
builder runs it (``check=True``) and the engines run it on hand-built tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AttributeTypeError
from ..pattern import expr as E
from .attributes import _TS_ATTR, _TYPE_ATTR, _as_patterns
from .times import _TEMPORAL_NOUN

if TYPE_CHECKING:  # annotations only: the table module imports this one
    from .table import EventTable


def _expr_text(expr: E.Expr) -> str:
    try:
        from ..pattern.printer import expr_to_text
    except ImportError:
        return repr(expr)
    try:
        return expr_to_text(expr)
    except Exception:  # the printer is not ours to debug here; fall back to the node
        return repr(expr)


def _lit_kind(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "num"
    return "str"


def _attr_kind(attr: str, table: "EventTable") -> str | None:
    if attr == _TS_ATTR:
        return "num"  # a number in time-column units (semantics §4)
    col = table.columns.get(attr)
    if col is None:
        return "str" if attr == _TYPE_ATTR else None
    if col.valid is not None and not col.valid.any():
        return None  # an all-null column (Null dtype): every comparison is null, no misuse possible
    if col.temporal is not None:
        return col.temporal
    return {"int": "num", "float": "num", "bool": "bool", "str": "str"}[col.kind]


def _describe_kind(node: E.Expr, kind: str) -> str:
    noun = {"num": "a number", "str": "a string", "bool": "a boolean", **_TEMPORAL_NOUN}[kind]
    if isinstance(node, E.Lit):
        return f"{noun} literal"
    if isinstance(node, E.Attr):
        return f"{noun} attribute ({node.var}.{node.attr})"
    return f"{noun} expression"


def _kind(node: E.Expr, table: "EventTable", pred: E.Expr) -> str | None:
    """The value kind of an expression ("num", "str", "bool", None = null/unknown); raises on misuse."""
    def fail(msg):
        return AttributeTypeError(f"{msg} in predicate {_expr_text(pred)}")

    if isinstance(node, E.Lit):
        return _lit_kind(node.value)
    if isinstance(node, E.Attr):
        return _attr_kind(node.attr, table)
    if isinstance(node, E.Agg):
        if node.func == "count":
            return "num"
        k = _attr_kind(node.attr, table)
        if node.func in ("sum", "avg") and (k in ("str", "bool") or k in _TEMPORAL_NOUN):
            raise fail(f"{node.func}() over the {k} attribute {node.var}.{node.attr}")
        return k
    if isinstance(node, (E.Arith, E.Unary)):
        for child in node.children():
            k = _kind(child, table, pred)
            if k in ("str", "bool") or k in _TEMPORAL_NOUN:
                why = (" (jitcep has no duration literals, so the result's unit would be a guess; compare "
                       "instants directly, or use a.ts, in time-column units)") if k in _TEMPORAL_NOUN else ""
                raise fail(f"arithmetic on {_describe_kind(child, k)}{why}")
        return "num"
    if isinstance(node, (E.Cmp, E.In)):
        left = node.left if isinstance(node, E.Cmp) else node.operand
        rights = (node.right,) if isinstance(node, E.Cmp) else node.values
        lk = _kind(left, table, pred)
        for right in rights:
            rk = _kind(right, table, pred)
            if lk is not None and rk is not None and lk != rk and (
                    "str" in (lk, rk) or lk in _TEMPORAL_NOUN or rk in _TEMPORAL_NOUN):
                raise fail(f"comparing {_describe_kind(left, lk)} with {_describe_kind(right, rk)}"
                           f"{_temporal_hint(lk, rk)}")
        return "bool"
    if isinstance(node, E.Equiv):
        if node.value is not None:
            ak, vk = _attr_kind(node.attr, table), _lit_kind(node.value.value)
            if ak is not None and vk is not None and ak != vk and ("str" in (ak, vk) or ak in _TEMPORAL_NOUN):
                raise fail(f"comparing the {ak} attribute {node.attr!r} with a {vk} literal")
        return "bool"
    for child in node.children():  # BoolOp, Not, IsNull
        _kind(child, table, pred)
    return "bool"


def _temporal_hint(lk: str, rk: str) -> str:
    if {lk, rk} == {"datetime", "datetime_tz"}:
        return (" (a datetime without a time zone names no instant: attach one with "
                "dt.replace_time_zone before comparing it with a zoned one)")
    if "num" in (lk, rk) and (lk in _TEMPORAL_NOUN or rk in _TEMPORAL_NOUN):
        return " (a temporal value compares only with its own kind; a.ts is a number in time-column units)"
    return ""


def check_types(patterns, table: "EventTable") -> None:
    """Raise AttributeTypeError where a predicate mixes kinds of values (semantics §4).

    Caught: a string attribute compared with a number (or boolean) literal or
    attribute and vice versa, arithmetic or sum/avg on a string, in WHERE and
    in RETURN; a temporal attribute (date, datetime, duration, time of day)
    compared with anything but its own kind (a datetime with a time zone with
    a naive one, a number, a literal), arithmetic or sum/avg on one.  Numbers
    and booleans may be compared with each other, and nulls with anything.
    The message names the predicate (a top-level conjunct of WHERE, or the
    RETURN item).
    """
    for pattern in _as_patterns(patterns):
        roots = list(E.conjuncts(pattern.where)) + [item.expr for item in pattern.returns]
        for root in roots:
            _kind(root, table, root)
