"""The compiled join-order searches (:mod:`jitcep.kernels.join_search`) against their twins, the Python loops
of :mod:`jitcep.plan.planner.algorithms` (``Costing.compiled = False``): the same tree on random problems
for DP-B, DP-LD, ZStream's program and GREEDY under Cost_tree, Cost_ord and ZStream's Table 2; and the
optimum DP-B finds against every bushy tree priced whole by the model (brute force, no node term)."""

from __future__ import annotations

import math
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep.errors import KernelInputError
from jitcep.kernels import join_search
from jitcep.plan.planner.algorithms import auto, dp_bushy, dp_left_deep, greedy, zstream, zstream_ord
from jitcep.plan.planner.algorithms._common import Clock, Costing, OverBudget, greedy_order
from jitcep.plan.planner.cardinality import ORDER_FACTOR, EstimatedProblem
from jitcep.plan.planner.cost import intermediate, order, zstream as zstream_model
from jitcep.plan.planner.problem import ClosureUnit, left_deep
from test_planner_algorithms import all_trees


def sp_order(rng, units) -> set:
    """A random series-parallel order over ``units`` (a pattern's SEQs and ANDs): the pairs (i, j), i first."""
    if len(units) <= 1:
        return set()
    k = rng.randint(1, len(units) - 1)
    left, right = units[:k], units[k:]
    out = sp_order(rng, left) | sp_order(rng, right)
    if rng.random() < 0.5:  # a SEQ of the two parts, else an AND
        out |= {(i, j) for i in left for j in right}
    return out


@st.composite
def estimated_problems(draw, min_n=1, max_n=8, huge=True):
    """A join problem as ``cardinality.join_problem`` makes them: per pair a predicate selectivity, the
    pattern's order (a series-parallel order: ``Pt`` = 1/2 per ordered pair in ``sel``, the set function in
    PM) and a conjunct count; in half of them the shares a semi-join reduction keeps of each run of units
    (``extends``, a set function multiplying PM)."""
    n = draw(st.integers(min_n, max_n))
    rng = draw(st.randoms(use_true_random=False))
    units = list(range(n))
    rng.shuffle(units)
    first = sp_order(rng, units)
    # huge cards make PMs overflow to inf (and inf * 0 NaN), tiny ones underflow to 0 and subnormals, as
    # user statistics may; equal cards tie
    cards = (st.floats(0.0, 1e4), st.just(0.0), st.sampled_from((1.0, 2.0))) \
        + ((st.floats(1e100, 1e200), st.floats(1e-200, 1e-150)) if huge else ())
    card = draw(st.lists(st.one_of(*cards), min_size=n, max_size=n))
    sel = [[1.0] * n for _ in range(n)]
    order_ = [[1.0] * n for _ in range(n)]
    count = [[0] * n for _ in range(n)]
    before = [[False] * n for _ in range(n)]
    for i, j in combinations(range(n), 2):
        pred = draw(st.one_of(st.just(1.0), st.just(0.0), st.floats(0.0, 1.0)))
        rel = "before" if (i, j) in first else "after" if (j, i) in first else "none"
        o = ORDER_FACTOR if rel != "none" else 1.0
        sel[i][j] = sel[j][i] = pred * o
        order_[i][j] = order_[j][i] = o
        count[i][j] = count[j][i] = draw(st.integers(0, 3))
        before[i][j], before[j][i] = rel == "before", rel == "after"
    extends = ()
    if draw(st.booleans()):  # a semi-join reduction's kept share of each run a..b (cardinality.extended)
        table = [[1.0] * n for _ in range(n)]
        for a, b in combinations(range(n + 1), 2):
            if b - a < n:
                table[a][b - 1] = draw(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)))
        extends = tuple(map(tuple, table))
    return EstimatedProblem(tuple(range(n)), tuple(card), tuple(map(tuple, sel)), order=tuple(map(tuple, order_)),
                            predicates=tuple(map(tuple, count)), before=tuple(map(tuple, before)), extends=extends)


def costings(p, model):
    python = Costing(p, model)
    python.compiled = False
    kernel = Costing(p, model)
    assert python.arrays is None and kernel.arrays is not None
    return python, kernel


BIG = 10 ** 9


