"""Pattern AST -> canonical text that parses back to an equal AST.

Canonical form: upper-case keywords, ``PATTERN`` / ``WHERE`` / ``WITHIN`` /
``RETURN`` on their own lines, ``!T v`` for negation, ``T+ v[]``-style
closures for single-type array variables and ``KL(...)`` otherwise, the
fewest parentheses that keep the tree's shape, and names quoted only when
they need it.  ``Pattern.name`` has no text form and is not printed.

>>> from jitcep.pattern.parser import parse
>>> print(to_text(parse("event seq(Stock a, ~Stock b) where a.x>1 within 10 minutes")))
PATTERN SEQ(Stock a, !Stock b)
WHERE a.x > 1
WITHIN 10 min
"""

from __future__ import annotations

import math
import re

from ..config import MAX_NESTING
from ..errors import PatternValidationError
from .ast import Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem, Seq, TimeWindow, \
    Unbounded, nesting
from .expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary
from .parser import KEYWORDS

__all__ = ["to_text", "expr_to_text", "node_to_text", "window_to_text"]

_IDENT = re.compile(r"[^\W\d]\w*\Z")
_TYPE = re.compile(r"[^\W\d]\w*(?:-\w+)*\Z")

# Binding strength of each expression form (higher binds tighter); mirrors the parser's levels.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _NEG, _PRIMARY = range(1, 9)


def _name(name: str) -> str:
    """A variable / alias name: bare when it is a non-keyword identifier, else back-quoted."""
    if _IDENT.match(name) and name.upper() not in KEYWORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def _attr(attr: str) -> str:
    """An attribute after '.': keywords are fine there, LEN is not (it means the count)."""
    if _IDENT.match(attr) and attr.upper() != "LEN":
        return attr
    return "`" + attr.replace("`", "``") + "`"


def _type(name: str) -> str:
    if _TYPE.match(name) and name.upper() not in KEYWORDS:
        return name
    return _string(name)


def _string(s: str) -> str:
    body = (s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
            .replace("\r", "\\r").replace("\t", "\\t"))
    return "'" + body + "'"


def _number(v: int | float) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        raise PatternValidationError(f"the literal {v!r} has no text form; use a finite number")
    try:
        return repr(v)
    except ValueError:  # an int past Python's int-to-text limit (sys.get_int_max_str_digits())
        raise PatternValidationError(
            f"an integer of {v.bit_length()} bits has no text form; use a float such as 1e30") from None


def _printable(tree) -> None:
    """Refuse a tree deeper than any text parses to: printing it would recurse past Python's stack."""
    if nesting(tree) > MAX_NESTING:
        raise PatternValidationError(
            f"the tree nests more than {MAX_NESTING} levels deep, which no pattern text can "
            "(docs/language.md); it has no text form")


def _lit(lit: Lit) -> str:
    v = lit.value
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        return _string(v)
    raise PatternValidationError(f"unsupported literal {v!r} of type {type(v).__name__}")


# --- expressions ------------------------------------------------------------


def _index(var: str, index) -> str:
    if index == "len":
        return f"[{_name(var)}.LEN]"
    return f"[{index}]"


