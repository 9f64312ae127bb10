"""kernels.and_join_filtered.and_join_where (an AND join's predicates generated into its loop,
codegen.join_where's AND layout) against its naive twin: and_join's pairs filtered by the predicates'
truth, in the merge's order; and_join_rows (the final AND join writing the match table's rows) against
its twin: those pairs as rows in canonical order."""

from __future__ import annotations

import contextlib
from importlib import import_module
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.codegen import PredicateSet
from jitcep.codegen.join_where import and_join_rows, and_join_where, and_join_where_source
from jitcep.codegen.predicates import column_specs
from jitcep.errors import ExplosionError, KernelInputError
from jitcep.kernels import and_join, and_join_filtered
from test_kernels_join_filtered import _table, cases, predicate_lists

E = import_module("jitcep.pattern.expr")


def _run(case, distinct, cap=10**6):
    ts, wt, W, L, R, table, lv, rv, preds = case
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    fn = and_join_where(pset, range(len(preds)), lv, rv)
    return and_join_filtered.and_join_where(fn, L, R, ts, wt, W, distinct, cap, pset.bind(table))


def _small_arrays(resume):
    # resume: the first arrays hold one pair, so that most merges stop and resume (their state kept)
    return mock.patch.object(and_join_filtered, "_first_size",
                             (lambda m: 1) if resume else and_join_filtered._first_size)


@settings(max_examples=400, deadline=None)
@given(cases(leaf_right=False), st.booleans(), st.booleans())
def test_and_join_where_is_the_passing_pairs_in_merge_order(case, distinct, resume):
    ts, wt, W, L, R, table, lv, rv, preds = case
    with _small_arrays(resume):
        li, ri, g = _run(case, distinct)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert got == naive.and_join_where(L, R, ts, wt, W, distinct, preds, lv, rv, table)


@settings(max_examples=200, deadline=None)
@given(cases(leaf_right=False), st.booleans())
def test_and_join_where_keeps_and_joins_order(case, distinct):
    """The pairs are and_join's own, in its order, less those that fail (the merge order of the twin
    above is the kernel's, not only the twin's)."""
    ts, wt, W, L, R, table, lv, rv, preds = case
    li, ri, g = _run(case, distinct)
    keep = set(naive.and_join_where(L, R, ts, wt, W, distinct, preds, lv, rv, table))
    all_li, all_ri, all_g = and_join(L, R, ts, wt, W, distinct, 10**6)
    want = [t for t in zip(all_li.tolist(), all_ri.tolist(), all_g.tolist()) if t in keep]
    assert list(zip(li.tolist(), ri.tolist(), g.tolist())) == want


@settings(max_examples=300, deadline=None)
@given(cases(leaf_right=False), st.booleans(), st.integers(0, 12))
def test_and_join_where_caps_the_candidates_not_the_passing_pairs(case, resume, cap):
    ts, wt, W, L, R, table, lv, rv, preds = case
    candidates = len(naive.and_join(L, R, ts, wt, W, False))
    with _small_arrays(resume):
        if candidates > cap:
            with pytest.raises(ExplosionError, match=f"more than {cap} candidate"):
                _run(case, False, cap)
        else:
            li, _, _ = _run(case, False, cap)
            assert len(li) == len(naive.and_join_where(L, R, ts, wt, W, False, preds, lv, rv, table))


