"""SEQ and AND joins (ZStream Algorithms 1 and 3): pairs of records within the window, then predicates.

The kernels (:mod:`jitcep.kernels.join`) pair the two input buffers' records
of each key partition within the window; the join's predicates are then
tested on the candidate pairs by the generated predicate function, and the
surviving pairs become records sorted by (partition, end), each carrying
its input records' lists (a closure collected below the join) unread; at
the root they become the match table, and where nothing is left to test on
them the join writes the matches' rows itself, with no pairs between.  A
join with an empty left input is empty: its right subtree is never run (a
long SEQ whose partial matches die out early costs what its live prefix
costs).
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..budget import nbytes
from ..errors import ExplosionError
from ..kernels import and_join, seq_join
from ..kernels.alloc import counted_at_most
from ..kernels.final_join import seq_join_rows
from ..kernels.final_join_chain import seq_chain_rows
from ..kernels.final_join_leaves import seq3_leaf_rows
from ..kernels.join import driven_by_left, keep_pairs, pair_columns, pair_records, too_many_pairs
from ..kernels.kleene import gather_lists
from ..kernels.order import canonical_pairs
from ..matches import MatchTable, name_order
from ..pattern import expr as E
from ..plan.operators import Scan, SeqJoin, list_vars
from . import and_join_where, join_where
from .buffer import Buffer, empty_buffer, offsets


def run(node, state, execute) -> Buffer:
    scans = _leaf_chain(node, state)
    if scans is None:
        return _joined(node, state, execute)
    leaves, out = _from_leaves(node, scans, state, execute)
    if out is not None:
        return out
    # past a cap or at an empty leaf: the joins run over the leaves read (as a reduction's survivors are)
    added = [id(s) for s in scans if id(s) not in state.reduced]
    state.reduced.update((id(s), b) for s, b in zip(scans, leaves))
    try:
        return _joined(node, state, execute)
    finally:
        for key in added:
            state.reduced.pop(key, None)


def _joined(node, state, execute) -> Buffer:
    """The join's output made from its inputs' records: pairs, then records or the match table."""
    L = execute(node.left)
    if not len(L):
        return empty_buffer(node.vars, state.G, list_vars(node))
    R = execute(node.right)
    # a pair costs its three indexes (in arrays grown by doubling) and then its output record, built
    # with about as many temporaries: the join stops at the pairs that fit beside its inputs
    fit = state.memory.records(_pair_bytes(len(L.vars), len(R.vars)), L, R)
    options = state.options
    cap = min(options.max_partials, fit)
    seq = isinstance(node, SeqJoin)
    try:
        # the final join with nothing left to test on its pairs: the matches' rows straight away
        written = _rows_written(node, L, R, state, cap) if _writes_rows(node, L, R, state) else None
        if written is not None:
            return written
        if join_where.in_loop(node, L, R, state):
            li, ri, g = join_where.pairs(node, L, R, state, cap)
        elif seq and _in_chunks(node, L, R, state):
            li, ri, g = _seq_join_in_chunks(node, L, R, state, cap)
        elif seq:
            li, ri, g = _tested(node, L, R, state, lambda: seq_join(
                L.timed(), R.timed(), state.table.ts, state.wt, state.W, options.order,
                node.overlap and options.order == "nondecreasing_ts", cap, node.driver, state.threads))
        elif and_join_where.in_loop(node, L, R, state):
            table = and_join_where.rows(node, L, R, state, cap) if and_join_where.writes_rows(node, L, R, state) \
                else None
            if table is not None:
                return table
            li, ri, g = and_join_where.pairs(node, L, R, state, cap)
        else:
            li, ri, g = _tested(node, L, R, state, lambda: and_join(
                L.timed(), R.timed(), state.table.ts, state.wt, state.W, node.overlap, cap, state.threads))
    except ExplosionError:
        if fit < options.max_partials:
            raise state.memory.error(f"the {'SEQ' if seq else 'AND'} join of {', '.join(L.vars)} "
                                     f"with {', '.join(R.vars)}")
        raise
    if node is state.final and not (L.lists or R.lists or state.plan.list_vars):
        return _match_table(L, R, li, ri, state)
    # one pass over the pairs (jitcep.kernels.join.pair_records), not a NumPy gather per field
    pos, start, end, tstart, tend, wstart, wend = pair_records(L.timed(), R.timed(), li, ri, state.threads)
    buf = Buffer(L.vars + R.vars, pos, start, end, offsets(g, state.G), tstart, tend, wstart, wend,
                 *_carried(state, L, R, li, ri))
    if len(end) > 1 and seq and options.order == "nondecreasing_ts":
        # with ties the left record may end after the right one: restore (partition, end) order
        if not bool(np.all((g[1:] > g[:-1]) | ((g[1:] == g[:-1]) & (end[1:] >= end[:-1])))):
            buf = buf.take(np.lexsort((end, g)), buf.goff)
    return buf


def _from_leaves(node, scans, state, execute):
    """(leaves, out): the leaves of ``scans`` (:func:`_leaf_chain`) as read, and the match table written
    straight from them (:func:`_leaf_triples`, :func:`_leaf_chains`), or None past a cap, under
    ``nondecreasing_ts`` at a reversed tie (the kernels' rows are position order's) or at an empty
    leaf: at an empty leaf there is no match, but the joins the plan runs before they meet it may still
    make pairs, and past a cap raise; they run over the leaves read and read the others only as they need them."""
    leaves = []
    for s in scans:
        leaves.append(execute(s))
        if not len(leaves[-1]):
            return leaves, None
    return leaves, (_leaf_triples if len(scans) == 3 else _leaf_chains)(node, scans, leaves, state)


def _leaf_chain(node, state):
    """The Scans, in SEQ order, when ``node`` is the final join of a SEQ of k >= 3 of them joined by SEQ joins
    with no predicate left on any join's pairs: the matches are then written straight from the leaves
    (:func:`_leaf_triples`, :func:`_leaf_chains`).  With several key partitions only where the plan would
    write the rows (``node.rows``: the kernels then pass over an array of one entry per table position, as
    :func:`_writes_rows`' kernel does); with one, always (their work is the leaves' and the rows').  From
    four leaves on only where the middle variables' names ascend in SEQ order (the kernel writes each end's
    chains in SEQ order, canonical order compares them by name: docs/semantics.md section 11).  Not under
    ``explain(analyze=True)``, which shows each operator's records.  Under ``nondecreasing_ts`` the kernels
    decline where a tie may bind events out of position order, and the joins run.  A
    reduction's test (``extends``) only drops records that extend to no match: not needed here."""
    if not (node is state.final and isinstance(node, SeqJoin) and (node.rows or state.G == 1) and not state.profiled
            and not state.plan.list_vars):
        return None
    scans = _scans_of(node)
    if scans is None or len(scans) < 3 or len(scans) != len(state.plan.variables):
        return None
    middle = [s.var for s in scans[1:-1]]
    return scans if middle == sorted(middle) else None


