"""Command line: ``jitcep run PATTERN_FILE INPUT [-o OUT] ...``, ``jitcep explain PATTERN_FILE [INPUT]``,
``jitcep demo`` and ``jitcep warmup`` (also ``python -m jitcep ...``).

Errors jitcep raises on purpose (:class:`~jitcep.errors.JitcepError`), and
any path it cannot use (a pattern file that is missing, unreadable or not
UTF-8, an input it cannot read, an output that is a directory or in a
directory it cannot write), print one line ``jitcep: error: ...`` on stderr
(a pattern syntax error adds the source line and a caret under the column)
and exit with status 2; a warning prints one line ``jitcep: warning: ...``.
The output path is checked before the run, and written atomically (a
temporary file in the target directory, given the mode the umask allows,
then a rename), so a failed run leaves nothing behind.  A progress bar on
stderr (:mod:`jitcep.progress`) names the stage a long run is in; stdout carries
only the result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
from importlib import metadata, resources
from pathlib import Path

import polars as pl

from ._typing import Engine, Shape, TimeUnit, allowed
from .errors import JitcepError, PatternSyntaxError
from .progress import display
from .query import Query

EXIT_ERROR = 2
WRITERS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson"}


class CliError(JitcepError):
    """A usage problem found by the CLI itself: a bad --option, or a pattern file or output path it cannot
    use."""


def _option(text: str) -> tuple[str, object]:
    """``k=v``: v is read as JSON when it parses (numbers, lists, true/false), else as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise CliError(f"--option expects key=value, got {text!r}")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


def _flatten(df: pl.DataFrame, *, for_csv: bool = True) -> pl.DataFrame:
    """Struct fields become ``var.field`` columns; for CSV (which holds no nesting), every other value as
    text CSV can hold: lists, arrays and structs as JSON (NaN and infinities inside them are ``null``:
    JSON has no such numbers), durations as ISO 8601, bytes as base64."""
    out = []
    for name, dtype in df.schema.items():
        parts = ([(pl.col(name).struct.field(f.name), f"{name}.{f.name}", f.dtype) for f in dtype.fields]
                 if isinstance(dtype, pl.Struct) else [(pl.col(name), name, dtype)])
        out += [(_csv_value(e, t) if for_csv else e).alias(n) for e, n, t in parts]
    return df.select(out)


def _csv_value(e: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, (pl.List, pl.Array, pl.Struct)):
        # one JSON value: {"v": <value>} encoded, its key cut off; a null stays an empty cell
        encoded = pl.struct(_json_safe(e, dtype).alias("v")).struct.json_encode()
        return pl.when(e.is_null()).then(None).otherwise(encoded.str.slice(5).str.strip_suffix("}"))
    if isinstance(dtype, pl.Duration):
        return e.dt.to_string("iso")
    return e.bin.encode("base64") if dtype == pl.Binary else e


