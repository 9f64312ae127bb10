"""The one window comparison (jitcep.kernels.window) against Python ints (docs/semantics.md section 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.window import MAX_SPAN, exceeds, most_per_window, spans_within, window_bound

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
times = st.one_of(st.integers(I64_MIN, I64_MIN + 3), st.integers(I64_MAX - 3, I64_MAX), st.integers(-3, 3),
                  st.integers(I64_MIN, I64_MAX))
bounds = st.one_of(st.integers(0, 3), st.integers(2**63 - 3, 2**63 + 3), st.integers(2**64 - 3, 2**64 + 3),
                   st.integers(0, 2**64 + 3))


@settings(max_examples=1000, deadline=None)
@given(times, times, bounds)
def test_exceeds_is_the_python_int_comparison(lo, hi, W):
    bound = window_bound(W)
    assert bound.dtype == np.uint64 and int(bound) == min(W, MAX_SPAN)
    assert exceeds(np.int64(lo), np.int64(hi), bound) == (hi - lo > W)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(times, times), max_size=20), bounds)
def test_spans_within_is_the_python_int_comparison(pairs, W):
    lo = np.array([a for a, _ in pairs], dtype=np.int64)
    hi = np.array([b for _, b in pairs], dtype=np.int64)
    assert spans_within(lo, hi, W).tolist() == [b - a <= W for a, b in pairs]


def test_extremes_by_hand():
    lo, hi = np.int64(I64_MIN), np.int64(I64_MAX)
    # the widest pair differs by 2**64 - 1: past every bound below it, within that bound
    assert exceeds(lo, hi, window_bound(2**64 - 2)) and not exceeds(lo, hi, window_bound(2**64 - 1))
    assert exceeds(lo, hi, window_bound(I64_MAX)) and exceeds(lo, hi, window_bound(0))
    # the other way round the difference is negative: within any bound
    assert not exceeds(hi, lo, window_bound(0))
    assert not exceeds(hi, hi, window_bound(0))


def test_window_bound_rejects_what_is_not_a_bound():
    with pytest.raises(ValueError):
        window_bound(-1)
    for bad in (1.5, True, "3", None):
        with pytest.raises(TypeError):
            window_bound(bad)
    with pytest.raises(ValueError):
        spans_within(np.zeros(2, np.int64), np.zeros(3, np.int64), 1)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 4).flatmap(lambda T: st.tuples(
    st.just(T), st.lists(st.tuples(st.integers(-2, T + 1), times), max_size=30),   # codes past either end too
    st.lists(st.lists(st.booleans(), min_size=T + 1, max_size=T + 1), min_size=1, max_size=4))),
    st.one_of(bounds, st.integers(0, 40)))
def test_most_per_window_matches_naive(case, W):
    T, events, allowed = case
    events.sort(key=lambda e: e[1])
    tc = np.array([c for c, _ in events], dtype=np.int32)
    ts = np.array([t for _, t in events], dtype=np.int64)
    count, most = most_per_window(tc, ts, np.array(allowed, dtype=np.bool_).reshape(len(allowed), T + 1), W)
    assert (count.tolist(), most.tolist()) == naive.most_per_window(tc.tolist(), ts.tolist(), allowed, min(W, MAX_SPAN))


@pytest.mark.parametrize("ts, W", [([5], 0), ([0, 1, 2, 3], 1), ([0, 1, 2, 3], 3), ([0, 10, 11, 30, 31, 32], 1),
                                   ([0, 10, 11, 30, 31, 32], 9), ([I64_MIN, I64_MAX], 2**64 - 2),
                                   ([I64_MIN, 0, I64_MAX], 2**63)])
def test_most_per_window_bounds_every_window(ts, W):
    # hand-checked against the windows themselves: at least the most one window holds, at most twice it
    most = max(sum(1 for u in ts if t <= u <= t + W) for t in ts)
    got = most_per_window(np.zeros(len(ts), np.int8), np.array(ts, dtype=np.int64), np.ones((1, 2), np.bool_), W)
    assert got[0].tolist() == [len(ts)] and most <= got[1][0] <= 2 * most


def test_most_per_window_refuses_mismatched_inputs():
    tc, ts = np.zeros(3, np.int32), np.arange(3, dtype=np.int64)
    for args in [(tc, ts[:2], np.ones((1, 2), np.bool_), 1), (tc, ts, np.ones((1, 0), np.bool_), 1)]:
        with pytest.raises(KernelInputError):
            most_per_window(*args)
    with pytest.raises(KernelInputError):
        most_per_window(tc, ts, np.ones((1, 2), np.bool_), -1)
