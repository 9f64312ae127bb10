"""How a query is split across Spark tasks, decided on the driver without data.

Three execution modes (DESIGN.md section 4; issue 4):

- ``"keyed"``: the caller passed ``partition_by`` (each value is a stream of
  its own, semantics §13), or the patterns share an equivalence key
  ``[attr]``, so events with different keys never meet in one match (SASE
  section 4.2.1 PAIS, ZStream section 5.2.2 hashing).  Spark
  hash-partitions by the key and each task evaluates its whole partition in
  one call.
- ``"ranges"``: no key.  The time axis is cut into ranges of width ``R``;
  range ``r`` *owns* ``[rR, (r+1)R)`` and receives a copy of every event
  with ``floor(t/R) <= r <= floor((t+W)/R)``, i.e. the events of
  ``[rR - W, (r+1)R)``.  A match with window ``W`` whose last event lies in
  ``r`` has every event in ``[last - W, last]``, so range ``r`` sees all of
  it; it is kept only there (its last event is a *home* copy), so each match
  comes from exactly one range.
- ``"positions"``: no key and every window a count window (``WITHIN n
  EVENTS``).  The row-count equivalent of ``"ranges"``: each event gets its
  global position ``p`` in (time, seq) order (semantics §1), range ``r`` owns
  positions ``[rR, (r+1)R)`` and receives every event with
  ``floor(p/R) <= r <= floor((p+n-1)/R)``, i.e. positions
  ``[rR - (n-1), (r+1)R)``.  A match satisfies ``max pos - min pos < n``
  (semantics §2), so all its events lie in ``[last - (n-1), last]``: the range
  owning its last event sees it whole and is the only one keeping it.
- ``"single"``: everything in one task, for queries where a split changes
  results (see :func:`split_blockers`).

A key too large for one task is split by time like ``"ranges"`` (skew): on by
default, with the threshold of :func:`skew_threshold`.

Each range copy is evaluated as a stream of its own: the segment column is
added to the engine's ``partition_by`` (:func:`stream_columns`).  A copy is a
contiguous slice of the stream in time, so positions differ from the whole
stream's only by an offset and "the next event" is the same event.
Everything here is integer arithmetic on the table's int64 time (exact
before 1970 too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jitcep.events import equivalence_key, window_span
from jitcep.pattern import ast

# Helper columns the adapter adds; the leading "__cep_" keeps them apart from user columns.
SEQ = "__cep_seq"      # tie-breaker and output ``row``: seq_col's value or a generated id
SEG = "__cep_seg"      # segment (time range) a copy belongs to
HOME = "__cep_home"    # whether this copy lies in the range that owns it
TIME = "__cep_t"       # the time column as int64 in the event table's units
POS = "__cep_pos"      # global position in (time, seq) order, for count windows ("positions")
INPUT = "__cep_in"     # + i: the i-th input column on its way into a task (its own name is restored there)
HELPERS = (SEQ, SEG, HOME, TIME, POS)

# Ranges are at least this many windows wide, so an event has at most two copies.
MIN_WINDOWS_PER_RANGE = 10
# Below this many rows a task costs more in fixed overhead (scheduling, a Python worker, Arrow batches)
# than its matching: a 336k-row job took ~90 s over Spark's default 200 shuffle partitions, 5.8 s over 4.
MIN_ROWS_PER_TASK = 100_000


@dataclass(frozen=True)
class Decision:
    """What the driver decided: ``mode``, the key columns, and why a split was refused."""

    mode: str                      # "keyed" | "ranges" | "positions" | "single"
    key: tuple[str, ...]           # hash key for "keyed"
    window: int | None             # W in ts units (max over patterns); None without a time window
    reason: str | None = None      # why the query runs in fewer pieces than it could
    can_split_time: bool = False   # may ranges (and per-key skew ranges) be used
    events: int | None = None      # n of "positions": the largest count window over the patterns


def window_in_units(patterns, table) -> tuple[int | None, bool, bool]:
    """(max time window span over the patterns, any count window, any unbounded window)."""
    spans, count, unbounded = [], False, False
    for p in patterns:
        w = p.window
        if isinstance(w, ast.CountWindow):
            count = True
        elif isinstance(w, ast.Unbounded) or w is None:
            unbounded = True
        else:
            spans.append(window_span(w, table))
    return (max(spans) if spans else None), count, unbounded


def _trailing(node: ast.Node, kleene_maximal: bool) -> bool:
    """Does ``node`` end (in SEQ order) with a negation or a maximal Kleene closure?

    Both look *past* the match's last positive event (semantics §7 "at the
    end", §6.2 "no right neighbour"), so a range that ends at the last event
    cannot decide them.  Conservative inside AND/OR: any branch counts.
    """
    if isinstance(node, ast.Neg):
        return True
    if isinstance(node, ast.Kleene):
        return kleene_maximal and isinstance(node.body, ast.EventVar)
    if isinstance(node, ast.Seq):
        return bool(node.items) and _trailing(node.items[-1], kleene_maximal)
    if isinstance(node, (ast.Conj, ast.Disj)):
        return any(_trailing(i, kleene_maximal) for i in node.items)
    return False


def split_blockers(patterns, options) -> tuple[str | None, str | None]:
    """(why time ranges are invalid, why equivalence-key partitioning is invalid); None where valid.

    Invalid for ranges: output policies other than ``all`` and ``freeze``
    carry state from one match to the next; a trailing negation or maximal
    Kleene looks past the last event; an unbounded window has no range; a
    count window is a range of positions, not of time.
    Invalid for an equivalence key (one stream, indexed by key): freeze (its
    candidate scan ignores keys), count windows and strict contiguity
    (positions and "the next event" belong to the whole stream).
    ``partition_by`` streams are independent, so nothing blocks them.
    """
    key_reason = None
    if options.freeze:
        key_reason = "freeze= scans candidates over the whole stream"
    elif options.strategy == "strict_contiguity":
        key_reason = "strict_contiguity needs every next event of the whole stream"
    elif any(isinstance(p.window, ast.CountWindow) for p in patterns):
        key_reason = "a count window (WITHIN n EVENTS) counts positions in the whole stream"
    range_reason = _policy_blocker(patterns, options)
    if range_reason is None:
        if any(isinstance(p.window, ast.CountWindow) for p in patterns):
            range_reason = "a count window (WITHIN n EVENTS) needs ranges of positions, not of time"
        elif any(isinstance(p.window, ast.Unbounded) or p.window is None for p in patterns):
            range_reason = "an unbounded window cannot be cut into time ranges"
    return range_reason, key_reason


def _policy_blocker(patterns, options) -> str | None:
    """Why no split of one stream into overlapping ranges (of time or of positions) is exact, or None."""
    if options.output != "all":
        return f"output={options.output!r} carries state from one match to the next"
    if options.freeze:
        return "freeze= carries state from one candidate to the next"
    if any(_trailing(p.body, options.kleene == "maximal") for p in patterns):
        return "a trailing negation or maximal Kleene closure looks past the match's last event"
    return None


def count_window_events(patterns) -> int | None:
    """n when every pattern has a count window ``WITHIN n EVENTS`` (the largest n), else None."""
    if patterns and all(isinstance(p.window, ast.CountWindow) for p in patterns):
        return max(int(p.window.n) for p in patterns)
    return None


def partition_columns(partition_by) -> tuple[str, ...]:
    if not partition_by:
        return ()
    return tuple([partition_by] if isinstance(partition_by, str) else partition_by)


def decide(patterns, options, table, partition_by=None) -> Decision:
    """Choose the execution mode (module docstring) for ``patterns`` over a table like ``table``.

    ``table`` is an (empty) event table of the input's schema: it supplies the
    time unit the window is converted with.
    """
    window, _, _ = window_in_units(patterns, table)
    range_reason, key_reason = split_blockers(patterns, options)
    streams = partition_columns(partition_by)
    if streams:
        return Decision("keyed", streams, window, range_reason, can_split_time=range_reason is None)
    key = equivalence_key(patterns) or ()
    if key and key_reason is None:
        return Decision("keyed", key, window, range_reason, can_split_time=range_reason is None)
    if key:
        return Decision("single", (), window, key_reason)
    if range_reason is None:
        return Decision("ranges", (), window, None, can_split_time=True)
    n = count_window_events(patterns)
    if n is not None and _policy_blocker(patterns, options) is None:
        return Decision("positions", (), window, None, events=n)
    if n is None and any(isinstance(p.window, ast.CountWindow) for p in patterns):
        range_reason = ("count windows (WITHIN n EVENTS) mixed with time or unbounded windows: neither "
                        "time nor position ranges hold every pattern")
    return Decision("single", (), window, range_reason)


def stream_columns(partition_by, split_time: bool) -> tuple[str, ...] | None:
    """The engine's ``partition_by``: the caller's streams, plus the segment when split by time."""
    cols = partition_columns(partition_by) + ((SEG,) if split_time else ())
    return cols or None


def floor_div(a: int, b: int) -> int:
    """Exact floor division (Python ints), the arithmetic the Spark side mirrors with pmod/div."""
    return a // b


def range_width(window: int, t_min: int, t_max: int, n_events: int, target_rows: int) -> int:
    """R for cutting [t_min, t_max] so a range holds about ``target_rows`` events, R >= 10 W.

    Assumes events spread evenly over time (the skew split handles keys that
    are not).  At least 1; never overflows (Python ints).
    """
    span = max(t_max - t_min + 1, 1)
    pieces = max(math.ceil(n_events / max(target_rows, 1)), 1)
    return max(MIN_WINDOWS_PER_RANGE * max(window, 1), math.ceil(span / pieces), 1)


def task_count(rows: int | None, parallelism: int, rows_per_task: int) -> int:
    """How many tasks to repartition into when ``num_partitions`` is not given (docs/spark.md).

    One task per core (``parallelism``, Spark's ``defaultParallelism``), but
    no more tasks than give each at least :data:`MIN_ROWS_PER_TASK` rows, and
    at least enough to keep each at about ``rows_per_task`` rows or fewer
    (bounded memory per task).  ``rows`` None (unknown without a job): one per
    core.  Always at least 1.
    """
    cores = max(parallelism, 1)
    if rows is None:
        return cores
    few = min(cores, math.ceil(rows / MIN_ROWS_PER_TASK))
    return max(few, math.ceil(rows / max(rows_per_task, 1)), 1)


def skew_threshold(total_rows: int, n_parts: int, floor: int) -> int:
    """Rows above which a key is "too large for one task" (issue 4, skew), for ``max_key_rows="auto"``.

    A key holding more than a task's fair share ``total_rows / n_parts`` keeps
    one core busy while the others idle; below ``floor`` rows a task is cheap
    anyway and splitting only costs copies.  So: the larger of the two.
    """
    return max(floor, math.ceil(total_rows / max(n_parts, 1)), 1)


def position_segments(pos: int, n: int, width: int) -> range:
    """The ranges an event at position ``pos`` is copied into for ``WITHIN n EVENTS``.

    floor(pos/R) .. floor((pos+n-1)/R): a match keeps ``max pos - min pos < n``
    (semantics §2), so a match whose last event is at q needs positions
    q-(n-1) .. q.
    """
    return segments_of(pos, n - 1, width)


def segments_of(t: int, window: int, width: int) -> range:
    """The ranges an event at time ``t`` is copied into: floor(t/R) .. floor((t+W)/R)."""
    return range(floor_div(t, width), floor_div(t + window, width) + 1)
