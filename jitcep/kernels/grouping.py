"""One-pass grouping by small integer codes (type codes, key codes).

Two rules shape these kernels (issue 3, measured at 10^7 events):

* Large outputs (O(n) or O(matches)) are allocated by NumPy in the Python
  wrapper (:mod:`jitcep.kernels.alloc` says why) and filled by the kernel;
  an upper bound is allocated and a view returned.
* The grouping loops are branch-free: every element is written, to its
  group's fill pointer or to one scratch slot past the output, and the
  pointer advances by the keep flag.  A branch on "kept?" mispredicts on
  every mixed input (3x slower with 12 of 32 types kept).  The type grouping
  first compacts the kept records the same way (reading keys and values in
  the same sequential pass) and splits only those.
* Optional inputs (a mask, a key column) are passed as None rather than as a
  one-element array read with stride 0: Numba compiles a specialisation
  without the read, and the strided read alone made these loops 1.3-3x slower.

The codes and keys these kernels index tables with are checked in the same
pass that reads them (a separate pass would cost as much as the grouping,
:mod:`jitcep.kernels.checks`): a code is clamped into the table before the
lookup and its running maximum reported, so a bad input raises instead of
writing outside the table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from ..threads import even_ranges, run_ranges
from .alloc import empty, optional_mask, scratch
from .checks import check_lengths, check_offsets, fail


@njit(**NUMBA_FLAGS)
def _fill_pointers(cnt, adv):
    """Offsets of the kept slots and their fill pointers; a dropped slot's pointer is the scratch slot m.

    ``cnt[s]`` / ``adv[s]``: elements in slot s and whether slot s is kept;
    slot 0 (code -1 or a dropped element) is never kept.
    """
    S = len(cnt)
    offsets = np.zeros(S, dtype=np.int64)
    for s in range(1, S):
        offsets[s] = offsets[s - 1] + cnt[s] * adv[s]
    m = offsets[S - 1]
    fill = np.full(S, m, dtype=np.int64)
    for s in range(1, S):
        if adv[s]:
            fill[s] = offsets[s - 1]
    return offsets, fill


@njit(**NUMBA_FLAGS)
def _counting_sort(codes, n_codes, order):
    # slot c + 1 per code, slot 0 for negative codes: each slot has its own pointer.  A code past the
    # last slot stops the count before anything is written (the wrapper raises on offsets None).
    cnt = np.zeros(n_codes + 1, dtype=np.int64)
    for c in codes:
        s = max(c, -1) + 1
        if s > n_codes:
            return None
        cnt[s] += 1
    adv = np.ones(n_codes + 1, dtype=np.int64)
    adv[0] = 0
    offsets, fill = _fill_pointers(cnt, adv)
    for i in range(len(codes)):
        s = max(codes[i], -1) + 1
        f = fill[s]
        order[f] = i
        fill[s] = f + adv[s]
    return offsets


def counting_sort(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable grouping of indices by ``codes`` in O(n + n_codes); negative codes are dropped.

    Returns ``order`` (int64 indices i grouped by codes[i], each group in index
    order) and ``offsets`` (n_codes + 1): group c is ``order[offsets[c]:offsets[c+1]]``.
    Invariant: ``codes < n_codes``, checked by the counting pass
    (KernelInputError otherwise).
    """
    codes = np.ascontiguousarray(codes)
    n_codes = int(n_codes)
    if n_codes < 0:
        raise fail("counting_sort", f"n_codes = {n_codes} < 0")
    order = empty(len(codes) + 1, np.int64)  # NumPy-allocated (jitcep.kernels.alloc), + scratch
    offsets = _counting_sort(codes, n_codes, order)
    if offsets is None:
        raise fail("counting_sort", f"a code is not below n_codes = {n_codes}")
    return order[:offsets[-1]], offsets


_LOW = np.int64(0xFFFFFFFF)


