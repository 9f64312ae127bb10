"""The canonical order kernels (jitcep.kernels.order, list_columns, closure_order) against their naive
twins (tests/naive.py): a sort by the whole key tuple, the list key compared as a tuple (docs/semantics.md
section 11), on random tables with ties on every key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.closure_order import lists_in_end_order
from jitcep.kernels.list_columns import list_bounds, list_key, take_lists
from jitcep.kernels.order import canonical_order, canonical_pairs, gather_columns
from jitcep.matches import canonical_table, closure_table


@st.composite
def records(draw):
    """(P, cols, (koff, kseq), llo, lhi): n records of k columns (-1 unbound), some single variables, list
    keys and list bounds or none; small values so that ties on every key are common, runs of equal ends
    long, and keys often prefixes of one another (as a record's lists are)."""
    n = draw(st.integers(0, 80))
    k = draw(st.integers(1, 4))
    P = np.array(draw(st.lists(st.lists(st.integers(-1, 5), min_size=k, max_size=k), min_size=n, max_size=n)),
                 dtype=np.int64).reshape(n, k)
    cols = draw(st.lists(st.integers(0, k - 1), min_size=0, max_size=k, unique=True))
    if draw(st.booleans()):
        # end order already (as one partition's join output): sorted by the last bound column
        P = P[np.argsort(P.max(axis=1), kind="stable")]
    K, llo, lhi = (None, None), None, None
    if draw(st.booleans()):
        keys = draw(st.lists(st.lists(st.integers(-1, 2), max_size=4), min_size=n, max_size=n))
        if draw(st.booleans()):  # runs of a key and its extensions, in order or not
            keys = [keys[i - 1] + k[:1] if i and k and k[0] == 2 else k for i, k in enumerate(keys)]
        koff = np.zeros(n + 1, np.int64)
        np.cumsum([len(k) for k in keys], out=koff[1:])
        pad = draw(st.integers(0, 2))  # room before the first key and past the last
        K = (koff + pad, np.array([9] * pad + [x for k in keys for x in k] + [9] * pad, dtype=np.int64))
        first = draw(st.lists(st.one_of(st.integers(0, 6), st.just(-1)), min_size=n, max_size=n))
        span = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        llo = np.array([np.iinfo(np.int64).max if f < 0 else f for f in first], dtype=np.int64)
        lhi = np.array([-1 if f < 0 else f + s for f, s in zip(first, span)], dtype=np.int64)
    return P, np.array(cols, dtype=np.int64), K, llo, lhi


@settings(max_examples=400, deadline=None)
@given(records())
def test_canonical_order_matches_naive(case):
    P, cols, K, llo, lhi = case
    perm = canonical_order(P, cols, *K, llo, lhi)
    want = naive.canonical_order(P, cols, *K, llo, lhi)
    got = list(range(len(P))) if perm is None else perm.tolist()
    assert got == want
    if perm is None:  # "nothing moved" only when the records are in order already
        assert want == list(range(len(P)))


@settings(max_examples=200, deadline=None)
@given(records(), st.data())
def test_canonical_order_of_rows_read_in_place_matches_naive(case, data):
    # the matches are rows of P (repeated, skipped, in any order), as a closure's lists at the root are
    # rows of their records
    P, cols, K, llo, lhi = case
    n = len(P)
    rows = np.array(data.draw(st.lists(st.integers(0, max(len(P) - 1, 0)), min_size=n, max_size=n)) if len(P) else [],
                    np.int64)
    perm = canonical_order(P, cols, *K, llo, lhi, rows=rows)
    want = naive.canonical_order(P, cols, *K, llo, lhi, rows=rows)
    assert (list(range(n)) if perm is None else perm.tolist()) == want
    assert perm is not None or want == list(range(n))
    if n:
        with pytest.raises(KernelInputError):
            canonical_order(P, cols, *K, llo, lhi, rows=np.where(np.arange(n) == n - 1, len(P), rows))


@settings(max_examples=300, deadline=None)
@given(records(), st.data())
def test_canonical_order_of_records_whose_lists_come_in_order_matches_naive(case, data):
    # by_record: the matches of one record (equal rows, contiguous: rows ascend) come in order of their
    # list keys, as a closure's lists at the root do; the order then only checks each end in place
    P, cols, K, llo, lhi = case
    n = len(P)
    with_rows = bool(n) and data.draw(st.booleans())
    rows = np.sort(np.array(data.draw(st.lists(st.integers(0, min(3, n - 1)), min_size=n, max_size=n)), np.int64)) \
        if with_rows else None
    koff, kseq = K
    if koff is not None and rows is not None:
        keys = [kseq[koff[i]:koff[i + 1]].tolist() for i in range(n)]
        for r in set(rows.tolist()):
            at = np.flatnonzero(rows == r)
            for i, key in zip(at, sorted(keys[i] for i in at)):
                keys[i] = key
        koff = np.zeros(n + 1, np.int64)
        np.cumsum([len(k) for k in keys], out=koff[1:])
        kseq = np.array([x for k in keys for x in k], np.int64)
    perm = canonical_order(P, cols, koff, kseq, llo, lhi, rows=rows, by_record=True)
    want = naive.canonical_order(P, cols, koff, kseq, llo, lhi, rows=rows)
    assert (list(range(n)) if perm is None else perm.tolist()) == want


@settings(max_examples=100, deadline=None)
@given(records(), st.data())
def test_canonical_order_under_a_wrong_by_record_claim_is_a_permutation(case, data):
    # lists of one record out of order: the order may be wrong, but stays a permutation of the matches
    # and reads nothing outside the arrays (the bounds-checked rerun)
    P, cols, K, llo, lhi = case
    n = len(P)
    rows = np.sort(np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=n, max_size=n)),
                            np.int64)) if n else None
    perm = canonical_order(P, cols, *K, llo, lhi, rows=rows, by_record=True)
    assert perm is None or sorted(perm.tolist()) == list(range(n))


