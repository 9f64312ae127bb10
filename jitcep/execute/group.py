"""GroupCollect: a Kleene group's lists for every record of its input (semantics section 6.1; ZStream 4.4.5).

An iteration of ``KL(SEQ(..))`` / ``KL(AND(..))`` is one match of the group's
body, so the body's own join tree makes them (records binding one event per
group variable, the iteration-local conjuncts tested there).  Each record of
the input then pairs with the iterations that may join it: within the
window of its events (the AND join kernel, ZStream Algorithm 3; under
``kleene_window="iteration"`` of its events outside every group, section 2),
after every event the SEQ structure orders before the group and before every
event it orders after, sharing no event with the record or its lists
(section 3), passing the member-wise conjuncts that read the record.  A
record's candidates, in canonical order (last position, first position, the
group's variables' positions in name order), are chained into lists
(:func:`jitcep.kernels.kleene.iteration_lists`): a SEQ group's iteration
after the previous one's end, an AND group's any set of distinct body
matches; consecutive iterations pass the iterative conjuncts (tested once per
pair of a record's candidates, as for an array variable), and under
``kleene_window="match"`` a list fits the window with its record.  List
conjuncts are then tested once per list, those reading an iteration with the
lists (:attr:`~jitcep.plan.logical.Group.each`) once per iteration of each
list; each group variable gets its own list, aligned by iteration.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..budget import nbytes
from ..errors import ExplosionError
from ..kernels.kleene import iteration_lists, member_pairs, outside_lists
from ..kernels.negation import candidate_pairs, negation_ranges
from ..kernels.window import MAX_SPAN, spans_within
from ..plan.kleene_refs import prev_var
from .buffer import Buffer, list_extent, offsets
from .kleene import (_keep_lists, _per_list, _with_other_branches, every_member, every_pair, in_end_order,
                     outside_groups, root_matches, took_branch)
from .lists import list_mask


def run(node, state, execute) -> Buffer:
    Gr = node.group
    buf = execute(node.input)
    it = execute(node.body)
    # a group in an OR branch applies to the records that took it (semantics section 5)
    app = took_branch(buf, Gr.scope) if Gr.scope else None
    rec, cand = _candidates(node, state, buf, it, app)
    first_ok = _after_anchor(state, Gr, buf, it, rec, cand) if Gr.anchor and Gr.prev else None
    src, off, lidx = _lists(node, state, buf, it, rec, cand, first_ok)
    if app is not None:  # (the empty list of {0,m} comes for every record)
        src, off, lidx = _keep_lists(np.flatnonzero(app[src]), src, off, lidx)
    itpos = {v: it.pos[cand, it.vars.index(v)] for v in Gr.vars}  # per candidate
    ends = (it.start[cand], it.end[cand])
    if Gr.anchor:  # each list starts with the record's first iteration, its anchor
        acols = [buf.vars.index(a) for a in Gr.anchor]
        itpos = {v: np.concatenate([p, buf.pos[:, c]]) for (v, p), c in zip(itpos.items(), acols)}
        ends = (np.concatenate([ends[0], buf.pos[:, acols].min(axis=1)]),
                np.concatenate([ends[1], buf.pos[:, acols].max(axis=1)]))
        off, lidx = _prepend(off, lidx, len(cand) + src)
    if Gr.lists and len(src):
        single = {v: buf.pos[src, i] for i, v in enumerate(buf.vars)}
        mine = {**_per_list(state, buf, src, None, off, lidx), **{v: (off, p[lidx]) for v, p in itpos.items()}}
        keep = np.flatnonzero(list_mask(state, Gr.lists, single, mine,
                                        unbound={v: u[src] for v, u in buf.unbound.items()}))
        src, off, lidx = _keep_lists(keep, src, off, lidx)
    if Gr.each and len(src):
        keep = np.flatnonzero(every_member(state, Gr.each, buf, src, {v: (off, p[lidx]) for v, p in itpos.items()}))
        src, off, lidx = _keep_lists(keep, src, off, lidx)
    for c in Gr.cross:
        keep = np.flatnonzero(every_pair(state, c, buf, src, {v: (off, p[lidx]) for v, p in itpos.items()}))
        src, off, lidx = _keep_lists(keep, src, off, lidx)
    unbound = {}
    if app is not None:
        src, off, lidx, none = _with_other_branches(~app, src, off, lidx)
        unbound = {v: none for v in Gr.vars}
    lists = {v: (off, p[lidx]) for v, p in itpos.items()}
    if node is state.plan.root:  # the lists are the matches (and their extent a reduction over iterations)
        unbound.update({v: u[src] for v, u in buf.unbound.items()})
        return root_matches(state, buf, src, {**_per_list(state, buf, src, None, off, lidx), **lists}, unbound)
    first, last = list_extent(off, ends[0][lidx], ends[1][lidx])
    start = np.where(first >= 0, np.minimum(buf.start[src], first), buf.start[src])
    end = np.maximum(buf.end[src], last)
    unbound.update({v: u[src] for v, u in buf.unbound.items()})
    ts, wt = state.table.ts, state.wt
    # an anchor is an iteration from here on; below the root a join above may still test the SEQ's order
    # against it (an AND join's sequence pairs), so its columns stay (no window reads them: outside_groups)
    cols = [i for i, v in enumerate(buf.vars) if v not in Gr.anchor or node.placement == "lower"]
    # a group at the pattern's end, or under nondecreasing_ts an iteration tied with the record's last event,
    # may move the record's end past the next one's
    return in_end_order(state, Buffer(tuple(buf.vars[i] for i in cols), buf.pos[src][:, cols], start, end,
                                      offsets(buf.partitions()[src], state.G), ts[start], ts[end], wt[start],
                                      wt[end], {**_per_list(state, buf, src, None, off, lidx), **lists}, unbound))


def _candidates(node, state, buf: Buffer, it: Buffer, app) -> tuple[np.ndarray, np.ndarray]:
    """(record, iteration) pairs that may join, sorted by record, then the iterations' canonical order.

    Each record's range of iterations (by their last event) is found like a
    negation's (:func:`jitcep.kernels.negation.negation_ranges`: after the
    last bound event the SEQ structure orders before the group, before the
    first bound one after it, within the window of the record on an open
    side); the pairs are then checked exactly: every event of the iteration in
    range, the window, distinct events, the member-wise conjuncts.
    """
    Gr = node.group
    options, ts = state.options, state.table.ts
    m = len(buf)
    anchor = [buf.vars.index(a) for a in Gr.anchor]
    # R of semantics section 2: the events the window relates each iteration to, under "iteration"
    if node.per_iteration:
        rstart, rend = outside_groups(state, buf, anchor)
        alone = rstart > rend  # nothing outside the groups: no window between it and the iterations
        rstart, rend = np.where(alone, buf.start, rstart), np.where(alone, buf.end, rend)
        W = MAX_SPAN if alone.any() else state.W
    else:
        rstart, rend, alone, W = buf.start, buf.end, np.zeros(m, np.bool_), state.W
    bounded = buf.list_bounds(Gr.before, Gr.after) if buf.lists else buf
    bcols = [bounded.vars.index(v) for v in Gr.before if v in bounded.vars]
    acols = [bounded.vars.index(v) for v in Gr.after if v in bounded.vars]
    if Gr.anchor and Gr.seq:
        bcols += anchor  # later iterations lie after the first
    lo, hi = negation_ranges((bounded.pos, rstart, rend, buf.goff), (it.end, it.goff), ts, state.wt, W,
                             options.order, bcols, acols, False)
    skip = np.zeros(m, dtype=np.bool_) if app is None else ~app
    none = np.full((m, 1), -1, np.int64)  # candidates are iteration indexes: no record event to leave out
    index = np.arange(len(it), dtype=np.int64)
    recs, cands = [], []
    r, kept = 0, 0
    taken = buf.ascending_lists()
    while r < m:
        rec, cand, r = candidate_pairs(none, lo, hi, index, skip, r, config.NEG_PAIR_BUDGET)
        keep = _exact(node, state, buf, it, bounded, bcols, acols, anchor, rec, cand, rstart, rend, alone)
        rec, cand = rec[keep], cand[keep]
        for v in Gr.vars:  # distinct events: none of the record's lists (section 3)
            ev = it.pos[cand, it.vars.index(v)]
            for off, lpos in taken:
                keep = outside_lists(rec, ev, off, lpos)
                rec, cand, ev = rec[keep], cand[keep], ev[keep]
        if Gr.member and len(rec):
            ok = state.pairs_pass(buf.pos, buf.vars, Gr.member, rec,
                                  {v: it.pos[cand, it.vars.index(v)] for v in Gr.vars})
            rec, cand = rec[ok], cand[ok]
        recs.append(rec)
        cands.append(cand)
        kept += len(rec)
        state.memory.check(32 * kept, f"the iterations of the Kleene group of {', '.join(Gr.vars)}", buf, it)
    rec = np.concatenate(recs) if recs else np.zeros(0, np.int64)
    cand = np.concatenate(cands) if cands else np.zeros(0, np.int64)
    o = np.lexsort((_canonical_rank(Gr, it)[cand], rec))
    return rec[o], cand[o]


def _exact(node, state, buf, it, bounded, bcols, acols, anchor, rec, cand, rstart, rend, alone) -> np.ndarray:
    """Which (record, iteration) pairs of the ranges hold exactly: every event of the iteration after the
    events before the group and before those after it (a later iteration of a SEQ group after the first,
    at larger positions, semantics section 6), within the window, sharing no event with the record (an
    AND group's later iterations may share the first one's), and (AND group) after the first iteration
    in canonical order."""
    Gr, order, ts, wt = node.group, state.options.order, state.table.ts, state.wt
    istart, iend = it.start[cand], it.end[cand]
    keep = np.ones(len(rec), np.bool_)
    for c in bcols:
        p = bounded.pos[rec, c]
        if c in anchor:  # iteration order: at larger positions, and later in time under strict_ts
            keep &= (istart > p) & ((ts[istart] > ts[p]) if order == "strict_ts" else True)
        else:
            keep &= (p < 0) | _before(p, istart, ts, order)
    for c in acols:
        p = bounded.pos[rec, c]
        keep &= (p < 0) | _before(iend, p, ts, order)
    if node.per_iteration:
        ws, we = wt[rstart[rec]], wt[rend[rec]]
        keep &= alone[rec] | spans_within(np.minimum(ws, it.wstart[cand]), np.maximum(we, it.wend[cand]), state.W)
    else:
        keep &= spans_within(np.minimum(buf.wstart[rec], it.wstart[cand]), np.maximum(buf.wend[rec],
                             it.wend[cand]), state.W)
    mine = [c for c in range(buf.pos.shape[1]) if c not in anchor]
    for v in Gr.vars:
        ev = it.pos[cand, it.vars.index(v)]
        for c in mine:
            keep &= buf.pos[rec, c] != ev
    if Gr.anchor and not Gr.seq:
        keep &= _after_in_canonical_order(Gr, buf, it, anchor, rec, cand)
    return keep


def _after_in_canonical_order(Gr, buf, it, anchor, rec, cand) -> np.ndarray:
    """Whether iteration ``cand[j]`` comes after record ``rec[j]``'s first iteration (its anchor) in
    canonical order (last position, first position, the variables' positions in name order)."""
    first = buf.pos[rec][:, anchor]
    mine = {v: first[:, i] for i, v in enumerate(Gr.vars)}
    theirs = {v: it.pos[cand, it.vars.index(v)] for v in Gr.vars}
    keys = [(it.end[cand], first.max(axis=1)), (it.start[cand], first.min(axis=1))]
    keys += [(theirs[v], mine[v]) for v in sorted(Gr.vars)]
    after = np.zeros(len(rec), np.bool_)
    tied = np.ones(len(rec), np.bool_)
    for x, y in keys:
        after |= tied & (x > y)
        tied &= x == y
    return after


def _after_anchor(state, Gr, buf, it, rec, cand) -> np.ndarray:
    """Which candidates pass the iterative conjuncts after their record's first iteration (its anchor)."""
    extra = {**{prev_var(v): buf.pos[rec, buf.vars.index(a)] for v, a in zip(Gr.vars, Gr.anchor)},
             **{v: it.pos[cand, it.vars.index(v)] for v in Gr.vars}}
    return state.pairs_pass(buf.pos, buf.vars, Gr.prev, rec, extra)


def _prepend(off: np.ndarray, lidx: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR lists ``off`` / ``lidx`` with ``first[j]`` before the items of list j."""
    n = len(off) - 1
    new_off = off + np.arange(n + 1, dtype=np.int64)
    out = np.empty(len(lidx) + n, np.int64)
    out[new_off[:-1]] = first
    rest = np.ones(len(out), np.bool_)
    rest[new_off[:-1]] = False
    out[rest] = lidx
    return new_off, out


def _lists(node, state, buf: Buffer, it: Buffer, rec: np.ndarray, cand: np.ndarray, first_ok):
    """(src, offsets, candidate indexes): each record's lists of its candidate iterations (after its
    first iteration, when the group is anchored: then one iteration fewer)."""
    Gr, options = node.group, state.options
    offs = np.zeros(len(buf) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rec, minlength=len(buf)), out=offs[1:])
    follows = _follows(state, Gr, buf, it, offs, rec, cand) if Gr.prev else None
    # per iteration, each iteration fits with the record's other events (the pairing) and no more
    wmeasure = None if node.per_iteration else state.W
    nmin, nmax = Gr.min, Gr.max
    if Gr.anchor:
        nmin, nmax = max(nmin - 1, 0), None if nmax is None else nmax - 1
    room = state.memory.limit - nbytes(buf, it, rec, cand, follows)
    src, off, lidx, over = iteration_lists(offs, it.start[cand], it.end[cand], it.tstart[cand], it.tend[cand],
                                           it.wstart[cand], it.wend[cand], buf.wstart, buf.wend, Gr.seq,
                                           options.order == "strict_ts", wmeasure, nmin, nmax,
                                           options.max_kleene, options.max_matches, options.max_partials,
                                           follows, first_ok, room)
    name = f"the Kleene group of {', '.join(Gr.vars)}"
    if over == -3:
        raise state.memory.error(f"the lists of {name}")
    if over == -4:
        raise ExplosionError(f"more than max_partials={options.max_partials} partial lists of {name}; raise the "
                             f"cap or narrow the pattern")
    if over == -2:
        raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                             f"or narrow the pattern")
    if over >= 0:
        raise ExplosionError(
            f"{name} has more than max_kleene={options.max_kleene} lists for one binding of the other variables; "
            f"raise the cap with jitcep.compile(..., max_kleene=N) or bound the closure ({{n,m}})")
    return src, off, lidx


def _follows(state, Gr, buf: Buffer, it: Buffer, offs, rec, cand) -> np.ndarray:
    """Which candidate iteration may follow which in a list (the iterative conjuncts, ``v[i-1]`` bound to
    the earlier iteration's events), one q x q block per record, as for an array variable."""
    q = np.diff(offs)
    pairs = int((q * (q - 1) // 2).sum())
    if pairs > state.options.max_partials:
        raise ExplosionError(f"more than max_partials={state.options.max_partials} pairs of Kleene group "
                             f"iterations to test against the iterative predicates; raise the cap or narrow the "
                             f"pattern")
    state.memory.check(32 * pairs + int((q * q).sum()), f"the iteration pairs of the Kleene group of "
                       f"{', '.join(Gr.vars)}", buf, it)
    r, first, second, slot, size = member_pairs(offs, np.arange(len(cand), dtype=np.int64))
    table = np.zeros(size, dtype=np.bool_)
    cols = {v: it.pos[cand, it.vars.index(v)] for v in Gr.vars}
    for lo in range(0, len(r), config.NEG_PAIR_BUDGET):
        part = slice(lo, lo + config.NEG_PAIR_BUDGET)
        extra = {**{prev_var(v): c[first[part]] for v, c in cols.items()},
                 **{v: c[second[part]] for v, c in cols.items()}}
        table[slot[part]] = state.pairs_pass(buf.pos, buf.vars, Gr.prev, r[part], extra)
    return table


def _canonical_rank(Gr, it: Buffer) -> np.ndarray:
    """Each iteration's rank in canonical order (semantics section 6: last position, first position, then
    the group variables' positions in name order), which a SEQ group's iteration order agrees with."""
    keys = tuple(it.column(v) for v in sorted(Gr.vars))[::-1] + (it.start, it.end)
    rank = np.empty(len(it), np.int64)
    rank[np.lexsort(keys)] = np.arange(len(it))
    return rank


def _before(p: np.ndarray, q: np.ndarray, ts: np.ndarray, order: str) -> np.ndarray:
    """before(p, q) of semantics section 1 for positions of events known distinct (-1 entries read as 0)."""
    if order == "position":
        return p < q
    tp, tq = ts[np.maximum(p, 0)], ts[np.maximum(q, 0)]
    return tp < tq if order == "strict_ts" else tp <= tq