@njit(**NUMBA_FLAGS)
def _compact(codes, tab, keys, kbase, valid, vals, tmp, rank, i0, i1):
    # Pass 1 over the events [i0, i1), read through slices that start at i0 (:func:`_compact_run`);
    # ``keys`` / ``valid`` None compile specialisations without the read (a strided read costs a
    # third more).  Returns (kept records, largest code).  The records are written through the
    # work space's flat view, two words each: indexing the (m, 2) array multiplied m by its row
    # stride per record (0.89 -> 0.83 ms at 10^6 events without keys, 1.15 -> 1.03 with them).
    cs, vs, out, rk = codes[i0:i1], vals[i0:i1], tmp.reshape(-1)[2 * i0:], rank[i0:]
    if keys is None:
        if valid is None:
            return _compact_run(cs, tab, None, kbase, None, vs, out, rk, i0)
        return _compact_run(cs, tab, None, kbase, valid[i0:i1], vs, out, rk, i0)
    if valid is None:
        return _compact_run(cs, tab, keys[i0:i1], kbase, None, vs, out, rk, i0)
    return _compact_run(cs, tab, keys[i0:i1], kbase, valid[i0:i1], vs, out, rk, i0)


@njit(**NUMBA_FLAGS)
def _compact_run(cs, tab, ks, kbase, vd, vs, out, rk, i0):
    # Reads one range's events once, sequentially, and writes the record of each kept code to
    # ``out`` (the range's own slice of the work space, flat: it keeps at most len(cs) records, so ranges
    # compact side by side without meeting).  A branch-free compaction: every record is written, the
    # count advances by the keep flag; reading keys and values here streams them instead of
    # gathering them at the kept indices later.  Indices count from 0 within the slices, which the
    # compiler knows are not negative: indexing the whole arrays from i0 made it test every index
    # for wraparound, and the loop took 1.8x as long.  A code indexes ``tab`` through one unsigned
    # min: code c is slot c + 1, a code below -1 wraps past the table and a code past the codes
    # lands in the last slot (0: dropped); the largest code is returned, so the wrapper refuses a
    # code past the table without a branch here.
    last = np.uint64(len(tab) - 1)
    hi = np.int64(-1)
    m = 0
    for j in range(len(cs)):
        c = np.int64(cs[j])
        hi = max(hi, c)
        r = tab[min(np.uint64(c + 1), last)]  # 1 + rank of a kept code, 0 for the others
        g = 0 if ks is None else np.int64(ks[j]) - kbase
        out[2 * m] = (g << 32) | (i0 + j)
        out[2 * m + 1] = vs[j]
        rk[m] = r
        m += (r != 0) if vd is None else (r != 0) & vd[j]
    return m, hi


@njit(**NUMBA_FLAGS)
def _count_ranks(rank, j0, j1, cnt):
    # pass 2, per slice of kept records: how many of each rank (a rank is unsigned: no wraparound test)
    for r in rank[j0:j1]:
        cnt[r] += 1


@njit(**NUMBA_FLAGS)
def _rank_fill(cnt, tab):
    # The code offsets and each slice's fill pointer per rank: code c's records are those of slice 0,
    # then slice 1, ... (index order, as the slices are consecutive ranges of indices)
    S = cnt.shape[0]
    offsets = np.zeros(len(tab), dtype=np.int64)
    fill = np.zeros(cnt.shape, dtype=np.int64)
    pos = 0
    for c in range(len(tab) - 1):  # kept codes in code order: their ranks ascend
        r = tab[c + 1]
        if r:
            for s in range(S):
                fill[s, r] = pos
                pos += cnt[s, r]
        offsets[c + 1] = pos
    return offsets, fill


@njit(**NUMBA_FLAGS)
def _scatter_ranks(tmp, rank, j0, j1, fill, recs):
    # pass 3, per slice: split its records into code runs (a few write streams, in index order);
    # the slice is read from index 0 and the fill pointers as unsigned, so no index is tested for
    # wraparound (_compact_run)
    src, rk = tmp[j0:j1], rank[j0:j1]
    for j in range(len(rk)):
        r = rk[j]
        f = np.uint64(fill[r])
        recs[f, 0] = src[j, 0]
        recs[f, 1] = src[j, 1]
        fill[r] = f + np.uint64(1)


@njit(**NUMBA_FLAGS, inline="always")
def _slot(rank, key, G):
    # a record's (rank, key) slot: each kept code's block of G + 1, key k at k + 1 and a key below 0
    # (null) at the block's first; a key past the keys is clamped into the block (the wrapper
    # refuses it from the largest key, returned by the counting pass)
    return (np.int64(rank) - 1) * (G + 1) + min(max(key, -1), G - 1) + 1


