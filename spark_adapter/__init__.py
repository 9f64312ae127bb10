"""Run jitcep queries on Spark DataFrames: ``spark_adapter.detect(sdf, query, ...)``.

The adapter translates, it does not re-implement semantics (DESIGN.md
section 4): every Spark task runs the same event-table builder, engine and
output builder as :meth:`jitcep.Query.run` on its rows.  See docs/spark.md.

This module stays free of heavy imports: Spark's Python workers import it
before :mod:`spark_adapter._entry` sets their thread counts and caches, so
the annotations below name jitcep's and PySpark's types only for type checkers.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from jitcep._typing import Engine, Shape, TimeUnit

__all__ = ["detect", "SplitWarning", "Udf"]

#: the UDF family the tasks run in: mapInArrow or mapInPandas
Udf = Literal["arrow", "pandas"]

# PySpark >= 4.0 warns on every pandas >= 3 session although every call the adapter makes works with it
# (tests/test_spark_adapter.py runs them all): silenced around jitcep's own PySpark calls only.
_PANDAS3_WARNING = "PySpark does not yet fully support pandas"


class SplitWarning(UserWarning):
    """The query runs in fewer Spark tasks than the data allows, because splitting would change results."""


def detect(sdf: DataFrame, query, *, time: str = "ts", type: str | None = None,
           partition_by: str | list[str] | None = None, seq_col: str | None = None,
           time_unit: TimeUnit | None = None, engine: Engine = "compiled", shape: Shape = "wide",
           udf: Udf = "arrow", num_partitions: int | None = None, range_width: int | None = None,
           rows_per_range: int = 1_000_000, max_key_rows: int | Literal["auto"] | None = "auto",
           cache_dir: str | None = None) -> DataFrame:
    """Find every match of ``query`` in the Spark DataFrame ``sdf``: :meth:`jitcep.Query.run` on Spark.

    Parameters
    ----------
    sdf
        The events, a ``pyspark.sql.DataFrame``.  Rows need not be sorted.
    query
        A :class:`jitcep.Query`, or anything :func:`jitcep.compile` accepts
        (compiled with default options).
    time
        The time column: an integer, an integral float/double, DATE, TIMESTAMP
        or TIMESTAMP_NTZ column.
    type
        The event-type column; without it only untyped variables (``* v``) match.
    partition_by
        Column(s) splitting the events into independent streams, one per value
        (null is a value of its own), as in ``Query.run(partition_by=...)``
        (semantics §13).
    seq_col
        An integer column ordering events with equal timestamps; the output's
        ``row`` is its value.  Without it a ``monotonically_increasing_id``
        taken from the input as given plays that role (docs/spark.md).
    time_unit
        The unit of a numeric time column (``"s"``, ``"ms"``, ...); needed
        when a pattern's window is a duration such as ``10 minutes``.
    engine
        ``"compiled"`` (default): the Numba engine for what it covers; any other
        pattern runs on the reference evaluator, announced once on the driver by
        a :class:`~jitcep.errors.FallbackWarning` saying why -- per pattern when
        several run.  ``"auto"``: the same, silently.  ``"reference"``: the
        executable semantics for everything.
    shape
        ``"wide"``: one row per match; ``"long"``: one row per (match, variable, event).
    udf
        ``"arrow"`` (mapInArrow, the default: faster) or ``"pandas"`` (mapInPandas).
    num_partitions
        Spark tasks to spread the work over.  Default: from the row count and
        ``sparkContext.defaultParallelism`` (docs/spark.md, "How many tasks").
    range_width
        R for unkeyed queries, in time-column units (default: from the data,
        about ``rows_per_range`` events per range, at least 10 windows).
    rows_per_range
        Rows a time range, a split key or a task holds at most, about (default 10^6).
    max_key_rows
        Split a key with more rows than this by time (skew).  ``"auto"``
        (default): more than ``max(rows_per_range, rows / num_partitions)``;
        ``None`` or 0: never.  Costs one aggregation job at call time unless
        Spark knows the input has at most that many rows (local data, ``range``).
    cache_dir
        Where executors keep Numba's and jitcep's compile caches (``cache_dir/numba``,
        ``cache_dir/codegen``): a directory each executor's user owns and nobody
        else can write, or a new path (created 0700); any other is bypassed with
        an ``UntrustedCacheWarning`` (docs/spark.md).  Default: each executor's
        own per-user defaults.

    Returns
    -------
    pyspark.sql.DataFrame
        The columns of ``Query.run`` (``jitcep.output_schema`` in Spark types);
        ``match_id`` is unique across the result (``task partition id << 33``
        plus the task's own 0-based match number).  Lazy: the matching runs when
        the result is collected or written.

    Raises
    ------
    MissingColumnError, TimestampError, AttributeTypeError, WindowUnitError, OptionError,
    PatternError, QueryShippingError, WorkerPythonError
        Before any Spark job starts.  ``WorkerPythonError``: under a local master,
        ``PYSPARK_PYTHON`` names an interpreter that cannot run jitcep.  When it
        is not set, jitcep's tasks run this driver's own interpreter.

    Examples
    --------
    >>> import jitcep, spark_adapter                                    # doctest: +SKIP
    >>> q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [sym] AND a.x < b.x WITHIN 10")  # doctest: +SKIP
    >>> spark_adapter.detect(events_sdf, q, type="type", seq_col="seq").count()  # doctest: +SKIP
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_PANDAS3_WARNING, category=FutureWarning)
        from .driver import detect as _detect

        return _detect(sdf, query, time=time, type=type, partition_by=partition_by, seq_col=seq_col,
                       time_unit=time_unit, engine=engine, shape=shape, udf=udf, num_partitions=num_partitions,
                       range_width=range_width, rows_per_range=rows_per_range, max_key_rows=max_key_rows,
                       cache_dir=cache_dir)