def _scans_of(node):
    """The Scans under ``node`` in SEQ order when it is a tree of SEQ joins with no predicate, else None."""
    if isinstance(node, Scan):
        return [node]
    if not isinstance(node, SeqJoin) or node.predicates:
        return None
    left, right = _scans_of(node.left), _scans_of(node.right)
    return None if left is None or right is None else left + right


def _leaf_triples(node, scans, bufs, state):
    """The final join of ``SEQ(a, b, c)`` over three leaves (:func:`_leaf_chain`) as the match table,
    written by :func:`jitcep.kernels.final_join_leaves.seq3_leaf_rows` under the caps the two joins
    would have had (their pairs' and records' memory as :func:`_joined` sizes it); None past a cap (the joins
    then run one by one, and say which cap) or where the kernel declines a tie (``nondecreasing_ts``)."""
    A, B, C = bufs
    # the plan's first join: (a, b) left-deep, (b, c) right-deep; the final join's other input is a leaf
    bc = scans[0] is node.left
    first, leaf = ((B, C), A) if bc else ((A, B), C)
    options, memory = state.options, state.memory
    inner_cap = min(options.max_partials, memory.records(_pair_bytes(1, 1), *first))
    # beside the final join's leaf, the first join's records would be live (64 bytes each: two position
    # columns and six arrays of times and bounds): the matches are capped at what fits beside the leaf
    # alone, and checked with those records below
    per = _pair_bytes(2, 1)
    cap = min(options.max_partials, memory.records(per, leaf))
    names = state.plan.variables
    src = _rows_of(scans, names)
    try:
        out = seq3_leaf_rows(A.timed(), B.timed(), C.timed(), state.table.ts, state.wt, state.W, options.order,
                             inner_cap, cap, src, state.table.n, state.threads, inner_bc=bc)
    except ExplosionError:
        return None
    if out is None:
        return None
    rows, times, pairs = out
    if rows.shape[1] and rows.shape[1] > (memory.limit - nbytes(leaf) - 64 * pairs) // per:
        return None
    return MatchTable(rows.shape[1], dict(zip(names, rows)), block=rows, bound=True, times=times)


