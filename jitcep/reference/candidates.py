"""Per-variable candidate lists and the order / window bounds on them (§1–§4).

A variable's candidates are the positions whose event has one of its types,
passes its ``[attr = v]`` tests and its single-variable conjuncts: a filter
applied once, so the search only walks events that could bind it.  Positions
are sorted and timestamps are nondecreasing in position, so every bound below
is a binary search.
"""

from __future__ import annotations

import numpy as np

from ..pattern.kinds import INT64_MAX, INT64_MIN
from .analysis import Conjunct, PatternInfo
from .exprs import Ctx, compare, value_at


def type_mask(table, types: tuple[str, ...] | None) -> np.ndarray:
    """Positions whose event has one of ``types`` (None: every event) (§3)."""
    if types is None:
        return np.ones(table.n, dtype=bool)
    wanted = set(types)
    codes = [i for i, name in enumerate(table.type_names) if name in wanted]
    return np.isin(table.type_code, np.asarray(codes, dtype=table.type_code.dtype))


def filter_conjuncts(info: PatternInfo, var: str, conjs: list[Conjunct]) -> list[Conjunct]:
    """Conjuncts that read only ``var`` member by member: usable as a pre-filter on its candidates."""
    member = var in info.kid  # of a list: only conjuncts that look at one member at a time
    return [c for c in conjs if c.vars == frozenset((var,))
            and (not member or (not c.prev and not c.whole_list and not c.first))]


def candidates(info: PatternInfo, table, var: str, conjs: list[Conjunct]) -> np.ndarray:
    """Sorted positions that may bind ``var`` (before any multi-variable predicate)."""
    mask = type_mask(table, info.events[var].types)
    pos = np.flatnonzero(mask).astype(np.int64)
    if not len(pos):
        return pos
    keep = np.ones(len(pos), dtype=bool)
    for attr, value in info.equiv_values:
        for j, p in enumerate(pos):
            if keep[j] and compare("=", value_at(table, attr, int(p)), value) is not True:
                keep[j] = False
    for attr in info.equiv_attrs:  # a null or NaN key never joins (§4): it equals no value
        for j, p in enumerate(pos):
            v = value_at(table, attr, int(p)) if keep[j] else None
            if keep[j] and (v is None or v != v):
                keep[j] = False
    filt = filter_conjuncts(info, var, conjs)
    if filt:
        binding: dict = {}
        ctx = Ctx(table, binding, info.kid)
        k = info.kid.get(var)
        for j, p in enumerate(pos):
            if not keep[j]:
                continue
            binding[var] = [int(p)] if k is not None else int(p)
            if k is not None:
                ctx.it[k] = 0
            if not all(c.fn(ctx) is True for c in filt):
                keep[j] = False
    return pos[keep]




def search_time(times: np.ndarray, t: int, side: str) -> int:
    """``np.searchsorted(times, t, side)`` for a Python int ``t``, exact also beyond int64 (§2).

    A window bound such as ``ts(last) - d`` is computed exactly as a Python
    int and may lie outside int64; NumPy would compare it as a float (2**63 + 5
    rounds to 2**63 and ties with int64's maximum).  Every int64 time is above
    a bound below int64 and below a bound above it.
    """
    if t < INT64_MIN:
        return 0
    if t > INT64_MAX:
        return len(times)
    return int(np.searchsorted(times, np.int64(t), side=side))


class Bounds:
    """Order limits on the next event (§1): ``max_pos < p`` or ``max_ts < ts`` (``<=`` under
    nondecreasing_ts), and ``pos_floor < p``; the window box is applied separately (:func:`index_range`)."""

    __slots__ = ("max_pos", "max_ts", "pos_floor")

    def __init__(self, max_pos: int = -1, max_ts=None, pos_floor: int = -1):
        self.max_pos = max_pos      # every event before (in the SEQ sense) the next one
        self.max_ts = max_ts
        self.pos_floor = pos_floor  # Kleene iterations: strictly after this position too (§6)

    def after(self, table, positions) -> "Bounds":
        """Bounds for something ordered after ``positions`` (and after what this already orders)."""
        if not positions:
            return self
        mp = max(positions)
        mt = int(table.ts[mp])
        return Bounds(max(self.max_pos, mp), mt if self.max_ts is None else max(self.max_ts, mt),
                      self.pos_floor)

    def iteration(self, table, positions) -> "Bounds":
        """Bounds for the next Kleene iteration after one holding ``positions`` (§6)."""
        b = self.after(table, positions)
        return Bounds(b.max_pos, b.max_ts, max(b.pos_floor, max(positions)) if positions else b.pos_floor)


def index_range(cand: np.ndarray, cand_ts: np.ndarray, table, order: str, bounds: Bounds,
                box: tuple | None, span, count) -> tuple[int, int]:
    """Slice [i, j) of ``cand`` that satisfies the order bounds and the window box.

    ``box`` = (min_ts, max_ts, min_pos, max_pos) over the events already bound.
    """
    lo_pos = bounds.pos_floor + 1
    i_ts = 0
    if bounds.max_ts is not None:
        if order == "position":
            lo_pos = max(lo_pos, bounds.max_pos + 1)
        else:  # strict_ts: ts > max ts; nondecreasing_ts: ts >= max ts (§1)
            side = "right" if order == "strict_ts" else "left"
            i_ts = int(np.searchsorted(cand_ts, bounds.max_ts, side=side))
    j = len(cand)
    if box is not None:
        mn_ts, mx_ts, mn_pos, mx_pos = box
        if span is not None:  # max ts - min ts <= span over the whole match (§2)
            i_ts = max(i_ts, search_time(cand_ts, mx_ts - span, "left"))
            j = min(j, search_time(cand_ts, mn_ts + span, "right"))
        if count is not None:  # max pos - min pos < count
            lo_pos = max(lo_pos, mx_pos - count + 1)
            j = min(j, int(np.searchsorted(cand, mn_pos + count - 1, side="right")))
    i = max(i_ts, int(np.searchsorted(cand, lo_pos, side="left")))
    return i, j
