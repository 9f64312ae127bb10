"""Spark adapter benchmark (issue 4): detect() against the same shuffle with a pass-through task.

    /tmp/venv/bin/python perf/bench_spark.py [--events 1000000] [--keys 1000] [--hot 0.0] [--engine auto]

For N events (types A/B/C, ``keys`` symbols, integer times) it times, each
after one warm-up run, the whole job written to Spark's ``noop`` sink:

- ``passthrough``: repartition by the key + sort by (time, seq) in the task +
  return the rows: the floor any keyed adapter pays (shuffle, Arrow, Python);
- ``detect_arrow`` / ``detect_pandas``: spark_adapter.detect, keyed, default
  settings (the skew check included: one aggregation job over the input);
- ``detect_noskew``: ``detect_arrow`` with ``max_key_rows=None`` (what the skew
  check costs);
- ``detect_ranges``: the same pattern without the key (time ranges);
- ``local``: ``Query.run`` on the same rows as one Polars frame (no Spark).

Every ``detect`` gets ``num_partitions=`` the session's shuffle partitions, the
pass-through's task count, so both run the same number of tasks.  The target
(issue 4) is detect within 2x of the pass-through.  ``--hot F``
puts a fraction F of the events on one key ("hot"), to see the skew split.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

KEYED = "PATTERN SEQ(A a, B b) WHERE [sym] AND a.x < b.x WITHIN 20"
UNKEYED = "PATTERN SEQ(A a, B b) WHERE a.sym = b.sym AND a.x < b.x WITHIN 20"


def session(cores: int):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(f"local[{cores}]").appName("jitcep-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", str(2 * cores))
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "3g")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def events(spark, n: int, keys: int, hot: float = 0.0):
    from pyspark.sql import functions as F

    sym = F.concat(F.lit("s"), (F.hash("id") % keys).cast("string"))
    if hot > 0:  # a fraction ``hot`` of the events (by a hash, spread over time) on one key
        sym = F.when(F.abs(F.hash("id", F.lit(3))) % 1_000_000 < int(hot * 1_000_000), F.lit("hot")).otherwise(sym)
    return (spark.range(n).select(
        F.element_at(F.array(F.lit("A"), F.lit("B"), F.lit("C")), (F.col("id") % 3 + 1).cast("int")).alias("type"),
        F.expr("id div 4").alias("ts"),          # 4 events per time unit: ties everywhere
        sym.alias("sym"),
        (F.abs(F.hash("id", F.lit(7))) % 1000).cast("double").alias("x"),
        F.col("id").alias("seq"))).cache()


def timed(label: str, fn, repeat: int = 2) -> float:
    fn()  # warm-up: JVM code paths, Python workers, Numba cache
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    print(f"{label:16s} {best:8.2f} s", flush=True)
    return best


def passthrough(sdf, parts: int):
    def task(batches):
        import polars as pl
        import pyarrow as pa

        batches = list(batches)
        if batches:
            frame = pl.from_arrow(pa.Table.from_batches(batches)).sort(["ts", "seq"])
            yield from frame.to_arrow().to_batches()

    return sdf.repartition(parts, "sym").mapInArrow(task, sdf.schema)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=1_000)
    ap.add_argument("--hot", type=float, default=0.0, help="fraction of events on one key")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--engine", default="auto")
    args = ap.parse_args(argv)

    import polars as pl

    import jitcep
    import spark_adapter

    spark = session(args.cores)
    sdf = events(spark, args.events, args.keys, args.hot)
    sdf.count()
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    q, qu = jitcep.compile(KEYED), jitcep.compile(UNKEYED)
    sink = lambda df: df.write.format("noop").mode("overwrite").save()  # noqa: E731
    print(f"{args.events} events, {args.keys} keys, hot={args.hot}, local[{args.cores}], {parts} partitions, engine={args.engine}")
    n_matches = spark_adapter.detect(sdf, q, type="type", seq_col="seq", num_partitions=parts, engine=args.engine).count()
    print(f"matches: {n_matches}")
    base = timed("passthrough", lambda: sink(passthrough(sdf, parts)))
    res = {}
    for udf in ("arrow", "pandas"):
        res[udf] = timed(f"detect_{udf}", lambda: sink(spark_adapter.detect(
            sdf, q, type="type", seq_col="seq", num_partitions=parts, engine=args.engine, udf=udf)))
    noskew = timed("detect_noskew", lambda: sink(spark_adapter.detect(
        sdf, q, type="type", seq_col="seq", num_partitions=parts, engine=args.engine, max_key_rows=None)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timed("detect_ranges", lambda: sink(spark_adapter.detect(
            sdf, qu, type="type", seq_col="seq", num_partitions=parts, engine=args.engine)))
    frame = pl.from_arrow(sdf.toArrow())
    engine = "compiled" if args.engine == "auto" else args.engine
    timed("local", lambda: q.run(frame, type="type", engine=engine))
    print(f"detect_arrow / passthrough = {res['arrow'] / base:.2f}x; "
          f"detect_pandas / passthrough = {res['pandas'] / base:.2f}x; "
          f"skew check = {res['arrow'] - noskew:+.2f} s")
    spark.stop()


if __name__ == "__main__":
    main()
