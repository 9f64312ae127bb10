"""NegationFilter: ZStream's NSEQ (4.4.2), the records no event of a negated variable kills (semantics section 7).

The negated variable is a leaf of its type and filters; for each record the
kernel finds the section 7 range between the last bound variable before the
negation and the first bound one after it (two binary searches per record,
:mod:`jitcep.kernels.negation`), and a record dies when some event in it
passes every condition that mentions the negated variable.  Over records
with Kleene lists, a closure next to the negation bounds its range by its
last member (closure before it) or its first (after it); an empty list
bounds nothing, so the next variable does.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..kernels.negation import candidate_pairs, killed_unconditionally, negation_ranges
from .buffer import Buffer, list_ends
from .scan import leaf


def run(node, state, execute) -> Buffer:
    buf = execute(node.input)
    if not len(buf):
        return buf
    killed = _killed(state, node.neg, _bounded(buf, node.neg) if buf.lists else buf)
    if not killed.any():
        return buf
    return buf.keep(np.flatnonzero(~killed))


def _bounded(buf: Buffer, neg) -> Buffer:
    """``buf`` with a column per array variable holding the member that bounds ``neg``'s range (-1: none)."""
    cols, names = [buf.pos], buf.vars
    for v, (off, lpos) in buf.lists.items():
        first, last = list_ends(off, lpos)
        bound = last if v in neg.before else first if v in neg.after else np.full(len(buf), -1, np.int64)
        cols.append(bound[:, None])
        names = names + (v,)
    return Buffer(names, np.concatenate(cols, axis=1), buf.start, buf.end, buf.goff, buf.tstart, buf.tend,
                  buf.wstart, buf.wend)


def _killed(state, neg, buf: Buffer) -> np.ndarray:
    """Which records of ``buf`` (not empty) some event of negated variable ``neg`` kills.

    A negation without conditions is decided by the kernel; otherwise the
    pairs (record, candidate) are tested with the generated predicates, a
    chunk at a time, and a record dies with its first pair passing every
    condition that applies (a condition whose other variables are unbound, an
    OR branch not taken, does not apply: section 4).
    """
    m = len(buf)
    events = leaf(state, neg.var, neg.types, neg.filter)
    cand, cgoff = events.start, events.goff
    bcols = [buf.vars.index(v) for v in neg.before if v in buf.vars]
    acols = [buf.vars.index(v) for v in neg.after if v in buf.vars]
    lo, hi = negation_ranges(buf.as_tuple(), (cand, cgoff), state.table.ts, state.wt, state.W,
                             state.options.order, bcols, acols, neg.in_conj)
    if not neg.conds:
        return killed_unconditionally(buf.pos, lo, hi, cand)
    killed = np.zeros(m, dtype=np.bool_)
    r = 0
    while r < m:
        rec, ev, r = candidate_pairs(buf.pos, lo, hi, cand, killed, r, config.NEG_PAIR_BUDGET)
        killed[rec[state.pairs_pass(buf, neg.conds, rec, {neg.var: ev})]] = True
    return killed
