"""Predicate interpretation with SQL three-valued logic (docs/semantics.md §4).

``compile_expr`` turns an expression tree into a Python closure over a
:class:`Ctx` once per pattern, so the brute-force search does not re-dispatch
on node types for every candidate; the closures follow the tree one to one.
A value is a Python scalar or ``None`` (SQL NULL); a boolean result is
``True``, ``False`` or ``None`` (unknown).

Kinds are :mod:`jitcep.pattern.kinds`' (the checker every engine shares):
``events.check_types`` applies it to the table's columns before any match is
searched; here each operation asks it again about the values it meets
(:func:`_checked`), so a closure used on its own refuses a misuse the same way.
"""

from __future__ import annotations

from typing import Callable

from ..errors import AttributeTypeError, PatternValidationError
from ..pattern import kinds
from ..pattern.expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary


class Ctx:
    """What an expression reads: the event table, the binding, the current Kleene iterations.

    ``binding[v]`` is a position (single variable), a list/tuple of positions
    (Kleene variable) or None (unbound).  ``it[k]`` is the 0-based iteration of
    Kleene construct ``k`` that ``b[i]`` / plain ``b.x`` refer to; ``kid[v]``
    maps a list variable to its construct.
    """

    __slots__ = ("table", "binding", "it", "kid")

    def __init__(self, table, binding: dict, kid: dict[str, int]):
        self.table = table
        self.binding = binding
        self.it: dict[int, int] = {}
        self.kid = kid


Fn = Callable[[Ctx], object]


def _checked(op: str, *values) -> None:
    """Raise AttributeTypeError unless ``op`` accepts the (non-null) ``values``' kinds (§4)."""
    found = tuple(kinds.value_kind(v) for v in values)
    try:
        kinds.result_kind(op, *found)
    except AttributeTypeError:  # again, naming the values: their reprs are built only for the message
        kinds.result_kind(op, *found, shown=tuple(f"{kinds.noun(k)} value ({v!r})" for k, v in zip(found, values)))
        raise


_CMP = {
    "=": lambda x, y: x == y, "!=": lambda x, y: x != y,
    "<": lambda x, y: x < y, "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y, ">=": lambda x, y: x >= y,
}


def compare(op: str, x, y):
    """``x op y`` with NULL propagation and kind checking (§4)."""
    if x is None or y is None:
        return None
    _checked(op, x, y)
    return _CMP[op](x, y)




def int64_or_null(v):
    """An integer result outside int64 is NULL (§4); floats pass through."""
    if isinstance(v, int) and not kinds.INT64_MIN <= v <= kinds.INT64_MAX:
        return None
    return v


def arith(op: str, x, y):
    """``x op y`` over numbers (§4): NULL in -> NULL out; ``x / 0`` is NULL; integer
    results exact, NULL outside int64; ``/`` divides the operands as float64."""
    if x is None or y is None:
        return None
    _checked(op, x, y)
    if op == "+":
        return int64_or_null(x + y)
    if op == "-":
        return int64_or_null(x - y)
    if op == "*":
        return int64_or_null(x * y)
    if y == 0:
        return None
    # Python divides two ints exactly and rounds once; float64 operands are what §4 divides
    return float(x) / float(y)


def float_sum(vals) -> float:
    """Float64 values added one by one in list order (§4; Python 3.12's sum() compensates)."""
    t = 0.0
    for v in vals:
        t += float(v)
    return t


def _fold3(values, dominant: bool) -> bool | None:
    """Three-valued fold: ``dominant`` wins outright, then NULL, else ``not dominant``."""
    unknown = False
    for v in values:
        if v is dominant:
            return dominant
        if v is None:
            unknown = True
    return None if unknown else not dominant


def and3(values) -> bool | None:
    """Kleene AND (§4): FALSE dominates, then NULL."""
    return _fold3(values, False)


def or3(values) -> bool | None:
    """Kleene OR (§4): TRUE dominates, then NULL."""
    return _fold3(values, True)


def _truth(v):
    """``v`` as a condition: TRUE, FALSE or NULL (§4)."""
    if v is not None:
        _checked("condition", v)
    return v


def value_at(table, attr: str, p: int):
    """Attribute ``attr`` of the event at position p (``ts`` and ``type`` always exist: EventTable.column);
    MissingColumnError for any other name the table lacks."""
    return table.value(attr, p)


def _member(ctx: Ctx, var: str, index):
    """Position of the member of list variable ``var`` selected by ``index`` (None if absent)."""
    members = ctx.binding[var]
    if members is None:
        return None
    if index is None or index == "i":
        return members[ctx.it[ctx.kid[var]]]
    if index == "i-1":
        j = ctx.it[ctx.kid[var]] - 1
        return members[j] if j >= 0 else None
    if index == "len":
        return members[-1] if members else None
    k = int(index)
    return members[k - 1] if 1 <= k <= len(members) else None


