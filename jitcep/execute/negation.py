"""NegationFilter: ZStream's NSEQ (4.4.2), the records no event of a negated variable kills (semantics section 7).

The negated variable is a leaf of its type and filters; for each record the
kernel finds the section 7 range between the last bound variable before the
negation and the first bound one after it (two searches per record,
:mod:`jitcep.kernels.negation`), and a record dies when some event in it
passes every condition that mentions the negated variable.  Over records
with Kleene lists, a closure next to the negation bounds its range by its
last member (closure before it) or its first (after it); an empty list
bounds nothing, so the next variable does.  A condition reading a closure
member-wise holds when it holds for every member, one also reading the whole
list or ``b[i-1]`` likewise, tested per (record, candidate, member) triple
(section 4).
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..codegen.negation_where import negation_where
from ..kernels.negation import candidate_rows, killed_unconditionally, negation_ranges
from ..kernels.kleene import gather_lists, outside_lists
from ..kernels.negation_filtered import killed_where
from ..pattern import expr as E
from ..plan.kleene_refs import member_var, prev_var
from .buffer import Buffer
from .lists import iteration_constructs, list_mask, member_combinations
from .scan import leaf


def run(node, state, execute) -> Buffer:
    buf = execute(node.input)
    if not len(buf):
        return buf
    killed = _killed(state, node.neg, buf.list_bounds(node.neg.before, node.neg.after) if buf.lists else buf)
    if not killed.any():
        return buf
    return buf.keep(np.flatnonzero(~killed))


def _killed(state, neg, buf: Buffer) -> np.ndarray:
    """Which records of ``buf`` (not empty) some event of negated variable ``neg`` kills.

    A negation without conditions over records without Kleene lists is
    decided by the kernel; one with plain conditions over at least
    ``config.NEG_WHERE_MIN_RECORDS`` records without lists by a function
    generated for it, which tests them on each candidate as it walks the
    record's range (:mod:`jitcep.kernels.negation_filtered`); otherwise the
    pairs (record, candidate) are tested with the generated predicates, in
    rounds (:func:`_rounds`).  Either way a record dies with its first
    candidate passing every condition that applies (a condition whose other
    variables are unbound, an OR branch not taken, does not apply: section 4).
    A member of the record's lists is a positive event of the match, never a
    candidate (section 7, condition 1): a closure in the negation's AND, or a
    list's middle members tied in time with its neighbours under
    ``nondecreasing_ts``, may lie in its range.
    """
    m = len(buf)
    events = leaf(state, neg.var, neg.types, neg.filter)
    cand, cgoff = events.start, events.goff
    bcols = [buf.vars.index(v) for v in neg.before if v in buf.vars]
    acols = [buf.vars.index(v) for v in neg.after if v in buf.vars]
    lo, hi = negation_ranges(buf.as_tuple(), (cand, cgoff), state.table.ts, state.wt, state.W,
                             state.options.order, bcols, acols, neg.in_conj)
    lists = buf.lists
    if not neg.conds and not neg.list_conds and not neg.each and not lists:
        return killed_unconditionally(buf.pos, lo, hi, cand)
    if not (lists or neg.list_conds or neg.each) and m >= config.NEG_WHERE_MIN_RECORDS:
        # plain conditions over many records: tested as each record's candidates are walked
        fn = negation_where(state.preds, [state.pid[id(c)] for c in neg.conds], neg.var, buf.vars)
        return killed_where(fn, buf.pos, lo, hi, cand, state.bound)
    # conditions reading a closure member-wise hold for every member (section 4): tested per member
    per_member = {v: [c for c in neg.conds if v in E.variables(c)] for v in lists}
    plain = [c for c in neg.conds if not E.variables(c) & lists.keys()]
    killed = np.zeros(m, dtype=np.bool_)
    taken = buf.ascending_lists()
    # the positions the plain conditions read, one row per variable (sorted: a conjunct's rows are then
    # a slice when its variables are consecutive), written as the pairs are found
    names = sorted({neg.var}.union(*(E.variables(c) for c in plain)))
    cols = [-1 if v == neg.var else buf.vars.index(v) for v in names]
    for rec, P in _rounds(buf.pos, lo, hi, cand, killed, cols):
        for off, lpos in taken:
            keep = outside_lists(rec, P[names.index(neg.var)], off, lpos)
            rec, P = rec[keep], P[:, keep]
        ev = P[names.index(neg.var)]
        ok = _plain_pass(state, plain, names, P)
        for v, conds in per_member.items():
            if conds:
                ok &= _every_member(state, buf, conds, v, neg.var, rec, ev, ok)
        for c in neg.list_conds:
            # one closure's list, or a group's lists; an OR branch not taken leaves them unbound, and a
            # condition on them does not apply (section 4)
            kvs = E.variables(c) & lists.keys()
            idx = np.flatnonzero(ok & _bound(buf, kvs, rec))
            single = {u: buf.pos[rec[idx], i] for i, u in enumerate(buf.vars) if u not in lists}
            single[neg.var] = ev[idx]
            ok[idx] = list_mask(state, (c,), single, {v: lists[v] for v in kvs}, rows=rec[idx])
        for c in neg.each:
            ok &= _every_member_with_list(state, buf, c, neg.var, rec, ev, ok)
        killed[rec[ok]] = True
    return killed


def _plain_pass(state, conds, names, P: np.ndarray) -> np.ndarray:
    """Which pairs (columns of ``P``, whose rows bind the variables ``names``) pass every conjunct of
    ``conds`` (:meth:`~jitcep.execute.state.RunState.conjuncts_pass`); a conjunct's rows are a slice of
    ``P`` when its variables are consecutive in ``names`` (sorted), else gathered."""
    def rows(vs, idx):
        at = [names.index(v) for v in vs]
        sub = P[at[0]:at[-1] + 1] if at[-1] - at[0] == len(at) - 1 else P[at]
        return sub if idx is None else sub[:, idx]

    return state.conjuncts_pass(conds, P.shape[1], rows)


def _rounds(pos, lo, hi, cand, killed, cols):
    """The (record, candidate) pairs of the ranges [lo, hi), in rounds: the first candidate of each record
    in range, then the next 2, 4, 8, ... of the records ``killed`` has not marked meanwhile (the caller
    marks them between rounds), each round in chunks of about ``config.NEG_PAIR_BUDGET`` pairs; each
    chunk as (records, positions: row t the candidate where ``cols[t]`` is negative, else the
    record's column ``cols[t]``, :func:`~jitcep.kernels.negation.candidate_rows`).

    A record dies with its first passing pair (section 7): where most records die at their first
    candidates, as where a negated type is frequent and its conditions loose, the pairs after them are
    never built or tested; where few die, every pair is tested once, as in a single round, in at most
    log2(longest range) + 1 rounds.
    """
    at, width = lo, 1
    while True:
        upto = np.minimum(hi, at + width)
        if not (upto > at).any():
            return
        r = 0
        while r < len(at):
            rec, P, r = candidate_rows(pos, at, upto, cand, killed, r, config.NEG_PAIR_BUDGET, cols)
            yield rec, P
        at = np.where(killed, hi, upto)  # decided: no more rounds (one pass, not a masked gather and scatter)
        width *= 2


def _bound(buf: Buffer, kvs, rec) -> np.ndarray:
    """Whether the lists of Kleene variables ``kvs`` are bound in records ``rec`` (not of an OR branch not
    taken)."""
    out = np.ones(len(rec), dtype=np.bool_)
    for v in kvs:
        if v in buf.unbound:
            out &= ~buf.unbound[v][rec]
    return out


def _every_member_with_list(state, buf: Buffer, c, nv: str, rec, ev, ok) -> np.ndarray:
    """Which pairs (record ``rec[i]``, candidate ``ev[i]``) not already failed (``ok``) pass condition ``c`` of
    ``neg.each`` for every member i of the record's list (a group's: every iteration i, its variables' lists
    aligned; with ``b[i-1]``, every i >= 2; of several constructs, every combination of one member each; an
    empty list, or a closure of an OR branch not taken, passes): each (pair, combination) is an item of
    :func:`~jitcep.execute.lists.list_mask`."""
    constructs = iteration_constructs(state, c, buf.lists)
    kvs = [v for ks, _ in constructs for v in ks]
    idx = np.flatnonzero(ok & _bound(buf, [v for v in buf.lists if v in E.variables(c)] + kvs, rec))
    read = {v: buf.lists[v] for v in buf.lists if {v, member_var(v), prev_var(v)} & E.variables(c)}
    out = np.ones(len(rec), dtype=np.bool_)
    for item, members in member_combinations(constructs, buf.lists, rec[idx], lambda k: state.memory.check(
            8 * (len(buf.vars) + 3 + 2 * len(kvs)) * k,
            f"the (match, negated event, member) triples of {', '.join(kvs)}", buf)):
        pair = idx[item]
        single = {u: buf.pos[rec[pair], i] for i, u in enumerate(buf.vars)}
        single[nv] = ev[pair]
        out[pair[~list_mask(state, (c,), {**single, **members}, read, rows=rec[pair])]] = False
    return out


def _every_member(state, buf: Buffer, conds, kv: str, nv: str, rec, ev, ok) -> np.ndarray:
    """Which pairs (record ``rec[i]``, candidate ``ev[i]``) not already failed (``ok``) pass ``conds``
    with ``kv`` bound to every member of the record's list in turn (an empty list: vacuously)."""
    off, lpos = buf.lists[kv]
    idx = np.flatnonzero(ok)
    counts = np.diff(off)[rec[idx]]
    _, members = gather_lists(lpos, off[:-1][rec[idx]], counts)
    pair = np.repeat(idx, counts)
    state.memory.check(24 * len(pair), f"the (match, negated event, member) triples of {kv!r}", buf)
    fails = ~state.pairs_pass(buf.pos, buf.vars, conds, rec[pair], {nv: ev[pair], kv: members})
    out = np.ones(len(rec), dtype=np.bool_)
    out[pair[fails]] = False
    return out
