"""Event tables: input rows -> time-sorted columnar arrays (+ per-key partitions).

CONTRACT (shared by the reference evaluator, the compiled engine and output).
The builder ``build_event_table`` is implemented by the events work item.

- Rows are sorted stably by timestamp; *position* ``p`` is a row's rank in that
  order.  ``row[p]`` is its 0-based row number in the input as given.
- ``ts`` is int64.  Date / Datetime inputs are stored in their physical unit and
  ``time_unit_ns`` says how many nanoseconds one unit is; numeric inputs carry
  the unit the caller declared (``time_unit="s"``), else ``time_unit_ns=None``
  and a duration window over them is a ``WindowUnitError``.
- ``type_code[p]`` indexes ``type_names`` (``-1 <= type_code < len(type_names)``,
  the invariant the type grouping relies on); without a type column every event
  has the null type -1 and ``type_names == ()`` (only untyped variables can
  match; ``Query.run`` refuses typed variables without a type column:
  :func:`check_type_column`).
- ``columns`` holds only the attributes the pattern reads.  Each is a
  :class:`Column` with numpy values (float64 / int64 / bool, or int32 codes
  into ``dictionary`` for strings) and a validity mask.  A String column's
  ``values`` and ``dictionary`` may be computed when first read
  (:meth:`Column.deferred`); :meth:`Column.labels` and :meth:`Column.codes_at`
  group them without coding.
- ``partition`` exists when the pattern has an equivalence key: rows grouped by
  key in CSR form, each group sorted by (ts, position); its arrays (and ``row``
  of input already sorted by time) may be computed when first read.

Decisions of the builder (:func:`build_event_table`):

- Float timestamps are accepted only when every value is integral (else
  TimestampError: scale to an integer unit and declare it with ``time_unit=``);
  NaN counts as null.  A Datetime with a time zone is its UTC instant.
- ``type_code == -1`` is a null type: it matches only untyped variables.
  ``type_names`` and string ``dictionary`` tuples are sorted, so the order of
  codes is the order of the strings (Unicode code points).
- ``ts`` and, when the input has no column of that name, ``type`` are
  pseudo-attributes (``EventTable.value``); they are not in ``columns``.
- Temporal attributes are stored as int64 (kind "int") with ``temporal`` naming
  what they denote (semantics §4): every instant attribute (Date, Datetime)
  in one unit, the finest among them, every span (Duration) likewise, so
  equal numbers are equal instants; the type checks refuse comparing them
  with numbers or with another temporal kind.
- Two kinds of partition (semantics §13).  From the equivalence key (``[attr]``)
  it is an index: rows whose key is null belong to no group (``key_code`` -1),
  as a null key equals nothing.  From ``partition_by=`` it is a split
  (``Partition.independent``): each group is a separate stream that every
  engine evaluates on its own (:func:`evaluate_per_partition`), and a null key
  is a group of its own, like Polars' ``group_by``.
- :func:`window_span` turns a TimeWindow into an exact integer span in ts units.
"""

from __future__ import annotations

import functools
import math
import os
import pathlib
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Literal, Sequence

import numpy as np
import polars as pl

from .errors import (AttributeTypeError, ExplosionError, InputFormatError, InvalidWindowError,
                     MissingColumnError, MissingTypeColumnError, OptionError, TimestampError, WindowUnitError)
from .kernels import encode as _enc
from .kernels.grouping import counting_sort
from .kernels.window import MAX_SPAN
from .matches import MatchTable
from .pattern import expr as E
from .pattern.ast import UNIT_NS, CountWindow, Pattern, TimeWindow, Unbounded, event_vars