def _leaf_chains(node, scans, bufs, state):
    """The final join of ``SEQ(a1, ..., ak)`` over k >= 4 leaves (:func:`_leaf_chain`) as the match table,
    written by :func:`jitcep.kernels.final_join_chain.seq_chain_rows`, or None where it declines a tie
    (``nondecreasing_ts``) or when the plan's joins might pass a cap: each join's candidate pairs are at
    most the chains over its run of leaves (exactly, with no reduction thinning its inputs), and its share of ``max_memory`` is at least what is left beside its
    inputs' records bounded above (:func:`_held_at_most`).  Where a bound passes a cap the joins run and
    decide (and say which cap)."""
    joins, span = {}, {}  # each join's run of leaves -> its inputs, parts first; each node's run by id

    def walk(n, first: int) -> int:  # the leaves under n are first, first + 1, ...: returns the last
        last = first if isinstance(n, Scan) else walk(n.right, walk(n.left, first) + 1)
        span[id(n)] = (first, last)
        if not isinstance(n, Scan):
            joins[(first, last)] = (n.left, n.right)
        return last

    walk(node, 0)
    options, memory = state.options, state.memory
    leaf_of = {id(s): b for s, b in zip(scans, bufs)}

    def held(child, counts) -> int:
        if isinstance(child, Scan):
            return nbytes(leaf_of[id(child)])
        return _held_at_most(counts[span[id(child)]], len(child.vars), state.G)

    def cap_of(run_, counts) -> int:
        L, R = joins[run_]
        per = _pair_bytes(len(L.vars), len(R.vars))
        return min(options.max_partials, max(0, (memory.limit - held(L, counts) - held(R, counts)) // per))

    names = state.plan.variables
    src = _rows_of(scans, names)
    out = seq_chain_rows([b.timed() for b in bufs], state.table.ts, state.wt, state.W, options.order,
                         list(joins), cap_of, src, state.table.n, state.threads)
    if out is None:
        return None
    rows, times, _ = out
    return MatchTable(rows.shape[1], dict(zip(names, rows)), block=rows, bound=True, times=times)


def _rows_of(scans, names) -> np.ndarray:
    """For each variable of ``names`` (the match table's rows), its leaf's index among ``scans``: the fused
    kernels' ``src``."""
    order = [s.var for s in scans]
    return np.array([order.index(v) for v in names], np.int64)


def _held_at_most(records: int, width: int, G: int) -> int:
    """At most the bytes :func:`jitcep.budget.nbytes` counts for a join's output of ``records`` records of
    ``width`` events: its position matrix and six arrays of bounds and times, each counted at most as
    :func:`jitcep.kernels.alloc.counted_at_most` says, and its partition offsets."""
    arrays = [8 * records * width] + [8 * records] * 6
    return sum(counted_at_most(a) for a in arrays) + 8 * (G + 1)


def _pair_bytes(left_width: int, right_width: int) -> int:
    """The bytes per candidate pair that a join's memory share is divided by to bound its pairs (as
    :func:`_joined` sizes them): the pair's own arrays and the record of ``left_width + right_width``
    events it may become."""
    return 8 * (6 + 2 * (left_width + right_width + 6))


def _tested(node, L: Buffer, R: Buffer, state, made):
    """The candidate pairs ``made()`` returns, ``(li, ri, g)``, that pass the join's tests: the reduction's
    (a partial record that extends to no chain above), an AND join's orderings, then its predicates one
    by one.  The pairs are made here, so that each cut frees the pairs before it: a caller holding them
    kept the candidates alive through the tests, and the larger peak made every run fault in fresh
    pages (hierarchy x100: 2,400 page faults and 5 ms of system time per run against 110)."""
    li, ri, g = made()
    def columns(vs):  # the surviving pairs' events of variables ``vs``, a row each (one pass over the pairs)
        return pair_columns(L.pos, R.pos, li, ri, [(0, L.vars.index(v)) if v in L.vars else (1, R.vars.index(v))
                                                   for v in vs], state.threads)

    def column(v):
        return columns([v])[0]

    if node.extends and len(li):  # a partial record that extends to no chain of the reduction above
        keep = state.reach.extendable(L, R, li, ri, column, state.W)
        li, ri, g = keep_pairs(li, ri, g, keep, state.threads)
    if not isinstance(node, SeqJoin) and node.sequence and len(li):
        # every ordering of the AND join at once: its variables' columns in one pass over the pairs and
        # one cut (a pass and a cut per ordering was most of a seq_len24 run's joins: ~260 Python rounds)
        vs = sorted({v for pair in node.sequence for v in pair})
        at = dict(zip(vs, columns(vs)))
        keep = np.ones(len(li), np.bool_)
        for x, y in node.sequence:
            keep &= _in_order(at[x], at[y], state.table.ts, state.options.order)
        li, ri, g = keep_pairs(li, ri, g, keep, state.threads)
    for pred in node.predicates:
        if not len(li):
            break
        keep = state.mask_where_bound(pred, columns(sorted(E.variables(pred))))
        li, ri, g = keep_pairs(li, ri, g, keep, state.threads)
    return li, ri, g


def _in_chunks(node, L: Buffer, R: Buffer, state) -> bool:
    """Does this SEQ join make and test its pairs a chunk of right records at a time
    (:func:`_seq_join_in_chunks`)?  When it has tests to thin its pairs, one key partition, right records
    driving, and more right records than a first chunk holds."""
    return (bool(node.predicates or node.extends) and len(L.goff) == 2 and len(R) > 2 * _FIRST_CHUNK
            and not driven_by_left(L.timed(), R.timed(), node.driver))


_FIRST_CHUNK = 1 << 11
"""Right records in the first chunk of :func:`_seq_join_in_chunks`; the next ones are sized on the pairs
per right record seen so far, for about ``config.JOIN_CHUNK_PAIRS`` pairs each."""


def _seq_join_in_chunks(node, L: Buffer, R: Buffer, state, cap: int):
    """The pairs of a SEQ join (one partition, right records driving) that pass its tests (:func:`_tested`),
    made and tested about ``config.JOIN_CHUNK_PAIRS`` pairs at a time: the right records
    ``[r0, r1)`` with the left ones from the first within the window of ``r0`` (ZStream 4.3's earliest
    allowed timestamp), through the kernel's partition offsets, so no array is copied.

    Taken where the predicates cannot run in the join's loop (:mod:`.join_where`: a reduction test made
    on the candidates first, or fewer right records than pay for a generated function); where they keep
    few pairs, the pairs are never all held at once: each chunk's arrays stay in cache and only the
    survivors are kept, and the kernel runs once per chunk on arrays sized from the chunks before it
    instead of twice on the whole (its first arrays, sized by the right records, were outgrown).  The
    same pairs in the same (right record, left record) order as one call, and more than ``cap``
    candidate pairs in all is still an ExplosionError."""
    Lt, Rt = L.timed(), R.timed()
    Lwen, Rwen = Lt[7], Rt[7]
    l1, m = int(L.goff[1]), len(R)
    distinct = node.overlap and state.options.order == "nondecreasing_ts"
    W = int(state.W)
    parts, made, r0, step = [], 0, 0, _FIRST_CHUNK
    while r0 < m:
        r1 = min(m, r0 + step)
        low = int(Rwen[r0]) - W  # left records ending before it pair with no right record from r0 on
        l0 = 0 if low <= int(Lwen[0]) else int(np.searchsorted(Lwen[:l1], low))
        Lc = (*Lt[:3], np.array([l0, l1], np.int64), *Lt[4:])
        Rc = (*Rt[:3], np.array([r0, r1], np.int64), *Rt[4:])

        def chunk(Lc=Lc, Rc=Rc, left=cap - made, pairs=made * (r1 - r0) * 5 // (4 * r0) + 16 if r0 else 0):
            # the chunk's candidate pairs, counted against the cap; arrays sized at the rate seen so far
            nonlocal made
            try:
                out = seq_join(Lc, Rc, state.table.ts, state.wt, state.W, state.options.order, distinct, left,
                               node.driver, state.threads, pairs=pairs)
            except ExplosionError:
                raise too_many_pairs("a SEQ join", cap) from None  # the whole join's cap, as one call says it
            made += len(out[0])
            return out

        parts.append(_tested(node, L, R, state, chunk))
        # the next chunk: about JOIN_CHUNK_PAIRS pairs at the rate seen so far
        step = max(_FIRST_CHUNK, config.JOIN_CHUNK_PAIRS * r1 // max(made, 1))
        r0 = r1
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))


def _carried(state, L: Buffer, R: Buffer, li: np.ndarray, ri: np.ndarray) -> tuple[dict, dict]:
    """(lists, unbound) of the pairs' records: each input record's lists (a closure collected below
    this join, :mod:`jitcep.plan.rules.kleene_collection`) copied to every pair holding it, like its
    position columns; the join reads none of them."""
    lists, unbound = {}, {}
    for side, idx in ((L, li), (R, ri)):
        for v, (off, lpos) in side.lists.items():
            length = np.diff(off)[idx]
            state.memory.check(8 * (int(length.sum()) + len(idx)), f"the lists of Kleene variable {v!r}",
                               L, R, li, ri)
            lists[v] = gather_lists(lpos, off[:-1][idx], length)
        unbound.update({v: u[idx] for v, u in side.unbound.items()})
    return lists, unbound


def _match_table(L: Buffer, R: Buffer, li: np.ndarray, ri: np.ndarray, state) -> MatchTable:
    """The matches that are the pairs ``(li, ri)``: each variable's column written once, in canonical order,
    from the two inputs' records (:func:`jitcep.kernels.order.canonical_pairs`), with no output records
    between: nobody reads a final record's span, times or partition."""
    names, vars_ = state.plan.variables, L.vars + R.vars
    cols = canonical_pairs(L.pos, R.pos, li, ri, np.array([vars_.index(v) for v in names], np.int64),
                           state.table.n, np.array(name_order(names), np.int64))
    return MatchTable(len(li), dict(zip(names, cols)), block=cols)


def _rows_written(node, L: Buffer, R: Buffer, state, cap: int) -> MatchTable | None:
    """The match table the final join writes (:func:`jitcep.kernels.final_join.seq_join_rows`), or None
    where under ``nondecreasing_ts`` a left record ends after its right event (a tie): its pairs are
    then made and ordered as any join's."""
    names, order = state.plan.variables, state.options.order
    src = np.array([(L.vars + R.vars).index(v) for v in names], np.int64)
    out = seq_join_rows(L.timed(), R.timed(), state.table.ts, state.wt, state.W, order,
                        node.overlap and order == "nondecreasing_ts", cap, src, state.table.n,
                        np.array(name_order(names), np.int64), state.threads)
    if out is None:
        return None
    rows, bound = out
    return MatchTable(rows.shape[1], dict(zip(names, rows)), block=rows, bound=bound)


def _writes_rows(node, L: Buffer, R: Buffer, state) -> bool:
    """Does this join write the match table's rows itself, in canonical order
    (:func:`jitcep.kernels.final_join.seq_join_rows`)?  When it is the final SEQ join, with no predicate,
    ordering or reduction test left for its pairs, no list variable and every column a variable (the
    rows hold all of a match's events, so its first and last are theirs), one input a leaf (the kernel
    orders each end's rows through it), right records driving (the kernel is right-driven); under
    ``nondecreasing_ts`` (where with ties a left record may end after its right one, so that an end's
    matches are not those of the right records ending there) a right leaf, the kernel declining at such
    a pair (:func:`_rows_written`).  Any number of key partitions: the kernel merges them by end.  Not when the plan says the pairs are cheaper
    (``node.rows``: the kernel's passes over arrays of one entry per table position outweigh few rows)."""
    Lt, Rt = L.timed(), R.timed()
    return (node is state.final and isinstance(node, SeqJoin) and node.rows
            and not (node.predicates or node.extends)
            and not (L.lists or R.lists or state.plan.list_vars)
            and len(L.vars) + len(R.vars) == len(state.plan.variables) and (Lt[1] is Lt[2] or Rt[1] is Rt[2])
            and (state.options.order != "nondecreasing_ts" or Rt[1] is Rt[2])
            and not driven_by_left(Lt, Rt, node.driver))


def _in_order(px: np.ndarray, py: np.ndarray, ts: np.ndarray, order: str) -> np.ndarray:
    """before(x, y) of docs/semantics.md section 1 for each pair of positions, True where one is unbound
    (an OR branch not taken: the ordering, like any conjunct, does not apply)."""
    unbound = (px < 0) | (py < 0)
    if order == "position":
        return unbound | (px < py)
    tx, ty = ts[np.maximum(px, 0)], ts[np.maximum(py, 0)]
    return unbound | ((tx < ty) if order == "strict_ts" else (tx <= ty))