@njit(**NUMBA_FLAGS)
def _count_slots(tmp, rank, j0, j1, G, cnt):
    # pass 2 by (rank, key), per slice of kept records (rank >= 1): how many in each slot; the
    # largest key
    src, rk = tmp[j0:j1], rank[j0:j1]
    kmax = np.int64(-1)
    for j in range(len(rk)):
        k = src[j, 0] >> 32
        kmax = max(kmax, k)
        cnt[_slot(rk[j], k, G)] += 1
    return kmax


@njit(**NUMBA_FLAGS)
def _slot_fill(cnt):
    # Each slice's fill pointer per slot and the slots' starts (one past the last: the end): slot
    # t's records are those of slice 0, then slice 1, ... (index order, as the slices are consecutive
    # ranges of indices); slots in order are the kept codes in code order, each by key
    S, T = cnt.shape
    fill = np.empty((S, T), dtype=np.int64)
    starts = np.empty(T + 1, dtype=np.int64)
    pos = 0
    for t in range(T):
        starts[t] = pos
        for s in range(S):
            fill[s, t] = pos
            pos += cnt[s, t]
    starts[T] = pos
    return fill, starts


@njit(**NUMBA_FLAGS)
def _scatter_slots(tmp, rank, j0, j1, G, fill, recs):
    # pass 3 by (rank, key), per slice: one write stream per slot (as _leaf_scatter's per key)
    src, rk = tmp[j0:j1], rank[j0:j1]
    for j in range(len(rk)):
        s = _slot(rk[j], src[j, 0] >> 32, G)
        f = np.uint64(fill[s])
        recs[f, 0] = src[j, 0]
        recs[f, 1] = src[j, 1]
        fill[s] = f + np.uint64(1)


@njit(**NUMBA_FLAGS)
def _set_record_keys(recs, keys):
    for j in range(len(recs)):
        recs[j, 0] = (np.int64(keys[j]) << 32) | (recs[j, 0] & _LOW)


SLOTS_MAX = 1 << 10
"""The most (code, key) slots :func:`group_with_key_runs` scatters into.  One scatter into that many write
streams costs less than a scatter by code (a few streams) and then one by key per code; into more it
costs more: 3 codes x 1001 keys scattered once took 0.61 ms at 125,000 records, against 0.15 ms by code
and 0.34 ms by key for the three (seq_len3), while 4 codes x 101 keys took 1.40 ms against 0.95 + 0.90
(zstream_q6_rate1-100)."""


def group_with_key_runs(codes: np.ndarray, n_codes: int, keys: np.ndarray, G: int, values: np.ndarray,
                        keep: np.ndarray | None = None, valid: np.ndarray | None = None, key_base: int = 0,
                        threads: int = 1):
    """:func:`group_with_keys` with each code's records grouped by key too: ``(recs, offsets, key_offsets)``.

    Inside a code's group the records come in (key, index) order, the keys
    below 0 (null) first, so that a leaf of one type without a filter is its
    records split (:func:`leaf_of_run`), not counted and scattered by key
    again (:func:`leaf_by_key`).  ``key_offsets`` (kept codes in code order x
    G + 1): row j, for the j-th kept code, gives where each key's records
    start in ``recs``, and its last entry where the code's end.  The two
    passes after the compaction count and scatter by (code, key) instead of by
    code; when the slots outnumber :data:`SLOTS_MAX`, they are grouped by
    code alone and ``key_offsets`` is None.  ``keys`` holds key codes below
    ``G`` (``keys[index] - key_base``; a kept index's key past them is a
    KernelInputError), or a negative one for a null key.
    """
    return _group(codes, n_codes, keys, values, keep, valid, key_base, None, threads, int(G))


