"""The greedy scans of the output policies and of freeze (jitcep.kernels.policies) against their naive
twins (tests/naive.py) on random inputs, times at the int64 extremes included (docs/semantics.md 9)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.policies import consume_once, freeze_active, non_overlapping

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@st.composite
def match_bounds(draw):
    """(part, lo, hi, G): matches with a partition and first <= last positions (ties and repeats likely)."""
    G = draw(st.integers(1, 4))
    m = draw(st.integers(0, 30))
    part = draw(st.lists(st.integers(0, G - 1), min_size=m, max_size=m))
    lo = draw(st.lists(st.integers(0, 12), min_size=m, max_size=m))
    span = draw(st.lists(st.integers(0, 5), min_size=m, max_size=m))
    return (np.array(part, np.int64), np.array(lo, np.int64), np.array([a + s for a, s in zip(lo, span)], np.int64),
            G)


@settings(max_examples=500, deadline=None)
@given(match_bounds())
def test_non_overlapping_matches_naive(case):
    part, lo, hi, G = case
    got = np.flatnonzero(non_overlapping(part, lo, hi, G)).tolist()
    assert got == naive.non_overlapping(part, lo, hi)


@st.composite
def match_events(draw):
    """(per-match [(slot, pos)], n, nslots): each match's events, distinct within a match."""
    n = draw(st.integers(1, 10))
    nslots = draw(st.integers(1, 3))
    m = draw(st.integers(0, 25))
    out = []
    for _ in range(m):
        evs = draw(st.lists(st.tuples(st.integers(0, nslots - 1), st.integers(0, n - 1)), max_size=4, unique=True))
        out.append(evs)
    return out, n, nslots


def _csr(events):
    off = np.zeros(len(events) + 1, np.int64)
    np.cumsum([len(e) for e in events], out=off[1:])
    pos = np.array([p for e in events for _, p in e], np.int64)
    slot = np.array([s for e in events for s, _ in e], np.int64)
    return off, pos, slot


@settings(max_examples=500, deadline=None)
@given(match_events())
def test_consume_once_matches_naive(case):
    events, n, nslots = case
    off, pos, slot = _csr(events)
    got = np.flatnonzero(consume_once(off, pos, slot, n, nslots)).tolist()
    assert got == naive.consume_once(events)


times = st.one_of(st.integers(I64_MIN, I64_MIN + 4), st.integers(I64_MAX - 4, I64_MAX), st.integers(-4, 4),
                  st.integers(I64_MIN, I64_MAX))


@st.composite
def freeze_cases(draw):
    """(pos ascending, stream, S, wt nondecreasing, W): candidates of a table whose measure may sit at
    the int64 extremes; W from 0 to past the widest difference."""
    n = draw(st.integers(1, 15))
    wt = np.array(sorted(draw(st.lists(times, min_size=n, max_size=n))), np.int64)
    pos = np.array(sorted(draw(st.sets(st.integers(0, n - 1)))), np.int64)
    S = draw(st.integers(1, 3))
    stream = np.array(draw(st.lists(st.integers(0, S - 1), min_size=len(pos), max_size=len(pos))), np.int64)
    W = draw(st.one_of(st.integers(0, 4), st.integers(2**63 - 2, 2**63 + 2), st.just(2**64 - 1)))
    return pos, stream, S, wt, W


@settings(max_examples=500, deadline=None)
@given(freeze_cases())
def test_freeze_active_matches_naive(case):
    pos, stream, S, wt, W = case
    got = np.flatnonzero(freeze_active(pos, stream, S, wt, W)).tolist()
    assert got == naive.freeze_active(pos, stream, wt, W)


def test_freeze_by_hand():
    # window 2: candidates at times 0, 1, 2, 3, 5, 6 -> 0 active; 1, 2 within 2 of it (frozen); 3 active
    # (3 - 0 > 2); 5 within 2 of 3 (frozen: measured from the last *active* one); 6 active (6 - 3 > 2)
    wt = np.array([0, 1, 2, 3, 4, 5, 6], np.int64)
    pos = np.array([0, 1, 2, 3, 5, 6], np.int64)
    assert np.flatnonzero(freeze_active(pos, np.zeros(6, np.int64), 1, wt, 2)).tolist() == [0, 3, 5]
    # two streams: each has its own last active candidate
    stream = np.array([0, 1, 0, 1, 0, 1], np.int64)
    assert np.flatnonzero(freeze_active(pos, stream, 2, wt, 2)).tolist() == [0, 1, 4, 5]


@pytest.mark.parametrize("call", [
    lambda: non_overlapping(np.array([0, 2]), np.array([0, 1]), np.array([0, 1]), 2),
    lambda: non_overlapping(np.array([0]), np.array([0, 1]), np.array([0, 1]), 1),
    lambda: consume_once(np.array([0, 1]), np.array([5]), np.array([0]), 5, 1),
    lambda: consume_once(np.array([0, 1]), np.array([0]), np.array([1]), 5, 1),
    lambda: consume_once(np.array([0, 2]), np.array([0]), np.array([0]), 5, 1),
    lambda: freeze_active(np.array([3]), np.array([0]), 1, np.zeros(3, np.int64), 1),
    lambda: freeze_active(np.array([0]), np.array([1]), 1, np.zeros(3, np.int64), 1),
], ids=["part", "lengths", "pos", "slot", "offsets", "freeze pos", "stream"])
def test_wrappers_refuse_out_of_range_indexes(call):
    with pytest.raises(KernelInputError):
        call()
