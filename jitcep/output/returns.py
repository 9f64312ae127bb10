"""RETURN expressions translated to Polars expressions over the wide frame's struct columns, numbers,
comparisons and aggregates as docs/semantics.md section 4 has them (as WHERE reads them), the operands'
dtypes read off the frame, which may have no rows."""

from __future__ import annotations

import polars as pl

from ..errors import UnsupportedPatternError
from ..pattern import expr as ex
from .int128 import _WIDE, _exact_int, _int64_or_null, _wide_sum


def _return_expr(e: ex.Expr, lists: set[str], kindless: set[str], frame: pl.DataFrame,
                 floats: frozenset[str] = frozenset()) -> pl.Expr:
    """A RETURN expression as a Polars expression over the wide frame's struct columns.

    Numbers follow semantics section 4 as predicates do: integer results exact and
    NULL outside int64 (computed in Int128), ``/`` on Float64 operands and NULL for
    a zero divisor, float sums added in list order.  ``frame`` (the wide columns,
    possibly empty) gives the operands' dtypes; ``floats``: integer attributes read as
    float64 (an integer column holding a value past int64, section 4).
    """
    def rec(x):
        r = _return_expr(x, lists, kindless, frame, floats)
        if isinstance(x, (ex.Attr, ex.Agg)) and x.attr == "ts" and _dtype(r, frame).is_temporal():
            # inside an expression a.ts is a number in time-column units (section 4), as in WHERE: a Date's
            # or Datetime's physical value; a bare a.ts item keeps the time column's dtype
            r = r.to_physical()
        return r

    if isinstance(e, ex.Lit):  # an integer is an int64 (section 4), not Polars' Int32 for a small literal
        return pl.lit(e.value, dtype=pl.Int64) if type(e.value) is int else pl.lit(e.value)
    if isinstance(e, ex.Attr):
        one = e.var not in lists or e.index not in (None, "i")  # one value, not a list of members' values
        return _as_float(_attr_expr(e, lists, kindless, frame), one and e.attr in floats)
    if isinstance(e, ex.Agg):
        return _agg_expr(e, lists, kindless, frame, floats)
    if isinstance(e, ex.Arith):
        a, b = rec(e.left), rec(e.right)
        if e.op == "/":
            a, b = a.cast(pl.Float64), b.cast(pl.Float64)
            return pl.when(b != 0).then(a / b).otherwise(None)
        (a, ta), (b, tb) = _decimal_as_float(a, frame), _decimal_as_float(b, frame)
        if ta.is_integer() and tb.is_integer():
            return _exact_int(e.op, (a, b), (ta, tb))
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    if isinstance(e, ex.Unary):
        x, t = _decimal_as_float(rec(e.operand), frame)
        if t == pl.Null:
            return x  # no kind: NULL stays NULL (Polars has no neg / abs of its Null dtype)
        if t.is_integer():
            return _exact_int(e.op, (x,), (t,))
        return -x if e.op == "neg" else x.abs()
    if isinstance(e, (ex.Cmp, ex.In)) and any(isinstance(a, ex.Attr) and a.attr in kindless for a in ex.walk(e)):
        return pl.lit(None, dtype=pl.Boolean)  # NULL (section 4); a number column of nulls may meet a string
    if isinstance(e, ex.Cmp):
        return _compare(e.op, rec(e.left), rec(e.right), frame)
    if isinstance(e, ex.BoolOp):
        items = [rec(i) for i in e.items]
        return pl.all_horizontal(items) if e.op == "and" else pl.any_horizontal(items)
    if isinstance(e, ex.Not):
        return ~rec(e.operand)
    if isinstance(e, ex.In):
        # `=` with each listed value, OR'ed in three-valued logic: TRUE if one is equal, else NULL if the
        # operand or an item is NULL (section 4); Polars' is_in neither mixes ints and floats nor gives NULL
        x = rec(e.operand)
        found = pl.any_horizontal([_compare("=", x, pl.lit(v.value), frame) for v in e.values])
        return ~found if e.negated else found
    if isinstance(e, ex.IsNull):
        x = rec(e.operand)
        return x.is_not_null() if e.negated else x.is_null()
    raise UnsupportedPatternError(f"RETURN cannot compute {type(e).__name__}")


def _decimal_as_float(x: pl.Expr, frame: pl.DataFrame) -> tuple[pl.Expr, pl.DataType]:
    """An arithmetic operand and its dtype, a decimal as float64 (semantics section 4), as ``sum`` and ``avg``
    read one: Polars' Decimal arithmetic raises where a result passes its precision."""
    dtype = _dtype(x, frame)
    return (x.cast(pl.Float64), pl.Float64()) if dtype.is_decimal() else (x, dtype)


def _dtype(x: pl.Expr, frame: pl.DataFrame) -> pl.DataType:
    """The dtype of ``x`` over the wide frame's columns (evaluated on none of its rows)."""
    return frame.head(0).select(x).dtypes[0]


def _attr_expr(e: ex.Attr, lists: set[str], kindless: set[str], frame: pl.DataFrame) -> pl.Expr:
    """``v.attr`` (``ts`` is the struct's ts field), ``c[k].attr`` / ``c[len].attr`` of a Kleene variable, or
    a Kleene variable's ``c.attr``: the list of its members' values (only ever a bare item)."""
    field, col = e.attr, pl.col(e.var)
    if e.var not in lists:
        if e.index not in (None,):
            raise UnsupportedPatternError(f"RETURN: {e.var} is not a Kleene variable and cannot be indexed")
        return _no_kind(col.struct.field(field), field in kindless, frame)
    if e.index in (None, "i"):
        return col.list.eval(pl.element().struct.field(field))
    if e.index == "i-1":
        raise UnsupportedPatternError("RETURN cannot use the iterative index [i-1]")
    at = -1 if e.index == "len" else int(e.index) - 1
    return _no_kind(col.list.get(at, null_on_oob=True).struct.field(field), field in kindless, frame)


