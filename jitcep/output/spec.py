"""What each pattern outputs: its variables' columns (single or list, the type field, the attributes it
reads, a whole variable) and its RETURN items with their column names (docs/semantics.md section 10 for
the names; the module docstring of :mod:`jitcep.output` for the columns)."""

from __future__ import annotations

from dataclasses import dataclass

from .._memo import PerObject
from ..errors import PatternValidationError, UnsupportedPatternError
from ..pattern import ast
from ..pattern import expr as ex


@dataclass(frozen=True)
class _VarSpec:
    name: str
    is_list: bool
    with_type: bool            # carries the type column (several types accepted)
    attrs: tuple[str, ...]     # attribute fields after row / ts / type
    whole: bool                # RETURN names the whole variable: every input column


@dataclass(frozen=True)
class _PatternSpec:
    vars: tuple[_VarSpec, ...]
    returns: tuple[tuple[str, ex.Expr], ...]   # (column name, expression)


def _ordered_union(*seqs) -> tuple:
    seen: dict = {}
    for s in seqs:
        for x in s:
            seen.setdefault(x, None)
    return tuple(seen)


def _return_name(item: ast.ReturnItem, k: int) -> str:
    """Default column name of a RETURN item: ``avg_c_price``, ``count_c``, ``a_price``, ``c_1_price``."""
    if item.alias:
        return item.alias
    e = item.expr
    if isinstance(e, ex.Agg):
        return f"{e.func}_{e.var}" + (f"_{e.attr}" if e.attr else "")
    if isinstance(e, ex.Attr):
        idx = "" if e.index in (None, "i") else f"_{'last' if e.index == 'len' else e.index}"
        return f"{e.var}{idx}_{e.attr}"
    return f"return_{k}"


def _compute_spec(p: ast.Pattern) -> _PatternSpec:
    positive = ast.positive_vars(p.body)
    lists = set(ast.kleene_vars(p.body))
    types = {v.name: v.types for v in ast.event_vars(p.body)}
    reads: dict[str, list[str]] = {v: [] for v in positive}
    equiv: list[str] = []
    whole: set[str] = set()

    def note(e: ex.Expr):
        for n in ex.walk(e):
            if isinstance(n, ex.Attr) and n.var in reads and n.attr not in ("ts", "*"):
                reads[n.var].append(n.attr)
            elif isinstance(n, ex.Agg) and n.var in reads and n.attr is not None and n.attr != "ts":
                reads[n.var].append(n.attr)
            elif isinstance(n, ex.Equiv):
                equiv.append(n.attr)

    if p.where is not None:
        note(p.where)
    returns: list[tuple[str, ex.Expr]] = []
    for k, item in enumerate(p.returns):
        e = item.expr
        if isinstance(e, ex.Attr) and e.attr == "*":
            if e.var not in reads:
                raise PatternValidationError(f"RETURN {e.var}: not a positive variable of the pattern")
            whole.add(e.var)
            continue
        note(e)
        returns.append((_return_name(item, k), e))
    names = [n for n, _ in returns]
    clash = sorted({n for n in names if names.count(n) > 1 or n in reads or n in ("match_id", "pattern")})
    if clash:
        raise PatternValidationError(
            f"RETURN column name(s) {', '.join(clash)} clash with another output column; add AS aliases")
    specs = []
    for v in positive:
        t = types[v]
        attrs = tuple(a for a in _ordered_union(equiv, reads[v]) if a not in ("ts",))
        bad = [a for a in attrs if a == "row"]
        if bad:
            raise UnsupportedPatternError(
                f"variable {v} reads an attribute named 'row', which is reserved for the input row number")
        specs.append(_VarSpec(v, v in lists, t is None or len(t) > 1, attrs, v in whole))
    return _PatternSpec(tuple(specs), tuple(returns))


_pattern_spec = PerObject(_compute_spec)  # an analyst reruns one query (jitcep._memo)
