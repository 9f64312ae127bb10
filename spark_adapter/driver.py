"""``detect(sdf, query, ...)``: the driver side of the Spark adapter (:func:`detect`).

Everything that can be checked without data is checked here, before any
Spark job starts (DESIGN.md section 5): columns, the time column's type,
the pattern's attribute types, the window's unit, the output schema, and
that the query survives pickling.  Then the input is prepared (sequence
column, time-range copies, key partitioning; :mod:`spark_adapter.plan`) and
handed to mapInArrow or mapInPandas, whose body is :mod:`spark_adapter.worker`.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
import pickle
import shutil
import subprocess
import sys
import warnings
from typing import Callable

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

import jitcep
from jitcep._typing import Engine, Shape
from jitcep.errors import (AttributeTypeError, FallbackWarning, InputError, MissingColumnError, OptionError,
                           QueryShippingError, TimestampError, UnsupportedPatternError, WorkerPythonError)
from jitcep.events import attributes_read, build_event_table, check_type_column
from jitcep.options import check_choice
from jitcep.output import output_schema, wants_all_columns
from jitcep.query import _fallback_message

from . import SplitWarning, Udf
from . import plan as P
from ._entry import arrow_task, pandas_task
from .schema import arrow_schema, polars_schema, spark_schema
from .worker import Job

_INT64_MAX = 2**63 - 1

_TIME_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
               T.DateType, T.TimestampType, T.TimestampNTZType)
_INT_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def _name(column: str) -> str:
    """``column`` as a Spark SQL identifier: in backticks, its own backticks doubled, so a dot, a space
    or a backtick in a name is never read as struct access or syntax."""
    return "`" + column.replace("`", "``") + "`"


def _col(column: str):
    """The column named ``column`` (every column reference the adapter builds goes through here)."""
    return F.col(_name(column))


def _missing(name: str, what: str, columns) -> MissingColumnError:
    return MissingColumnError(f"{what} {name!r} is not a column of the Spark DataFrame; columns: "
                              f"{', '.join(map(repr, columns)) or '(none)'}")


def _time_as_long(col: str, dtype: T.DataType):
    """The time column as the int64 the event table stores (same unit, exact)."""
    if isinstance(dtype, T.TimestampType):
        return F.unix_micros(_col(col))
    if isinstance(dtype, T.TimestampNTZType):  # wall-clock micros, no time zone involved
        return F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {_name(col)})")
    if isinstance(dtype, T.DateType):
        return F.unix_date(_col(col))
    return _col(col).cast("long")


def _floor_div(x: str, r: str):
    """floor(x / r) for longs as a SQL expression: exact, also for negative x (pmod is never negative)."""
    return f"(({x}) - pmod({x}, {r})) div ({r})"


def _range_bounds(width: int, window: int):
    """(first, last) segment of each row: floor(t/R) and floor((t+W)/R)."""
    t = _name(P.TIME)
    return F.expr(_floor_div(t, f"{width}L")), F.expr(_floor_div(f"{t} + {window}L", f"{width}L"))


def _resolve_engine(engine: str, patterns, options, *, stacklevel: int) -> str:
    """The engine the tasks run, after the driver has announced any fallback.

    Which patterns the compiled engine covers is decided from the patterns and
    options alone (:func:`jitcep.runtime.check_supported`), so it is decided
    here, once: under ``"compiled"`` a refused pattern gives one
    FallbackWarning on the driver (the message ``Query.run`` gives), not one
    per task in the executors' logs.  The tasks then run ``"auto"``: compiled
    where covered, reference elsewhere, without warning again.
    """
    check_choice("engine", engine, Engine)
    if engine == "reference":
        return "reference"
    from jitcep.runtime import check_supported  # lazy: `import jitcep` does not load the Numba engine

    refused = {}
    for i, p in enumerate(patterns):
        try:
            check_supported(p, options)
        except UnsupportedPatternError as e:
            refused[i] = str(e)
    if refused and engine == "compiled":
        warnings.warn(FallbackWarning(_fallback_message(refused, len(patterns))), stacklevel=stacklevel + 1)
    return "auto"


# Spark's PythonWorkerFactory runs this when nobody set PYSPARK_PYTHON (pyspark.core.context)
_SPARK_DEFAULT_PYTHON = "python3"
# what a task imports: jitcep's packages and their compiled dependencies
_TASK_MODULES = ("spark_adapter", "jitcep", "polars", "pyarrow", "numpy", "numba")


def _is_this_python(exe: str) -> bool:
    found = shutil.which(exe)
    return found is not None and os.path.abspath(found) == os.path.abspath(sys.executable)


@functools.lru_cache(maxsize=8)
def _cannot_run_tasks(exe: str, pythonpath: str) -> str | None:
    """Why the interpreter ``exe`` cannot run jitcep's tasks, or None.

    Asks ``exe`` itself (a subprocess with this environment, which local-mode
    workers inherit) for its version and which of :data:`_TASK_MODULES` it
    cannot find; nothing is imported, so it takes a few tens of milliseconds,
    once per (interpreter, PYTHONPATH).
    """
    code = ("import importlib.util as u, sys; print('%d.%d' % sys.version_info[:2]); "
            f"print(' '.join(m for m in {_TASK_MODULES!r} if u.find_spec(m) is None))")
    env = dict(os.environ, PYTHONPATH=pythonpath)
    try:
        r = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError) as e:
        return f"it cannot be started ({e})"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        return f"it fails to start ({last})"
    version, _, missing = r.stdout.partition("\n")
    here = "%d.%d" % sys.version_info[:2]
    if version.strip() != here:
        return f"it is Python {version.strip()}, the driver Python {here}"
    if missing.split():
        return f"it cannot import {', '.join(missing.split())}"
    return None


def worker_python(sc) -> str | None:
    """The interpreter jitcep's tasks must name instead of Spark's choice, or None to keep Spark's.

    Only a local master (``local[...]``, ``local-cluster``) is checked: its
    Python workers run on this machine with this environment, and without
    ``PYSPARK_PYTHON`` Spark starts them with whatever ``python3`` is first on
    the PATH, which need not have jitcep installed (a job then fails at collect
    with "No module named 'spark_adapter'" from a worker).  So when nobody
    chose the workers' Python, jitcep's tasks run this driver's own
    ``sys.executable``; when ``PYSPARK_PYTHON`` names another interpreter, it is
    asked whether it can run the tasks, and WorkerPythonError says what to set
    if not.  A cluster's executors have their own Pythons: not checked.
    """
    if not str(sc.master).startswith("local"):
        return None
    exe = sc.pythonExec
    if _is_this_python(exe):
        return None
    if "PYSPARK_PYTHON" not in os.environ and exe == _SPARK_DEFAULT_PYTHON:
        return sys.executable
    why = _cannot_run_tasks(exe, os.environ.get("PYTHONPATH", ""))
    if why is not None:
        raise WorkerPythonError(
            f"Spark's Python workers would run {exe!r} (PYSPARK_PYTHON), but {why}, so jitcep's tasks "
            f"cannot run there: set PYSPARK_PYTHON={sys.executable} (this driver's Python) before creating "
            f"the SparkSession, or install jitcep into that interpreter's environment")
    return None


@contextlib.contextmanager
def _tasks_run_in(sc, exe: str | None):
    """Name ``exe`` as the Python of the UDFs created inside (PySpark reads ``sc.pythonExec`` when it
    builds a UDF, and keys its worker processes by it), leaving the session's other UDFs as they were."""
    if exe is None:
        yield
        return
    before = sc.pythonExec
    sc.pythonExec = exe
    try:
        yield
    finally:
        sc.pythonExec = before