@dataclass(frozen=True, eq=False)
class Column:
    """One attribute, by position."""

    kind: Literal["int", "float", "bool", "str"]
    values: np.ndarray              # int64 / float64 / bool_ / int32 codes (str); arbitrary where null
    valid: np.ndarray | None        # bool mask, None when the column has no nulls
    dictionary: tuple[str, ...] = ()  # for kind == "str": code -> string
    # for a temporal attribute (kind "int"): "datetime" (Date or naive Datetime), "datetime_tz" (a Datetime
    # with a time zone: an instant), "duration" or "time" (of day); None otherwise (semantics §4)
    temporal: str | None = None

    # Added (additive contract change): a string column's codes may be computed when first read
    # (:meth:`deferred`), so the compiled engine can group by a key column without its dictionary:
    # a Categorical by its category ids, a String by codes of one pass without a sort (:meth:`labels`)
    # or coded on only the rows of the types its leaves read (:meth:`codes_at`).
    @classmethod
    def deferred(cls, s: pl.Series, perm: np.ndarray | None) -> "Column":
        """The String / Categorical / Enum series ``s`` (input order) as a ``str`` column by position
        (``perm``: input row of each position, None for sorted input); ``values`` and
        ``dictionary`` are computed when first read."""
        valid = s.is_not_null().to_numpy() if s.null_count() else None
        if valid is not None and perm is not None:
            valid = valid[perm]
        self = object.__new__(cls)
        for name, value in (("kind", "str"), ("valid", valid), ("_strings", (s, perm))):
            object.__setattr__(self, name, value)
        return self

    def __getattr__(self, name):
        # reached only for the codes of a deferred column not read yet: code and keep them
        if name in ("values", "dictionary") and "_strings" in self.__dict__:
            s, perm = self.__dict__["_strings"]
            codes, dictionary, valid = _dict_encode(s)
            if valid is not None:
                codes[~valid] = 0  # arbitrary where null; 0 keeps codes usable as indices
            object.__setattr__(self, "values", codes if perm is None else codes[perm])
            object.__setattr__(self, "dictionary", dictionary)
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def coded(self) -> bool:
        """False while a deferred column's codes are not computed (reading ``values`` computes them)."""
        return "values" in self.__dict__

    @property
    def string_input(self) -> bool:
        """A deferred String column (not Categorical / Enum) whose codes are not computed yet: grouping
        by it takes a coding pass (:meth:`labels`) or a coding of part of it (:meth:`codes_at`)."""
        return not self.coded and self.__dict__["_strings"][0].dtype == pl.String

    def labels(self) -> tuple[np.ndarray, int] | None:
        """(labels by position, k) of a deferred column: equal values get equal labels, in 0..k-1,
        not in dictionary order; found without building the dictionary.

        A Categorical's / Enum's category ids (no pass; zero-copy for sorted
        input without nulls), a String's codes in first-occurrence order of
        its short strings (one pass, no sort: :func:`jitcep.kernels.encode.view_codes`).
        None for a coded column, long strings, or category ids spanning more
        than a few per row (arrays of k entries would outweigh the column).
        """
        if self.coded:
            return None
        if "_labels" not in self.__dict__:
            s, perm = self.__dict__["_strings"]
            got = None
            if s.dtype == pl.String:
                chunks = _view_chunks(s)
                valid = s.is_not_null().to_numpy() if self.valid is not None else None
                coded = None if chunks is None else _enc.view_codes(chunks, valid, len(s))
                if coded is not None:
                    got = (coded[0], len(coded[1]))
            else:
                phys = s.to_physical()
                top = phys.max()
                size = max(len(s.dtype.categories) if isinstance(s.dtype, pl.Enum) else 0 if top is None
                           else int(top) + 1, 1)  # at least 1: a null's id (0) is in range too
                if size <= max(len(s) // 8, 1 << 16):
                    got = ((phys if self.valid is None else phys.fill_null(0)).to_numpy(), size)
            if got is not None and perm is not None:
                got = (got[0][perm], got[1])
            object.__setattr__(self, "_labels", got)
        return self.__dict__["_labels"]

    def codes_at(self, positions: np.ndarray) -> tuple[np.ndarray, int]:
        """(codes, k) of the values at ``positions`` (non-null ones): equal values get equal codes,
        in 0..k-1 (not in dictionary order, and not every code need be used).

        For grouping part of a column: a deferred String column of short
        strings codes only these rows, from their Arrow views
        (:func:`jitcep.kernels.encode.view_codes_at`); otherwise these are
        its :meth:`labels` or dictionary codes.
        """
        if self.string_input and "_labels" not in self.__dict__:
            s, perm = self.__dict__["_strings"]
            chunks = _view_chunks(s)
            if chunks is not None:
                parts = [words[2 * off:2 * (off + length)] for words, off, length in chunks]
                words = parts[0] if len(parts) == 1 else np.concatenate(parts or [np.zeros(0, np.uint64)])
                got = _enc.view_codes_at(words, positions if perm is None else perm[positions])
                if got is not None:
                    return got
        labels = self.labels()
        if labels is not None:
            return labels[0][positions], labels[1]
        return self.values[positions], len(self.dictionary)

    def strings_at(self, positions: np.ndarray) -> pl.Series:
        """The values of a ``str`` column at ``positions`` as a String series (null where null); a
        deferred column gathers them from its input series without coding it."""
        if not self.coded:
            s, perm = self.__dict__["_strings"]
            return s.gather(positions if perm is None else perm[positions]).cast(pl.String)
        codes = self.values[positions].astype(np.int64)
        if self.valid is not None:  # null: the None appended after the dictionary
            codes = np.where(self.valid[positions], codes, len(self.dictionary))
        return pl.Series([*self.dictionary, None], dtype=pl.String).gather(codes)

    def python_value(self, p: int):
        """The value at position p as a Python scalar (None for null)."""
        if self.valid is not None and not self.valid[p]:
            return None
        v = self.values[p]
        if self.kind == "str":
            return self.dictionary[int(v)]
        return v.item()


# ``dictionary``'s default stays in ``__init__`` but leaves the class, so that reading the field of a
# deferred column reaches ``__getattr__`` instead of finding the class attribute ``()``.
del Column.dictionary


@dataclass(frozen=True, eq=False)
class Partition:
    """Equivalence-key partitions in CSR form (DESIGN.md section 1)."""

    key: tuple[str, ...]       # attribute names forming the key
    key_code: np.ndarray       # int64 per position: dense code of the key value (-1: null key)
    order: np.ndarray          # int64 positions sorted by (key_code, ts, position)
    offsets: np.ndarray        # int64, len = n_keys + 1; group g is order[offsets[g]:offsets[g+1]]
    # True for a partition_by= split (semantics §13): groups are separate streams,
    # and a null key value is a group of its own (never code -1).
    independent: bool = False

    # Added (additive contract change): the arrays may be left to first use.  The compiled engine
    # reads only key_code and offsets (and takes a string key's codes from its dictionary codes when
    # it can), so a partition built for it skips the scatter of n positions (a full-length int64
    # array) unless someone asks for ``order``, and a deferred one costs nothing until read.
    @classmethod
    def lazy(cls, key: tuple[str, ...], key_code: np.ndarray, offsets: np.ndarray,
             independent: bool = False) -> "Partition":
        """A partition whose ``order`` is computed from ``key_code`` (one counting sort) when first read."""
        return cls._unset(key, independent, key_code=key_code, offsets=offsets)

    @classmethod
    def deferred(cls, key: tuple[str, ...], build: Callable[[], "Partition"],
                 independent: bool = False) -> "Partition":
        """A partition whose arrays are ``build()``'s, computed when one of them is first read."""
        return cls._unset(key, independent, _build=build)

    @classmethod
    def _unset(cls, key, independent, **given) -> "Partition":
        self = object.__new__(cls)
        for name, value in (("key", key), ("independent", independent), *given.items()):
            object.__setattr__(self, name, value)
        return self

    def __getattr__(self, name):
        # reached only for an array not set yet (a lazy or deferred partition): build and keep it
        if name in ("key_code", "offsets", "order") and "_build" in self.__dict__:
            built = self.__dict__["_build"]()
            for field in ("key_code", "offsets", "order"):
                if field in built.__dict__:  # a lazy ``built`` leaves ``order`` to the branch below
                    object.__setattr__(self, field, built.__dict__[field])
            object.__delattr__(self, "_build")
            return getattr(self, name)
        if name == "order" and "key_code" in self.__dict__:
            order, _ = counting_sort(self.key_code, len(self.offsets) - 1)
            object.__setattr__(self, "order", order)
            return order
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


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

    # Added (additive contract change): for input already sorted by time ``row`` is the identity,
    # filled on first read (one full-length int64 array the engine never reads; output and the
    # Spark adapter read it).  :func:`_new_table` leaves it unset.
    def __getattr__(self, name):
        # reached only when ``row`` is not set yet (sorted input): fill and keep it
        if name == "row" and "ts" in self.__dict__:
            row = _enc.identity_rows(len(self.ts))
            object.__setattr__(self, "row", row)
            return row
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def n(self) -> int:
        return len(self.ts)

    def input_rows(self, positions: np.ndarray) -> np.ndarray:
        """``row[positions]`` (int64) without filling ``row`` when it is still the unread identity."""
        if "row" not in self.__dict__:
            return np.array(positions, dtype=np.int64)
        return self.row[positions]

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

    def value(self, attr: str, p: int):
        """Python value of ``attr`` at position ``p`` (``ts`` and ``type`` are always available)."""
        if attr == "ts":
            return int(self.ts[p])
        if attr == "type" and attr not in self.columns:
            code = int(self.type_code[p])
            return self.type_names[code] if self.type_names and code >= 0 else None  # -1: null type
        return self.columns[attr].python_value(p)


# --- building ---------------------------------------------------------------
#
# Implementation notes (the *why*):
# - Only the columns the patterns need are materialised: Parquet/CSV files are
#   scanned lazily (projection pushdown), pandas / Arrow inputs are projected
#   before conversion, Polars frames are selected without copying.
# - Strings (types, attributes, keys) are dictionary-encoded against a *sorted*
#   dictionary, so code order is string order (Unicode code point order, the
#   order of Python's ``sorted`` and of Polars' string sort).  One pass codes
#   the n values in first-occurrence order: strings of at most 12 bytes by
#   their 16-byte Arrow view (exact, zero-copy), longer ones by Polars'
#   parallel hash, a Numba table and an exact row-vs-first-row check; only the
#   k distinct strings are sorted, and one more pass renumbers codes to ranks.
#   Sorting k strings costs nothing next to n, so the sorted contract stays.
#   Categorical / Enum columns skip the coding: their physical ids are read
#   zero-copy, the ids present are found in one pass, only those categories
#   are sorted, and one pass maps ids to ranks (none when that is the identity).
# - A string attribute is coded when first read (Column.deferred): the
#   compiled engine partitions by a Categorical key's category ids (no pass:
#   ~9 ms at 10^7), by a String key's codes from one pass without sorting the
#   dictionary (Column.labels), or codes a String key only at the events of the
#   types its leaves read when those are few (Column.codes_at: 10^7 events, 3
#   of 32 types read, ~25 ms for the whole column -> ~9-13 ms for its 10^6 rows).
# - The equivalence-key partition is not built up front (Partition.deferred):
#   the compiled engine takes a string or type key's codes straight from the
#   column's dictionary codes, so for it the partition costs nothing; the
#   reference evaluator and the Spark adapter read ``table.partition`` and get
#   it built on first read.  Then a one-attribute key (integer, string, type)
#   is coded and grouped in two passes over a table of its value range (a hash
#   table when the range is wide), and ``order`` waits for its own first read.
# - The time sort is a stable LSD radix argsort, skipped when the input is
#   already sorted (a vectorised check, 3 ms at 10^7); then every kept column
#   is gathered once.  Sorted input is never copied: int64 / float64 columns
#   are zero-copy numpy views, and ``row`` (the identity, an 80 MB int64 array
#   at 10^7 the engine never reads) is filled when output first reads it.
# - Every full-length output is allocated by NumPy and filled by a kernel
#   (NumPy's large arrays get transparent huge pages, Numba's do not: see
#   jitcep/kernels/encode.py).  At 10^7 events (perf/bench_seq.py data, SEQ
#   with a [symbol] key) the build takes ~13 ms with Categorical type and
#   symbol, ~20 ms with String ones (issue 3: the type column; the key is left
#   to the engine).

_INT64_MAX = np.iinfo(np.int64).max

# Long forms accepted wherever a unit is named (``time_unit=``, TimeWindow.unit).
_UNIT_ALIASES = {
    "ns": "ns", "nanosecond": "ns", "nanoseconds": "ns",
    "us": "us", "µs": "us", "microsecond": "us", "microseconds": "us",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
}
_POLARS_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000}
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
_CSV_SUFFIXES = (".csv", ".tsv")
# Pseudo-attributes every event has: its timestamp, and its type name when no column is called "type".
_TS_ATTR = "ts"
_TYPE_ATTR = "type"


