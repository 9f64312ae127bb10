"""spark_adapter.detect on a local Spark session: results equal ``Query.run`` on the same data.

One session for the module (local[2], UI off, 3 shuffle partitions, UTC,
Arrow on, bound to 127.0.0.1); skipped cleanly without Java or PySpark.
Every comparison is against the local engine run on the same rows in
``seq`` order, with the local ``row`` mapped to the event's ``seq`` value
(issue 4: ``row`` is the seq_col value on Spark).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import threading
import warnings
import zlib

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings, strategies as st

pytestmark = pytest.mark.spark

pyspark = pytest.importorskip("pyspark")

import jitcep  # noqa: E402
from jitcep.errors import (AttributeTypeError, MissingColumnError, OptionError,  # noqa: E402
                           QueryShippingError, TimestampError, WindowUnitError)
from jitcep.pattern import expr as E  # noqa: E402

import spark_adapter  # noqa: E402
from spark_adapter import SplitWarning  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java: no java on PATH and no JAVA_HOME")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers must see this venv's packages
    try:
        session = (SparkSession.builder.master("local[2]").appName("jitcep-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "3")
                   .config("spark.default.parallelism", "2")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1")
                   .getOrCreate())
    except Exception as exc:  # no usable JVM
        pytest.skip(f"cannot start a local Spark session: {exc}")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --- data and comparison ------------------------------------------------------------


def events(n: int = 120, *, seed: int = 0, t_max: int = 60, keys: int = 3, nulls: bool = False) -> pl.DataFrame:
    """Random events with many equal timestamps; ``seq`` is a permutation (so ties need it)."""
    rng = np.random.default_rng(seed)
    price = rng.integers(0, 50, n).astype(float)
    df = pl.DataFrame({
        "type": rng.choice(["A", "B", "C"], n),
        "ts": rng.integers(-t_max // 3, t_max, n),  # negative times: ranges must floor, not truncate
        "sym": rng.choice([f"k{i}" for i in range(keys)], n),
        "price": price,
        "seq": rng.permutation(n).astype(np.int64) * 7 + 3,
    })
    if nulls:
        df = df.with_columns(
            pl.when(pl.Series(rng.random(n) < 0.15)).then(None).otherwise(pl.col("price")).alias("price"),
            pl.when(pl.Series(rng.random(n) < 0.1)).then(None).otherwise(pl.col("sym")).alias("sym"),
            pl.when(pl.Series(rng.random(n) < 0.05)).then(None).otherwise(pl.col("type")).alias("type"))
    return df


EVENTS_DDL = "type string, ts long, sym string, price double, seq long"


def to_spark(spark, df: pl.DataFrame):
    if df.height == 0:  # Spark cannot infer types from no rows
        return spark.createDataFrame(df.to_pandas(), schema=EVENTS_DDL)
    return spark.createDataFrame(df.to_pandas())


def _map_rows(value, rows):
    """Nested values made hashable, every struct's ``row`` mapped through ``rows`` (None: kept)."""
    if isinstance(value, dict):
        return tuple(sorted((k, (rows[v] if rows is not None and v is not None else v) if k == "row"
                             else _map_rows(v, rows)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_map_rows(v, rows) for v in value)
    return value


def canon(df: pl.DataFrame, rows=None, map_long_row: bool = False) -> list:
    """Matches as a sorted list of hashable rows (match_id dropped), ``row`` mapped through ``rows``."""
    out = []
    for rec in df.drop("match_id").to_dicts():
        rec = {k: (rows[v] if (k == "row" and map_long_row and rows is not None and v is not None)
                   else _map_rows(v, rows)) for k, v in rec.items()}
        out.append(tuple(sorted(rec.items(), key=lambda kv: kv[0])))
    return sorted(out, key=repr)


def local(q, df: pl.DataFrame, **kw) -> tuple[pl.DataFrame, list[int]]:
    """Query.run on the rows in seq order (ties then follow seq), and row -> seq for the comparison."""
    ordered = df.sort("seq")
    return q.run(ordered, **kw), ordered.get_column("seq").to_list()


def collect(sdf_out) -> pl.DataFrame:
    return pl.from_arrow(sdf_out.toArrow())


def assert_same(spark_out, q, df, *, time="ts", type="type", engine="reference", shape="wide", **run_kw):
    got = collect(spark_out)
    want, rows = local(q, df, time=time, type=type, engine=engine, shape=shape, **run_kw)
    if shape == "long":  # Spark has no enums: the long shape's variable column is a string there
        want = want.with_columns(pl.col("variable").cast(pl.String))
    assert got.schema == want.schema
    if shape == "wide":  # one row per match; the long shape has one per (match, variable, event)
        assert got.get_column("match_id").n_unique() == got.height
    assert got.get_column("match_id").n_unique() == want.get_column("match_id").n_unique()
    long_ = shape == "long"
    assert canon(got) == canon(want, rows, long_)
    return got


def detect(spark, df, q, **kw):
    kw.setdefault("type", "type")
    kw.setdefault("seq_col", "seq")
    kw.setdefault("engine", "reference")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SplitWarning)
        return spark_adapter.detect(to_spark(spark, df), q, **kw)


# --- keyed and unkeyed ------------------------------------------------------------------

KEYED = "PATTERN SEQ(A a, B b, C c) WHERE [sym] AND a.price < c.price WITHIN 6"
UNKEYED = "PATTERN SEQ(A a, !C n, B b) WHERE a.price <= b.price WITHIN 4"


@pytest.mark.parametrize("udf", ["arrow", "pandas"])
def test_keyed_equals_local(spark, udf):
    df = events(150, seed=1)
    q = jitcep.compile(KEYED)
    got = assert_same(detect(spark, df, q, udf=udf), q, df)
    assert got.height > 0


@pytest.mark.parametrize("udf,width", [("arrow", 1), ("arrow", 3), ("arrow", 4), ("arrow", 5), ("arrow", None),
                                       ("pandas", 3), ("pandas", None)])
def test_unkeyed_ranges_equal_local(spark, udf, width):
    # width 1..5 around W = 4 puts range boundaries inside most matches
    df = events(140, seed=2)
    q = jitcep.compile(UNKEYED)
    got = assert_same(detect(spark, df, q, udf=udf, range_width=width), q, df)
    assert got.height > 0


def test_matches_straddling_boundaries_and_exactly_w_apart(spark):
    # R = 10, W = 5: pairs across the boundaries at 0 and 10, some exactly W apart, one W + 1 apart
    df = pl.DataFrame({
        "type": ["A", "B", "A", "B", "A", "B", "A", "B", "A", "B"],
        "ts":   [-3,   2,   7,   12,  5,   10,  9,   11,  14,  20],
        "seq":  list(range(10)),
        "price": [1.0] * 10,
    })
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5")
    got = assert_same(detect(spark, df, q, range_width=10), q, df)
    pairs = sorted(zip(got["a"].struct.field("ts").to_list(), got["b"].struct.field("ts").to_list()))
    assert (-3, 2) in pairs and (7, 12) in pairs and (5, 10) in pairs  # exactly W apart, across a boundary
    assert (14, 20) not in pairs                                       # W + 1 apart
    assert len(pairs) == len(set(pairs))                              # each match from one range only


def test_timestamp_column_with_duration_window(spark):
    df = events(100, seed=3).with_columns(
        (pl.datetime(2024, 3, 1, time_zone="UTC") + pl.duration(minutes=pl.col("ts"))).alias("ts"))
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.price > b.price WITHIN 3 minutes")
    got = assert_same(detect(spark, df, q, range_width=120_000_000), q, df)  # 2-minute ranges, in us
    assert got.height > 0 and got.schema["a"].to_schema()["ts"] == pl.Datetime("us", "UTC")


# --- unkeyed count windows: position ranges ---------------------------------------------------

COUNT = "PATTERN SEQ(A a, !C n, B b) WHERE a.price <= b.price WITHIN 5 EVENTS"


@pytest.mark.parametrize("udf,width,rows_per_range", [("arrow", 1, 10**6), ("arrow", 3, 10**6),
                                                      ("arrow", None, 30), ("pandas", 4, 10**6)])
def test_unkeyed_count_window_split_by_positions_equals_local(spark, udf, width, rows_per_range):
    # t_max=20: ~7 events per timestamp, so positions depend on seq; R = 1..4 < n cuts most matches
    df = events(140, seed=2, t_max=20)
    q = jitcep.compile(COUNT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SplitWarning)  # a split, not the single-task fallback
        out = spark_adapter.detect(to_spark(spark, df), q, type="type", seq_col="seq", engine="reference",
                                   udf=udf, range_width=width, rows_per_range=rows_per_range)
    assert _has_segments(out)
    assert assert_same(out, q, df).height > 0


def test_count_window_matches_straddling_position_boundaries(spark):
    # R = 4, n = 3, one timestamp: positions follow seq (= 10 * position), the input is in reverse.
    # A at 2, 6; B at 3, 4, 5, 8: (2,4) and (6,8) are exactly n-1 apart across the boundaries at 4
    # and 8, (2,5) is n apart (no match)
    types = ["C", "C", "A", "B", "B", "B", "A", "C", "B", "C"]
    df = pl.DataFrame({"type": types, "ts": [1] * 10, "seq": [10 * p for p in range(10)],
                       "price": [1.0] * 10}).reverse()
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS")
    got = assert_same(detect(spark, df, q, range_width=4), q, df)
    pairs = sorted(zip(got["a"].struct.field("row").to_list(), got["b"].struct.field("row").to_list()))
    assert pairs == [(20, 30), (20, 40), (60, 80)]  # each once: one range keeps each match


def test_count_window_ties_and_empty_input(spark):
    df = events(80, seed=4, t_max=6)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.price < b.price WITHIN 3 EVENTS")
    got = assert_same(detect(spark, df, q, range_width=5), q, df)
    assert got.height > 0
    flipped = df.with_columns((-pl.col("seq")).alias("seq"))  # reverses every tie: other positions
    assert canon(collect(detect(spark, flipped, q, range_width=5))) != canon(got)
    # without seq_col: monotonically_increasing_id on the input as given orders ties and is the row
    sdf = to_spark(spark, df)
    from pyspark.sql import functions as F

    ids = [r[0] for r in sdf.select(F.monotonically_increasing_id()).collect()]
    out = spark_adapter.detect(sdf, q, type="type", engine="reference", range_width=5)
    assert _has_segments(out)
    assert canon(collect(out)) == canon(q.run(df, type="type", engine="reference"), ids)
    empty = df.clear()
    assert assert_same(detect(spark, empty, q, range_width=5), q, empty).height == 0


# --- ties, empty input, single events, nulls, batches, skew ----------------------------------


def test_ties_follow_seq_col(spark):
    df = events(80, seed=4, t_max=6)  # ~13 events per timestamp
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.price < b.price WITHIN 1")
    got = assert_same(detect(spark, df, q), q, df)
    assert got.height > 0
    # reversing seq reverses every tie, so the matches change
    flipped = df.with_columns((-pl.col("seq")).alias("seq"))
    assert canon(collect(detect(spark, flipped, q))) != canon(got)


def test_ties_without_seq_col_follow_input_order(spark):
    df = events(80, seed=5, t_max=6)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 1")
    sdf = to_spark(spark, df)
    from pyspark.sql import functions as F

    ids = [r[0] for r in sdf.select(F.monotonically_increasing_id()).collect()]
    got = collect(spark_adapter.detect(sdf, q, type="type", engine="reference"))
    want = q.run(df, type="type", engine="reference")  # input order breaks ties locally
    assert got.height > 0
    assert canon(got) == canon(want, ids)


@pytest.mark.parametrize("text", [KEYED, UNKEYED])
def test_empty_input(spark, text):
    df = events(5, seed=6).clear()
    q = jitcep.compile(text)
    got = assert_same(detect(spark, df, q), q, df)
    assert got.height == 0


def test_key_with_one_event_and_null_keys_and_values(spark):
    df = pl.concat([events(120, seed=7, nulls=True),
                    pl.DataFrame({"type": ["A"], "ts": [5], "sym": ["lonely"], "price": [1.0], "seq": [10_000]})])
    q = jitcep.compile(KEYED)
    assert_same(detect(spark, df, q), q, df)
    q2 = jitcep.compile("PATTERN SEQ(A a, * x, B b) WHERE a.price IS NULL OR x.price > b.price WITHIN 3")
    got = assert_same(detect(spark, df, q2, range_width=4), q2, df)
    assert got.height > 0


def test_groups_in_several_arrow_batches(spark):
    df = events(200, seed=8, keys=2)
    q = jitcep.compile(KEYED)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    old = spark.conf.get(key)
    spark.conf.set(key, "7")
    try:
        for udf in ("arrow", "pandas"):
            assert assert_same(detect(spark, df, q, udf=udf), q, df).height > 0
    finally:
        spark.conf.set(key, old)


def _skewed(hot="hot"):
    rng = np.random.default_rng(9)
    big = events(300, seed=9, t_max=200, keys=1).with_columns(pl.lit(hot, dtype=pl.String).alias("sym"))
    small = events(40, seed=10, t_max=200, keys=3).with_columns((pl.col("seq") + 10_000).alias("seq"))
    return pl.concat([big, small]).sample(fraction=1.0, shuffle=True, seed=int(rng.integers(1 << 30)))


def _has_segments(out) -> bool:
    return "__cep_seg" in out._jdf.queryExecution().analyzed().toString()


def test_skewed_key_split_by_time(spark):
    df = _skewed()
    q = jitcep.compile(KEYED)
    out = detect(spark, df, q, max_key_rows=50)
    assert _has_segments(out)  # the hot key got time ranges
    assert assert_same(out, q, df).height > 0


def test_skew_split_is_on_by_default(spark):
    # auto threshold: max(rows_per_range, rows / tasks) = max(50, ceil(340 / 7)) = 50 < 300 hot rows, where
    # tasks = plan.task_count(340 rows, 2 cores, 50 rows a task) = 7
    df = _skewed()
    q = jitcep.compile(KEYED)
    out = detect(spark, df, q, rows_per_range=50)
    assert _has_segments(out)
    assert assert_same(out, q, df).height > 0
    # 300 hot rows over 2 partitions: fair share 170 < 300 still splits; over 1 partition (340) it does not
    assert _has_segments(detect(spark, df, q, rows_per_range=50, num_partitions=2))
    assert not _has_segments(detect(spark, df, q, rows_per_range=50, num_partitions=1))


def test_skew_check_costs_no_job_when_spark_bounds_the_rows(spark):
    # local data: Spark's plan knows it has 340 rows <= rows_per_range, so no key can be heavy
    df = _skewed()
    q = jitcep.compile(KEYED)
    for kw in ({}, {"max_key_rows": None}, {"max_key_rows": 0}, {"max_key_rows": 400}):
        out = []
        _no_job(spark, lambda: out.append(detect(spark, df, q, **kw)))
        assert not _has_segments(out[0])
    assert not _has_segments(detect(spark, df, q, max_key_rows=None, rows_per_range=50))


def test_heavy_null_partition_value_is_split(spark):
    # partition_by keeps null as a stream of its own: a heavy null value must be split too
    from spark_adapter import plan as P
    from spark_adapter.driver import _split_heavy_keys
    from pyspark.sql import functions as F

    df = _skewed(hot=None)
    sdf = to_spark(spark, df).withColumn(P.SEQ, F.col("seq"))
    split, done, rows = _split_heavy_keys(sdf, ("sym",), sdf.schema["ts"].dataType, "ts", 6, "auto", 50,
                                          lambda rows: 3)
    assert done and rows == df.height
    segs = split.where(F.col("sym").isNull()).select(P.SEG).distinct().count()
    assert segs > 1
    assert split.where(F.col("sym").isNotNull()).select(P.SEG).distinct().collect() == [(0,)]
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WHERE a.price < b.price WITHIN 6")
    out = detect(spark, df, q, partition_by="sym", rows_per_range=50)
    assert _has_segments(out)
    assert assert_same(out, q, df, partition_by="sym").height > 0


# --- every pattern kind the local engine supports --------------------------------------------

KINDS = [
    ("seq_filters", "PATTERN SEQ(A a, B b, C c) WHERE a.price > 10 AND c.price < b.price WITHIN 5", {}),
    ("and", "PATTERN AND(A a, B b) WHERE a.price < b.price WITHIN 3", {}),
    ("or", "PATTERN SEQ(A a, OR(B b, C c)) WITHIN 2", {}),
    ("any_untyped", "PATTERN SEQ(ANY(A, B) a, * x) WHERE a.price = x.price WITHIN 3", {}),
    ("neg_start", "PATTERN SEQ(!C n, A a, B b) WITHIN 3", {}),
    ("neg_middle_keyed", "PATTERN SEQ(A a, !C n, B b) WHERE [sym] WITHIN 6", {}),
    ("neg_end", "PATTERN SEQ(A a, B b, !C n) WITHIN 3", {}),
    ("neg_in_and", "PATTERN AND(A a, B b, !C n) WITHIN 2", {}),
    ("kleene_iter", "PATTERN SEQ(A a, B+ b[], C c) WHERE [sym] AND b[i].price >= b[i-1].price WITHIN 6", {}),
    ("kleene_agg_return",
     "PATTERN SEQ(A a, B{1,3} b[]) WHERE [sym] AND avg(b.price) > a.price WITHIN 5 "
     "RETURN a, count(b) AS n_b, max(b.price) AS top", {}),
    ("kleene_group", "PATTERN KL(SEQ(A a, B b)){1,2} WHERE [sym] WITHIN 6", {}),
    ("kleene_maximal", "PATTERN SEQ(A a, C+ c[], B b) WHERE [sym] WITHIN 8", {"kleene": "maximal"}),
    ("kleene_maximal_trailing", "PATTERN SEQ(A a, C+ c[]) WITHIN 2", {"kleene": "maximal"}),
    ("next_match", "PATTERN SEQ(A a, B+ b[]) WHERE [sym] WITHIN 6", {"strategy": "skip_till_next_match"}),
    ("partition_contiguity", "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 6",
     {"strategy": "partition_contiguity"}),
    ("strict_contiguity", "PATTERN SEQ(A a, B b) WITHIN 3", {"strategy": "strict_contiguity"}),
    ("order_strict_ts", "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 2", {"order": "strict_ts"}),
    ("order_nondecreasing", "PATTERN SEQ(A a, B b) WITHIN 1", {"order": "nondecreasing_ts"}),
    ("count_window", "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 6 EVENTS", {}),
    ("count_window_unkeyed", "PATTERN SEQ(!C n, A a, B+ b[]) WHERE b[i].price > a.price WITHIN 5 EVENTS", {}),
    ("count_window_strict", "PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", {"strategy": "strict_contiguity"}),
    ("unbounded", "PATTERN SEQ(A a, B b, C c) WHERE [sym] AND a.price > 45 AND c.price > 45 WITHIN UNBOUNDED",
     {}),
    ("non_overlapping", "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 6", {"output": "non_overlapping"}),
    ("match_single_unkeyed", "PATTERN SEQ(A a, B b) WITHIN 3", {"output": "match_single"}),
    ("freeze", "PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 4", {"freeze": ("a",)}),
    ("multi_pattern", ["PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 3",
                       "PATTERN SEQ(B a, C c) WHERE [sym] AND a.price < c.price WITHIN 2"], {}),
    ("multi_unkeyed", ["PATTERN SEQ(A a, B b) WITHIN 2", "PATTERN AND(C c, B b) WITHIN 1"], {}),
]


@pytest.mark.parametrize("name,text,options", KINDS, ids=[k[0] for k in KINDS])
def test_pattern_kinds_equal_local(spark, name, text, options):
    df = events(70, seed=zlib.crc32(name.encode()) % 1000, t_max=30)
    q = jitcep.compile(text, **options)
    assert_same(detect(spark, df, q, range_width=4), q, df)


@pytest.mark.parametrize("text,options", [
    ("PATTERN SEQ(A a, B+ b[]) WHERE a.price < b.price WITHIN 3", {}),
    ("PATTERN SEQ(A a, B b) WITHIN 4 EVENTS", {}),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {"strategy": "strict_contiguity"}),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {"output": "non_overlapping"}),
], ids=["kleene", "count_window", "strict_contiguity", "non_overlapping"])
def test_partition_by_streams_equal_local(spark, text, options):
    # partition_by: every value (null too) is a stream of its own, as in Query.run (semantics §13)
    df = events(100, seed=11, nulls=True)
    q = jitcep.compile(text, **options)
    got = assert_same(detect(spark, df, q, partition_by="sym"), q, df, partition_by="sym")
    assert got.height > 0


