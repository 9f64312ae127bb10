"""Exact integer RETURN arithmetic (docs/semantics.md section 4: integer results exact, NULL outside
int64) over Polars' Int128, whose arithmetic wraps modulo 2^128: a float64 twin of the result says where
the wrapped one can be trusted."""

from __future__ import annotations

import polars as pl

from ..pattern.kinds import INT64_MAX, INT64_MIN


def _int64_or_null(r: pl.Expr) -> pl.Expr:
    """An exact Int128 result as Int64, NULL outside int64 (semantics section 4)."""
    return pl.when(r.is_between(INT64_MIN, INT64_MAX)).then(r).otherwise(None).cast(pl.Int64)


_WIDE = (pl.Int128, pl.UInt128)
_WRAP_SAFE = 2.0**126
"""Below it in float64, an integer result of one operation on 128-bit operands is below 2^127 exactly (the
float's error is at most 2^-50 of it, or of its operands' sizes, below 2^129: 2^79); at or past it, past int64."""


def _int128(x: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """An integer as Int128, a UInt128 past Int128 wrapped (less 2^128): its value modulo 2^128."""
    return x.reinterpret(signed=True) if dtype == pl.UInt128 else x.cast(pl.Int128)


def _exact_int(op: str, args: tuple, dtypes: tuple) -> pl.Expr:
    """Integer ``+ - *``, ``neg`` or ``abs`` exactly, NULL outside int64 (semantics section 4).  Computed in
    Int128, whose arithmetic Polars wraps modulo 2^128: exact wherever the result lies within Int128; for
    operands of 64 bits a result that wraps (a UInt64 product past 2^127) lands outside int64, so NULL as
    it should be; with a 128-bit operand the float64 result says where it may not (2^64 * 2^64 wraps to 0)."""
    def apply(a, b=None):
        if op == "neg":
            return -a
        if op == "abs":
            return a.abs()
        return {"+": a + b, "-": a - b, "*": a * b}[op]
    wide = [_int128(x, t) for x, t in zip(args, dtypes)]
    # Polars has no Int128 negate: 0 - x
    r = _int64_or_null(pl.lit(0, dtype=pl.Int128) - wide[0] if op == "neg" else apply(*wide))
    if not any(t in _WIDE for t in dtypes):
        return r
    return pl.when(apply(*(x.cast(pl.Float64) for x in args)).abs() < _WRAP_SAFE).then(r).otherwise(None)


def _wide_sum(vals: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """The exact sum of a list of 128-bit integers as Int64, NULL outside int64 (semantics section 4): each
    member split at 2^64 (a UInt128 past Int128 wrapped, its 2^128 counted apart), the halves summed in Int128
    without wrapping for any list a run holds (fewer than 2^62 members)."""
    two64 = pl.lit(2**64, dtype=pl.Int128)
    x = vals.list.eval(_int128(pl.element(), dtype))
    hi = x.list.eval(pl.element() // two64).list.sum()
    lo = x.list.eval(pl.element() % two64).list.sum()
    if dtype == pl.UInt128:
        hi = hi + vals.list.eval((pl.element() >= pl.lit(2**127, dtype=pl.UInt128)).cast(pl.Int128)).list.sum() * two64
    h, low = hi + lo // two64, lo % two64
    below = pl.lit(2**63, dtype=pl.Int128)
    return (pl.when((h == 0) & (low < below)).then(low).when((h == -1) & (low >= below)).then(low - two64)
            .otherwise(None).cast(pl.Int64))
