"""ListFilter: a closure's (or group's) conjuncts with a variable joined after its collection, on the carried lists.

The joins above a closure's collection copy each record's list (CSR offsets
and members, :mod:`jitcep.execute.join`), so on the lowest join binding a
conjunct's variables each record holds the list and those variables' events
(Kolchinsky & Schuster 4: ``T'``'s predicate with a later unit is tested
where that unit joins; :mod:`jitcep.plan.rules.kleene_split` says which
conjuncts may wait so).  A member-wise conjunct is tested on every (record,
member) pair by the generated predicates, an iterative one on every pair of
consecutive members, and a record keeps when all of its list's verdicts hold
(:func:`~jitcep.kernels.kleene.every_passes`; an empty list vacuously,
semantics section 4); list conjuncts are read on each list once
(:func:`~jitcep.execute.lists.list_mask`), conjuncts reading a member with
the whole list for every member (:func:`~jitcep.execute.kleene.every_member`),
as the collection would have.  A Kleene group's lists are aligned by
iteration, one per group variable: its member-wise and iterative conjuncts
are tested on every iteration (pair of consecutive iterations), reading the
iteration's events by the group's variables.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..kernels.kleene import every_passes
from ..plan.kleene_refs import prev_var
from .buffer import Buffer
from .kleene import every_member
from .lists import list_mask


def run(node, state, execute) -> Buffer:
    buf = execute(node.input)
    kvs = node.kleene_vars
    keep = np.ones(len(buf), dtype=np.bool_)
    for conds, first in ((node.member, 0), (node.prev, 1)):
        if conds and len(buf):
            keep &= _every_member_passes(state, buf, kvs, conds, first)
    idx = np.flatnonzero(keep)
    if node.lists and len(idx):
        single = {v: buf.pos[idx, i] for i, v in enumerate(buf.vars)}
        # per record, as the lists: list_mask reads both at rows idx (a closure in an OR branch not taken is
        # unbound there, and its conjuncts do not apply)
        idx = idx[list_mask(state, node.lists, single, {v: buf.lists[v] for v in kvs}, rows=idx,
                            unbound=buf.unbound)]
    if node.each and len(idx):
        idx = idx[every_member(state, node.each, buf, idx, {})]
    if len(idx) == len(buf):
        return buf
    # the records stay in (partition, end) order: each partition's offset is where its first kept one lies
    return buf.take(idx, np.searchsorted(idx, buf.goff))


def _every_member_passes(state, buf: Buffer, kvs: tuple[str, ...], conds, first: int) -> np.ndarray:
    """Which records' lists of ``kvs`` (a closure's variable, or a group's, aligned by iteration) pass the
    conjuncts ``conds`` for every member (``first`` 0: each of ``kvs`` read as the member's event) or
    every member from the second on with the one before it (``first`` 1: as its predecessor's, by
    :func:`prev_var`), tested in chunks of members."""
    off = buf.lists[kvs[0]][0]
    lpos = {v: buf.lists[v][1] for v in kvs}
    n = len(lpos[kvs[0]])
    rec = np.repeat(np.arange(len(buf), dtype=np.int64), np.diff(off))
    ok = np.ones(n, dtype=np.bool_)
    step = config.NEG_PAIR_BUDGET
    for lo in range(0, n, step):
        part = np.arange(lo, min(lo + step, n), dtype=np.int64)
        if first:  # a list's first member has no predecessor: its verdict is never read
            part = part[part > off[rec[part]]]
        # the (record, member) pairs' positions, one row per variable a conjunct reads
        state.memory.check(8 * (len(buf.vars) + 2 + len(kvs)) * len(part),
                           f"the members of Kleene variable {', '.join(kvs)}", buf, rec, ok)
        extra = {v: p[part] for v, p in lpos.items()}
        if first:
            extra.update({prev_var(v): p[part - 1] for v, p in lpos.items()})
        ok[part] = state.pairs_pass(buf.pos, buf.vars, conds, rec[part], extra)
    return every_passes(off, ok, first)
