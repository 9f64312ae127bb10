"""jitcep.kernels.kleene against its naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.kernels.kleene import (closure_runs, gather_lists, member_pairs, outside_lists, segment_aggregate,
                                  subsequences)

lengths = st.lists(st.integers(0, 6), min_size=0, max_size=8)
bounds = st.sampled_from([(1, None), (0, None), (3, None), (2, 2), (1, 3), (0, 2), (0, 0)])


def _offsets(lens):
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    return off


@settings(max_examples=200, deadline=None)
@given(lengths, bounds)
def test_closure_runs_equals_twin(lens, b):
    off = _offsets(lens)
    src, start, length = closure_runs(off, *b)
    assert sorted(zip(src.tolist(), start.tolist(), length.tolist())) == sorted(naive.closure_runs(off, *b))


@settings(max_examples=200, deadline=None)
@given(lengths, st.sampled_from(["sum", "min", "max", "avg"]), st.booleans(), st.data())
def test_segment_aggregate_equals_twin(lens, func, ints, data):
    off = _offsets(lens)
    n = int(off[-1])
    elems = st.integers(-5, 5) if ints else st.floats(-5, 5, allow_nan=False)
    vals = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), dtype=np.int64 if ints else np.float64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    out, ok = segment_aggregate(off, vals, valid, func)
    got = [out[j].item() if ok[j] else None for j in range(len(lens))]
    want = naive.segment_aggregate(off, vals, valid, func)
    assert got == pytest.approx(want) if any(w is not None for w in want) else got == want
    if ints and func != "avg":
        assert out.dtype == np.int64  # exact integer sums


def test_gather_lists():
    members = np.array([10, 11, 12, 13, 14], dtype=np.int64)
    off, pos = gather_lists(members, np.array([1, 0, 3]), np.array([2, 0, 2]))
    assert off.tolist() == [0, 2, 2, 4] and pos.tolist() == [11, 12, 13, 14]


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100))
def test_subsequences_equals_twin(lens, b, strict, steps):
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2  # positions, ascending inside each record
    ts = np.cumsum(steps).astype(np.int64)  # ties (step 0) matter under strict_ts
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6)
    assert over == -1
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert sorted(got) == sorted(naive.subsequences(off, members, ts, strict, *b))


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100),
       st.integers(0, 6))
def test_subsequences_within_a_window_equals_twin(lens, b, strict, steps, W):
    # every two members of a list within the window (a closure with two open sides, inside AND)
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    wt = ts + np.int64(-2**63 + 300) if W % 2 else ts  # near int64's minimum too: compared exactly (kernels.window)
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6, wt=wt, W=W)
    assert over == -1
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert sorted(got) == sorted(naive.subsequences(off, members, ts, strict, *b, wt=wt, W=W))


@settings(max_examples=300, deadline=None)
@given(lengths, bounds.filter(lambda b: b[0] >= 1), st.booleans(),
       st.lists(st.integers(0, 3), min_size=100, max_size=100), st.integers(0, 6), st.randoms())
def test_anchored_subsequences_equal_twin(lens, b, strict, steps, W, rnd):
    # a closure whose first member the joins bind: every list starts with it (with the window and
    # iterative pairs, which then relate it to the second member)
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    rec, first, second, slot, size = member_pairs(off, members)
    verdict = np.array([rnd.random() < 0.7 for _ in range(len(rec))], dtype=np.bool_)
    follows = np.zeros(size, np.bool_)
    follows[slot] = verdict
    allowed = {(int(r), int((f // 2) - off[r]), int((s // 2) - off[r]))
               for r, f, s, v in zip(rec, first, second, verdict) if v}
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6,
                                         follows=follows, wt=ts, W=W, anchored=True)
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert sorted(got) == sorted(naive.subsequences(off, members, ts, strict, *b, follows=allowed, wt=ts, W=W,
                                                    anchored=True))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=6, unique=True).map(sorted), min_size=1, max_size=6),
       st.data())
def test_outside_lists_equals_twin(lists, data):
    off = _offsets([len(x) for x in lists])
    lpos = np.array([p for x in lists for p in x], dtype=np.int64)
    n = data.draw(st.integers(0, 20))
    rec = np.array(data.draw(st.lists(st.integers(0, len(lists) - 1), min_size=n, max_size=n)), dtype=np.int64)
    ev = np.array(data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)), dtype=np.int64)
    assert outside_lists(rec, ev, off, lpos).tolist() == naive.outside_lists(rec, ev, off, lpos)


def test_subsequences_stop_at_the_caps():
    off = _offsets([2, 5, 1])  # record 1 has 31 non-empty subsequences
    members = np.arange(8, dtype=np.int64)
    ts = np.arange(8, dtype=np.int64)
    assert subsequences(off, members, ts, False, 1, None, cap=30, total_cap=10**6)[3] == 1
    assert subsequences(off, members, ts, False, 1, None, cap=31, total_cap=10**6)[3] == -1
    assert subsequences(off, members, ts, False, 1, None, cap=31, total_cap=33)[3] == -2


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100), st.randoms())
def test_subsequences_with_iterative_pairs_equals_twin(lens, b, strict, steps, rnd):
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    rec, first, second, slot, size = member_pairs(off, members)
    # the pairs are every (i < j) of each record, once, in slots of that record's block
    expect = sorted((r, int(members[off[r] + i]), int(members[off[r] + j]))
                    for r in range(len(lens)) for i in range(lens[r]) for j in range(i + 1, lens[r]))
    assert sorted(zip(rec.tolist(), first.tolist(), second.tolist())) == expect
    verdict = np.array([rnd.random() < 0.6 for _ in range(len(rec))], dtype=np.bool_)
    follows = np.zeros(size, np.bool_)
    follows[slot] = verdict
    allowed = {(int(r), int((f // 2) - off[r]), int((s // 2) - off[r]))
               for r, f, s, v in zip(rec, first, second, verdict) if v}
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6,
                                         follows=follows)
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert sorted(got) == sorted(naive.subsequences(off, members, ts, strict, *b, follows=allowed))