def group_with_keys(codes: np.ndarray, n_codes: int, keys: np.ndarray | None, values: np.ndarray,
                    keep: np.ndarray | None = None, valid: np.ndarray | None = None, key_base: int = 0,
                    key_of=None, threads: int = 1):
    """:func:`counting_sort` that carries each index's key and a value: ``(recs, offsets)``.

    ``recs`` (m x 2 int64) holds one record per kept index, grouped by code,
    index order inside a group: column 0 packs ``key << 32 | index`` (key 0
    without keys; unpack with :func:`record_fields`), column 1 is
    ``values[index]``.  One 16-byte record per index means one write stream
    per group (three separate arrays took 2.4x as long with 24 groups kept).
    ``keep`` (bool per code) drops the codes nobody asked for: their groups
    are empty.  ``valid`` (bool per index) drops the indices whose key is
    null (they join nothing).  The record's key is ``keys[index] - key_base``
    (an integer column's values serve as key codes without a copy).  One
    sequential pass over ``codes``, ``keys`` and ``values``: later per-group
    work reads them contiguously instead of gathering them at scattered
    indices (a cache miss each).

    ``key_of`` (with ``keys`` None): a function giving the key codes of the
    kept indices (int64, ascending), called once between the passes, for
    keys that exist only for the kept indices (a String key coded on the
    leaves' types alone): it reads them in index order, not grouped.

    ``threads``: the indices are cut into up to that many equal ranges
    (:func:`jitcep.threads.even_ranges`), each compacted into its own slice,
    counted and split side by side; each slice's records of a code follow
    the previous slice's, so the records are the same on any count (a
    parallel counting sort).

    Invariants: ``codes < n_codes`` (negative codes are dropped), checked in
    the first pass (KernelInputError); ``keys``, ``values`` and ``valid`` hold
    one entry per index and ``key_of`` one per kept index, checked here.  The
    records' keys are not indexes here: :func:`leaf_by_key` checks them
    against its key count; the caller keeps ``keys[i] - key_base`` of a kept
    index in [0, 2**31) so that it packs into 32 bits.
    """
    return _group(codes, n_codes, keys, values, keep, valid, key_base, key_of, threads, None)[:2]


def _group(codes, n_codes, keys, values, keep, valid, key_base, key_of, threads, G):
    """:func:`group_with_keys` (``G`` None) and :func:`group_with_key_runs` (``G`` the key count)."""
    n = len(codes)
    if n >= 2**31:
        raise ValueError("group_with_keys handles fewer than 2**31 events")
    check_lengths("group_with_keys", n, keys=keys, values=values, valid=valid)
    n_codes = int(n_codes)
    kept = np.ones(n_codes, dtype=np.bool_) if keep is None else np.asarray(keep, dtype=np.bool_)[:n_codes]
    if len(kept) != n_codes:
        raise fail("group_with_keys", f"keep has {len(kept)} entries for {n_codes} codes")
    n_kept = int(kept.sum())
    # tab[0]: code -1, dropped; tab[c + 1]: code c; the last slot (0, dropped) takes the codes past n_codes
    tab = np.zeros(n_codes + 2, dtype=np.uint8 if n_kept < 255 else np.int64)
    tab[1:n_codes + 1][kept] = np.arange(1, n_kept + 1)
    # work space for every event's record (+ one written past the kept ones), reused from call to
    # call (kernels.alloc.scratch); the kept records, counted by pass 1, in an array of their size
    tmp = scratch("group_with_keys.records", 2 * (n + 1), np.int64).reshape(n + 1, 2)
    rank = scratch("group_with_keys.rank", n + 1, tab.dtype)
    keys = None if keys is None else np.ascontiguousarray(keys)
    args = (np.ascontiguousarray(codes), tab, keys, np.int64(key_base), optional_mask(valid),
            np.ascontiguousarray(values, dtype=np.int64), tmp, rank)
    ranges = even_ranges(n, threads)
    got = run_ranges(lambda i0, i1: _compact(*args, i0, i1), ranges)
    hi = max(hi for _, hi in got)
    if hi >= n_codes:
        raise fail("group_with_keys", f"code {hi} is not below n_codes = {n_codes}")
    slices = [(i0, i0 + int(k)) for (i0, _), (k, _) in zip(ranges, got)]  # each range's kept records
    m = sum(j1 - j0 for j0, j1 in slices)
    if key_of is not None:  # keys None: column 0 is the index
        kc = np.ascontiguousarray(key_of(np.concatenate([tmp[j0:j1, 0] for j0, j1 in slices])))
        check_lengths("group_with_keys", m, **{"key_of(kept indices)": kc})
        at = 0
        for j0, j1 in slices:
            _set_record_keys(tmp[j0:j1], kc[at:at + j1 - j0])
            at += j1 - j0
    each = [(s, s + 1) for s in range(len(slices))]  # run_ranges over the slices by number
    if G is not None and keys is not None and G > 0 and n_kept * (G + 1) <= SLOTS_MAX:
        return _by_key(tmp, rank, slices, each, G, kept, m)
    cnt = np.zeros((len(slices), n_kept + 1), dtype=np.int64)
    run_ranges(lambda s, _: _count_ranks(rank, *slices[s], cnt[s]), each)
    offsets, fill = _rank_fill(cnt, tab[:n_codes + 1])
    recs = empty(2 * m, np.int64, mapped=True).reshape(m, 2)
    run_ranges(lambda s, _: _scatter_ranks(tmp, rank, *slices[s], fill[s], recs), each)
    return recs, offsets, None