def normalize_unit(unit: str) -> str:
    """Canonical short unit name (``"minutes"`` -> ``"min"``); unknown -> OptionError."""
    key = unit.strip().lower() if isinstance(unit, str) else unit
    if key not in _UNIT_ALIASES:
        raise OptionError(f"unknown time unit {unit!r}; use one of {', '.join(UNIT_NS)}")
    return _UNIT_ALIASES[key]


# --- reading ----------------------------------------------------------------


def _describe(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    return type(source).__name__


def _parquet_files(directory: pathlib.Path) -> list[str]:
    """Every ``*.parquet`` file under ``directory`` (symbolic links followed, each directory once), sorted.

    A subdirectory that cannot be listed raises OSError: skipping it would
    drop its events without a word.
    """
    def fail(exc: OSError):
        raise exc

    files, seen = [], set()
    for root, dirs, names in os.walk(directory, onerror=fail, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:  # a link back up the tree: listed already
            dirs.clear()
            continue
        seen.add((st.st_dev, st.st_ino))
        files += [os.path.join(root, n) for n in names if n.endswith(".parquet")]
    return sorted(files)


def _path_frame(path: pathlib.Path) -> pl.LazyFrame:
    """A lazy scan of a Parquet/CSV file (or a directory of Parquet files).

    A path names one file literally: ``data[1].parquet`` is that file, never
    the glob match ``data1.parquet`` (Polars globs by default, so every scan
    passes ``glob=False``, on an absolute path so no ``~`` is expanded).  A
    glob is the caller's to expand: pass ``pl.scan_parquet("data/*.parquet")``.
    """
    if not path.exists():
        raise InputFormatError(f"input file {str(path)!r} does not exist")
    name = path.name.lower()
    literal = path.absolute()
    try:
        if path.is_dir():
            files = _parquet_files(literal)
            if not files:
                raise InputFormatError(f"input directory {str(path)!r} holds no .parquet files")
            return pl.scan_parquet(files, glob=False)
        if name.endswith(_PARQUET_SUFFIXES):
            return pl.scan_parquet(literal, glob=False)
        if name.endswith(_CSV_SUFFIXES):
            return pl.scan_csv(literal, separator="\t" if name.endswith(".tsv") else ",",
                               infer_schema_length=10_000, glob=False)
        with open(path, "rb") as fh:  # unknown suffix: Parquet files start with "PAR1"
            magic = fh.read(4)
    except InputFormatError:
        raise
    except (OSError, pl.exceptions.PolarsError) as exc:
        what = "directory" if path.is_dir() else "file"
        raise InputFormatError(f"cannot read input {what} {str(path)!r}: {exc}") from exc
    if magic == b"PAR1":
        return pl.scan_parquet(literal, glob=False)
    raise InputFormatError(f"cannot tell the format of {str(path)!r}: name it .parquet or .csv")


def _lazy_and_columns(source) -> tuple[pl.LazyFrame | None, list[str], object]:
    """(lazy frame or None, column names, the eager object to project) for any accepted input."""
    if isinstance(source, pl.DataFrame):
        return source.lazy(), source.columns, None
    if isinstance(source, pl.LazyFrame):
        try:
            names = source.collect_schema().names()
        except pl.exceptions.PolarsError as exc:
            raise InputFormatError(f"cannot resolve the LazyFrame's schema: {exc}") from exc
        return source, names, None
    if isinstance(source, (str, os.PathLike)):
        lf = _path_frame(pathlib.Path(os.fspath(source)))
        try:
            names = lf.collect_schema().names()
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise InputFormatError(f"cannot read input file {_describe(source)}: {exc}") from exc
        return lf, names, None
    module = type(source).__module__.split(".")[0]
    if module == "pandas" and type(source).__name__ == "DataFrame":
        return None, [str(c) for c in source.columns], source
    if module == "pyarrow" and type(source).__name__ in ("Table", "RecordBatch"):
        return None, list(source.column_names), source
    raise InputFormatError(
        f"events must be a Polars DataFrame/LazyFrame, a pandas DataFrame, a pyarrow Table or a path "
        f"to a Parquet/CSV file; got {type(source).__module__}.{type(source).__qualname__}")


def _missing(name: str, what: str, available: Sequence[str]) -> MissingColumnError:
    shown = ", ".join(map(repr, available[:50])) + (" ..." if len(available) > 50 else "")
    return MissingColumnError(f"{what} {name!r} is not a column of the input; columns: {shown or '(none)'}")


def read_table(source, columns: Iterable[str] | None = None, *,
               what: dict[str, str] | None = None) -> pl.DataFrame:
    """Read ``source`` into a Polars DataFrame holding only ``columns`` (all when None).

    ``source`` is a Polars DataFrame or LazyFrame, a pandas DataFrame, a
    pyarrow Table / RecordBatch, or a path (str or pathlib) to a Parquet file,
    a directory of Parquet files, or a CSV/TSV file.  A path is a literal file
    name, never a glob pattern (``data[1].parquet`` is that file); to read
    the files a glob matches, pass ``pl.scan_parquet(pattern)``.  Files are scanned lazily
    and only the asked columns are read.  ``what`` maps a column name to how
    the error message calls it (``"time column"``); the default is ``"column"``.

    Raises InputFormatError (not a table, missing/unreadable file) and
    MissingColumnError (naming the column and listing the ones that exist).
    """
    lf, names, eager = _lazy_and_columns(source)
    cols = list(dict.fromkeys(columns)) if columns is not None else list(names)
    present = set(names)
    for c in cols:
        if c not in present:
            raise _missing(c, (what or {}).get(c, "column"), names)
    if isinstance(source, pl.DataFrame):  # columns by name: no query plan for a projection
        return pl.DataFrame([source.get_column(c) for c in cols]) if cols else source.select(cols)
    if eager is not None:  # project before converting: the other columns are never copied
        try:
            if type(eager).__module__.startswith("pandas"):
                by_name = {str(c): c for c in eager.columns}
                sub = eager[[by_name[c] for c in cols]]
                sub.columns = cols
                return pl.from_pandas(sub)
            return pl.from_arrow(eager.select(cols))
        except Exception as exc:  # conversion failures of exotic dtypes
            raise InputFormatError(f"cannot convert the {type(eager).__name__} to Polars: {exc}") from exc
    try:
        df = lf.select(cols).collect()
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputFormatError(f"cannot read the input {_describe(source)}: {exc}") from exc
    if df.height == 0 and _is_csv(source):
        # A header-only CSV gives every column the String dtype: the real types are unknown.
        df = df.with_columns(pl.col(c).cast(pl.Null) for c, t in df.schema.items() if t == pl.String)
    return df


def _is_csv(source) -> bool:
    return isinstance(source, (str, os.PathLike)) and os.fspath(source).lower().endswith(_CSV_SUFFIXES)


# strftime directives that carry a time of day (or an instant): a format without them parses to a Date
_TIME_OF_DAY = re.compile(r"%[-.0-9]*[HIklMSTRfpPsczZ+]")


def parse_time_strings(name: str, s: pl.Series, time_format: str | None) -> pl.Series:
    """A String time column parsed to Date or Datetime (a CSV file's time column arrives as text).

    With ``time_format`` (strftime directives, e.g. ``"%d/%m/%Y %H:%M"``): a
    Date when the format has no time-of-day directive, else a Datetime (zoned
    when it reads an offset, ``%z``).  Without it the format is inferred from
    the first value: ISO dates (``2013-01-01``) give a Date, ISO date-times
    (``2013-01-01 05:17``, ``...T05:17:00Z``) a Datetime.  Raises
    TimestampError naming the first value that does not parse.
    """
    if time_format is not None:
        to = s.str.to_datetime if _TIME_OF_DAY.search(time_format) else s.str.to_date
        attempts = [lambda: to(time_format, strict=False)]
    else:
        attempts = [lambda: s.str.to_date(strict=False), lambda: s.str.to_datetime(strict=False)]
    best = None
    for attempt in attempts:
        try:
            out = attempt()
        except pl.exceptions.PolarsError:  # no format could be inferred from the values
            continue
        if out.null_count() == s.null_count():
            return out
        best = best if best is not None and best.null_count() <= out.null_count() else out
    unparsed = s.is_not_null() if best is None else s.is_not_null() & best.is_null()
    p = _first_row(unparsed.to_numpy())
    how = (f"with time_format={time_format!r}" if time_format is not None
           else "as an ISO date or date-time (2013-01-01, 2013-01-01 05:17:00)")
    raise TimestampError(f"time column {name!r} holds text that does not parse {how}: {s[p]!r} at input row "
                         f"{p}; give its format with time_format= (CLI: --time-format), e.g. '%d/%m/%Y %H:%M'")


# --- what the patterns read -------------------------------------------------


def _as_patterns(patterns) -> tuple[Pattern, ...]:
    if patterns is None:
        return ()
    if isinstance(patterns, Pattern):
        return (patterns,)
    out = tuple(patterns)
    for p in out:
        if not isinstance(p, Pattern):
            raise TypeError(f"expected Pattern objects, got {type(p).__name__}")
    return out


def _pattern_exprs(pattern: Pattern) -> Iterable[E.Expr]:
    if pattern.where is not None:
        yield pattern.where
    for item in pattern.returns:
        yield item.expr


def attributes_read(patterns) -> tuple[str, ...]:
    """Attribute names the patterns read in WHERE and RETURN, in first-use order.

    ``a.ts`` is the timestamp and ``*`` (a whole variable in RETURN) adds
    nothing, so neither is listed.  ``type`` is listed; the caller decides
    whether it is a column or the type pseudo-attribute.
    """
    seen: dict[str, None] = {}
    for pattern in _as_patterns(patterns):
        for root in _pattern_exprs(pattern):
            for node in E.walk(root):
                if isinstance(node, (E.Attr, E.Agg, E.Equiv)) and node.attr not in (None, _TS_ATTR, "*"):
                    seen.setdefault(node.attr)
    return tuple(seen)


def equivalence_key(patterns) -> tuple[str, ...] | None:
    """The equivalence key every pattern shares: attributes of valueless ``[attr]`` tests.

    With several patterns the key is the attributes common to all of them (in
    the first pattern's order): partitioning by a subset of a pattern's key
    never separates two events that pattern could join (SASE section 4.2.1 PAIS,
    ZStream section 5.2.2).  None when some pattern has no such test.
    """
    keys = []
    for pattern in _as_patterns(patterns):
        attrs = [c.attr for c in E.conjuncts(pattern.where)
                 if isinstance(c, E.Equiv) and c.value is None]
        if not attrs:
            return None
        keys.append(list(dict.fromkeys(attrs)))
    if not keys:
        return None
    common = [a for a in keys[0] if all(a in k for k in keys[1:])]
    return tuple(common) or None


# --- columns -> numpy -------------------------------------------------------


def _string_buffers(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64, n + 1) and bytes (uint8) of a String series, via Arrow (zero-copy after rechunk)."""
    import pyarrow as pa

    arr = s.rename("").to_arrow()  # Arrow's C schema holds the name as a C string: a NUL in it panics
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


_VERIFY_CHUNK = 1 << 20


def _hash_string_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """First-occurrence int32 codes of a String series and the first row of each code, exactly.

    Polars hashes the strings (vectorised, multithreaded; a slice at a time), a
    Numba table codes the 64-bit hashes, and every row is then compared with its code's first row
    (in chunks, so the comparison never holds a full-length copy).  Should two
    different strings share a hash, the exact byte-hashing kernel recomputes
    the codes: the result never depends on hash luck.
    """
    coder = _enc.HashCoder(len(s))
    for lo in range(0, len(s), _VERIFY_CHUNK):  # hashed a slice at a time: no full-length hash array
        coder.feed(lo, s.slice(lo, _VERIFY_CHUNK).hash().to_numpy(),
                   None if valid is None else valid[lo:lo + _VERIFY_CHUNK])
    codes, first = coder.result()
    if len(first):  # even one code: all rows may be different strings sharing a hash
        reps = s.gather(first)
        for lo in range(0, len(s), _VERIFY_CHUNK):
            part = codes[lo:lo + _VERIFY_CHUNK]
            same = s.slice(lo, len(part)) == reps.gather(np.maximum(part, 0))
            if not (same.fill_null(True).all()):
                offsets, data = _string_buffers(s)
                return _enc.string_codes(offsets, data, valid)
    return codes, first


def _view_chunks(s: pl.Series):
    """Arrow string-view chunks of a String series, zero-copy: (views as uint64 pairs, offset, length)."""
    import pyarrow as pa

    arr = s.rename("").to_arrow(compat_level=pl.CompatLevel.newest())  # as in _string_buffers
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    out = []
    for c in chunks:
        if c.type != pa.string_view():
            return None
        if len(c):
            out.append((np.frombuffer(c.buffers()[1], dtype=np.uint64), c.offset, len(c)))
    return out


def _string_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, tuple[str, ...] | None]:
    """First-occurrence int32 codes of a String series, the first row of each code, exactly, and the
    sorted dictionary when the codes are its codes already (else None).

    Strings of at most 12 bytes are inline in their Arrow view, so one pass codes
    them by the view itself (exact, no hashing of bytes, no check pass), the
    strings of the first rows recoded in sorted order on the way (when no
    other string comes later, the codes are final and the sort is not
    repeated); a column with a longer string takes :func:`_hash_string_codes`.
    """
    chunks = _view_chunks(s)
    if chunks is not None:
        sorted_at_prefix: list[tuple[str, ...]] = []

        def order(first: np.ndarray) -> np.ndarray:
            names, rank = _sorted_names(s.gather(first))
            sorted_at_prefix.append(names)
            return rank

        got = _enc.view_codes(chunks, valid, len(s), order=order)
        if got is not None:
            codes, first = got
            done = sorted_at_prefix and len(sorted_at_prefix[0]) == len(first)  # no string after the prefix
            return codes, first, sorted_at_prefix[0] if done else None
    return (*_hash_string_codes(s, valid), None)


_PY_SORT_MAX = 4096  # up to this many distinct strings Python's sort beats a Polars query


def _sorted_names(reps: pl.Series) -> tuple[tuple[str, ...], np.ndarray]:
    """The k distinct strings sorted, and rank[j] = position of ``reps[j]`` among them (int32).

    Python's ``str`` order and Polars' bytewise UTF-8 order are both Unicode
    code point order, so either sort gives the contract's dictionary order.
    """
    if len(reps) <= _PY_SORT_MAX:
        vals = reps.to_list()
        idx = sorted(range(len(vals)), key=vals.__getitem__)
        names = tuple(map(vals.__getitem__, idx))  # C-level lookups (a numpy index per value cost more)
        order = np.array(idx, dtype=np.int64)
    else:
        order = reps.arg_sort().to_numpy()
        names = tuple(reps[order].to_list())
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return names, rank


def _category_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Dictionary codes of a Categorical / Enum series from its physical codes.

    The physical codes are read zero-copy; one pass finds the categories
    present (a table over the category ids), only those strings are sorted,
    and one pass maps ids to ranks; when that map is the identity on a 32-bit
    physical column without nulls (an Enum or categorical built from sorted
    strings, all used) the physical codes themselves are the codes: no copy.
    """
    phys = s.to_physical()
    ids = (phys if valid is None else phys.fill_null(0)).to_numpy()
    size = len(s.dtype.categories) if isinstance(s.dtype, pl.Enum) else int(phys.max()) + 1
    present = _enc.present_codes(ids, valid, size)
    reps = pl.Series(present.astype(np.int64)).cast(phys.dtype).cat.to(s.dtype).cast(pl.String)
    names, rank = _sorted_names(reps)
    if valid is None and ids.dtype == np.uint32 and len(present) == size and \
            (rank == np.arange(len(rank), dtype=np.int32)).all():
        return ids.view(np.int32), names
    table = np.full(size, -1, np.int32)
    table[present] = rank
    return _enc.apply_table(ids, valid, table), names


def _dict_encode(s: pl.Series) -> tuple[np.ndarray, tuple[str, ...], np.ndarray | None]:
    """int32 codes into the sorted distinct values (as str); -1 and a valid mask for nulls.

    One pass over the n values gives codes in first-occurrence order and the
    first row of each distinct value; only those k strings are sorted, and
    one more pass maps the codes to their rank (so code order is string
    order, as the contract asks).  Integers are coded by value, categoricals
    from their physical codes (:func:`_category_codes`), strings by their
    Arrow views or by hash with an exact check (:func:`_string_codes`).
    """
    n = len(s)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    dtype = s.dtype
    if n == 0 or dtype == pl.Null or (valid is not None and not valid.any()):
        return np.full(n, -1, np.int32), (), valid
    if dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        codes, names = _category_codes(s, valid)
        return codes, names, valid
    if dtype.is_integer() and dtype != pl.UInt64:  # dense codes by value
        codes64, k = _enc.dense_codes(s.cast(pl.Int64).fill_null(0).to_numpy(), valid)
        first = _enc.first_rows(codes64, k)
        codes = codes64.astype(np.int32)
        del codes64
    else:
        s = s.cast(pl.String)
        codes, first, names = _string_codes(s, valid)
        if names is not None:
            return codes, names, valid
    names, rank = _sorted_names(s[first].cast(pl.String))
    if (rank == np.arange(len(rank), dtype=rank.dtype)).all():  # coded in dictionary order already
        return codes, names, valid
    return _enc.rank_inplace(codes, rank), names, valid


def _temporal_physical(s: pl.Series) -> pl.Series:
    """Physical int64 values: Date in days, Datetime / Duration in their unit, Time in ns.

    A Datetime with a time zone is stored by Polars as the UTC instant, so its
    physical value already is the instant in UTC.
    """
    return s.to_physical().cast(pl.Int64)


_TEMPORAL_NOUN = {"datetime": "a datetime", "datetime_tz": "a datetime with a time zone",
                  "duration": "a duration", "time": "a time of day"}


def _temporal_kind(dtype) -> tuple[str, int] | None:
    """(temporal kind, nanoseconds per stored unit) of a temporal dtype (semantics §4); None otherwise."""
    if dtype == pl.Date:
        return "datetime", 86_400 * 10**9  # a day: midnight of it, comparable with naive datetimes
    if isinstance(dtype, pl.Datetime):
        return ("datetime_tz" if dtype.time_zone else "datetime"), _POLARS_UNIT_NS[dtype.time_unit]
    if isinstance(dtype, pl.Duration):
        return "duration", _POLARS_UNIT_NS[dtype.time_unit]
    if dtype == pl.Time:
        return "time", 1
    return None


def _one_time_unit(cols: dict[str, Column], dtypes: dict[str, object]) -> None:
    """Store every temporal attribute of a kind in the finest unit of that kind, in place (semantics §4).

    Equal stored numbers are then equal instants (spans): a Datetime[ms] next
    to a Datetime[ns], a Date next to a Datetime.  A value int64 cannot hold
    in that unit raises AttributeTypeError naming both columns.
    """
    units = {a: _temporal_kind(dtypes[a]) for a, c in cols.items() if c.temporal is not None}
    for kind in set(k for k, _ in units.values()):
        mine = {a: u for a, (k, u) in units.items() if k == kind}
        finest = min(mine.values())
        for a, unit in mine.items():
            if unit == finest:
                continue
            col, factor = cols[a], unit // finest
            got = _enc.value_range(col.values, col.valid)
            if got is not None and (got[0] * factor < -(2**63) or got[1] * factor > _INT64_MAX):
                other = next(b for b, u in mine.items() if u == finest)
                raise AttributeTypeError(
                    f"attribute {a!r} ({dtypes[a]}) holds values that int64 cannot hold in the unit of "
                    f"attribute {other!r} ({dtypes[other]}), so the two cannot be compared exactly; cast "
                    f"{other!r} to a coarser unit (e.g. pl.col({other!r}).dt.cast_time_unit(\"us\"))")
            cols[a] = Column(col.kind, col.values * np.int64(factor), col.valid, col.dictionary, col.temporal)


def _encode_attribute(name: str, s: pl.Series) -> Column:
    """One attribute column as a :class:`Column` (DESIGN.md section 1: typed numpy arrays)."""
    dtype = s.dtype
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    if dtype.is_integer():
        kind, np_dtype = "int", np.int64
        if dtype == pl.UInt64 and s.max() is not None and s.max() > _INT64_MAX:
            kind, np_dtype = "float", np.float64  # does not fit int64: keep the magnitude
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
        f"attribute {name!r} has dtype {dtype}, which predicates cannot compare; "
        f"supported: integers, floats, booleans, strings/categoricals, dates and datetimes")


def _first_row(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _time_values(name: str, s: pl.Series, time_unit: str | None) -> tuple[np.ndarray, int | None]:
    """The time column as int64 plus nanoseconds per unit (None: numeric, undeclared).

    Rules: integers as they are; floats only when every value is integral
    (timestamps are compared exactly, so a fractional value would be silently
    rounded otherwise); Date in days, Datetime / Duration in their own unit
    (time zones: the UTC instant).  ``time_unit=`` declares the unit of a
    numeric column; over a temporal column the dtype already fixes it.
    """
    dtype = s.dtype
    if len(s) == 0 and dtype in (pl.String, pl.Null):  # e.g. a header-only CSV: nothing to misread
        s, dtype = s.cast(pl.Int64), pl.Int64
    n_null = s.null_count()
    if dtype.is_float():  # NaN is a missing timestamp too
        s = s.fill_nan(None)
        n_null = s.null_count()
    if n_null:
        null = s.is_null().to_numpy()
        raise TimestampError(f"time column {name!r} has {n_null} null timestamp(s); "
                             f"the first is at input row {_first_row(null)}")
    if dtype.is_temporal():
        if dtype == pl.Time:
            raise TimestampError(f"time column {name!r} is a time of day ({dtype}); "
                                 f"use a Datetime or a number")
        unit_ns = 86_400_000_000_000 if dtype == pl.Date else _POLARS_UNIT_NS[dtype.time_unit]
        if time_unit is not None and UNIT_NS[normalize_unit(time_unit)] != unit_ns:
            raise OptionError(f"time_unit={time_unit!r} contradicts the time column {name!r} of dtype "
                              f"{dtype}, whose unit is fixed by its type; leave time_unit out")
        return np.ascontiguousarray(_temporal_physical(s).to_numpy(), dtype=np.int64), unit_ns
    unit_ns = UNIT_NS[normalize_unit(time_unit)] if time_unit is not None else None
    if dtype.is_integer():
        if dtype == pl.UInt64 and len(s) and s.max() > _INT64_MAX:
            bad = (s > _INT64_MAX).to_numpy()
            raise TimestampError(f"time column {name!r} has values beyond int64 (first at input row "
                                 f"{_first_row(bad)}); rebase or scale the timestamps")
        return np.ascontiguousarray(s.cast(pl.Int64).to_numpy(), dtype=np.int64), unit_ns
    if dtype.is_float() or dtype.is_decimal():
        v = s.cast(pl.Float64).to_numpy()
        bad = ~np.isfinite(v) | (v != np.floor(v)) | (np.abs(v) >= 2.0 ** 63)
        if bad.any():
            p = _first_row(bad)
            raise TimestampError(
                f"time column {name!r} has {int(bad.sum())} non-integral timestamp(s) (first: {v[p]!r} "
                f"at input row {p}); timestamps are compared exactly as int64: scale them to an integer "
                f"unit (e.g. milliseconds) and pass time_unit=, or cast to a Datetime")
        return v.astype(np.int64), unit_ns
    raise TimestampError(f"time column {name!r} has dtype {dtype}; timestamps must be integers, "
                         f"integral floats, Date or Datetime (parse strings with "
                         f"pl.col({name!r}).str.to_datetime())")


# --- windows ----------------------------------------------------------------


def window_span(window, table: "EventTable") -> int | None:
    """A TimeWindow in the table's ts units, as an int; None for CountWindow / Unbounded / None.

    Windows are inclusive (``max ts - min ts <= span``, DESIGN.md section 2)
    and timestamps are int64, so ``diff <= d`` holds exactly when
    ``diff <= floor(d)``: the span is ``floor(d)`` computed with exact
    rational arithmetic (a float amount is taken as its shortest decimal
    repr, so ``0.3 s`` over ms timestamps is exactly 300).  Spans from
    ``2**64 - 1`` up (the largest difference of two int64 timestamps,
    :data:`jitcep.kernels.window.MAX_SPAN`) are clamped to it: every pair
    fits under it.  Spans between int64's maximum and it are kept exactly
    (a Python int): times at the int64 extremes are farther apart than int64.

    A duration (``WITHIN 5 minutes``) needs the ts unit: Date/Datetime columns
    carry it, numeric columns need ``time_unit=`` (else WindowUnitError).
    """
    if window is None or isinstance(window, (CountWindow, Unbounded)):
        return None
    if not isinstance(window, TimeWindow):
        raise TypeError(f"not a window: {window!r}")
    amount = window.amount
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) \
            or amount <= 0:
        raise InvalidWindowError(f"window must be a positive finite number, got {amount!r}")
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(float(amount)))
    if window.unit is not None:
        try:
            unit = normalize_unit(window.unit)
        except OptionError as exc:
            raise InvalidWindowError(str(exc)) from None
        if table.time_unit_ns is None:
            raise WindowUnitError(
                f"WITHIN {amount} {window.unit} is a duration, but the time column is numeric and its "
                f"unit was not declared; declare it with time_unit= (e.g. run(..., time_unit=\"s\") "
                f"when timestamps are seconds), or write the window in the column's own units "
                f"(WITHIN {amount} without a unit)")
        exact = exact * UNIT_NS[unit] / table.time_unit_ns
    return min(math.floor(exact), MAX_SPAN)