@settings(max_examples=200, deadline=None)
@given(records(), st.booleans())
def test_gather_columns_matches_naive(case, permuted):
    P, cols, *_ = case
    perm = np.random.default_rng(len(P)).permutation(len(P)) if permuted else None
    assert gather_columns(P, cols, perm).tolist() == naive.gather_columns(P, cols, perm)


@settings(max_examples=60, deadline=None)
@given(records())
def test_canonical_order_of_ends_far_past_the_matches_count_matches_naive(case):
    # positions above _BUCKETS * n + _BUCKETS_MIN: the ends merge sorted instead of bucketed (the order
    # of every key is kept: each bound position scaled alike)
    P, cols, K, llo, lhi = case
    far = 1 << 20
    P = np.where(P >= 0, P * far, P)
    if llo is not None:
        llo = np.where(lhi >= 0, llo * far, llo)
        lhi = np.where(lhi >= 0, lhi * far, lhi)
    perm = canonical_order(P, cols, *K, llo, lhi)
    got = list(range(len(P))) if perm is None else perm.tolist()
    assert got == naive.canonical_order(P, cols, *K, llo, lhi)


def test_long_runs_of_one_end_merge_stably():
    # one end for 200 records: the merge path, with ties on every key kept in input order
    rng = np.random.default_rng(3)
    P = np.column_stack([rng.integers(0, 4, 200), np.full(200, 9)]).astype(np.int64)
    perm = canonical_order(P, np.array([0, 1]))
    assert perm.tolist() == naive.canonical_order(P, [0, 1])


