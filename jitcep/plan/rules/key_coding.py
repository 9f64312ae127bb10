"""Rule: how the partition codes of a pattern-wide key ``[attr]`` are made, once the event table is known.

Joins only pair records of one partition (ZStream 5.4 hash partitioning), so
every leaf needs each event's partition code.  The cheapest way depends on
the key column, so this rule runs with the table, before execution, and is
the same for every pattern of a run with that key:

- "none": no key, one partition.
- "types": the key is ``type``: the type codes are the partition codes.
- "labels": one string column: its labels (a Categorical's category ids, a
  String coded in one pass without its dictionary).
- "records": one string column not coded yet, when the leaves' types are at
  most :data:`jitcep.config.KEY_AT_RECORDS_SHARE` of the events (estimated
  from a sample): it is coded only at the events of those types, grouped in
  one pass (:meth:`jitcep.events.Column.codes_at`).
- "values": one integer column whose values span a narrow range: the values
  less their minimum (a min/max pass instead of coding every event).
- "dense": anything else (several attributes, wide integers, floats,
  ``partition_by`` streams): a dense coding of the key's distinct values.
"""

from __future__ import annotations

import numpy as np

from ... import config
from ...kernels.encode import value_range


def choose(table, key: tuple[str, ...], leaf_types, untyped: bool, streams: bool, threads: int = 1):
    """(coding, value range): the coding of ``key`` over ``table``; the range (lo, hi) for "values", a
    column whose keys are all null ("values", None), else None.

    ``leaf_types``: the types the leaves of every plan with this key read
    (None: not known); ``untyped``: some leaf reads every event;
    ``streams``: the table holds ``partition_by`` streams (their codes are combined with the key's);
    ``threads``: the pass finding an integer key's range splits over that many (:mod:`jitcep.threads`).
    """
    if not key:
        return "none", None
    if streams or len(key) != 1:
        return "dense", None
    attr = key[0]
    col = table.columns.get(attr)
    if col is None:
        return ("types", None) if attr == "type" else ("dense", None)
    if col.kind == "str":
        if col.string_input and not untyped and leaf_types is not None and table.type_names \
                and _types_share(table, leaf_types) <= config.KEY_AT_RECORDS_SHARE:
            return "records", None
        return "labels", None
    if col.kind == "int":
        bounds = value_range(col.values, col.valid, threads)
        if bounds is None:  # every key is null: nothing joins
            return "values", None
        lo, hi = bounds
        if hi - lo < max(table.n // 8, 1 << 16):  # goff arrays (G + 1) stay small next to n
            return "values", (lo, hi)
    return "dense", None


def _types_share(table, types) -> float:
    """The share of events whose type is one of ``types``, from every ``KEY_SAMPLE_STEP``-th event."""
    code = {t: i for i, t in enumerate(table.type_names)}
    keep = np.zeros(len(table.type_names) + 1, dtype=np.bool_)  # by type code + 1 (a null type is -1)
    keep[[code[t] + 1 for t in types if t in code]] = True
    sample = table.type_code[::config.KEY_SAMPLE_STEP]
    return float(keep[sample + 1].mean()) if len(sample) else 0.0