def test_long_shape(spark):
    df = events(100, seed=15)
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WHERE a.price < b.price WITHIN 3")
    assert_same(detect(spark, df, q, shape="long", range_width=2), q, df, shape="long")


def test_task_count_follows_rows_and_parallelism(spark):
    from spark_adapter import plan as P

    assert spark.sparkContext.defaultParallelism == 2
    df = events(120, seed=12)  # local data: Spark's plan bounds the rows (120), no job needed
    q = jitcep.compile(KEYED)
    assert P.task_count(120, 2, 10**6) == 1 and P.task_count(120, 2, 30) == 4
    # not spark.sql.shuffle.partitions (3 in this session): the rule, or num_partitions when given
    assert detect(spark, df, q).rdd.getNumPartitions() == 1
    assert detect(spark, df, q, rows_per_range=30, max_key_rows=None).rdd.getNumPartitions() == 4
    assert detect(spark, df, q, num_partitions=5).rdd.getNumPartitions() == 5
    unkeyed = jitcep.compile(UNKEYED)  # time ranges: counted by the min/max/count job
    out = detect(spark, df, unkeyed, rows_per_range=30)
    assert out.rdd.getNumPartitions() == 4
    assert_same(out, unkeyed, df)


# 18 closures that may all be empty where nothing else binds: 18 alternatives, past DNF_MAX_ALTERNATIVES, so
# the reference evaluator (no event has a type Z*: their lists stay empty)
NOT_COMPILED = ("PATTERN SEQ(" + ", ".join(f"Z{i}* z{i}[]" for i in range(16))
                + ", B* b[], A* c[]) WHERE [sym] AND avg(c.price) < avg(b.price) WITHIN 4")