def check_shippable(patterns, options) -> None:
    """Raise QueryShippingError unless the query pickles and unpickles to an equal query."""
    try:
        back = pickle.loads(pickle.dumps((patterns, options), protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # any pickling failure means the executors cannot get the query
        raise QueryShippingError(f"the query cannot be sent to the executors: {exc}") from exc
    if back != (patterns, options):
        raise QueryShippingError("the query does not survive pickling unchanged; it cannot be sent to the "
                                 "executors")


def worker_env(cache_dir: str | None) -> dict[str, str]:
    """Environment for the Python workers: one thread each; compile caches only where asked.

    ``cache_dir`` (else the driver's ``JITCEP_SPARK_CACHE_DIR``) gives both
    caches, ``<dir>/numba`` and ``<dir>/codegen``; else the driver's own
    ``NUMBA_CACHE_DIR`` / ``JITCEP_CACHE_DIR`` are passed on.  Otherwise none
    is set: a worker then uses its own user's private defaults
    (:mod:`jitcep.cachedirs`), as a path chosen on the driver would name the
    driver user's directory on the executors.  A worker checks every cache
    directory and compiles in memory, with a warning, rather than use one that
    others could write.
    """
    env = {"POLARS_MAX_THREADS": "1", "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    base = cache_dir or os.environ.get("JITCEP_SPARK_CACHE_DIR")
    for key, sub in (("NUMBA_CACHE_DIR", "numba"), ("JITCEP_CACHE_DIR", "codegen")):
        value = os.path.join(base, sub) if base else os.environ.get(key)
        if value:
            env[key] = value
    return env


def detect(sdf: DataFrame, query, *, time: str, type: str | None, partition_by, seq_col: str | None,
           time_unit: str | None, engine: str, shape: str, udf: str, num_partitions: int | None,
           range_width: int | None, rows_per_range: int, max_key_rows, cache_dir: str | None) -> DataFrame:
    """The body of :func:`spark_adapter.detect` (whose docstring says what each argument means), called
    with every argument; warnings it gives name the caller of :func:`spark_adapter.detect`."""
    q = query if isinstance(query, jitcep.Query) else jitcep.compile(query)
    patterns, options = tuple(q.patterns), q.options
    check_choice("udf", udf, Udf)
    check_choice("shape", shape, Shape)
    check_choice("engine", engine, Engine)
    for name, value in (("num_partitions", num_partitions), ("range_width", range_width),
                        ("rows_per_range", rows_per_range)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise OptionError(f"{name} must be a positive integer, got {value!r}")
    if max_key_rows is not None and max_key_rows != "auto" and (
            not isinstance(max_key_rows, int) or isinstance(max_key_rows, bool) or max_key_rows < 0):
        raise OptionError(f"max_key_rows must be 'auto', None or an integer >= 0, got {max_key_rows!r}")
    skew = max_key_rows or None  # 0 turns it off like None

    # --- columns and types, checked on the schema -------------------------------
    if type is None:  # typed variables could never match: a forgotten argument (semantics §3), as in Query.run
        check_type_column(query.patterns)
    fields = {f.name: f.dataType for f in sdf.schema.fields}
    columns = list(fields)
    for c in columns:
        if c.startswith("__cep_"):
            raise InputError(f"column {c!r}: names starting with '__cep_' are reserved for the adapter")
    part_cols = P.partition_columns(partition_by)
    for name, what in ([(time, "time column")] + ([(type, "type column")] if type else [])
                       + ([(seq_col, "seq_col")] if seq_col else []) + [(c, "partition_by column") for c in part_cols]):
        if name not in fields:
            raise _missing(name, what, columns)
    if not isinstance(fields[time], _TIME_TYPES):
        raise TimestampError(f"time column {time!r} has Spark type {fields[time].simpleString()}; it must be "
                             "an integer, an integral float/double, DATE, TIMESTAMP or TIMESTAMP_NTZ")
    if seq_col is not None and not isinstance(fields[seq_col], _INT_TYPES):
        raise AttributeTypeError(f"seq_col {seq_col!r} has Spark type {fields[seq_col].simpleString()}; "
                                 "it must be an integer column (its value is the output's row)")

    if wants_all_columns(patterns):
        selected = columns
    else:
        wanted = [time, *([type] if type else []), *part_cols,
                  *(a for a in attributes_read(patterns) if a in fields)]
        selected = list(dict.fromkeys(wanted))
    in_schema = T.StructType([T.StructField(c, fields[c], True) for c in selected])
    pl_in = polars_schema(in_schema)
    # The local builder on an empty frame of this schema: every named input error, no data read.
    table0 = build_event_table(pl.DataFrame(schema=pl_in), patterns, time=time, type=type,
                               time_unit=time_unit, partition_by=part_cols or None)
    out_spark = spark_schema(output_schema(q, pl_in, time=time, type=type, shape=shape))
    check_shippable(patterns, options)
    spark = sdf.sparkSession
    task_python = worker_python(spark.sparkContext)
    task_engine = _resolve_engine(engine, patterns, options, stacklevel=3)

    # --- how to split -------------------------------------------------------------
    decision = P.decide(patterns, options, table0, partition_by)
    if decision.mode == "single":
        warnings.warn(f"jitcep query runs in a single Spark task: {decision.reason}", SplitWarning, stacklevel=3)
    elif isinstance(skew, int) and decision.mode == "keyed" and not decision.can_split_time:
        warnings.warn(f"max_key_rows ignored, large keys are not split by time: {decision.reason}",
                      SplitWarning, stacklevel=3)
    parallelism = spark.sparkContext.defaultParallelism

    def tasks(rows: int | None) -> int:
        """How many tasks to repartition into, for ``rows`` input rows (None: not known without a job)."""
        return num_partitions or P.task_count(rows, parallelism, rows_per_range)

    df = sdf.select(*map(_col, selected), (_col(seq_col).cast("long") if seq_col else
                                           F.monotonically_increasing_id()).alias(P.SEQ))
    window = decision.window
    split_time = False
    if decision.mode == "keyed":
        key = [_col(k) for k in decision.key]
        if not part_cols:  # a null equivalence key equals nothing: such rows never match
            df = df.filter(functools.reduce(operator.and_, [k.isNotNull() for k in key]))
            # split as [attr] compares (semantics section 4); partition_by= streams are exact values (section 13)
            key = [_as_compared(k, fields[name]) for k, name in zip(key, decision.key)]
        rows = _max_rows(df)
        if skew is not None and decision.can_split_time and window is not None:
            df, split_time, rows = _split_heavy_keys(df, key, fields[time], time, window, skew,
                                                     rows_per_range, tasks)
        df = df.repartition(tasks(rows), *key, *([_col(P.SEG)] if split_time else []))
    elif decision.mode == "ranges":
        df = df.withColumn(P.TIME, _time_as_long(time, fields[time]))
        row = df.agg(F.min(_col(P.TIME)).alias("lo"), F.max(_col(P.TIME)).alias("hi"),
                     F.count(F.lit(1)).alias("n")).first()
        lo, hi, n = row["lo"], row["hi"], row["n"]
        width = range_width
        if lo is not None and width is None:
            width = P.range_width(window, lo, hi, n, rows_per_range)
        if lo is None or hi + window + width > _INT64_MAX or width > hi - lo:
            # nothing to split (empty, one range, or copies would overflow int64): one task is exact
            df = df.drop(P.TIME).repartition(1)
        else:
            lo_r, hi_r = _range_bounds(width, window)
            df = (df.withColumn("__cep_lo", lo_r).withColumn(P.SEG, F.explode(F.sequence(lo_r, hi_r)))
                  .withColumn(P.HOME, _col(P.SEG) == _col("__cep_lo")).drop(P.TIME, "__cep_lo")
                  .repartition(tasks(n), _col(P.SEG)))
            split_time = True
    elif decision.mode == "positions":
        df, split_time = _split_positions(df, time, decision.events, range_width, rows_per_range, tasks)
    else:
        df = df.repartition(1)

    # mapInArrow / mapInPandas look each column up by its name parsed as a reference (``df[name]``),
    # which a dot or a backtick in the name breaks: input columns travel under positional names and
    # get their own back in the task.
    wire = {c: f"{P.INPUT}{i}" for i, c in enumerate(selected)}
    df = df.select(*[_col(c).alias(wire.get(c, c)) for c in df.columns])
    job = Job(patterns=patterns, options=options, time=time, type=type, time_unit=time_unit,
              partition_by=P.stream_columns(partition_by, split_time),
              engine=task_engine,
              shape=shape, source_columns=tuple(selected), split_time=split_time,
              target_schema=arrow_schema(out_spark), renamed=tuple((w, c) for c, w in wire.items()))
    payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
    env = worker_env(cache_dir)
    with _tasks_run_in(spark.sparkContext, task_python):
        if udf == "arrow":
            return df.mapInArrow(arrow_task(payload, env), out_spark)
        session_tz = spark.conf.get("spark.sql.session.timeZone")
        return df.mapInPandas(pandas_task(payload, env, arrow_schema(df.schema), session_tz), out_spark)


def _split_positions(df: DataFrame, time: str, n: int, width: int | None, rows_per_range: int,
                     tasks: Callable[[int | None], int]):
    """Position ranges for unkeyed count windows (``WITHIN n EVENTS``; :mod:`spark_adapter.plan`).

    Global positions without one task: ``orderBy(time, seq)`` range-partitions
    and sorts; the result is materialised once (``localCheckpoint``) so every
    later job sees the same partitions in the same order (a recomputed range
    partitioning could cut elsewhere).  One small job counts rows per sorted
    partition; the driver turns the counts into prefix offsets, and position
    = offset of the partition + the row's index in it, read from
    ``monotonically_increasing_id()`` (partition id << 33 + index) on the
    checkpoint -- all on the JVM, no Python pass.  Each event is then copied
    into ranges floor(p/R) .. floor((p+n-1)/R) with a home flag, exactly like
    time ranges.  Skipped (one task, exact) when Spark's plan bounds the rows
    by ``rows_per_range`` and no ``range_width`` is given.  ``tasks(rows)``: how many tasks to
    spread the copies over.  Returns (frame, split?).
    """
    bound = _max_rows(df)
    if width is None and bound is not None and bound <= rows_per_range:
        return df.repartition(1), False
    ck = df.orderBy(_col(time).asc_nulls_first(), _col(P.SEQ).asc()).localCheckpoint(eager=True)
    counts = dict(ck.groupBy(F.spark_partition_id().alias("p")).count().collect())
    total = sum(counts.values())
    if width is None:
        width = P.range_width(n - 1, 0, total - 1, total, rows_per_range)
    if total <= width:  # empty or one range: one task is exact
        return ck.repartition(1), False
    offsets, acc = [], 0
    for p in range(max(counts) + 1):
        offsets.append(acc)
        acc += counts.get(p, 0)
    pid = F.spark_partition_id()
    local_index = F.monotonically_increasing_id() - F.shiftleft(pid.cast("long"), 33)
    pos = F.element_at(F.array(*[F.lit(o).cast("long") for o in offsets]), pid + 1) + local_index
    lo = F.expr(f"{_name(P.POS)} div {width}L")
    hi = F.expr(f"({_name(P.POS)} + {n - 1}L) div {width}L")
    out = (ck.withColumn(P.POS, pos)  # on the checkpoint's own partitions, before any shuffle
           .withColumn("__cep_lo", lo).withColumn(P.SEG, F.explode(F.sequence(_col("__cep_lo"), hi)))
           .withColumn(P.HOME, _col(P.SEG) == _col("__cep_lo")).drop("__cep_lo")
           .repartition(tasks(total), _col(P.SEG)))
    return out, True


def _max_rows(df: DataFrame) -> int | None:
    """An upper bound on ``df``'s rows that Spark's optimizer knows without a job, else None.

    Defined for local data (``createDataFrame``), ``range`` and ``limit``; not for
    files or cached frames.  Only a shortcut, so any failure (Spark Connect has
    no ``_jdf``) means "unknown".
    """
    try:
        bound = df._jdf.queryExecution().optimizedPlan().maxRows()
        return int(bound.get()) if bound.isDefined() else None
    except Exception:  # noqa: BLE001 -- py4j/Connect errors of any kind: fall back to the job
        return None


def _as_compared(key, dtype: T.DataType):
    """An equivalence key's column as ``[attr]`` compares it: a decimal as float64 (semantics section 4), so
    decimals equal as float64 land in one task; others by their values."""
    return key.cast("double") if isinstance(dtype, T.DecimalType) else key


def _split_heavy_keys(df: DataFrame, key, time_type, time: str, window: int, max_key_rows,
                      rows_per_range: int, tasks: Callable[[int | None], int]):
    """Give keys (``key``: their column expressions, :func:`_as_compared`) with more than ``max_key_rows`` rows
    time ranges of their own (skew, issue 4).

    ``max_key_rows="auto"`` means :func:`plan.skew_threshold` of the input's
    row count, the number of tasks ``tasks(rows)`` and ``rows_per_range``.  One job answers both
    questions: (count, first, last time) per key, aggregated again into one
    row (the total, and the keys above the threshold's floor), so only the
    candidates reach the driver.  Keys are grouped by ``xxhash64`` of the key
    columns rather than by their values: an int64 hash aggregate is about 3x
    cheaper than one over strings (perf/bench_spark.py), Spark's hash already
    equates what grouping equates (-0.0 and 0.0, every NaN, null), and a
    collision only merges two keys' statistics -- a split is exact for any
    width, so it can at worst split a key that did not need it.  No job at all
    when Spark's plan already bounds the rows by the floor.  Each heavy key
    gets ``R_k`` from its count and span (about threshold rows per range, at
    least 10 windows); other keys get segment 0 with every copy at home.
    Returns (frame, split?, the row count: counted, else Spark's bound, else None).
    """
    floor = rows_per_range if max_key_rows == "auto" else max_key_rows
    bound = _max_rows(df)
    if bound is not None and bound <= floor:
        return df, False, bound
    h, t_col = "__cep_h", _time_as_long(time, time_type)
    per_key = (df.select(F.xxhash64(*key).alias(h), t_col.alias(P.TIME)).groupBy(_col(h))
               .agg(F.count(F.lit(1)).alias("n"), F.min(_col(P.TIME)).alias("lo"),
                    F.max(_col(P.TIME)).alias("hi")))
    row = per_key.agg(F.sum(_col("n")).alias("total"),
                      F.collect_list(F.when(_col("n") > floor, F.struct(*map(_col, (h, "n", "lo", "hi")))))
                      .alias("heavy")).first()
    total = row["total"] or 0
    threshold = P.skew_threshold(total, tasks(total), floor) if max_key_rows == "auto" else max_key_rows
    rows = []
    for r in row["heavy"]:
        if r["n"] <= threshold:
            continue
        width = P.range_width(window, r["lo"], r["hi"], r["n"], threshold)
        if width <= r["hi"] - r["lo"] and r["hi"] + window + width <= _INT64_MAX:
            rows.append((r[h], width))
    if not rows:
        return df, False, total
    widths = df.sparkSession.createDataFrame(rows, f"{h} long, __cep_width long")
    t, w = _name(P.TIME), _name("__cep_width")
    lo = F.expr(f"CASE WHEN {w} IS NULL THEN 0L ELSE {_floor_div(t, w)} END")
    hi = F.expr(f"CASE WHEN {w} IS NULL THEN 0L ELSE {_floor_div(f'{t} + {window}L', w)} END")
    df = (df.withColumn(h, F.xxhash64(*key)).withColumn(P.TIME, t_col)
          .join(F.broadcast(widths), on=h, how="left")
          .withColumn("__cep_lo", lo).withColumn(P.SEG, F.explode(F.sequence(_col("__cep_lo"), hi)))
          .withColumn(P.HOME, _col(P.SEG) == _col("__cep_lo"))
          .drop(P.TIME, "__cep_lo", "__cep_width", h))
    return df, True, total
