"""Naive twins: plain-Python versions of the compiled engine's kernels and of the engine itself.

Each function here is the obviously-correct, slow version of one fast
function (stumpy's ``tests/naive.py`` pattern).  None of them calls jitcep's
plan, codegen, kernels or runtime, so they can disagree with them.

- :func:`counting_sort`  twin of :func:`jitcep.kernels.counting_sort`
- :func:`group_with_key_runs` twin of :func:`jitcep.kernels.group_with_key_runs` (each code's indices
  key by key); :func:`leaf_by_key` also of :func:`jitcep.kernels.leaf_of_run`
- :func:`seq_join`       twin of :func:`jitcep.kernels.seq_join` (as a set of pairs);
  :func:`seq_join_rows` of :func:`jitcep.kernels.final_join.seq_join_rows` (those pairs' rows, sorted);
  :func:`seq3_leaf_rows` of :func:`jitcep.kernels.final_join_leaves.seq3_leaf_rows` (every triple tested);
  :func:`seq_chain_rows` of :func:`jitcep.kernels.final_join_chain.seq_chain_rows` (every chain grown an
  event at a time, sorted); :func:`reversed_tie` of both kernels' decline under ``nondecreasing_ts``
- :func:`and_join`       twin of :func:`jitcep.kernels.and_join`
- :func:`pair_records`   twin of :func:`jitcep.kernels.join.pair_records` (a join's output records)
- :func:`pair_columns`   twin of :func:`jitcep.kernels.join.pair_columns` (the events a join's predicates read)
- :func:`keep_pairs`     twin of :func:`jitcep.kernels.join.keep_pairs` (the pairs passing a test)
- :func:`earliest_end`, :func:`latest_start`, :func:`chain_reach` twins of :mod:`jitcep.kernels.reduction`
  (every later / earlier event scanned; every chain of the leaves enumerated)
- :func:`negation_candidates` twin of :mod:`jitcep.kernels.negation` (ranges, own-event
  exclusion, kills and candidate pairs); :func:`candidate_rows` of its pairs' predicate positions
- :func:`non_overlapping`, :func:`consume_once`, :func:`freeze_active`  twins of
  :mod:`jitcep.kernels.policies` (the greedy scans of semantics section 9)
- :func:`next_candidates` twin of :func:`jitcep.kernels.selection.next_ranges` (as the
  candidate positions of each run)
- :func:`contiguous_next` twin of :func:`jitcep.kernels.selection.contiguous_next`
- :func:`successors`     twin of :func:`jitcep.kernels.selection.successors`
- :func:`round_ranges`, :func:`next_relevant`, :func:`advance`, :func:`first_at_or_after`, :func:`fork_runs`
  twins of the skip-till-next-match round kernels of :mod:`jitcep.kernels.selection` (each run's states
  as sets; the new buffers field by field)
- :func:`canonical_order`, :func:`gather_columns`, :func:`canonical_pairs` twins of
  :mod:`jitcep.kernels.order` (a sort by the whole key tuple, the list key a Python tuple; a row-by-row
  copy; the pairs' rows built one by one, then sorted so); :func:`list_bounds`, :func:`list_key`,
  :func:`take_lists` twins of :mod:`jitcep.kernels.list_columns` (min / max per list; each list's part
  built as a tuple; the lists sliced one by one)
- :func:`input_rows`, :func:`take`, :func:`row_numbers` twins of :mod:`jitcep.kernels.gather` (list comprehensions)
- the join-order searches of :mod:`jitcep.kernels.join_search` (DP-B, DP-LD, ZStream's program, GREEDY)
  have their twins in the package itself: the Python loops of :mod:`jitcep.plan.planner.algorithms`
  (``Costing.compiled = False``), which tests/test_planner_algorithms.py checks against brute force over
  every tree; tests/test_kernels_join_search.py compares the two and DP-B's optimum with that brute force
- :func:`every_passes`   twin of :func:`jitcep.kernels.kleene.every_passes` (``all`` over each list's slice)
- :func:`gather_lists`, :func:`anchored_members`, :func:`lists_within` twins of the list building of
  :mod:`jitcep.kernels.kleene` (slices; a sort of each record's members after its anchor; each list's
  span from min / max)
- :func:`evaluate`       twin of :func:`jitcep.runtime.evaluate` for SEQ / AND / OR patterns
  with negations: enumerate bindings by the structure, then test distinctness,
  order, window, ``[attr]`` and every WHERE conjunct with three-valued logic
  (docs/semantics.md sections 1-5), then every negation by scanning the whole
  table for a killing event (section 7, read literally).
"""

from __future__ import annotations

import itertools
import math

from importlib import import_module

E = import_module("jitcep.pattern.expr")  # not `from jitcep.pattern import expr`: the package exports a function `expr`
from jitcep.pattern.ast import Conj, CountWindow, Disj, EventVar, Neg, Seq, TimeWindow, Unbounded, UNIT_NS

# --- kernel twins --------------------------------------------------------------


def counting_sort(codes, n_codes):
    groups = [[] for _ in range(n_codes)]
    for i, c in enumerate(codes):
        if c >= 0:
            groups[c].append(i)
    order = [i for g in groups for i in g]
    offsets = [0]
    for g in groups:
        offsets.append(offsets[-1] + len(g))
    return order, offsets


def _records(buf):
    pos, start, end, goff = buf
    out = []
    for g in range(len(goff) - 1):
        for i in range(goff[g], goff[g + 1]):
            out.append((i, g, [int(x) for x in pos[i]], int(start[i]), int(end[i])))
    return out


def _before(u, w, ts, order):
    if order == "position":
        return u < w
    if order == "strict_ts":
        return ts[u] < ts[w]
    return ts[u] <= ts[w]


def _ints(a):
    """Python ints: differences of them never wrap (windows are exact for any int64 times)."""
    return [int(x) for x in a]


def seq_join(L, R, ts, wt, W, order, distinct):
    """Pairs (l, r, g): every event of l before every event of r, span <= W, no shared event if asked."""
    wt, W = _ints(wt), int(W)
    out = set()
    for l, gl, pl_, sl, el in _records(L):
        for r, gr, pr, sr, er in _records(R):
            if gl != gr:
                continue
            if not all(_before(u, w, ts, order) for u in pl_ if u >= 0 for w in pr if w >= 0):
                continue
            if wt[max(el, er)] - wt[min(sl, sr)] > W:
                continue
            if distinct and set(x for x in pl_ if x >= 0) & set(x for x in pr if x >= 0):
                continue
            out.add((l, r, gl))
    return out


def seq_join_where(L, R, ts, wt, W, order, distinct, preds, left_vars, right_vars, table):
    """Twin of kernels.join_filtered.seq_join_where: the pairs of :func:`seq_join` whose events (variable
    ``v`` the left record's column ``left_vars.index(v)``, else the right one's) make every predicate of
    ``preds`` TRUE (:func:`truth`), a predicate with an unbound variable passing; in (partition, right
    record, left record) order."""
    Lpos, Rpos = L[0], R[0]
    out = []
    for l, r, g in seq_join(L, R, ts, wt, W, order, distinct):
        b = {v: int(Lpos[l][k]) for k, v in enumerate(left_vars)}
        b.update({v: int(Rpos[r][k]) for k, v in enumerate(right_vars)})
        if all(any(b[v] < 0 for v in E.variables(p)) or truth(p, b, table) is True for p in preds):
            out.append((l, r, g))
    return sorted(out, key=lambda t: (t[2], t[1], t[0]))