def test_and_join_where_refuses_bad_input():
    ts = np.arange(4, dtype=np.int64)
    table = _table(4, ts, [0, 1, 2, 3], [True] * 4, [0.0] * 4)
    preds = [E.Cmp("<", E.Attr("l0", "p"), E.Attr("r0", "p"))]
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    fn = and_join_where(pset, [0], ("l0",), ("r0",))
    leaf = lambda pos: (np.array(pos, np.int64).reshape(-1, 1), np.array(pos, np.int64), np.array(pos, np.int64),
                        np.array([0, len(pos)], np.int64))
    call = lambda L, R: and_join_filtered.and_join_where(fn, L, R, ts, ts, 10, False, 100, pset.bind(table))
    # hand-enumerated: 0 < 2, 0 < 3, 1 < 2, 1 < 3 pass, in the merge's order (right 2 then right 3 driving)
    assert list(zip(*(a.tolist() for a in call(leaf([0, 1]), leaf([2, 3]))))) == [(0, 0, 0), (1, 0, 0), (0, 1, 0),
                                                                                   (1, 1, 0)]
    # the left records ending later drive: each pairs with the right ones before it; only p(l) < p(r) passes
    assert call(leaf([2, 3]), leaf([0, 1]))[0].tolist() == []
    with pytest.raises(KernelInputError, match="outside the event table"):
        call(leaf([0, 1]), (np.array([[9], [3]], np.int64), *leaf([2, 3])[1:]))
    with pytest.raises(KernelInputError, match="partition offsets"):
        call(leaf([0, 1]), (*leaf([2, 3])[:3], np.array([0, 5], np.int64)))
    with pytest.raises(KernelInputError, match="one entry per record"):
        call(leaf([0, 1]), (np.zeros((1, 1), np.int64), *leaf([2, 3])[1:]))


def test_the_generated_merge_reads_each_variable_from_its_side():
    table = _table(2, np.arange(2, dtype=np.int64), [0, 1], [True] * 2, [0.0] * 2)
    preds = [E.Cmp("=", E.Attr("a", "p"), E.Lit(7)), E.Cmp("<", E.Attr("b", "p"), E.Attr("a", "p"))]
    pset = PredicateSet(preds, column_specs(table, ["p"]))
    src = and_join_where_source(pset, [1], ("x", "a"), ("b",))
    assert "Lpos[l, 1]" in src and "Rpos[r, 0]" in src and "== (7)" not in src


def _one_partition(buf, by_end: bool):
    """``buf``'s records as one key partition: sorted by end (stably), or (``by_end`` False) in their
    order, which is by end only within each of the partitions drawn."""
    pos, start, end, goff = buf
    order = np.argsort(end, kind="stable") if by_end else np.arange(len(end))
    return pos[order], start[order], end[order], np.array([0, len(end)], np.int64)


def _ascend(buf) -> bool:
    return bool(np.all(np.diff(buf[2]) >= 0))


def _rows(case, distinct, names, cap=10**6):
    ts, wt, W, L, R, table, lv, rv, preds = case
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    fn = and_join_rows(pset, range(len(preds)), lv, rv, names)
    key = np.array(sorted(range(len(names)), key=names.__getitem__), np.int64)
    return and_join_filtered.and_join_rows(fn, L, R, ts, wt, W, distinct, cap, pset.bind(table), len(names), key)


@contextlib.contextmanager
def _small_runs(small):
    # small: the run buffers hold two rows, so that an end of more rows out of order is listed and sorted by
    # kernels.order._sort_run, and the list holds one such end, so that the merge stops at the next (status 2)
    with mock.patch.object(and_join_filtered, "_RUN", 2 if small else and_join_filtered._RUN), \
            mock.patch.object(and_join_filtered, "_LONG", 1 if small else and_join_filtered._LONG):
        yield


@st.composite
def rows_cases(draw, every_function=False):
    """(case, turned): :func:`cases` for the rows layout, and whether the match table's rows are turned
    (right variables first, each side reversed: rows not in name order) instead of in the joins' order.
    Each (widths, predicate list, order) is a function of ~190 lines compiled for it, ~5 s cold: by default
    one list and one order per pair of widths (turned where their sum is odd: 9 functions, and the hand case's
    one), every one in the slow test (36)."""
    case = draw(cases(leaf_right=False))
    lv, rv = case[6], case[7]
    if every_function:
        return case, draw(st.booleans())
    w = len(lv) + len(rv)
    return (*case[:-1], predicate_lists(lv, rv)[w % 4]), w % 2 == 1


def _names(lv, rv, turned):
    return [*rv[::-1], *lv[::-1]] if turned else [*lv, *rv]