@st.composite
def pairs(draw):
    """(Lpos, Rpos, li, ri, src, n_events): two inputs' records (-1 unbound), pairs of them in any order
    (several partitions, or ties, leave a join's pairs out of end order) and the columns taken, in any
    order; small positions so that runs of one end are long and ties on every column common."""
    kl, kr = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    ml, mr = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    cell = st.integers(-1, 6)
    Lpos = np.array(draw(st.lists(st.lists(cell, min_size=kl, max_size=kl), min_size=ml, max_size=ml)),
                    dtype=np.int64).reshape(ml, kl)
    Rpos = np.array(draw(st.lists(st.lists(cell, min_size=kr, max_size=kr), min_size=mr, max_size=mr)),
                    dtype=np.int64).reshape(mr, kr)
    m = draw(st.integers(0, 60))
    li = np.array(draw(st.lists(st.integers(0, ml - 1), min_size=m, max_size=m)), dtype=np.int64)
    ri = np.array(draw(st.lists(st.integers(0, mr - 1), min_size=m, max_size=m)), dtype=np.int64)
    src = np.array(draw(st.permutations(range(kl + kr))), dtype=np.int64)[:draw(st.integers(1, kl + kr))]
    key = np.array(draw(st.permutations(range(len(src)))), dtype=np.int64)
    return Lpos, Rpos, li, ri, src, key, 7


@settings(max_examples=150, deadline=None)
@given(pairs())
def test_canonical_pairs_matches_naive(case):
    Lpos, Rpos, li, ri, src, key, n_events = case
    got = canonical_pairs(Lpos, Rpos, li, ri, src, n_events, key)
    assert got.shape == (len(src), len(li))
    assert got.tolist() == naive.canonical_pairs(Lpos, Rpos, li, ri, src, key)


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_canonical_pairs_of_far_more_events_than_pairs_matches_naive(case):
    # positions scaled past _BUCKETS * pairs + _BUCKETS_MIN: the ends merge sorted instead of bucketed
    # (every key's order kept: each bound position scaled alike)
    Lpos, Rpos, li, ri, src, key, n_events = case
    far = 1 << 20
    Lpos, Rpos = (np.where(P >= 0, P * far, P) for P in (Lpos, Rpos))
    got = canonical_pairs(Lpos, Rpos, li, ri, src, n_events * far, key)
    assert got.tolist() == naive.canonical_pairs(Lpos, Rpos, li, ri, src, key)


def _by_end(Lpos, Rpos, li, ri, src):
    """The pairs stably sorted by the last bound position of their taken columns (-1: none bound)."""
    rows = np.concatenate([Lpos[li], Rpos[ri]], axis=1)[:, src] if len(li) else np.zeros((0, len(src)), np.int64)
    order = np.argsort(rows.max(axis=1, initial=-1), kind="stable")
    return li[order], ri[order]


@settings(max_examples=100, deadline=None)
@given(pairs(), st.sampled_from([1, 1 << 20]))
def test_canonical_pairs_in_end_order_already_matches_naive(case, far):
    # pairs whose ends ascend (one partition, a join driven by its matches' last event) are written in
    # their own order, bucketed (far 1) or not (far: the merge-sort rule), and only the runs of one
    # end out of order sorted
    Lpos, Rpos, li, ri, src, key, n_events = case
    Lpos, Rpos = (np.where(P >= 0, P * far, P) for P in (Lpos, Rpos))
    li, ri = _by_end(Lpos, Rpos, li, ri, src)
    got = canonical_pairs(Lpos, Rpos, li, ri, src, n_events * far, key)
    assert got.tolist() == naive.canonical_pairs(Lpos, Rpos, li, ri, src, key)


def test_canonical_pairs_sorts_long_runs_of_one_end_by_merging():
    # 300 pairs ending at position 9: past the insertion sort's runs, so _sort_range's merge
    rng = np.random.default_rng(5)
    Lpos = rng.integers(0, 9, (40, 2)).astype(np.int64)
    Rpos = np.full((1, 1), 9, np.int64)
    li, ri = rng.integers(0, 40, 300).astype(np.int64), np.zeros(300, np.int64)
    src, key = np.array([2, 0, 1]), np.array([1, 2, 0])
    got = canonical_pairs(Lpos, Rpos, li, ri, src, 10, key)
    assert got.tolist() == naive.canonical_pairs(Lpos, Rpos, li, ri, src, key)


