"""A list variable's column: a list of member structs per match, built from the match table's CSR offsets
over the members end to end (no Python loop per match); null where the variable is unbound (an OR branch
not taken), an empty list where it is bound to no event (docs/semantics.md section 10)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa


def _arrow_carries(dtype: pl.DataType) -> bool:
    """Whether Arrow has a type for ``dtype``: not for Polars' 128-bit integers, at any depth."""
    if dtype in (pl.Int128, pl.UInt128):
        return False
    if isinstance(dtype, pl.Struct):
        return all(_arrow_carries(f.dtype) for f in dtype.fields)
    inner = getattr(dtype, "inner", None)  # List, Array
    return inner is None or _arrow_carries(inner)


def _lists_by_arrow(members: pl.Series, off: np.ndarray, unbound: np.ndarray | None) -> pl.Series:
    """A list per match of the ``members`` (structs, end to end) between offsets ``off``, null where
    ``unbound``: one Arrow list array over the members' own buffers."""
    # through Polars, not pa.array: pyarrow's array() imports pandas (1.2 s) to test for its types
    mask = None if unbound is None else pl.Series(np.asarray(unbound, dtype=bool)).to_arrow()
    # Arrow's C schema holds names as C strings, so Polars panics exporting a name with a NUL:
    # the list is built unnamed, with stand-in field names if a column's name has one
    names = [f.name for f in members.dtype.fields]
    nul = any("\0" in name for name in names)
    inner = members.struct.rename_fields([f"f{i}" for i in range(len(names))]) if nul else members
    arr = pa.LargeListArray.from_arrays(_arrow_int64(off), inner.rename("").to_arrow(), mask=mask)
    out = pl.Series(members.name, arr)
    return out.list.eval(pl.element().struct.rename_fields(names)) if nul else out


def _lists_by_groups(members: pl.Series, off: np.ndarray, unbound: np.ndarray | None) -> pl.Series:
    """:func:`_lists_by_arrow` by Polars alone, for members Arrow has no type for (128-bit integers):
    the members grouped by their match, a placeholder row (filtered out) for each empty list."""
    n = len(off) - 1
    lengths = np.diff(off)
    empty = np.flatnonzero(lengths == 0)
    match = np.concatenate([np.repeat(np.arange(n), lengths), empty])
    member = np.concatenate([np.ones(len(members), np.bool_), np.zeros(len(empty), np.bool_)])
    values = pl.concat([members.rename("v"), pl.Series("v", [None] * len(empty), members.dtype)])
    order = np.argsort(match, kind="stable")
    frame = pl.DataFrame([pl.Series("g", match[order]), pl.Series("m", member[order]), values[order]])
    out = frame.group_by("g", maintain_order=True).agg(pl.col("v").filter(pl.col("m"))).get_column("v")
    if unbound is not None:
        out = pl.select(pl.when(pl.lit(pl.Series(~unbound))).then(out)).to_series()
    return out.rename(members.name)


def _arrow_int64(a: np.ndarray) -> pa.Array:
    """``a`` as an Arrow int64 array over the same memory (a Polars Series in between costs ~40 calls)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)])