@settings(max_examples=150, deadline=None)
@given(estimated_problems(), st.sampled_from(["tree", "zstream"]))
def test_compiled_searches_return_the_python_searches_trees(p, name):
    model = {"tree": intermediate, "zstream": zstream_model}[name]
    python, kernel = costings(p, model)
    assert dp_bushy.search(kernel, Clock(BIG)) == dp_bushy.search(python, Clock(BIG))
    assert dp_left_deep.search(kernel, Clock(BIG)) == dp_left_deep.search(python, Clock(BIG))
    assert greedy_order(kernel) == greedy_order(python)
    for units in (list(range(p.n)), list(reversed(range(p.n))), greedy_order(python)):
        got, want = zstream.search(kernel, units), zstream.search(python, units)
        assert got.tree == want.tree
        assert got.cost == want.cost or math.isnan(got.cost) and math.isnan(want.cost)


@settings(max_examples=100, deadline=None)
@given(estimated_problems())
def test_compiled_cost_ord_searches_return_the_python_searches_orders(p):
    python, kernel = costings(p, order)
    assert dp_left_deep.search(kernel, Clock(BIG)) == dp_left_deep.search(python, Clock(BIG))
    assert greedy_order(kernel) == greedy_order(python)


def test_bushy_searches_under_cost_ord_are_refused_as_in_python():
    # Cost_ord prices order-based plans only: its node term refuses a join whose right input is no unit
    p = three(10.0)
    with pytest.raises(ValueError):
        dp_bushy.search(Costing(p, order), Clock(BIG))
    with pytest.raises(ValueError):
        zstream.search(Costing(p, order), [0, 1, 2])


@settings(max_examples=60, deadline=None)
@given(estimated_problems(min_n=3, max_n=14), st.sampled_from([intermediate, zstream_model]),
       st.sampled_from([2_000, 20_000, 200_000]))
def test_auto_and_zstream_ord_plan_alike_compiled_or_not(p, model, steps):
    # the budgets decide which search runs; the compiled loops change none of those decisions
    for algorithm in (auto, zstream_ord, greedy):
        Costing.compiled = False
        try:
            want = algorithm.plan(p, model, steps=steps)
        finally:
            Costing.compiled = True
        assert algorithm.plan(p, model, steps=steps) == want


@settings(max_examples=40, deadline=None)
@given(estimated_problems(min_n=2, max_n=5, huge=False), st.sampled_from([intermediate, zstream_model]))
def test_compiled_dp_bushy_finds_the_cheapest_tree_priced_whole(p, model):
    # brute force: every bushy tree priced by the model itself, which walks the tree (no node term)
    cheapest = min(model(p, t) for t in all_trees(tuple(range(p.n))))
    split, cost, nan = join_search.dp_bushy(Costing(p, model).arrays)
    assert not nan
    assert cost == pytest.approx(cheapest, rel=1e-9, abs=1e-300)


def three(card_c):
    # SEQ(a, b, c), cards 10, 1, card_c, a.x < c.x (sel 0.1) and Pt = 1/2 per ordered pair in sel (the order's
    # share of a set in PM: 1/2 for two of them, 1/3! for all three)
    return EstimatedProblem((0, 1, 2), (10.0, 1.0, card_c),
                            ((1.0, 0.5, 0.05), (0.5, 1.0, 0.5), (0.05, 0.5, 1.0)),
                            order=((1.0, 0.5, 0.5), (0.5, 1.0, 0.5), (0.5, 0.5, 1.0)),
                            predicates=((0, 0, 1), (0, 0, 0), (1, 0, 0)),
                            before=((False, True, True), (False, False, True), (False, False, False)))


def test_hand_checked_zstream_program_on_three_units():
    # Cost_tree, card_c = 100: ((a b) c) holds PM(ab) = 10*1/2 = 5 and PM(abc) = 10*1*100 * 0.1 / 3! = 16.67;
    # (a (b c)) holds PM(bc) = 1*100/2 = 50 instead of 5
    got = zstream.search(Costing(three(100.0), intermediate), [0, 1, 2])
    assert got.tree == ((0, 1), 2)
    assert got.cost == pytest.approx(10 + 1 + 100 + 5 + 100 / 6)
    # card_c = 10: PM(ab) = PM(bc) = 5, a tie, so the leftmost root (the left run one unit): (a (b c))
    got = zstream.search(Costing(three(10.0), intermediate), [0, 1, 2])
    assert got.tree == (0, (1, 2))
    assert got.cost == pytest.approx(10 + 1 + 10 + 5 + 10 / 6)


