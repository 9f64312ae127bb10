"""The event table and its assembly: :class:`EventTable`, :func:`build_event_table`.

The builder reads the input (:mod:`~jitcep.events.reading`), converts the
time column (:mod:`~jitcep.events.times`), sorts stably by time, codes the
type column (:mod:`~jitcep.events.coding`), turns each attribute the patterns
read into a :class:`~jitcep.events.column.Column`, type-checks the patterns
(:mod:`~jitcep.events.types`) and leaves the partition
(:mod:`~jitcep.events.partition`) to first read.

Why:

- The time sort is a stable LSD radix argsort, skipped when the input is
  already sorted (a vectorised check, 3 ms at 10^7); then every kept column
  is gathered once.  Sorted input is never copied: int64 / float64 columns
  are zero-copy numpy views, and ``row`` (the identity, an 80 MB int64 array
  at 10^7 the engine never reads) is filled when output first reads it.
- Every full-length output is allocated by NumPy and filled by a kernel
  (NumPy's large arrays get transparent huge pages, Numba's do not: see
  jitcep/kernels/encode.py).  At 10^7 events (perf/bench_seq.py data, SEQ
  with a [symbol] key) the build takes ~13 ms with Categorical type and
  symbol, ~20 ms with String ones (issue 3: the type column; the key is left
  to the engine).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import polars as pl

from ..errors import AttributeTypeError, MissingColumnError
from ..kernels import encode as _enc
from .attributes import _TS_ATTR, _TYPE_ATTR, _as_patterns, _attributes, _partition_key
from .coding import _dict_encode, _view_arrays, _view_chunks
from .column import Column, fits_int64
from .partition import Partition, build_partition
from .reading import read_events
from .times import _one_time_unit, _temporal_kind, _temporal_physical, _time_values
from .types import check_types


@dataclass(frozen=True, eq=False)
class EventTable:
    """Time-sorted columnar events; see the module docstring for the contract."""

    ts: np.ndarray
    row: np.ndarray
    type_code: np.ndarray
    type_names: tuple[str, ...]
    columns: dict[str, Column]
    time_unit_ns: int | None
    time_dtype: object          # the input time column's Polars dtype, for output
    partition: Partition | None = None

    # For input already sorted by time ``row`` is the identity,
    # filled on first read (one full-length int64 array the engine never reads; output and the
    # Spark adapter read it).  :func:`_new_table` leaves it unset.  ``type_code`` and ``type_names`` of
    # a String type column in Arrow views are coded on first read too (:class:`TypeViews`): a run whose
    # patterns read a few types numbers only those (:meth:`run_type_codes`).
    def __getattr__(self, name):
        # reached only when ``row`` is not set yet (sorted input): fill and keep it
        if name == "row" and "ts" in self.__dict__:
            row = _enc.identity_rows(len(self.ts))
            object.__setattr__(self, "row", row)
            return row
        if name in ("type_code", "type_names") and "_type_views" in self.__dict__:
            codes, names = self.__dict__["_type_views"].coded()
            object.__setattr__(self, "type_code", codes)
            object.__setattr__(self, "type_names", names)
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def run_type_codes(self, names: Sequence[str]) -> np.ndarray | None:
        """int8 codes of the events against ``names`` (distinct): ``j`` where an event's type is
        ``names[j]``, -1 for any other type and for the null type; None unless they can be read from the
        type column's views before it is coded (:meth:`TypeViews.run_codes`: the type codes not read yet,
        every name at most 12 bytes).  Kept for the last ``names`` asked."""
        views = self.__dict__.get("_type_views")
        if views is None or "type_code" in self.__dict__:
            return None
        return views.run_codes(tuple(names))

    def with_types(self, names: tuple[str, ...], codes: np.ndarray) -> "EventTable":
        """This table with ``type_names`` / ``type_code`` numbered as a run numbers its types
        (:meth:`run_type_codes`: every other type is code -1, as the null type), everything else shared;
        its ``type`` attribute is still this table's (:meth:`column`).  What the run's estimate samples
        (:func:`jitcep.runtime.costed`), so that it counts types as the run's grouping numbers them."""
        view = object.__new__(EventTable)
        state = {k: v for k, v in self.__dict__.items() if k not in ("_type_views", "_virtual_columns")}
        view.__dict__.update(state, type_names=names, type_code=codes, _types_of=self)
        return view

    @property
    def n(self) -> int:
        return len(self.ts)

    def input_rows(self, positions: np.ndarray) -> np.ndarray:
        """``row[positions]`` (int64) without filling ``row`` when it is still the unread identity."""
        if "row" not in self.__dict__:
            return np.array(positions, dtype=np.int64)
        return self.row[positions]

    def row_map(self) -> np.ndarray | None:
        """``row`` (input row by position), or None while it is still the unread identity (sorted input)."""
        return self.__dict__.get("row")

    def take(self, positions: np.ndarray) -> "EventTable":
        """The events at ``positions`` (ascending) as a table of their own, without a partition.

        Position ``i`` of the result is ``positions[i]`` here; ``row`` still
        names the input row, and dictionaries are shared.
        """
        pos = np.asarray(positions, dtype=np.int64)
        cols = {a: Column(c.kind, c.values[pos], None if c.valid is None else c.valid[pos], c.dictionary,
                          c.temporal) for a, c in self.columns.items()}
        return EventTable(ts=self.ts[pos], row=self.input_rows(pos), type_code=self.type_code[pos],
                          type_names=self.type_names, columns=cols, time_unit_ns=self.time_unit_ns,
                          time_dtype=self.time_dtype)

    def column(self, name: str) -> Column:
        """The attribute ``name`` by position: the input's column, or the virtual ``ts`` / ``type``.

        ``ts`` is the timestamp (kind "int", in time-column units, semantics
        §4; the builder keeps no input column of that name, as ``a.ts`` always
        means the timestamp).  ``type`` is the input's column of that name
        when the table has one, else the event's type name: a ``str`` column
        over ``type_names`` (its codes are ``type_code``), null for the null
        type.  A virtual column is built once per table.  Raises
        MissingColumnError naming the attributes the table has.
        """
        if name == _TS_ATTR:
            return self._virtual(name)
        col = self.columns.get(name)
        if col is not None:
            return col
        if name == _TYPE_ATTR:
            return self._virtual(name)
        have = ", ".join(map(repr, dict.fromkeys([_TS_ATTR, _TYPE_ATTR, *self.columns])))
        raise MissingColumnError(f"attribute {name!r} is not in the event table; attributes: {have}")

    def _virtual(self, name: str) -> Column:
        if name == _TYPE_ATTR and "_types_of" in self.__dict__:  # a run's numbering (with_types): the real type
            return self.__dict__["_types_of"]._virtual(name)
        kept = self.__dict__.get("_virtual_columns")
        if kept is None:
            kept = {}
            object.__setattr__(self, "_virtual_columns", kept)
        if name not in kept:
            if name == _TS_ATTR:
                kept[name] = Column("int", self.ts, None)
            else:  # code -1 (the null type) is null; 0 keeps the codes usable as indices
                tc = self.type_code
                valid = tc >= 0
                kept[name] = (Column("str", tc, None, self.type_names) if valid.all() else
                              Column("str", np.where(valid, tc, 0).astype(tc.dtype), valid, self.type_names))
        return kept[name]

    def value(self, attr: str, p: int):
        """Python value of ``attr`` at position ``p`` (None for null; ``ts`` and ``type`` always exist)."""
        return self.column(attr).python_value(p)


