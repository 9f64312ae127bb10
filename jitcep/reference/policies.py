"""Output policies and OpenCEP's match-level constraints (docs/semantics.md §9).

``contiguous`` and ``freeze`` are filters on single matches; ``non_overlapping``,
``match_single`` and ``match_next`` choose among matches and so scan the
match set in canonical order (§11) — the order that makes the choice a
stated rule rather than an accident of evaluation.
"""

from __future__ import annotations

import numpy as np

from ..matches import MatchTable
from .analysis import PatternInfo
from .candidates import candidates
from .exprs import value_at


def contiguous_ok(binding: dict, groups) -> bool:
    """Each listed group occupies consecutive positions in the listed order (§9)."""
    for group in groups:
        ps = [binding.get(v) for v in group]
        if any(p is None for p in ps):
            continue
        if any(b != a + 1 for a, b in zip(ps, ps[1:])):
            return False
    return True


def active_candidates(info: PatternInfo, table, var: str) -> set[int]:
    """Freeze (§9): candidates of ``var`` not blocked by an earlier active candidate still open."""
    cand = candidates(info, table, var, info.conjs).tolist()
    active: list[int] = []
    for p in cand:
        if active:
            q = active[-1]
            open_ = True
            if info.span is not None and int(table.ts[p]) - int(table.ts[q]) > info.span:
                open_ = False
            if info.count is not None and p - q >= info.count:
                open_ = False
            if open_:
                continue
        active.append(p)
    return set(active)


def _events(binding: dict):
    for v, x in binding.items():
        if x is None:
            continue
        if isinstance(x, tuple):
            for p in x:
                yield v, p
        else:
            yield v, x


def select(table: MatchTable, info: PatternInfo, events, options) -> MatchTable:
    """Apply ``options.output`` to a canonical match table (§9)."""
    policy = options.output
    if policy == "all" or table.n == 0:
        return table
    bindings = table.to_bindings()
    keep: list[int] = []
    if policy == "non_overlapping":
        lo, hi = table.bounds()
        last_end: dict = {}
        for i, b in enumerate(bindings):
            part = None
            if info.equiv_attrs:
                part = tuple(value_at(events, a, int(lo[i])) for a in info.equiv_attrs)
            if part in last_end and lo[i] <= last_end[part]:
                continue
            last_end[part] = int(hi[i])
            keep.append(i)
        return table.take(np.asarray(keep, dtype=np.int64))
    consumable = None
    if options.consume_types is not None:
        names = set(options.consume_types)
        consumable = {i for i, t in enumerate(events.type_names) if t in names}
    used: set = set()
    per_var = policy == "match_next"
    for i, b in enumerate(bindings):
        mine = [(v, p) for v, p in _events(b)
                if consumable is None or int(events.type_code[p]) in consumable]
        keys = [(v, p) if per_var else p for v, p in mine]
        if any(k in used for k in keys):
            continue
        used.update(keys)
        keep.append(i)
    return table.take(np.asarray(keep, dtype=np.int64))
