"""The semi-join reduction's kernels (jitcep.kernels.reduction) against their naive twins (tests/naive.py).

Leaves are drawn over one table (times ascending with position, ties likely, near the int64 extremes
too), split into key partitions, each leaf a subset of the events in (partition, position) order, as
the scans make them.  :func:`naive.chain_reach` enumerates every chain, so the test of
:func:`chain_reach` checks that the two passes are exact (no event on a chain dropped, none off every
chain kept) and that the bounds are the latest start and earliest end over the chains through each event.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep import config
from jitcep.errors import KernelInputError
from jitcep.kernels import reduction
from jitcep.kernels.reduction import chain_fits, chain_reach, earliest_end, latest_start

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@st.composite
def tables(draw, max_events=10):
    """(ts, partition of each event, G): times ascend with position from a base near 0 or an extreme."""
    n = draw(st.integers(0, max_events))
    base = draw(st.sampled_from([0, I64_MIN, I64_MAX - 2 * max_events]))
    steps = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    ts = np.array(base + np.cumsum(steps, dtype=object), dtype=np.int64) if n else np.zeros(0, np.int64)
    G = draw(st.integers(1, 3))
    part = draw(st.lists(st.integers(0, G - 1), min_size=n, max_size=n))
    return ts, np.array(part, dtype=np.int64), G


def leaf_of(draw, ts, part, G):
    """A leaf: some of the events, grouped by partition, in position order: (positions, ts, offsets)."""
    n = len(ts)
    pick = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    pos = np.array([i for g in range(G) for i in range(n) if pick[i] and part[i] == g], dtype=np.int64)
    goff = np.zeros(G + 1, np.int64)
    np.cumsum(np.bincount(part[pos], minlength=G) if len(pos) else np.zeros(G, np.int64), out=goff[1:])
    return pos, ts[pos], goff


windows = st.one_of(st.integers(0, 6), st.just(2**64 - 1), st.just(2**63 + 5))


@st.composite
def chains(draw, max_leaves=4):
    ts, part, G = draw(tables())
    k = draw(st.integers(1, max_leaves))
    leaves = [leaf_of(draw, ts, part, G) for _ in range(k)]
    count = draw(st.booleans())  # the window measure: positions (a count window) or times
    measures = [leaf[0] if count else leaf[1] for leaf in leaves]
    return leaves, measures, draw(st.sampled_from([0, 1, 2])), draw(windows)


def _check_reach(leaves, measures, order, W):
    want = naive.chain_reach(leaves, measures, order, W)
    # the passes split the partitions over 1-3 threads, even for these few events, and read whole leaves
    # or (prune 0: as from reduction._PRUNE_MIN events on) drop what the window rules out and read survivors
    for prune in (reduction._PRUNE_MIN, 0):
        with mock.patch.object(config, "THREAD_MIN_RECORDS", 0), mock.patch.object(reduction, "_PRUNE_MIN", prune):
            for threads in (1, 2, 3):
                got = chain_reach(leaves, measures, order, W, threads)
                for (on, start, end), expected in zip(got, want):
                    assert set(np.flatnonzero(on).tolist()) == set(expected)
                    for i, (s, e) in expected.items():
                        assert (int(start[i]), int(end[i])) == (s, e)


@settings(max_examples=60, deadline=None)
@given(chains())
def test_chain_reach_keeps_exactly_the_events_on_a_chain(case):
    _check_reach(*case)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(chains(max_leaves=5))
def test_chain_reach_keeps_exactly_the_events_on_a_chain_slow(case):
    _check_reach(*case)


@st.composite
def sparse_chains(draw):
    """Longer leaves over several partitions and a short window: most events are on no chain, so each
    pass reads only the previous one's survivors, taken out of their leaf (kernels.reduction._survivors)."""
    ts, part, G = draw(tables(max_events=40))
    k = draw(st.integers(2, 4))
    leaves = [leaf_of(draw, ts, part, G) for _ in range(k)]
    count = draw(st.booleans())
    measures = [leaf[0] if count else leaf[1] for leaf in leaves]
    return leaves, measures, draw(st.sampled_from([0, 1, 2])), draw(st.integers(0, 3))


