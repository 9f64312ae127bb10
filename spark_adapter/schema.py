"""Spark schemas <-> the Polars schemas jitcep's output is defined on.

The output schema is built on the driver, never by running the query
(issue 4): the Spark input schema is turned into the Polars schema a task
will see (through the same Arrow conversion Spark's mapInArrow uses), then
:func:`jitcep.output_schema` gives the Polars output schema, which is
turned back into a Spark schema.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from jitcep.errors import AttributeTypeError

# Spark's TIMESTAMP reaches Python as UTC instants (mapInArrow); the adapter keeps that form.
ARROW_TZ = "UTC"


def arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema mapInArrow hands a task for rows of ``schema``."""
    return to_arrow_schema(schema, timezone=ARROW_TZ)


def polars_schema(schema: T.StructType) -> pl.Schema:
    """The Polars schema of a task's frame (Spark -> Arrow -> Polars, as in the worker)."""
    for f in schema.fields:
        if _has_map(f.dataType):
            raise AttributeTypeError(f"column {f.name!r} has Spark type {f.dataType.simpleString()}; "
                                     "maps cannot be carried into match output: select it out or convert it")
    empty = pa.Table.from_batches([], schema=arrow_schema(schema))
    return pl.from_arrow(empty).schema


def _has_map(dt: T.DataType) -> bool:
    if isinstance(dt, T.MapType):
        return True
    if isinstance(dt, T.ArrayType):
        return _has_map(dt.elementType)
    if isinstance(dt, T.StructType):
        return any(_has_map(f.dataType) for f in dt.fields)
    return False


_SIMPLE = {
    pl.Int8: T.ByteType(), pl.Int16: T.ShortType(), pl.Int32: T.IntegerType(), pl.Int64: T.LongType(),
    pl.UInt8: T.ShortType(), pl.UInt16: T.IntegerType(), pl.UInt32: T.LongType(),
    pl.Float32: T.FloatType(), pl.Float64: T.DoubleType(), pl.Boolean: T.BooleanType(),
    pl.String: T.StringType(), pl.Binary: T.BinaryType(), pl.Date: T.DateType(), pl.Null: T.NullType(),
}


def spark_type(dtype: pl.DataType) -> T.DataType:
    """The Spark type of a Polars dtype (as produced by jitcep's output on Spark-shaped input)."""
    base = dtype.base_type()
    if base in (pl.Enum, pl.Categorical):  # e.g. the long shape's ``variable``; Spark has no enums
        return T.StringType()
    if base in _SIMPLE:
        return _SIMPLE[base]
    if base == pl.Datetime:
        # Polars keeps the instant for a zoned Datetime: Spark TIMESTAMP; a naive one: TIMESTAMP_NTZ
        return T.TimestampType() if dtype.time_zone is not None else T.TimestampNTZType()
    if base == pl.Decimal:
        return T.DecimalType(dtype.precision or 38, dtype.scale or 0)
    if base == pl.Duration:
        return T.DayTimeIntervalType()
    if base == pl.List or base == pl.Array:
        return T.ArrayType(spark_type(dtype.inner), containsNull=True)
    if base == pl.Struct:
        return T.StructType([T.StructField(f.name, spark_type(f.dtype), nullable=True) for f in dtype.fields])
    raise AttributeTypeError(f"output dtype {dtype} has no Spark equivalent")


def spark_schema(schema: pl.Schema) -> T.StructType:
    """The Spark form of a Polars schema (every field nullable, like Polars)."""
    return T.StructType([T.StructField(name, spark_type(dt), nullable=True) for name, dt in schema.items()])