def test_canonical_pairs_refuses_pairs_columns_and_positions_outside():
    Lpos, Rpos, one = np.zeros((2, 1), np.int64), np.ones((1, 2), np.int64), np.zeros(1, np.int64)
    for args in ((Lpos, Rpos, np.array([2]), one, np.array([0]), 5),      # a left record past the input
                 (Lpos, Rpos, one, np.array([1]), np.array([0]), 5),      # a right record past the input
                 (Lpos, Rpos, one, one, np.array([3]), 5),                # a column past the rows
                 (Lpos, Rpos, one, one, np.array([1]), 1),                # position 1, one event
                 (Lpos * (1 << 20), Rpos * (1 << 20), one, one, np.array([1]), 1 << 20),  # the same, sorted
                 (Lpos, Rpos, one, np.zeros(2, np.int64), np.array([0]), 5),  # li and ri differ in length
                 (Lpos, Rpos, one, one, np.array([0, 1]), 5, np.array([1, 1]))):  # a key order of no permutation
        with pytest.raises(KernelInputError):
            canonical_pairs(*args)


def test_refuses_columns_and_rows_outside_the_matrix():
    P = np.zeros((3, 2), np.int64)
    with pytest.raises(KernelInputError):
        canonical_order(P, np.array([2]))
    for koff, kseq in ((np.array([0, 1, 2]), np.zeros(2, np.int64)),      # an offset per match missing
                       (np.array([0, 1, 2, 3]), np.zeros(2, np.int64)),   # offsets past the key
                       (np.array([0, 2, 1, 2]), np.zeros(2, np.int64)),   # descending offsets
                       (np.array([0, 1, 2, 2]), None)):                   # offsets without the key
        with pytest.raises(KernelInputError):
            canonical_order(P, np.array([0]), koff, kseq)
    with pytest.raises(KernelInputError):
        gather_columns(P, np.array([0]), np.array([3]))
    with pytest.raises(KernelInputError):
        gather_columns(P, np.array([-1]), None)


def _key(off, pos, unbound=None, lo=None, hi=None, gap=0):
    """list_key's (parts, lo, hi) as lists, each list's part written ``gap`` entries after the one before
    (the gaps, filled with -7, stay untouched)."""
    n = len(off) - 1
    size = np.diff(off) + (2 if unbound is not None else 1) + gap
    at = np.zeros(n, np.int64)
    np.cumsum(size[:-1], out=at[1:])
    start = at.copy()
    kseq = np.full(int(size.sum()), -7, np.int64)
    lo = np.full(n, 2**63 - 1, np.int64) if lo is None else lo.copy()
    hi = np.full(n, -1, np.int64) if hi is None else hi.copy()
    list_key(off, pos, unbound, at, kseq, lo, hi)
    assert (at == start + size - gap).all()  # advanced past each part
    assert (kseq[(start + size - gap)[:, None] + np.arange(gap)] == -7).all()  # nothing written past a part
    return [tuple(kseq[a:b].tolist()) for a, b in zip(start, at)], lo.tolist(), hi.tolist()