def test_fallback_warns_once_on_the_driver_like_query_run(spark):
    df = events(80, seed=12)
    sdf = to_spark(spark, df)
    q = jitcep.compile(NOT_COMPILED, strategy="skip_till_next_match")
    with pytest.warns(jitcep.FallbackWarning) as caught:
        out = spark_adapter.detect(sdf, q, type="type", seq_col="seq")
    fallbacks = [w for w in caught if issubclass(w.category, jitcep.FallbackWarning)]
    assert len(fallbacks) == 1 and fallbacks[0].filename == __file__  # names the caller of detect
    with pytest.warns(jitcep.FallbackWarning) as local_caught:
        q.run(df, type="type")
    assert str(fallbacks[0].message) == str(local_caught[0].message)
    assert_same(out, q, df)
    with warnings.catch_warnings():
        warnings.simplefilter("error", jitcep.FallbackWarning)
        assert_same(spark_adapter.detect(sdf, q, type="type", seq_col="seq", engine="auto"), q, df)
        covered = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [sym] AND a.price < b.price WITHIN 4")
        spark_adapter.detect(sdf, covered, type="type", seq_col="seq")  # covered: no warning


def test_detect_has_an_explicit_keyword_only_signature():
    import inspect

    params = inspect.signature(spark_adapter.detect).parameters
    assert list(params)[:2] == ["sdf", "query"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(params.values())[2:])
    assert {"time", "type", "partition_by", "time_unit", "engine", "shape", "num_partitions"} <= set(params)
    assert params["engine"].default == "compiled"
    assert "Parameters" in spark_adapter.detect.__doc__ and "FallbackWarning" in spark_adapter.detect.__doc__


