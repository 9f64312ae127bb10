"""kernels.join_filtered.seq_join_where (a SEQ join's predicates generated into its loop,
codegen.join_where) against its naive twin: seq_join's pairs filtered by the predicates' truth."""

from __future__ import annotations

from importlib import import_module
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.codegen import PredicateSet
from jitcep.codegen.join_where import join_where, join_where_source
from jitcep.codegen.predicates import column_specs
from jitcep.errors import ExplosionError, KernelInputError
from jitcep.events import Column, EventTable
from jitcep.kernels import join_filtered
from test_kernels_join import tables_and_buffers

E = import_module("jitcep.pattern.expr")
LEFT, RIGHT = ("l0", "l1", "l2"), ("r0", "r1", "r2")


def predicate_lists(left_vars, right_vars):
    """Predicate lists over a pair's variables: across the two sides (int, float, a product as
    googleIncrease's, an OR with IS NULL, three variables) and on one side only.  A fixed few per
    layout: each list is a function compiled for it."""
    lv, rv, last = left_vars[0], right_vars[-1], left_vars[-1]
    return [
        [E.Cmp("<", E.Attr(rv, "p"), E.Attr(lv, "p"))],
        [E.Cmp(">=", E.Attr(rv, "q"), E.Arith("*", E.Attr(lv, "q"), E.Lit(1.01)))],
        [E.Cmp(">", E.Attr(last, "p"), E.Lit(0)), E.Cmp("!=", E.Attr(rv, "q"), E.Lit(1.5)),
         E.BoolOp("or", (E.Cmp("<=", E.Attr(lv, "p"), E.Attr(rv, "p")), E.IsNull(E.Attr(rv, "p"))))],
        [E.Cmp("=", E.Arith("-", E.Attr(rv, "p"), E.Attr(lv, "p")), E.Attr(last, "p"))],
    ]


def _table(n, ts, p, p_valid, q):
    # validity always given: one column spec (nullable) for every table, so one function per predicate list
    cols = {"p": Column("int", np.array(p, np.int64), np.array(p_valid, np.bool_)),
            "q": Column("float", np.array(q, np.float64), None)}
    return EventTable(ts=ts, row=np.arange(n, dtype=np.int64), type_code=np.zeros(n, np.int32), type_names=("T",),
                      columns=cols, time_unit_ns=None, time_dtype=None)


@st.composite
def cases(draw, leaf_right=None):
    leaf_right = draw(st.booleans()) if leaf_right is None else leaf_right
    ts, wt, W, L, R = draw(tables_and_buffers(leaf_right=leaf_right))
    n = len(ts)
    p = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    p_valid = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if draw(st.booleans()) else [True] * n
    q = draw(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, -1.0, 1.01]), min_size=n, max_size=n))
    table = _table(n, ts, p, p_valid, q)
    lv, rv = LEFT[:L[0].shape[1]], RIGHT[:R[0].shape[1]]
    lists = predicate_lists(lv, rv)  # two of them per layout: each list is compiled per layout and driver
    preds = draw(st.sampled_from([lists[(len(lv) + len(rv)) % 4], lists[(len(lv) + len(rv) + 1) % 4]]))
    return ts, wt, W, L, R, table, lv, rv, preds


def _run(case, order, distinct, cap=10**6, by_left=False):
    ts, wt, W, L, R, table, lv, rv, preds = case
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    fn = join_where(pset, range(len(preds)), lv, rv, by_left)
    return join_filtered.seq_join_where(fn, L, R, ts, wt, W, order, distinct, cap, pset.bind(table), by_left)


@settings(max_examples=400, deadline=None)
@given(cases(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), st.booleans(), st.booleans(),
       st.booleans())
def test_seq_join_where_is_the_passing_pairs_in_join_order(case, order, distinct, resume, by_left):
    ts, wt, W, L, R, table, lv, rv, preds = case
    if order == "nondecreasing_ts":
        distinct = True  # the runtime always checks distinctness under ties
    by_left = by_left and R[1] is R[2]  # the left records drive only over a right leaf
    # resume: the first arrays hold one pair, so that most joins stop and resume (partitions renumbered)
    with mock.patch.object(join_filtered, "_first_size", (lambda m: 1) if resume else join_filtered._first_size):
        li, ri, g = _run(case, order, distinct, by_left=by_left)
    got = list(zip(li.tolist(), ri.tolist(), g.tolist()))
    assert got == naive.seq_join_where(L, R, ts, wt, W, order, distinct, preds, lv, rv, table)