# --- type checks ------------------------------------------------------------


def _attr_kind(attr: str, table: "EventTable") -> str | None:
    """The kind (:mod:`jitcep.pattern.kinds`) of attribute ``attr`` in ``table``; None: none (§4)."""
    if attr == _TS_ATTR:
        return "int"  # a number in time-column units (semantics §4)
    col = table.columns.get(attr)
    if col is None:
        return "str" if attr == _TYPE_ATTR else None  # a missing column is MissingColumnError's, later
    if col.valid is not None and not col.valid.any():
        return None  # no value at all (a Null-dtype column): like NULL, it has no kind (semantics §4)
    return col.temporal or col.kind  # the column kinds are the checker's kind names


def check_types(patterns, table: "EventTable") -> None:
    """Raise AttributeTypeError where a predicate mixes kinds of values (semantics §4).

    The rules are :mod:`jitcep.pattern.kinds`' (the one checker every engine
    shares), given the kinds of the table's columns; the message names the
    predicate (a top-level conjunct of WHERE, or the RETURN item).
    """
    from .pattern import kinds  # local: this section leaves events.py when the module is split

    for pattern in _as_patterns(patterns):
        kinds.check_pattern(pattern, lambda var, attr: _attr_kind(attr, table))


# --- partitions -------------------------------------------------------------


