"""Event tables: input rows -> time-sorted columnar arrays (+ per-key partitions).

CONTRACT (shared by the reference evaluator, the compiled engine and output).
The builder ``build_event_table`` is implemented by the events work item.

- Rows are sorted stably by timestamp; *position* ``p`` is a row's rank in that
  order.  ``row[p]`` is its 0-based row number in the input as given.
- ``ts`` is int64.  Date / Datetime inputs are stored in their physical unit and
  ``time_unit_ns`` says how many nanoseconds one unit is; numeric inputs carry
  the unit the caller declared (``time_unit="s"``), else ``time_unit_ns=None``
  and a duration window over them is a ``WindowUnitError``.
- ``type_code[p]`` indexes ``type_names``; without a type column every event
  has code 0 and ``type_names == ()`` (only untyped variables can match).
- ``columns`` holds only the attributes the pattern reads.  Each is a
  :class:`Column` with numpy values (float64 / int64 / bool, or int32 codes
  into ``dictionary`` for strings) and a validity mask.
- ``partition`` exists when the pattern has an equivalence key: rows grouped by
  key in CSR form, each group sorted by (ts, position).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np


@dataclass(frozen=True, eq=False)
class Column:
    """One attribute, by position."""

    kind: Literal["int", "float", "bool", "str"]
    values: np.ndarray              # int64 / float64 / bool_ / int32 codes (str); arbitrary where null
    valid: np.ndarray | None        # bool mask, None when the column has no nulls
    dictionary: tuple[str, ...] = ()  # for kind == "str": code -> string

    def python_value(self, p: int):
        """The value at position p as a Python scalar (None for null)."""
        if self.valid is not None and not self.valid[p]:
            return None
        v = self.values[p]
        if self.kind == "str":
            return self.dictionary[int(v)]
        return v.item()


@dataclass(frozen=True, eq=False)
class Partition:
    """Equivalence-key partitions in CSR form (DESIGN.md section 1)."""

    key: tuple[str, ...]       # attribute names forming the key
    key_code: np.ndarray       # int64 per position: dense code of the key value (-1: null key)
    order: np.ndarray          # int64 positions sorted by (key_code, ts, position)
    offsets: np.ndarray        # int64, len = n_keys + 1; group g is order[offsets[g]:offsets[g+1]]


@dataclass(frozen=True, eq=False)
class EventTable:
    """Time-sorted columnar events; see the module docstring for the contract."""

    ts: np.ndarray
    row: np.ndarray
    type_code: np.ndarray
    type_names: tuple[str, ...]
    columns: dict[str, Column]
    time_unit_ns: int | None
    time_dtype: object          # the input time column's Polars dtype, for output
    partition: Partition | None = None

    @property
    def n(self) -> int:
        return len(self.ts)

    def value(self, attr: str, p: int):
        """Python value of ``attr`` at position ``p`` (``ts`` and ``type`` are always available)."""
        if attr == "ts":
            return int(self.ts[p])
        if attr == "type" and attr not in self.columns:
            return self.type_names[self.type_code[p]] if self.type_names else None
        return self.columns[attr].python_value(p)