@settings(max_examples=400, deadline=None)
@given(rows_cases(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_and_join_rows_are_the_passing_pairs_in_canonical_order(case, distinct, resume, small, by_end):
    _check_rows(*case, distinct, resume, small, by_end)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(rows_cases(every_function=True), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_and_join_rows_in_canonical_order_every_function(case, distinct, resume, small, by_end):
    _check_rows(*case, distinct, resume, small, by_end)


def _check_rows(case, turned, distinct, resume, small, by_end):
    ts, wt, W, L, R, table, lv, rv, preds = case
    L, R = _one_partition(L, by_end), _one_partition(R, by_end)
    case = (ts, wt, W, L, R, table, lv, rv, preds)
    names = _names(lv, rv, turned)
    with _small_arrays(resume), _small_runs(small):
        out = _rows(case, distinct, names)
    if not (_ascend(L) and _ascend(R)):
        assert out is None  # the merge would not be by end
        return
    rows, bound = out
    assert rows.flags.c_contiguous and rows.shape[0] == len(names)
    assert rows.tolist() == naive.and_join_rows(L, R, ts, wt, W, distinct, preds, lv, rv, table, names)
    assert bound == (not rows.size or (L[0].min(initial=0) >= 0 and R[0].min(initial=0) >= 0))


@settings(max_examples=200, deadline=None)
@given(rows_cases(), st.booleans(), st.integers(0, 12))
def test_and_join_rows_caps_the_candidates(case, resume, cap):
    (ts, wt, W, L, R, table, lv, rv, preds), turned = case
    L, R = _one_partition(L, True), _one_partition(R, True)
    case = (ts, wt, W, L, R, table, lv, rv, preds)
    candidates = len(naive.and_join(L, R, ts, wt, W, False))
    with _small_arrays(resume):
        if candidates > cap:
            with pytest.raises(ExplosionError, match=f"more than {cap} candidate"):
                _rows(case, False, _names(lv, rv, turned), cap)
        else:
            rows, _ = _rows(case, False, _names(lv, rv, turned), cap)
            assert rows.shape[1] == len(naive.and_join_where(L, R, ts, wt, W, False, preds, lv, rv, table))


def test_and_join_rows_by_hand():
    """Hand-enumerated: the b events 4 and 6 each drive over the (a, c) records (1, 2) and (0, 3), which the
    merge meets in that order (by end); (a, c) = (5, 7) drives over both b events.  Every pair passes
    a.p < c.p (p is the position here)."""
    ts = np.arange(8, dtype=np.int64)
    table = _table(8, ts, list(range(8)), [True] * 8, [0.0] * 8)
    preds = [E.Cmp("<", E.Attr("a", "p"), E.Attr("c", "p"))]
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    names = ["a", "b", "c"]
    fn = and_join_rows(pset, [0], ("b",), ("a", "c"), names)
    b = np.array([4, 6], np.int64)
    L = (b.reshape(-1, 1), b, b, np.array([0, 2], np.int64))
    ac = np.array([[1, 2], [0, 3], [5, 7]], np.int64)
    R = (ac, ac.min(axis=1), ac.max(axis=1), np.array([0, 3], np.int64))
    rows, bound = and_join_filtered.and_join_rows(fn, L, R, ts, ts, 10, True, 100, pset.bind(table), 3,
                                                  np.arange(3, dtype=np.int64))
    # end 4 (b = 4 drives): (a, c) = (1, 2) and (0, 3) -> first 0 before first 1; end 6: the same two with
    # b = 6; end 7 ((5, 7) drives): b = 4 (first 4), b = 6 (first 5)
    assert rows.T.tolist() == [[0, 4, 3], [1, 4, 2], [0, 6, 3], [1, 6, 2], [5, 4, 7], [5, 6, 7]]
    assert bound
    # a record ending before the one before it: the merge is not by end
    R2 = (ac[::-1].copy(), ac[::-1].min(axis=1), ac[::-1].max(axis=1), np.array([0, 3], np.int64))
    assert and_join_filtered.and_join_rows(fn, L, R2, ts, ts, 10, True, 100, pset.bind(table), 3) is None
    with pytest.raises(KernelInputError, match="one key partition"):
        and_join_filtered.and_join_rows(fn, (*L[:3], np.array([0, 1, 2], np.int64)),
                                        (*R[:3], np.array([0, 1, 3], np.int64)), ts, ts, 10, True, 100,
                                        pset.bind(table), 3)