def _json_safe(e: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """``e`` with every byte string inside it as base64 text (Polars' JSON encoder has none for bytes)."""
    if dtype == pl.Binary:
        return e.bin.encode("base64")
    if isinstance(dtype, pl.Array):
        return _json_safe(e.arr.to_list(), pl.List(dtype.inner))
    if not _holds_bytes(dtype):
        return e
    if isinstance(dtype, pl.List):
        return e.list.eval(_json_safe(pl.element(), dtype.inner))
    fields = pl.struct([_json_safe(e.struct.field(f.name), f.dtype).alias(f.name) for f in dtype.fields])
    return pl.when(e.is_null()).then(None).otherwise(fields)


def _holds_bytes(dtype: pl.DataType) -> bool:
    if isinstance(dtype, (pl.List, pl.Array)):
        return _holds_bytes(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return any(_holds_bytes(f.dtype) for f in dtype.fields)
    return dtype == pl.Binary


def _writer(path: str) -> str:
    ext = Path(path).suffix.lower()
    if ext not in WRITERS:
        raise CliError(f"cannot write {path!r}: use one of {', '.join(sorted(WRITERS))}")
    return WRITERS[ext]


def _why(e: OSError) -> str:
    return e.strerror or str(e)


def _temp_beside(path: str) -> str:
    """A new empty temporary file in ``path``'s directory (CliError when it cannot be created)."""
    target = Path(path)
    if target.is_dir():
        raise CliError(f"cannot write {path!r}: it is a directory; name a file in it, e.g. "
                       f"{os.path.join(path, 'matches.parquet')!r}")
    directory = target.parent
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise CliError(f"cannot write {path!r}: {str(directory)!r} {what}")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise CliError(f"cannot write {path!r}: cannot create a file in {str(directory)!r}: {_why(e)}") from e
    os.close(fd)
    return tmp


def check_output(path: str) -> None:
    """Refuse, before any work, an output path that cannot be written: an unknown extension, a
    directory, or a directory that is missing or not writable (a probe file is created and removed)."""
    _writer(path)
    os.unlink(_temp_beside(path))


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it back at once
    os.umask(mask)
    return mask


def write_atomic(df: pl.DataFrame, path: str) -> None:
    """Write ``df`` to ``path`` (format by extension) via a temporary file and a rename.

    The file gets the mode a newly created file would get (0o666 less the
    umask; ``mkstemp`` creates it 0o600).  Any failure removes the temporary
    file and leaves an existing ``path`` as it was; an OSError becomes a
    CliError naming the path.
    """
    kind = _writer(path)
    tmp = _temp_beside(path)
    try:
        if kind == "parquet":
            df.write_parquet(tmp)
        elif kind == "csv":
            _flatten(df).write_csv(tmp)
        else:
            df.write_ndjson(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise CliError(f"cannot write {path!r}: {_why(e)}") from e
        raise


def _show(df: pl.DataFrame, limit: int) -> None:
    with pl.Config(tbl_rows=limit, tbl_cols=16, tbl_width_chars=200, fmt_str_lengths=60, tbl_hide_dataframe_shape=True):
        print(_flatten(df.head(limit), for_csv=False))
    more = f" (showing {limit})" if df.height > limit else ""
    print(f"{df.height} match{'es' if df.height != 1 else ''}{more}")


#: what the CLI's progress display names: the stages of a run, then writing the result
STAGES = Query.STAGES + ("writing",)


def _progress(args):
    """``--progress`` forces the display (at once); ``--no-progress`` hides it; default: on a terminal
    only, after 2 s (:func:`jitcep.progress.display`)."""
    return display(args.progress, STAGES)


def _run(pattern_text: str, events, args, progress, *, time: str, type: str | None,
         time_unit: str | None, time_format: str | None = None) -> pl.DataFrame:
    from .query import compile

    options = dict(_option(o) for o in args.option or ())
    query = compile(pattern_text, **options)
    if args.engine != "reference":
        from .first_run import notice

        notice()  # now, before the progress bar can occupy the terminal's line
    return query._run(events, time=time, type=type, time_unit=time_unit, partition_by=None,
                      engine=args.engine, shape=args.shape, time_format=time_format, stage=progress.stage,
                      threads=args.threads)


def _finish(df: pl.DataFrame, args, progress) -> None:
    progress.stage("writing")
    if args.output:
        write_atomic(df, args.output)
        progress.close()
        print(f"{df.height} matches written to {args.output}")
    else:
        progress.close()
        _show(df, args.limit)


def read_pattern_file(path: str) -> str:
    """The text of a pattern file (UTF-8, a byte-order mark allowed); CliError when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise CliError(f"cannot read pattern file {path!r}: it is not UTF-8 text (byte 0x{e.object[e.start]:02x} "
                       f"at offset {e.start}); save it as UTF-8") from e
    except OSError as e:
        raise CliError(f"cannot read pattern file {path!r}: {_why(e)}") from e


def cmd_run(args) -> int:
    text = read_pattern_file(args.pattern_file)
    progress = args.progress_display
    df = _run(text, args.input, args, progress, time=args.time, type=args.type, time_unit=args.time_unit,
              time_format=args.time_format)
    _finish(df, args, progress)
    return 0


def cmd_explain(args) -> int:
    from .query import compile

    query = compile(read_pattern_file(args.pattern_file), **dict(_option(o) for o in args.option or ()))
    if args.analyze and args.input is None:
        raise CliError("explain --analyze runs the patterns: give an INPUT file")
    print(query.explain(args.input, time=args.time, type=args.type, time_unit=args.time_unit,
                        time_format=args.time_format, analyze=args.analyze))
    return 0


def demo_files() -> tuple[Path, Path]:
    """The bundled demo pattern and event table."""
    base = resources.files("jitcep") / "data"
    return Path(str(base / "demo.cep")), Path(str(base / "nasdaq_demo.parquet"))


def cmd_demo(args) -> int:
    pattern_file, data = demo_files()
    text = pattern_file.read_text()
    print(f"events:  {data.name} ({pl.scan_parquet(data, glob=False).select(pl.len()).collect().item()} rows: "
          "ticker, ts, open, peak, low, close, volume)")
    print("pattern:")
    print("\n".join("  " + line for line in text.strip().splitlines()))
    print()
    progress = args.progress_display
    df = _run(text, data, args, progress, time="ts", type="ticker", time_unit=None)
    _finish(df, args, progress)
    return 0


def cmd_warmup(args) -> int:
    from .warmup import warmup

    warmup()
    return 0


def _version() -> str:
    """The installed distribution's version (the one pip reports)."""
    try:
        return metadata.version("jitcep")
    except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown (not installed)"


def _error_text(e: BaseException) -> str:
    """What ``jitcep: error:`` prints: one line, except that a pattern syntax error keeps the source
    line and the caret under the column, as its exception shows them."""
    text = str(e)
    if not text:
        return type(e).__name__
    if isinstance(e, PatternSyntaxError):
        return text
    return text.splitlines()[0]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jitcep", description="Complex event processing over event tables.")
    p.add_argument("--version", action="version", version=f"jitcep {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("-o", "--output", metavar="OUT",
                        help=f"write the matches to OUT ({', '.join(WRITERS)}; default: print them)")
        sp.add_argument("--option", action="append", metavar="K=V",
                        help="an evaluation option, e.g. strategy=skip_till_next_match (repeatable)")
        sp.add_argument("--shape", choices=allowed(Shape), default="wide",
                        help="wide (default): one row per match; long: one row per (match, variable, event)")
        sp.add_argument("--engine", choices=allowed(Engine), default="compiled",
                        help="compiled (default; what it does not cover runs on the reference with a warning), "
                             "auto (the same without the warning) or reference")
        sp.add_argument("--threads", type=int, default=None,
                        help="threads the compiled engine's joins may use (default: every core; 1: one)")
        sp.add_argument("--limit", type=int, default=20, help="rows to print without -o (default 20)")
        sp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show the stage progress bar on stderr (default: on a terminal, for runs over 2 s)")

    def columns(sp):
        sp.add_argument("--time", default="ts", help="time column (default ts)")
        sp.add_argument("--type", default=None, help="event-type column")
        sp.add_argument("--time-unit", choices=allowed(TimeUnit), default=None,
                        help="unit of a numeric time column")
        sp.add_argument("--time-format", metavar="FMT", default=None,
                        help="strftime format of a text time column, e.g. '%%d/%%m/%%Y %%H:%%M' (default: ISO "
                             "dates and date-times in a CSV file are recognised)")

    r = sub.add_parser("run", help="run the pattern(s) in PATTERN_FILE over INPUT (a Parquet or CSV file "
                                   "or a directory of Parquet files; the name is literal, not a glob)")
    r.add_argument("pattern_file", help="a UTF-8 file of one or more patterns separated by ';'")
    r.add_argument("input", help="the events: a Parquet or CSV file, or a directory of Parquet files")
    columns(r)
    common(r)
    r.set_defaults(func=cmd_run)

    e = sub.add_parser("explain", help="print the plan of the pattern(s) in PATTERN_FILE; with INPUT also "
                                       "the choices that depend on the data, with --analyze what each "
                                       "operator produced and its time")
    e.add_argument("pattern_file", help="a UTF-8 file of one or more patterns separated by ';'")
    e.add_argument("input", nargs="?", default=None,
                   help="the events (optional): the plan then shows the choices that depend on them")
    e.add_argument("--analyze", action="store_true", help="run the patterns over INPUT and measure each operator")
    e.add_argument("--option", action="append", metavar="K=V", help="an evaluation option (repeatable)")
    columns(e)
    e.set_defaults(func=cmd_explain, progress=False, output=None)

    d = sub.add_parser("demo", help="run the bundled example end to end")
    common(d)
    d.set_defaults(func=cmd_demo)

    w = sub.add_parser("warmup", help="compile and cache the engine's kernels now, so the first run does not "
                                      "wait for them (for a Docker image build or a cluster bootstrap script)")
    w.set_defaults(func=cmd_warmup, progress=False, output=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    progress = args.progress_display = _progress(args)

    def show_warning(message, category, filename, lineno, file=None, line=None):
        progress.clear()
        print(f"jitcep: warning: {category.__name__}: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            if args.output:
                check_output(args.output)  # before the work, not after it
            return args.func(args)
    except (JitcepError, OSError) as e:
        # OSError: a file problem no narrower handler named (the ones above say which path and why)
        progress.close(done=False)
        print(f"jitcep: error: {type(e).__name__}: {_error_text(e)}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        progress.close(done=False)  # no-op after a normal finish


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

