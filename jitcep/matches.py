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


@dataclass(eq=False)
class MatchTable:
    """Matches of one pattern over one event table."""

    n: int
    single: dict[str, np.ndarray] = field(default_factory=dict)
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    list_unbound: dict[str, np.ndarray] = field(default_factory=dict)

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
        lists = {}
        for v, (off, pos) in self.lists.items():
            starts = off[idx]
            lens = off[idx + 1] - starts
            new_off = np.zeros(len(idx) + 1, dtype=np.int64)
            np.cumsum(lens, out=new_off[1:])
            # element j of output list k is pos[starts[k] + (j - new_off[k])]: one gather, no Python loop
            gather = np.arange(new_off[-1], dtype=np.int64) - np.repeat(new_off[:-1] - starts, lens)
            lists[v] = (new_off, pos[gather] if len(idx) else np.zeros(0, np.int64))
        unbound = {v: m[idx] for v, m in self.list_unbound.items()}
        return MatchTable(len(idx), single, lists, unbound)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last position of each match (over all bound events)."""
        lo = np.full(self.n, np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.full(self.n, -1, dtype=np.int64)
        for col in self.single.values():
            bound = col >= 0
            lo = np.where(bound, np.minimum(lo, col), lo)
            hi = np.where(bound, np.maximum(hi, col), hi)
        for off, pos in self.lists.values():
            nonempty = off[1:] > off[:-1]
            if not nonempty.any():
                continue
            # reduceat over the starts of the non-empty lists only: each slice then ends where the next
            # non-empty list begins (empty lists in between have no elements); cut pos at off[-1] so
            # the last slice stops there too
            starts = off[:-1][nonempty]
            seg = pos[:off[-1]]
            lo[nonempty] = np.minimum(lo[nonempty], np.minimum.reduceat(seg, starts))
            hi[nonempty] = np.maximum(hi[nonempty], np.maximum.reduceat(seg, starts))
        return lo, hi

    def canonical(self) -> "MatchTable":
        """Sorted by (last position, first position, then each variable's positions in name order).

        End order follows ZStream section 4.2 (buffers sorted by end time); the
        rest only makes the order total, so engines agree row for row.
        """
        if self.n <= 1:
            return self
        return self.take(self.canonical_order())

    def canonical_order(self) -> np.ndarray:
        """The permutation :meth:`canonical` applies (the output policies scan matches in it, semantics 9)."""
        if self.n <= 1:
            return np.arange(self.n, dtype=np.int64)
        lo, hi = self.bounds()
        keys: list[np.ndarray] = []
        for v in sorted(self.lists, reverse=True):
            off, pos = self.lists[v]
            # lists compare by length then by a hash of their content (equal lists, equal keys)
            keys += [_list_hashes(off, pos), off[1:] - off[:-1]]
            if v in self.list_unbound:
                keys.append(self.list_unbound[v].astype(np.int64))
        for v in sorted(self.single, reverse=True):
            keys.append(self.single[v])
        keys += [lo, hi]
        return np.lexsort(_paired(keys))


_PAIRABLE = (-1, 2**31 - 2)  # positions and -1 (unbound): two of them fit one int64, order kept


def _paired(keys: list[np.ndarray]) -> list[np.ndarray]:
    """``np.lexsort`` keys (last most significant) with neighbours merged into one int64 where both fit.

    Key (a, b), a more significant: ``(a + 1) << 32 | (b + 1)`` orders as the
    pair does when both lie in [-1, 2**31 - 2]; lexsort's cost grows with the
    number of keys (3.1 M matches of three variables: five keys -> three).
    """
    def fits(k):
        return len(k) == 0 or (int(k.min()) >= _PAIRABLE[0] and int(k.max()) <= _PAIRABLE[1])

    out: list[np.ndarray] = []
    i = len(keys) - 1
    while i >= 0:  # from the most significant key down
        a = keys[i]
        if i > 0 and fits(a) and fits(keys[i - 1]):
            out.append(((a + 1) << 32) | (keys[i - 1] + 1))
            i -= 2
        else:
            out.append(a)
            i -= 1
    return out[::-1]


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _list_hashes(off: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each CSR list's content (int64; 0 for an empty list), vectorised.

    Each member is mixed with its index in the list (splitmix64 finaliser) and
    the mixes of a list are summed, so the hash depends on order; canonical
    order only needs equal lists to hash equal and different ones to differ
    almost always, not any particular order between them.
    """
    n = len(off) - 1
    out = np.zeros(n, dtype=np.uint64)
    lens = off[1:] - off[:-1]
    nonempty = lens > 0
    if not nonempty.any():
        return out.view(np.int64)
    seg = pos[:off[-1]].astype(np.uint64)
    index = (np.arange(len(seg), dtype=np.int64) - np.repeat(off[:-1], lens)).astype(np.uint64)
    x = seg * _MIX[0] + index
    x ^= x >> np.uint64(30)
    x *= _MIX[1]
    x ^= x >> np.uint64(27)
    x *= _MIX[2]
    x ^= x >> np.uint64(31)
    out[nonempty] = np.add.reduceat(x, off[:-1][nonempty])
    return out.view(np.int64)
