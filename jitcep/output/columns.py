"""A pattern's variable columns in the wide shape: each variable's struct (row, ts, the type field, its
attributes) or list of structs, every field gathered once for all the variables and sliced per
variable, read in place where the match table already holds the rows or times."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..errors import UnsupportedPatternError
from ..kernels.gather import input_rows
from ..matches import MatchTable
from .lists import _arrow_carries, _lists_by_arrow, _lists_by_groups
from .spec import _ordered_union, _VarSpec
from .values import ID_DTYPE, ROW, TS, TYPE, _Values


def _frame(series: list[pl.Series]) -> pl.DataFrame:
    """``pl.DataFrame(series)`` (named, equal lengths) in a fifth of its Python calls: a small run's
    output makes several (perf/notes/opencep.md, "Fewer Python/Polars calls a warm run on small tables")."""
    if not series:
        return pl.DataFrame()
    return series[0].to_frame().hstack(series[1:]) if len(series) > 1 else series[0].to_frame()


def _fields(v: _VarSpec, values: _Values) -> tuple[tuple[str, str], ...]:
    """(field name, value source) pairs of a variable's struct, in output order."""
    out = [("row", ROW), ("ts", TS)]
    if v.with_type and values.has_type():
        if values.type_field() in ("row", "ts"):
            raise UnsupportedPatternError(
                f"variable {v.name} accepts several types, so its struct holds the type column "
                f"{values.type_field()!r} beside its own 'row' and 'ts' fields; rename the type column")
        out.append((values.type_field(), TYPE))
    attrs = _ordered_union(v.attrs, values.all_attrs() if v.whole else ())
    taken = {f for f, _ in out}
    out += [(a, a) for a in attrs if a not in taken]
    return tuple(out)


def _var_columns(vars_, unified, values: _Values, mt: MatchTable) -> list[pl.Series]:
    """The output column of each variable of one pattern: a struct, or a list of structs.

    Every field's values are gathered once for all the variables (their event
    positions end to end) and sliced per variable: at small inputs a Polars
    call per field per variable was the fixed cost of a run.
    """
    positions = [mt.lists[v.name][1][:mt.lists[v.name][0][-1]] if v.is_list else mt.single[v.name] for v in vars_]
    starts = np.cumsum([0] + [len(p) for p in positions])
    # every variable's positions end to end (unbound: 0, masked below) and their input rows, one pass each
    table = values.table
    rows = _rows_in_place(vars_, mt) if table.row_map() is None else None
    every_bound = rows is not None  # _rows_in_place found no unbound position
    if rows is None:
        rows = input_rows(positions, table.row_map(), table.n)
    every = rows if values.source is not None or table.row_map() is None else input_rows(positions, None, table.n)
    srcs = list(dict.fromkeys(src for v in vars_ for _, src in unified[v.name][1] if src != ROW))
    # one Series per source column, by a compiled take where it can (a frame gather runs on Polars' thread
    # pool, which a forked child does not have: it would wait forever, tests/test_threads.py)
    times = _times_in_place(vars_, mt, values) if TS in srcs else None
    gathered = {src: times if src == TS and times is not None else values.gather(src, every, rows) for src in srcs}
    gathered[ROW] = pl.Series("row", rows, dtype=ID_DTYPE)  # named: ~half the calls of an unnamed one
    frames: dict[tuple, pl.DataFrame] = {}  # per field list: every field, all variables end to end
    out = []
    for v, lo, hi in zip(vars_, starts[:-1], starts[1:]):
        fields = unified[v.name][1]
        if fields not in frames:
            frames[fields] = _frame([_named(gathered[src], name) for name, src in fields])
        # a slice of a frame and one struct of it: a DataFrame per variable was the fixed cost at small inputs
        s = frames[fields].slice(int(lo), int(hi - lo)).to_struct(v.name)
        if v.is_list:
            # A list variable of an OR branch not taken is null, not [] (which means
            # "bound, no member", e.g. T* v[] matched zero events).
            unbound = mt.list_unbound.get(v.name)
            unbound = unbound if unbound is not None and unbound.any() else None
            off = mt.lists[v.name][0]
            lists = _lists_by_arrow if _arrow_carries(s.dtype) else _lists_by_groups
            s = lists(s, off, unbound)
        elif not every_bound:
            bound = mt.single[v.name] >= 0
            if not bound.all():
                s = pl.select(pl.when(pl.lit(pl.Series(bound))).then(s).alias(v.name)).to_series()
        out.append(s)
    return out


def _named(s: pl.Series, name: str) -> pl.Series:
    """``s`` named ``name`` (an alias is a copy and a rename: ~6 calls, where the name is mostly the
    gathered column's own)."""
    return s if s.name == name else s.alias(name)


def _rows_in_place(vars_, mt: MatchTable) -> np.ndarray | None:
    """The input rows of every variable's positions end to end, uncopied, or None.

    With sorted input a position is its input row; a final join's match table holds its columns as the
    rows of one matrix (``MatchTable.block``), so when the variables are those rows in that order and
    none is unbound, the matrix read end to end is the rows: 8 bytes a match and variable that are not
    written again (6.65M matches of 3 variables: 160 MB of fresh pages, perf/notes/output_and_core.md).
    Whether one is unbound the kernel that wrote the matrix may have said (``MatchTable.bound``).
    """
    block = mt.block
    if block is None or any(v.is_list for v in vars_) or [v.name for v in vars_] != list(mt.single):
        return None
    flat = block.reshape(-1)  # C-ordered: a view
    return flat if mt.bound or not len(flat) or flat.min() >= 0 else None


def _times_in_place(vars_, mt: MatchTable, values: _Values) -> pl.Series | None:
    """The time field of every variable's positions end to end as the final join wrote it beside its
    rows (``MatchTable.times``: the event table's ts), or None.  Only where those values are the time
    column's own: an Int64 column (its values as they are) or a Datetime (its physical values, in its
    unit, whatever its zone); a column of any other type is gathered at the positions (its values differ
    from the table's ts)."""
    if mt.times is None or any(v.is_list for v in vars_) or [v.name for v in vars_] != list(mt.single):
        return None
    table = values.table
    dtype = table.time_dtype if values.source is None else values.source.schema[values.time]
    if dtype != table.time_dtype or not (dtype == pl.Int64 or isinstance(dtype, pl.Datetime)):
        return None
    s = pl.Series(values.time, mt.times.reshape(-1), dtype=pl.Int64)  # C-ordered: a view
    return s if dtype == pl.Int64 else s.cast(dtype)
