"""The Spark adapter's pieces without a JVM: split decisions, range copies, the task body, schemas.

The range-copy scheme (spark_adapter.plan) is replayed here in Polars: every
event copied into segments floor(t/R) .. floor((t+W)/R), the segments dealt
to a few "tasks", each task run through ``worker.evaluate_frame``; the union
must equal ``Query.run`` on the whole input for any R >= 1.  The same for
count windows with position ranges: positions in (time, seq) order, copies
into floor(p/R) .. floor((p+n-1)/R).
"""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitcep
from jitcep.events import build_event_table
from jitcep.matches import MatchTable
from jitcep.output import output_schema

from spark_adapter import plan as P
from spark_adapter.worker import ID_SHIFT, Job, _remap_rows, evaluate_frame, last_positions

# --- split decisions ------------------------------------------------------------------


def _decide(text, partition_by=None, **options):
    q = jitcep.compile(text, **options)
    table = build_event_table(pl.DataFrame(schema={"ts": pl.Int64, "type": pl.String, "sym": pl.String,
                                                   "x": pl.Float64}),
                              q.patterns, type="type", partition_by=partition_by)
    return P.decide(q.patterns, q.options, table, partition_by)


@pytest.mark.parametrize("text,options,partition_by,mode", [
    ("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", {}, None, "keyed"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {}, None, "ranges"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {}, "sym", "keyed"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {"output": "non_overlapping"}, None, "single"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {"output": "non_overlapping"}, "sym", "keyed"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", {"strategy": "strict_contiguity"}, None, "ranges"),
    ("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", {"strategy": "strict_contiguity"}, None, "single"),
    ("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5 EVENTS", {}, None, "single"),
    ("PATTERN SEQ(A a, B b) WITHIN 5 EVENTS", {}, "sym", "keyed"),
    ("PATTERN SEQ(A a, B b) WITHIN UNBOUNDED", {}, None, "single"),
    ("PATTERN SEQ(A a, B b, !C c) WITHIN 5", {}, None, "single"),
    ("PATTERN SEQ(!C c, A a, B b) WITHIN 5", {}, None, "ranges"),
    ("PATTERN SEQ(A a, AND(B b, !C c)) WITHIN 5", {}, None, "single"),  # conservative inside AND
    ("PATTERN SEQ(A a, C+ c[]) WITHIN 5", {"kleene": "maximal"}, None, "single"),
    ("PATTERN SEQ(A a, C+ c[]) WITHIN 5", {}, None, "ranges"),
    ("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5", {"freeze": ("a",)}, None, "single"),
    ("PATTERN SEQ(A a, B b) WITHIN 5 EVENTS", {}, None, "positions"),
    ("PATTERN SEQ(!C c, A a, B b) WITHIN 5 EVENTS", {"strategy": "strict_contiguity"}, None, "positions"),
    ("PATTERN SEQ(A a, B b) WITHIN 5 EVENTS", {"output": "non_overlapping"}, None, "single"),
    ("PATTERN SEQ(A a, B b, !C c) WITHIN 5 EVENTS", {}, None, "single"),
])
def test_decide_modes(text, options, partition_by, mode):
    d = _decide(text, partition_by, **options)
    assert d.mode == mode
    if mode == "single":
        assert d.reason  # the SplitWarning says why
    if mode == "ranges":
        assert d.reason is None and d.can_split_time
    if mode == "positions":
        assert d.reason is None and d.events == 5 and not d.can_split_time


def test_count_windows_mixed_with_time_windows_stay_unsplit():
    q = jitcep.compile(["PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", "PATTERN SEQ(A a, B b) WITHIN 7 EVENTS"])
    table = build_event_table(pl.DataFrame(schema={"ts": pl.Int64, "type": pl.String}), q.patterns, type="type")
    d = P.decide(q.patterns, q.options, table)
    assert d.mode == "positions" and d.events == 7  # the largest n covers every pattern
    q = jitcep.compile(["PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", "PATTERN SEQ(A a, B b) WITHIN 7"])
    d = P.decide(q.patterns, q.options, table)
    assert d.mode == "single" and "mixed" in d.reason


def test_keyed_decision_knows_whether_skew_split_is_allowed():
    assert _decide("PATTERN SEQ(A a, B b) WHERE [sym] WITHIN 5").can_split_time
    d = _decide("PATTERN SEQ(A a, B b, !C c) WHERE [sym] WITHIN 5")
    assert d.mode == "keyed" and not d.can_split_time and "trailing negation" in d.reason


def test_window_is_the_largest_over_patterns_in_table_units():
    q = jitcep.compile(["PATTERN SEQ(A a, B b) WITHIN 2 s", "PATTERN SEQ(A a, B b) WITHIN 1500 ms"])
    table = build_event_table(pl.DataFrame(schema={"ts": pl.Int64, "type": pl.String}), q.patterns,
                              type="type", time_unit="ms")
    assert P.window_in_units(q.patterns, table) == (2000, False, False)


@pytest.mark.parametrize("t,w,r,expected", [
    (0, 5, 10, [0]), (5, 5, 10, [0, 1]), (9, 0, 10, [0]), (-1, 5, 10, [-1, 0]), (-11, 0, 10, [-2]),
    (7, 25, 10, [0, 1, 2, 3]), (-(2**62), 3, 7, None),
])
def test_segments_of_floor_exactly(t, w, r, expected):
    segs = list(P.segments_of(t, w, r))
    if expected is not None:
        assert segs == expected
    # every segment's owned range [sR, (s+1)R) intersects [t, t + W], and the first owns t
    assert segs[0] * r <= t < (segs[0] + 1) * r
    assert all(s * r <= t + w for s in segs) and (segs[-1] + 1) * r > t + w


@pytest.mark.parametrize("pos,n,r,expected", [
    (0, 1, 5, [0]), (4, 1, 5, [0]), (4, 2, 5, [0, 1]), (3, 2, 5, [0]), (0, 6, 5, [0, 1]), (9, 12, 5, [1, 2, 3, 4]),
])
def test_position_segments_cover_the_next_n_minus_1_positions(pos, n, r, expected):
    assert list(P.position_segments(pos, n, r)) == expected


def test_range_width_at_least_ten_windows_and_splits_large_spans():
    assert P.range_width(5, 0, 99, 100, 1_000) == 100     # everything fits one range
    assert P.range_width(5, 0, 99, 1_000, 100) == 50      # 10 pieces wanted, but R >= 10 W
    assert P.range_width(5, 0, 999_999, 1_000_000, 1_000) == 1000
    assert P.range_width(0, 0, 0, 1, 10) == 10


@pytest.mark.parametrize("rows, cores, per_task, expected", [
    (None, 4, 10**6, 4),           # rows unknown without a job: one task per core
    (0, 4, 10**6, 1),              # at least one
    (336_000, 200, 10**6, 4),      # small data: at least MIN_ROWS_PER_TASK (100k) rows a task, not 200 tasks
    (336_000, 2, 10**6, 2),        # one task per core
    (150_000, 8, 10**6, 2),
    (10**7, 2, 10**6, 10),         # large data: about rows_per_range rows a task at most
    (10**7, 16, 10**6, 16),
    (340, 2, 50, 7),               # a small rows_per_range also bounds the task size
])
def test_task_count_follows_rows_and_parallelism(rows, cores, per_task, expected):
    assert P.MIN_ROWS_PER_TASK == 100_000
    assert P.task_count(rows, cores, per_task) == expected


class _Context:
    """What worker_python reads of a SparkContext."""

    def __init__(self, master, python_exec):
        self.master, self.pythonExec = master, python_exec


def test_worker_python_is_this_python_under_local_master_when_nobody_chose(monkeypatch):
    import sys

    pytest.importorskip("pyspark")
    from spark_adapter.driver import worker_python

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")  # Spark's default "python3" is not this interpreter
    assert worker_python(_Context("local[2]", "python3")) == sys.executable
    assert worker_python(_Context("local-cluster[2,1,1024]", "python3")) == sys.executable
    assert worker_python(_Context("spark://host:7077", "python3")) is None  # a cluster's own Pythons
    assert worker_python(_Context("local[*]", sys.executable)) is None  # already this one


def test_worker_python_refuses_a_chosen_python_that_cannot_run_jitcep(monkeypatch, tmp_path):
    import sys

    pytest.importorskip("pyspark")
    from spark_adapter.driver import worker_python

    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nexec {sys._base_executable} -I "$@"\n')  # -I: no venv, no PYTHONPATH
    fake.chmod(0o755)
    monkeypatch.setenv("PYSPARK_PYTHON", str(fake))
    with pytest.raises(jitcep.WorkerPythonError, match=r"cannot import .*polars.*set PYSPARK_PYTHON="):
        worker_python(_Context("local[2]", str(fake)))
    missing = str(tmp_path / "no-such-python")
    monkeypatch.setenv("PYSPARK_PYTHON", missing)
    with pytest.raises(jitcep.WorkerPythonError, match="cannot be started"):
        worker_python(_Context("local[2]", missing))
    assert worker_python(_Context("yarn", missing)) is None


def test_skew_threshold_is_the_larger_of_floor_and_fair_share():
    assert P.skew_threshold(10_000_000, 4, 1_000_000) == 2_500_000   # a task's fair share
    assert P.skew_threshold(1_000_000, 4, 1_000_000) == 1_000_000    # small input: the floor
    assert P.skew_threshold(7, 2, 1) == 4                            # rounds up
    assert P.skew_threshold(0, 0, 0) == 1


# --- the task body ---------------------------------------------------------------------


def _events(n, seed, t_lo=-20, t_hi=40):
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "type": rng.choice(["A", "B", "C"], n),
        "ts": rng.integers(t_lo, t_hi, n),
        "sym": rng.choice(["x", "y"], n),
        "x": rng.integers(0, 9, n).astype(float),
        "seq": rng.permutation(n).astype(np.int64) + 100,
    })


