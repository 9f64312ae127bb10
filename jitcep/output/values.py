"""Where the output's values come from: the input as given (by input row number, every column in its
input dtype) or the event table's decoded columns (by event position); the sources of a variable's fixed
struct fields (row, ts, type)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ..errors import MissingColumnError
from ..events import EventTable
from ..kernels.gather import take


ID_DTYPE = pl.Int64
# value sources of the fixed struct fields: not strings, so no input column's name is one
ROW, TS, TYPE = ("row",), ("ts",), ("type",)

_KIND_DTYPE = {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean, "str": pl.String}


class _Values:
    """Gathers attribute values by event-table position.

    With ``source`` (the input as given, a Polars DataFrame) values are taken
    from it by input row number, so every column keeps its input dtype; without
    it they are decoded from the event table's columns.
    """

    def __init__(self, table: EventTable, source: pl.DataFrame | None, time: str, type: str | None):
        self.table, self.source, self.time, self.type = table, source, time, type
        self.columns = None if source is None else source.columns  # a Polars call each time it is asked

    def signature(self) -> tuple:
        """What the output's layout (:func:`.layout._layout`) depends on besides the patterns."""
        if self.source is not None:
            return ("source", tuple(self.columns), self.time, self.type)
        return ("table", bool(self.table.type_names), tuple(self.table.columns), self.type)

    def has_type(self) -> bool:
        if self.source is not None:
            return self.type is not None
        return bool(self.table.type_names)

    def type_field(self) -> str:
        return self.type if self.type is not None else "type"

    def all_attrs(self) -> tuple[str, ...]:
        """Every attribute a whole-variable RETURN outputs."""
        if self.source is not None:
            return tuple(c for c in self.columns if c not in (self.time, self.type, "row"))
        return tuple(c for c in self.table.columns if c not in ("ts", "row"))

    def gather(self, attr: str, pos: np.ndarray, rows: np.ndarray | None) -> pl.Series:
        """Values of ``attr`` ("ts", the type field or an attribute) at positions ``pos`` (input rows
        ``rows``, given when there is a source)."""
        if self.source is not None:
            col = self.source_column(attr)
            if col is None:
                return pl.repeat(None, len(rows), dtype=pl.String, eager=True)
            return _take_series(self.source.get_column(col), rows)
        t = self.table
        if attr == TS:
            return pl.Series(t.ts[pos], dtype=pl.Int64).cast(t.time_dtype)
        if attr == TYPE:
            # code -1 (null type) -> the appended null at index len(type_names)
            names = pl.Series([*t.type_names, None], dtype=pl.String)
            codes = t.type_code[pos].astype(np.int64)
            return names.gather(np.where(codes < 0, len(t.type_names), codes))
        c = t.column(attr)  # an input column or the virtual ``type`` (EventTable.column)
        if c.kind == "str":
            return c.strings_at(pos)
        s = pl.Series(c.values[pos], dtype=_KIND_DTYPE[c.kind])
        if c.valid is not None:
            s = pl.select(pl.when(pl.lit(pl.Series(c.valid[pos]))).then(s)).to_series()
        return s

    def source_column(self, attr: str) -> str | None:
        """The input column holding ``attr``'s values (None: the type of an input without a type column,
        all null); MissingColumnError when the input has no such column."""
        if attr == "type" and "type" not in self.columns:
            attr = TYPE  # the type pseudo-attribute: the event's type name
        if attr == TYPE and self.type is None:
            return None
        col = {TS: self.time, TYPE: self.type}.get(attr, attr)
        if col not in self.columns:
            raise MissingColumnError(f"column {col!r} is not in the input; columns: {self.columns}")
        return col


def _take_series(s: pl.Series, rows: np.ndarray) -> pl.Series:
    """``s`` at ``rows``: a numeric or temporal column without nulls by one compiled gather over its
    physical values (zero-copy in and out), anything else by indexing the series with ``rows``."""
    dtype = s.dtype
    number = (dtype.is_integer() and dtype not in (pl.Int128, pl.UInt128)) or dtype.is_float()  # NumPy has no 128
    if (number or dtype.is_temporal()) and s.null_count() == 0:
        # a number is its own physical value; a temporal one's by a cast (``to_physical`` is a Polars query,
        # ~60 us, a fixed cost)
        phys = s if number else s.cast(pl.Int32 if dtype == pl.Date else pl.Int64)
        out = pl.Series(s.name, take(phys.to_numpy(), rows), dtype=phys.dtype)
        return out if number else out.cast(dtype)
    return s[rows]  # indexing by an array takes eagerly; ``gather`` is a Polars query (its pool), ~0.3 ms more
