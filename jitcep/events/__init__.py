"""Event tables: input rows -> time-sorted columnar arrays (+ per-key partitions).

CONTRACT (shared by the reference evaluator, the compiled engine and output).

- Rows are sorted stably by timestamp; *position* ``p`` is a row's rank in that
  order.  ``row[p]`` is its 0-based row number in the input as given.
- ``ts`` is int64.  Date / Datetime inputs are stored in their physical unit and
  ``time_unit_ns`` says how many nanoseconds one unit is; numeric inputs carry
  the unit the caller declared (``time_unit="s"``), else ``time_unit_ns=None``
  and a duration window over them is a ``WindowUnitError``.
- ``type_code[p]`` indexes ``type_names`` (``-1 <= type_code < len(type_names)``,
  the invariant the type grouping relies on); without a type column every event
  has the null type -1 and ``type_names == ()`` (only untyped variables can
  match; ``Query.run`` refuses typed variables without a type column:
  :func:`check_type_column`).
- ``columns`` holds only the attributes the pattern reads.  Each is a
  :class:`Column` with numpy values (float64 / int64 / bool, or int32 codes
  into ``dictionary`` for strings) and a validity mask.  A String column's
  ``values`` and ``dictionary`` may be computed when first read
  (:meth:`Column.deferred`); :meth:`Column.labels` and :meth:`Column.codes_at`
  group them without coding.
- ``partition`` exists when the pattern has an equivalence key: rows grouped by
  key in CSR form, each group sorted by (ts, position); its arrays (and ``row``
  of input already sorted by time) may be computed when first read.

Decisions of the builder (:func:`build_event_table`):

- Float timestamps are accepted only when every value is integral (else
  TimestampError: scale to an integer unit and declare it with ``time_unit=``);
  NaN counts as null.  A Datetime with a time zone is its UTC instant.
- ``type_code == -1`` is a null type: it matches only untyped variables.
  ``type_names`` and string ``dictionary`` tuples are sorted, so the order of
  codes is the order of the strings (Unicode code points).
- ``ts`` and, when the input has no column of that name, ``type`` are
  virtual columns (:meth:`EventTable.column`); they are not in ``columns``.
- Temporal attributes are stored as int64 (kind "int") with ``temporal`` naming
  what they denote (semantics §4): every instant attribute (Date, Datetime)
  in one unit, the finest among them, every span (Duration) likewise, so
  equal numbers are equal instants; the type checks refuse comparing them
  with numbers or with another temporal kind.
- Two kinds of partition (semantics §13).  From the equivalence key (``[attr]``)
  it is an index: rows whose key is null belong to no group (``key_code`` -1),
  as a null key equals nothing.  From ``partition_by=`` it is a split
  (``Partition.independent``): each group is a separate stream that every
  engine evaluates on its own (:func:`jitcep.streams.evaluate_per_partition`), and a null key

Modules, one job each:

- :mod:`~jitcep.events.reading`: any accepted input -> a Polars DataFrame of the needed columns.
- :mod:`~jitcep.events.attributes`: what the patterns read, the equivalence key, the pseudo-attributes.
- :mod:`~jitcep.events.times`: time units, the time column as int64, temporal attributes, window spans.
- :mod:`~jitcep.events.coding`: strings / categoricals -> codes into a sorted dictionary.
- :mod:`~jitcep.events.column`: :class:`Column`, one attribute by position (lazily coded strings).
- :mod:`~jitcep.events.partition`: :class:`Partition` and :func:`build_partition`.
- :mod:`~jitcep.events.types`: :func:`check_types`, predicates that mix kinds of values.
- :mod:`~jitcep.events.table`: :class:`EventTable` and :func:`build_event_table`.

The names below are re-exported so ``from jitcep.events import X`` keeps
working; code inside the package imports from the submodule.
"""

from __future__ import annotations

from ..streams import evaluate_per_partition  # not an event-table job; kept importable from here
from .attributes import attributes_read, check_type_column, equivalence_key
from .column import Column
from .partition import Partition, build_partition
from .reading import read_events, read_table
from .table import EventTable, build_event_table, table_of_frame
from .times import normalize_unit, parse_time_strings, window_span
from .types import check_types

__all__ = ["Column", "EventTable", "Partition", "attributes_read", "build_event_table", "build_partition",
           "check_type_column", "check_types", "equivalence_key", "evaluate_per_partition", "normalize_unit",
           "parse_time_strings", "read_events", "read_table", "table_of_frame", "window_span"]