def test_list_key_orders_lists_lexicographically_a_prefix_first_and_refuses_bad_input():
    # hand-enumerated: (2) < (2, 4) < (2, 4, 5) < (2, 5) < (4) < (5) as the parts compare, the empty list first
    lists = [(2, 5), (4,), (), (2, 4, 5), (5,), (2,), (2, 4)]
    off = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    pos = np.array([p for x in lists for p in x], np.int64)
    parts, lo, hi = _key(off, pos)
    assert sorted(range(len(lists)), key=lambda j: parts[j]) == [2, 5, 6, 3, 0, 1, 4]
    assert (lo[2], hi[2], lo[3], hi[3]) == (2**63 - 1, -1, 2, 5)
    # bound before unbound, whatever the lists
    parts, *_ = _key(off, pos, np.array([True, False, False, False, False, True, False]))
    assert sorted(range(len(lists)), key=lambda j: parts[j]) == [2, 6, 3, 1, 4, 5, 0]
    at, kseq, lo, hi = np.zeros(1, np.int64), np.zeros(4, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    two = np.array([0, 2])
    for call in (lambda: list_key(np.array([0, 5]), np.array([1, 2]), None, at, kseq, lo, hi),  # offsets past the members
                 lambda: list_key(two, np.array([1, 2]), None, at, kseq[:2], lo, hi),  # the part past the key
                 lambda: list_key(two, np.array([1, 2]), np.zeros(1, bool), at + 1, kseq, lo, hi),  # the same
                 lambda: list_key(two, np.array([1, 2]), None, at - 1, kseq, lo, hi),  # before the key
                 lambda: list_key(np.array([0, 1, 2]), np.array([1, 2]), None, np.array([0, 1]), kseq,
                                  np.zeros(2, np.int64), np.zeros(2, np.int64)),  # parts overlap
                 lambda: list_key(two, np.array([1, 2]), np.zeros(2, bool), at, kseq, lo, hi),  # a flag per list
                 lambda: list_key(two, np.array([1, 2]), None, at, kseq, lo[:0], hi),  # a bound per list missing
                 lambda: list_key(two, np.array([1, 2]), None, at, kseq.astype(np.int32), lo, hi),
                 lambda: list_key(two, np.array([1, 2]), None, at, kseq, lo, hi.astype(np.int32))):
        with pytest.raises(KernelInputError):
            call()


@st.composite
def csr_lists(draw):
    """(off, pos): up to 12 lists of up to 5 members in any order (a group's iterations need not ascend),
    then members past the last list."""
    lists = draw(st.lists(st.lists(st.integers(0, 50), max_size=5), max_size=12))
    off = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    pad = draw(st.lists(st.integers(0, 50), max_size=3))
    return off, np.array([p for x in lists for p in x] + pad, dtype=np.int64)


@settings(max_examples=60, deadline=None)
@given(csr_lists(), st.data())
def test_list_bounds_and_keys_match_naive(lists, data):
    off, pos = lists
    n = len(off) - 1
    lo = np.array(data.draw(st.lists(st.sampled_from([2**63 - 1, 10, 30]), min_size=n, max_size=n)), np.int64)
    hi = np.array(data.draw(st.lists(st.sampled_from([-1, 10, 30]), min_size=n, max_size=n)), np.int64)
    want = naive.list_bounds(off, pos, lo, hi)
    unbound = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool) \
        if data.draw(st.booleans()) else None
    gap = data.draw(st.integers(0, 2))
    assert _key(off, pos, unbound, lo, hi, gap) == naive.list_key(off, pos, unbound, lo, hi)
    list_bounds(off, pos, lo, hi)
    assert (lo.tolist(), hi.tolist()) == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.lists(st.integers(0, 50), max_size=5, unique=True).map(sorted)),
                max_size=12), st.data())
def test_list_bounds_of_lists_ascending_after_their_first_match_naive(lists, data):
    # a closure's lists: the anchor, then the members in position order (a member tied in time with the
    # anchor may lie before it); the bounds read off the ends equal the min / max over every member
    lists = [[a, *rest] if a not in rest else rest for a, rest in lists]
    off = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    pos = np.array([p for x in lists for p in x] + data.draw(st.lists(st.integers(0, 50), max_size=2)), np.int64)
    n = len(lists)
    lo = np.array(data.draw(st.lists(st.sampled_from([2**63 - 1, 10, 30]), min_size=n, max_size=n)), np.int64)
    hi = np.array(data.draw(st.lists(st.sampled_from([-1, 10, 30]), min_size=n, max_size=n)), np.int64)
    want = naive.list_bounds(off, pos, lo, hi)
    list_bounds(off, pos, lo, hi, tail_ascending=True)
    assert (lo.tolist(), hi.tolist()) == want


