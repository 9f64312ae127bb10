"""OutputPolicy: the matches an output policy keeps, scanned in canonical order (docs/semantics.md section 9).

The policy's greedy scan (:mod:`jitcep.kernels.policies`) runs over the
records in canonical order (section 11: the order that makes "the previously
kept match" a stated rule), found by the same sort
(:meth:`jitcep.matches.MatchTable.canonical_order`) that orders the final
table; the kept records leave in buffer order, so the executor's last step
sorts only them.

- ``non_overlapping`` partitions by the record's key partition: the
  ``[attr]`` key, the ``partition_by`` stream, or both (semantics 9, 13).
- ``match_single`` / ``match_next``: a match's events are its single
  variables' events and every member of its lists, those of a type in
  ``consume_types`` only when given; ``match_next`` gives each variable its
  own slot.  Streams share no event, so one scan serves every stream.
"""

from __future__ import annotations

import numpy as np

from ..kernels.policies import consume_once, non_overlapping
from ..matches import MatchTable
from .buffer import Buffer, offsets


def run(node, state, execute) -> Buffer:
    buf = execute(node.input)
    state.found = len(buf)
    if len(buf) < 2:  # a lone match overlaps and consumes nothing before it
        return buf
    plan = state.plan
    # an unbound list (an OR branch not taken) sorts after a bound one, not as the empty list it holds
    mt = MatchTable(len(buf), {v: buf.column(v) for v in plan.variables}, {v: buf.lists[v] for v in plan.list_vars},
                    {v: u for v, u in buf.unbound.items() if v in plan.list_vars})
    order = mt.canonical_order()
    if node.policy == "non_overlapping":
        lo, hi = mt.bounds()
        keep = non_overlapping(buf.partitions()[order], lo[order], hi[order], len(buf.goff) - 1)
    else:
        keep = _consumed(mt.take(order), state.table, node.consume_types, per_var=node.policy == "match_next")
    return buf.keep(np.sort(order[keep]))


def _consumed(mt: MatchTable, table, consume_types, per_var: bool) -> np.ndarray:
    """Which matches of ``mt`` (canonical order) ``match_single`` (``match_next``: ``per_var``) keeps."""
    m = mt.n
    k = len(mt.single)
    rows = np.arange(m, dtype=np.int64)
    # every (match, event, variable slot): the single variables row by row, then each list's members
    mid = [np.repeat(rows, k)]
    pos = [np.stack(list(mt.single.values()), axis=1).ravel() if k else rows[:0]]
    slot = [np.tile(np.arange(k, dtype=np.int64), m)]
    for j, (off, lpos) in enumerate(mt.lists.values()):
        mid.append(np.repeat(rows, np.diff(off)))
        pos.append(lpos[:off[-1]])
        slot.append(np.full(int(off[-1]), k + j, dtype=np.int64))
    mid, pos, slot = np.concatenate(mid), np.concatenate(pos), np.concatenate(slot)
    ok = pos >= 0  # an unbound variable (an OR branch not taken) binds no event
    if consume_types is not None:
        wanted = set(consume_types)
        consumable = np.array([t in wanted for t in table.type_names] + [False], dtype=np.bool_)
        ok &= consumable[table.type_code[np.maximum(pos, 0)]]  # a null type (code -1) reads the last: False
    mid, pos, slot = mid[ok], pos[ok], slot[ok]
    if mt.lists:  # the lists' members come after every match's singles: group them by match again
        by_match = np.argsort(mid, kind="stable")
        mid, pos, slot = mid[by_match], pos[by_match], slot[by_match]
    if not per_var:
        slot = np.zeros(len(pos), dtype=np.int64)
    # the kernel's "used" table has one entry per (event, slot): number only the events the matches
    # bind, so it grows with the matches, not with the table times the variables
    events, dense = np.unique(pos, return_inverse=True)
    return consume_once(offsets(mid, m), dense.astype(np.int64), slot, len(events), k + len(mt.lists) if per_var else 1)
