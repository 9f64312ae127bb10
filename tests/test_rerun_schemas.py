"""One query rerun on inputs whose schema changes between runs answers as a fresh query does.

A run keeps what depends only on the query and the input's schema (the output's layout, the plan with
its key coding, the leaves' types: jitcep.output.layout._layout, jitcep.runtime._with_coding,
jitcep.plan.operators.PhysicalPlan.reads); a different schema must lay everything out afresh.  Each
frame below runs on one long-lived query, in turn, and is compared with a query compiled for it alone and with the
reference evaluator (the oracle); the errors of bad input are the fresh query's.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import jitcep
from jitcep.errors import AttributeTypeError, MissingColumnError

TYPES = ["A", "B", "A", "C", "B", "A", "C", "B", "C", "A"]
TS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
X = [5, 2, 7, 1, 8, 2, 8, 1, 8, 2]


def _frames():
    """(label, frame, run keyword arguments): the same events under schemas that differ one way each."""
    base = pl.DataFrame({"type": TYPES, "ts": TS, "x": X})
    start = dt.datetime(2024, 3, 1, 12)
    stamps = [start + dt.timedelta(seconds=t) for t in TS]
    return [
        ("int ts, int x", base, {}),
        ("float x", base.with_columns(pl.col("x").cast(pl.Float64)), {}),
        ("columns reordered", base.select("x", "ts", "type"), {}),
        ("extra columns", base.with_columns(y=pl.col("x") * 10, z=pl.lit("q")), {}),
        ("categorical type", base.with_columns(pl.col("type").cast(pl.Categorical)), {}),
        ("int32 x with a null", base.with_columns(pl.when(pl.col("ts") == 9).then(None)
                                                  .otherwise(pl.col("x")).cast(pl.Int32).alias("x")), {}),
        ("datetime ts", base.with_columns(pl.Series("ts", stamps, dtype=pl.Datetime("us"))), {}),
        ("datetime ts in a zone", base.with_columns(pl.Series("ts", stamps, dtype=pl.Datetime("ms"))
                                                    .dt.replace_time_zone("Europe/Paris")), {}),
        ("type column renamed", base.rename({"type": "kind"}), {"type": "kind"}),
        ("time column renamed", base.rename({"ts": "when"}), {"time": "when"}),
        ("x all null", base.with_columns(pl.lit(None).alias("x")), {}),  # no kind: every test on it NULL
        ("int ts again", base, {}),
    ]


QUERIES = [
    "PATTERN SEQ(A a, B b) WHERE a.x > b.x WITHIN 4",
    "PATTERN SEQ(A a, * b, C c) WHERE b.x < c.x WITHIN 5 RETURN a, c.x AS cx",
    "PATTERN SEQ(A a, B+ b[], C c) WHERE a.x < c.x WITHIN 6",
    "PATTERN SEQ(A a, B b) WITHIN 3; PATTERN SEQ(B b, C c) WHERE b.x <= c.x WITHIN 3",
]


def _run(query, frame, shape, engine="compiled", **kw):
    kw = {"time": "ts", "type": "type", **kw}
    return query.run(frame, shape=shape, engine=engine, threads=1, **kw)


@pytest.mark.parametrize("shape", ["wide", "long"])
@pytest.mark.parametrize("text", QUERIES)
def test_one_query_over_changing_schemas_answers_as_a_fresh_one(text, shape):
    kept = jitcep.compile(text)
    seen = 0
    for label, frame, kw in _frames():
        got = _run(kept, frame, shape, **kw)
        fresh = _run(jitcep.compile(text), frame, shape, **kw)
        oracle = _run(jitcep.compile(text), frame, shape, engine="reference", **kw)
        assert got.schema == fresh.schema == oracle.schema, label
        assert got.equals(fresh) and got.equals(oracle), label
        seen += got.height
    assert seen > 0  # the frames have matches: the comparison is not between empty frames


def test_bad_input_after_good_runs_raises_as_for_a_fresh_query():
    text = "PATTERN SEQ(A a, B b) WHERE a.x > b.x AND a.x > 1 WITHIN 4 RETURN a"
    kept = jitcep.compile(text)
    good = pl.DataFrame({"type": TYPES, "ts": TS, "x": X})
    assert _run(kept, good, "wide").height > 0
    # x as text: compared with a number, an AttributeTypeError (semantics section 4)
    text_x = good.with_columns(pl.col("x").cast(pl.String))
    # x missing: the attribute the pattern reads is not a column
    no_x = good.drop("x")
    for frame, error in ((text_x, AttributeTypeError), (no_x, MissingColumnError)):
        with pytest.raises(error) as fresh:
            _run(jitcep.compile(text), frame, "wide")
        with pytest.raises(error) as again:
            _run(kept, frame, "wide")
        assert str(again.value) == str(fresh.value)
    # and the query still answers the good input as before
    assert _run(kept, good, "wide").equals(_run(jitcep.compile(text), good, "wide"))
