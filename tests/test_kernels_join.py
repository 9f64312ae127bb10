"""Kernels against their naive twins (tests/naive.py) on random buffers."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import naive
from jitcep import config
from jitcep.errors import ExplosionError, KernelInputError
from jitcep.kernels import and_join, counting_sort, final_join, final_join_chain, final_join_leaves, join, seq_join


_I64 = np.iinfo(np.int64)


@st.composite
def tables_and_buffers(draw, leaf_right=False, extreme=None):
    """Sorted timestamps and two buffers of records (k1 and k2 events each) in G partitions; with
    ``leaf_right`` the right buffer is a leaf's: one-event records, its start array its end array.
    ``extreme`` (drawn when None): timestamps near int64's ends (farther apart than int64 holds)
    and windows up to past the widest int64 difference, 2**64 - 1 (docs/semantics.md section 2)."""
    n = draw(st.integers(3, 14))
    if extreme is None:
        extreme = draw(st.booleans())
    if extreme:
        near = st.one_of(st.integers(int(_I64.min), int(_I64.min) + 3), st.integers(int(_I64.max) - 3, int(_I64.max)),
                         st.integers(-3, 3), st.integers(int(_I64.min), int(_I64.max)))
        ts = np.array(sorted(draw(st.lists(near, min_size=n, max_size=n))), dtype=np.int64)
    else:
        steps = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        ts = np.cumsum(np.array(steps, dtype=np.int64))
    G = draw(st.integers(1, 3))

    def buffer(k):
        m = draw(st.integers(0, 8))
        recs = []
        for _ in range(m):
            ev = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True))
            if k > 1 and draw(st.booleans()):
                ev[draw(st.integers(0, k - 1))] = -1  # an unbound OR-branch variable
            bound = [p for p in ev if p >= 0]
            recs.append((draw(st.integers(0, G - 1)), min(bound), max(bound), ev))
        recs.sort(key=lambda r: (r[0], r[2]))
        pos = np.array([r[3] for r in recs], dtype=np.int64).reshape(m, k)
        start = np.array([r[1] for r in recs], dtype=np.int64)
        end = np.array([r[2] for r in recs], dtype=np.int64)
        goff = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(np.bincount([r[0] for r in recs], minlength=G), out=goff[1:])
        return pos, start, end, goff

    L = buffer(draw(st.integers(1, 3)))
    R = buffer(1 if leaf_right else draw(st.integers(1, 3)))
    if leaf_right:
        R = (R[0], R[2], R[2], R[3])
    count_window = draw(st.booleans())
    wt = np.arange(n, dtype=np.int64) if count_window else ts
    W = draw(st.one_of(st.integers(0, 6), st.integers(2**63 - 3, 2**63 + 3), st.integers(2**64 - 3, 2**64 + 3),
                       st.integers(0, 2**64 + 3)) if extreme else st.integers(0, 6))
    return ts, wt, W, L, R


@settings(max_examples=400, deadline=None)
@given(tables_and_buffers(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans())
def test_seq_join_matches_naive(case, order, distinct):
    ts, wt, W, L, R = case
    if order == "nondecreasing_ts":
        distinct = True  # the runtime always checks distinctness under ties
    li, ri, g = seq_join(L, R, ts, wt, W, order, distinct, 10**6)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert len(got) == len(set(got))
    assert set(got) == naive.seq_join(L, R, ts, wt, W, order, distinct)
    # ZStream 4.2: output in partition order, and in the end order of r within a partition
    assert got == sorted(got, key=lambda t: (t[2], R[2][t[1]]))


@settings(max_examples=400, deadline=None)
@given(tables_and_buffers(leaf_right=True), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       st.booleans())
def test_seq_join_over_a_right_leaf_matches_naive(case, order, distinct):
    # a right leaf driving: the left range's upper bound steps on from the previous right record's
    # (kernels.join._seq_join's right_leaf) instead of a binary search
    ts, wt, W, L, R = case
    if order == "nondecreasing_ts":
        distinct = True
    li, ri, g = seq_join(L, R, ts, wt, W, order, distinct, 10**6, "right")
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert len(got) == len(set(got)) and set(got) == naive.seq_join(L, R, ts, wt, W, order, distinct)
    assert got == sorted(got, key=lambda t: (t[2], R[2][t[1]]))


@settings(max_examples=400, deadline=None)
@given(tables_and_buffers(leaf_right=True), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       st.booleans(), st.sampled_from(["smaller", "left"]))
def test_seq_join_driven_by_the_left_input_matches_naive(case, order, distinct, driver):
    # a right leaf larger than the left input ("smaller"), or the plan's choice ("left"): the left records
    # drive (forced here at any sizes; the right-driven kernel is taken away, so a call to it fails the test)
    ts, wt, W, L, R = case
    assume(len(R[2]) > 0)
    if order == "nondecreasing_ts":
        distinct = True
    with mock.patch.object(config, "JOIN_BY_LEFT", 0), mock.patch.object(join, "_seq_join", None):
        li, ri, g = seq_join(L, R, ts, wt, W, order, distinct, 10**6, driver)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert len(got) == len(set(got))
    assert set(got) == naive.seq_join(L, R, ts, wt, W, order, distinct)
    # the right-driven kernel's order: partition, the end order of r (r for equal ends), then l
    assert got == sorted(got, key=lambda t: (t[2], R[2][t[1]], t[1], t[0]))


@st.composite
def owned_buffers(draw, max_records=8):
    """Sorted timestamps and two buffers whose events each belong to one of G partitions (an event has
    one key, as the engine's buffers), one of them a leaf (one-event records at distinct positions, its
    start array its end array), the other either; records may leave a variable unbound (-1)."""
    n = draw(st.integers(3, 16))
    ts = np.cumsum(np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64))
    G = draw(st.integers(1, 3))
    owner = draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n))
    mine = [[p for p in range(n) if owner[p] == g] for g in range(G)]

    def buffer(k, leaf):
        recs = []
        for g in range(G):
            if leaf:
                recs += [(g, [p]) for p in draw(st.lists(st.sampled_from(mine[g]), unique=True, max_size=max_records))
                         ] if mine[g] else []
                continue
            for _ in range(draw(st.integers(0, max_records)) if len(mine[g]) >= k else 0):
                ev = draw(st.lists(st.sampled_from(mine[g]), min_size=k, max_size=k, unique=True))
                if k > 1 and draw(st.booleans()):
                    ev[draw(st.integers(0, k - 1))] = -1  # an unbound OR-branch variable
                recs.append((g, ev))
        recs.sort(key=lambda r: (r[0], max(r[1])))
        m = len(recs)
        pos = np.array([r[1] for r in recs], dtype=np.int64).reshape(m, k)
        end = np.array([max(r[1]) for r in recs], dtype=np.int64)
        start = end if leaf else np.array([min(p for p in r[1] if p >= 0) for r in recs], dtype=np.int64)
        goff = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(np.bincount([r[0] for r in recs], minlength=G), out=goff[1:])
        return pos, start, end, goff

    leaf_left = draw(st.booleans())
    L = buffer(1 if leaf_left else draw(st.integers(1, 3)), leaf_left)
    R = buffer(draw(st.integers(1, 3)) if leaf_left else 1, not leaf_left)
    wt = np.arange(n, dtype=np.int64) if draw(st.booleans()) else ts
    return ts, wt, draw(st.integers(0, 8)), L, R


@settings(max_examples=150, deadline=None)
@given(owned_buffers(), st.sampled_from(["position", "strict_ts"]), st.booleans(), st.booleans(), st.data())
def test_seq_join_rows_are_the_pairs_rows_in_canonical_order(case, order, distinct, threads, data):
    # the final join's matches written straight from the join, through its leaf input: each pair's row,
    # columns in any order, compared in any key order, in canonical order whatever the partitions
    ts, wt, W, L, R = case
    width = L[0].shape[1] + R[0].shape[1]
    src = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    key = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        rows, bound = final_join.seq_join_rows(L, R, ts, wt, W, order, distinct, 10**6, src, len(ts), key,
                                               2 if threads else 1)
    assert rows.shape[0] == len(src) and rows.flags.c_contiguous
    expected = naive.seq_join_rows(L, R, ts, wt, W, order, distinct, src, key)
    assert rows.tolist() == expected
    # bound: no row is unbound because no record's position is (so the output need not look), or no row
    assert bound == (all(x >= 0 for b in (L, R) for x in b[0].ravel().tolist()) or not expected[0])
    assert not bound or all(x >= 0 for row in expected for x in row)


def _late(L, R, ts, wt, W, distinct) -> bool:
    """Under nondecreasing_ts, does a pair's left record end at or after its right event's position (a
    tie in time), so that seq_join_rows declines?"""
    return any(max(L[0][l]) >= R[1][r] for l, r, _ in naive.seq_join(L, R, ts, wt, W, "nondecreasing_ts", distinct))


@settings(max_examples=150, deadline=None)
@given(owned_buffers(), st.booleans(), st.booleans(), st.booleans(), st.data())
def test_seq_join_rows_under_ties_are_the_rows_or_decline(case, distinct, threads, spread, data):
    # under nondecreasing_ts (a right leaf): the naive twin's rows where every pair's left record ends at
    # a position before its right event, else None (the match's last event would be the left record's)
    ts, wt, W, L, R = case
    assume(R[1] is R[2])
    if spread:  # no tie: the rows are always written
        timed = wt is ts
        ts = ts * len(ts) + np.arange(len(ts))
        wt, W = (ts, W * len(ts)) if timed else (wt, W)
    width = L[0].shape[1] + R[0].shape[1]
    src = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    key = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        out = final_join.seq_join_rows(L, R, ts, wt, W, "nondecreasing_ts", distinct, 10**6, src, len(ts), key,
                                       2 if threads else 1)
    if _late(L, R, ts, wt, W, distinct):
        assert out is None
    else:
        assert out is not None
        assert out[0].tolist() == naive.seq_join_rows(L, R, ts, wt, W, "nondecreasing_ts", distinct, src, key)


def test_seq_join_rows_under_ties_by_hand():
    # events at times 0 0 1 1 (positions 0-3); SEQ(x, y) over a leaf of {0, 2} then a leaf of {1, 3}:
    # under nondecreasing_ts the pairs (0, 1), (0, 3), (2, 3) each end at the right event: written; with
    # the left leaf {1, 2} and the right {0, 3}, (1, 0) ends at the left event: declined
    ts = np.array([0, 0, 1, 1], np.int64)

    def leaf(*p):
        a = np.array(p, np.int64)
        return a.reshape(-1, 1), a, a, np.array([0, len(a)])
    rows, _ = final_join.seq_join_rows(leaf(0, 2), leaf(1, 3), ts, ts, 5, "nondecreasing_ts", True, 100,
                                       np.array([0, 1]), 4)
    assert rows.tolist() == [[0, 0, 2], [1, 3, 3]]
    assert final_join.seq_join_rows(leaf(1, 2), leaf(0, 3), ts, ts, 5, "nondecreasing_ts", True, 100,
                                    np.array([0, 1]), 4) is None


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(owned_buffers(max_records=30), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(),
       st.data())
def test_seq_join_rows_are_the_pairs_rows_in_canonical_order_slow(case, order, distinct, data):
    ts, wt, W, L, R = case
    assume(order != "nondecreasing_ts" or R[1] is R[2])
    width = L[0].shape[1] + R[0].shape[1]
    src = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    key = np.array(data.draw(st.permutations(range(width))), dtype=np.int64)
    out = final_join.seq_join_rows(L, R, ts, wt, W, order, distinct, 10**6, src, len(ts), key)
    if order == "nondecreasing_ts" and _late(L, R, ts, wt, W, distinct):
        assert out is None
        return
    rows, bound = out
    expected = naive.seq_join_rows(L, R, ts, wt, W, order, distinct, src, key)
    assert rows.tolist() == expected
    assert not bound or all(x >= 0 for row in expected for x in row)


@settings(max_examples=200, deadline=None)
@given(owned_buffers(), st.sampled_from(["position", "strict_ts"]), st.booleans(), st.data())
def test_a_right_leaf_skips_the_window_test_only_where_the_times_follow_the_positions(case, order, shuffle, data):
    # with a right leaf, seq_join_rows tests no pair's window (and counts the pairs by two pointers) in a
    # partition where _fits_by_position finds the window times following the positions: on the engine's
    # inputs (times in position order, left records within the window) every partition, and with the
    # times drawn out of that order the rows are still the naive twin's wherever every partition passed
    ts, wt, W, L, R = case
    assume(R[1] is R[2] and L[1] is not L[2])
    if data.draw(st.booleans()):  # only the left records within the window, as a join below makes them
        L = _within_window(L, wt, W)
    if shuffle:
        wt = np.array(data.draw(st.permutations(wt.tolist())), dtype=np.int64)
    src = np.arange(L[0].shape[1] + R[0].shape[1], dtype=np.int64)
    seen, scanned = [], []
    fits_by_position, join_by_start = final_join._fits_by_position, final_join._canonical_join_by_start

    def spy(*args):
        out = fits_by_position(*args)
        seen.append(args[-2].copy())
        return out

    def joined(*args):
        scanned.append(args[-1].shape[1] == 0)  # the counting pass
        return join_by_start(*args)

    with mock.patch.object(final_join, "_fits_by_position", spy), \
            mock.patch.object(final_join, "_canonical_join_by_start", joined):
        rows, _ = final_join.seq_join_rows(L, R, ts, wt, W, order, False, 10**6, src, len(ts))
    # no counting pass over the records where every partition is counted by pointers
    assert any(scanned) != bool((seen[0] == 2).all())
    if not shuffle:
        assert seen[0].all()
        # counted by pointers too when the left records are within the window and a record not ending
        # before a right event does not end before it in window time either
        if all(wt[b] - wt[a] <= W for a, b in zip(L[1].tolist(), L[2].tolist())) and (
                order == "position" or wt is ts):
            assert (seen[0] == 2).all()
    if seen[0].all():
        assert rows.tolist() == naive.seq_join_rows(L, R, ts, wt, W, order, False, src)


def _within_window(buf, wt, W):
    """The records of buffer ``buf`` whose window times span at most W, partitions kept."""
    pos, start, end, goff = buf
    keep = np.array([wt[e] - wt[s] <= W for s, e in zip(start.tolist(), end.tolist())], dtype=bool)
    kept = np.zeros(len(goff), dtype=np.int64)
    for g in range(len(goff) - 1):
        kept[g + 1] = kept[g] + int(keep[goff[g]:goff[g + 1]].sum())
    return pos[keep], start[keep], end[keep], kept


def test_seq_join_rows_orders_long_ends_by_sorting_and_by_marking():
    # ends with hundreds of matches: a left leaf's right records sorted by insertion past their first
    # block; a right leaf's left records put in order by a bitmap of their ranks (their ranks close) and
    # by sorting (a wide window: ranks far apart)
    rng = np.random.default_rng(3)
    n = 160
    ts = np.arange(n, dtype=np.int64)
    a = np.sort(rng.choice(n, 50, replace=False))
    leaf = (a.reshape(-1, 1), a, a, np.array([0, len(a)]))
    pairs = [(x, y) for x in range(n) for y in range(x + 1, min(n, x + 30)) if rng.random() < 0.3]
    pairs.sort(key=lambda p: (p[1], -p[0]))
    two = (np.array(pairs, np.int64), np.array([p[0] for p in pairs], np.int64),
           np.array([p[1] for p in pairs], np.int64), np.array([0, len(pairs)]))
    for L, R, W in ((leaf, two, 40), (two, leaf, 40), (two, leaf, 160)):
        width = L[0].shape[1] + R[0].shape[1]
        src, key = np.arange(width)[::-1].copy(), np.roll(np.arange(width), 1)
        rows, _ = final_join.seq_join_rows(L, R, ts, ts, W, "position", True, 10**7, src, n, key)
        assert rows.shape[1] > 500
        assert rows.tolist() == naive.seq_join_rows(L, R, ts, ts, W, "position", True, src, key)


def test_seq_join_rows_refuses_bad_input_and_stops_past_the_cap():
    ts = np.arange(6, dtype=np.int64)
    p = np.arange(6, dtype=np.int64)
    leaf = (p.reshape(6, 1), p, p, np.array([0, 6]))
    two = (np.array([[0, 1]]), np.array([0]), np.array([1]), np.array([0, 1]))
    rows, _ = final_join.seq_join_rows(leaf, leaf, ts, ts, 10, "position", True, 15, np.array([1, 0]), 6)
    assert rows.shape == (2, 15)
    with pytest.raises(ExplosionError):
        final_join.seq_join_rows(leaf, leaf, ts, ts, 10, "position", True, 14, np.array([1, 0]), 6)
    for src in (np.array([2, 0]), np.array([-1, 0]), np.array([0]), np.array([0, 0])):
        with pytest.raises(KernelInputError):
            final_join.seq_join_rows(leaf, leaf, ts, ts, 10, "position", True, 15, src, 6)
    twice = np.array([3, 3])  # a right leaf with two records at position 3
    for L, R, order, src, n_events, key in (
            (leaf, two, "nondecreasing_ts", [1, 0, 2], 6, None), (two, two, "position", [0, 1, 2, 3], 6, None),
            (leaf, leaf, "position", [1, 0], 5, None), (leaf, leaf, "position", [1, 0], 6, [1, 1]),
            (two, (twice.reshape(2, 1), twice, twice, np.array([0, 2])), "position", [0, 1, 2], 6, None)):
        with pytest.raises(KernelInputError):
            final_join.seq_join_rows(L, R, ts, ts, 10, order, True, 10**6, np.array(src), n_events,
                               None if key is None else np.array(key))


@st.composite
def three_leaves(draw):
    """Sorted timestamps and three leaves (one-event records at distinct positions, each partition's in
    position order, start array = end array) over G partitions whose events each belong to one, and
    window times that follow the positions (a count or time window) or not (drawn at random)."""
    n = draw(st.integers(3, 16))
    ts = np.cumsum(np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64))
    G = draw(st.integers(1, 3))
    owner = draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n))

    def leaf():
        pos = [p for p in range(n) if draw(st.booleans())]
        pos.sort(key=lambda p: (owner[p], p))
        p = np.array(pos, dtype=np.int64)
        goff = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(np.bincount([owner[x] for x in pos], minlength=G), out=goff[1:])
        return p.reshape(-1, 1), p, p, goff

    kind = draw(st.sampled_from(["count", "time", "any"]))
    wt = {"count": np.arange(n, dtype=np.int64), "time": ts,
          "any": np.array(draw(st.lists(st.integers(-3, 12), min_size=n, max_size=n)), dtype=np.int64)}[kind]
    W = draw(st.one_of(st.integers(0, 8), st.integers(2**64 - 3, 2**64 + 3)))
    return ts, wt, kind != "any", W, leaf(), leaf(), leaf()


@settings(max_examples=400, deadline=None)
@given(three_leaves(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(), st.data())
def test_seq3_leaf_rows_are_every_triple_in_canonical_order(case, order, threads, data):
    # SEQ(a, b, c) over three leaves written straight from them: every triple of one partition in order
    # and within the window, in canonical order, its rows in any order of the variables; the first
    # join's pairs counted, (a, b) or a right-deep plan's (b, c) (distinct events: under
    # nondecreasing_ts a leaf may share them); a KernelInputError only where the window times do not
    # follow the positions (the engine's tables are sorted by time); under nondecreasing_ts None exactly
    # at a reversed tie (ties are frequent here: steps of 0 in time), else every triple under its ties
    ts, wt, follows, W, A, B, C = case
    src = np.array(data.draw(st.permutations(range(3))), dtype=np.int64)
    bc = data.draw(st.booleans())
    try:
        with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
            out = final_join_leaves.seq3_leaf_rows(A, B, C, ts, wt, W, order, 10**6, 10**6, src, len(ts),
                                                   2 if threads else 1, inner_bc=bc)
    except KernelInputError:
        assert not follows
        return
    declined = order == "nondecreasing_ts" and naive.reversed_tie((A, B, C), ts)
    assert (out is None) == declined
    if declined:
        return
    rows, times, pairs = out
    expected = naive.seq3_leaf_rows(A, B, C, ts, wt, W, order, src)
    assert rows.shape == (3, len(expected[0])) and rows.flags.c_contiguous
    assert rows.tolist() == expected
    assert times.shape == rows.shape and times.flags.c_contiguous
    assert times.tolist() == [[int(ts[p]) for p in row] for row in expected]
    assert pairs == len(naive.seq_join(*((B, C) if bc else (A, B)), ts, wt, W, order,
                                       order == "nondecreasing_ts"))
    # past either cap an ExplosionError, at them the same rows (with threads: over every range together)
    m, k = rows.shape[1], 2 if threads else 1
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        assert final_join_leaves.seq3_leaf_rows(A, B, C, ts, wt, W, order, pairs, m, src, len(ts), k,
                                                inner_bc=bc)[0].tolist() == expected
        for inner_cap, cap in ((pairs - 1, m), (pairs, m - 1)):
            if min(inner_cap, cap) >= 0:
                with pytest.raises(ExplosionError):
                    final_join_leaves.seq3_leaf_rows(A, B, C, ts, wt, W, order, inner_cap, cap, src, len(ts), k,
                                                     inner_bc=bc)


def test_seq3_leaf_rows_under_ties_by_hand():
    # nondecreasing_ts: rows where no event of a leaf shares its time with one of the leaf before it
    # that comes after it in position, None where one does (OpenCEP's files: each minute's A, B, C in
    # that order at one time, so none)
    def leaves(*groups):  # the positions of A, B, C
        ps = [np.array(g, np.int64) for g in groups]
        return [(p.reshape(-1, 1), p, p, np.array([0, len(p)], np.int64)) for p in ps]

    def run(ts, *groups):
        ts = np.array(ts, np.int64)
        return final_join_leaves.seq3_leaf_rows(*leaves(*groups), ts, ts, 10, "nondecreasing_ts", 10**6, 10**6,
                                                np.array([0, 1, 2]), len(ts))

    # two minutes of A B C: (0,1,2) ends at 2; (0,1,5), (0,4,5), (3,4,5) at 5; (3,1,.) and (.,4,2) are
    # out of time order
    rows, times, pairs = run([0, 0, 0, 1, 1, 1], [0, 3], [1, 4], [2, 5])
    assert rows.tolist() == [[0, 0, 0, 3], [1, 1, 4, 4], [2, 5, 5, 5]] and pairs == 3
    assert times.tolist() == [[0, 0, 0, 1], [0, 0, 1, 1], [0, 1, 1, 1]]
    assert run([0, 0, 0], [1], [0], [2]) is None  # B at A's time before it: (1, 0, 2) is a match
    assert run([0, 0, 0], [0], [2], [1]) is None  # C at B's time before it: (0, 2, 1) is a match
    # C at A's time before it, B later: not adjacent variables, no match binds them out of order
    rows, _, _ = run([0, 0, 1, 1], [1], [2], [0, 3])
    assert rows.tolist() == [[1], [2], [3]]


def test_seq3_leaf_rows_partitions_share_no_prefix_sum_slot():
    # Partitions counted side by side on threads: a partition's prefix sums of fb (sfb) are stored at
    # [a0 + 1, a1] only, and slot a0 (the partition before's last sum, another thread's) is neither read
    # nor written.  Partition 1 of two counted alone over garbage at every slot: its count is the naive
    # one and slot a0 keeps its garbage.
    ts = np.arange(12, dtype=np.int64)
    leaf = lambda pos, off: final_join_leaves._timed(  # noqa: E731
        (np.array(pos, np.int64).reshape(-1, 1), np.array(pos, np.int64), np.array(pos, np.int64),
         np.array(off, np.int64)), ts, ts)
    # partition 0: events 0-5, partition 1: events 6-11, each A B A B C C
    A, B, C = leaf([0, 2, 6, 8], [0, 2, 4]), leaf([1, 3, 7, 9], [0, 2, 4]), leaf([4, 5, 10, 11], [0, 2, 4])
    part1 = [(*x[:3], x[3][1:3], *x[4:]) for x in (A, B, C)]
    fb = np.full(4, -7, np.int64)
    sfb = np.full(5, 1 << 40, np.int64)
    at = np.zeros(0, np.int64)
    inner = np.zeros(1, np.int64)
    m = final_join_leaves._triples_count(*part1, 100, 0, 12, 10**6, 10**6, fb, sfb, at, inner, False, False)
    # partition 1's triples by hand: a in {6, 8}, b after a, c in {10, 11}: (6,7),(6,9),(8,9) x 2 ends
    assert m == 6 and inner[0] == 3
    assert sfb[2] == 1 << 40  # a0 = 2: not written


def test_seq3_leaf_rows_refuses_bad_input():
    ts = np.arange(6, dtype=np.int64)
    p = np.arange(6, dtype=np.int64)
    leaf = (p.reshape(6, 1), p, p, np.array([0, 6]))
    two = (np.array([[0, 1]]), np.array([0]), np.array([1]), np.array([0, 1]))
    rows, _, pairs = final_join_leaves.seq3_leaf_rows(leaf, leaf, leaf, ts, ts, 10, "position", 10**6, 10**6,
                                                      np.array([2, 0, 1]), 6)
    assert rows.shape == (3, 20) and pairs == 15
    outside = (np.array([[1], [2]]), np.array([1, 2]), np.array([1, 2]), np.array([0, 3]))
    for A, B, C, order, src, n_events in (
            (leaf, leaf, leaf, "by_time", [0, 1, 2], 6), (leaf, two, leaf, "position", [0, 1, 2], 6),
            (leaf, leaf, leaf, "position", [0, 1, 1], 6), (leaf, leaf, leaf, "position", [0, 1], 6),
            (leaf, leaf, leaf, "position", [0, 1, 2], 5),
            (leaf, leaf, (p.reshape(6, 1), p, p, np.array([0, 3, 6])), "position", [0, 1, 2], 6),
            (leaf, outside, leaf, "position", [0, 1, 2], 6)):
        with pytest.raises(KernelInputError):
            final_join_leaves.seq3_leaf_rows(A, B, C, ts, ts, 10, order, 10**6, 10**6, np.array(src), n_events)


@st.composite
def leaf_chain(draw):
    """Sorted timestamps, k = 3-5 leaves (one-event records at distinct positions, each partition's in
    position order, start array = end array) over G partitions whose events each belong to one, count or
    time window times, and the runs of a random binary plan over the leaves (each after its parts)."""
    n = draw(st.integers(3, 14))
    ts = np.cumsum(np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64))
    G = draw(st.integers(1, 3))
    owner = draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n))

    def leaf():
        pos = [p for p in range(n) if draw(st.booleans())]
        pos.sort(key=lambda p: (owner[p], p))
        p = np.array(pos, dtype=np.int64)
        goff = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(np.bincount([owner[x] for x in pos], minlength=G), out=goff[1:])
        return p.reshape(-1, 1), p, p, goff

    k = draw(st.integers(3, 5))
    wt = draw(st.sampled_from([np.arange(n, dtype=np.int64), ts]))
    W = draw(st.one_of(st.integers(0, 10), st.integers(2**64 - 3, 2**64 + 3)))

    def plan(i0, i1):  # the runs of a binary tree over leaves [i0, i1], parts first
        if i0 == i1:
            return []
        cut = draw(st.integers(i0, i1 - 1))
        return plan(i0, cut) + plan(cut + 1, i1) + [(i0, i1)]

    return ts, wt, W, [leaf() for _ in range(k)], plan(0, k - 1)


@settings(max_examples=400, deadline=None)
@given(leaf_chain(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(), st.data())
def test_seq_chain_rows_are_every_chain_in_canonical_order(case, order, threads, data):
    # SEQ of k leaves written straight from them: every chain of one partition in order and within the
    # window, sorted by (last, first, the others in leaf order), its rows in any order of the leaves;
    # each run of the plan's chains counted (what its join would pair at most), each cap asked with the
    # counts of the runs before it; under nondecreasing_ts None exactly at a reversed tie, no cap asked
    ts, wt, W, leaves, spans = case
    k = len(leaves)
    src = np.array(data.draw(st.permutations(range(k))), dtype=np.int64)
    asked = []

    def cap_of(span, counts):
        asked.append((span, dict(counts)))
        return 10**6

    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        out = final_join_chain.seq_chain_rows(leaves, ts, wt, W, order, spans, cap_of, src, len(ts),
                                              2 if threads else 1)
    declined = order == "nondecreasing_ts" and naive.reversed_tie(leaves, ts)
    assert (out is None) == declined
    if declined:
        assert asked == []
        return
    rows, times, counts = out
    expected = naive.seq_chain_rows(leaves, ts, wt, W, order, src)
    assert rows.shape == (k, len(expected[0])) and rows.flags.c_contiguous
    assert rows.tolist() == expected
    assert times.shape == rows.shape and times.flags.c_contiguous
    assert times.tolist() == [[int(ts[p]) for p in row] for row in expected]
    want = {(i0, i1): len(naive.leaf_chains(leaves[i0:i1 + 1], ts, wt, W, order)) for i0, i1 in spans}
    assert counts == want
    assert [span for span, _ in asked] == spans
    assert all(seen == {s: want[s] for s in spans[:i]} for i, (_, seen) in enumerate(asked))
    # at every run's own count the same rows; one below any run's count: None (the joins decide)
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        at_caps = final_join_chain.seq_chain_rows(leaves, ts, wt, W, order, spans, lambda s, c: want[s], src,
                                                  len(ts), 2 if threads else 1)
        assert at_caps[0].tolist() == expected
        short = data.draw(st.sampled_from(spans))
        if want[short]:
            assert final_join_chain.seq_chain_rows(
                leaves, ts, wt, W, order, spans, lambda s, c: want[s] - (s == short), src, len(ts),
                2 if threads else 1) is None


def test_seq_chain_rows_refuses_bad_input():
    ts = np.arange(8, dtype=np.int64)
    p = np.arange(8, dtype=np.int64)
    leaf = (p.reshape(8, 1), p, p, np.array([0, 8]))
    big = lambda span, counts: 10**6  # noqa: E731
    spans = [(0, 1), (0, 2), (0, 3)]
    rows, _, counts = final_join_chain.seq_chain_rows([leaf] * 4, ts, ts, 10, "position", spans, big,
                                                      np.array([3, 0, 1, 2]), 8)
    # 4 of 8 events in order: C(8, 4) chains; pairs C(8, 2), triples C(8, 3)
    assert rows.shape == (4, 70) and counts == {(0, 1): 28, (0, 2): 56, (0, 3): 70}
    two = (np.array([[0, 1]]), np.array([0]), np.array([1]), np.array([0, 1]))
    outside = (np.array([[1], [2]]), np.array([1, 2]), np.array([1, 2]), np.array([0, 3]))
    back = (p.reshape(8, 1)[::-1].copy(), p[::-1].copy(), None, np.array([0, 8]))
    back = (back[0], back[1], back[1], back[3])
    for leaves, order, src, sp, n_events, wt in (
            ([leaf] * 3, "by_time", [0, 1, 2], [(0, 2)], 8, ts),
            ([leaf] * 2, "position", [0, 1], [(0, 1)], 8, ts),
            ([leaf, two, leaf], "position", [0, 1, 2], [(0, 2)], 8, ts),
            ([leaf] * 3, "position", [0, 1, 1], [(0, 2)], 8, ts),
            ([leaf] * 3, "position", [0, 1, 2], [(0, 1)], 8, ts),
            ([leaf] * 3, "position", [0, 1, 2], [(1, 0), (0, 2)], 8, ts),
            ([leaf] * 3, "position", [0, 1, 2], [(0, 2)], 7, ts),
            ([leaf, leaf, (p.reshape(8, 1), p, p, np.array([0, 4, 8]))], "position", [0, 1, 2], [(0, 2)], 8, ts),
            ([leaf, outside, leaf], "position", [0, 1, 2], [(0, 2)], 8, ts),
            ([leaf, back, leaf], "position", [0, 1, 2], [(0, 2)], 8, ts),
            # window times that do not follow the positions: the engine's tables are sorted by time
            ([leaf] * 3, "position", [0, 1, 2], [(0, 2)], 8, ts[::-1].copy())):
        with pytest.raises(KernelInputError):
            final_join_chain.seq_chain_rows(leaves, ts, wt, 10, order, sp, big, np.array(src), n_events)


@settings(max_examples=400, deadline=None)
@given(tables_and_buffers(), st.booleans())
def test_and_join_matches_naive(case, distinct):
    ts, wt, W, L, R = case
    li, ri, g = and_join(L, R, ts, wt, W, distinct, 10**6)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert len(got) == len(set(got))
    assert set(got) == naive.and_join(L, R, ts, wt, W, distinct)
    ends = [max(L[2][a], R[2][b]) for a, b, _ in got]
    assert [(t[2], e) for t, e in zip(got, ends)] == sorted((t[2], e) for t, e in zip(got, ends))


@settings(max_examples=200, deadline=None)
@given(tables_and_buffers(leaf_right=True), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       st.sampled_from(["right", "left", "and"]), st.sampled_from([1, 2]))
def test_joins_that_outgrow_their_first_arrays_resume_or_run_again(case, order, driver, threads):
    # first arrays as large as the records only: a SEQ join with more pairs than records stops where
    # they are full and resumes there into fresh arrays, from arrays of no pairs at all (doubled when a
    # call writes none: kernels.join._resumed); an AND join counts past them and runs again into arrays
    # of exactly that many (kernels.join._done)
    ts, wt, W, L, R = case
    with mock.patch.object(join, "_MIN_PAIRS", 0):
        if driver == "and":
            li, ri, g = and_join(L, R, ts, wt, W, True, 10**6, threads)
            want = naive.and_join(L, R, ts, wt, W, True)
        else:
            li, ri, g = seq_join(L, R, ts, wt, W, order, True, 10**6, driver, threads)
            want = naive.seq_join(L, R, ts, wt, W, order, True)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert len(got) == len(set(got)) and set(got) == want
    if driver != "and":
        assert got == sorted(got, key=lambda t: (t[2], R[2][t[1]], t[1], t[0]))


@settings(max_examples=300, deadline=None)
@given(tables_and_buffers(leaf_right=True), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       st.sampled_from(["right", "left", "and"]), st.sampled_from([1, 2]), st.integers(-2, 2), st.integers(0, 3),
       st.booleans())
def test_a_resumed_join_raises_exactly_past_its_cap(case, order, driver, threads, spare, first, sized):
    # the cap at the naive pair count and a pair or two either side, with first arrays of 0-3 pairs (or the
    # caller's exact count, ``pairs``): the SEQ kernels check it only where their arrays fill, and a resumed
    # call counts against what the calls before it wrote (kernels.join._stopped): past the cap is an
    # ExplosionError on any thread count, at or under it every pair, however the calls were cut
    ts, wt, W, L, R = case
    want = naive.and_join(L, R, ts, wt, W, True) if driver == "and" else naive.seq_join(L, R, ts, wt, W, order, True)
    cap = max(len(want) + spare, 0)
    with mock.patch.object(join, "_MIN_PAIRS", first), mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        call = (lambda: and_join(L, R, ts, wt, W, True, cap, threads)) if driver == "and" else (
            lambda: seq_join(L, R, ts, wt, W, order, True, cap, driver, threads, len(want) if sized else 0))
        if len(want) > cap:
            with pytest.raises(ExplosionError):
                call()
            return
        li, ri, g = call()
    assert sorted(zip(li.tolist(), ri.tolist(), g.tolist())) == sorted(want)


def test_a_join_whose_pairs_crowd_at_the_end_resumes_a_few_times_only():
    # 1,000 right events before any left one, then 50 after 1,000 left ones, each pairing with all of
    # them: the first arrays (1,050 pairs) fill at the first late right event, and the rate seen up to
    # there (one pair per right record) underestimates every later call.  The arrays at least double
    # per call (kernels.join._resumed), so the 50,000 pairs take a handful of calls, not one or more
    # per late right event.
    n = 2050
    ts = np.arange(n, dtype=np.int64)
    right = np.r_[np.arange(1000), np.arange(2000, 2050)].astype(np.int64)
    left = np.arange(1000, 2000, dtype=np.int64)
    L = (left.reshape(-1, 1), left, left, np.array([0, len(left)], np.int64))
    R = (right.reshape(-1, 1), right, right, np.array([0, len(right)], np.int64))
    calls = []
    kernel = join._seq_join

    def counted(*a):
        calls.append(len(a[-3]))
        return kernel(*a)

    with mock.patch.object(join, "_seq_join", counted):
        li, ri, g = seq_join(L, R, ts, ts, 10**4, "position", False, 10**6, "right")
    assert len(li) == 50 * 1000 and (g == 0).all()
    assert list(zip(ri.tolist(), li.tolist())) == [(r, l) for r in range(1000, 1050) for l in range(1000)]
    assert len(calls) <= 8, calls


def test_a_join_past_its_cap_while_counting_is_an_explosion():
    ts = np.arange(6, dtype=np.int64)
    leaf = (np.arange(6, dtype=np.int64).reshape(6, 1), np.arange(6, dtype=np.int64),
            np.arange(6, dtype=np.int64), np.array([0, 6]))
    with mock.patch.object(join, "_MIN_PAIRS", 0):
        assert len(seq_join(leaf, leaf, ts, ts, 10, "position", True, 15)[0]) == 15  # 6 * 5 / 2 pairs
        with pytest.raises(ExplosionError):
            seq_join(leaf, leaf, ts, ts, 10, "position", True, 14)


@settings(max_examples=300, deadline=None)
@given(tables_and_buffers(), st.data(), st.sampled_from([1, 2, 3]))
def test_pair_records_match_naive(case, data, threads):
    ts, wt, W, L, R = case
    assume(len(L[2]) and len(R[2]))
    m = data.draw(st.integers(0, 12))
    li = np.array(data.draw(st.lists(st.integers(0, len(L[2]) - 1), min_size=m, max_size=m)), np.int64)
    ri = np.array(data.draw(st.lists(st.integers(0, len(R[2]) - 1), min_size=m, max_size=m)), np.int64)
    Lt, Rt = join._timed(L, ts, wt), join._timed(R, ts, wt)
    if wt is ts:  # a time window: the buffers' window times are their times, the very arrays
        Lt, Rt = Lt[:6] + Lt[4:6], Rt[:6] + Rt[4:6]
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        pos, *fields = join.pair_records(Lt, Rt, li, ri, threads)
    got = [(p, *f) for p, *f in zip(pos.tolist(), *(a.tolist() for a in fields))]
    assert got == naive.pair_records(L, R, li, ri, ts, wt)
    assert (fields[4] is fields[2] and fields[5] is fields[3]) == (wt is ts)


def test_pair_records_refuse_a_pair_past_the_buffer():
    pos = np.arange(4, dtype=np.int64).reshape(-1, 1)
    buf = join._timed((pos, pos[:, 0].copy(), pos[:, 0].copy(), np.array([0, 4], np.int64)), pos[:, 0], pos[:, 0])
    for li, ri in (([4], [0]), ([0], [-1])):
        with pytest.raises(KernelInputError, match="past"):
            join.pair_records(buf, buf, np.array(li, np.int64), np.array(ri, np.int64))


@settings(max_examples=150, deadline=None)
@given(tables_and_buffers(), st.data(), st.sampled_from([1, 2, 3]))
def test_pair_columns_match_naive(case, data, threads):
    _, _, _, L, R = case
    assume(len(L[2]) and len(R[2]))
    m = data.draw(st.integers(0, 12))
    li = np.array(data.draw(st.lists(st.integers(0, len(L[2]) - 1), min_size=m, max_size=m)), np.int64)
    ri = np.array(data.draw(st.lists(st.integers(0, len(R[2]) - 1), min_size=m, max_size=m)), np.int64)
    where = data.draw(st.lists(st.sampled_from([(0, c) for c in range(L[0].shape[1])]
                                                + [(1, c) for c in range(R[0].shape[1])]), max_size=4))
    want = naive.pair_columns(L[0], R[0], li, ri, where)
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0), \
            mock.patch.object(config, "KERNEL_MIN_PAIRS", 0):  # the kernel, split, even for these few pairs
        got = join.pair_columns(L[0], R[0], li, ri, where, threads)
    assert got.shape == (len(where), m) and got.tolist() == want
    assert join.pair_columns(L[0], R[0], li, ri, where, threads).tolist() == want  # NumPy's gather below the minimum


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 3), st.booleans()), max_size=30),
       st.sampled_from([1, 2, 3]))
def test_keep_pairs_match_naive(rows, threads):
    li, ri, g, keep = (np.array([r[i] for r in rows], dtype=np.bool_ if i == 3 else np.int64) for i in range(4))
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0), \
            mock.patch.object(config, "KERNEL_MIN_PAIRS", 0):  # the kernel, split, even for these few pairs
        got = join.keep_pairs(li, ri, g, keep, threads)
    assert tuple(a.tolist() for a in got) == naive.keep_pairs(li, ri, g, keep)
    assert tuple(a.tolist() for a in join.keep_pairs(li, ri, g, keep, threads)) == naive.keep_pairs(li, ri, g, keep)


def test_pair_columns_refuse_a_pair_or_column_past_the_buffer():
    pos = np.arange(4, dtype=np.int64).reshape(-1, 1)
    for least in (0, config.KERNEL_MIN_PAIRS):  # the kernel's checks and NumPy's
        for li, ri, where in (([4], [0], [(0, 0)]), ([0], [-1], [(0, 0)]), ([0], [0], [(1, 1)]), ([0], [0], [(2, 0)])):
            with mock.patch.object(config, "KERNEL_MIN_PAIRS", least), \
                    pytest.raises(KernelInputError, match="past|columns"):
                join.pair_columns(pos, pos, np.array(li, np.int64), np.array(ri, np.int64), where)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1, 5), max_size=40))
def test_counting_sort_matches_naive(codes):
    order, offsets = counting_sort(np.array(codes, dtype=np.int64), 6)
    exp_order, exp_offsets = naive.counting_sort(codes, 6)
    assert order.tolist() == exp_order
    assert offsets.tolist() == exp_offsets


def test_seq_join_cap_raises_explosion():
    ts = np.arange(100, dtype=np.int64)
    pos = np.arange(100, dtype=np.int64).reshape(-1, 1)
    buf = (pos, pos[:, 0].copy(), pos[:, 0].copy(), np.array([0, 100], dtype=np.int64))
    with pytest.raises(ExplosionError, match="max_partials"):
        seq_join(buf, buf, ts, ts, 1000, "position", False, 50)
