"""The output contract end to end: ``output_schema`` against ``Query.run``'s schema, several patterns'
shared names, and inputs of unusual shapes (semantics §10, §12; jitcep.output's module docstring).

The oracle is the run itself where the contract is an equality (``output_schema(q, df.schema)`` is
``q.run(df).schema``; an input a run refuses raises the same named error from ``output_schema``), the
reference evaluator where matches are compared, and hand-enumerated rows elsewhere.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import jitcep
from jitcep.errors import AttributeTypeError, JitcepError

warnings.simplefilter("ignore", jitcep.FallbackWarning)


def _empty_run(q, schema, **kw):
    """``q.run`` on a frame of ``schema`` with no rows: its schema, or the named error it raises."""
    try:
        return q.run(pl.DataFrame(schema=schema), **kw).schema
    except JitcepError as e:
        return e


@pytest.mark.parametrize("ret, dtype", [
    ("-a.x", pl.String), ("a.x + 1", pl.String), ("a.x * b.x", pl.Categorical), ("a.x + 1", pl.Duration("us")),
    ("a.x > 1", pl.String), ("a.x / 2", pl.Boolean), ("abs(a.x)", pl.Date), ("-a.x", pl.List(pl.Int64)),
    ("a.x", pl.Struct({"u": pl.Int64})), ("a.x = 'p'", pl.Int32)])
def test_output_schema_raises_the_runs_named_error_for_what_a_run_refuses(ret, dtype):
    # a run type-checks the RETURN items and refuses a column jitcep cannot read, on any number of rows;
    # output_schema (the Spark adapter's result schema) met Polars' InvalidOperationError instead
    q = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN 5 RETURN {ret} AS r")
    schema = {"ts": pl.Int64, "type": pl.String, "x": dtype}
    want = _empty_run(q, schema, type="type")
    assert isinstance(want, AttributeTypeError)
    with pytest.raises(AttributeTypeError) as got:
        jitcep.output_schema(q, schema, type="type")
    assert str(got.value) == str(want)


def test_output_schema_raises_the_runs_error_for_a_type_column_of_another_dtype():
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5")
    schema = {"ts": pl.Int64, "type": pl.Float64}
    want = _empty_run(q, schema, type="type")
    assert isinstance(want, AttributeTypeError)
    with pytest.raises(AttributeTypeError, match="type column"):
        jitcep.output_schema(q, schema, type="type")