@settings(max_examples=60, deadline=None)
@given(csr_lists(), st.data())
def test_take_lists_matches_naive(lists, data):
    off, pos = lists
    idx = np.array(data.draw(st.lists(st.integers(0, max(len(off) - 2, 0)), max_size=15 if len(off) > 1 else 0)),
                   np.int64)
    new_off, got = take_lists(off, pos, idx)
    assert (new_off.tolist(), got.tolist()) == naive.take_lists(off, pos, idx)


def test_list_bounds_and_take_lists_refuse_bad_offsets_indexes_and_bounds():
    off, pos = np.array([0, 2, 3]), np.array([4, 1, 7])
    lo, hi = np.zeros(2, np.int64), np.zeros(2, np.int64)
    for call in (lambda: list_bounds(np.array([0, 4]), pos, lo[:1], hi[:1]),   # offsets past the members
                 lambda: list_bounds(off, pos, lo[:1], hi),                    # a bound per list missing
                 lambda: list_bounds(off, pos, lo.astype(np.int32), hi),       # not updated in place as int64
                 lambda: take_lists(off, pos, np.array([2])),                  # no list 2
                 lambda: take_lists(off, pos, np.array([-1])),
                 lambda: take_lists(np.array([0, 3, 2]), pos, np.array([0]))):  # descending offsets
        with pytest.raises(KernelInputError):
            call()