def _dense_codes(values: np.ndarray, valid: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Dense int64 codes 0..k-1 in value order; -1 where invalid."""
    if values.dtype.kind in "iub":
        return _enc.dense_codes(values.astype(np.int64, copy=False), valid)
    out = np.full(len(values), -1, dtype=np.int64)
    sel = slice(None) if valid is None else valid
    uniq, inv = np.unique(values[sel], return_inverse=True)  # floats: exact value order incl. -0.0 == 0.0
    out[sel] = inv.reshape(-1)
    return out, len(uniq)


def _single_key_group(table: "EventTable", attr: str, independent: bool):
    """(key_code, order, offsets) of a one-attribute key in two passes (:func:`_enc.range_group`), or
    None (float or timestamp keys, wide integer ranges: the general path codes them)."""
    bounds = None
    if attr == _TS_ATTR:
        return None
    if attr in table.columns:
        col = table.columns[attr]
        values, valid = col.values, col.valid
        if col.kind == "float":
            return None
        if col.kind == "str":  # codes into the sorted distinct values: their range is known
            bounds = (0, max(len(col.dictionary) - 1, 0))
        elif col.kind == "bool":
            values = values.view(np.uint8)
    elif attr == _TYPE_ATTR:
        values = table.type_code
        valid = values >= 0
        if valid.all():
            valid = None
        bounds = (0, max(len(table.type_names) - 1, 0))
    else:
        return None
    return _enc.range_group(values, valid, null_group=independent, bounds=bounds, with_order=False)


def build_partition(table: "EventTable", key: Sequence[str], *, independent: bool = False) -> Partition:
    """CSR partitions of ``table`` by the key attributes (SASE section 4.2.1 PAIS, ZStream section 5.2.2).

    ``key_code[p]`` is the dense code of the key of position ``p`` (codes in
    key-value order; -1 when any key attribute is null: null equals nothing,
    so such events join no group).  With ``independent`` (a ``partition_by=``
    split, semantics §13) null is a value instead, ordered after every other
    value of its attribute, so every event is in exactly one group.  ``order`` lists the non-null-key
    positions by (key_code, ts, position) and group g is
    ``order[offsets[g]:offsets[g + 1]]``.  A one-attribute integer, string or
    type key is coded and grouped in two passes over a table of its value
    range (:func:`jitcep.kernels.encode.range_group`); otherwise a code per
    column, the columns combined pairwise and re-densified, one counting sort.
    """
    key = tuple(key)
    if not key:
        raise ValueError("a partition key needs at least one attribute")
    if len(key) == 1:
        got = _single_key_group(table, key[0], independent)
        if got is not None:
            key_code, _, offsets = got
            return Partition.lazy(key, key_code, offsets, independent)
    combined: np.ndarray | None = None
    for attr in key:
        if attr == _TS_ATTR:
            codes, k = _dense_codes(table.ts, None)
        elif attr in table.columns:
            col = table.columns[attr]
            if col.kind == "str":  # codes into the sorted distinct values: already dense
                codes = col.values.astype(np.int64)
                if col.valid is not None:
                    codes[~col.valid] = -1
                k = len(col.dictionary)
            else:
                valid = col.valid
                if col.kind == "float" and not independent:
                    # [attr] is equality, and NaN equals nothing: a NaN key joins no group, as a null
                    # does (semantics section 4); partition_by treats NaN as one value, as group_by does
                    nan = np.isnan(col.values)
                    if nan.any():
                        valid = ~nan if valid is None else valid & ~nan
                codes, k = _dense_codes(col.values, valid)
        elif attr == _TYPE_ATTR:
            tc = table.type_code.astype(np.int64)
            codes, k = _dense_codes(tc, tc >= 0)
        else:
            raise _missing(attr, "partition attribute", list(table.columns))
        if independent and (codes < 0).any():  # null: one more value, after the others (group_by)
            codes = np.where(codes < 0, k, codes)
            k += 1
        if combined is None:
            combined = codes
        else:  # previous codes < n and k <= n: the product fits int64 for any realistic n
            null = (combined < 0) | (codes < 0)
            mixed = combined * max(k, 1) + codes
            mixed[null] = -1
            combined, _ = _dense_codes(mixed, ~null)
    key_code = combined
    n_keys = k if len(key) == 1 else (int(key_code.max()) + 1 if len(key_code) else 0)
    # one stable counting sort: positions grouped by key, in position (= ts) order inside a group;
    # null keys (code -1) are dropped
    order, offsets = counting_sort(key_code, max(n_keys, 0))
    return Partition(key, key_code, order, offsets, independent)


def evaluate_per_partition(evaluate_group, table: "EventTable", *, max_matches: int | None = None) -> list:
    """Match tables of a ``partition_by=`` split: each group evaluated as its own stream (semantics §13).

    ``evaluate_group(sub_table) -> list[MatchTable]`` (one per pattern, the
    same number for every group) runs on :meth:`EventTable.take` of each
    group; positions are mapped back to ``table`` and the groups' tables
    concatenated per pattern in canonical order.  ``max_matches``: the total
    over all groups (§12), checked after each group.
    """
    part = table.partition
    if part is None or not part.independent:
        raise ValueError("evaluate_per_partition needs a table partitioned with partition_by=")
    per_pattern: list[list[MatchTable]] | None = None
    total = 0
    for g in range(len(part.offsets) - 1):
        where = part.order[part.offsets[g]:part.offsets[g + 1]]
        # group positions ascend (the group is sorted by (ts, position)), so order is kept
        results = evaluate_group(table.take(where))
        if per_pattern is None:
            per_pattern = [[] for _ in results]
        for k, mt in enumerate(results):
            per_pattern[k].append(_remap(mt, where))
            total += mt.n
        if max_matches is not None and total > max_matches:
            raise ExplosionError(f"more than max_matches={max_matches} matches; raise the cap with "
                                 f"jitcep.compile(..., max_matches=N) or make the pattern more selective")
    if per_pattern is None:  # no events at all: one empty evaluation gives the typed empty tables
        return evaluate_group(table.take(np.zeros(0, np.int64)))
    return [_concat(parts).canonical() for parts in per_pattern]


def _remap(mt, where: np.ndarray):
    """``mt`` with sub-table positions replaced by ``where[p]`` (positions of the whole table)."""
    single = {v: np.where(c >= 0, where[np.maximum(c, 0)], -1) for v, c in mt.single.items()}
    lists = {v: (off, where[pos]) for v, (off, pos) in mt.lists.items()}
    return MatchTable(mt.n, single, lists, dict(mt.list_unbound))


def _concat(parts: list):
    n = sum(p.n for p in parts)
    first = parts[0]
    single = {v: np.concatenate([p.single[v] for p in parts]) for v in first.single}
    lists = {}
    for v in first.lists:
        lens = np.concatenate([np.diff(p.lists[v][0]) for p in parts])
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        lists[v] = (off, np.concatenate([p.lists[v][1] for p in parts]).astype(np.int64))
    unbound = {}
    for v in {v for p in parts for v in p.list_unbound}:
        unbound[v] = np.concatenate([p.list_unbound.get(v, np.zeros(p.n, dtype=bool)) for p in parts])
    return MatchTable(n, single, lists, unbound)


# --- the event table --------------------------------------------------------


def _partition_key(pats, partition_by) -> tuple[str, ...] | None:
    if isinstance(partition_by, str):
        partition_by = (partition_by,)
    return tuple(partition_by) if partition_by is not None else equivalence_key(pats)


def _attributes(pats, available, key, columns) -> list[str]:
    """The attribute columns an event table keeps: read by the patterns, asked for, the partition key."""
    present = set(available)
    attrs = list(dict.fromkeys([*attributes_read(pats), *columns, *(key or ())]))
    # ``type`` is a pseudo-attribute (the event's type name) unless the input has such a column.
    return [a for a in attrs if a != _TS_ATTR and not (a == _TYPE_ATTR and a not in present)]


def read_events(source, patterns=None, *, time: str = "ts", type: str | None = None,
                time_unit: str | None = None, partition_by: str | Sequence[str] | None = None,
                columns: Iterable[str] = (), all_columns: bool = False,
                time_format: str | None = None) -> pl.DataFrame:
    """Read ``source`` once into the Polars DataFrame :func:`build_event_table` needs.

    The columns are the time and type columns, the attributes the patterns
    read, ``columns`` and the partition key, or every input column with
    ``all_columns`` (in input order; the caller also outputs them).  Building
    the table from the result is a zero-copy select, so a caller that needs
    both the events and the input values (:meth:`jitcep.Query.run`) reads a
    file, LazyFrame, pandas or Arrow input only once.

    A text time column is parsed (:func:`parse_time_strings`) when the input
    is a CSV file, whose reader leaves dates as text, or when ``time_format``
    is given.

    Raises OptionError (bad ``time_unit``, before reading), InputFormatError
    and MissingColumnError (naming what the column is for: "time column",
    "type column", "attribute"), TimestampError (time text that does not parse).
    """
    pats = _as_patterns(patterns)
    if time_unit is not None:
        normalize_unit(time_unit)  # reject a bad unit before reading anything
    _, available, _ = _lazy_and_columns(source)
    attrs = _attributes(pats, available, _partition_key(pats, partition_by), columns)
    what = {a: "attribute" for a in attrs}
    if partition_by is not None:
        what.update((c, "partition_by column") for c in ((partition_by,) if isinstance(partition_by, str)
                                                          else partition_by))
    what[time] = "time column"
    if type is not None:
        what[type] = "type column"
    needed = list(dict.fromkeys([time, *([type] if type is not None else []), *attrs]))
    missing = [c for c in needed if c not in set(available)]
    if missing:  # the named error, also when every column is read
        raise _missing(missing[0], what.get(missing[0], "column"), available)
    df = read_table(source, None if all_columns else needed, what=what)
    if df.schema[time] == pl.String and df.height and (time_format is not None or _is_csv(source)):
        df = df.with_columns(parse_time_strings(time, df.get_column(time), time_format))
    return df


def check_type_column(patterns) -> None:
    """Raise MissingTypeColumnError when a pattern names event types: the caller gave no type column.

    Without one every event has the null type, which only untyped variables
    (``* v``) accept (semantics §3), so a typed variable could never match:
    almost surely a forgotten ``type=`` argument, and an error says so.
    """
    types = list(dict.fromkeys(t for p in _as_patterns(patterns) for v in event_vars(p.body)
                               for t in (v.types or ())))
    if types:
        shown = ", ".join(map(repr, types[:10])) + (" ..." if len(types) > 10 else "")
        raise MissingTypeColumnError(
            f"the pattern names event types ({shown}) but no type column was given; pass the column "
            f"holding each event's type: run(..., type=\"kind\") in Python, --type kind on the command "
            f"line (without a type column only untyped variables, * v, can match)")


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
    key = _partition_key(pats, partition_by)
    df = read_events(source, pats, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                     columns=columns, time_format=time_format)
    attrs = _attributes(pats, df.columns, key, columns)

    ts, unit_ns = _time_values(time, df.get_column(time), time_unit)
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

    if type is None:  # every event has the null type: only untyped variables match
        type_code = np.full(n, -1, dtype=np.int32)
        type_names: tuple[str, ...] = ()
    else:
        ts_col = df.get_column(type)
        if not (ts_col.dtype in (pl.String, pl.Categorical, pl.Null) or isinstance(ts_col.dtype, pl.Enum)
                or ts_col.dtype.is_integer()):
            raise AttributeTypeError(f"type column {type!r} has dtype {ts_col.dtype}; "
                                     f"expected strings, a categorical or integers")
        codes, type_names, _ = _dict_encode(ts_col)
        type_code = by_position(codes)

    cols: dict[str, Column] = {}
    for attr in attrs:
        s = df.get_column(attr)
        if s.dtype in (pl.String, pl.Categorical) or isinstance(s.dtype, pl.Enum):
            cols[attr] = Column.deferred(s, perm)  # coded when first read: a key may need no coding
            continue
        c = _encode_attribute(attr, s)
        cols[attr] = Column(c.kind, by_position(c.values),
                            None if c.valid is None else by_position(c.valid), c.dictionary, c.temporal)
    _one_time_unit(cols, df.schema)

    fields = dict(ts=np.ascontiguousarray(ts), type_code=np.ascontiguousarray(type_code),
                  type_names=type_names, columns=cols, time_unit_ns=unit_ns, time_dtype=df.schema[time])
    table = _new_table(fields, row)
    if check:
        check_types(pats, table)
    if key:  # built when first read: the compiled engine may never need it
        independent = partition_by is not None
        part = Partition.deferred(key, functools.partial(build_partition, table, key, independent=independent),
                                  independent)  # a partial, not a lambda: the partition still pickles
        return _new_table(fields, row, part)  # ``table`` (no partition) is what the build reads
    return table


def _new_table(fields: dict, row: np.ndarray | None, partition: Partition | None = None) -> EventTable:
    """An EventTable of ``fields``; ``row`` None (sorted input) leaves the identity to first read."""
    table = EventTable(row=row, partition=partition, **fields)
    if row is None:
        object.__delattr__(table, "row")
    return table