def first_later(Rst, Rtst, lo, hi, x, tx, order):
    """Twin of kernels.join_filtered.first_later_near: the first i in [lo, hi) after a left end at position
    x (time tx) in the order (0: Rst[i] > x, 1: Rtst[i] > tx, 2: Rtst[i] >= tx), else hi; keys ascending."""
    for i in range(lo, hi):
        if (Rst[i] > x) if order == 0 else ((Rtst[i] >= tx) if order == 2 else (Rtst[i] > tx)):
            return i
    return hi


def seq_join_rows(L, R, ts, wt, W, order, distinct, src, key=None):
    """Twin of kernels.final_join.seq_join_rows: the pairs of :func:`seq_join` as rows (row c column ``src[c]``
    of each pair's left record's events then its right one's), sorted as :func:`canonical_order` sorts
    them over those rows taken in the order ``key``."""
    pairs = seq_join(L, R, ts, wt, W, order, distinct)
    rows = [[[int(x) for x in (*L[0][l], *R[0][r])][s] for s in src] for l, r, _ in pairs]
    key = list(range(len(src))) if key is None else [int(c) for c in key]
    return gather_columns(rows, range(len(src)), canonical_order(rows, key))


def reversed_tie(leaves, ts):
    """Twin of the fused kernels' decline under nondecreasing_ts (kernels.final_join_leaves._reversed_tie):
    is there, in one partition, an event of a leaf and an event of the leaf before it at the same time,
    the first before the second in position?"""
    events = [[(g, p[0]) for _, g, p, _, _ in _records(X[:4])] for X in leaves]
    return any(gx == gy and ts[x] == ts[y] and y < x
               for before, after in zip(events, events[1:]) for gx, x in before for gy, y in after)


def seq3_leaf_rows(A, B, C, ts, wt, W, order, src):
    """Twin of kernels.final_join_leaves.seq3_leaf_rows: every (a, b, c) of three leaves' distinct events in
    one partition with a before b before c and max - min of their window times <= W, as rows (row i the
    events of ``src[i]``, 0: a, 1: b, 2: c) sorted as :func:`canonical_order` sorts them."""
    wt, W = _ints(wt), int(W)
    leaves = [[(g, p[0]) for _, g, p, _, _ in _records(X)] for X in (A, B, C)]
    rows = []
    for ga, a in leaves[0]:
        for gb, b in leaves[1]:
            for gc, c in leaves[2]:
                if ga == gb == gc and len({a, b, c}) == 3 and _before(a, b, ts, order) and \
                        _before(b, c, ts, order) and max(wt[a], wt[b], wt[c]) - min(wt[a], wt[b], wt[c]) <= W:
                    rows.append([(a, b, c)[s] for s in src])
    return gather_columns(rows, range(3), canonical_order(rows, range(3)))


def leaf_chains(leaves, ts, wt, W, order):
    """Every chain (one distinct event of each leaf, in leaf order, one partition, each before the next)
    whose max - min of window times is <= W, as tuples of positions, grown an event at a time."""
    wt, W = _ints(wt), int(W)
    events = [[(g, p[0]) for _, g, p, _, _ in _records(X[:4])] for X in leaves]
    chains = [((g,), (p,)) for g, p in events[0]]
    for later in events[1:]:
        chains = [(gs + (g,), ps + (p,)) for gs, ps in chains for g, p in later
                  if g == gs[0] and p not in ps and _before(ps[-1], p, ts, order)]
    return [ps for _, ps in chains if max(wt[p] for p in ps) - min(wt[p] for p in ps) <= W]


def seq_chain_rows(leaves, ts, wt, W, order, src):
    """Twin of kernels.final_join_chain.seq_chain_rows: every chain of the leaves (:func:`leaf_chains`)
    as rows (row i the events of leaf ``src[i]``), sorted by last event, first, then the others in leaf
    order (canonical order when the middle variables' names ascend in leaf order)."""
    chains = sorted(leaf_chains(leaves, ts, wt, W, order), key=lambda c: (c[-1], c[0], *c[1:-1]))
    return [[c[int(s)] for c in chains] for s in src]


def pair_records(L, R, li, ri, ts, wt):
    """Per pair (l, r): (the events of l then of r, first and last position of them all, their ts and wt)."""
    out = []
    for l, r in zip(li, ri):
        start, end = min(int(L[1][l]), int(R[1][r])), max(int(L[2][l]), int(R[2][r]))
        out.append(([int(x) for x in L[0][l]] + [int(x) for x in R[0][r]], start, end,
                    int(ts[start]), int(ts[end]), int(wt[start]), int(wt[end])))
    return out


def pair_columns(Lpos, Rpos, li, ri, where):
    """Per (side, column) of ``where``: that column of each pair's left (side 0) or right record."""
    return [[int(Lpos[l][c]) if side == 0 else int(Rpos[r][c]) for l, r in zip(li, ri)] for side, c in where]


def keep_pairs(li, ri, g, keep):
    """The entries of ``li``, ``ri`` and ``g`` where ``keep`` is True."""
    return tuple([int(x) for x, k in zip(a, keep) if k] for a in (li, ri, g))


def and_join(L, R, ts, wt, W, distinct):
    wt, W = _ints(wt), int(W)
    out = set()
    for l, gl, pl_, sl, el in _records(L):
        for r, gr, pr, sr, er in _records(R):
            if gl != gr or el == er:
                continue
            if wt[max(el, er)] - wt[min(sl, sr)] > W:
                continue
            if distinct and set(x for x in pl_ if x >= 0) & set(x for x in pr if x >= 0):
                continue
            out.add((l, r, gl))
    return out


def and_join_where(L, R, ts, wt, W, distinct, preds, left_vars, right_vars, table):
    """Twin of kernels.and_join_filtered.and_join_where: the pairs of :func:`and_join` whose events make
    every predicate of ``preds`` TRUE as :func:`seq_join_where` tests them, in the AND join's merge order:
    by partition, then by the later record's end (a left record before a right one ending at the same
    event), that record, then the other one."""
    Lpos, Rpos, Lend, Rend = L[0], R[0], L[2], R[2]
    out = []
    for l, r, g in and_join(L, R, ts, wt, W, distinct):
        b = {v: int(Lpos[l][k]) for k, v in enumerate(left_vars)}
        b.update({v: int(Rpos[r][k]) for k, v in enumerate(right_vars)})
        if all(any(b[v] < 0 for v in E.variables(p)) or truth(p, b, table) is True for p in preds):
            out.append((l, r, g))
    return sorted(out, key=lambda t: (t[2], int(Lend[t[0]]), 0, t[0], t[1]) if Lend[t[0]] > Rend[t[1]]
                  else (t[2], int(Rend[t[1]]), 1, t[1], t[0]))



def and_join_rows(L, R, ts, wt, W, distinct, preds, left_vars, right_vars, table, names):
    """Twin of kernels.and_join_filtered.and_join_rows (one key partition): the match table's rows, row c
    variable ``names[c]``'s events, of the pairs :func:`and_join_where` keeps, in canonical order (as
    :func:`canonical_pairs` sorts them, the variables compared in name order)."""
    pairs = and_join_where(L, R, ts, wt, W, distinct, preds, left_vars, right_vars, table)
    vars_ = [*left_vars, *right_vars]
    src = [vars_.index(v) for v in names]
    key = sorted(range(len(names)), key=names.__getitem__)
    return canonical_pairs(L[0], R[0], [l for l, _, _ in pairs], [r for _, r, _ in pairs], src, key)

