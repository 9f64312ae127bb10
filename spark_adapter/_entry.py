"""The functions Spark calls in its Python workers (mapInArrow / mapInPandas).

Kept free of heavy imports on purpose: thread counts and cache directories
are read by Polars, Numba and jitcep when *they* are imported, so the
environment is set here first (DESIGN.md section 4: a task uses one thread
because Spark already runs one task per core; a fresh worker loads cached
kernels instead of compiling, from cache directories jitcep checks when it
is imported, :mod:`jitcep.cachedirs`).
"""

from __future__ import annotations

import os
import pickle

_prepared = False


def prepare_worker(env: dict[str, str]) -> None:
    """Set thread counts and cache directories (values already set by the cluster win).

    Cache directories are not created here: jitcep creates (0700) and checks
    them when it is imported, and compiles in memory rather than use one
    that is not private.
    """
    global _prepared
    if _prepared:
        return
    for k, v in env.items():
        os.environ.setdefault(k, v)
    _prepared = True


def _partition_id() -> int:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def arrow_task(payload: bytes, env: dict[str, str]):
    """mapInArrow body factory: all record batches of a partition -> one evaluation -> batches."""

    def run(batches):
        prepare_worker(env)
        import pyarrow as pa

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        import polars as pl

        from .worker import evaluate_frame

        job = pickle.loads(payload)
        frame = pl.from_arrow(pa.Table.from_batches(batches))
        out = evaluate_frame(frame, job, _partition_id())
        yield from out.to_batches()

    return run


def pandas_task(payload: bytes, env: dict[str, str], input_schema, session_tz: str):
    """mapInPandas body factory: pandas batches -> Arrow (the input schema) -> evaluation -> pandas."""

    def run(frames):
        prepare_worker(env)
        import pyarrow as pa

        frames = [f for f in frames if len(f)]
        if not frames:
            return
        import pandas as pd
        import polars as pl

        from .worker import evaluate_frame

        job = pickle.loads(payload)
        pdf = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        # pandas UDFs receive Spark TIMESTAMPs as naive session-local times: make them instants again
        for field in input_schema:
            if pa.types.is_timestamp(field.type) and field.type.tz is not None:
                col = pdf[field.name]
                if getattr(col.dt, "tz", None) is None:
                    pdf[field.name] = col.dt.tz_localize(session_tz)
        table = pa.Table.from_pandas(pdf, schema=input_schema, preserve_index=False, safe=False)
        out = evaluate_frame(pl.from_arrow(table), job, _partition_id())
        if out.num_rows:
            yield out.to_pandas()

    return run
