"""The negation kernel (jitcep.kernels.negation) against its naive twin (tests/naive.py) on random buffers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.negation import candidate_pairs, candidate_rows, killed_unconditionally, negation_ranges
from test_kernels_join import tables_and_buffers


@st.composite
def negation_cases(draw, extreme=None):
    """A match buffer, a negated leaf (sorted positions per partition) and a range spec (``extreme``:
    :func:`test_kernels_join.tables_and_buffers`'s times and windows at the int64 extremes)."""
    ts, wt, W, buf, _ = draw(tables_and_buffers(extreme=extreme))
    n, G = len(ts), len(buf[3]) - 1
    groups = [sorted(draw(st.sets(st.integers(0, n - 1), max_size=n))) for _ in range(G)]
    cand = np.array([p for g in groups for p in g], dtype=np.int64)
    cgoff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum([len(g) for g in groups], out=cgoff[1:])
    k = buf[0].shape[1]
    side = draw(st.lists(st.sampled_from(["before", "after", "none"]), min_size=k, max_size=k))
    bcols = [c for c in range(k) if side[c] == "before"]
    acols = [c for c in range(k) if side[c] == "after"]
    return ts, wt, W, buf, (cand, cgoff), bcols, acols, draw(st.booleans())


@settings(max_examples=500, deadline=None)
@given(negation_cases(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.integers(1, 6),
       st.sampled_from([None, True, False]))
def test_negation_kernel_matches_naive(case, order, budget, ranked):
    # ranked: the bounds read from an answer per position (one partition) or searched per record
    ts, wt, W, buf, leaf, bcols, acols, in_conj = case
    pos = buf[0]
    cand = leaf[0]
    expected = naive.negation_candidates(buf, leaf, ts, wt, W, order, bcols, acols, in_conj)
    lo, hi = negation_ranges(buf, leaf, ts, wt, W, order, bcols, acols, in_conj, ranked=ranked)
    # the range, own events excluded, is the naive set
    got = [set(cand[lo[r]:hi[r]].tolist()) - set(pos[r].tolist()) for r in range(len(lo))]
    assert got == expected
    assert killed_unconditionally(pos, lo, hi, cand).tolist() == [bool(s) for s in expected]
    # the pairs, in chunks of about ``budget``, skipping decided records, cover each record's set once
    skip = np.array([r % 3 == 2 for r in range(len(lo))], dtype=np.bool_)
    pairs, r = [], 0
    while r < len(lo):
        rec, ev, r2 = candidate_pairs(pos, lo, hi, cand, skip, r, budget)
        assert r2 > r
        pairs += list(zip(rec.tolist(), ev.tolist()))
        r = r2
    assert len(pairs) == len(set(pairs))
    assert sorted(pairs) == sorted((q, e) for q, s in enumerate(expected) if not skip[q] for e in s)
    # the same pairs with the positions a predicate reads (the event at the negative columns)
    cols = [-1, *range(pos.shape[1]), -1][::-1]
    rows, r = [], 0
    while r < len(lo):
        rec, P, r2 = candidate_rows(pos, lo, hi, cand, skip, r, budget, cols)
        assert r2 > r and P.shape == (len(cols), len(rec))
        ev = P[0]
        rows += [(q, int(e), tuple(P[:, i].tolist())) for i, (q, e) in enumerate(zip(rec.tolist(), ev))]
        r = r2
    assert sorted(rows) == naive.candidate_rows(pos, expected, skip, cols)


@st.composite
def long_partition_cases(draw):
    """Partitions of up to 120 events with up to 60 candidates each, and up to 40 records per partition in
    end order, many sharing an event (as a join's output shares its right records): the kernel searches a
    bound from the last record's, a step at a time and then by bisection, forwards and backwards."""
    n = draw(st.integers(2, 120))
    ts = np.cumsum(np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64))
    G = draw(st.integers(1, 2))
    group = np.array(draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n)), dtype=np.int64)
    members = [np.flatnonzero(group == g).tolist() for g in range(G)]
    cand = [sorted(draw(st.sets(st.sampled_from(ps), max_size=60))) if ps else [] for ps in members]
    recs = []
    for g, ps in enumerate(members):
        if len(ps) < 2:
            continue
        shared = draw(st.lists(st.sampled_from(ps), min_size=1, max_size=4))
        for _ in range(draw(st.integers(0, 40))):
            a, b = draw(st.sampled_from(ps)), draw(st.sampled_from(shared))
            if a != b:
                recs.append((g, max(a, b), [a, b]))
    recs.sort(key=lambda r: (r[0], r[1]))
    m = len(recs)
    pos = np.array([r[2] for r in recs], dtype=np.int64).reshape(m, 2)
    start, end = pos.min(axis=1), pos.max(axis=1)
    goff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum(np.bincount([r[0] for r in recs], minlength=G), out=goff[1:])
    cgoff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum([len(c) for c in cand], out=cgoff[1:])
    leaf = (np.array([p for c in cand for p in c], dtype=np.int64), cgoff)
    return ts, (pos, start, end, goff), leaf


@settings(max_examples=300, deadline=None)
@given(long_partition_cases(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]),
       st.sampled_from([([0], [1]), ([1], [0]), ([0, 1], []), ([], [0, 1])]), st.booleans(), st.booleans())
def test_negation_ranges_over_long_partitions_match_naive(case, order, sides, in_conj, ranked):
    ts, buf, leaf = case
    bcols, acols = sides
    expected = naive.negation_candidates(buf, leaf, ts, ts, 3, order, bcols, acols, in_conj)
    lo, hi = negation_ranges(buf, leaf, ts, ts, 3, order, bcols, acols, in_conj, ranked=ranked)
    got = [set(leaf[0][lo[r]:hi[r]].tolist()) - set(buf[0][r].tolist()) for r in range(len(lo))]
    assert got == expected
    # one partition: the ranges read from the answers per position are the searched ones, index for index
    if len(buf[3]) == 2:
        other = negation_ranges(buf, leaf, ts, ts, 3, order, bcols, acols, in_conj, ranked=not ranked)
        assert lo.tolist() == other[0].tolist() and hi.tolist() == other[1].tolist()


def test_candidate_rows_rejects_a_column_outside_the_record():
    pos = np.array([[0, 2]], dtype=np.int64)
    lo, hi = np.array([0]), np.array([1])
    for cols in ([2], [-2]):
        with pytest.raises(KernelInputError):
            candidate_rows(pos, lo, hi, np.array([1], dtype=np.int64), np.zeros(1, np.bool_), 0, 8, cols)


def test_negation_window_bound_when_no_neighbour():
    # SEQ(!B n, A a) shape: nothing before, a after; WITHIN 2 from the record's last event
    ts = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
    pos = np.array([[5]], dtype=np.int64)
    buf = (pos, np.array([5]), np.array([5]), np.array([0, 1], dtype=np.int64))
    leaf = (np.array([1, 2, 3, 4], dtype=np.int64), np.array([0, 4], dtype=np.int64))
    lo, hi = negation_ranges(buf, leaf, ts, ts, 2, "position", [], [0], False)
    assert leaf[0][lo[0]:hi[0]].tolist() == [3, 4]