def _expr(e: Expr) -> tuple[str, int]:
    """(text, strength) of an expression."""
    if isinstance(e, Lit):
        return _lit(e), _PRIMARY
    if isinstance(e, Attr):
        if e.attr == "*" and e.index is None:  # a whole event (RETURN a)
            return _name(e.var), _PRIMARY
        idx = "" if e.index is None else _index(e.var, e.index)
        return f"{_name(e.var)}{idx}.{_attr(e.attr)}", _PRIMARY
    if isinstance(e, Agg):
        if e.attr is None:
            return f"{e.func}({_name(e.var)})", _PRIMARY
        return f"{e.func}({_name(e.var)}.{_attr(e.attr)})", _PRIMARY
    if isinstance(e, Equiv):
        value = "" if e.value is None else " = " + _lit(e.value)
        return f"[{_name(e.attr)}{value}]", _PRIMARY
    if isinstance(e, Unary):
        if e.op == "abs":
            return f"abs({_wrap(e.operand, 0)})", _PRIMARY
        # '-' directly before a number would fold into a negative literal, and '--' starts a comment
        if isinstance(e.operand, (Attr, Agg)) or (isinstance(e.operand, Unary) and e.operand.op == "abs"):
            return "-" + _expr(e.operand)[0], _NEG
        return f"-({_wrap(e.operand, 0)})", _NEG
    if isinstance(e, Arith):
        level = _ADD if e.op in "+-" else _MUL
        # left-associative: the right operand needs one level more to keep a - (b - c)
        return f"{_wrap(e.left, level)} {e.op} {_wrap(e.right, level + 1)}", level
    if isinstance(e, Cmp):
        return f"{_wrap(e.left, _ADD)} {e.op} {_wrap(e.right, _ADD)}", _CMP
    if isinstance(e, In):
        values = ", ".join(_lit(v) for v in e.values)
        kw = "NOT IN" if e.negated else "IN"
        return f"{_wrap(e.operand, _ADD)} {kw} ({values})", _CMP
    if isinstance(e, IsNull):
        kw = "IS NOT NULL" if e.negated else "IS NULL"
        return f"{_wrap(e.operand, _ADD)} {kw}", _CMP
    if isinstance(e, Not):
        return "NOT " + _wrap(e.operand, _NOT), _NOT
    if isinstance(e, BoolOp):
        level = _OR if e.op == "or" else _AND
        # the parser flattens a chain, so a nested AND in an AND (or OR in OR) keeps its parentheses
        parts = [_wrap(item, level + 1) for item in e.items]
        if len(parts) < 2:
            raise PatternValidationError(f"{e.op.upper()} needs at least two operands, got {len(parts)}")
        return f" {e.op.upper()} ".join(parts), level
    raise PatternValidationError(f"not an expression node: {e!r}")


def _wrap(e: Expr, need: int) -> str:
    text, level = _expr(e)
    return f"({text})" if level < need else text


def expr_to_text(expr: Expr) -> str:
    """Canonical text of a predicate expression.

    >>> from jitcep.pattern.expr import Arith, Attr, Lit
    >>> expr_to_text(Arith("*", Arith("+", Attr("a", "x"), Lit(1)), Lit(2)))
    '(a.x + 1) * 2'
    """
    _printable(expr)
    return _expr(expr)[0]


# --- structure --------------------------------------------------------------


def _types(types: tuple[str, ...] | None) -> str:
    if types is None:
        return "*"
    if len(types) == 1:
        return _type(types[0])
    return "ANY(" + ", ".join(_type(t) for t in types) + ")"


def _bounds(lo: int, hi: int | None) -> str:
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, None):
        return "*"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def node_to_text(node: Node) -> str:
    """Canonical text of a structure element."""
    _printable(node)
    return _node(node)


def _node(node: Node) -> str:
    if isinstance(node, EventVar):
        return f"{_types(node.types)} {_name(node.name)}"
    if isinstance(node, Neg):
        return "!" + _node(node.var)
    if isinstance(node, Kleene):
        body = node.body
        if isinstance(body, EventVar) and body.types is not None and len(body.types) == 1:
            return f"{_type(body.types[0])}{_bounds(node.min, node.max)} {_name(body.name)}[]"
        suffix = "" if (node.min, node.max) == (1, None) else _bounds(node.min, node.max)
        return f"KL({_node(body)}){suffix}"
    for cls, kw in ((Seq, "SEQ"), (Conj, "AND"), (Disj, "OR")):
        if isinstance(node, cls):
            return f"{kw}(" + ", ".join(_node(i) for i in node.items) + ")"
    raise PatternValidationError(f"not a structure node: {node!r}")


def window_to_text(window) -> str:
    if isinstance(window, TimeWindow):
        unit = "" if window.unit is None else f" {window.unit}"
        return f"WITHIN {_number(window.amount)}{unit}"
    if isinstance(window, CountWindow):
        return f"WITHIN {_number(window.n)} EVENTS"
    if isinstance(window, Unbounded):
        return "WITHIN UNBOUNDED"
    raise PatternValidationError(f"not a window: {window!r}")


def _return_item(item: ReturnItem) -> str:
    text = expr_to_text(item.expr)
    return text if item.alias is None else f"{text} AS {_name(item.alias)}"


def to_text(pattern: Pattern) -> str:
    """Canonical text of a pattern; ``parse(to_text(p)) == p`` (``p.name`` aside)."""
    lines = ["PATTERN " + node_to_text(pattern.body)]
    if pattern.where is not None:
        lines.append("WHERE " + expr_to_text(pattern.where))
    if pattern.window is not None:
        lines.append(window_to_text(pattern.window))
    if pattern.returns:
        lines.append("RETURN " + ", ".join(_return_item(r) for r in pattern.returns))
    return "\n".join(lines)
