"""Streams of a ``partition_by=`` split: every engine evaluated once per stream, results merged.

Not an event-table job: this runs an engine (any ``evaluate_group``) per group
of an independent partition (semantics §13) and maps the match tables back to
positions of the whole table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .errors import ExplosionError
from .matches import MatchTable

if TYPE_CHECKING:
    from .events.table import EventTable


def evaluate_per_partition(evaluate_group, table: "EventTable", *, max_matches: int | None = None) -> list:
    """Match tables of a ``partition_by=`` split: each group evaluated as its own stream (semantics §13).

    ``evaluate_group(sub_table) -> list[MatchTable]`` (one per pattern, the
    same number for every group) runs on :meth:`EventTable.take` of each
    group; positions are mapped back to ``table`` and the groups' tables
    concatenated per pattern in canonical order.  ``max_matches``: the total
    over all groups (§12), checked after each group.
    """
    part = table.partition
    if part is None or not part.independent:
        raise ValueError("evaluate_per_partition needs a table partitioned with partition_by=")
    per_pattern: list[list[MatchTable]] | None = None
    total = 0
    for g in range(len(part.offsets) - 1):
        where = part.order[part.offsets[g]:part.offsets[g + 1]]
        # group positions ascend (the group is sorted by (ts, position)), so order is kept
        results = evaluate_group(table.take(where))
        if per_pattern is None:
            per_pattern = [[] for _ in results]
        for k, mt in enumerate(results):
            per_pattern[k].append(_remap(mt, where))
            total += mt.n
        if max_matches is not None and total > max_matches:
            raise ExplosionError(f"more than max_matches={max_matches} matches; raise the cap with "
                                 f"jitcep.compile(..., max_matches=N) or make the pattern more selective")
    if per_pattern is None:  # no events at all: one empty evaluation gives the typed empty tables
        return evaluate_group(table.take(np.zeros(0, np.int64)))
    return [_concat(parts).canonical() for parts in per_pattern]


def _remap(mt, where: np.ndarray):
    """``mt`` with sub-table positions replaced by ``where[p]`` (positions of the whole table)."""
    single = {v: np.where(c >= 0, where[np.maximum(c, 0)], -1) for v, c in mt.single.items()}
    lists = {v: (off, where[pos]) for v, (off, pos) in mt.lists.items()}
    return MatchTable(mt.n, single, lists, dict(mt.list_unbound))


def _concat(parts: list):
    n = sum(p.n for p in parts)
    first = parts[0]
    single = {v: np.concatenate([p.single[v] for p in parts]) for v in first.single}
    lists = {}
    for v in first.lists:
        lens = np.concatenate([np.diff(p.lists[v][0]) for p in parts])
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        lists[v] = (off, np.concatenate([p.lists[v][1] for p in parts]).astype(np.int64))
    unbound = {}
    for v in {v for p in parts for v in p.list_unbound}:
        unbound[v] = np.concatenate([p.list_unbound.get(v, np.zeros(p.n, dtype=bool)) for p in parts])
    return MatchTable(n, single, lists, unbound)
