"""kernels.negation_filtered.killed_where (a negation's conditions generated into the loop over its
candidates, codegen.negation_where) against its naive twin: a record dies when some candidate of its
range passes every condition."""

from __future__ import annotations

from importlib import import_module

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.codegen import PredicateSet
from jitcep.codegen.negation_where import negation_where, negation_where_source
from jitcep.codegen.predicates import column_specs
from jitcep.errors import KernelInputError
from jitcep.kernels.negation import negation_ranges
from jitcep.kernels import negation_filtered
from test_kernels_join_filtered import _table
from test_kernels_negation import negation_cases

E = import_module("jitcep.pattern.expr")
RECORD = ("r0", "r1", "r2")


def condition_lists(rec_vars):
    """Conditions over the negated variable ``n`` and a record's: across the two (int, float, a product,
    an OR with IS NULL, three variables) and on the negated event alone.  A fixed few per layout: each
    list is a function compiled for it."""
    first, last = rec_vars[0], rec_vars[-1]
    return [
        [E.Cmp("<", E.Attr("n", "p"), E.Attr(first, "p"))],
        [E.Cmp(">=", E.Attr("n", "q"), E.Arith("*", E.Attr(first, "q"), E.Lit(1.01))),
         E.Cmp("!=", E.Attr(last, "p"), E.Attr("n", "p"))],
        [E.BoolOp("or", (E.Cmp("<=", E.Attr("n", "p"), E.Attr(first, "p")), E.IsNull(E.Attr("n", "p")))),
         E.Cmp("!=", E.Attr("n", "q"), E.Lit(1.5))],
        [E.Cmp("=", E.Arith("-", E.Attr("n", "p"), E.Attr(first, "p")), E.Attr(last, "p"))],
    ]


@st.composite
def cases(draw):
    ts, wt, W, buf, leaf, bcols, acols, in_conj = draw(negation_cases())
    n = len(ts)
    p = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    p_valid = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if draw(st.booleans()) else [True] * n
    q = draw(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, -1.0, 1.01]), min_size=n, max_size=n))
    rec_vars = RECORD[:buf[0].shape[1]]
    lists = condition_lists(rec_vars)
    conds = draw(st.sampled_from([lists[len(rec_vars) % 4], lists[(len(rec_vars) + 1) % 4]]))
    return ts, wt, W, buf, leaf, bcols, acols, in_conj, _table(n, ts, p, p_valid, q), rec_vars, conds


@settings(max_examples=400, deadline=None)
@given(cases(), st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]))
def test_killed_where_is_some_candidate_passing_every_condition(case, order):
    ts, wt, W, buf, leaf, bcols, acols, in_conj, table, rec_vars, conds = case
    lo, hi = negation_ranges(buf, leaf, ts, wt, W, order, bcols, acols, in_conj)
    pset = PredicateSet(conds, column_specs(table, ["p", "q"]))
    fn = negation_where(pset, range(len(conds)), "n", rec_vars)
    got = negation_filtered.killed_where(fn, buf[0], lo, hi, leaf[0], pset.bind(table))
    sets = naive.negation_candidates(buf, leaf, ts, wt, W, order, bcols, acols, in_conj)
    assert got.tolist() == naive.killed_where(buf[0], sets, conds, "n", rec_vars, table)


def test_killed_where_hand_enumerated_and_bad_input():
    ts = np.arange(5, dtype=np.int64)
    table = _table(5, ts, [3, 1, 2, 0, 5], [True] * 5, [0.0] * 5)
    conds = [E.Cmp("<", E.Attr("n", "p"), E.Attr("r0", "p"))]
    pset = PredicateSet(conds, column_specs(table, ["p", "q"]))
    fn = negation_where(pset, [0], "n", ("r0", "r1"))
    pos = np.array([[0, 4], [2, 4], [4, -1]], np.int64)
    cand = np.array([1, 2, 3], np.int64)
    call = lambda lo, hi, pos=pos, cand=cand: negation_filtered.killed_where(
        fn, pos, np.array(lo, np.int64), np.array(hi, np.int64), cand, pset.bind(table))
    # record 0 (p 3): event 1 (p 1) kills it; record 1 (p 2): its own event 2 is left out, event 3 (p 0)
    # kills it; record 2 (p 5): its range is empty
    assert call([0, 1, 2], [3, 3, 2]).tolist() == [True, True, False]
    # record 1 with only its own event in range lives
    assert call([0, 1, 2], [1, 2, 2]).tolist() == [True, False, False]
    with pytest.raises(KernelInputError, match="outside the 3 candidates"):
        call([0, 1, 2], [3, 4, 2])
    with pytest.raises(KernelInputError, match="outside the event table"):
        call([0, 0, 0], [1, 1, 1], cand=np.array([9, 2, 3], np.int64))
    with pytest.raises(KernelInputError, match="pos has 3 elements, expected 2"):
        call([0, 1], [3, 3])


def test_the_generated_loop_binds_the_candidate_and_the_record_columns():
    table = _table(2, np.arange(2, dtype=np.int64), [0, 1], [True] * 2, [0.0] * 2)
    conds = [E.Cmp("<", E.Attr("n", "p"), E.Attr("b", "p"))]
    pset = PredicateSet(conds, column_specs(table, ["p"]))
    src = negation_where_source(pset, [0], "n", ("a", "b"))
    assert "= pos[r, 1]\n" in src and "= e\n" in src and "= pos[r, 0]\n" not in src
    # the record's own events, every column, compared in place (no row view per record)
    assert "if e == pos[r, 0] or e == pos[r, 1]:" in src and "pos[r]" not in src
