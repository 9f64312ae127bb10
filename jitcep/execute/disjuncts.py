"""DisjunctUnion: a pattern in DNF (Kolchinsky & Schuster 4), each alternative's records in the pattern's
columns, merged by (partition, end); a variable of a branch not taken unbound (-1, semantics section 5).

Alternatives bind different variables, so they find different matches even over the same events (section
5): nothing is deduplicated.  An array variable an alternative does not bind gets an empty list marked
unbound (``Buffer.unbound``), as a branch not taken leaves it (semantics section 3), unless the alternative
binds it to the empty list (``DisjunctUnion.empty``).  An alternative whose own constants are not all TRUE
does not run: it has no match (section 4).
"""

from __future__ import annotations

import numpy as np

from ..kernels.kleene import gather_lists
from ..matches import canonical_table
from ..plan.operators import list_vars
from .buffer import Buffer


def _none(alt, state) -> Buffer:
    """No records of ``alt``: its variables and lists, in ``state``'s partitions."""
    z = np.zeros(0, np.int64)
    return Buffer(alt.vars, np.zeros((0, len(alt.vars)), np.int64), z, z, np.zeros(state.G + 1, np.int64),
                  z, z, z, z, {v: (np.zeros(1, np.int64), z) for v in list_vars(alt)})


def run(node, state, execute) -> Buffer:
    consts = node.constants or ((),) * len(node.inputs)
    bufs = [execute(alt) if all(state.mask(c, np.zeros((0, 1), np.int64))[0] for c in cs) else _none(alt, state)
            for alt, cs in zip(node.inputs, consts)]
    empty = node.empty or ((),) * len(node.inputs)
    m, k = sum(len(b) for b in bufs), len(node.vars)
    pos = np.full((m, k), -1, dtype=np.int64)
    at = 0
    for b in bufs:
        cols = [node.vars.index(v) for v in b.vars]
        pos[at:at + len(b), cols] = b.pos
        at += len(b)

    def cat(field):
        return np.concatenate([getattr(b, field) for b in bufs])
    if node is state.plan.root:
        # the records are the matches, put in canonical order next (jitcep.execute.executor): no merge by
        # (partition, end) first, and no spans or times, which only the operators above a union read
        lists, unbound = _lists(bufs, empty, None)
        return canonical_table(pos, {v: node.vars.index(v) for v in state.plan.variables},
                               {v: lists[v] for v in state.plan.list_vars}, {v: u for v, u in unbound.items() if u.any()})
    g, end = np.concatenate([b.partitions() for b in bufs]), cat("end")
    o = np.lexsort((end, g))
    tstart, tend = cat("tstart")[o], cat("tend")[o]
    same = all(b.wstart is b.tstart for b in bufs)  # a time window: the kernels test `wstart is tstart`
    lists, unbound = _lists(bufs, empty, o)
    return Buffer(node.vars, pos[o], cat("start")[o], end[o], sum(b.goff for b in bufs), tstart, tend,
                  tstart if same else cat("wstart")[o], tend if same else cat("wend")[o], lists,
                  {v: u for v, u in unbound.items() if u.any()})


def _lists(bufs, empty, o):
    """(lists, unbound) of the alternatives' records ``bufs`` one after another, taken in the order ``o``
    (None: as they come): each array variable's CSR lists, an empty one where an alternative does not bind
    it, marked unbound unless the alternative binds it to the empty list (``empty``)."""
    m = sum(len(b) for b in bufs)
    lists, unbound = {}, {}
    for v in dict.fromkeys(v for b in bufs for v in b.lists):
        length = np.concatenate([np.diff(b.lists[v][0]) if v in b.lists else np.zeros(len(b), np.int64)
                                 for b in bufs])
        members = [b.lists[v][1] for b in bufs if v in b.lists]
        first = np.concatenate([b.lists[v][0][:-1] for b in bufs if v in b.lists])
        base = np.cumsum([0] + [len(x) for x in members[:-1]])  # each alternative's members, one after another
        if o is None:
            # in the order they come, each alternative's lists are its members end to end (CSR), then none
            off = np.zeros(m + 1, np.int64)
            np.cumsum(length, out=off[1:])
            lists[v] = (off, np.concatenate([b.lists[v][1][b.lists[v][0][0]:b.lists[v][0][-1]]
                                             for b in bufs if v in b.lists]))
        else:
            start = np.zeros(m, np.int64)
            have = np.concatenate([np.full(len(b), v in b.lists) for b in bufs])
            start[have] = first + np.repeat(base, [len(b) for b in bufs if v in b.lists])
            lists[v] = gather_lists(np.concatenate(members), start[o], length[o])
        u = np.concatenate([b.unbound.get(v, np.zeros(len(b), np.bool_)) if v in b.lists
                            else np.full(len(b), v not in e) for b, e in zip(bufs, empty)])
        unbound[v] = u if o is None else u[o]
    return lists, unbound