def _by_key(tmp, rank, slices, each, G, kept, m):
    """Passes 2 and 3 of :func:`group_with_key_runs`: the compacted records counted and scattered by
    (code, key); ``kept`` says which codes have a block (bool per code)."""
    n_kept, W = int(kept.sum()), G + 1
    cnt = np.zeros((len(slices), n_kept * W), dtype=np.int64)
    kmax = max(run_ranges(lambda s, _: _count_slots(tmp, rank, *slices[s], G, cnt[s]), each), default=-1)
    if kmax >= G:
        raise fail("group_with_key_runs", f"key {kmax} is not below G = {G}")
    fill, starts = _slot_fill(cnt)
    recs = empty(2 * m, np.int64, mapped=True).reshape(m, 2)
    run_ranges(lambda s, _: _scatter_slots(tmp, rank, *slices[s], G, fill[s], recs), each)
    ends = starts[W::W]  # each kept code's end
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    offsets[1:][kept] = ends
    np.maximum.accumulate(offsets, out=offsets)  # a code not kept ends where the one before it does
    key_offsets = np.empty((n_kept, W), dtype=np.int64)
    key_offsets[:, :G] = starts[:-1].reshape(n_kept, W)[:, 1:]
    key_offsets[:, G] = ends
    return recs, offsets, key_offsets


