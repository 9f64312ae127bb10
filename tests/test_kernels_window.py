"""The one window comparison (jitcep.kernels.window) against Python ints (docs/semantics.md section 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from jitcep.kernels.window import MAX_SPAN, exceeds, spans_within, window_bound

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