def _leaf_events(leaf):
    """(index, position, ts, partition) of each event of a leaf (positions, ts, partition offsets)."""
    P, T, goff = leaf
    return [(i, int(P[i]), int(T[i]), g) for g in range(len(goff) - 1) for i in range(goff[g], goff[g + 1])]


def _before_code(p, pt, q, qt, order):
    """before() by order code (0 position, 1 strict_ts, 2 nondecreasing_ts), on positions and times."""
    return p < q if order == 0 else pt < qt if order == 1 else pt <= qt


def earliest_end(leaf, nxt, nxt_end, nxt_ok, order):
    """Per event of ``leaf``: min of ``nxt_end`` over ``nxt``'s events after it in its partition (ok: any)."""
    out = []
    later = _leaf_events(nxt)
    for _, p, t, g in _leaf_events(leaf):
        vals = [int(nxt_end[j]) for j, q, qt, h in later if h == g and nxt_ok[j] and _before_code(p, t, q, qt, order)]
        out.append((min(vals), True) if vals else (None, False))
    return out


def latest_start(prev, prev_start, prev_ok, leaf, order):
    """Per event of ``leaf``: max of ``prev_start`` over ``prev``'s events before it in its partition."""
    out = []
    earlier = _leaf_events(prev)
    for _, q, qt, g in _leaf_events(leaf):
        vals = [int(prev_start[i]) for i, p, t, h in earlier
                if h == g and prev_ok[i] and _before_code(p, t, q, qt, order)]
        out.append((max(vals), True) if vals else (None, False))
    return out


def chain_reach(leaves, measures, order, W):
    """Per leaf, {event index: (latest start, earliest end)} over the chains through it, for the events on
    a chain: one event per leaf, one partition, each before the next, ``wt[last] - wt[first] <= W`` (every
    combination of the leaves' events tried)."""
    events = [_leaf_events(leaf) for leaf in leaves]
    on = [{} for _ in leaves]
    for combo in itertools.product(*events):
        if len({g for *_, g in combo}) != 1:
            continue
        if not all(_before_code(a[1], a[2], b[1], b[2], order) for a, b in zip(combo, combo[1:])):
            continue
        start, end = int(measures[0][combo[0][0]]), int(measures[-1][combo[-1][0]])
        if end - start > int(W):
            continue
        for k, (i, *_) in enumerate(combo):
            s, e = on[k].get(i, (start, end))
            on[k][i] = (max(s, start), min(e, end))
    return on


def candidate_rows(pos, sets, skip, cols):
    """The pairs (record q, event e) of the candidate sets ``sets`` (records ``skip`` marks left out), each
    with the positions a predicate reads: e where ``cols[t]`` is negative, else ``pos[q, cols[t]]``;
    sorted."""
    return sorted((q, e, tuple(e if c < 0 else int(pos[q][c]) for c in cols))
                  for q, s in enumerate(sets) if not skip[q] for e in s)


def killed_where(pos, sets, preds, neg_var, rec_vars, table):
    """Twin of kernels.negation_filtered.killed_where: per record, whether some event of its candidate set
    (``sets``, its own events left out) bound to ``neg_var``, the record's columns to ``rec_vars``, makes
    every predicate of ``preds`` TRUE (:func:`truth`; one with an unbound variable passes)."""
    out = []
    for q, s in enumerate(sets):
        b = {v: int(pos[q][k]) for k, v in enumerate(rec_vars)}
        out.append(any(all(any({**b, neg_var: e}[v] < 0 for v in E.variables(p)) or
                           truth(p, {**b, neg_var: e}, table) is True for p in preds) for e in sorted(s)))
    return out


def negation_candidates(buf, leaf, ts, wt, W, order, bcols, acols, in_conj):
    """Per record of ``buf``: the set of ``leaf`` events in its section 7 range, its own events excluded.

    ``leaf`` is (cand, cgoff); a candidate must be in the record's partition.
    The range is read off the definition: after *every* bound event of the
    ``bcols`` columns (or after the record's first event with ``in_conj``, or
    within W of its last event), before every bound ``acols`` event (or before
    its last event, or within W of its first event).
    """
    cand, cgoff = leaf
    wt, W = _ints(wt), int(W)
    out = []
    for r, g, p, s, e in _records(buf):
        own = {x for x in p if x >= 0}
        before = [p[c] for c in bcols if p[c] >= 0]
        after = [p[c] for c in acols if p[c] >= 0]
        if not before and in_conj:
            before = [s]
        if not after and in_conj:
            after = [e]
        got = set()
        for i in range(cgoff[g], cgoff[g + 1]):
            x = int(cand[i])
            if x in own:
                continue
            if before:
                if not all(_before(u, x, ts, order) for u in before):
                    continue
            elif wt[e] - wt[x] > W:
                continue
            if after:
                if not all(_before(x, w, ts, order) for w in after):
                    continue
            elif wt[x] - wt[s] > W:
                continue
            got.add(x)
        out.append(got)
    return out


# --- predicate interpreter (three-valued) ----------------------------------------


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "num"
    return "str"


def value(e, binding, table):
    if isinstance(e, E.Lit):
        return e.value
    if isinstance(e, E.Attr):
        return table.value(e.attr, binding[e.var])
    if isinstance(e, E.Arith):
        x, y = value(e.left, binding, table), value(e.right, binding, table)
        if x is None or y is None:
            return None
        if e.op == "+":
            return x + y
        if e.op == "-":
            return x - y
        if e.op == "*":
            return x * y
        return None if y == 0 else x / y
    if isinstance(e, E.Unary):
        x = value(e.operand, binding, table)
        return None if x is None else (-x if e.op == "neg" else abs(x))
    return truth(e, binding, table)


