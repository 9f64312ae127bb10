"""List conjuncts of a closure (semantics section 4: aggregates, ``v[k]``, ``v[v.LEN]``), once per list.

Each conjunct is rewritten over one virtual variable whose "event" is the
item tested (a (record, list), or a (record, negated candidate) pair reading
the record's list) and whose columns are the aggregates and the gathered
attributes, then compiled like any predicate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import config
from ..codegen import PredicateSet
from ..codegen.predicates import ColumnSpec
from ..events import Column
from ..events.types import attribute_kind
from ..kernels.gather import take
from ..kernels.kleene import run_aggregates, segment_aggregate
from ..pattern import expr as E, kinds
from ..pattern.expr import map_expr
from ..plan.kleene_refs import member_var, prev_var
from ..plan.operators import GroupCollect
from .buffer import list_ends


class Runs(NamedTuple):
    """A closure's lists as runs of its members: list j is ``members[start[j] : start[j] + length[j]]``
    (``kleene="maximal"``, :func:`~jitcep.kernels.kleene.closure_runs`), read by aggregates only."""

    members: np.ndarray
    start: np.ndarray
    length: np.ndarray


class _VirtualTable:
    """Per-list columns (one "event" per (record, list)) as PredicateSet.bind sees a table."""

    def __init__(self, ts: np.ndarray, columns: dict):
        self.ts, self.columns = ts, columns


def list_mask(state, conds, single: dict, lists: dict, rows: np.ndarray | None = None,
              unbound: dict | None = None) -> np.ndarray:
    """Which items satisfy every conjunct of ``conds`` reading closures' lists (``lists[kv]``: CSR
    offsets and positions, aligned list by list, or :class:`Runs` where only aggregates read it): item j
    reads list ``rows[j]`` of each (None: list j)
    and the events ``single[v][j]`` of the single variables.  ``unbound[kv]`` (per list): the closure is
    unbound there (an OR branch not taken), and a conjunct reading it does not apply (section 4)."""
    table = state.table
    unbound = unbound or {}
    if rows is not None:
        n = len(rows)
    else:
        held = next(iter(lists.values()))
        n = len(held.start) if isinstance(held, Runs) else len(held[0]) - 1
    if not n:
        # nothing to test; and with no item a column gathered from an attribute that has no value in the
        # table would look non-null, so its kind would be checked where semantics section 4 gives it none
        return np.ones(0, dtype=np.bool_)
    cols: dict = {}

    def per_item(c: Column) -> Column:
        if rows is None:
            return c
        return Column(c.kind, c.values[rows], None if c.valid is None else c.valid[rows], c.dictionary,
                      c.temporal)

    def gather(attr: str, p: np.ndarray):
        col = table.column(attr)
        if col.values.dtype.kind in "biufmM" and (not len(p) or p.min() >= 0):
            # every item has its event (a list's members, a bound variable): one pass per array, no
            # clipped copy of the positions or mask beside it (fresh pages cost more than the reads here)
            valid = None if col.valid is None else take(col.valid, p)
            return Column(col.kind, take(col.values, p), None if valid is None or valid.all() else valid,
                          col.dictionary, col.temporal)
        q = np.maximum(p, 0)
        valid = p >= 0
        if col.valid is not None:
            valid &= col.valid[q]
        return Column(col.kind, col.values[q], None if valid.all() else valid, col.dictionary, col.temporal)

    def aggregate(x: E.Agg) -> Column:
        held = lists[x.var]
        runs = isinstance(held, Runs)
        lpos, lens = (held.members, held.length) if runs else (held[1], np.diff(held[0]))
        if x.func == "count":
            return per_item(Column("int", lens.astype(np.int64), None))
        if attribute_kind(x.attr, table) is None:
            # no value in the table: the attribute has no kind and its aggregate is NULL (semantics section 4),
            # whatever its column's dtype (the run's type check passed it as such)
            return per_item(Column("float", np.zeros(len(lens)), np.zeros(len(lens), np.bool_)))
        c = gather(x.attr, lpos)
        kinds.result_kind(x.func, c.temporal or c.kind, shown=(f"{x.var}.{x.attr}", ""))  # semantics section 4
        valid = np.ones(len(lpos), np.bool_) if c.valid is None else c.valid
        numeric = c.values.astype(np.int64) if c.kind in ("str", "bool") else c.values
        vals, ok = (run_aggregates(held.start, held.length, numeric, valid, x.func) if runs
                    else segment_aggregate(held[0], numeric, valid, x.func))
        if c.kind in ("str", "bool"):
            # min / max (the only aggregates of these kinds): of the codes into the sorted dictionary, which
            # order as the strings do, and of the booleans as FALSE < TRUE; the result is the member's value
            return per_item(Column(c.kind, vals.astype(c.values.dtype), None if ok.all() else ok, c.dictionary))
        return per_item(Column("float" if x.func == "avg" else c.kind, vals, None if ok.all() else ok, (),
                               c.temporal))

    def member(x: E.Attr) -> Column:
        off, lpos = lists[x.var]
        lens = np.diff(off)
        if x.index == "len":
            p = list_ends(off, lpos)[1]
        else:
            k = int(x.index)
            at = np.minimum(off[:-1] + k - 1, max(len(lpos) - 1, 0))
            p = np.where(lens >= k, lpos[at] if len(lpos) else -1, -1)
        return gather(x.attr, p if rows is None else p[rows])

    def virt(x):
        if isinstance(x, E.Agg):
            name = f"{x.func}({x.var}.{x.attr})"
            make = lambda: aggregate(x)  # noqa: E731
        elif isinstance(x, E.Attr):
            listed = x.var in lists
            name = f"{x.var}[{x.index}].{x.attr}" if listed else f"{x.var}.{x.attr}"
            make = (lambda: member(x)) if listed else (lambda: gather(x.attr, single[x.var]))
        else:
            return None
        if name not in cols:
            cols[name] = make()
        return E.Attr("_m", name)

    virtual = [map_expr(c, virt) for c in conds]
    specs = {name: ColumnSpec(name, c.temporal or c.kind, c.valid is not None) for name, c in cols.items()}
    ps = PredicateSet(virtual, specs)
    bound = ps.bind(_VirtualTable(np.zeros(n, np.int64), cols))
    P = np.arange(n, dtype=np.int64)[None, :]
    keep = np.ones(n, dtype=np.bool_)
    for i, c in enumerate(conds):
        app = np.ones(n, dtype=np.bool_)
        for v in E.variables(c):  # a conjunct on an OR branch not taken does not apply
            if v in lists:
                if v in unbound:
                    app &= ~(unbound[v] if rows is None else unbound[v][rows])
            else:
                app &= single[v] >= 0
        if app.any():
            keep[app] &= ps.mask(i, P[:, app], bound)
    return keep


def iteration_constructs(state, c: E.Expr, kvs) -> list[tuple[tuple[str, ...], int]]:
    """The Kleene constructs that conjunct ``c`` (in :attr:`~jitcep.plan.logical.Closure.each` form) reads
    member-wise among the Kleene variables ``kvs``: (their variables it reads, 1 if it reads
    ``v[i-1]``), a group's variables together (they share the iteration, semantics section 4), in the
    order of ``kvs``."""
    vs = E.variables(c)
    read = [v for v in kvs if {member_var(v), prev_var(v)} & vs]
    mates = {v: n.group.vars for n in state.plan.nodes() if isinstance(n, GroupCollect) for v in n.group.vars}
    out: list[tuple[tuple[str, ...], int]] = []
    for v in read:
        if not any(v in ks for ks, _ in out):
            ks = tuple(u for u in read if u in mates.get(v, (v,)))
            out.append((ks, int(any(prev_var(u) in vs for u in ks))))
    return out


def member_combinations(constructs, lists: dict, which: np.ndarray, check, chunk: int | None = None):
    """Every combination of one member (a group's: iteration) per construct of ``constructs`` (from
    :func:`iteration_constructs`; a construct reading ``v[i-1]`` from its second member on, section 4)
    for each item j, which reads list ``which[j]`` of each Kleene variable of ``lists`` (variable -> CSR
    offsets and positions), yielded in chunks: (the item of each combination, {``member_var(v)`` /
    ``prev_var(v)``: the positions}), items in order, the last construct's member varying fastest.  An
    item with an empty list (or one member and ``v[i-1]``) has none: a quantified conjunct holds
    vacuously there.  No construct: one combination per item.

    A chunk is a run of consecutive items holding at most ``chunk`` (default
    ``config.NEG_PAIR_BUDGET``) combinations (or one item holding more), so that what the caller
    builds to test them stays bounded, however far the product of list lengths exceeds the lists.
    ``check(k)`` is called with a chunk's k combinations before they are made: a single item can hold
    more than the memory budget allows (semantics section 12)."""
    chunk = chunk or config.NEG_PAIR_BUDGET
    counts = [np.maximum(np.diff(lists[ks[0]][0])[which] - first, 0) for ks, first in constructs]
    n, wide = np.ones(len(which), np.int64), np.ones(len(which))
    for count in counts:
        n *= count
        wide *= count
    if wide.sum() >= 2.0 ** 62:
        check(1 << 62)  # the int64 products and their sum would wrap: no budget holds that many
    ends = np.cumsum(n)
    lo = 0
    while lo < len(which):
        before = int(ends[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(ends, before + chunk, side="right")), lo + 1)
        k = int(ends[hi - 1]) - before
        if k:
            check(k)
            yield _combinations(constructs, lists, which, counts, n, lo, hi)
        lo = hi


def _combinations(constructs, lists: dict, which: np.ndarray, counts, n: np.ndarray, lo: int, hi: int):
    """:func:`member_combinations`' chunk of items ``lo:hi``."""
    item = np.repeat(np.arange(lo, hi), n[lo:hi])
    t = np.arange(len(item)) - np.repeat(np.cumsum(n[lo:hi]) - n[lo:hi], n[lo:hi])  # the number within its item
    members = {}
    for (ks, first), count in reversed(list(zip(constructs, counts))):
        k = np.maximum(count[item], 1)
        at = lists[ks[0]][0][:-1][which[item]] + first + t % k
        t = t // k
        for v in ks:
            lpos = lists[v][1]
            members[member_var(v)] = lpos[at]
            if first:
                members[prev_var(v)] = lpos[at - 1]
    return item, members
