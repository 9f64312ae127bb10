"""The planner's sample kernel (jitcep.kernels.sampling) against its naive twin (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.sampling import (SEED_MAX, below_share, block_sample, candidates, choose, draw_sample,
                                     extend_tuples, key_codes, pair_counts, sample_with_key, sample_with_views,
                                     window_ranges)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5).flatmap(lambda T: st.tuples(
    st.just(T), st.lists(st.integers(-2, T + 1), min_size=1, max_size=40))),
    st.integers(0, 12).flatmap(lambda nb: st.tuples(st.just(nb), st.integers(0, nb))),
    st.integers(0, 30), st.sampled_from([0, 1, 7, 2**40 + 3, SEED_MAX]), st.sampled_from([np.int8, np.int32]),
    st.booleans())
def test_draw_sample_matches_naive(case, blocks, m, seed, dtype, typed):
    T, codes = case  # codes past either end too: counted in the null slot, never outside
    n_blocks, k = blocks
    starts, draws, hits = draw_sample(np.array(codes, dtype=dtype), T, n_blocks, k, m, seed, typed)
    want = naive.draw_sample(codes, T, n_blocks, k, m, seed, typed)
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


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 20), min_size=n, max_size=n),      # wt (sorted below)
    st.permutations(range(n)),                                  # pos: any order of the sample's events
    st.integers(1, 3).flatmap(lambda k: st.tuples(
        st.lists(st.lists(st.integers(0, n - 1), min_size=k, max_size=k), max_size=5),  # partial tuples
        st.lists(st.sampled_from([-1, 0, 1]), min_size=k, max_size=k))),
    st.lists(st.integers(0, n - 1), max_size=10),               # candidates w
    st.data())),
    st.sampled_from([0.0, 2.0, 5.5, 30.0]))
def test_extend_tuples_matches_naive(case, limit):
    wt, pos, (tuples, rel), w, data = case
    wt = sorted(wt)
    ranges = [data.draw(st.tuples(st.integers(0, len(w)), st.integers(0, len(w)))) for _ in tuples]
    s = [min(a, b) for a, b in ranges]
    cnt = [abs(a - b) for a, b in ranges]
    lo = [min(wt[c] for c in cols) for cols in tuples]
    hi = [max(wt[c] for c in cols) for cols in tuples]
    k = len(rel)
    T = np.array(tuples, dtype=np.int64).reshape(-1, k).T.copy()
    got = extend_tuples(T, np.array(lo, np.int64), np.array(hi, np.int64), np.array(s, np.int64),
                        np.array(cnt, np.int64), np.array(w, np.int64), np.array(wt, np.int64),
                        np.array(pos, np.int64), limit, np.array(rel, np.int64))
    want = naive.extend_tuples(tuples, lo, hi, s, cnt, w, wt, pos, limit, rel)
    assert ([tuple(c) for c in got[0].T.tolist()], got[1].tolist(), got[2].tolist()) == want


def test_extend_tuples_refuses_ranges_and_indexes_past_their_arrays():
    T, one = np.zeros((1, 1), np.int64), np.zeros(1, np.int64)
    wt = np.arange(3, dtype=np.int64)
    for s, cnt, w in [(1, 3, [0, 1]), (-1, 1, [0]), (0, 1, [7])]:
        with pytest.raises(KernelInputError):
            extend_tuples(T, one, one, np.array([s]), np.array([cnt]), np.array(w, np.int64), wt, wt, 5.0, one)
    with pytest.raises(KernelInputError):
        extend_tuples(np.full((1, 1), 9, np.int64), one, one, one, one, one, wt, wt, 5.0, one)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(-1, 4), min_size=n, max_size=n),                      # type codes (-1, 4: null slot)
    st.lists(st.integers(-3, 40), min_size=n, max_size=n),                     # key values
    st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n)),     # key validity
    st.integers(1, n).flatmap(lambda L: st.tuples(st.just(L), st.integers(0, n // L))),  # L, k
    st.integers(0, 30).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m))))),    # m, m_key
    st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=1, max_size=3),
    st.sampled_from([0, 7, SEED_MAX]), st.booleans(), st.booleans(), st.booleans())
def test_sample_with_key_is_the_calls_it_replaces(case, allowed, seed, every, keyed, typed):
    codes, keys, valid, (L, k), (m, m_key) = case
    if not keyed:
        keys = valid = None
    n_blocks = len(codes) // L
    every = every and k == n_blocks  # every block drawn: the whole table, its tail too
    ts = list(range(0, 3 * len(codes), 3))
    got = sample_with_key(np.array(codes, np.int32), np.array(ts, np.int64), 4, n_blocks, k, m, seed, L, every,
                          None if keys is None else np.array(keys, np.int64),
                          None if valid is None else np.array(valid, np.bool_), m_key,
                          np.array(allowed), typed)
    want = naive.sample_with_key(codes, ts, 4, n_blocks, k, m, seed, L, every, keys, valid, m_key, allowed, typed)
    _same_sample(got, want, len(allowed))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(-1, 4), min_size=n, max_size=n),                      # type codes (-1, 4: null slot)
    st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "N14228", "N1422", "abcdefghijkl", "\u00e9\u00e9"])),
             min_size=n, max_size=n),
    st.one_of(st.none(), st.integers(0, n - 1)),                               # a string of 13 bytes: not inline
    st.integers(1, n).flatmap(lambda L: st.tuples(st.just(L), st.integers(0, n // L))),  # L, k
    st.integers(0, 30).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m))),      # m, m_key
    st.permutations(range(n)), st.booleans())),
    st.lists(st.lists(st.booleans(), min_size=5, max_size=5), min_size=1, max_size=3),
    st.sampled_from([0, 7, SEED_MAX]), st.booleans(), st.booleans())
def test_sample_with_views_is_the_calls_it_replaces(case, allowed, seed, every, typed):
    from jitcep.events.column import Column

    codes, strings, long, (L, k), (m, m_key), perm, permuted = case
    if long is not None:
        strings[long] = "b" * 13
    n_blocks = len(codes) // L
    every = every and k == n_blocks
    ts = list(range(0, 3 * len(codes), 3))
    # the column by position: input row perm[p] holds the string of position p (as an unsorted input's)
    rows = [None] * len(strings)
    for p, r in enumerate(perm):
        rows[r] = strings[p]
    col = Column.deferred(pl.Series(rows if permuted else strings, dtype=pl.String),
                          np.array(perm, np.int64) if permuted else None)
    words, by = col.views()
    got = sample_with_views(np.array(codes, np.int32), np.array(ts, np.int64), 4, n_blocks, k, m, seed, L, every,
                            words, by, col.valid, m_key, np.array(allowed), typed)
    want = naive.sample_with_views(codes, ts, 4, n_blocks, k, m, seed, L, every, strings, m_key, allowed, typed)
    if want is None:
        assert got is None
        return
    _same_sample(got, want, len(allowed))


def test_sample_with_views_refuses_mismatched_inputs():
    tc, ts, allowed = np.zeros(8, np.int32), np.arange(8, dtype=np.int64), np.ones((1, 2), np.bool_)
    words = np.zeros(16, np.uint64)
    for args in [(tc, ts[:7], 1, 2, 1, 4, 0, 4, False, words, None, None, 2, allowed),          # ts short
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, words, np.arange(7), None, 2, allowed),     # perm short
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, words, None, np.ones(7, np.bool_), 2, allowed),
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, words, np.full(8, 8), None, 2, allowed),    # rows past the views
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, words[:14], None, None, 2, allowed),        # views short
                 (tc, ts, 1, 3, 1, 4, 0, 4, False, words, None, None, 2, allowed),             # blocks past the table
                 (tc, ts, 1, 2, 1, 4, -1, 4, False, words, None, None, 2, allowed)]:           # seed
        with pytest.raises(KernelInputError):
            sample_with_views(*args)


def test_sample_with_key_refuses_mismatched_inputs():
    tc, ts, allowed = np.zeros(8, np.int32), np.arange(8, dtype=np.int64), np.ones((1, 2), np.bool_)
    keys = np.arange(8, dtype=np.int64)
    for args in [(tc, ts[:7], 1, 2, 1, 4, 0, 4, False, keys, None, 2, allowed),      # ts short
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, keys[:7], None, 2, allowed),      # keys short
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, keys, np.ones(7, np.bool_), 2, allowed),
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, None, np.ones(8, np.bool_), 2, allowed),  # flags, no key
                 (tc, ts, 1, 3, 1, 4, 0, 4, False, keys, None, 2, allowed),          # blocks past the table
                 (tc, ts, 1, 2, 3, 4, 0, 4, False, keys, None, 2, allowed),          # more blocks than there are
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, keys, None, 5, allowed),          # key draws past the draws
                 (tc, ts, 1, 2, 1, 4, -1, 4, False, keys, None, 2, allowed),         # seed
                 (tc, ts, 1, 2, 1, 4, 0, 4, False, keys, None, 2, np.ones((1, 0), np.bool_))]:
        with pytest.raises(KernelInputError):
            sample_with_key(*args)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 4).flatmap(lambda T: st.tuples(
    st.lists(st.lists(st.booleans(), min_size=T + 1, max_size=T + 1), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(-2, T + 1), st.booleans()), max_size=30))), st.booleans())
def test_candidates_match_naive(case, keyed):
    allowed, events = case  # codes past either end too: read as the null slot, never outside
    tc = [c for c, _ in events]
    key_ok = [k for _, k in events] if keyed else None
    idx, offsets, in_type = candidates(np.array(tc, dtype=np.int16), np.array(allowed),
                                       None if key_ok is None else np.array(key_ok, dtype=np.bool_))
    got = [idx[offsets[v]:offsets[v + 1]].tolist() for v in range(len(allowed))]
    assert (got, in_type.tolist()) == naive.candidates(tc, allowed, key_ok)


def test_candidates_refuse_mismatched_inputs():
    with pytest.raises(KernelInputError):
        candidates(np.zeros(3, np.int8), np.zeros((1, 0), np.bool_), None)
    with pytest.raises(KernelInputError):
        candidates(np.zeros(3, np.int8), np.zeros((1, 2), np.bool_), np.zeros(2, np.bool_))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 15).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 30), min_size=n, max_size=n),        # wt (sorted below)
    st.lists(st.integers(0, 3), min_size=n, max_size=n),         # group codes
    st.sets(st.integers(0, n - 1), max_size=n),                  # candidates w (distinct, ascending)
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 30), st.integers(0, 10)), max_size=6))),
    st.integers(0, 12), st.booleans(), st.sampled_from([0, 10**7]))
def test_window_ranges_match_naive(case, reach, by_group, offset):
    wt, group, w, tuples = case
    wt = sorted(wt)
    group = [g + offset for g in group]  # codes past the kernel's buckets (10^7): ordered by sorting instead
    if not by_group:  # without groups the caller's groups ascend with the index (blocks)
        group = sorted(group)
    first = [f for f, _, _ in tuples]
    # a partial tuple spans at most the window (reach), its first event's measure among its members'
    lo = [wt[f] - min(a, reach) for f, a, _ in tuples]
    hi = [max(wt[f], a + min(d, reach)) for (f, _, d), a in zip(tuples, lo)]
    w = sorted(w)
    got = window_ranges(np.array(first, np.int64), np.array(lo, np.int64), np.array(hi, np.int64),
                        np.array(w, np.int64), np.array(group, np.int64), np.array(wt, np.int64), reach, by_group)
    assert tuple(a.tolist() for a in got) == naive.window_ranges(first, lo, hi, w, group, wt, reach, by_group)


_I64 = (-2**63, 2**63 - 1)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.integers(_I64[0], _I64[0] + 40), st.integers(_I64[1] - 40, _I64[1]), st.integers(-40, 40)),
             min_size=n, max_size=n),                            # wt near int64's ends (sorted below)
    st.lists(st.integers(0, 2), min_size=n, max_size=n),         # group codes
    st.sets(st.integers(0, n - 1), max_size=n),                  # candidates w
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 30), st.integers(0, 30)), max_size=6))),
    st.sampled_from([0, 7, 2**62, 2**63 - 1, 2**63, 2**64, 10**19, 10**300]), st.booleans())
def test_window_ranges_of_wide_windows_and_extreme_measures_match_naive(case, reach, by_group):
    # a window past int64 (WITHIN 1e300, as the pattern may say: docs/semantics.md section 2) or measures near
    # int64's ends: the bounds hi - reach and lo + reach hold every candidate of the group, never wrap (a
    # reach of 1e300 was a Numba TypingError planning SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 1e300)
    wt, group, w, tuples = case
    wt = sorted(wt)
    if not by_group:
        group = sorted(group)
    first = [f for f, _, _ in tuples]
    lo = [max(wt[f] - min(a, reach), _I64[0]) for f, a, _ in tuples]
    hi = [min(wt[f] + min(d, reach), _I64[1]) for f, _, d in tuples]
    w = sorted(w)
    got = window_ranges(np.array(first, np.int64), np.array(lo, np.int64), np.array(hi, np.int64),
                        np.array(w, np.int64), np.array(group, np.int64), np.array(wt, np.int64), reach, by_group)
    assert tuple(a.tolist() for a in got) == naive.window_ranges(first, lo, hi, w, group, wt, reach, by_group)


def test_window_ranges_refuse_indexes_past_the_sample():
    one, wt = np.zeros(1, np.int64), np.arange(3, dtype=np.int64)
    with pytest.raises(KernelInputError):
        window_ranges(one, one, one, np.array([5]), wt, wt, 1, True)
    with pytest.raises(KernelInputError):
        window_ranges(np.array([3]), one, one, one, wt, wt, 1, False)
    with pytest.raises(KernelInputError):
        window_ranges(one, one, np.zeros(2, np.int64), one, wt, wt, 1, False)
    with pytest.raises(KernelInputError):  # the first event's measure (0) outside its span 1..1
        window_ranges(one, one + 1, one + 1, one, wt, wt, 1, False)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**40, 2**40), st.booleans()), max_size=20),
       st.one_of(st.none(), st.lists(st.integers(0, 19), max_size=25)), st.booleans(),
       st.sampled_from([np.int64, np.int32, np.bool_]))
def test_key_codes_match_naive(column, positions, nullable, dtype):
    values = [v if dtype is not np.bool_ else v % 2 for v, _ in column]
    valid = [ok for _, ok in column] if nullable else None
    if dtype is np.int32:
        values = [v % 2**31 for v in values]
    if positions is not None:
        positions = [p for p in positions if p < len(values)]
    codes, span = key_codes(np.array(values, dtype=dtype), None if valid is None else np.array(valid, np.bool_),
                            None if positions is None else np.array(positions, np.int64))
    assert (codes.tolist(), span) == naive.key_codes(values, valid, positions)


def test_key_codes_span_does_not_wrap():
    # the codes of values 2^63 apart wrap in int64; the span, a Python int, says they are not small
    _, span = key_codes(np.array([-2**62, 0, 2**62], np.int64), None, np.array([0, 2]))
    assert span == 2**63


def test_key_codes_refuse_positions_past_the_column():
    with pytest.raises(KernelInputError):
        key_codes(np.arange(3), None, np.array([3]))
    with pytest.raises(KernelInputError):
        key_codes(np.arange(3), np.ones(2, np.bool_), None)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 60), max_size=30))
def test_pair_counts_match_naive(codes):
    assert pair_counts(np.array(codes, np.int64)) == naive.pair_counts(codes)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda L: st.tuples(
    st.just(L), st.lists(st.tuples(st.integers(-1, 30), st.integers(-2**40, 2**40)), max_size=20))),
    st.booleans(), st.data())
def test_block_sample_matches_naive(case, whole, data):
    L, events = case
    tc, ts = [c for c, _ in events], [t for _, t in events]
    starts = None if whole else data.draw(st.lists(st.integers(0, max(len(events) // L - 1, 0)),
                                                   max_size=len(events) // L, unique=True).map(sorted))
    got = block_sample(np.array(tc, np.int32), np.array(ts, np.int64),
                       None if starts is None else np.array(starts, np.int64), L)
    assert tuple(a.tolist() for a in got) == naive.block_sample(tc, ts, starts, L)


def test_block_sample_refuses_blocks_past_the_table():
    with pytest.raises(KernelInputError):
        block_sample(np.zeros(4, np.int32), np.zeros(4, np.int64), np.array([2]), 2)
    with pytest.raises(KernelInputError):
        block_sample(np.zeros(4, np.int32), np.zeros(3, np.int64), None, 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.sampled_from([0, 1, 7, 2**40 + 3, SEED_MAX]))
def test_choose_matches_naive(case, seed):
    n, k = case
    got = choose(n, k, seed).tolist()
    assert got == naive.choose(n, k, seed)
    assert len(set(got)) == k and got == sorted(got) and all(0 <= x < n for x in got)


def test_choose_is_uniform_and_below_share_keeps_its_share():
    # every number of 10 drawn in about 3/10 of 20,000 draws of 3; every 3-subset of 5 seen
    seen = np.zeros(10, np.int64)
    for seed in range(20_000):
        seen[choose(10, 3, seed)] += 1
    assert seen.min() > 0.3 * 20_000 * 0.95 and seen.max() < 0.3 * 20_000 * 1.05
    assert len({tuple(choose(5, 3, s).tolist()) for s in range(300)}) == 10
    flags = below_share(100_000, 0.25, 3)
    assert 24_000 < flags.sum() < 26_000
    assert not below_share(50, 0.0, 1).any() and below_share(50, 1.0, 1).all()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.sampled_from([0.0, 0.3, 0.5, 1.0]), st.sampled_from([0, 9, SEED_MAX]))
def test_below_share_matches_naive(m, p, seed):
    assert below_share(m, p, seed).tolist() == naive.below_share(m, p, seed)


def test_choose_and_below_share_refuse_bad_arguments():
    for args in [(3, 4, 0), (3, -1, 0), (3, 1, -1), (3, 1, SEED_MAX + 1)]:
        with pytest.raises(KernelInputError):
            choose(*args)
    for args in [(-1, 0.5, 0), (3, 0.5, -1)]:
        with pytest.raises(KernelInputError):
            below_share(*args)


def _same_sample(got, want, n_vars):
    """The compiled one-call sample ``got`` equals its naive twin's ``want``, part by part."""
    (starts, draws, hits), blocks, (kc, span), (idx, offsets, in_type), pairs = got
    assert (starts.tolist(), draws.tolist(), hits.tolist()) == want[0]
    assert tuple(a.tolist() for a in blocks) == tuple(want[1])
    assert (kc.tolist(), span) == want[2]
    assert ([idx[offsets[v]:offsets[v + 1]].tolist() for v in range(n_vars)], in_type.tolist()) == want[3]
    assert pairs == want[4]
