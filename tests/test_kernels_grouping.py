"""Grouping kernels (jitcep.kernels.grouping) against their naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import naive
from jitcep.kernels import counting_sort, group_with_keys, leaf_by_key


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda T: st.tuples(
    st.just(T), st.lists(st.integers(-1, T - 1), max_size=30), st.lists(st.booleans(), min_size=T, max_size=T))),
    st.booleans(), st.booleans())
def test_group_with_keys_matches_naive(case, with_keys, use_keep):
    T, codes, keep = case
    keys = [(7 * i) % 4 for i in range(len(codes))] if with_keys else None
    order, okeys, offsets = group_with_keys(np.array(codes, dtype=np.int32), T,
                                            None if keys is None else np.array(keys, dtype=np.int64),
                                            np.array(keep) if use_keep else None)
    kept = [c if c >= 0 and (not use_keep or keep[c]) else -1 for c in codes]
    exp_order, exp_keys, exp_off = naive.group_with_keys(kept, T, keys)
    assert order.dtype == np.int32 and okeys.dtype == np.int32
    assert (order.tolist(), okeys.tolist(), offsets.tolist()) == (exp_order, exp_keys, exp_off)
    o2, off2 = counting_sort(np.array(codes, dtype=np.int32), T)
    assert (o2.tolist(), off2.tolist()) == naive.counting_sort(codes, T)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(lambda G: st.tuples(
    st.just(G), st.lists(st.tuples(st.integers(-1, G - 1), st.booleans()), max_size=30))), st.booleans())
def test_leaf_by_key_matches_naive(case, use_keep):
    G, rows = case
    cand = sorted(set(range(0, 3 * len(rows), 3)))[:len(rows)]
    ckeys = [k for k, _ in rows]
    keep = [ok for _, ok in rows] if use_keep else [True] * len(rows)
    out, goff = leaf_by_key(np.array(cand, dtype=np.int32), np.array(ckeys, dtype=np.int32), G,
                            np.array(keep, dtype=np.bool_) if use_keep else None)
    assert out.dtype == np.int64
    assert (out.tolist(), goff.tolist()) == naive.leaf_by_key(cand, ckeys, G, keep)
