"""MatchTable.take and MatchTable.bounds (vectorised) against plain-Python versions on random CSR tables."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep.matches import MatchTable

I64_MAX = np.iinfo(np.int64).max


@st.composite
def tables(draw):
    """A random match table: single columns with unbound (-1) entries, CSR lists with empty members,
    optional unbound masks; sometimes positions past ``offsets[-1]`` (not part of any list)."""
    n = draw(st.integers(0, 25))
    single = {v: np.array(draw(st.lists(st.integers(-1, 60), min_size=n, max_size=n)), dtype=np.int64)
              for v in draw(st.sets(st.sampled_from(["a", "b", "c"]), max_size=3))}
    lists, unbound = {}, {}
    for v in draw(st.sets(st.sampled_from(["k", "m"]), max_size=2)):
        members = [draw(st.lists(st.integers(0, 60), max_size=6)) for _ in range(n)]
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(m) for m in members], out=off[1:])
        tail = draw(st.lists(st.integers(-5, 99), max_size=3))
        lists[v] = (off, np.array([p for m in members for p in m] + tail, dtype=np.int64))
        if draw(st.booleans()):
            unbound[v] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return MatchTable(n, single, lists, unbound)


def plain_take(mt: MatchTable, idx):
    """The per-match loop take() replaced."""
    idx = np.asarray(idx, dtype=np.int64)
    lists = {}
    for v, (off, pos) in mt.lists.items():
        parts = [pos[off[i]:off[i + 1]] for i in idx]
        new_off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=new_off[1:])
        lists[v] = (new_off, np.concatenate(parts) if parts else np.zeros(0, np.int64))
    return (len(idx), {v: c[idx] for v, c in mt.single.items()}, lists,
            {v: m[idx] for v, m in mt.list_unbound.items()})


def plain_bounds(mt: MatchTable):
    lo, hi = [], []
    for i in range(mt.n):
        ps = [int(c[i]) for c in mt.single.values() if c[i] >= 0]
        ps += [int(p) for off, pos in mt.lists.values() for p in pos[off[i]:off[i + 1]]]
        lo.append(min(ps) if ps else I64_MAX)
        hi.append(max(ps) if ps else -1)
    return np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@settings(max_examples=150, deadline=None)
@given(tables(), st.data())
def test_take_equals_plain_python(mt, data):
    idx = data.draw(st.lists(st.integers(0, mt.n - 1), max_size=30) if mt.n else st.just([]))
    got = mt.take(np.array(idx, dtype=np.int64))
    n, single, lists, unbound = plain_take(mt, idx)
    assert got.n == n
    assert got.single.keys() == single.keys() and all(_same(got.single[v], single[v]) for v in single)
    assert got.list_unbound.keys() == unbound.keys()
    assert all(_same(got.list_unbound[v], unbound[v]) for v in unbound)
    assert got.lists.keys() == lists.keys()
    for v, (off, pos) in lists.items():
        assert _same(got.lists[v][0], off) and _same(got.lists[v][1], pos)


@settings(max_examples=150, deadline=None)
@given(tables())
def test_bounds_equal_plain_python(mt):
    lo, hi = mt.bounds()
    want_lo, want_hi = plain_bounds(mt)
    assert _same(lo, want_lo) and _same(hi, want_hi)


def test_take_and_bounds_on_empty_lists_and_no_matches():
    off = np.array([0, 0, 2, 2, 3], dtype=np.int64)
    mt = MatchTable(4, {"a": np.array([5, -1, 1, -1], dtype=np.int64)},
                    {"k": (off, np.array([7, 3, 9], dtype=np.int64))})
    lo, hi = mt.bounds()
    assert lo.tolist() == [5, 3, 1, 9] and hi.tolist() == [5, 7, 1, 9]
    t = mt.take(np.array([1, 0, 1, 3], dtype=np.int64))
    assert t.lists["k"][0].tolist() == [0, 2, 2, 4, 5] and t.lists["k"][1].tolist() == [7, 3, 7, 3, 9]
    none = MatchTable(2, {"a": np.array([-1, -1], dtype=np.int64)},
                      {"k": (np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64))})
    assert none.bounds()[0].tolist() == [I64_MAX] * 2 and none.bounds()[1].tolist() == [-1, -1]
    e = mt.take(np.zeros(0, dtype=np.int64))
    assert e.n == 0 and e.lists["k"][1].dtype == np.int64 and e.bounds()[0].shape == (0,)


def _rows(mt: MatchTable) -> list:
    """Each match as a comparable tuple (the binding with lists as tuples, unbound as None)."""
    return [tuple(sorted(b.items())) for b in mt.to_bindings()]


@settings(max_examples=150, deadline=None)
@given(tables(), st.data())
def test_canonical_is_a_function_of_the_match_multiset(mt, data):
    # two tables holding the same matches in any order come out identical, row for row
    perm = np.array(data.draw(st.permutations(range(mt.n))), dtype=np.int64)
    a, b = mt.canonical(), mt.take(perm).canonical()
    assert _rows(a) == _rows(b)
    assert sorted(_rows(a), key=repr) == sorted(_rows(mt), key=repr)
    lo, hi = a.bounds()
    assert all((hi[i], lo[i]) <= (hi[i + 1], lo[i + 1]) for i in range(a.n - 1))  # end order (ZStream 4.2)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(1, 8), min_size=3, max_size=3), min_size=2, max_size=12, unique_by=tuple),
       st.randoms(use_true_random=False))
def test_canonical_orders_lists_that_tie_on_every_other_key(members, rnd):
    # same bounds (0 and 9 from the single variables), same length: only the content orders them
    n = len(members)
    off = np.arange(0, 3 * n + 1, 3, dtype=np.int64)

    def table(ms):
        return MatchTable(n, {"a": np.zeros(n, np.int64), "z": np.full(n, 9, np.int64)},
                          {"k": (off, np.array([p for m in ms for p in m], dtype=np.int64))})
    shuffled = list(members)
    rnd.shuffle(shuffled)
    assert _rows(table(members).canonical()) == _rows(table(shuffled).canonical())