def _agg_expr(e: ex.Agg, lists: set[str], kindless: set[str], frame: pl.DataFrame,
              floats: frozenset[str] = frozenset()) -> pl.Expr:
    """``count`` / ``sum`` / ``avg`` / ``min`` / ``max`` over a Kleene variable's members (semantics section 4:
    NULL where no member has a value, integer sums exact, float sums in list order, strings by text)."""
    if e.var not in lists:
        raise UnsupportedPatternError(f"RETURN {e.func}({e.var}): {e.var} is not a Kleene variable")
    if e.func == "count":
        return pl.col(e.var).list.len().cast(pl.Int64)
    vals = pl.col(e.var).list.eval(_as_float(pl.element().struct.field(e.attr), e.attr in floats))
    if e.func in ("min", "max"):
        dtype = _dtype(vals.list.first(), frame)
        coded = isinstance(dtype, (pl.Enum, pl.Categorical))
        if coded:  # strings by their text (section 4), not the Enum's or Categorical's category order
            vals = vals.list.eval(pl.element().cast(pl.String))
        m = vals.list.min() if e.func == "min" else vals.list.max()
        return _no_kind(m.cast(dtype) if coded else m, e.attr in kindless, frame)
    present = vals.list.drop_nulls().list.len()  # no non-null member: NULL, as in SQL (section 4)
    if e.attr == "ts":  # a number in time-column units (section 4): a Date's or Datetime's physical value
        vals = vals.list.eval(pl.element().to_physical())
    member = _dtype(vals.list.first(), frame)
    if e.func == "sum" and member.is_integer():
        total = (_wide_sum(vals, member) if member in _WIDE
                 else _int64_or_null(vals.list.eval(pl.element().cast(pl.Int128)).list.sum()))
        return pl.when(present > 0).then(total).otherwise(None)
    # in list order, one addition at a time (Polars' own float sum is pairwise)
    total = vals.list.eval(pl.element().drop_nulls().cast(pl.Float64).cum_sum()).list.last()
    return total if e.func == "sum" else total / present


_CONDITIONS = (ex.Cmp, ex.In, ex.IsNull, ex.BoolOp, ex.Not)
_CMP = {"=": pl.Expr.eq, "!=": pl.Expr.ne, "<": pl.Expr.lt, "<=": pl.Expr.le, ">": pl.Expr.gt, ">=": pl.Expr.ge}


def _compare(op: str, a: pl.Expr, b: pl.Expr, frame: pl.DataFrame) -> pl.Expr:
    """``a op b``; an int and a float by their exact values (semantics section 4), where Polars rounds the
    int to a float: rounding is monotonic, so the floats decide where they differ, and where they are
    equal the float is a whole number and both compare exactly as Int128."""
    cmp = _CMP[op]
    ta, tb = frame.head(0).select(a.alias("l"), b.alias("r")).dtypes
    if isinstance(ta, (pl.Enum, pl.Categorical)) or isinstance(tb, (pl.Enum, pl.Categorical)):
        # strings by their text: an Enum orders by its categories, and Polars compares neither an Enum
        # with a Categorical nor with a string outside its categories
        return cmp(a.cast(pl.String), b.cast(pl.String))
    if isinstance(ta, pl.Datetime) and isinstance(tb, pl.Datetime) and ta.time_zone != tb.time_zone:
        # instants in two zones (a zone-less one with a zoned one is refused before, section 4)
        return cmp(a.dt.convert_time_zone("UTC"), b.dt.convert_time_zone("UTC"))
    if not ((ta.is_integer() and tb.is_float()) or (ta.is_float() and tb.is_integer())):
        out = cmp(a, b)
    else:
        fa, fb = a.cast(pl.Float64), b.cast(pl.Float64)
        exact = cmp(a.cast(pl.Int128, strict=False), b.cast(pl.Int128, strict=False))
        out = pl.when(fa != fb).then(cmp(fa, fb)).otherwise(exact)
    nans = [x.is_nan() for x, t in ((a, ta), (b, tb)) if t.is_float()]
    if not nans:
        return out
    # NaN compares FALSE with every value, itself too, and != TRUE (section 4): Polars' NaN equals NaN and
    # orders above every number; a NULL operand keeps the comparison NULL
    nan = pl.any_horizontal(nans) & a.is_not_null() & b.is_not_null()
    return pl.when(nan).then(pl.lit(op == "!=")).otherwise(out)


def _as_float(x: pl.Expr, floated: bool) -> pl.Expr:
    """An integer attribute's value as WHERE reads it: float64 (the nearest value) for an integer column
    holding a value past int64 (semantics section 4), ``floated``; else as it is."""
    return x.cast(pl.Float64) if floated else x


def _no_kind(x: pl.Expr, kindless: bool, frame: pl.DataFrame) -> pl.Expr:
    """An operand read from an attribute with no value in the table: it has no kind, so every operation on
    it is NULL (semantics section 4).  A column of nulls other than a number becomes Polars' Null dtype,
    which every operation takes, so ``0 + a.s`` does not meet Polars' String + Int check (nor ``a.t + 1``
    its Datetime one); numbers keep their dtype, so arithmetic over them keeps one schema."""
    if kindless and not _dtype(x, frame).is_numeric():
        return x.cast(pl.Null)
    return x
