"""kernels.and_join_filtered.and_join_where (an AND join's predicates generated into its loop,
codegen.join_where's AND layout) against its naive twin: and_join's pairs filtered by the predicates'
truth, in the merge's order."""

from __future__ import annotations

from importlib import import_module
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.codegen import PredicateSet
from jitcep.codegen.join_where import and_join_where, and_join_where_source
from jitcep.codegen.predicates import column_specs
from jitcep.errors import ExplosionError, KernelInputError
from jitcep.kernels import and_join, and_join_filtered
from test_kernels_join_filtered import _table, cases

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
