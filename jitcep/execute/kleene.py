"""KleeneCollect: ZStream's KSEQ (4.4.5), the closure's lists for every record of its input (semantics section 6).

The members of a record are the qualifying events of the closure's leaf in
its range (found like a negation's range, two binary searches per record; a
closure collected before counts by its last / first member), other than the
record's events and other lists' members (section 3), that pass the
member-wise conjuncts mentioning other variables, tested on (record, event)
pairs by the generated predicates.  The bounds then make the lists: under
``kleene="maximal"`` (6.2) the one list, or ZStream's sliding runs for
``{n,m}``; under ``kleene="all"`` (6.1) every subsequence of the members
whose length they allow, whose members fit the window pairwise (a closure
inside AND has no neighbour to do it) and whose consecutive members pass the
iterative conjuncts (SASE+ section 2), at most ``max_kleene`` per record.  A
closure in an OR branch makes lists for the records that took its branch;
the others keep one empty list, marked unbound.
List conjuncts (aggregates, ``v[k]``, ``v[v.LEN]``) are evaluated once per
list (:mod:`jitcep.execute.lists`; under ``runs``, on the maximal lists as
runs of the members, before they are gathered), those also reading a member (``v[i]``,
maybe ``v[i-1]``) once per member of each list, a list keeping only if every
member passes (section 4).  Each (record, list) is one output
record, spanning the record and its members, in (partition, end) order
(a closure at the end of the pattern moves the record's end, and under
``nondecreasing_ts`` a member tied with the record's last event may lie past
it by position: the records are then sorted again, for the joins above a
closure collected below the root).
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..budget import nbytes
from ..errors import ExplosionError
from ..kernels.kleene import (anchored_members, closure_runs, gather_lists, lists_within, member_pairs, outside_lists,
                              subsequences)
from ..kernels.negation import candidate_pairs, killed_unconditionally, negation_ranges
from ..kernels.list_columns import take_lists
from ..kernels.window import spans_within
from ..matches import MatchTable, canonical_table, closure_table, list_keys
from ..pattern import expr as E
from ..plan.kleene_refs import anchor_var, member_var, prev_var
from ..plan.operators import GroupCollect
from .buffer import Buffer, list_ends, list_extent
from .lists import Runs, iteration_constructs, list_mask, member_combinations
from .scan import leaf

CHECK_ORDER = False
"""Tests set it: every closure's lists are checked to come, record by record, in semantics section 11's
order (:func:`check_list_order`), the order the canonical sort then only merges across records."""


def run(node, state, execute) -> Buffer:
    K = node.closure
    buf = execute(node.input)
    app = took_branch(buf, K.scope) if K.scope else None
    cap = None
    if node.bound and len(buf):
        buf, app, cap = _bounded(state, node, buf, app)
    offs, members = _members(state, K, buf, app, cap)
    if node.prune and node.mode == "all":
        offs, members = _unkilled(state, node.prune, buf, offs, members)
    if node.runs:
        src, off, lpos = _passing_runs(state, K, buf, offs, members)
    else:
        src, off, lpos = _lists(state, K, node.mode, buf, offs, members)
    if app is not None:
        src, off, lpos = _keep_lists(np.flatnonzero(app[src]), src, off, lpos)
    if node.span_check and len(src):
        # members tied in time with a neighbour may lie on its other side by position, so a list can
        # stretch the match past the window although each member fits alone (section 2); a maximal
        # list that does is no match: no smaller list is tried (section 6.2)
        ok = _fits(state, buf, src, off, lpos)
        if not ok.all():  # no index of every list (O(lists) fresh pages)
            src, off, lpos = _keep_lists(np.flatnonzero(ok), src, off, lpos)
    if K.lists and not node.runs and len(src):
        single = {v: buf.pos[src, i] for i, v in enumerate(buf.vars)}
        # a list conjunct may read closures collected before this one too (their lists per record)
        lists = _per_list(state, buf, src, {v for c in K.lists for v in E.variables(c)}, off, lpos)
        keep = np.flatnonzero(list_mask(state, K.lists, single, {**lists, K.var: (off, lpos)},
                                        unbound={v: u[src] for v, u in buf.unbound.items()}))
        src, off, lpos = _keep_lists(keep, src, off, lpos)
    if K.each and len(src):
        keep = np.flatnonzero(every_member(state, K.each, buf, src, {K.var: (off, lpos)}))
        src, off, lpos = _keep_lists(keep, src, off, lpos)
    for c in K.cross:
        src, off, lpos = _keep_lists(np.flatnonzero(every_pair(state, c, buf, src, {K.var: (off, lpos)})),
                                     src, off, lpos)
    if node is state.plan.root and (app is None or app.all()) and len(src) > 1:  # no list unbound
        table = closure_root(state, buf, src, off, lpos, K.var)
        if table is not None:
            return table
    unbound = {}
    if app is not None:
        src, off, lpos, unbound[K.var] = _with_other_branches(~app, src, off, lpos)
    lists = {**_per_list(state, buf, src, None, off, lpos), K.var: (off, lpos)}
    unbound.update({v: u[src] for v, u in buf.unbound.items()})
    if CHECK_ORDER:
        check_list_order(src, lists, unbound)
    if node is state.plan.root:
        return root_matches(state, buf, src, lists, unbound, K.var)
    _, _, start, end = _list_span(buf, src, off, lpos)
    ts, wt = state.table.ts, state.wt
    # an anchor is a member from here on; below the root the joins above may still test the SEQ's order
    # against it (an AND join's sequence pairs): it is the list's first member, so its column stays
    cols = [i for i, v in enumerate(buf.vars) if v != K.anchor or node.placement == "lower"]
    # src ascends (each record's lists in record order), so the partition offsets are where each starts
    out = Buffer(tuple(buf.vars[i] for i in cols), buf.pos[src][:, cols], start, end,
                 np.searchsorted(src, buf.goff), ts[start], ts[end], wt[start], wt[end], lists, unbound)
    return in_end_order(state, out)


def in_end_order(state, out: Buffer) -> Buffer:
    """``out`` (records a closure's or group's collection made below the root) in (partition, end) order.

    A list at the end of the pattern (no neighbour after it) moves the record's end past its last event,
    and under ``nondecreasing_ts`` a member (an iteration's event) tied with the record's last event may
    lie past it by position: a record's end may move past the next one's, and the joins above read
    records in (partition, end) order.  One partition's records are contiguous, so comparing ends where
    the partition stays the same is enough."""
    if len(out) < 2:
        return out
    g, end = out.partitions(), out.end
    if bool(np.all((g[1:] != g[:-1]) | (end[1:] >= end[:-1]))):
        return out
    return out.take(np.lexsort((end, g)), out.goff)


def check_list_order(src: np.ndarray, lists: dict, unbound: dict) -> None:
    """AssertionError unless the lists of each record (list j of record ``src[j]``; ``lists`` / ``unbound``:
    every list variable's, one entry per list) come strictly ascending in semantics section 11's order
    (list variables in name order, bound before unbound, each list lexicographically by its members'
    positions, a prefix first): a depth-first enumeration of a record's members makes them so.  A debug
    check (:data:`CHECK_ORDER`), a Python loop over the lists."""
    koff, kseq, _, _ = list_keys(len(src), lists, {v: u for v, u in unbound.items() if v in lists})
    for j in range(1, len(src)):
        if src[j] == src[j - 1]:
            a, b = kseq[koff[j - 1]:koff[j]].tolist(), kseq[koff[j]:koff[j + 1]].tolist()
            if not a < b:
                raise AssertionError(f"record {src[j]}'s lists {j - 1} and {j} are out of semantics section 11's "
                                     f"order: keys {a} then {b}")


def root_matches(state, buf: Buffer, src: np.ndarray, lists: dict, unbound: dict,
                 made: str | None = None) -> MatchTable:
    """The match table of the lists made at the plan's root (list j of record ``src[j]``; ``lists`` and
    ``unbound``: every list variable's, one entry per list), in canonical order.

    The lists are the matches, and their table reads positions and lists
    only: the spans, times and partition offsets of a buffer (four gathers
    over every list, a pass over every member) would be made for nothing.
    ``made``: the closure's variable, whose lists this collection made: they
    hold its members in position order after the first (the anchor, which a
    member tied in time may precede by position), so their first and last
    positions are read off their ends, and each record's lists come in
    section 11's order (depth first: :func:`check_list_order`), which the
    order then only checks across records.
    """
    plan = state.plan
    if CHECK_ORDER and made is not None:
        check_tails_ascend(made, *lists[made])
    return canonical_table(buf.pos, {v: buf.vars.index(v) for v in plan.variables},
                           {v: lists[v] for v in plan.list_vars}, {v: u for v, u in unbound.items() if u.any()},
                           rows=src, tail_ascending=() if made is None else (made,), by_record=made is not None)


def closure_root(state, buf: Buffer, src: np.ndarray, off: np.ndarray, lpos: np.ndarray,
                 var: str) -> MatchTable | None:
    """The match table of closure ``var``'s lists at the plan's root (list j of record ``src[j]``, every
    one bound), written straight into canonical order with the lists ``buf``'s records hold
    (:func:`~jitcep.matches.closure_table`), or None: a held list unbound somewhere (an OR branch), or
    the positions too far past the lists for its buckets (:func:`root_matches` orders those).

    The records' lists are not copied per list first (:func:`_per_list`): the table copies each once,
    from its record, in the matches' order (charged to ``max_memory`` as that copy)."""
    plan = state.plan
    if any(u.any() for u in buf.unbound.values()) or not set(plan.list_vars) <= {var, *buf.lists}:
        return None
    held = {v: buf.lists[v] for v in plan.list_vars if v != var}
    if held:
        per = np.bincount(src, minlength=len(buf))  # lists per record
        need = sum(8 * (int(per @ np.diff(o)) + len(src) + 1) for o, _ in held.values())
        state.memory.check(need, f"the lists of {', '.join(held)} copied for each new list", buf, off, lpos)
    if CHECK_ORDER:
        check_tails_ascend(var, off, lpos)
        check_list_order(src, {**_per_list(state, buf, src, None, off, lpos), var: (off, lpos)}, {})
    return closure_table(buf.pos, {v: buf.vars.index(v) for v in plan.variables}, var, (off, lpos), held, src)


def check_tails_ascend(var: str, off: np.ndarray, lpos: np.ndarray) -> None:
    """AssertionError unless each list's members after its first ascend (what :func:`root_matches` tells
    the order's bounds).  A debug check (:data:`CHECK_ORDER`)."""
    lens = np.diff(off)
    later = np.ones(int(off[-1]), np.bool_)  # a member neither first nor second of its list
    later[off[:-1][lens > 0]] = False
    later[off[:-1][lens > 1] + 1] = False
    at = np.flatnonzero(later)
    down = at[lpos[at] < lpos[at - 1]]
    if len(down):
        raise AssertionError(f"Kleene variable {var!r}: a list's members after its first do not ascend "
                             f"(member {down[0]})")


def took_branch(buf: Buffer, scope: tuple[str, ...]) -> np.ndarray:
    """The records that took the OR branch of a closure's ``scope`` (its single variables): a closure
    there applies to those only (semantics section 5).  A scope variable that anchored a closure
    collected before this one is that closure's list by now: bound where the list is."""
    took = np.zeros(len(buf.pos), dtype=bool)
    for v in scope:
        if v in buf.vars:
            took |= buf.pos[:, buf.vars.index(v)] >= 0
        else:
            kv = next(k for k in buf.lists if anchor_var(k) == v)
            u = buf.unbound.get(kv)
            took |= True if u is None else ~u
    return took


def _bounded(state, node, buf: Buffer, app: np.ndarray | None):
    """(records, branch mask, cap): ``buf`` without the records that some closure of ``node.bound`` has
    no candidate for in range, and per record the last candidate of each in range (the earliest of
    them; -1: none applies), which the closure's members must lie before.

    Every match of a record holds a member of each ``node.bound`` closure
    in its range, after this closure's last member (a SEQ orders them so):
    that range, computed now with this closure's anchor (its first member)
    in place of its last member, holds the real one, so an empty range
    means no match, and every member of a list some match extends is
    before its last candidate (semantics section 6: the lists of the other
    records, and those ending after it, are made and dropped otherwise).
    """
    K = node.closure
    m = len(buf)
    applies = np.ones(m, np.bool_) if app is None else app
    dead = np.zeros(m, np.bool_)
    cap = np.full(m, -1, np.int64)
    for L in node.bound:
        lleaf = leaf(state, L.var, L.types, L.filter)
        cand = lleaf.start
        bounded = buf.list_bounds(L.before, L.after) if buf.lists else buf
        bcols = [bounded.vars.index(v) for v in L.before if v in bounded.vars]
        if K.anchor is not None:
            bcols.append(bounded.vars.index(K.anchor))
        acols = [bounded.vars.index(v) for v in L.after if v in bounded.vars]
        lo, hi = negation_ranges(bounded.as_tuple(), (cand, lleaf.goff), state.table.ts, state.wt, state.W,
                                 state.options.order, bcols, acols, False)
        none = hi == lo
        dead |= none & applies
        last = cand[np.maximum(hi - 1, 0)] if len(cand) else np.zeros(m, np.int64)
        cap = np.where(none | ~applies, cap, np.where(cap < 0, last, np.minimum(cap, last)))
    if dead.any():
        keep = np.flatnonzero(~dead)
        buf, cap = buf.take(keep, np.searchsorted(keep, buf.goff)), cap[keep]
        app = None if app is None else app[keep]
    return buf, app, cap


def _members(state, K, buf: Buffer, app: np.ndarray | None,
             cap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(offsets (m + 1), positions): each record's qualifying members, in position order (none for a
    record ``app`` leaves out), before ``cap`` (an event per record, -1: none; :func:`_bounded`).

    The range lies after the last bound variable the SEQ structure orders
    before the closure and before the first bound one after it, a closure
    already collected counting by its last / first member; events of other
    lists are bound already, so never members (semantics section 3).
    """
    m = len(buf)
    kleaf = leaf(state, K.var, K.types, K.filter)
    cand, cgoff = kleaf.start, kleaf.goff
    bounded = buf.list_bounds(K.before, K.after) if buf.lists else buf
    bcols = [bounded.vars.index(v) for v in K.before if v in bounded.vars]
    acols = [bounded.vars.index(v) for v in K.after if v in bounded.vars]
    if K.anchor is not None:  # the other members lie after the first
        bcols.append(bounded.vars.index(K.anchor))
    pos = bounded.pos
    if cap is not None:  # an event after every member, like a bound variable after the closure
        pos = np.column_stack([pos, cap])
        acols.append(pos.shape[1] - 1)
    lo, hi = negation_ranges((pos, bounded.start, bounded.end, bounded.goff), (cand, cgoff), state.table.ts,
                             state.wt, state.W, state.options.order, bcols, acols, False)
    skip = np.zeros(m, dtype=np.bool_) if app is None else ~app
    recs, evs = [], []
    kept = 0
    r = 0
    taken = buf.ascending_lists()
    while r < m:  # pairs in (record, position) order: each record's members come out in position order
        rec, ev, r = candidate_pairs(buf.pos, lo, hi, cand, skip, r, config.NEG_PAIR_BUDGET)
        for off, lpos in taken:
            keep = outside_lists(rec, ev, off, lpos)
            rec, ev = rec[keep], ev[keep]
        if K.member:  # no conjunct: every pair is kept as found, uncopied
            ok = state.pairs_pass(buf.pos, buf.vars, K.member, rec, {K.var: ev})
            rec, ev = rec[ok], ev[ok]
        recs.append(rec)
        evs.append(ev)
        kept += len(rec)
        # each kept (record, member) pair is 16 bytes, and is copied once more when the chunks join
        state.memory.check(32 * kept, f"the members of Kleene variable {K.var!r}", buf, kleaf)
    # one chunk (the pairs within config.NEG_PAIR_BUDGET) is the pairs: no copy (fresh pages, 0.3 ms on
    # MinMax_2 x20's 45,020 pairs)
    rec = recs[0] if len(recs) == 1 else np.concatenate(recs) if recs else np.zeros(0, np.int64)
    members = evs[0] if len(evs) == 1 else np.concatenate(evs) if evs else np.zeros(0, np.int64)
    if K.anchor is not None:
        # the anchor is the first member: in position order (iteration order, section 6) before the rest,
        # which under nondecreasing_ts a tie may put in range at an earlier position
        return anchored_members(rec, members, buf.column(K.anchor))
    offs = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rec, minlength=m), out=offs[1:])
    return offs, members


def _unkilled(state, negations, buf: Buffer, offs: np.ndarray, members: np.ndarray):
    """(offsets, positions): each record's members (``offs`` into ``members``) without those that a
    negation of ``negations`` (:attr:`~jitcep.plan.operators.KleeneCollect.prune`) kills in the
    match of the record and that member alone.

    Such a negation's range only widens as the match's span does and no event
    of a match is one of its candidates, so its killer kills every list
    holding the member (semantics section 7): each (record, member) pair is
    a record of its own, spanning both, for the negation's own kernels.  A
    variable of its range the record does not bind yet (a collection below
    a join) would leave that side to the span: no pruning then.
    """
    m = len(buf)
    state.memory.check(8 * (len(buf.vars) + 5) * len(members), "the (match, member) pairs a negation prunes",
                       buf, offs, members)
    rec = np.repeat(np.arange(m), np.diff(offs))
    pos = np.column_stack([buf.pos[rec], members])
    start, end = np.minimum(buf.start[rec], members), np.maximum(buf.end[rec], members)
    alive = np.ones(len(members), dtype=np.bool_)
    for neg in negations:
        if not set(neg.before + neg.after) <= set(buf.vars):
            continue
        events = leaf(state, neg.var, neg.types, neg.filter)
        bcols = [buf.vars.index(v) for v in neg.before]
        acols = [buf.vars.index(v) for v in neg.after]
        lo, hi = negation_ranges((pos, start, end, offs[buf.goff]), (events.start, events.goff), state.table.ts,
                                 state.wt, state.W, state.options.order, bcols, acols, neg.in_conj)
        alive &= ~killed_unconditionally(pos, lo, hi, events.start)
    if alive.all():
        return offs, members
    kept = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rec[alive], minlength=m), out=kept[1:])
    return kept, members[alive]


def _lists(state, K, mode: str, buf: Buffer, offs: np.ndarray, members: np.ndarray):
    """(src, offsets, positions): the lists the bounds and mode make, list j belonging to record src[j]."""
    options, memory = state.options, state.memory
    if mode == "maximal":
        src, start, length = closure_runs(offs, K.min, K.max)
        memory.check(8 * (int(length.sum()) + 2 * len(src)), f"the lists of Kleene variable {K.var!r}",
                     buf, members, src, start, length)
        return (src, *gather_lists(members, start, length))
    follows = _follows(state, K, buf, offs, members) if K.prev else None
    room = memory.limit - nbytes(buf, members, offs, follows)
    src, off, lpos, over = subsequences(offs, members, state.table.ts, options.order == "strict_ts",
                                        K.min, K.max, options.max_kleene, options.max_matches,
                                        follows, room=room, wt=state.wt, W=state.W,
                                        anchored=K.anchor is not None)
    if over == -3:
        raise memory.error(f"the lists of Kleene variable {K.var!r}")
    if over == -2:
        raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                             f"or narrow the pattern")
    if over >= 0:
        raise ExplosionError(
            f"Kleene variable {K.var!r} has more than max_kleene={options.max_kleene} lists for one "
            f"binding of the other variables; raise the cap with jitcep.compile(..., max_kleene=N), "
            f"bound the closure ({{n,m}}), or use kleene=\"maximal\"")
    return src, off, lpos


def _passing_runs(state, K, buf: Buffer, offs: np.ndarray, members: np.ndarray):
    """(src, offsets, positions): the maximal lists (runs of each record's members, section 6.2) that pass
    the list conjuncts, which read the closure only through aggregates: tested on the runs, so only the
    lists that pass are gathered."""
    src, start, length = closure_runs(offs, K.min, K.max)
    what = f"the lists of Kleene variable {K.var!r}"
    state.memory.check(24 * len(src), what, buf, members)
    single = {v: buf.pos[src, i] for i, v in enumerate(buf.vars)}
    keep = np.flatnonzero(list_mask(state, K.lists, single, {K.var: Runs(members, start, length)},
                                    unbound={v: u[src] for v, u in buf.unbound.items()}))
    src, start, length = src[keep], start[keep], length[keep]
    state.memory.check(8 * (int(length.sum()) + len(src)), what, buf, members, src, start, length)
    return (src, *gather_lists(members, start, length))


def _follows(state, K, buf: Buffer, offs: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Which member may follow which in a list (SASE+ iterative predicates, ``v[i].x > v[i-1].x``).

    Every ordered pair of a record's members is tested once with the
    generated predicates (``v[i-1]`` bound to the earlier member, ``v[i]``
    to the later), in chunks; the verdicts fill one q x q block per record
    (:func:`~jitcep.kernels.kleene.member_pairs`), which the enumeration reads.
    """
    q = np.diff(offs)
    pairs = int((q * (q - 1) // 2).sum())
    if pairs > state.options.max_partials:
        raise ExplosionError(f"more than max_partials={state.options.max_partials} pairs of Kleene members to "
                             f"test against the iterative predicates; raise the cap or narrow the pattern")
    # four indexes per pair and the q x q verdict table
    state.memory.check(32 * pairs + int((q * q).sum()), f"the member pairs of Kleene variable {K.var!r}",
                       buf, offs, members)
    rec, first, second, slot, size = member_pairs(offs, members)
    table = np.zeros(size, dtype=np.bool_)
    for lo in range(0, len(rec), config.NEG_PAIR_BUDGET):
        part = slice(lo, lo + config.NEG_PAIR_BUDGET)
        table[slot[part]] = state.pairs_pass(buf.pos, buf.vars, K.prev, rec[part],
                                             {prev_var(K.var): first[part], K.var: second[part]})
    return table


def _per_list(state, buf: Buffer, src: np.ndarray, only=None, *live) -> dict:
    """The lists ``buf`` already holds (those of ``only``, None: all), one per list of record ``src[j]``.

    A record with many new lists repeats its earlier lists as often, so the
    copies are charged to ``max_memory`` (beside ``buf`` and ``live``) before
    they are made."""
    held = {v: ol for v, ol in buf.lists.items() if only is None or v in only}
    lengths = {v: np.diff(o)[src] for v, (o, _) in held.items()}
    need = sum(8 * (int(n.sum()) + len(n) + 1) for n in lengths.values())
    if need:
        state.memory.check(need, f"the lists of {', '.join(held)} copied for each new list", buf, *live)
    return {v: take_lists(o, l, src) for v, (o, l) in held.items()}


def _with_other_branches(other: np.ndarray, src, off, lpos):
    """The lists with each record of ``other`` (a mask: records that took another OR branch) added once,
    in record order, with an empty list marked unbound: ``(src, off, lpos, unbound)``."""
    rest = np.flatnonzero(other)
    order = np.argsort(np.concatenate([src, rest]), kind="stable")
    none = np.zeros(len(rest), np.int64)
    off, lpos = gather_lists(lpos, np.concatenate([off[:-1], none])[order],
                             np.concatenate([np.diff(off), none])[order])
    unbound = np.concatenate([np.zeros(len(src), np.bool_), np.ones(len(rest), np.bool_)])[order]
    return np.concatenate([src, rest])[order], off, lpos, unbound


def every_member(state, each, buf: Buffer, src, own: dict) -> np.ndarray:
    """Which lists (list j of record ``src[j]``) pass each conjunct of ``each`` (:attr:`Closure.each` /
    :attr:`Group.each`) for every member (a group's: iteration) i of each construct it reads member-wise,
    independently per construct (semantics section 4: every combination; an empty list passes
    vacuously; with ``v[i-1]``, every i >= 2).  ``own``: the lists just made (Kleene variable -> CSR
    offsets and positions, a group's aligned by iteration); the conjunct reads members of those or of
    constructs collected before (the record's lists), and maybe the whole lists.  Each (list, one member
    per construct) combination is an item of :func:`~jitcep.execute.lists.list_mask`, reading member i
    and its predecessor of each Kleene variable as single events."""
    ok = np.ones(len(src), dtype=np.bool_)
    read = {v for c in each for v in E.variables(c)}
    read = {v for v in buf.lists if {v, member_var(v), prev_var(v)} & read}
    lists = {**_per_list(state, buf, src, read, *own.values()), **own}
    unbound = {v: u[src] for v, u in buf.unbound.items() if v in read}
    for c in each:
        constructs = iteration_constructs(state, c, lists)
        kvs = [v for ks, _ in constructs for v in ks]
        for rows, members in member_combinations(constructs, lists, np.arange(len(src)), lambda k: state.memory.check(
                8 * (len(buf.vars) + 2 + 2 * len(kvs)) * k, f"the members of Kleene variable {', '.join(kvs)}",
                buf, *lists.values())):
            single = {v: buf.pos[src[rows], i] for i, v in enumerate(buf.vars)}
            passed = list_mask(state, (c,), {**single, **members}, lists, rows=rows, unbound=unbound)
            ok[rows[~passed]] = False
    return ok


def every_pair(state, c, buf: Buffer, src, own: dict) -> np.ndarray:
    """Which lists (list j of record ``src[j]``) pass member-wise conjunct ``c`` with every pair of a member
    of ``own`` (the lists just made, Kleene variable -> CSR offsets and positions; a group's aligned by
    iteration) and a member of the other construct's list in the record (semantics section 4: every i,
    every j; an empty list passes vacuously)."""
    others = tuple(v for v in E.variables(c) & buf.lists.keys() if v not in own)
    what = f"the member pairs of {', '.join(others)} and {', '.join(own)}"
    lists = {**_per_list(state, buf, src, others, *own.values()), **own}
    ok = np.ones(len(src), dtype=np.bool_)

    def check(k):
        state.memory.check(8 * (3 + len(own) + len(others)) * k, what, buf, *lists.values())

    for lst, members in member_combinations(((others, 0), (tuple(own), 0)), lists, np.arange(len(src)), check):
        extra = {v: members[member_var(v)] for v in (*others, *own)}
        ok[lst[~state.pairs_pass(buf.pos, buf.vars, (c,), src[lst], extra)]] = False
    return ok


def _keep_lists(keep: np.ndarray, src: np.ndarray, off: np.ndarray, lpos: np.ndarray):
    """The (record, list) pairs ``keep`` (indexes, ascending) of ``src`` and the CSR lists (the same arrays
    when ``keep`` is every one)."""
    if len(keep) == len(src):
        return src, off, lpos
    return (src[keep], *take_lists(off, lpos, keep))


def _fits(state, buf: Buffer, src: np.ndarray, off: np.ndarray, lpos: np.ndarray) -> np.ndarray:
    """Whether each (record ``src[j]``, list j) fits the window (semantics section 2).

    Under ``kleene_window="iteration"`` the iterations of the groups collected before need not fit with
    one another: R (the events outside every group, the new members among them) must fit with each
    iteration I.  Since R and each I fit alone, R u I fits when its two extremes do, so it suffices that
    R's first event fits with the record's last one (of any iteration or of R) and R's last with the
    record's first: the extremes over every iteration at once."""
    wt, W = state.wt, state.W
    if state.options.kleene_window == "iteration" and any(isinstance(n, GroupCollect) for n in state.plan.nodes()):
        first, last, start, end = _list_span(buf, src, off, lpos)
        rfirst, rlast = outside_groups(state, buf, [])
        rfirst = np.where(first >= 0, np.minimum(rfirst[src], first), rfirst[src])
        rlast = np.maximum(rlast[src], last)
        some = np.flatnonzero(rfirst <= rlast)  # R may be empty: an empty list and no event outside the groups
        ok = np.ones(len(src), np.bool_)
        ok[some] = (spans_within(wt[rfirst[some]], wt[end[some]], W)
                    & spans_within(wt[start[some]], wt[rlast[some]], W))
        return ok
    return lists_within(src, off, lpos, buf.start, buf.end, wt, W)


def outside_groups(state, buf: Buffer, anchor) -> tuple[np.ndarray, np.ndarray]:
    """(first, last) position of each record's events outside every Kleene group: its single variables
    (but the group's ``anchor`` columns, and those of any group's anchors a collection below the root
    kept: its first iteration) and its array variables' members (R of semantics section 2); first > last
    where there are none."""
    groups = [n.group for n in state.plan.nodes() if isinstance(n, GroupCollect)]
    grouped = {v for g in groups for v in g.vars}
    kept = [i for i, v in enumerate(buf.vars) if any(v in g.anchor for g in groups)]
    big = np.iinfo(np.int64).max
    pos = buf.pos.copy()
    pos[:, [*anchor, *kept]] = -1
    cols = [pos] + [np.stack(list_extent(off, lpos), axis=1) for v, (off, lpos) in buf.lists.items()
                        if v not in grouped]
    allpos = np.concatenate([*cols, np.full((len(pos), 1), -1, np.int64)], axis=1)  # (a column if none)
    first = np.where(allpos >= 0, allpos, big).min(axis=1)
    return first, allpos.max(axis=1)


def _list_span(buf: Buffer, src: np.ndarray, off: np.ndarray, lpos: np.ndarray):
    """(first member, last member, first event, last event) positions of each (record ``src[j]``, list j);
    -1 for the members of an empty list."""
    first, last = list_ends(off, lpos)
    start = np.where(first >= 0, np.minimum(buf.start[src], first), buf.start[src])
    return first, last, start, np.maximum(buf.end[src], last)