def _job(q, frame_schema, *, split, partition_by=None, shape="wide"):
    out = output_schema(q, {k: v for k, v in frame_schema.items() if not k.startswith("__cep_")},
                        time="ts", type="type", shape=shape)
    target = pl.DataFrame(schema=out).to_arrow().schema
    return Job(patterns=tuple(q.patterns), options=q.options, time="ts", type="type", time_unit=None,
               partition_by=partition_by, engine="reference", shape=shape,
               source_columns=("type", "ts", "sym", "x", "seq"), split_time=split, target_schema=target)


def _deal_to_tasks(q, copies, tasks):
    """Deal range copies to tasks by segment and run evaluate_frame per task, as the driver does."""
    job = _job(q, copies.schema, split=True, partition_by=(P.SEG,))
    parts = []
    for task in range(tasks):
        frame = copies.filter(pl.col(P.SEG) % tasks == task)
        if frame.height:
            parts.append(pl.from_arrow(evaluate_frame(frame, job, task)))
    return pl.concat(parts) if parts else pl.from_arrow(job.target_schema.empty_table())


def _run_split(q, df, width, window, tasks=3):
    """Replay the driver: copies per segment, segments dealt to tasks, evaluate_frame per task."""
    copies = (df.with_columns(pl.col("seq").alias(P.SEQ), (pl.col("ts") // width).alias("lo"))
              .with_columns(pl.int_ranges("lo", (pl.col("ts") + window) // width + 1).alias(P.SEG))
              .explode(P.SEG).with_columns((pl.col(P.SEG) == pl.col("lo")).alias(P.HOME)).drop("lo"))
    return _deal_to_tasks(q, copies, tasks)


def _matches(df: pl.DataFrame, rows=None) -> list:
    m = (lambda r: r) if rows is None else (lambda r: rows[r])
    out = []
    for rec in df.drop("match_id").to_dicts():
        key = []
        for k in sorted(rec):
            v = rec[k]
            if isinstance(v, dict):
                key.append((k, m(v["row"])))
            elif isinstance(v, list):
                key.append((k, tuple(m(e["row"]) for e in v)))
            elif v is None or not isinstance(v, (dict, list)):
                key.append((k, v))
        out.append(tuple(key))
    return sorted(out, key=repr)


SPLITTABLE = [
    "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 4",
    "PATTERN SEQ(!C c, A a, B b) WITHIN 3",
    "PATTERN SEQ(A a, !C c, B+ b[]) WHERE b[i].x >= b[i-1].x WITHIN 5",
    "PATTERN AND(A a, B b, !C c) WITHIN 2",
    "PATTERN SEQ(A a, OR(B b, C c)) WHERE [sym] WITHIN 3",
]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), width=st.integers(1, 30), which=st.integers(0, len(SPLITTABLE) - 1),
       n=st.integers(0, 45))
def test_range_copies_give_exactly_the_local_matches(seed, width, which, n):
    q = jitcep.compile(SPLITTABLE[which])
    df = _events(n, seed)
    table = build_event_table(df, q.patterns, type="type")
    window, _, _ = P.window_in_units(q.patterns, table)
    got = _run_split(q, df, width, window)
    ordered = df.sort("seq")
    want = q.run(ordered, type="type", engine="reference")
    assert got.schema == want.schema
    assert got.get_column("match_id").n_unique() == got.height
    assert _matches(got) == _matches(want, ordered.get_column("seq").to_list())


def _run_positions(q, df, width, n, tasks=3):
    """Replay the driver's position ranges: global (ts, seq) positions, copies, tasks, evaluate_frame."""
    ranked = df.sort(["ts", "seq"]).with_row_index(P.POS).with_columns(pl.col(P.POS).cast(pl.Int64))
    copies = (ranked.sample(fraction=1.0, shuffle=True, seed=1)  # tasks get rows in no particular order
              .with_columns(pl.col("seq").alias(P.SEQ), (pl.col(P.POS) // width).alias("lo"))
              .with_columns(pl.int_ranges("lo", (pl.col(P.POS) + n - 1) // width + 1).alias(P.SEG))
              .explode(P.SEG).with_columns((pl.col(P.SEG) == pl.col("lo")).alias(P.HOME)).drop("lo"))
    return _deal_to_tasks(q, copies, tasks)


COUNT_SPLITTABLE = [
    ("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 4 EVENTS", {}),
    ("PATTERN SEQ(!C c, A a, B b) WITHIN 3 EVENTS", {}),
    ("PATTERN SEQ(A a, !C c, B+ b[]) WHERE b[i].x >= b[i-1].x WITHIN 6 EVENTS", {}),
    ("PATTERN AND(A a, B b, !C c) WITHIN 2 EVENTS", {}),
    ("PATTERN SEQ(A a, * x, B b) WITHIN 3 EVENTS", {"strategy": "strict_contiguity"}),
    ("PATTERN SEQ(A a, B b) WITHIN 1 EVENTS", {}),
    (["PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", "PATTERN SEQ(B b, OR(A a, C c)) WHERE [sym] WITHIN 5 EVENTS"],
     {}),
]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), width=st.integers(1, 12), which=st.integers(0, len(COUNT_SPLITTABLE) - 1),
       n=st.integers(0, 45), t_hi=st.sampled_from([3, 40]))
def test_position_copies_give_exactly_the_local_matches(seed, width, which, n, t_hi):
    text, options = COUNT_SPLITTABLE[which]
    q = jitcep.compile(text, **options)
    df = _events(n, seed, t_lo=0, t_hi=t_hi)  # t_hi=3: mostly ties, ordered by seq
    got = _run_positions(q, df, width, P.count_window_events(q.patterns))
    ordered = df.sort("seq")
    want = q.run(ordered, type="type", engine="reference")
    assert got.schema == want.schema
    assert got.get_column("match_id").n_unique() == got.height
    assert _matches(got) == _matches(want, ordered.get_column("seq").to_list())


def test_match_ids_carry_the_task_id():
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 100")
    df = pl.DataFrame({"type": ["A", "B", "B"], "ts": [1, 2, 3], "sym": ["x"] * 3, "x": [1.0] * 3,
                       "seq": [30, 20, 10]}).with_columns(pl.col("seq").alias(P.SEQ))
    out = pl.from_arrow(evaluate_frame(df, _job(q, df.schema, split=False), 5))
    assert out["match_id"].to_list() == [(5 << ID_SHIFT) + 0, (5 << ID_SHIFT) + 1]
    assert out["a"].struct.field("row").to_list() == [30, 30]          # seq values, not frame rows
    assert sorted(out["b"].struct.field("row").to_list()) == [10, 20]


def test_job_pickles():
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 3")
    job = _job(q, {"type": pl.String, "ts": pl.Int64, "sym": pl.String, "x": pl.Float64, "seq": pl.Int64},
               split=False)
    assert pickle.loads(pickle.dumps(job)) == job


# --- helpers ---------------------------------------------------------------------------


def test_last_positions_equal_match_table_bounds():
    rng = np.random.default_rng(3)
    bindings = []
    for _ in range(50):
        b = {"a": int(rng.integers(0, 100)) if rng.random() < 0.8 else None,
             "k": tuple(int(x) for x in rng.integers(0, 100, int(rng.integers(0, 4))))}
        if b["a"] is None and not b["k"]:
            b["k"] = (1,)
        bindings.append(b)
    mt = MatchTable.from_bindings(bindings, ["a"], ["k"])
    assert last_positions(mt).tolist() == mt.bounds()[1].tolist()


def test_remap_rows_through_structs_lists_and_nulls():
    seq = np.array([100, 101, 102, 103], dtype=np.int64)
    struct = pa.array([{"row": 0, "ts": 5}, None, {"row": 3, "ts": 7}],
                      type=pa.struct([("row", pa.int64()), ("ts", pa.int64())]))
    lists = pa.array([[{"row": 2}], [], None, [{"row": 1}, {"row": 3}]],
                     type=pa.large_list(pa.struct([("row", pa.int64())])))
    assert _remap_rows(struct, seq).to_pylist() == [{"row": 100, "ts": 5}, None, {"row": 103, "ts": 7}]
    assert _remap_rows(lists, seq).to_pylist() == [[{"row": 102}], [], None, [{"row": 101}, {"row": 103}]]
    assert _remap_rows(pa.array([3, 0]), seq, in_row_field=True).to_pylist() == [103, 100]
    assert _remap_rows(struct.slice(1), seq).to_pylist() == [None, {"row": 103, "ts": 7}]


def test_spark_schema_mirrors_polars_output():
    T = pytest.importorskip("pyspark.sql.types")
    from spark_adapter.schema import polars_schema, spark_schema

    spark_in = T.StructType([T.StructField("ts", T.TimestampType()), T.StructField("type", T.StringType()),
                             T.StructField("x", T.IntegerType()), T.StructField("d", T.DateType())])
    pl_in = polars_schema(spark_in)
    assert pl_in == pl.Schema({"ts": pl.Datetime("us", "UTC"), "type": pl.String, "x": pl.Int32,
                               "d": pl.Date})
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[]) WHERE a.x < b.x AND a.d IS NOT NULL WITHIN 1 h "
                       "RETURN a, avg(b.x) AS m")
    out = spark_schema(output_schema(q, pl_in, type="type"))
    assert out.simpleString() == (
        "struct<match_id:bigint,a:struct<row:bigint,ts:timestamp,x:int,d:date>,"
        "b:array<struct<row:bigint,ts:timestamp,x:int>>,m:double>")
    with pytest.raises(jitcep.AttributeTypeError, match="map"):
        polars_schema(T.StructType([T.StructField("m", T.MapType(T.StringType(), T.LongType()))]))