@settings(max_examples=100, deadline=None)
@given(sparse_chains())
def test_chain_reach_over_the_survivors_of_each_pass_keeps_exactly_the_events_on_a_chain(case):
    _check_reach(*case)


@st.composite
def steps(draw):
    ts, part, G = draw(tables())
    a, b = leaf_of(draw, ts, part, G), leaf_of(draw, ts, part, G)
    vals = draw(st.lists(st.integers(I64_MIN, I64_MAX), min_size=len(b[0]), max_size=len(b[0])))
    ok = draw(st.lists(st.booleans(), min_size=len(b[0]), max_size=len(b[0])))
    return a, b, np.array(vals, dtype=np.int64), np.array(ok, dtype=np.bool_), draw(st.sampled_from([0, 1, 2]))


def _pairs(end, ok):
    return [(int(e), True) if k else (None, False) for e, k in zip(end, ok)]


@settings(max_examples=80, deadline=None)
@given(steps(), st.integers(1, 3))
def test_earliest_end_equals_naive(case, threads):
    leaf, nxt, vals, ok, order = case
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        got = earliest_end(leaf, nxt, vals, ok, order, threads)
    assert _pairs(*got) == naive.earliest_end(leaf, nxt, vals, ok, order)


@settings(max_examples=80, deadline=None)
@given(steps(), st.integers(1, 3))
def test_latest_start_equals_naive(case, threads):
    leaf, prev, vals, ok, order = case  # the drawn values belong to the second leaf: it is the earlier one here
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        got = latest_start(prev, vals, ok, leaf, order, threads)
    assert _pairs(*got) == naive.latest_start(prev, vals, ok, leaf, order)


def test_chain_by_hand():
    # one partition, positions 0..5 with times; SEQ(a, b, c) over a = {0, 3}, b = {1, 4}, c = {2, 5}
    ts = np.array([0, 1, 2, 10, 11, 30], np.int64)
    leaf = lambda *p: (np.array(p, np.int64), ts[list(p)], np.array([0, len(p)], np.int64))  # noqa: E731
    leaves = [leaf(0, 3), leaf(1, 4), leaf(2, 5)]
    got = chain_reach(leaves, [lf[1] for lf in leaves], 0, 5)
    # chains within 5: (0, 1, 2) only; (3, 4, 5) spans 20, and 3 -> 4 -> 5 is the only way on from 3
    assert [np.flatnonzero(on).tolist() for on, _, _ in got] == [[0], [0], [0]]
    got = chain_reach(leaves, [lf[1] for lf in leaves], 0, 20)
    assert [np.flatnonzero(on).tolist() for on, _, _ in got] == [[0, 1], [0, 1], [0, 1]]
    # b = 4 (time 11): latest start 10 (a = 3), earliest end 30 (c = 5)
    assert (int(got[1][1][1]), int(got[1][2][1])) == (10, 30)


def test_chain_fits_is_exact_at_the_extremes():
    lo, hi = np.array([I64_MIN], np.int64), np.array([I64_MAX], np.int64)
    yes = np.ones(1, np.bool_)
    assert not chain_fits(lo, yes, hi, yes, 2**64 - 2)[0] and chain_fits(lo, yes, hi, yes, 2**64 - 1)[0]
    assert not chain_fits(lo, ~yes, lo, yes, 0)[0]


def test_wrappers_refuse_inconsistent_leaves():
    one = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.array([0, 1], np.int64))
    with pytest.raises(KernelInputError):
        earliest_end(one, one, np.zeros(2, np.int64), np.ones(2, np.bool_), 0)
    with pytest.raises(KernelInputError):
        chain_reach([one, one], [np.zeros(1, np.int64)], 0, 3)
