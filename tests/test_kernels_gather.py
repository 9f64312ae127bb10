"""The output's gathers (jitcep.kernels.gather) against their naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.gather import input_rows, row_numbers, take


@st.composite
def positions(draw):
    """(parts, row, n): a few position arrays (-1 unbound) over n events, with a row map or none."""
    n = draw(st.integers(1, 20))
    parts = draw(st.lists(st.lists(st.integers(-1, n - 1), max_size=15), max_size=4))
    row = np.array(draw(st.permutations(range(n))), dtype=np.int64) if draw(st.booleans()) else None
    return [np.array(p, dtype=np.int64) for p in parts], row, n


@settings(max_examples=300, deadline=None)
@given(positions())
def test_input_rows_matches_naive(case):
    parts, row, n = case
    assert input_rows(parts, row, n).tolist() == naive.input_rows(parts, row)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([np.int64, np.int32, np.float64, np.uint8]), st.integers(1, 30), st.data())
def test_take_matches_naive(dtype, n, data):
    values = (np.arange(n) * 3 - 7).astype(dtype)
    idx = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=40)), dtype=np.int64)
    got = take(values, idx)
    assert got.dtype == values.dtype
    assert got.tolist() == naive.take(values.tolist(), idx.tolist())


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.integers(0, 4), st.data())
def test_take_rows_matches_naive(n, k, data):
    values = (np.arange(n * k, dtype=np.int64) * 5 - 9).reshape(n, k)
    idx = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=30)), dtype=np.int64)
    got = take(values, idx)
    assert got.shape == (len(idx), k)
    assert got.tolist() == naive.take(values.tolist(), idx.tolist())


@pytest.mark.parametrize("n", [0, 1, 7, 70_000])  # 70,000: past POOL_MIN, cut from a pool inside a run
def test_row_numbers_count_from_zero(n):
    from jitcep.kernels import alloc
    with alloc.Pools().run():
        got = row_numbers(n)
    assert got.dtype == np.int64 and got.tolist() == naive.row_numbers(n)


def test_refuses_indexes_outside():
    with pytest.raises(KernelInputError):
        input_rows([np.array([3])], None, 3)
    with pytest.raises(KernelInputError):
        input_rows([np.array([1])], np.array([0]), 2)
    with pytest.raises(KernelInputError):
        take(np.arange(3), np.array([3]))
    with pytest.raises(KernelInputError):
        take(np.arange(3), np.array([-1]))
    with pytest.raises(KernelInputError):
        take(np.arange(6, dtype=np.int64).reshape(3, 2), np.array([3]))
    with pytest.raises(KernelInputError):  # rows of positions only
        take(np.zeros((3, 2)), np.array([0]))
