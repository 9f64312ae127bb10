"""The output's layout over several patterns (docs/semantics.md section 10): a variable name several
patterns use shares one column (the union of their struct fields), a RETURN name shares one column when
its values are of one kind in a dtype that holds them all exactly; the layout kept per patterns and input
schema, so a rerun lays out its output once."""

from __future__ import annotations

import polars as pl

from .._memo import PerObjectAndKey
from ..errors import UnsupportedPatternError
from .columns import _fields
from .spec import _PatternSpec, _pattern_spec
from .values import _Values


def _unify(specs: list[_PatternSpec], values: _Values) -> dict[str, tuple[bool, tuple]]:
    """Variable name -> (is_list, struct fields), merged over all patterns.

    A name used by several patterns shares one column whose struct holds the
    union of their fields; a name that is a list in one pattern and single in
    another, or a RETURN name in another, cannot share a column (semantics section 10).
    """
    out: dict[str, tuple[bool, tuple]] = {}
    for spec in specs:
        for v in spec.vars:
            f = _fields(v, values)
            if v.name in out:
                is_list, prev = out[v.name]
                if is_list != v.is_list:
                    raise UnsupportedPatternError(
                        f"variable {v.name} is a Kleene list in one pattern and a single event in another; "
                        "rename it in one of them")
                # by field name: a name holds the same values whichever source a pattern reads them from
                # (the type field of ``* a`` and ``a.type`` of another pattern)
                names = {name for name, _ in prev}
                f = prev + tuple(field for field in f if field[0] not in names)
            out[v.name] = (v.is_list, f)
    for spec in specs:
        for name, _ in spec.returns:
            if name in out:
                raise UnsupportedPatternError(
                    f"{name!r} is a variable in one pattern and a RETURN name in another; rename it in one of them")
    return out


def _check_shared_returns(specs: list[_PatternSpec], frames: list[pl.DataFrame]) -> None:
    """A RETURN name several patterns give shares one column when its values are of one kind (semantics
    section 10): Polars' relaxed concatenation would otherwise turn numbers into strings or Booleans into
    numbers.  Every pair of the name's dtypes is judged, whatever the patterns' order: the column's
    dtype is the supertype of them all."""
    seen: dict[str, list[tuple[int, pl.DataType]]] = {}
    for k, (spec, df) in enumerate(zip(specs, frames)):
        for name, _ in spec.returns:
            dtype = df.schema[name]
            before = seen.setdefault(name, [])
            for j, prev in before:
                if not _one_kind(prev, dtype):
                    raise UnsupportedPatternError(
                        f"RETURN {name!r} is {prev} in pattern {j} and {dtype} in pattern {k}: one column holds "
                        f"one kind of value, in a dtype that holds every one exactly; rename it in one of them")
            before.append((k, dtype))


def _one_kind(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether values of dtypes ``a`` and ``b`` share a column: one dtype, numbers (Polars' supertype) unless
    no integer or decimal dtype holds both exactly, nulls only, or lists of such."""
    if a == b or a == pl.Null or b == pl.Null:
        return True
    if a.is_numeric() and b.is_numeric():
        return a.is_float() or b.is_float() or not (_past_128(a, b) or _past_128(b, a) or _past_38_digits(a, b))
    return isinstance(a, pl.List) and isinstance(b, pl.List) and _one_kind(a.inner, b.inner)


def _past_128(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether Polars' supertype of ``a`` and ``b`` rounds or drops values of ``a``: a UInt128 beside a signed
    integer (Int128 is the widest)."""
    return a == pl.UInt128 and b.is_signed_integer()


# the decimal digits left of the point an integer dtype's values need (Int128's 39 past any Decimal's 38)
_INT_DIGITS = {pl.Int8: 3, pl.Int16: 5, pl.Int32: 10, pl.Int64: 19, pl.Int128: 39,
               pl.UInt8: 3, pl.UInt16: 5, pl.UInt32: 10, pl.UInt64: 20, pl.UInt128: 39}
_DECIMAL_DIGITS = 38  # Decimal(38, s), Polars' widest, holds 38 - s digits left of the point


def _past_38_digits(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether a decimal beside an integer or another decimal needs more digits than any Decimal holds: the
    most digits left of the point of either plus the larger scale (Polars' supertype, Decimal(38, s) or
    narrower, then fails on the values past it)."""
    if not (a.is_decimal() or b.is_decimal()):
        return False

    def digits(d: pl.DataType) -> tuple[int, int]:
        if d.is_decimal():
            p, s = d.precision or _DECIMAL_DIGITS, d.scale or 0
            return p - s, s
        return _INT_DIGITS[d.base_type()], 0
    (ia, sa), (ib, sb) = digits(a), digits(b)
    return max(ia, ib) + max(sa, sb) > _DECIMAL_DIGITS


# per patterns (by their ids, holding them): the input's signature -> the layout, a few schemas each
_LAYOUTS = PerObjectAndKey(keep=8, ident=lambda patterns: tuple(map(id, patterns)))


def _layout(patterns, values: _Values) -> tuple[list[_PatternSpec], dict[str, tuple[bool, tuple]]]:
    """(each pattern's spec, the unified variable columns :func:`_unify`): a function of the patterns and
    the input's columns (:meth:`.values._Values.signature`), kept per both, so a rerun on input of one schema
    lays out its output once; another schema (columns, time or type column) lays it out afresh.
    Keyed by the patterns' ids, holding them, so an id is not reused while its entry lives."""
    def make():
        specs = [_pattern_spec(p) for p in patterns]
        return specs, _unify(specs, values)
    return _LAYOUTS(tuple(patterns), values.signature(), make)
