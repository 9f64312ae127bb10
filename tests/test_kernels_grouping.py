"""Grouping kernels (jitcep.kernels.grouping) against their naive twins (tests/naive.py).

``group_with_keys`` and ``leaf_by_key`` split their input into ranges over ``threads``
(jitcep/threads.py): the tests draw 1-3 threads with :data:`jitcep.config.THREAD_MIN_RECORDS` at 0, so
the tiny drawn inputs are split too (at its default they would all run as one range).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings, strategies as st

import naive
from jitcep import config
from jitcep.kernels import counting_sort, group_with_key_runs, group_with_keys, leaf_by_key, leaf_of_run
from jitcep.kernels import grouping
from jitcep.kernels.grouping import count_codes, record_fields


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda T: st.tuples(
    st.just(T), st.lists(st.integers(-1, T - 1), max_size=30), st.lists(st.booleans(), min_size=T, max_size=T))),
    st.booleans(), st.booleans(), st.booleans(), st.integers(-3, 3), st.integers(1, 3))
def test_group_with_keys_matches_naive(case, with_keys, use_keep, null_keys, base, threads):
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        _group_with_keys_matches_naive(case, with_keys, use_keep, null_keys, base, threads)


def _group_with_keys_matches_naive(case, with_keys, use_keep, null_keys, base, threads):
    T, codes, keep = case
    keys = [(7 * i) % 4 for i in range(len(codes))] if with_keys else None
    valid = [i % 5 != 3 for i in range(len(codes))] if null_keys else None
    values = np.arange(len(codes), dtype=np.int64) * 10 + 1
    # the column holds key + base (an integer key column and its minimum): records carry the key
    recs, offsets = group_with_keys(
        np.array(codes, dtype=np.int32), T, None if keys is None else np.array(keys, dtype=np.int64) + base,
        values, np.array(keep) if use_keep else None, None if valid is None else np.array(valid),
        key_base=base if with_keys else 0, threads=threads)
    # a null key (valid False) drops the index like a dropped code
    kept = [c if c >= 0 and (not use_keep or keep[c]) and (valid is None or valid[i]) else -1
            for i, c in enumerate(codes)]
    exp_order, exp_keys, exp_off = naive.group_with_keys(kept, T, keys)
    order, okeys, ovalues = record_fields(recs)
    assert offsets.tolist() == exp_off and order.tolist() == exp_order
    assert okeys.tolist() == (exp_keys if keys is not None else [0] * len(exp_order))
    assert ovalues.tolist() == values[exp_order].tolist()
    if keys is not None:  # keys that exist only for the kept indices: given between the passes
        asked = []

        def key_of(idx):
            asked.append(np.array(idx))
            return np.array(keys, dtype=np.int32)[np.asarray(idx)]

        recs2, off2 = group_with_keys(np.array(codes, dtype=np.int32), T, None, values,
                                      np.array(keep) if use_keep else None,
                                      None if valid is None else np.array(valid), key_of=key_of,
                                      threads=threads)
        assert len(asked) == 1 and asked[0].tolist() == sorted(exp_order)  # the kept indices, ascending
        assert off2.tolist() == exp_off and recs2.tolist() == recs.tolist()
    o2, off2 = counting_sort(np.array(codes, dtype=np.int32), T)
    assert (o2.tolist(), off2.tolist()) == naive.counting_sort(codes, T)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(lambda T: st.integers(1, 4).flatmap(lambda G: st.tuples(
    st.just(T), st.just(G), st.lists(st.tuples(st.integers(-1, T - 1), st.integers(-2, G - 1)), max_size=30),
    st.lists(st.booleans(), min_size=T, max_size=T)))),
    st.booleans(), st.booleans(), st.integers(0, 3), st.none() | st.integers(0, 5), st.integers(1, 3))
def test_group_with_key_runs_matches_naive(case, use_keep, null_keys, base, count_window, threads):
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        _group_with_key_runs_matches_naive(case, use_keep, null_keys, base, count_window, threads)


def _group_with_key_runs_matches_naive(case, use_keep, null_keys, base, count_window, threads):
    T, G, rows, keep = case
    codes = [c for c, _ in rows]
    keys = [k for _, k in rows]  # below 0: a null key coded -1 (or less), kept in the record
    valid = [i % 5 != 3 for i in range(len(codes))] if null_keys else None
    values = np.arange(len(codes), dtype=np.int64) * 10 + 1
    got = group_with_key_runs(np.array(codes, dtype=np.int32), T, np.array(keys, dtype=np.int64) + base, G, values,
                              np.array(keep) if use_keep else None, None if valid is None else np.array(valid),
                              key_base=base, threads=threads)
    recs, offsets, key_offsets = got
    kept_codes = [c for c in range(T) if not use_keep or keep[c]]
    kept = [c if c >= 0 and c in kept_codes and (valid is None or valid[i]) else -1 for i, c in enumerate(codes)]
    exp_order, exp_keys, exp_off, exp_koff = naive.group_with_key_runs(kept, T, keys, G, kept_codes)
    order, okeys, ovalues = record_fields(recs)
    assert offsets.tolist() == exp_off and order.tolist() == exp_order
    assert okeys.tolist() == exp_keys and ovalues.tolist() == values[exp_order].tolist()
    assert key_offsets.tolist() == [exp_koff[c] for c in kept_codes]
    # each kept code's leaf: as leaf_by_key makes it of the code's records in index order
    ts = values
    wt = None if count_window is None else np.arange(len(codes), dtype=np.int64) + count_window
    for c, koff in zip(kept_codes, key_offsets):
        out, goff, t, w = leaf_of_run(recs, koff, wt, threads)
        mine = sorted(i for i, x in enumerate(kept) if x == c)
        assert (out.tolist(), goff.tolist()) == naive.leaf_by_key(mine, [keys[i] for i in mine], G, [True] * len(mine))
        assert t.tolist() == ts[out].tolist() and w.tolist() == (ts if wt is None else wt)[out].tolist()
        assert (w is t) == (wt is None)
    # past SLOTS_MAX (code, key) slots: grouped by code alone, as group_with_keys groups them
    with mock.patch.object(grouping, "SLOTS_MAX", -1):
        recs2, off2, koff2 = group_with_key_runs(np.array(codes, dtype=np.int32), T, np.array(keys, dtype=np.int64),
                                                 G, values, np.array(keep) if use_keep else None,
                                                 None if valid is None else np.array(valid), threads=threads)
    assert koff2 is None and off2.tolist() == exp_off
    assert record_fields(recs2)[0].tolist() == sorted(exp_order, key=lambda i: (kept[i], i))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(lambda G: st.tuples(
    st.just(G), st.lists(st.tuples(st.integers(-1, G - 1), st.booleans()), max_size=30))), st.booleans(),
    st.none() | st.integers(0, 5), st.integers(1, 3))
def test_leaf_by_key_matches_naive(case, use_keep, count_window, threads):
    G, rows = case
    cand = sorted(set(range(0, 3 * len(rows), 3)))[:len(rows)]
    ckeys = [k for k, _ in rows]
    keep = [ok for _, ok in rows] if use_keep else [True] * len(rows)
    ts = np.arange(3 * len(rows) + 1, dtype=np.int64) // 2
    wt = None if count_window is None else np.arange(len(ts), dtype=np.int64) + count_window
    recs = np.empty((len(cand), 2), dtype=np.int64)  # group_with_keys records: key << 32 | position, ts
    recs[:, 0] = (np.array(ckeys, dtype=np.int64) << 32) | np.array(cand, dtype=np.int64)
    recs[:, 1] = ts[cand]
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        out, goff, t, w = leaf_by_key(recs, G, np.array(keep, dtype=np.bool_) if use_keep else None, wt, threads)
    assert out.dtype == np.int64
    assert (out.tolist(), goff.tolist()) == naive.leaf_by_key(cand, ckeys, G, keep)
    # the records' times move along in the same pass; one array when the window measure is ts
    assert t.tolist() == ts[out].tolist() and w.tolist() == (ts if wt is None else wt)[out].tolist()
    assert (w is t) == (wt is None)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6).flatmap(lambda k: st.tuples(
    st.just(k), st.lists(st.integers(-3, k + 2), max_size=40), st.sampled_from([np.int8, np.int16, np.int32]))))
def test_count_codes_matches_naive(case):
    k, codes, dtype = case  # codes past either end too: clamped into the null slot, never outside
    assert count_codes(np.array(codes, dtype=dtype), k).tolist() == naive.count_codes(codes, k)
