"""SemiJoinReduce: a SEQ's leaves reduced to the events on a chain, then its joins over the survivors.

The reduction reads the leaves of its chain (their scans, through the
executor, so ``freeze`` and the filters apply first), runs the two passes of
:func:`jitcep.kernels.reduction.chain_reach` and hands each scan its survivors
(:attr:`RunState.reduced <jitcep.execute.state.RunState>`), so the joins below
read only those.  Each survivor's chain bounds (the latest start and the
earliest end of a chain through it) stay in a :class:`Reach` for the joins
marked ``extends`` (:meth:`Reach.extendable`).  In ``explain(analyze=True)`` the
scans show their survivors, and the reduction's own time includes reading them.
"""

from __future__ import annotations

import numpy as np

from .._memo import PerObject
from ..errors import KernelInputError
from ..kernels.join import ORDER_CODE
from ..kernels.reduction import chain_fits, chain_reach
from ..plan.operators import Scan
from .buffer import Buffer, empty_buffer


class Reach:
    """Per variable of ``chain``: the latest start and the earliest end of a chain through each survivor,
    in the window measure, aligned with its reduced leaf, and found by position for other records."""

    def __init__(self, chain: tuple[str, ...]):
        self.chain = chain
        self._leaf: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # (leaf positions, start, end)
        self._sorted: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # the same by position

    def add(self, var: str, pos: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
        self._leaf[var] = (pos, start, end)

    def _bound(self, var: str, which: int, buf, rows: np.ndarray, column) -> np.ndarray:
        """Bound ``which`` (1 start, 2 end) of ``var``'s events in records ``rows`` of ``buf``."""
        leaf = self._leaf[var]
        if buf.start is leaf[0]:  # the reduced leaf itself: its records are its events
            return leaf[which][rows]
        if var not in self._sorted:
            pos, start, end = leaf
            if len(pos) > 1 and not bool(np.all(pos[1:] > pos[:-1])):  # several key partitions
                order = np.argsort(pos, kind="stable")
                pos, start, end = pos[order], start[order], end[order]
            self._sorted[var] = (pos, start, end)
        found = self._sorted[var]
        pos = column(var)
        at = np.minimum(np.searchsorted(found[0], pos), max(len(found[0]) - 1, 0))
        if len(pos) and (not len(found[0]) or not np.array_equal(found[0][at], pos)):
            # a record's event that is not a survivor of its reduced leaf: the plan joined something the
            # reduction did not read, and a neighbour's bound would be wrong (never silently)
            raise KernelInputError(f"semi-join reduction: an event of {var} in a join is not in its reduced leaf")
        return found[which][at]

    def extendable(self, L, R, li: np.ndarray, ri: np.ndarray, column, W) -> np.ndarray:
        """Which pairs (``li`` of ``L``, ``ri`` of ``R``: records binding a run of the chain between them;
        ``column(v)``: their events of ``v``) extend to a chain: the latest start through the run's first
        event and the earliest end through its last fit the window (:mod:`jitcep.kernels.reduction`)."""
        vars_ = L.vars + R.vars
        first, last = min(vars_, key=self.chain.index), max(vars_, key=self.chain.index)
        start = self._bound(first, 1, *((L, li) if first in L.vars else (R, ri)), column)
        end = self._bound(last, 2, *((L, li) if last in L.vars else (R, ri)), column)
        ok = np.ones(len(start), np.bool_)
        return chain_fits(start, ok, end, ok, W)


def run(node, state, execute) -> Buffer:
    scans = _scans_by_var(node)
    for s in scans.values():  # read afresh: another reduction of the plan (a DNF alternative) may share a scan
        state.reduced.pop(id(s), None)
    leaves = []
    for v in node.chain:  # in chain order, none after an empty one (no match; as a join skips its right input)
        leaves.append(execute(scans[v]))
        if not len(leaves[-1]):
            return empty_buffer(node.vars, state.G)
    reach = chain_reach([(b.start, b.tstart, b.goff) for b in leaves], [b.wstart for b in leaves],
                        ORDER_CODE[state.options.order], state.W, state.threads)
    state.reach = Reach(node.chain)
    for v, buf, (keep, start, end) in zip(node.chain, leaves, reach):
        idx = np.flatnonzero(keep)
        if not len(idx):
            return empty_buffer(node.vars, state.G)
        state.reduced[id(scans[v])] = buf if len(idx) == len(buf) else buf.keep(idx)
        state.reach.add(v, state.reduced[id(scans[v])].start, start[idx], end[idx])
    return execute(node.input)


def _scan_per_var(node) -> dict:
    """Each variable's scan under the reduction ``node``: a function of the plan, kept per node so that a
    rerun does not walk the subtree again."""
    return {n.var: n for n in _scans(node.input)}


_scans_by_var = PerObject(_scan_per_var)


def _scans(node):
    if isinstance(node, Scan):
        yield node
    for c in node.children:
        yield from _scans(c)