@settings(max_examples=300, deadline=None)
@given(cases(), st.sampled_from(["position", "strict_ts"]), st.booleans(), st.integers(0, 12), st.booleans())
def test_seq_join_where_caps_the_candidates_not_the_passing_pairs(case, order, resume, cap, by_left):
    ts, wt, W, L, R, table, lv, rv, preds = case
    by_left = by_left and R[1] is R[2]
    candidates = len(naive.seq_join(L, R, ts, wt, W, order, False))
    with mock.patch.object(join_filtered, "_first_size", (lambda m: 1) if resume else join_filtered._first_size):
        if candidates > cap:
            with pytest.raises(ExplosionError, match=f"more than {cap} candidate"):
                _run(case, order, False, cap, by_left)
        else:
            li, _, _ = _run(case, order, False, cap, by_left)
            assert len(li) == len(naive.seq_join_where(L, R, ts, wt, W, order, False, preds, lv, rv, table))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40), st.integers(-6, 6), st.integers(0, 2), st.data())
def test_first_later_near_is_the_first_right_record_after_the_end(keys, x, order, data):
    keys = np.array(sorted(keys), np.int64)
    lo = data.draw(st.integers(0, len(keys)))
    hi = data.draw(st.integers(lo, len(keys)))
    got = join_filtered.first_later_near(keys, keys, lo, hi, x, x, order)
    assert got == naive.first_later(keys, keys, lo, hi, x, x, order)


@settings(max_examples=150, deadline=None)
@given(cases(leaf_right=True), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]))
def test_the_left_driven_loop_searches_afresh_where_a_left_record_ends_earlier(case, order):
    # each partition's left records reversed (ends descending): each one's search starts over from the
    # partition's first right record, and the pairs are still the naive twin's
    ts, wt, W, L, R, table, lv, rv, preds = case
    perm = np.concatenate([np.arange(L[3][g], L[3][g + 1])[::-1] for g in range(len(L[3]) - 1)]).astype(np.int64)
    L = (L[0][perm], L[1][perm], L[2][perm], L[3])
    li, ri, g = _run((ts, wt, W, L, R, table, lv, rv, preds), order, order == "nondecreasing_ts", by_left=True)
    assert list(zip(li.tolist(), ri.tolist(), g.tolist())) == naive.seq_join_where(
        L, R, ts, wt, W, order, order == "nondecreasing_ts", preds, lv, rv, table)


def test_seq_join_where_refuses_bad_input():
    ts = np.arange(4, dtype=np.int64)
    table = _table(4, ts, [0, 1, 2, 3], [True] * 4, [0.0] * 4)
    preds = [E.Cmp("<", E.Attr("l0", "p"), E.Attr("r0", "p"))]
    pset = PredicateSet(preds, column_specs(table, ["p", "q"]))
    fn = join_where(pset, [0], ("l0",), ("r0",))
    leaf = lambda pos: (np.array(pos, np.int64).reshape(-1, 1), np.array(pos, np.int64), np.array(pos, np.int64),
                        np.array([0, len(pos)], np.int64))
    call = lambda L, R: join_filtered.seq_join_where(fn, L, R, ts, ts, 10, "position", False, 100, pset.bind(table))
    assert call(leaf([0, 1]), leaf([2, 3]))[0].tolist() == [0, 1, 0, 1]
    with pytest.raises(KernelInputError, match="outside the event table"):
        call(leaf([0, 1]), (np.array([[9], [3]], np.int64), *leaf([2, 3])[1:]))
    with pytest.raises(KernelInputError, match="partition offsets"):
        call(leaf([0, 1]), (*leaf([2, 3])[:3], np.array([0, 5], np.int64)))
    with pytest.raises(KernelInputError, match="one entry per record"):
        call(leaf([0, 1]), (np.zeros((1, 1), np.int64), *leaf([2, 3])[1:]))
    R = leaf([2, 3])
    with pytest.raises(KernelInputError, match="needs a leaf on the right"):
        join_filtered.seq_join_where(join_where(pset, [0], ("l0",), ("r0",), True), leaf([0, 1]),
                                     (R[0], R[1].copy(), *R[2:]), ts, ts, 10, "position", False, 100,
                                     pset.bind(table), True)


def test_the_generated_loop_reads_each_variable_from_its_side_and_keeps_the_literals_slots():
    table = _table(2, np.arange(2, dtype=np.int64), [0, 1], [True] * 2, [0.0] * 2)
    preds = [E.Cmp("=", E.Attr("a", "p"), E.Lit(7)), E.Cmp("<", E.Attr("b", "p"), E.Attr("a", "p"))]
    pset = PredicateSet(preds, column_specs(table, ["p"]))
    src = join_where_source(pset, [1], ("x", "a"), ("b",))
    assert "Lpos[l, 1]" in src and "Rpos[r, 0]" in src and "== (7)" not in src
