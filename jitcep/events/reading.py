"""Reading inputs: a Polars / pandas / Arrow table or a Parquet / CSV path -> a Polars DataFrame.

:func:`read_table` reads any accepted input, projected to the asked columns;
:func:`read_events` reads what an event table needs (time, type, the
attributes the patterns read), with the named errors of missing columns and
unreadable files.

Why: only the columns the patterns need are materialised: Parquet/CSV files
are scanned lazily (projection pushdown), pandas / Arrow inputs are projected
before conversion, Polars frames are selected without copying.
"""

from __future__ import annotations

import os
import pathlib
from typing import Iterable, Sequence

import polars as pl

from ..errors import InputFormatError, MissingColumnError
from .attributes import _as_patterns, _attributes, _partition_key
from .times import normalize_unit, parse_time_strings

_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
_CSV_SUFFIXES = (".csv", ".tsv")


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
    if isinstance(source, pl.DataFrame):  # selected by name: no lazy frame, no query plan
        return None, source.columns, None
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
    if isinstance(source, pl.DataFrame):  # columns by name: no query plan; hstack: a fifth of the calls
        if not cols:
            return source.select(cols)
        first, *rest = [source.get_column(c) for c in cols]
        return first.to_frame().hstack(rest) if rest else first.to_frame()
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
    available = _lazy_and_columns(source)[1]
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
    if df.get_column(time).dtype == pl.String and df.height and (time_format is not None or _is_csv(source)):
        df = df.with_columns(parse_time_strings(time, df.get_column(time), time_format))
    elif df.get_column(time).dtype == pl.String and not df.height:  # a header-only CSV's (read_table), any input
        df = df.with_columns(pl.col(time).cast(pl.Null))
    return df
