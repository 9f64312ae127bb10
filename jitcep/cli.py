"""Command line: ``jitcep run PATTERN_FILE INPUT [-o OUT] ...`` and ``jitcep demo``.

Errors jitcep raises on purpose (:class:`~jitcep.errors.JitcepError`), and
unreadable pattern files, print one line ``jitcep: error: ...`` on stderr and
exit with status 2.  Output files are written atomically (a temporary file in
the target directory, then a rename), so a failed run leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path

import polars as pl

from ._typing import Engine, Shape, TimeUnit, allowed
from .errors import JitcepError

EXIT_ERROR = 2
WRITERS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson"}


class CliError(Exception):
    """A usage problem found by the CLI itself (bad --option, unknown output extension, missing file)."""


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


def _flatten(df: pl.DataFrame, *, lists_as_json: bool = True) -> pl.DataFrame:
    """Struct fields become ``var.field`` columns; lists become JSON text (CSV holds no nesting)."""
    out = []
    for name, dtype in df.schema.items():
        if isinstance(dtype, pl.Struct):
            out += [pl.col(name).struct.field(f.name).alias(f"{name}.{f.name}") for f in dtype.fields]
        elif isinstance(dtype, pl.List) and lists_as_json:
            inner = pl.element().struct.json_encode() if isinstance(dtype.inner, pl.Struct) else \
                pl.element().cast(pl.String)
            out.append(pl.concat_str(pl.lit("["), pl.col(name).list.eval(inner).list.join(","), pl.lit("]"))
                       .alias(name))
        else:
            out.append(pl.col(name))
    return df.select(out)


def _writer(path: str) -> str:
    ext = Path(path).suffix.lower()
    if ext not in WRITERS:
        raise CliError(f"cannot write {path!r}: use one of {', '.join(sorted(WRITERS))}")
    return WRITERS[ext]


def write_atomic(df: pl.DataFrame, path: str) -> None:
    """Write ``df`` to ``path`` (format by extension) via a temporary file and a rename."""
    kind = _writer(path)
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise CliError(f"cannot write {path!r}: directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if kind == "parquet":
            df.write_parquet(tmp)
        elif kind == "csv":
            _flatten(df).write_csv(tmp)
        else:
            df.write_ndjson(tmp)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _show(df: pl.DataFrame, limit: int) -> None:
    with pl.Config(tbl_rows=limit, tbl_cols=16, tbl_width_chars=200, fmt_str_lengths=60, tbl_hide_dataframe_shape=True):
        print(_flatten(df.head(limit), lists_as_json=False))
    more = f" (showing {limit})" if df.height > limit else ""
    print(f"{df.height} match{'es' if df.height != 1 else ''}{more}")


def _run(pattern_text: str, events, args, *, time: str, type: str | None, time_unit: str | None) -> pl.DataFrame:
    from .query import compile

    options = dict(_option(o) for o in args.option or ())
    query = compile(pattern_text, **options)
    return query.run(events, time=time, type=type, time_unit=time_unit, engine=args.engine,
                     shape=args.shape)


def cmd_run(args) -> int:
    if args.output:
        _writer(args.output)  # refuse an unknown format before doing the work
    try:
        text = Path(args.pattern_file).read_text()
    except OSError as e:
        raise CliError(f"cannot read pattern file {args.pattern_file!r}: {e.strerror}") from e
    df = _run(text, args.input, args, time=args.time, type=args.type, time_unit=args.time_unit)
    if args.output:
        write_atomic(df, args.output)
        print(f"{df.height} matches written to {args.output}")
    else:
        _show(df, args.limit)
    return 0


def demo_files() -> tuple[Path, Path]:
    """The bundled demo pattern and event table."""
    base = resources.files("jitcep") / "data"
    return Path(str(base / "demo.cep")), Path(str(base / "nasdaq_demo.parquet"))


def cmd_demo(args) -> int:
    pattern_file, data = demo_files()
    text = pattern_file.read_text()
    print(f"events:  {data.name} ({pl.scan_parquet(data).select(pl.len()).collect().item()} rows: "
          "ticker, ts, open, peak, low, close, volume)")
    print("pattern:")
    print("\n".join("  " + line for line in text.strip().splitlines()))
    print()
    df = _run(text, data, args, time="ts", type="ticker", time_unit=None)
    if args.output:
        write_atomic(df, args.output)
        print(f"{df.height} matches written to {args.output}")
    else:
        _show(df, args.limit)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jitcep", description="Complex event processing over event tables.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("-o", "--output", help="write the matches to OUT (.parquet, .csv, .ndjson)")
        sp.add_argument("--option", action="append", metavar="K=V",
                        help="an evaluation option, e.g. strategy=skip_till_next_match (repeatable)")
        sp.add_argument("--shape", choices=allowed(Shape), default="wide")
        sp.add_argument("--engine", choices=allowed(Engine), default="reference")
        sp.add_argument("--limit", type=int, default=20, help="rows to print without -o (default 20)")

    r = sub.add_parser("run", help="run the pattern(s) in PATTERN_FILE over INPUT (Parquet or CSV)")
    r.add_argument("pattern_file")
    r.add_argument("input")
    r.add_argument("--time", default="ts", help="time column (default ts)")
    r.add_argument("--type", default=None, help="event-type column")
    r.add_argument("--time-unit", choices=allowed(TimeUnit), default=None,
                   help="unit of a numeric time column")
    common(r)
    r.set_defaults(func=cmd_run)

    d = sub.add_parser("demo", help="run the bundled example end to end")
    common(d)
    d.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except (JitcepError, CliError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"jitcep: error: {type(e).__name__}: {msg}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

