"""The NFA^b run-step kernels (jitcep.kernels.selection) against their naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import naive
from jitcep.kernels.selection import contiguous_next, next_ranges, successors
from test_kernels_join import tables_and_buffers


@st.composite
def runs_and_leaf(draw, extreme=None):
    """Times and a window (:func:`test_kernels_join.tables_and_buffers`'s, also at the int64 extremes),
    runs (partition, first <= last) and a leaf: ascending candidate positions per partition."""
    ts, wt, W, _, _ = draw(tables_and_buffers(extreme=extreme))
    n = len(ts)
    G = draw(st.integers(1, 3))
    groups = [sorted(draw(st.sets(st.integers(0, n - 1), max_size=n))) for _ in range(G)]
    cand = np.array([p for grp in groups for p in grp], dtype=np.int64)
    goff = np.zeros(G + 1, dtype=np.int64)
    np.cumsum([len(grp) for grp in groups], out=goff[1:])
    m = draw(st.integers(0, 8))
    pairs = [sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2))) for _ in range(m)]
    first = np.array([p[0] for p in pairs], dtype=np.int64)
    last = np.array([p[1] for p in pairs], dtype=np.int64)
    g = np.array(draw(st.lists(st.integers(0, G - 1), min_size=m, max_size=m)), dtype=np.int64)
    if draw(st.booleans()):  # sorted by (partition, last), as the executor's runs nearly are
        o = np.lexsort((last, g))
        first, last, g = first[o], last[o], g[o]
    return ts, wt, W, (last, first, g), (cand, goff)


@settings(max_examples=500, deadline=None)
@given(runs_and_leaf(), st.booleans())
def test_next_ranges_match_naive(case, strict_ts):
    ts, wt, W, (last, first, g), (cand, goff) = case
    lo, hi = next_ranges(last, first, g, (cand, goff), ts, wt, W, strict_ts)
    got = [cand[lo[r]:hi[r]].tolist() for r in range(len(last))]
    assert got == naive.next_candidates(last, first, g, cand, goff, ts, wt, W, strict_ts)
    # each range lies in its run's partition
    assert all(goff[g[r]] <= lo[r] <= hi[r] <= goff[g[r] + 1] for r in range(len(last)))


@settings(max_examples=500, deadline=None)
@given(runs_and_leaf(), st.booleans(), st.data())
def test_contiguous_next_matches_naive(case, strict_ts, data):
    ts, wt, W, (last, first, g), (cand, goff) = case
    n = len(ts)
    succ = np.array(data.draw(st.lists(st.integers(-1, n - 1), min_size=n, max_size=n)), dtype=np.int64)
    slot = np.full(n, -1, dtype=np.int64)
    slot[cand] = np.repeat(np.arange(len(goff) - 1), np.diff(goff))
    got = contiguous_next(last, first, g, succ, slot, ts, wt, W, strict_ts).tolist()
    assert got == naive.contiguous_next(last, first, g, succ, slot, ts, wt, W, strict_ts)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.permutations(range(n)), st.lists(st.integers(0, n), min_size=0, max_size=4))))
def test_successors_match_naive(case):
    n, perm, cuts = case
    size = len(perm) - len(perm) // 3  # some positions in no group
    groups = np.split(np.array(perm[:size], dtype=np.int64), sorted(min(c, size) for c in cuts))
    order = np.concatenate([np.sort(grp) for grp in groups])
    offsets = np.cumsum([0] + [len(grp) for grp in groups]).astype(np.int64)
    assert successors(order, offsets, n).tolist() == naive.successors(order, offsets, n)
