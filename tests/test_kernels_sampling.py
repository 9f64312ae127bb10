"""The planner's sample kernel (jitcep.kernels.sampling) against its naive twin (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.sampling import SEED_MAX, draw_sample


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5).flatmap(lambda T: st.tuples(
    st.just(T), st.lists(st.integers(-2, T + 1), min_size=1, max_size=40))),
    st.integers(0, 12).flatmap(lambda nb: st.tuples(st.just(nb), st.integers(0, nb))),
    st.integers(0, 30), st.sampled_from([0, 1, 7, 2**40 + 3, SEED_MAX]), st.sampled_from([np.int8, np.int32]))
def test_draw_sample_matches_naive(case, blocks, m, seed, dtype):
    T, codes = case  # codes past either end too: counted in the null slot, never outside
    n_blocks, k = blocks
    starts, draws, hits = draw_sample(np.array(codes, dtype=dtype), T, n_blocks, k, m, seed)
    want = naive.draw_sample(codes, T, n_blocks, k, m, seed)
    assert (starts.tolist(), draws.tolist(), hits.tolist()) == want
    assert len(set(starts.tolist())) == k and all(0 <= s < n_blocks for s in starts)


def test_draws_are_uniform_and_blocks_cover_every_choice():
    codes = np.arange(10, dtype=np.int8)
    _, draws, hits = draw_sample(codes, 10, 0, 0, 100_000, 5)
    assert hits[:10].min() > 9_500 and hits[:10].max() < 10_500 and hits[10] == 0
    seen = {tuple(draw_sample(codes, 10, 5, 2, 0, s)[0].tolist()) for s in range(200)}
    assert len(seen) == 10  # every pair of 5 blocks


def test_bad_arguments_are_refused():
    codes = np.zeros(3, np.int8)
    for args in [(codes, 1, 2, 3, 0, 0), (codes, 1, 2, -1, 0, 0), (codes, 1, 2, 1, -1, 0),
                 (np.zeros(0, np.int8), 1, 0, 0, 1, 0), (codes, 1, 2, 1, 1, -1), (codes, 1, 2, 1, 1, SEED_MAX + 1)]:
        with pytest.raises(KernelInputError):
            draw_sample(*args)