def _held(draw, m: int, in_order: bool):
    """One CSR list per record of m: a closure collected below the root (members ascending) or, when not
    ``in_order``, members in any order; small positions, so that records tie on them."""
    lists = [sorted(draw(st.lists(st.integers(0, 12), max_size=3, unique=True))) if in_order
             else draw(st.lists(st.integers(0, 12), max_size=3)) for _ in range(m)]
    off = np.zeros(m + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    return off, np.array([p for x in lists for p in x], np.int64)


@st.composite
def closure_lists(draw, in_order=True, held=False):
    """(P, rows, cols, off, pos, before, after): records of k columns (-1 unbound) and lists of them, list j
    of record rows[j] (rows ascend), as a closure makes them at the root when ``in_order``: a list's
    members after its first ascend (its first, an anchor shared by the record's lists, may lie after some),
    and each record's lists come in lexicographic order (a proper prefix first).  ``held``: 0-2 lists per
    record before and after the closure's by name (closures collected below the root), else none.  Small
    positions: ends, first positions, columns and held lists tie often, and lists of several records
    share an end."""
    m, k = draw(st.integers(1, 8)), draw(st.integers(1, 3))
    P = np.array(draw(st.lists(st.lists(st.integers(-1, 9), min_size=k, max_size=k), min_size=m, max_size=m)),
                 np.int64).reshape(m, k)
    cols = np.array(draw(st.lists(st.integers(0, k - 1), max_size=k, unique=True)), np.int64)
    rows, lists = [], []
    for r in range(m):
        anchor = draw(st.one_of(st.none(), st.integers(0, 12)))
        mine = []
        for _ in range(draw(st.integers(0, 5))):
            if in_order:
                rest = sorted(draw(st.lists(st.integers(0, 12), max_size=4, unique=True)))
                mine.append(rest if anchor is None else [anchor, *(p for p in rest if p != anchor)])
            else:
                mine.append(draw(st.lists(st.integers(0, 12), max_size=4)))
        if in_order:
            mine = sorted({tuple(x) for x in mine})
        rows += [r] * len(mine)
        lists += [list(x) for x in mine]
    off = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    before = [_held(draw, m, in_order) for _ in range(draw(st.integers(0, 2)) if held else 0)]
    after = [_held(draw, m, in_order) for _ in range(draw(st.integers(0, 2)) if held else 0)]
    return P, np.array(rows, np.int64), cols, off, np.array([p for x in lists for p in x], np.int64), before, after


def _plain(held):
    return [(o.tolist(), p.tolist()) for o, p in held]


@settings(max_examples=400, deadline=None)
@given(closure_lists())
def test_lists_in_end_order_matches_naive(case):
    P, rows, cols, off, pos, _, _ = case
    single, new_off, members, held = lists_in_end_order(P, rows, cols, off, pos)
    assert held == []
    assert (single.tolist(), new_off.tolist(), members.tolist(), []) == naive.lists_in_end_order(P, rows, cols, off,
                                                                                                 pos)


@settings(max_examples=400, deadline=None)
@given(closure_lists(held=True))
def test_lists_in_end_order_with_held_lists_matches_naive(case):
    # the records' lists of closures collected below the root, before and after the closure's by name:
    # each match repeats its record's, and they order matches where first positions and columns tie
    P, rows, cols, off, pos, before, after = case
    single, new_off, members, held = lists_in_end_order(P, rows, cols, off, pos, before, after)
    want = naive.lists_in_end_order(P, rows, cols, off, pos, before, after)
    assert (single.tolist(), new_off.tolist(), members.tolist(), _plain(held)) == want


@settings(max_examples=200, deadline=None)
@given(closure_lists(held=True))
def test_a_closures_table_at_the_root_matches_naive(case):
    # closure_table names the held lists: "a*" before the closure's "k", "z*" after it
    P, rows, cols, off, pos, before, after = case
    where = {f"v{c}": int(c) for c in cols}
    held = {**{f"a{i}": h for i, h in enumerate(before)}, **{f"z{i}": h for i, h in enumerate(after)}}
    t = closure_table(P, where, "k", (off, pos), held, rows)
    named = [where[v] for v in sorted(where)]  # the order compares single variables in name order
    single, new_off, members, copies = naive.lists_in_end_order(P, rows, named, off, pos, before, after)
    assert [t.single[f"v{c}"].tolist() for c in named] == single
    assert (t.lists["k"][0].tolist(), t.lists["k"][1].tolist()) == (new_off, members)
    assert [(t.lists[v][0].tolist(), t.lists[v][1].tolist()) for v in held] == copies
    # the same table as the general path's, which sorts every match's whole key
    want = canonical_table(P, where, {"k": (off, pos), **{v: take_lists(*h, rows) for v, h in held.items()}}, {},
                           rows=rows)
    assert {v: c.tolist() for v, c in t.single.items()} == {v: c.tolist() for v, c in want.single.items()}
    assert {v: (o.tolist(), p.tolist()) for v, (o, p) in t.lists.items()} == \
        {v: (o.tolist(), p.tolist()) for v, (o, p) in want.lists.items()}


@settings(max_examples=150, deadline=None)
@given(closure_lists(in_order=False, held=True))
def test_lists_in_end_order_under_wrong_claims_is_a_permutation(case):
    # members in any order, a record's lists in any order: the order may be wrong, but each list keeps
    # its record's columns, its held lists and its members, and nothing is read outside the arrays (the
    # bounds-checked rerun)
    P, rows, cols, off, pos, before, after = case
    single, new_off, members, held = lists_in_end_order(P, rows, cols, off, pos, before, after)

    def part(o, p, j):
        return tuple(p[o[j]:o[j + 1]].tolist())

    got = sorted((tuple(single[:, j].tolist()), part(new_off, members, j), *(part(o, p, j) for o, p in held))
                 for j in range(len(rows)))
    assert got == sorted((tuple(P[r, cols].tolist()), part(off, pos, j), *(part(o, p, r) for o, p in (*before, *after)))
                         for j, r in enumerate(rows.tolist()))


def test_lists_in_end_order_sorts_the_records_of_an_end_out_of_order():
    # end 8: record 0's [3, 8] then record 2's [3, 7, 8], tied on first position (3) and column (5),
    # ordered by their lists; end 9: record 0's [3, 9] (first position 3) then record 1's [4, 9] (its
    # column 1 is its first position)
    P = np.array([[5], [1], [5]], np.int64)
    rows, cols = np.array([0, 0, 1, 2]), np.array([0])
    lists = [[3, 8], [3, 9], [4, 9], [3, 7, 8]]
    off = np.array([0, 2, 4, 6, 9])
    pos = np.array([p for x in lists for p in x])
    single, new_off, members, _ = lists_in_end_order(P, rows, cols, off, pos)
    assert single.tolist() == [[5, 5, 1, 5]]
    assert [members[new_off[j]:new_off[j + 1]].tolist() for j in range(4)] == [[3, 7, 8], [3, 8], [4, 9], [3, 9]]
    assert (single.tolist(), new_off.tolist(), members.tolist(), []) == naive.lists_in_end_order(P, rows, cols,
                                                                                                 off, pos)


def test_lists_in_end_order_orders_by_held_lists_where_columns_tie():
    # records 0 and 1 tie on their column (2, the first position) and on their lists' end (9): held list
    # b (named before the closure's) decides, [4] before [4, 5] (a prefix first) before [6]; held list z
    # (after it) decides between records 1 and 2, whose b and closure lists are equal
    P = np.array([[2], [2], [2]], np.int64)
    rows, cols = np.array([0, 1, 2]), np.array([0])
    off, pos = np.array([0, 1, 2, 3]), np.array([9, 9, 9])
    b = (np.array([0, 2, 3, 4]), np.array([4, 5, 4, 4]))   # record 0: [4, 5], records 1 and 2: [4]
    z = (np.array([0, 1, 2, 3]), np.array([3, 7, 6]))      # record 1: [7], record 2: [6]
    single, new_off, members, held = lists_in_end_order(P, rows, cols, off, pos, [b], [z])
    assert [held[0][1][held[0][0][j]:held[0][0][j + 1]].tolist() for j in range(3)] == [[4], [4], [4, 5]]
    assert [held[1][1][held[1][0][j]:held[1][0][j + 1]].tolist() for j in range(3)] == [[6], [7], [3]]
    assert (single.tolist(), new_off.tolist(), members.tolist(), _plain(held)) == \
        naive.lists_in_end_order(P, rows, cols, off, pos, [b], [z])


def test_lists_in_end_order_declines_positions_far_past_the_lists_and_refuses_bad_input():
    P, rows, cols = np.array([[0], [3]], np.int64), np.array([0, 1]), np.array([0])
    off, pos = np.array([0, 1, 2]), np.array([1, 10**9])
    assert lists_in_end_order(P, rows, cols, off, pos) is None  # canonical_order sorts those
    held = (np.array([0, 1, 1]), np.array([4]))
    for call in (lambda: lists_in_end_order(P, np.array([0, 2]), cols, off, pos),         # no record 2
                 lambda: lists_in_end_order(P, rows, cols, off, pos, [(held[0][:2], held[1])]),  # a record's held list
                 lambda: lists_in_end_order(P, rows, cols, off, pos, [], [(held[0], held[1][:0])]),  # past its members
                 lambda: lists_in_end_order(P, rows, np.array([1]), off, pos),            # no column 1
                 lambda: lists_in_end_order(P, rows, cols, np.array([0, 3, 2]), pos),     # offsets past pos
                 lambda: lists_in_end_order(P, rows, cols, np.array([0, 2]), pos),        # a list missing
                 lambda: lists_in_end_order(P[0], rows, cols, off, pos)):                 # no matrix
        with pytest.raises(KernelInputError):
            call()