def truth(e, binding, table):
    """True / False / None (NULL)."""
    if isinstance(e, E.Cmp):
        x, y = value(e.left, binding, table), value(e.right, binding, table)
        if x is None or y is None:
            return None
        return {"=": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[e.op]
    if isinstance(e, E.BoolOp):
        vals = [truth(i, binding, table) for i in e.items]
        if e.op == "and":
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    if isinstance(e, E.Not):
        v = truth(e.operand, binding, table)
        return None if v is None else not v
    if isinstance(e, E.In):
        x = value(e.operand, binding, table)
        vals = [v.value for v in e.values]
        if x is not None and any(v is not None and v == x for v in vals):
            hit = True
        elif x is None or None in vals:
            hit = None
        else:
            hit = False
        return hit if not e.negated or hit is None else not hit
    if isinstance(e, E.IsNull):
        isnull = value(e.operand, binding, table) is None
        return not isnull if e.negated else isnull
    if isinstance(e, (E.Lit, E.Attr)):
        return value(e, binding, table)
    raise NotImplementedError(type(e).__name__)


# --- whole-pattern twin ------------------------------------------------------------


def _window(window, table):
    """(measure per position, inclusive bound)."""
    if isinstance(window, CountWindow):
        return list(range(table.n)), window.n - 1
    if isinstance(window, Unbounded):
        return _ints(table.ts), math.inf
    assert isinstance(window, TimeWindow)
    amount = window.amount
    if window.unit is not None:
        amount = amount * UNIT_NS[window.unit] / table.time_unit_ns
    return _ints(table.ts), math.floor(amount)


def _events_of(b):
    return [p for p in b.values() if p is not None]


def _negations(node, before=(), after=(), in_conj=False):
    """(negated EventVar, positive names ordered before it, after it, has an AND ancestor) per negation."""
    if isinstance(node, Neg):
        return [(node.var, [v.name for n in before for v in _vars(n)],
                 [v.name for n in after for v in _vars(n)], in_conj)]
    if isinstance(node, EventVar):
        return []
    out = []
    for i, item in enumerate(node.items):
        if isinstance(node, Seq):
            out += _negations(item, before + node.items[:i], node.items[i + 1:] + after, in_conj)
        else:
            out += _negations(item, before, after, in_conj or isinstance(node, Conj))
    return out


def _killed(b, negs, conj, table, ts, wt, W, order):
    """Does some event kill match ``b`` through one of ``negs``? (section 7, by scanning every event)."""
    events = _events_of(b)
    first, last = min(events), max(events)
    equivs = [c for c in conj if isinstance(c, E.Equiv)]
    for var, before, after, in_conj in negs:
        mine = [c for c in conj if not isinstance(c, E.Equiv) and var.name in E.variables(c)
                and all(b[u] is not None for u in E.variables(c) if u != var.name)]
        lower = [b[v] for v in before if b[v] is not None] or ([first] if in_conj else [])
        upper = [b[v] for v in after if b[v] is not None] or ([last] if in_conj else [])
        for e in range(table.n):
            if e in events:
                continue
            if var.types is not None:
                tc = int(table.type_code[e])
                if tc < 0 or table.type_names[tc] not in var.types:
                    continue
            if lower and not all(_before(u, e, ts, order) for u in lower):
                continue
            if not lower and wt[last] - wt[e] > W:
                continue
            if upper and not all(_before(e, w, ts, order) for w in upper):
                continue
            if not upper and wt[e] - wt[first] > W:
                continue
            key_ok = True
            for c in equivs:
                x = table.value(c.attr, e)
                if x is None or x != table.value(c.attr, events[0]) or (
                        c.value is not None and x != c.value.value):
                    key_ok = False
            if not key_ok:
                continue
            bb = {**b, var.name: e}
            if all(truth(c, bb, table) is True for c in mine):
                return True
    return False


def evaluate(pattern, table, order="position"):
    """All matches of a SEQ/AND/OR pattern with negations, as a sorted list of binding tuples.

    Variable order = structure order of the positive variables.
    """
    ts = [int(t) for t in table.ts]
    body = _normal(pattern.body)
    names = [v.name for v in _vars(body)]
    negs = _negations(body)
    negated = {v.name for v, *_ in negs}
    wt, W = _window(pattern.window, table)
    conj = E.conjuncts(pattern.where)
    singles = {v: [c for c in conj if not isinstance(c, E.Equiv) and E.variables(c) == {v}] for v in names}

    def ok_partial(b):
        ev = _events_of(b)
        if len(set(ev)) != len(ev):
            return False
        return not ev or max(wt[p] for p in ev) - min(wt[p] for p in ev) <= W

    def rec(node):
        if isinstance(node, EventVar):
            out = []
            for p in range(table.n):
                if node.types is not None:
                    tc = int(table.type_code[p])
                    if tc < 0 or table.type_names[tc] not in node.types:
                        continue
                b = {node.name: p}
                if all(truth(c, b, table) is True for c in singles[node.name]):
                    out.append(b)
            return out
        if isinstance(node, Disj):
            allv = [v.name for v in _vars(node)]
            out = []
            for item in node.items:
                for b in rec(item):
                    out.append({**{v: None for v in allv}, **b})
            return out
        acc = [{}]
        for item in node.items:
            if isinstance(item, Neg):
                continue
            nxt = []
            for b2 in rec(item):
                for b1 in acc:
                    b = {**b1, **b2}
                    if not ok_partial(b):
                        continue
                    if isinstance(node, Seq) and not all(
                            _before(u, w, ts, order) for u in _events_of(b1) for w in _events_of(b2)):
                        continue
                    nxt.append(b)
            acc = nxt
        return acc

    out = []
    for b in rec(body):
        if not ok_partial(b):
            continue
        good = True
        for c in conj:
            if isinstance(c, E.Equiv):
                vals = [table.value(c.attr, p) for p in _events_of(b)]
                if any(v is None for v in vals) or len(set(vals)) > 1 or (
                        c.value is not None and vals and vals[0] != c.value.value):
                    good = False
            elif E.variables(c) & negated:
                continue  # a negation condition (section 7), not a filter on the positive match
            elif all(b[v] is not None for v in E.variables(c)) and truth(c, b, table) is not True:
                good = False
            if not good:
                break
        if good and negs and _killed(b, negs, conj, table, ts, wt, W, order):
            good = False
        if good:
            out.append(tuple(b[v] for v in names))
    return sorted(out, key=lambda t: tuple(-1 if x is None else x for x in t))


def _normal(node):
    """The normal form of section 5: same-kind operators merged, one-item operators replaced by their item."""
    if not isinstance(node, (Seq, Conj, Disj)):
        return node
    items = []
    for c in map(_normal, node.items):
        items += c.items if type(c) is type(node) else [c]
    return items[0] if len(items) == 1 else type(node)(tuple(items))


def _vars(node):
    """Positive variables in structure order."""
    if isinstance(node, EventVar):
        return [node]
    if isinstance(node, Neg):
        return []
    return [v for c in node.items for v in _vars(c)]


# --- event-table building twins (jitcep.kernels.encode) ------------------------------


def stable_argsort(keys):
    """Indices sorted by key, ties in index order."""
    return sorted(range(len(keys)), key=lambda i: (keys[i], i))


def dense_codes(values, valid=None):
    """Rank of each value among the distinct valid values (-1 where invalid), and their number."""
    ok = [valid is None or bool(valid[i]) for i in range(len(values))]
    distinct = sorted({v for v, o in zip(values, ok) if o})
    rank = {v: r for r, v in enumerate(distinct)}
    return [rank[v] if o else -1 for v, o in zip(values, ok)], len(distinct)


def first_occurrence_codes(values, valid=None):
    """Codes numbered by first occurrence (-1 where invalid), and the first index of each code."""
    codes, first, seen = [], [], {}
    for i, v in enumerate(values):
        if valid is not None and not valid[i]:
            codes.append(-1)
            continue
        if v not in seen:
            seen[v] = len(first)
            first.append(i)
        codes.append(seen[v])
    return codes, first


def run_view_codes(values, names, valid=None):
    """Twin of kernels.encode.run_view_codes: per value the index of the name it equals, -1 for any other
    value and where invalid (None is invalid too)."""
    at = {x: j for j, x in enumerate(names)}
    return [-1 if v is None or (valid is not None and not valid[i]) else at.get(v, -1)
            for i, v in enumerate(values)]


def group_with_keys(codes, n_codes, keys):
    """Indices grouped by code (index order inside), their keys, offsets."""
    order, offsets = counting_sort(codes, n_codes)
    return order, ([keys[i] for i in order] if keys is not None else []), offsets


def group_with_key_runs(codes, n_codes, keys, G, kept):
    """Indices grouped by code, each code's by key (keys below 0 first, as one group; index order
    inside), their keys, the code offsets, and for each code of ``kept`` the G + 1 offsets where its
    keys start and its group ends."""
    order, offsets, key_offsets = [], [0], {}
    for c in range(n_codes):
        mine = [i for i, x in enumerate(codes) if x == c]
        order += [i for i in mine if keys[i] < 0]
        starts = []
        for g in range(G):
            starts.append(len(order))
            order += [i for i in mine if keys[i] == g]
        if c in kept:
            key_offsets[c] = starts + [len(order)]
        offsets.append(len(order))
    return order, [keys[i] for i in order], offsets, key_offsets


def leaf_by_key(cand, ckeys, G, keep):
    """Kept candidates with a non-null key, grouped by key (stable), and the key offsets."""
    kept = [(k, c) for c, k, ok in zip(cand, ckeys, keep) if ok and k >= 0]
    groups = [[c for k, c in kept if k == g] for g in range(G)]
    offsets = [0]
    for grp in groups:
        offsets.append(offsets[-1] + len(grp))
    return [c for grp in groups for c in grp], offsets


# --- Kleene (kleene="maximal", semantics section 6.2): twins of jitcep.kernels.kleene ------------


def closure_runs(offsets, nmin, nmax):
    """Twin of kernels.kleene.closure_runs: (src, start, length) of the lists the bounds allow."""
    out = []
    for r in range(len(offsets) - 1):
        o, q = int(offsets[r]), int(offsets[r + 1] - offsets[r])
        if nmax is None:
            if q >= nmin:
                out.append((r, o, q))
            continue
        if nmin == 0:
            out.append((r, o, 0))
        lists = [(r, o + s, k) for k in range(max(nmin, 1), nmax + 1) for s in range(q - k + 1)]
        out.extend(sorted(lists, key=lambda x: (x[1], x[2])))  # by first member, then length (a prefix first)
    return out


def segment_aggregate(off, vals, valid, func):
    """Twin of kernels.kleene.segment_aggregate: per list, the aggregate of its valid values or None."""
    out = []
    for j in range(len(off) - 1):
        xs = [vals[i].item() for i in range(off[j], off[j + 1]) if valid[i]]
        if not xs:
            out.append(None)
        else:
            out.append({"sum": sum, "min": min, "max": max, "avg": lambda v: sum(v) / len(v)}[func](xs))
    return out


def run_aggregates(start, length, vals, valid, func):
    """Twin of kernels.kleene.run_aggregates: per run, the reference's aggregate of its valid values (exact
    Python int sums, NULL outside int64; floats added in list order from 0.0) or None."""
    out = []
    for a, k in zip(start, length):
        xs = [vals[i].item() for i in range(a, a + k) if valid[i]]
        if not xs:
            out.append(None)
        elif func in ("min", "max"):
            out.append(min(xs) if func == "min" else max(xs))
        elif func == "sum" and isinstance(xs[0], int):
            out.append(sum(xs) if -(1 << 63) <= sum(xs) < (1 << 63) else None)
        else:
            t = 0.0
            for x in xs:
                t += float(x)
            out.append(t / len(xs) if func == "avg" else t)
    return out


def subsequences(offsets, members, ts, strict, nmin, nmax, follows=None, wt=None, W=None, anchored=False):
    """Twin of kernels.kleene.subsequences (kleene="all", section 6.1): every (record, list) with
    nmin <= len <= nmax, members in order, strictly later ts under strict, every two consecutive
    members (member indexes i < j of record r) in ``follows`` when given (a set of (r, i, j)), and
    every two members within ``W`` of each other in ``wt`` when given; ``anchored``: starting with the
    record's first member."""
    out = []
    for r in range(len(offsets) - 1):
        mem = list(members[offsets[r]:offsets[r + 1]])
        top = len(mem) if nmax is None else min(nmax, len(mem))
        for k in range(nmin, top + 1):
            for combo in itertools.combinations(range(len(mem)), k):
                if strict and any(ts[mem[a]] >= ts[mem[b]] for a, b in zip(combo, combo[1:])):
                    continue
                if follows is not None and any((r, a, b) not in follows for a, b in zip(combo, combo[1:])):
                    continue
                if anchored and (not combo or combo[0] != 0):
                    continue
                if wt is not None and any(int(wt[mem[b]]) - int(wt[mem[a]]) > W
                                          for a in combo for b in combo):
                    continue
                out.append((r, tuple(mem[a] for a in combo)))
    return out


def subsequence_counts(offsets, members, nmin, nmax, cap, total_cap, wt=None, W=None, anchored=False):
    """Twin of kernels.kleene.subsequence_counts: (lists, elements, over) of :func:`subsequences` (no
    iterative conjuncts, no strict_ts), enumerating them as the kernel's counting pass does: per record
    the empty list first, unchecked, then each further list checked against ``cap`` (its record's lists)
    before ``total_cap`` (all lists); a record with no non-empty list possible (kmax = 0 or nmin > kmax)
    against ``cap`` only.  ``over``: the record past ``cap``, -2 past ``total_cap``, else -1."""
    t = e = 0
    for r in range(len(offsets) - 1):
        q = int(offsets[r + 1] - offsets[r])
        kmax = q if nmax is None else min(nmax, q)
        lists = [m for _, m in subsequences([0, q], members[offsets[r]:offsets[r + 1]], None, False,
                                            nmin, nmax, wt=wt, W=W, anchored=anchored)]
        n_r = 0
        if nmin == 0:
            t, n_r = t + 1, 1
        if kmax == 0 or nmin > kmax:
            if n_r > cap:
                return t, e, r
            continue
        for m in lists:
            if not m:
                continue
            t, e, n_r = t + 1, e + len(m), n_r + 1
            if n_r > cap:
                return t, e, r
            if t > total_cap:
                return t, e, -2
    return t, e, -1


def iteration_lists(offsets, istart, iend, itstart, itend, iwst, iwen, rwst, rwen, seq, strict, W, nmin, nmax,
                    follows=None, first_ok=None):
    """Twin of kernels.kleene.iteration_lists (a Kleene group's lists, section 6.1): every (record, list of
    candidate indexes) with nmin <= len <= nmax, indexes ascending; under ``seq`` each candidate starts
    after the previous one ends (strict: ts too); consecutive pairs (r, i, j) in ``follows`` when given
    (a set); the first in ``first_ok`` when given; ``W`` not None: the record and every candidate of the
    list within W of each other."""
    out = []
    for r in range(len(offsets) - 1):
        o, q = int(offsets[r]), int(offsets[r + 1] - offsets[r])
        top = q if nmax is None else min(nmax, q)
        for k in range(nmin, top + 1):
            for combo in itertools.combinations(range(q), k):
                c = [o + j for j in combo]
                if seq and any(istart[b] <= iend[a] or (strict and itstart[b] <= itend[a])
                               for a, b in zip(c, c[1:])):
                    continue
                if follows is not None and any((r, a, b) not in follows for a, b in zip(combo, combo[1:])):
                    continue
                if first_ok is not None and c and not first_ok[c[0]]:
                    continue
                if W is not None and c and max([int(rwen[r])] + [int(iwen[j]) for j in c]) - \
                        min([int(rwst[r])] + [int(iwst[j]) for j in c]) > W:
                    continue
                out.append((r, tuple(c)))
    return out


def outside_lists(rec, ev, off, lpos):
    """Twin of kernels.kleene.outside_lists: event ev[i] is not in record rec[i]'s list."""
    return [int(e) not in set(lpos[off[r]:off[r + 1]].tolist()) for r, e in zip(rec, ev)]


def gather_lists(members, start, length):
    """Twin of kernels.kleene.gather_lists: the slices members[start[j]:start[j] + length[j]], as CSR lists."""
    lists = [[int(p) for p in members[s:s + k]] if k else [] for s, k in zip(start, length)]
    return [0, *itertools.accumulate(len(x) for x in lists)], [p for x in lists for p in x]


def anchored_members(rec, members, first):
    """Twin of kernels.kleene.anchored_members: per record its anchor (if bound), then its members after
    the anchor, sorted; as CSR lists."""
    lists = []
    for r, a in enumerate(first):
        later = sorted(int(p) for rr, p in zip(rec, members) if rr == r and p > a)
        lists.append(([int(a)] if a >= 0 else []) + later)
    return [0, *itertools.accumulate(len(x) for x in lists)], [p for x in lists for p in x]


def lists_within(src, off, lpos, rstart, rend, wt, W):
    """Twin of kernels.kleene.lists_within: the span of each record with its list (smallest to largest
    position, a closure's list ascending) on the measure wt, at most W."""
    out = []
    for j, r in enumerate(src):
        span = [int(rstart[r]), int(rend[r]), *(int(p) for p in lpos[off[j]:off[j + 1]])]
        out.append(int(wt[max(span)]) - int(wt[min(span)]) <= W)
    return out


def every_passes(off, ok, first=0):
    """Twin of kernels.kleene.every_passes: all of a list's verdicts from its first-th member on."""
    return [all(bool(v) for v in ok[off[j] + first:off[j + 1]]) for j in range(len(off) - 1)]


def count_codes(codes, k):
    """Twin of kernels.grouping.count_codes: per code 0..k-1 its events, slot k every other code."""
    out = [0] * (k + 1)
    for c in codes:
        out[c if 0 <= c < k else k] += 1
    return out


# --- output policies and freeze (semantics section 9): twins of jitcep.kernels.policies ---------------


def non_overlapping(part, lo, hi):
    """Kept matches (indexes, in the given order): per partition, first position after the last kept one's last."""
    last: dict = {}
    kept = []
    for i, (g, a, b) in enumerate(zip(_ints(part), _ints(lo), _ints(hi))):
        if g not in last or a > last[g]:
            last[g] = b
            kept.append(i)
    return kept


def consume_once(events_per_match):
    """Kept matches (indexes): ``events_per_match[i]`` is match i's list of (slot, position); a match is
    kept iff none of its (slot, position) pairs is in an earlier kept match."""
    used: set = set()
    kept = []
    for i, evs in enumerate(events_per_match):
        if used.isdisjoint(evs):
            used.update(evs)
            kept.append(i)
    return kept


def freeze_active(pos, stream, wt, W):
    """Active candidates (indexes): per stream, a candidate is active unless the last active one q has
    ``wt[p] - wt[q] <= W`` (Python ints: exact)."""
    last: dict = {}
    kept = []
    for i, (p, s) in enumerate(zip(_ints(pos), _ints(stream))):
        w = int(wt[p])
        if s in last and w - last[s] <= W:
            continue
        last[s] = w
        kept.append(i)
    return kept


def next_candidates(last, first, g, cand, goff, ts, wt, W, strict_ts):
    """Per run, the candidates of its partition it may select next: after ``last`` (a later ts when
    ``strict_ts``), within ``W`` of ``first`` in ``wt`` (Python ints: exact)."""
    out = []
    for lr, fr, gr in zip(_ints(last), _ints(first), _ints(g)):
        out.append([int(e) for e in cand[int(goff[gr]):int(goff[gr + 1])]
                    if (int(ts[e]) > int(ts[lr]) if strict_ts else e > lr) and int(wt[e]) - int(wt[fr]) <= W])
    return out


def contiguous_next(last, first, g, succ, slot, ts, wt, W, strict_ts):
    out = []
    for lr, fr, gr in zip(_ints(last), _ints(first), _ints(g)):
        p = int(succ[lr])
        ok = p >= 0 and int(slot[p]) == gr and int(wt[p]) - int(wt[fr]) <= W \
            and (not strict_ts or int(ts[p]) > int(ts[lr]))
        out.append(p if ok else -1)
    return out


def successors(order, offsets, n):
    succ = [-1] * n
    for k in range(len(offsets) - 1):
        group = _ints(order[int(offsets[k]):int(offsets[k + 1])])
        for a, b in zip(group, group[1:]):
            succ[a] = b
    return succ


UNKNOWN, NO_EVENT = -2, 2**63 - 1


def round_ranges(alive, reach, nxt, kleene):
    """(low, top, j, want) per run: A = the states alive (low: min A, 0 if none), range [low, min(reach,
    S - 1)], j = low + 1 when low is Kleene and j is in the range but not in A, want[s] the range's states
    but j with nxt UNKNOWN."""
    S = len(kleene)
    low, top, j, want = [], [], [], [[] for _ in range(S)]
    for r in range(len(reach)):
        A = [s for s in range(S) if alive[r][s]]
        lo = A[0] if A else 0
        hi = min(int(reach[r]), S - 1)
        b = lo + 1 if kleene[lo] and lo + 1 <= hi and lo + 1 not in A else -1
        low.append(lo)
        top.append(hi)
        j.append(b)
        for s in range(S):
            want[s].append(lo <= s <= hi and s != b and int(nxt[r][s]) == UNKNOWN)
    return low, top, j, want


def next_relevant(nxt, low, top, rows, skip):
    return [min([int(nxt[r][s]) for s in range(int(low[r]), int(top[r]) + 1) if s != skip and nxt[r][s] >= 0],
                default=NO_EVENT) for r in _ints(rows)]


def advance(alive, nxt, low, top, S):
    """(cursor, sel, live, alive', nxt') of one round, from the sets: p the first next candidate of the
    range, the selecting states those with p, T the last of them, A' = ([low, T] - selecting) | (A after T)."""
    cursor, sel, live, alive2, nxt2 = [], [[] for _ in range(S)], [], [], []
    for r in range(len(alive)):
        rng = range(int(low[r]), int(top[r]) + 1)
        p = min([int(nxt[r][s]) for s in rng if nxt[r][s] >= 0], default=NO_EVENT)
        chosen = {s for s in rng if p < NO_EVENT and int(nxt[r][s]) == p}
        A = {s for s in range(S) if alive[r][s]}
        new = set()
        if chosen:
            T = max(chosen)
            new = {s for s in A if s > T} | {s for s in range(int(low[r]), T + 1) if s not in chosen}
        cursor.append(p)
        for s in range(S):
            sel[s].append(s in chosen)
        live.append(bool(new))
        alive2.append([s in new for s in range(S)])
        nxt2.append([UNKNOWN if int(v) <= p else int(v) for v in nxt[r]])
    return cursor, sel, live, alive2, nxt2


def first_at_or_after(cand, lo, hi, stop):
    return [next((i for i in range(int(a), int(b)) if cand[i] >= st), int(b))
            for a, b, st in zip(lo, hi, stop)]


def fork_runs(pos, count, tail, first, g, rows, e, s, k, base):
    """The new buffers as lists of rows, field by field (the order of
    :func:`jitcep.kernels.selection.fork_runs`' result)."""
    S = len(pos[0]) if len(pos) else 0
    at = s if k >= 0 else s + 1
    out = [[] for _ in range(10)]
    for i, (r, ev) in enumerate(zip(_ints(rows), _ints(e))):
        p, c, t = [int(x) for x in pos[r]], [int(x) for x in count[r]], [int(x) for x in tail[r]]
        if k >= 0:
            c[k] += 1
            t[k] = base + i
        else:
            p[s] = ev
        f = int(first[r])
        for field, v in zip(out, (p, c, t, [x == at for x in range(S)], at, [UNKNOWN] * S, ev if f < 0 else f,
                                  ev, ev, int(g[r]))):
            field.append(v)
    return out


# --- the planner's sample: twin of jitcep.kernels.sampling ----------------------------------------------


def draw_sample(type_code, n_types, n_blocks, k, m, seed, typed=True):
    """Twin of kernels.sampling.draw_sample, with Python ints: splitmix64, Floyd's k distinct blocks of
    n_blocks (sorted), m uniform positions as (top 53 bits) / 2^53 * n, and the type codes drawn per code
    (none counted unless typed)."""
    mask = (1 << 64) - 1
    state = seed

    def below(bound):
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        return min(int(float(z >> 11) / float(1 << 53) * bound), bound - 1)

    chosen = []
    for j in range(n_blocks - k, n_blocks):
        t = below(j + 1)
        chosen.append(j if t in chosen else t)
    draws = [below(len(type_code)) for _ in range(m)]
    hits = [0] * (n_types + 1)
    for d in draws if typed else ():
        c = int(type_code[d])
        hits[c if 0 <= c < n_types else n_types] += 1
    return sorted(chosen), draws, hits


def block_sample(type_code, ts, starts, L):
    """Twin of kernels.sampling.block_sample: per position of the blocks (every position when starts is None),
    as lists: the position, its block's index, its type code and ts."""
    at = [(p // L, p) for p in range(len(type_code))] if starts is None else \
        [(b, s * L + j) for b, s in enumerate(starts) for j in range(L)]
    return [p for _, p in at], [b for b, _ in at], [int(type_code[p]) for _, p in at], [int(ts[p]) for _, p in at]


def extend_tuples(T, lo, hi, s, cnt, w, wt, pos, limit, rel):
    """Twin of kernels.sampling.extend_tuples: lists of columns (each a tuple of sample indices), lo, hi."""
    out, olo, ohi = [], [], []
    for t, cols in enumerate(T):
        for col in w[s[t]:s[t] + cnt[t]]:
            a, b = min(lo[t], wt[col]), max(hi[t], wt[col])
            if b - a > limit or col in cols:
                continue
            if any(r > 0 and not pos[p] < pos[col] or r < 0 and not pos[col] < pos[p] for p, r in zip(cols, rel)):
                continue
            out.append(tuple(cols) + (col,))
            olo.append(a)
            ohi.append(b)
    return out, olo, ohi


def candidates(tc, allowed, key_ok):
    """Twin of kernels.sampling.candidates: per variable (row of allowed), the indices of allowed types with
    a key, and the allowed count; as (list of index lists, list of counts)."""
    idx, in_type = [], []
    for row in allowed:
        T = len(row) - 1
        ok = [row[c if 0 <= c < T else T] for c in tc]
        idx.append([i for i, a in enumerate(ok) if a and (key_ok is None or key_ok[i])])
        in_type.append(sum(ok))
    return idx, in_type


def window_ranges(first, lo, hi, w, group, wt, reach, by_group):
    """Twin of kernels.sampling.window_ranges: the candidates sorted by (group, index) when by_group, and
    per partial tuple the (start, count) of those in its first event's group with hi - reach <= wt <= lo + reach."""
    order = sorted(w, key=lambda i: (group[i], i)) if by_group else list(w)
    s, cnt = [], []
    for t, f in enumerate(first):
        s.append(sum(1 for i in order if (group[i], wt[i]) < (group[f], hi[t] - reach)))
        cnt.append(sum(1 for i in order if group[i] == group[f] and hi[t] - reach <= wt[i] <= lo[t] + reach))
    return order, s, cnt


def key_codes(values, valid, positions):
    """Twin of kernels.sampling.key_codes: the values at positions (all when None) less their least, -1 where
    not valid; and their greatest less their least."""
    at = range(len(values)) if positions is None else positions
    got = [int(values[p]) for p in at]
    lo = min(got, default=0)
    return ([-1 if valid is not None and not valid[p] else x - lo for p, x in zip(at, got)],
            max(got, default=0) - lo)


def pair_counts(codes):
    """Twin of kernels.sampling.pair_counts: (m, sum of squared counts, largest count) of the codes >= 0,
    None when the largest code is 16 m or more (and m >= 2)."""
    kept = [c for c in codes if c >= 0]
    m = len(kept)
    if m < 2:
        return m, 0, 0
    if max(kept) >= 16 * m:
        return None
    counts = {}
    for c in kept:
        counts[c] = counts.get(c, 0) + 1
    return m, sum(c * c for c in counts.values()), max(counts.values())


def sample_with_key(type_code, ts, n_types, n_blocks, k, m, seed, L, every_block, key_values, key_valid, m_key,
                    allowed, typed=True):
    """Twin of kernels.sampling.sample_with_key: the twins above composed, as the estimate called them one
    by one (draws, blocks, key codes at the blocks' events of a type some variable takes (-1 at the others)
    then the first m_key draws, candidates, pair counts); without a key (key_values None) no codes, every
    key present and no pair counts."""
    starts, draws, hits = draw_sample(type_code, n_types, n_blocks, k, m, seed, typed)
    blocks = block_sample(type_code, ts, None if every_block else starts, L)
    if key_values is None:
        return (starts, draws, hits), blocks, ([], 0), candidates(blocks[2], allowed, None), None
    read = _read_keys(blocks[2], allowed)
    got, span = key_codes(key_values, key_valid, [p for p, r in zip(blocks[0], read) if r] + draws[:m_key])
    codes = _spread(got, read)
    b = len(blocks[0])
    cands = candidates(blocks[2], allowed, [c >= 0 for c in codes[:b]])
    return (starts, draws, hits), blocks, (codes, span), cands, pair_counts(codes[b:])


def _read_keys(tc, allowed):
    """Per sampled block event whether some variable (row of allowed) takes its type: where the key is read."""
    return [any(row[c if 0 <= c < len(row) - 1 else len(row) - 1] for row in allowed) for c in tc]


def _spread(codes, read):
    """The codes of the events read, -1 at the block events not read, then the draws' codes."""
    it = iter(codes)
    return [next(it) if r else -1 for r in read] + list(it)


def sample_with_views(type_code, ts, n_types, n_blocks, k, m, seed, L, every_block, strings, m_key, allowed,
                      typed=True):
    """Twin of kernels.sampling.sample_with_views, from the strings themselves (by position; None: null):
    as sample_with_key, the key codes numbering the strings read in first-occurrence
    order (-1: null), span their number less one; None when one of them is longer than 12 bytes."""
    starts, draws, hits = draw_sample(type_code, n_types, n_blocks, k, m, seed, typed)
    blocks = block_sample(type_code, ts, None if every_block else starts, L)
    read = _read_keys(blocks[2], allowed)
    at = [p for p, r in zip(blocks[0], read) if r] + draws[:m_key]
    if any(strings[p] is not None and len(strings[p].encode()) > 12 for p in at):
        return None
    first = {}
    codes = _spread([-1 if strings[p] is None else first.setdefault(strings[p], len(first)) for p in at], read)
    b = len(blocks[0])
    cands = candidates(blocks[2], allowed, [c >= 0 for c in codes[:b]])
    return (starts, draws, hits), blocks, (codes, max(len(first) - 1, 0)), cands, pair_counts(codes[b:])


def canonical_order(P, cols, koff=None, kseq=None, llo=None, lhi=None, rows=None):
    """Indices of the rows of P (of P[rows] when given) sorted stably by (last, first, P[:, cols]..., then
    the tuple kseq[koff[i]:koff[i + 1]]: Python compares tuples lexicographically, a prefix first), first /
    last over the entries of P[:, cols] that are >= 0 and llo / lhi."""
    if rows is not None:
        P = [P[r] for r in rows]
    n = len(P)

    def key(i):
        bound = [int(P[i][c]) for c in cols if P[i][c] >= 0]
        if llo is not None:
            bound += [int(x) for x in (llo[i], lhi[i]) if 0 <= x < 2**63 - 1]
        first, last = (min(bound), max(bound)) if bound else (2**63 - 1, -1)
        lists = () if koff is None else tuple(int(x) for x in kseq[koff[i]:koff[i + 1]])
        return (last, first, *(int(P[i][c]) for c in cols), lists)
    return sorted(range(n), key=key)


def gather_columns(P, cols, perm):
    """Row c: column cols[c] of P's rows perm (all rows when perm is None)."""
    rows = range(len(P)) if perm is None else perm
    return [[int(P[r][c]) for r in rows] for c in cols]


def canonical_pairs(Lpos, Rpos, li, ri, src, key=None):
    """Row c: column src[c] of each pair's row (the left record's columns, then the right one's), the
    rows sorted as :func:`canonical_order` sorts them over those columns taken in the order ``key``."""
    rows = [[int(x) for x in (*Lpos[l], *Rpos[r])] for l, r in zip(li, ri)]
    rows = [[row[s] for s in src] for row in rows]
    key = list(range(len(src))) if key is None else [int(c) for c in key]
    return gather_columns(rows, range(len(src)), canonical_order(rows, key))


def list_bounds(off, pos, lo, hi):
    """Twin of kernels.list_columns.list_bounds (either way, ``tail_ascending`` or not): (lo, hi) as lists, each
    lowered / raised to its list's min / max."""
    lists = [[int(p) for p in pos[off[j]:off[j + 1]]] for j in range(len(off) - 1)]
    return ([min([int(a), *x]) for a, x in zip(lo, lists)], [max([int(b), *x]) for b, x in zip(hi, lists)])


def list_key(off, pos, unbound, lo, hi):
    """Twin of kernels.list_columns.list_key: (each list's part of the key as a tuple: 1 / 0 for unbound / bound
    when ``unbound`` is given, the members, -1; lo, hi as list_bounds leaves them)."""
    parts = [(*((1 if unbound[j] else 0,) if unbound is not None else ()),
              *(int(p) for p in pos[off[j]:off[j + 1]]), -1) for j in range(len(off) - 1)]
    return (parts, *list_bounds(off, pos, lo, hi))


def take_lists(off, pos, idx):
    """Twin of kernels.list_columns.take_lists: the lists idx, as (offsets, members) lists."""
    lists = [[int(p) for p in pos[off[k]:off[k + 1]]] for k in idx]
    return [0, *itertools.accumulate(len(x) for x in lists)], [p for x in lists for p in x]


def lists_in_end_order(P, rows, cols, off, pos, before=(), after=()):
    """Twin of kernels.closure_order.lists_in_end_order: (single columns, offsets, members, held lists) as lists,
    the lists (list j of record rows[j], with its record's held lists ``before`` / ``after``: one CSR
    list per record each, the variables named before / after the closure's) sorted as
    :func:`canonical_order` sorts matches by their list key, each variable's part its members and -1."""
    n = len(rows)
    held = [*before, *after]
    parts = [[int(p) for p in pos[off[j]:off[j + 1]]] for j in range(n)]
    rec_lists = [[[int(p) for p in hp[ho[r]:ho[r + 1]]] for (ho, hp) in held] for r in rows]
    keys = [tuple(x for h in rl[:len(before)] for x in (*h, -1)) + (*parts[j], -1)
            + tuple(x for h in rl[len(before):] for x in (*h, -1)) for j, rl in enumerate(rec_lists)]
    members = [parts[j] + [p for h in rec_lists[j] for p in h] for j in range(n)]
    lo = [min(x, default=2**63 - 1) for x in members]
    hi = [max(x, default=-1) for x in members]
    koff = [0, *itertools.accumulate(len(k) for k in keys)]
    perm = canonical_order(P, cols, koff, [x for k in keys for x in k], lo, hi, rows=rows)
    return (gather_columns(P, cols, [rows[j] for j in perm]), *take_lists(off, pos, perm),
            [take_lists(ho, hp, [rows[j] for j in perm]) for ho, hp in held])


def input_rows(parts, row):
    """Every position of ``parts`` end to end as its input row (``row[p]``, p itself without ``row``), 0 for -1."""
    return [0 if p < 0 else (int(p) if row is None else int(row[p])) for part in parts for p in part]


def take(values, idx):
    return [values[i] for i in idx]


def row_numbers(n):
    """Twin of kernels.gather.row_numbers."""
    return list(range(n))


def most_per_window(type_code, ts, allowed, W):
    """Twin of kernels.window.most_per_window, with Python ints: per row of ``allowed``, the events of its
    types and, unless one window of W holds them all, the most in bins b and b + 1 of width W + 1 counted
    from the row's first event."""
    count, most = [], []
    for row in allowed:
        T = len(row) - 1
        mine = [int(t) for c, t in zip(type_code, ts) if row[int(c) if 0 <= c < T else T]]
        count.append(len(mine))
        if not mine or mine[-1] - mine[0] <= W:
            most.append(len(mine))
            continue
        per_bin = {}
        for t in mine:
            b = (t - mine[0]) // (W + 1)
            per_bin[b] = per_bin.get(b, 0) + 1
        most.append(max(c + per_bin.get(b + 1, 0) for b, c in per_bin.items()))
    return count, most


def _splitmix(seed):
    """The splitmix64 outputs of ``seed`` (Steele, Lea & Flood), as Python ints."""
    mask = (1 << 64) - 1
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        yield z ^ (z >> 31)


def choose(n, k, seed):
    """Twin of kernels.sampling.choose: Floyd's k distinct of 0..n-1 (t = top 53 bits / 2^53 * (j + 1)
    for j = n - k .. n - 1, j when t is taken), ascending."""
    out = _splitmix(seed)
    taken = set()
    for j in range(n - k, n):
        t = min(int(float(next(out) >> 11) / float(1 << 53) * (j + 1)), j)
        taken.add(j if t in taken else t)
    return sorted(taken)


def below_share(m, p, seed):
    """Twin of kernels.sampling.below_share: per flag, the next output's top 53 bits / 2^53 < p."""
    out = _splitmix(seed)
    return [float(next(out) >> 11) / float(1 << 53) < p for _ in range(m)]