def test_a_compiled_search_that_does_not_fit_spends_nothing():
    p = EstimatedProblem((0, 1, 2, 3), (1.0,) * 4, ((1.0,) * 4,) * 4, order=((1.0,) * 4,) * 4,
                         predicates=((0,) * 4,) * 4, before=((False,) * 4,) * 4)
    costing = Costing(p, intermediate)
    clock = Clock(10)  # DP-B prices 3^4 - 2^5 + 1 = 50 joins
    with pytest.raises(OverBudget):
        dp_bushy.search(costing, clock)
    assert clock.spent == 0
    clock = Clock(50)
    dp_bushy.search(costing, clock)
    assert clock.spent == 50


def test_the_wrappers_refuse_what_the_kernels_would_misread():
    a = Costing(EstimatedProblem((0, 1), (1.0, 2.0), ((1.0, 1.0), (1.0, 1.0)), order=((1.0, 1.0), (1.0, 1.0)),
                                 predicates=((0, 0), (0, 0)), before=((False, False), (False, False))),
                intermediate).arrays
    with pytest.raises(KernelInputError):
        join_search.zstream(a, [0, 0])
    with pytest.raises(KernelInputError):
        join_search.zstream(a, [0, 1, 2])
    with pytest.raises(KernelInputError):
        join_search.greedy(a, 2)
    with pytest.raises(KernelInputError):
        join_search.SearchArrays([1.0], [[1.0, 1.0]], (), [1.0, 1.0], [[0]], [0], [0.0], 0, 0.25, 1.0)
    with pytest.raises(KernelInputError):
        join_search.SearchArrays([1.0], [[1.0]], (), [1.0, 1.0], [[0]], [0], [0.0], 7, 0.25, 1.0)
    with pytest.raises(KernelInputError):  # a block holding a unit the problem has not
        join_search.SearchArrays([1.0], [[1.0]], ((1, 2),), [1.0, 1.0], [[0]], [0], [0.0], 0, 0.25, 1.0)
    with pytest.raises(KernelInputError):  # k! for k = 0..n
        join_search.SearchArrays([1.0], [[1.0]], (), [1.0], [[0]], [0], [0.0], 0, 0.25, 1.0)


def random_problem(n, seed):
    # as estimated_problems draws them, from a seeded generator: at 62 units hypothesis's buffer is too small
    rng = random.Random(seed)
    card = [rng.choice((0.0, 1.0, 1e-200, 1e200, rng.uniform(0.0, 1e4))) for _ in range(n)]
    units = list(range(n))
    rng.shuffle(units)
    first = sp_order(rng, units)
    sel = [[1.0] * n for _ in range(n)]
    order_ = [[1.0] * n for _ in range(n)]
    count = [[0] * n for _ in range(n)]
    before = [[False] * n for _ in range(n)]
    for i, j in combinations(range(n), 2):
        rel = "before" if (i, j) in first else "after" if (j, i) in first else "none"
        o = ORDER_FACTOR if rel != "none" else 1.0
        sel[i][j] = sel[j][i] = rng.choice((0.0, 1.0, rng.random())) * o
        order_[i][j] = order_[j][i] = o
        count[i][j] = count[j][i] = rng.randint(0, 3)
        before[i][j], before[j][i] = rel == "before", rel == "after"
    extends = ()
    if seed % 2:  # seed 1: a semi-join reduction's kept share of each run a..b (cardinality.extended)
        table = [[1.0] * n for _ in range(n)]
        for a, b in combinations(range(n + 1), 2):
            if b - a < n:
                table[a][b - 1] = rng.choice((0.0, 1.0, rng.random()))
        extends = tuple(map(tuple, table))
    return EstimatedProblem(tuple(range(n)), tuple(card), tuple(map(tuple, sel)), order=tuple(map(tuple, order_)),
                            predicates=tuple(map(tuple, count)), before=tuple(map(tuple, before)), extends=extends)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("model", [intermediate, zstream_model, order])
