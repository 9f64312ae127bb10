"""The NFA^b run-step kernels (jitcep.kernels.selection) against their naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import naive
from jitcep.kernels.selection import (NO_EVENT, UNKNOWN, advance, contiguous_next, first_at_or_after, fork_runs,
                                     next_ranges, next_relevant, round_ranges, successors)
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


@st.composite
def round_runs(draw):
    """Runs of a skip-till-next-match round: the states each is alive at, its reach (S: F), each state's
    next candidate (UNKNOWN, -1: none, or an event; ties between states) and which states are Kleene."""
    S = draw(st.integers(1, 5))
    m = draw(st.integers(0, 8))
    alive = np.array(draw(st.lists(st.lists(st.booleans(), min_size=S, max_size=S), min_size=m, max_size=m)),
                     dtype=np.bool_).reshape(m, S)
    reach = np.array(draw(st.lists(st.integers(0, S), min_size=m, max_size=m)), dtype=np.int64)
    nxt = np.array(draw(st.lists(st.lists(st.integers(UNKNOWN, 6), min_size=S, max_size=S), min_size=m,
                                 max_size=m)), dtype=np.int64).reshape(m, S)
    kleene = np.array(draw(st.lists(st.booleans(), min_size=S, max_size=S)), dtype=np.bool_)
    return alive, reach, nxt, kleene


@settings(max_examples=300, deadline=None)
@given(round_runs(), st.data())
def test_round_kernels_match_naive(case, data):
    alive, reach, nxt, kleene = case
    m, S = alive.shape
    low, top, j, want = round_ranges(alive, reach, nxt, kleene)
    assert (low.tolist(), top.tolist(), j.tolist(), want.tolist()) == naive.round_ranges(
        alive.tolist(), reach, nxt.tolist(), kleene.tolist())
    rows = np.array(data.draw(st.lists(st.integers(0, max(m - 1, 0)), max_size=m if m else 0)), dtype=np.int64)
    skip = data.draw(st.integers(-1, S))
    assert next_relevant(nxt, low, top, rows, skip).tolist() == naive.next_relevant(nxt.tolist(), low, top, rows,
                                                                                    skip)
    if data.draw(st.booleans()):  # any range in the states, empty ones too (top < low)
        low = np.array(data.draw(st.lists(st.integers(0, S - 1), min_size=m, max_size=m)), dtype=np.int64)
        top = np.array(data.draw(st.lists(st.integers(-1, S - 1), min_size=m, max_size=m)), dtype=np.int64)
    expected = naive.advance(alive.tolist(), nxt.tolist(), low, top, S)
    cursor, sel, live = advance(alive, nxt, low, top)  # alive, nxt: in place
    assert (cursor.tolist(), sel.tolist(), live.tolist(), alive.tolist(), nxt.tolist()) == expected
    assert all(c == NO_EVENT or c >= 0 for c in cursor.tolist())


def test_advance_hand_enumerated():
    # a run alive at 1 (a Kleene state) with range [1, 3]: states 1 and 3 tie on event 7, state 2's is 9;
    # A' = ([1, 3] minus {1, 3}) = {2}, and the candidates at or before 7 are passed; the second run's range
    # [0, 0] has no candidate: no event, alive nowhere
    alive = np.array([[False, True, False, False], [True, False, False, False]])
    nxt = np.array([[UNKNOWN, 7, 9, 7], [-1, UNKNOWN, 5, 5]], dtype=np.int64)
    cursor, sel, live = advance(alive, nxt, np.array([1, 0]), np.array([3, 0]))
    assert cursor.tolist() == [7, NO_EVENT] and live.tolist() == [True, False]
    assert sel.T.tolist() == [[False, True, False, True], [False] * 4]
    assert alive.tolist() == [[False, False, True, False], [False] * 4]
    assert nxt.tolist() == [[UNKNOWN, UNKNOWN, 9, UNKNOWN], [UNKNOWN] * 4]


@settings(max_examples=300, deadline=None)
@given(runs_and_leaf(), st.data())
def test_first_at_or_after_matches_naive(case, data):
    ts, _, _, _, (cand, goff) = case
    G = len(goff) - 1
    lo, hi, stop = [], [], []
    for _ in range(data.draw(st.integers(0, 6))):
        g = data.draw(st.integers(0, G - 1))
        a, b = sorted(data.draw(st.lists(st.integers(int(goff[g]), int(goff[g + 1])), min_size=2, max_size=2)))
        lo.append(a)
        hi.append(b)
        stop.append(data.draw(st.one_of(st.integers(-1, len(ts) + 1), st.just(NO_EVENT))))
    lo, hi, stop = (np.array(x, dtype=np.int64) for x in (lo, hi, stop))
    assert first_at_or_after(cand, lo, hi, stop).tolist() == naive.first_at_or_after(cand, lo, hi, stop)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 6), st.data())
def test_fork_runs_match_naive(S, K, m, data):
    ints = lambda lo, hi, *shape: np.array(data.draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(shape)),
                                                              max_size=int(np.prod(shape)))), np.int64).reshape(shape)
    pos, count, tail = ints(-1, 30, m, S), ints(0, 5, m, K), ints(-1, 20, m, K)
    first, g = ints(-1, 30, m), ints(0, 3, m)
    rows = np.array(data.draw(st.lists(st.integers(0, m - 1), max_size=6)) if m else [], np.int64)
    e = ints(0, 40, len(rows))
    s = data.draw(st.integers(0, S - 1))
    k = data.draw(st.integers(-1, K - 1))
    got = fork_runs(pos, count, tail, first, g, rows, e, s, k, 100)
    assert [f.tolist() for f in got] == naive.fork_runs(pos, count, tail, first, g, rows, e, s, k, 100)
