"""What runs inside a Spark task: one Polars frame in, one Arrow table of matches out.

The adapter translates, it does not re-implement semantics: a task's rows go
through the same event-table builder, engine and output builder as
``Query.run`` (jitcep/events/, the engine's ``evaluate``, jitcep/output/).
Only three things are added around them:

- rows are sorted by (time, seq) first, so equal timestamps are ordered by
  the sequence column (Spark has no global input order) and the event-table
  builder finds them already sorted;
- when the task holds time-range or position-range copies
  (:mod:`spark_adapter.plan`), a match is kept only if its last event is a
  home copy;
- the output's ``row`` is the sequence value of the event, ``match_id`` is
  made unique across tasks (``partition_id << 33`` plus the local id, the
  layout of Spark's ``monotonically_increasing_id``), and every column is
  cast to the Arrow schema the driver computed from the Spark schema.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from jitcep.events import build_event_table
from jitcep.matches import MatchTable
from jitcep.options import Options
from jitcep.output import to_frame
from jitcep.pattern.ast import Pattern
from jitcep.query import _engine

from .plan import HOME, POS, SEQ

# match_id = partition_id << ID_SHIFT | local index: 2^33 matches per task, 2^30 tasks.
ID_SHIFT = 33


@dataclass(frozen=True)
class Job:
    """Everything a task needs, pickled once on the driver and shipped to the executors."""

    patterns: tuple[Pattern, ...]
    options: Options
    time: str
    type: str | None
    time_unit: str | None
    partition_by: tuple[str, ...] | None  # independent streams: the caller's columns (+ the segment)
    engine: str                          # "reference" | "compiled"
    shape: str
    source_columns: tuple[str, ...]      # input columns the output may gather from
    split_time: bool                     # rows are range copies: keep matches whose last event is home
    target_schema: pa.Schema             # Arrow form of the Spark output schema
    renamed: tuple[tuple[str, str], ...] = ()  # (name in the task's input, the column's own name)


def last_positions(mt: MatchTable) -> np.ndarray:
    """Position of each match's last event (max over every bound event), vectorised.

    The event with the largest position has the largest timestamp, so its
    range decides which range owns the match.
    """
    hi = np.full(mt.n, -1, dtype=np.int64)
    for col in mt.single.values():
        np.maximum(hi, col, out=hi)  # -1 (unbound OR branch) never wins
    for off, pos in mt.lists.values():
        off = np.asarray(off, dtype=np.int64)
        lens = off[1:] - off[:-1]
        nonempty = lens > 0
        if nonempty.any():
            # reduceat over the starts of non-empty lists: each slice ends where the next begins
            seg_max = np.maximum.reduceat(np.asarray(pos, dtype=np.int64), off[:-1][nonempty])
            hi[nonempty] = np.maximum(hi[nonempty], seg_max)
    return hi


def keep_home(results: list[MatchTable], table, home: np.ndarray) -> list[MatchTable]:
    """Only the matches whose last event is a home copy (``home`` indexed by input row of the task)."""
    out = []
    for mt in results:
        if mt.n == 0:
            out.append(mt)
            continue
        last = last_positions(mt)
        keep = np.flatnonzero(home[table.input_rows(last)])
        out.append(mt if len(keep) == mt.n else mt.take(keep))
    return out


def _remap_rows(arr: pa.Array, seq: np.ndarray, in_row_field: bool = False) -> pa.Array:
    """Replace every ``row`` (an index into the task's frame) by ``seq[row]``, through structs and lists."""
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([_remap_rows(c, seq, in_row_field) for c in arr.chunks], type=arr.type)
    t = arr.type
    if in_row_field:
        idx = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
        return pa.array(seq[idx], type=pa.int64(), mask=mask)
    if pa.types.is_struct(t):
        if arr.offset:  # children of a sliced struct are not sliced: normalise first
            arr = pa.concat_arrays([arr])
        children = [_remap_rows(arr.field(i), seq, t.field(i).name == "row") for i in range(t.num_fields)]
        mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(t), mask=pa.array(mask) if mask is not None
                                          else None)
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        values = _remap_rows(arr.values, seq)
        mask = pa.array(arr.is_null().to_numpy(zero_copy_only=False)) if arr.null_count else None
        return cls.from_arrays(arr.offsets, values, mask=mask)
    return arr


def to_target(df: pl.DataFrame, seq: np.ndarray, id_offset: int, target: pa.Schema) -> pa.Table:
    """The task's output as Arrow in the driver's schema: rows remapped, match ids made global."""
    if id_offset:
        df = df.with_columns(pl.col("match_id") + id_offset)
    table = df.to_arrow()
    cols = []
    for name in table.column_names:
        col = table.column(name)
        cols.append(_remap_rows(col, seq, in_row_field=(name == "row")))
    table = pa.table(cols, names=table.column_names)
    return table.select(target.names).cast(target)


def evaluate_frame(frame: pl.DataFrame, job: Job, partition_id: int) -> pa.Table:
    """Every match among one task's rows, as an Arrow table in ``job.target_schema``.

    ``frame`` holds the input columns (under the names of ``job.renamed``)
    plus the helper columns of :mod:`spark_adapter.plan` (``SEQ`` always,
    ``SEG`` / ``HOME`` when split by time).  One engine call covers every equivalence key of the task;
    ``partition_by`` streams (and time segments) are evaluated by the engine
    natively in the same call, exactly as in ``Query.run``.
    """
    if job.renamed:
        frame = frame.rename(dict(job.renamed))
    # (time, seq): ties follow seq; the table builder then keeps this order (its sort is stable).
    # Position copies also carry the global position, which settles any tie seq leaves open.
    frame = frame.sort([job.time, SEQ] + ([POS] if POS in frame.columns else []), nulls_last=True)
    evaluate = _engine(job.engine)
    patterns = list(job.patterns)
    table = build_event_table(frame, patterns, time=job.time, type=job.type, time_unit=job.time_unit,
                              partition_by=job.partition_by, check=False)  # types: checked on the driver
    # partition_by streams: every engine evaluates them natively in one call (semantics §13); on one
    # thread (evaluate's default): Spark runs a task per core already (DESIGN.md section 4, semantics §14)
    results = evaluate(patterns, table, job.options)
    if job.split_time:
        results = keep_home(results, table, frame.get_column(HOME).to_numpy())
    source = frame.select(job.source_columns)
    out = to_frame(patterns, results, table, shape=job.shape, source=source, time=job.time,
                   type=job.type)
    seq = frame.get_column(SEQ).to_numpy().astype(np.int64)
    return to_target(out, seq, partition_id << ID_SHIFT, job.target_schema)
