"""Match tables: what every engine produces and :mod:`jitcep.output` turns into DataFrames.

A match table holds, per variable, event *positions* in the event table
(``EventTable.ts[p]``; ``EventTable.row[p]`` is the input row number):

- a single variable: one int64 column, ``-1`` where the variable is unbound
  (the branch of an OR that the match did not take);
- a list variable (Kleene array variable, or a variable inside a Kleene
  group): CSR form, ``offsets`` (int64, n+1) into ``positions`` (int64).
  For a variable inside a Kleene group, member j of every variable of the group
  belongs to iteration j of the group.  ``list_unbound[v]`` (bool, n), when
  present, is True where list variable v is unbound (an OR branch not taken),
  as opposed to bound to an empty list (``T* v[]`` with no member); a variable
  absent from ``list_unbound`` is bound in every match.

Matches are kept in canonical order (:func:`MatchTable.canonical`) so that two
engines that find the same matches produce identical tables and DataFrames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernels.alloc import empty
from .kernels.gather import take
from .kernels.closure_order import lists_in_end_order
from .kernels.list_columns import list_bounds, list_key, take_lists
from .kernels.order import canonical_order, gather_columns



def name_order(names) -> list[int]:
    """The match table's rows are in the variables' order, so that the output finds them end to end
    (:attr:`MatchTable.block`); the canonical order compares them by name (docs/semantics.md section 11):
    the rows' indices in name order."""
    return sorted(range(len(names)), key=names.__getitem__)