def test_no_pandas3_future_warning_from_detect(spark):
    df = events(40, seed=3)
    sdf = to_spark(spark, df)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.price < b.price WITHIN 3")
    for udf in ("arrow", "pandas"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spark_adapter.detect(sdf, q, type="type", seq_col="seq", udf=udf)
        assert not [w for w in caught if "does not yet fully support pandas" in str(w.message)]


def test_unset_pyspark_python_runs_the_tasks_in_this_python(spark, monkeypatch):
    # Spark's default worker is the first python3 on the PATH, which need not have jitcep: the tasks
    # must name this interpreter instead, and only they (the session keeps its own setting)
    sc = spark.sparkContext
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setattr(sc, "pythonExec", "python3")
    df = events(60, seed=5)
    q = jitcep.compile(KEYED)
    out = detect(spark, df, q)
    assert sc.pythonExec == "python3"
    assert_same(out, q, df)


def test_pyspark_python_without_jitcep_is_refused_before_any_job(spark, monkeypatch, tmp_path):
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nexec {sys._base_executable} -I "$@"\n')  # no venv, no PYTHONPATH
    fake.chmod(0o755)
    monkeypatch.setenv("PYSPARK_PYTHON", str(fake))
    monkeypatch.setattr(spark.sparkContext, "pythonExec", str(fake))
    sdf = to_spark(spark, events(20, seed=14))
    q = jitcep.compile(UNKEYED)  # time ranges: a min/max/count job would follow the checks
    _no_job(spark, lambda: pytest.raises(jitcep.WorkerPythonError, spark_adapter.detect, sdf, q, type="type"))


def test_auto_engine_equals_reference(spark):
    df = events(120, seed=12)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [sym] AND a.price < b.price WITHIN 4")
    assert_same(detect(spark, df, q, engine="auto"), q, df)


def test_stateful_policy_warns_and_runs_in_one_task(spark):
    df = events(60, seed=13)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 3", output="non_overlapping")
    with pytest.warns(SplitWarning, match="non_overlapping"):
        out = spark_adapter.detect(to_spark(spark, df), q, type="type", seq_col="seq", engine="reference")
    assert out.rdd.getNumPartitions() == 1
    assert_same(out, q, df)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", output="non_overlapping")
    with pytest.warns(SplitWarning, match="non_overlapping"):
        out = spark_adapter.detect(to_spark(spark, df), q, type="type", seq_col="seq", engine="reference",
                                   range_width=2)
    assert out.rdd.getNumPartitions() == 1
    assert_same(out, q, df)


# --- bad input: named errors before any job ------------------------------------------------


def _no_job(spark, fn):
    sc = spark.sparkContext
    sc.setJobGroup("jitcep-bad-input", "must not run")
    try:
        fn()
    finally:
        assert sc.statusTracker().getJobIdsForGroup("jitcep-bad-input") == []
        sc.setJobGroup("", "")


def test_bad_input_raises_before_any_job(spark):
    df = events(20, seed=14)
    sdf = to_spark(spark, df)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.price < b.price WITHIN 3")
    cases = [
        (MissingColumnError, dict(time="when")),
        (MissingColumnError, dict(type="kind")),
        (MissingColumnError, dict(seq_col="nope")),
        (TimestampError, dict(time="sym")),
        (AttributeTypeError, dict(seq_col="price")),
    ]
    for err, kw in cases:
        _no_job(spark, lambda: pytest.raises(err, spark_adapter.detect, sdf, q, **{"type": "type", **kw}))
    _no_job(spark, lambda: pytest.raises(
        MissingColumnError, spark_adapter.detect, sdf, "PATTERN SEQ(A a, B b) WHERE a.volume > 1 WITHIN 3",
        type="type"))
    for bad in (-1, "always", True, 2.5):
        _no_job(spark, lambda: pytest.raises(OptionError, spark_adapter.detect, sdf, q, type="type",
                                             max_key_rows=bad))
    _no_job(spark, lambda: pytest.raises(
        WindowUnitError, spark_adapter.detect, sdf, "PATTERN SEQ(A a, B b) WITHIN 3 minutes", type="type"))
    _no_job(spark, lambda: pytest.raises(
        AttributeTypeError, spark_adapter.detect, sdf, "PATTERN SEQ(A a, B b) WHERE a.sym > 3 WITHIN 3",
        type="type"))
    p = q.patterns[0]
    unshippable = jitcep.Query([dataclasses.replace(
        p, where=E.Cmp("=", E.Attr("a", "sym"), E.Lit(threading.Lock())))], q.options)
    _no_job(spark, lambda: pytest.raises(QueryShippingError, spark_adapter.detect, sdf, unshippable,
                                         type="type"))


# --- column names Spark would parse: dots, spaces, backticks ------------------------------------

ODD = {"type": "ty pe", "ts": "t.s", "sym": "k`y", "price": "x.y", "seq": "s.q"}


@pytest.mark.parametrize("text,kw", [
    # keyed, with the skew job (xxhash64 of the key) and the null-key filter
    ("PATTERN SEQ(A a, B b, C c) WHERE [`k``y`] AND a.`x.y` < c.`x.y` WITHIN 6", {"max_key_rows": 20}),
    ("PATTERN SEQ(A a, !C n, B b) WHERE a.`x.y` <= b.`x.y` WITHIN 4", {"range_width": 3}),
    ("PATTERN SEQ(A a, B b) WHERE a.`x.y` < b.`x.y` WITHIN 3 EVENTS", {"range_width": 4}),
    ("PATTERN SEQ(A a, B+ b[]) WHERE a.`x.y` < b.`x.y` WITHIN 3", {"partition_by": "k`y", "udf": "pandas"}),
    ("PATTERN SEQ(A a, B b) WHERE a.`x.y` > b.`x.y` WITHIN 3 minutes", {"range_width": 120_000_000, "ntz": True}),
], ids=["keyed_skew", "time_ranges", "position_ranges", "partition_by", "timestamp_ntz_ranges"])
def test_odd_column_names_equal_local(spark, text, kw):
    from pyspark.sql import functions as F

    kw = dict(kw)
    ntz = kw.pop("ntz", False)
    df = events(150, seed=1, nulls=True).rename(ODD)
    sdf = spark.createDataFrame(df.to_pandas())
    if ntz:  # minutes since the epoch as wall-clock TIMESTAMP_NTZ on Spark, naive Datetime locally
        df = df.with_columns((pl.datetime(2024, 3, 1) + pl.duration(minutes=pl.col("t.s"))).alias("t.s"))
        sdf = spark.createDataFrame(df.to_pandas()).withColumn(
            "t.s", F.col("`t.s`").cast("timestamp_ntz"))
        assert sdf.schema["t.s"].dataType.simpleString() == "timestamp_ntz"
    q = jitcep.compile(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SplitWarning)
        got = collect(spark_adapter.detect(sdf, q, time="t.s", type="ty pe", seq_col="s.q", engine="auto", **kw))
    ordered = df.sort("s.q")
    want = q.run(ordered, time="t.s", type="ty pe", engine="auto", partition_by=kw.get("partition_by"))
    assert got.schema == want.schema
    assert canon(got) == canon(want, ordered.get_column("s.q").to_list())
    assert got.height > 0


def test_typed_pattern_without_a_type_column_is_a_named_error(spark):
    # as Query.run (semantics §3): typed variables could never match, so no silent empty result
    sdf = spark.createDataFrame([("A", 1), ("B", 2)], ["kind", "ts"])
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 5")
    with pytest.raises(jitcep.errors.MissingTypeColumnError, match="'A', 'B'"):
        spark_adapter.detect(sdf, q, time="ts")


# --- generated patterns and streams against the reference evaluator ------------------------------------
#
# The differential generators' patterns (SEQ / AND / OR nesting, negations, every predicate kind, [k],
# time / count / unbounded windows, the three orders; and the Kleene closures' forms under both kleene=
# modes) on hypothesis streams, run by the compiled engine inside Spark tasks (keyed partitions, time or
# position ranges of a drawn width, the arrow or pandas UDF) against the reference evaluator run locally.
# A Spark job costs about a second, so the default run draws SPARK_EXAMPLES cases; -m slow draws more.

SPARK_EXAMPLES = int(os.environ.get("JITCEP_SPARK_EXAMPLES", "12"))


def _generated_case(data):
    from test_compiled_differential import (KLEENE_FORMS, gen_aggregate_pattern, gen_kleene_form, gen_pattern,
                                            kleene_streams, streams)

    seed = data.draw(st.integers(0, 199), label="seed")
    if data.draw(st.booleans(), label="kleene"):
        kleene, _, form = data.draw(st.sampled_from(KLEENE_FORMS + ["all+bounded"]), label="form").partition("+")
        pattern, order = gen_aggregate_pattern(seed) if form == "aggregates" else gen_kleene_form(seed, form, kleene)
        df = data.draw(kleene_streams(pattern), label="events")
        options = {"order": order, "kleene": kleene}
    else:
        pattern, order = gen_pattern(seed)
        df = data.draw(streams(pattern, extra=4), label="events")
        options = {"order": order}
    seq = data.draw(st.permutations(range(df.height)), label="seq")  # ties follow seq, as the rows do locally
    df = df.with_columns(pl.Series("seq", [i * 7 + 3 for i in seq], dtype=pl.Int64))
    return jitcep.compile(pattern, **options), df


def _check_generated_on_spark(spark, data):
    q, df = _generated_case(data)
    kw = {"udf": data.draw(st.sampled_from(["arrow", "pandas"]), label="udf"),
          "range_width": data.draw(st.sampled_from([1, 2, 3, 5, None]), label="range_width")}
    sdf = spark.createDataFrame(df.to_arrow())  # through Arrow: integer columns keep their nulls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SplitWarning)
        out = spark_adapter.detect(sdf, q, time="ts", type="type", seq_col="seq", engine="compiled", **kw)
    return assert_same(out, q, df, engine="reference").height


def _run_generated(spark, n_cases: int, seed: int):
    """``n_cases`` drawn cases (deterministic for ``seed``); at least a sixth must match (about a third do),
    so the comparison cannot pass on empty results alone."""
    hits = [0, 0]

    @hypothesis_seed(seed)
    @settings(max_examples=n_cases, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data):
        hits[0] += _check_generated_on_spark(spark, data) > 0
        hits[1] += 1

    run()
    assert hits[0] >= hits[1] / 6, f"only {hits[0]} of {hits[1]} generated cases matched"


def test_generated_patterns_compiled_on_spark_equal_the_reference(spark):
    _run_generated(spark, SPARK_EXAMPLES, seed=0)


@pytest.mark.slow
def test_generated_patterns_compiled_on_spark_equal_the_reference_slow(spark):
    _run_generated(spark, 10 * SPARK_EXAMPLES, seed=1)


@pytest.mark.parametrize("split", [None, 5], ids=["keyed", "skew_split"])
def test_an_equivalence_key_partitions_as_the_predicate_compares(spark, split):
    # §4: [d] compares a decimal as float64, so 0.1000000000000000000k (k = 0..7) are one value; the adapter
    # hash-partitioned by the exact decimals (SEQ(A a, B b) WHERE [d] WITHIN 5 over 40 events in 8 tasks: 9
    # matches of 57); -0.0 and 0.0 are one value too
    from decimal import Decimal

    from pyspark.sql import types as T
    n = 40
    rows = [("AB"[i % 2], i, i, Decimal(f"0.1000000000000000000{i % 8}"), (-0.0, 0.0)[i % 3 % 2]) for i in range(n)]
    schema = T.StructType([T.StructField("type", T.StringType()), T.StructField("ts", T.LongType()),
                           T.StructField("seq", T.LongType()), T.StructField("d", T.DecimalType(38, 20)),
                           T.StructField("f", T.DoubleType())])
    df = pl.DataFrame(rows, schema={"type": pl.String, "ts": pl.Int64, "seq": pl.Int64, "d": pl.Decimal(38, 20),
                                    "f": pl.Float64}, orient="row")
    for key in ("d", "f"):
        q = jitcep.compile(f"PATTERN SEQ(A a, B b) WHERE [{key}] WITHIN 5")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SplitWarning)
            out = spark_adapter.detect(spark.createDataFrame(rows, schema), q, type="type", seq_col="seq",
                                       engine="reference", num_partitions=8, max_key_rows=split, rows_per_range=5)
        got = assert_same(out, q, df)
        assert got.height == 57, key  # hand count: an A and each B within 5 after it, 20 A's (the last ones fewer)