def test_greedy_and_zstream_compiled_up_to_max_units(seed, model):
    # bitmasks in int64: the last unit a kernel takes is bit 61; one more and the searches run in Python
    p = random_problem(join_search.MAX_UNITS, seed)
    python, kernel = costings(p, model)
    assert greedy_order(kernel) == greedy_order(python)
    if model is not order:
        for units in (list(range(p.n)), greedy_order(python)):
            assert zstream.search(kernel, units).tree == zstream.search(python, units).tree
    # past their table limit DP-B and DP-LD decline (their Python loops would not fit a budget either)
    assert join_search.dp_bushy(kernel.arrays) is None and join_search.dp_left_deep(kernel.arrays) is None
    assert Costing(random_problem(join_search.MAX_UNITS + 1, seed), model).arrays is None


def test_the_table_searches_decline_past_max_table_units():
    small = Costing(random_problem(join_search.MAX_TABLE_UNITS - 8, 0), intermediate).arrays
    assert join_search.dp_left_deep(small) is not None and join_search.dp_bushy(small) is not None
    large = Costing(random_problem(join_search.MAX_TABLE_UNITS + 1, 0), intermediate).arrays
    assert join_search.dp_left_deep(large) is None and join_search.dp_bushy(large) is None


@pytest.mark.parametrize("model", [intermediate, zstream_model])
def test_closure_units_are_searched_by_the_python_loops(model):
    # a closure unit (T') is admitted only alone or with all of its need; the kernels price every join, so
    # they must not see one: unit 3, need {0, 1}, so few lists that joining it to unit 2 first looks cheapest
    n = 4
    sel = tuple(tuple(1.0 if i == j or 3 in (i, j) else 0.5 for j in range(n)) for i in range(n))
    p = EstimatedProblem((0, 1, 2, 3), (100.0, 100.0, 1.0, 1e-3), sel, closures=(ClosureUnit(3, 0b011, 1),),
                         order=sel, predicates=((0,) * n,) * n,
                         before=tuple(tuple(i != j and (i < j or 3 in (i, j)) for j in range(n)) for i in range(n)))
    costing = Costing(p, model)
    assert costing.arrays is None
    for tree in (dp_bushy.search(costing, Clock(BIG)), dp_left_deep.search(costing, Clock(BIG)),
                 left_deep(greedy_order(costing)), zstream.search(costing, p.pattern_order()).tree):
        assert p.admits_tree(tree), tree


def test_the_reductions_shares_are_read_per_run_or_per_leaf():
    """A run of two or more units short of the whole takes its own kept share, any other set none
    (hand-computed: cards 2, 3, 5, 7 in a chain, no predicates), in the Python costing, the problem's PM and
    the kernels' tables alike."""
    n = 4
    half = ORDER_FACTOR
    sel = tuple(tuple(1.0 if i == j else half for j in range(n)) for i in range(n))
    before = tuple(tuple(i < j for j in range(n)) for i in range(n))
    table = ((0.9, 0.5, 0.3, 1.0), (1.0, 0.8, 0.4, 0.2), (1.0, 1.0, 0.7, 0.1), (1.0, 1.0, 1.0, 0.6))
    p = EstimatedProblem(tuple(range(n)), (2.0, 3.0, 5.0, 7.0), sel, order=sel, predicates=((0,) * n,) * n,
                         before=before, extends=table)
    python, kernel = costings(p, intermediate)
    cases = {0b0011: 2 * 3 / 2 * 0.5, 0b0110: 3 * 5 / 2 * 0.4, 0b1111: 2 * 3 * 5 * 7 / 24 * 1.0,
             0b0101: 2 * 5 / 2, 0b1011: 2 * 3 * 7 / 6, 0b0100: 5.0, 0b0111: 2 * 3 * 5 / 6 * 0.3}
    for mask, want in cases.items():
        units = [i for i in range(n) if mask >> i & 1]
        assert python.pm(mask) == pytest.approx(want)
        assert p.pm(units) == pytest.approx(want)
    # the kernels read the same shares: Cost_tree of the left-deep order is the sum of its prefixes' PMs
    got = join_search.dp_left_deep(kernel.arrays)
    assert got[1] == pytest.approx(intermediate(p, left_deep(got[0].tolist())))