def compile_expr(expr: Expr, list_vars: frozenset[str]) -> Fn:
    """Closure evaluating ``expr``; ``list_vars`` are the variables bound to lists.

    One compiler per node kind (:data:`_COMPILERS`), each writing §4's rule for its kind; the closures
    they return call each other as the tree nests, one frame per level (the search evaluates them at its
    bottom: config.MAX_NESTING)."""
    compile_node = _COMPILERS.get(type(expr))
    if compile_node is not None:
        return compile_node(expr, list_vars)
    if isinstance(expr, Equiv):
        raise PatternValidationError("an equivalence test [attr] is allowed only as a top-level conjunct of WHERE")
    raise PatternValidationError(f"unknown expression node {type(expr).__name__}")


def _literal(expr: Lit, list_vars) -> Fn:
    v = expr.value
    return lambda ctx: v


def _attribute(expr: Attr, list_vars) -> Fn:
    """``v.x`` of a single variable, or of the member of list variable ``v`` its index selects
    (:func:`_member`); NULL when the variable (or that member) is unbound."""
    var, attr, index = expr.var, expr.attr, expr.index
    if var in list_vars:
        def f(ctx):
            p = _member(ctx, var, index)
            return None if p is None else value_at(ctx.table, attr, p)
        return f

    def g(ctx):
        p = ctx.binding[var]
        return None if p is None else value_at(ctx.table, attr, p)
    return g


def _aggregate(expr: Agg, list_vars) -> Fn:
    """``count(v)`` / ``sum|avg|min|max(v.x)`` over a list's members (SASE+ section 2; §4): NULL values
    left out, NULL over no value; an integer sum exact (NULL outside int64), else float64 in list order."""
    func, var, attr = expr.func, expr.var, expr.attr

    def agg(ctx):
        members = ctx.binding[var] or ()
        if func == "count":
            return len(members)
        vals = [value_at(ctx.table, attr, p) for p in members]
        vals = [v for v in vals if v is not None]
        for v in vals:
            _checked(func, v)
        if not vals:
            return None
        if func == "sum":
            return int64_or_null(sum(vals)) if all(isinstance(v, int) for v in vals) else float_sum(vals)
        if func == "avg":
            return float_sum(vals) / len(vals)
        return min(vals) if func == "min" else max(vals)
    return agg


def _arithmetic(expr: Arith, list_vars) -> Fn:
    op, lf, rf = expr.op, compile_expr(expr.left, list_vars), compile_expr(expr.right, list_vars)
    return lambda ctx: arith(op, lf(ctx), rf(ctx))


def _unary(expr: Unary, list_vars) -> Fn:
    """``-x`` (as ``-1 * x``: NULL stays NULL, a non-number raises) and ``abs(x)`` (NULL outside int64)."""
    of = compile_expr(expr.operand, list_vars)
    if expr.op == "neg":
        return lambda ctx: arith("*", -1, of(ctx))

    def absf(ctx):
        v = of(ctx)
        if v is None:
            return None
        _checked("abs", v)
        return int64_or_null(abs(v))
    return absf


def _comparison(expr: Cmp, list_vars) -> Fn:
    op, lf, rf = expr.op, compile_expr(expr.left, list_vars), compile_expr(expr.right, list_vars)
    return lambda ctx: compare(op, lf(ctx), rf(ctx))


def _boolean(expr: BoolOp, list_vars) -> Fn:
    """AND / OR in three-valued logic (:func:`_fold3`), its operands evaluated lazily, left to right."""
    fns = [compile_expr(e, list_vars) for e in expr.items]
    dominant = expr.op == "or"  # TRUE decides an OR, FALSE an AND

    def boolop(ctx):
        # _fold3 over the operands, evaluated lazily in this one frame: a predicate nests up to
        # config.MAX_NESTING levels and is evaluated at the bottom of the search (config)
        unknown = False
        for f in fns:
            v = _truth(f(ctx))
            if v is dominant:
                return dominant
            if v is None:
                unknown = True
        return None if unknown else not dominant
    return boolop


def _not(expr: Not, list_vars) -> Fn:
    of = compile_expr(expr.operand, list_vars)

    def notf(ctx):
        v = _truth(of(ctx))
        return None if v is None else not v
    return notf


def _membership(expr: In, list_vars) -> Fn:
    """``x [NOT] IN (...)``: an OR of ``x = v`` over the list (so NULL when none is TRUE and one is NULL)."""
    of = compile_expr(expr.operand, list_vars)
    vals = tuple(lit.value for lit in expr.values)
    negated = expr.negated

    def inf(ctx):
        x = of(ctx)
        r = or3(compare("=", x, v) for v in vals)
        return r if (r is None or not negated) else not r
    return inf


def _null_test(expr: IsNull, list_vars) -> Fn:
    of = compile_expr(expr.operand, list_vars)
    negated = expr.negated
    return lambda ctx: (of(ctx) is None) != negated


#: the compiler of each expression node kind (:func:`compile_expr`); ``[attr]`` has none: it stands only as
#: a top-level conjunct, which :mod:`.analysis` reads as an equality across the variables, never as a value
_COMPILERS: dict[type, Callable[[Expr, frozenset[str]], Fn]] = {
    Lit: _literal, Attr: _attribute, Agg: _aggregate, Arith: _arithmetic, Unary: _unary, Cmp: _comparison,
    BoolOp: _boolean, Not: _not, In: _membership, IsNull: _null_test,
}