@dataclass(eq=False)
class MatchTable:
    """Matches of one pattern over one event table."""

    n: int
    single: dict[str, np.ndarray] = field(default_factory=dict)
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    list_unbound: dict[str, np.ndarray] = field(default_factory=dict)
    # the single columns as the rows of one C-ordered matrix, in ``single``'s order, when they are (a
    # final join's, jitcep.kernels.order.canonical_pairs / jitcep.kernels.final_join.seq_join_rows): the
    # output reads them end to end, uncopied
    block: np.ndarray | None = None
    # no single column holds an unbound (negative) position, as the kernel writing them saw: the output
    # need not look (False: not known)
    bound: bool = False
    # the ``ts`` of ``block``'s positions, as the kernel writing it wrote them beside it (the output's
    # time fields, not gathered again), or None
    times: np.ndarray | None = None

    @staticmethod
    def from_bindings(bindings: list[dict], single_vars, list_vars) -> "MatchTable":
        """Build from Python dicts ``{var: pos | None | tuple[pos, ...]}`` (the reference engine's form)."""
        n = len(bindings)
        single = {v: np.fromiter((-1 if b.get(v) is None else b[v] for b in bindings),
                                 dtype=np.int64, count=n) for v in single_vars}
        lists = {}
        unbound = {}
        for v in list_vars:
            mask = np.fromiter((b.get(v) is None for b in bindings), dtype=bool, count=n)
            if mask.any():
                unbound[v] = mask
            lens = np.fromiter((len(b.get(v) or ()) for b in bindings), dtype=np.int64, count=n)
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lens, out=offsets[1:])
            pos = np.fromiter((p for b in bindings for p in (b.get(v) or ())), dtype=np.int64,
                              count=int(offsets[-1]))
            lists[v] = (offsets, pos)
        return MatchTable(n, single, lists, unbound)

    def to_bindings(self) -> list[dict]:
        """Inverse of :meth:`from_bindings` (for tests and small results)."""
        out = []
        for i in range(self.n):
            b = {}
            for v, col in self.single.items():
                b[v] = None if col[i] < 0 else int(col[i])
            for v, (off, pos) in self.lists.items():
                mask = self.list_unbound.get(v)
                b[v] = None if mask is not None and mask[i] else tuple(int(p) for p in pos[off[i]:off[i + 1]])
            out.append(b)
        return out

    def take(self, idx: np.ndarray) -> "MatchTable":
        """The matches at ``idx``, in that order."""
        idx = np.asarray(idx, dtype=np.int64)
        single = {v: c[idx] for v, c in self.single.items()}
        lists = {v: take_lists(off, pos, idx) for v, (off, pos) in self.lists.items()}
        unbound = {v: m[idx] for v, m in self.list_unbound.items()}
        return MatchTable(len(idx), single, lists, unbound)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last position of each match (over all bound events)."""
        lo, hi = _list_bounds(self.n, self.lists)
        for col in self.single.values():
            bound = col >= 0
            lo = np.where(bound, np.minimum(lo, col), lo)
            hi = np.where(bound, np.maximum(hi, col), hi)
        return lo, hi

    def canonical(self) -> "MatchTable":
        """Sorted by (last position, first position, each single variable's position in name order, then
        the list variables' lists in name order, each lexicographically: semantics section 11).

        End order follows ZStream section 4.2 (buffers sorted by end time); the
        rest only makes the order total, so engines agree row for row.
        """
        if self.n <= 1:
            return self
        column = {v: j for j, v in enumerate(sorted(self.single))}  # _matrix's columns are in name order
        return canonical_table(self._matrix(), {v: column[v] for v in self.single}, self.lists,
                               self.list_unbound)

    def canonical_order(self) -> np.ndarray:
        """The permutation :meth:`canonical` applies (the output policies scan matches in it, semantics 9)."""
        perm = None
        if self.n > 1:
            perm = canonical_order(self._matrix(), np.arange(len(self.single)),
                                   *list_keys(self.n, self.lists, self.list_unbound))
        return np.arange(self.n, dtype=np.int64) if perm is None else perm

    def _matrix(self) -> np.ndarray:
        """The single variables' columns side by side, in name order."""
        names = sorted(self.single)
        if not names:
            return np.zeros((self.n, 0), np.int64)
        return np.stack([self.single[v] for v in names], axis=1).astype(np.int64, copy=False)


def canonical_table(P: np.ndarray, where: dict[str, int], lists=None, list_unbound=None,
                    rows: np.ndarray | None = None, tail_ascending=(), by_record: bool = False) -> MatchTable:
    """The match table of records ``P`` ((n, k) positions, -1 unbound; single variable v in column
    ``where[v]``, other columns ignored), or of the records ``P[rows]`` (read in place), and their
    ``lists`` / ``list_unbound`` (as :class:`MatchTable`'s), in canonical order.

    The order is :func:`jitcep.kernels.order.canonical_order`'s (no sort when the
    records come in end order already, as one partition's join output does),
    and each single column is gathered once, in that order, from ``P``.
    ``tail_ascending``: list variables whose lists' members after the first ascend (:func:`list_keys`);
    ``by_record``: the matches of one record (equal ``rows``) come in order of their lists
    (:func:`~jitcep.kernels.order.canonical_order`'s).  A closure's lists at the root are written
    straight into order by :func:`closure_table` where it can.
    """
    lists, list_unbound = lists or {}, list_unbound or {}
    n = P.shape[0] if rows is None else len(rows)
    names = sorted(where)
    cols = np.array([where[v] for v in names], dtype=np.int64)
    perm = canonical_order(P, cols, *list_keys(n, lists, list_unbound, tail_ascending), rows=rows,
                           by_record=by_record) \
        if n > 1 else None
    columns = ()
    if len(cols):  # no single variable: nothing to gather, so no index of the rows
        at = perm
        if rows is not None:  # the order's rows of P: one index, no copy of the rows gathered again
            at = rows if perm is None else take(rows, perm)
        columns = gather_columns(P, cols, at)
    gathered = dict(zip(names, columns))
    single = {v: gathered[v] for v in where}  # the caller's variable order (the order key is by name)
    table = MatchTable(n, {}, lists, list_unbound)
    if perm is not None and (lists or list_unbound):
        table = table.take(perm)
    table.single = single
    return table


def closure_table(P: np.ndarray, where: dict[str, int], made: str, lists: tuple[np.ndarray, np.ndarray],
                  held: dict, rows: np.ndarray) -> MatchTable | None:
    """The match table of a closure's lists at the plan's root, in canonical order, written straight into
    it (:func:`~jitcep.kernels.closure_order.lists_in_end_order`: no permutation, no gather through it), or
    None where that kernel declines (:func:`canonical_table` orders those).

    List j of ``made`` (``lists``, CSR) belongs to record ``rows[j]`` of ``P`` (single variable v in
    column ``where[v]``); ``held``: the other list variables, bound in every record, one CSR list per
    record of ``P`` (closures collected below the root), which each of the record's matches repeats.
    The caller vouches for what a closure's lists make true (ascending ``rows``, each record's lists in
    section 11's order, members ascending after the first: ``execute.kleene.CHECK_ORDER`` checks them).
    """
    n = len(rows)
    names = sorted(where)
    cols = np.array([where[v] for v in names], dtype=np.int64)
    before = [v for v in sorted(held) if v < made]
    after = [v for v in sorted(held) if v > made]
    got = lists_in_end_order(P, rows, cols, *lists, [held[v] for v in before], [held[v] for v in after])
    if got is None:
        return None
    single, new_off, members, copies = got
    gathered = dict(zip(names, single))
    return MatchTable(n, {u: gathered[u] for u in where},
                      {made: (new_off, members), **dict(zip([*before, *after], copies))}, {})


def list_keys(n: int, lists, list_unbound, tail_ascending=()):
    """(koff, kseq, first, last) of :func:`~jitcep.kernels.order.canonical_order` for list variables: each
    match's list key (:func:`~jitcep.kernels.list_columns.list_key`'s parts of the list variables in name
    order, end to end: section 11's order of the lists is the keys' lexicographic order); the first / last
    member over all the lists.  (None, None, None, None) without lists.

    One list variable bound in every match is its own key, read in place: its
    lists compared lexicographically are section 11's order, and no part
    follows it that needs a separator; when it is one of ``tail_ascending``
    (its lists' members after the first ascend, as a closure's do) its bounds
    are read off each list's ends, not its every member.
    """
    if not lists:
        return None, None, None, None
    names = sorted(lists)
    lo, hi = _no_bounds(n)
    if len(names) == 1 and names[0] not in list_unbound:
        off, pos = lists[names[0]]
        list_bounds(off, pos, lo, hi, tail_ascending=names[0] in tail_ascending)
        return off, pos, lo, hi
    size = np.full(n, len(names), np.int64)  # a separator per variable
    for v in names:
        off = lists[v][0]
        size += off[1:] - off[:-1]
        if v in list_unbound:
            size += 1
    koff = empty(n + 1, np.int64)
    koff[0] = 0
    np.cumsum(size, out=koff[1:])
    kseq = empty(int(koff[-1]), np.int64)
    at = koff[:-1].copy()
    for v in names:
        list_key(*lists[v], list_unbound.get(v), at, kseq, lo, hi)
    return koff, kseq, lo, hi


def lists_ascend(off: np.ndarray, pos: np.ndarray) -> bool:
    """Whether each CSR list (``off`` into ``pos``) holds its members in ascending position order.

    A closure's lists do (members in position order, semantics section 6); a
    Kleene group over AND lists its iterations in canonical order, which may
    not.  Where they do, a list's first and last members are its smallest
    and largest and it needs no sort: one vectorised pass instead of a
    ``reduceat`` or a ``lexsort`` over every member (the lexsort took 1.8 s of
    a 5.4 s run with 2.2 million lists, perf/notes/kleene.md).
    """
    a, b = int(off[0]), int(off[-1])
    seg = pos[a:b]
    down = seg[1:] < seg[:-1]
    starts = off[1:-1]
    starts = starts[(starts > a) & (starts < b)] - a - 1  # the pair (last of a list, first of the next)
    down[starts] = False
    return not down.any()


def _no_bounds(n: int) -> tuple[np.ndarray, np.ndarray]:
    """First and last member of n matches with no list yet (int64 max and -1), to be lowered / raised."""
    lo, hi = empty(n, np.int64), empty(n, np.int64)  # the run's pool: np.full's are fresh pages
    lo.fill(np.iinfo(np.int64).max)
    hi.fill(-1)
    return lo, hi


def _list_bounds(n: int, lists) -> tuple[np.ndarray, np.ndarray]:
    """First and last member of each match over its lists (int64 max and -1 where they have none)."""
    lo, hi = _no_bounds(n)
    for off, pos in lists.values():
        list_bounds(off, pos, lo, hi)
    return lo, hi