def record_fields(recs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, key, value) columns of :func:`group_with_keys` records, as int64 arrays."""
    return recs[:, 0] & _LOW, recs[:, 0] >> 32, np.ascontiguousarray(recs[:, 1])


@njit(**NUMBA_FLAGS)
def _leaf_counts(recs, i0, i1, G, keep, cnt):
    # The counting pass over records [i0, i1): slot g + 1 per key, slot 0 for a null key or a
    # candidate the filter dropped; ``keep`` None compiles a specialisation without the read (a
    # strided mask read made this loop 3x slower).  A key is clamped into ``cnt`` (slot G + 1, past
    # the keys); the largest key and position are returned for the wrapper to check before anything
    # is scattered.
    # (read from index 0 of the range's slice: no wraparound test, _compact_run)
    kmax = -1
    pmax = -1
    rs = recs[i0:i1]
    for i in range(len(rs)):
        k = rs[i, 0] >> 32
        kmax = max(kmax, k)
        pmax = max(pmax, rs[i, 0] & 0xFFFFFFFF)
        s = np.uint64(min(max(k, -1), G) + 1)
        cnt[s if keep is None else s * np.uint64(keep[i0 + i])] += 1
    return kmax, pmax


@njit(**NUMBA_FLAGS)
def _leaf_fill(cnt):
    # The key offsets and each range's fill pointers: key g's records are those of range 0, then
    # range 1, ... (position order, as the ranges are consecutive); a range's slot 0 (a dropped
    # record) is its own scratch record past the kept ones, never advanced
    R, G = cnt.shape[0], cnt.shape[1] - 2
    offsets = np.empty(G + 1, dtype=np.int64)
    fill = np.empty((R, G + 1), dtype=np.int64)
    pos = 0
    for g in range(G):
        offsets[g] = pos
        for r in range(R):
            fill[r, g + 1] = pos
            pos += cnt[r, g + 1]
    offsets[G] = pos
    for r in range(R):
        fill[r, 0] = pos + r
    return offsets, fill


@njit(**NUMBA_FLAGS)
def _leaf_scatter(recs, i0, i1, keep, fill, tmp):
    # The records are scattered whole into ``tmp`` (one 16-byte write stream per key: two 8-byte
    # streams per key took twice as long with 1000 keys); keys are checked below G by the wrapper
    # (the range's slice read from index 0, slots and fill pointers unsigned: no wraparound test)
    rs = recs[i0:i1]
    for i in range(len(rs)):
        s = np.uint64(max(rs[i, 0] >> 32, -1) + 1)
        if keep is not None:
            s *= np.uint64(keep[i0 + i])
        f = np.uint64(fill[s])
        tmp[f, 0] = rs[i, 0]
        tmp[f, 1] = rs[i, 1]
        fill[s] = f + np.uint64(s != 0)


@njit(**NUMBA_FLAGS)
def _leaf_split(tmp, f0, f1, wt, out, tout, wout):
    # the grouped records [f0, f1) split into positions and times in one sequential pass;
    # ``wout`` None compiles a specialisation without the window measure's read
    # (slices read and written from index 0: no wraparound test)
    src, o, to = tmp[f0:f1], out[f0:f1], tout[f0:f1]
    for f in range(len(o)):
        p = src[f, 0] & 0xFFFFFFFF
        o[f] = p
        to[f] = src[f, 1]
        if wout is not None:
            wout[f0 + f] = wt[p]


def leaf_by_key(recs: np.ndarray, G: int, keep: np.ndarray | None, wt: np.ndarray | None = None,
                threads: int = 1):
    """Candidates ``recs`` (:func:`group_with_keys` records, ascending index) kept by ``keep`` and
    grouped by key (stable): a leaf buffer (ZStream 4.2).

    Returns the positions (int64) in (key, position) order, the G + 1 key
    offsets and the records' times, moved along in the same pass
    (:mod:`jitcep.kernels.join` reads them): the carried values (the
    candidates' timestamps) and the window measure ``wt[position]`` (None:
    the window measure is ``ts``, the times array is returned twice).  Keys
    < 0 (null key) are dropped.  ``threads``: the records are cut into up to
    that many equal ranges counted and scattered side by side (each range's
    records of a key after the previous range's: the same leaf on any count),
    and the grouped records split into equal ranges.

    Invariants: a record's key is below ``G`` and, with ``wt``, its position
    below ``len(wt)``, both checked by the counting pass (KernelInputError);
    ``keep`` has one entry per record, checked here.
    """
    # NumPy-allocated upper bounds (jitcep.kernels.alloc); the grouped records in reused work space,
    # + a scratch record per range
    n = len(recs)
    G = int(G)
    if recs.ndim != 2 or recs.shape[1] != 2 or G < 0:
        raise fail("leaf_by_key", f"records of shape {recs.shape} for {G} keys")
    check_lengths("leaf_by_key", n, keep=keep)
    recs, keep = np.ascontiguousarray(recs), optional_mask(keep)
    ranges = even_ranges(n, threads)
    cnt = np.zeros((len(ranges), G + 2), dtype=np.int64)
    each = [(r, r + 1) for r in range(len(ranges))]  # run_ranges over the ranges by number
    got = run_ranges(lambda r, _: _leaf_counts(recs, *ranges[r], G, keep, cnt[r]), each)
    if max((k for k, _ in got), default=-1) >= G or (
            wt is not None and max((p for _, p in got), default=-1) >= len(wt)):
        raise fail("leaf_by_key", f"a record's key is not below G = {G}, or its position not below "
                                  f"len(wt) = {0 if wt is None else len(wt)}")
    goff, fill = _leaf_fill(cnt)
    m = int(goff[-1])
    tmp = scratch("leaf_by_key.records", 2 * (m + len(ranges)), np.int64).reshape(-1, 2)
    run_ranges(lambda r, _: _leaf_scatter(recs, *ranges[r], keep, fill[r], tmp), each)
    out = empty(m, np.int64)
    tout = empty(m, np.int64)
    wout = None if wt is None else empty(m, wt.dtype)
    run_ranges(lambda f0, f1: _leaf_split(tmp, f0, f1, np.zeros(1, np.int64) if wt is None else wt,
                                          out, tout, wout), even_ranges(m, threads))
    return out, goff, tout, tout if wout is None else wout


@njit(**NUMBA_FLAGS)
def _run_split(run, f0, f1, wt, out, tout, wout):
    # _leaf_split of a run already grouped by key; with ``wout``, False at a position past ``wt``
    # (nothing counted these records before)
    src, o, to = run[f0:f1], out[f0:f1], tout[f0:f1]
    for f in range(len(o)):
        p = src[f, 0] & 0xFFFFFFFF
        o[f] = p
        to[f] = src[f, 1]
        if wout is not None:
            if p >= len(wt):
                return False
            wout[f0 + f] = wt[p]
    return True


def leaf_of_run(recs: np.ndarray, key_offsets: np.ndarray, wt: np.ndarray | None = None, threads: int = 1):
    """:func:`leaf_by_key` of one code's records of :func:`group_with_key_runs` (``recs``, already in
    (key, index) order) without a filter: the records from the first key's on (those of a null key come
    before) split into positions, times and window measures in one pass.  ``key_offsets``: the code's row
    of that function's key offsets (G + 1, where each key's records start in ``recs``, then the end);
    returned relative to the first key's.  Same results as :func:`leaf_by_key` of the code's records in
    index order.  Invariants: ``key_offsets`` ascend within ``recs`` (KernelInputError), and with
    ``wt`` a position is below ``len(wt)`` (checked as it is read)."""
    if recs.ndim != 2 or recs.shape[1] != 2:
        raise fail("leaf_of_run", f"records of shape {recs.shape}")
    key_offsets = np.asarray(key_offsets, dtype=np.int64)
    check_offsets("leaf_of_run", "key_offsets", key_offsets, len(recs))
    f0 = int(key_offsets[0])
    run = np.ascontiguousarray(recs[f0:int(key_offsets[-1])])
    goff = key_offsets - f0
    m = len(run)
    out, tout = empty(m, np.int64), empty(m, np.int64)
    wout = None if wt is None else empty(m, wt.dtype)
    ok = run_ranges(lambda a, b: _run_split(run, a, b, np.zeros(1, np.int64) if wt is None else wt,
                                            out, tout, wout), even_ranges(m, threads))
    if not all(ok):
        raise fail("leaf_of_run", f"a record's position is not below len(wt) = {len(wt)}")
    return out, goff, tout, tout if wout is None else wout


@njit(**NUMBA_FLAGS)
def _stream_positions(order, offsets, out):
    # False at the first position outside ``out`` (offsets are checked by the wrapper)
    n = len(out)
    for g in range(len(offsets) - 1):
        for j in range(offsets[g], offsets[g + 1]):
            p = order[j]
            if p < 0 or p >= n:
                return False
            out[p] = j - offsets[g]
    return True


def stream_positions(order: np.ndarray, offsets: np.ndarray, n: int) -> np.ndarray:
    """Rank of every position inside its group (CSR ``order``/``offsets``); 0 where in no group.

    Invariants: ``offsets`` ascend within ``order`` (checked here) and ``order``
    holds positions below ``n`` (checked by the kernel as it reads them).
    """
    out = np.zeros(int(n), dtype=np.int64)  # NumPy-allocated (jitcep.kernels.alloc)
    order, offsets = np.ascontiguousarray(order), np.ascontiguousarray(offsets)
    check_offsets("stream_positions", "offsets", offsets, len(order))
    if not _stream_positions(order, offsets, out):
        raise fail("stream_positions", f"order holds a position outside [0, {n})")
    return out


@njit(**NUMBA_FLAGS)
def _count_codes(codes, k):  # pragma: no cover - compiled
    # four interleaved count rows: one row's increments wait on each other (0.4 ms at 10^6 against
    # 1.0 ms with one row); a code past k-1 (or -1, which wraps as uint32) lands in the null slot k
    out = np.zeros((4, k + 1), np.int64)
    top = np.uint32(k)
    n = len(codes)
    m = n - n % 4
    for i in range(0, m, 4):
        for j in range(4):
            out[j, min(np.uint32(codes[i + j]), top)] += 1
    for i in range(m, n):
        out[0, min(np.uint32(codes[i]), top)] += 1
    return out.sum(axis=0)


def count_codes(codes: np.ndarray, k: int) -> np.ndarray:
    """Events per type code 0..k-1, and in slot k those of the null type (-1): one pass (the planner's
    exact type counts, :mod:`jitcep.plan.planner.statistics`).  Any other code also counts in slot k:
    the kernel clamps every index into its k + 1 slots, so no input makes it read or write outside."""
    if k < 0:
        raise fail("count_codes", f"a negative number of types ({k})")
    return _count_codes(np.ascontiguousarray(codes), int(k))