def _with_nulls(s: pl.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """(values; valid) of a one-chunk Int64 / Float64 series with nulls, from its Arrow buffers: the values
    are the buffer itself (read-only, zero-copy), whatever it holds where null (a :class:`Column`'s values
    are arbitrary there: every reader tests ``valid`` first); the validity bits unpacked.  Polars'
    ``is_not_null`` and ``fill_null`` are a query each (~0.15 ms apiece on a 200,000-row column inside a
    run, five such columns in the sensor file), and writing 0 where null would be a pass writing every value
    (~0.19 ms a column there, from memory the run's passes have pushed out of cache); else None."""
    if s.dtype not in (pl.Int64, pl.Float64) or s.n_chunks() != 1:
        return None
    arr = s.rename("").to_arrow()  # the name as in coding._string_buffers: a NUL in it panics
    bits, data = arr.buffers()[:2]
    if bits is None or data is None:
        return None
    n, off = len(arr), arr.offset
    # the bits from the byte holding the first row's: a slice of a large frame starts deep in its buffers
    lead = off % 8
    valid = np.unpackbits(np.frombuffer(bits, np.uint8)[off // 8:], count=lead + n, bitorder="little")[lead:]
    return np.frombuffer(data, np.int64 if s.dtype == pl.Int64 else np.float64)[off:off + n], valid.view(np.bool_)


def _encode_attribute(name: str, s: pl.Series) -> Column:
    """One attribute column as a :class:`Column` (DESIGN.md section 1: typed numpy arrays)."""
    dtype = s.dtype
    if s.null_count() and (got := _with_nulls(s)) is not None:
        values, valid = got
        return Column("float" if dtype == pl.Float64 else "int", values, valid)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    if dtype.is_integer():
        kind, np_dtype = ("int", np.int64) if fits_int64(s) else ("float", np.float64)
        values = s.cast(pl.Float64 if kind == "float" else pl.Int64)
        values = (values if valid is None else values.fill_null(0)).to_numpy()
        return Column(kind, np.ascontiguousarray(values, dtype=np_dtype), valid)
    if dtype.is_float() or dtype.is_decimal():
        values = s.cast(pl.Float64)
        values = (values if valid is None else values.fill_null(0.0)).to_numpy()
        return Column("float", np.ascontiguousarray(values, dtype=np.float64), valid)
    if dtype == pl.Boolean:
        return Column("bool", np.ascontiguousarray((s if valid is None else s.fill_null(False)).to_numpy(),
                                                   dtype=np.bool_), valid)
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
        codes, dictionary, valid = _dict_encode(s)
        if valid is not None:
            codes[~valid] = 0  # arbitrary where null; 0 keeps codes usable as indices
        return Column("str", codes, valid, dictionary)
    if dtype.is_temporal():
        values = _temporal_physical(s).fill_null(0).to_numpy()
        return Column("int", np.ascontiguousarray(values, dtype=np.int64), valid, (), _temporal_kind(dtype)[0])
    if dtype == pl.Null:  # an all-null column (a pandas object column of None, a header-only CSV)
        return Column("float", np.zeros(len(s), np.float64), np.zeros(len(s), np.bool_))
    raise AttributeTypeError(
        f"column {name!r} has dtype {dtype}, which jitcep cannot compare, use as a key or partition by; "
        f"supported: integers, floats, booleans, strings/categoricals, dates and datetimes")


def build_event_table(source, patterns=None, *, time: str = "ts", type: str | None = None,
                      time_unit: str | None = None, partition_by: str | Sequence[str] | None = None,
                      columns: Iterable[str] = (), check: bool = True,
                      time_format: str | None = None) -> EventTable:
    """Turn input rows into a time-sorted :class:`EventTable` for ``patterns``.

    Parameters
    ----------
    source
        Polars DataFrame / LazyFrame, pandas DataFrame, pyarrow Table, or a
        path to a Parquet or CSV file (see :func:`read_table`).
    patterns
        A :class:`~jitcep.pattern.ast.Pattern` or a sequence of them; only the
        attributes they read (WHERE, RETURN, equivalence tests) are kept.
    time, type
        The time column and the optional type column (string, categorical or
        integer; a null type matches only untyped variables: code -1).
    time_unit
        Unit of a numeric time column (ns, us, ms, s, min, h, d or a long
        form); needed for duration windows.  Date / Datetime carry their own.
    partition_by
        Columns splitting the stream into independent streams, one per key
        value, null being a value (an ``independent`` partition, semantics
        §13).  Without it the partition is the equivalence key all patterns
        share (:func:`equivalence_key`), if any: an index, null keys in no group.
    columns
        Extra attributes to keep beyond those the patterns read.
    check
        Run :func:`check_types` (string vs number, temporal vs other kinds) on the patterns.
    time_format
        The strftime format of a text time column (see :func:`read_events`).

    Raises
    ------
    InputFormatError, MissingColumnError, TimestampError, AttributeTypeError, OptionError
        Before anything is returned; nothing is ever written.
    """
    pats = _as_patterns(patterns)
    df = read_events(source, pats, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                     columns=columns, time_format=time_format)
    return table_of_frame(df, pats, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                          columns=columns, check=check)


def table_of_frame(df: pl.DataFrame, patterns=None, *, time: str = "ts", type: str | None = None,
                   time_unit: str | None = None, partition_by: str | Sequence[str] | None = None,
                   columns: Iterable[str] = (), check: bool = True) -> EventTable:
    """:func:`build_event_table` of a frame :func:`read_events` returned for the same arguments (it may
    hold more columns: ``all_columns``): a caller that keeps the frame (:meth:`jitcep.Query.run`, whose
    output reads it) builds the table without reading it a second time."""
    pats = _as_patterns(patterns)
    key = _partition_key(pats, partition_by)
    attrs = _attributes(pats, df.columns, key, columns)

    time_col = df.get_column(time)
    ts, unit_ns = _time_values(time, time_col, time_unit)
    n = len(ts)
    # Stable sort by time: ties keep input order (the "position" order of DESIGN.md section 2).
    if _enc.is_sorted(ts):  # already sorted input is common: no permutation, no copies
        perm = row = None   # row: the identity, filled when first read (EventTable.__getattr__)
    else:
        perm = _enc.stable_argsort(ts)
        row = perm
        ts = ts[perm]

    def by_position(a: np.ndarray) -> np.ndarray:
        return a if perm is None else a[perm]

    views = None  # the type column's views, coded when first read (TypeViews), else coded here
    if type is None:  # every event has the null type: only untyped variables match
        type_code = np.full(n, -1, dtype=np.int32)
        type_names: tuple[str, ...] = ()
    else:
        ts_col = df.get_column(type)
        if not (ts_col.dtype in (pl.String, pl.Categorical, pl.Null) or isinstance(ts_col.dtype, pl.Enum)
                or ts_col.dtype.is_integer()):
            raise AttributeTypeError(f"type column {type!r} has dtype {ts_col.dtype}; "
                                     f"expected strings, a categorical or integers")
        views = TypeViews.of(ts_col) if perm is None else None
        if views is None:
            codes, type_names, _ = _dict_encode(ts_col)
            type_code = by_position(codes)
        else:  # coded when first read (EventTable.__getattr__)
            type_code, type_names = np.zeros(0, np.int32), ()

    cols: dict[str, Column] = {}
    dtypes = {}
    for attr in attrs:
        s = df.get_column(attr)
        dtype = dtypes[attr] = s.dtype
        if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
            cols[attr] = Column.deferred(s, perm)  # coded when first read: a key may need no coding
            continue
        c = _encode_attribute(attr, s)
        cols[attr] = Column(c.kind, by_position(c.values),
                            None if c.valid is None else by_position(c.valid), c.dictionary, c.temporal)
    _one_time_unit(cols, dtypes)

    fields = dict(ts=np.ascontiguousarray(ts), type_code=np.ascontiguousarray(type_code),
                  type_names=type_names, columns=cols, time_unit_ns=unit_ns, time_dtype=time_col.dtype)
    if views is not None:
        fields["_type_views"] = views
    table = _new_table(fields, row)
    if check:
        check_types(pats, table)
    if key:  # built when first read: the compiled engine may never need it
        independent = partition_by is not None
        exact = _exact_keys(df, key, cols, by_position) if independent else None
        part = Partition.deferred(key, functools.partial(build_partition, table, key, independent=independent,
                                                         exact=exact),
                                  independent)  # a partial, not a lambda: the partition still pickles
        keyed = _new_table(fields, row, part)  # ``table`` (no partition) is what the build reads
        if check:  # the same fields: the same kinds
            object.__setattr__(keyed, "_types_checked", table.__dict__.get("_types_checked", ()))
        return keyed
    return table


def _exact_keys(df: pl.DataFrame, key, cols: dict, by_position) -> dict[str, Column]:
    """The ``partition_by`` columns whose attribute is a float64 image that merges distinct values
    (integers past int64, decimals: semantics §4), as dense codes in value order by position: §13 splits
    the streams by the column's own values, as ``group_by`` does."""
    out = {}
    for attr in key:
        s = df.get_column(attr) if attr in cols else None
        if s is None or cols[attr].kind != "float" or s.dtype.is_float():
            continue
        valid = s.is_not_null().to_numpy() if s.null_count() else None
        codes = (s.rank("dense") - 1).cast(pl.Int64).fill_null(0).to_numpy()
        out[attr] = Column("int", by_position(np.ascontiguousarray(codes)),
                           None if valid is None else by_position(valid))
    return out


def _new_table(fields: dict, row: np.ndarray | None, partition: Partition | None = None) -> EventTable:
    """An EventTable of ``fields``; ``row`` None (sorted input) leaves the identity to first read, and
    ``_type_views`` (a :class:`TypeViews`, shared by the tables of one build) the type codes."""
    fields = dict(fields)
    views = fields.pop("_type_views", None)
    table = EventTable(row=row, partition=partition, **fields)
    if row is None:
        object.__delattr__(table, "row")
    if views is not None:
        object.__delattr__(table, "type_code")
        object.__delattr__(table, "type_names")
        object.__setattr__(table, "_type_views", views)
    return table


class TypeViews:
    """A String type column in Arrow string views (sorted input: row i is position i), coded when first
    asked: the whole dictionary (:meth:`coded`: :func:`~jitcep.events.coding._dict_encode`, once) or
    only a run's names (:meth:`run_codes`, one pass comparing each view with theirs).

    A pattern over 3 of 20 types needs only where its 3 types are: numbering those alone, not coding all
    20, saves 0.4-0.7 ms of a 7-11 ms run at 10^6 events (perf/notes/fixed_costs.md, "Type codes only where read")."""

    def __init__(self, series: pl.Series, arrays):
        self.series = series
        self._arrays = arrays
        self._valid = None if not series.null_count() else series.is_not_null().to_numpy()
        self._coded = None
        self._runs: dict[tuple[str, ...], np.ndarray | None] = {}

    @classmethod
    def of(cls, s: pl.Series) -> "TypeViews | None":
        """The views of String column ``s``, or None (another dtype, or not string views)."""
        if s.dtype != pl.String or not len(s):
            return None
        arrays = _view_arrays(s)
        return None if arrays is None else cls(s, arrays)

    def coded(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """(type_code, type_names) as the eager build codes them."""
        if self._coded is None:
            codes, names, _ = _dict_encode(self.series)
            self._coded = np.ascontiguousarray(codes), names
        return self._coded

    def run_codes(self, names: tuple[str, ...]) -> np.ndarray | None:
        """:meth:`EventTable.run_type_codes` from the views; None when a name is past 12 bytes (not in its
        view: :func:`~jitcep.kernels.encode.wanted_view_keys`)."""
        if names not in self._runs:  # the last set's codes alone (a run asks for one): n bytes, not n per set
            keys = _enc.wanted_view_keys(names)
            self._runs = {names: None if keys is None else _enc.run_view_codes(
                _view_chunks(self.series, self._arrays), keys, self._valid, len(self.series))}
        return self._runs[names]
