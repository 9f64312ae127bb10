"""The plan-generation algorithms (Kolchinsky & Schuster 2018, 6.1; ZStream 5.2.3): hand-checked plans from
the papers' examples, the exact ones against brute force written here, bounds, determinism, budgets.

Costs are Kolchinsky's Cost_tree (``cost.intermediate``): the partial matches of every node, leaves
included.  Expected values are computed by hand in the comments, never by the code under test.
"""

from __future__ import annotations

import random
import time
from itertools import combinations, permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep.plan.planner.algorithms import ALGORITHMS, LEFT_DEEP
from jitcep.plan.planner.algorithms._common import Costing
from jitcep.plan.planner.cost import intermediate
from jitcep.plan.planner.problem import JoinProblem, leaves, left_deep


def problem(card, pairs=(), default=1.0):
    """A join problem over units 0..n-1 with selectivity ``default`` between every pair but ``pairs``."""
    n = len(card)
    sel = [[default] * n for _ in range(n)]
    for (i, j), s in dict(pairs).items():
        sel[i][j] = sel[j][i] = s
    return JoinProblem(tuple(range(n)), tuple(card), tuple(map(tuple, sel)))


def random_problem(n, seed):
    r = random.Random(seed)
    card = [10 ** r.uniform(-1, 3) for _ in range(n)]
    pairs = {(i, j): r.choice([1.0, 10 ** r.uniform(-3, 0)]) for i, j in combinations(range(n), 2)}
    return problem(card, pairs)


@st.composite
def problems(draw, max_n=5):
    n = draw(st.integers(1, max_n))
    card = draw(st.lists(st.floats(0.1, 1000.0), min_size=n, max_size=n))
    sel = st.one_of(st.just(1.0), st.floats(0.001, 1.0))
    pairs = {pair: draw(sel) for pair in combinations(range(n), 2)}
    return problem(card, pairs)


# ---- brute force, written independently of the algorithms ----

def all_trees(units):
    """Every bushy tree whose leaves are ``units`` (a tuple), both child orders included."""
    if len(units) == 1:
        yield units[0]
        return
    for k in range(1, len(units)):
        for left in combinations(units, k):
            right = tuple(u for u in units if u not in left)
            for lt in all_trees(left):
                for rt in all_trees(right):
                    yield (lt, rt)


def all_left_deep(n):
    for order in permutations(range(n)):
        tree = order[0]
        for u in order[1:]:
            tree = (tree, u)
        yield tree


def all_run_trees(lo, hi):
    """Every tree over units lo..hi-1 in index order whose every node covers a run of them."""
    if hi - lo == 1:
        yield lo
        return
    for r in range(lo + 1, hi):
        for lt in all_run_trees(lo, r):
            for rt in all_run_trees(r, hi):
                yield (lt, rt)


def cheapest(p, trees, cost=intermediate):
    return min(cost(p, t) for t in trees)


def driving(p, tree):
    """An asymmetric model for the tests: Cost_tree plus each join's right input once more (as if the
    right side were scanned per left tuple), so (L, R) and (R, L) cost differently."""
    if isinstance(tree, int):
        return p.pm((tree,))
    return driving(p, tree[0]) + driving(p, tree[1]) + p.pm(leaves(tree)) + p.pm(leaves(tree[1]))


driving.node_cost = lambda p, pm, left, right: pm(left | right) + pm(right)


def black_box(model):
    """``model`` without its node term: the algorithms must call it on whole trees."""
    return lambda p, tree: model(p, tree)


def is_left_deep(tree):
    return isinstance(tree, int) or (is_left_deep(tree[0]) and isinstance(tree[1], int))


def subtrees(tree):
    if isinstance(tree, int):
        return [tree]
    return [tree] + subtrees(tree[0]) + subtrees(tree[1])


# ---- the registry ----

def test_registry_names_the_ten_algorithms():
    assert set(ALGORITHMS) == {"trivial", "efreq", "greedy", "ii_random", "ii_greedy", "dp_left_deep",
                               "zstream", "zstream_ord", "dp_bushy", "auto"}
    assert set(LEFT_DEEP) < set(ALGORITHMS)


# ---- hand-checked plans ----

# Kolchinsky & Schuster 2.3, Figure 2: SEQ(A, B, C) WHERE a.x = c.x, equal rates, the A-C condition very
# selective.  card 10 each; the SEQ order is a predicate of selectivity 1/2 on every pair (section 4), and
# a.x = c.x adds 1/100: sel AB = BC = 0.5, AC = 0.005.
#   PM: AB = BC = 100 * 0.5 = 50, AC = 100 * 0.005 = 0.5, ABC = 1000 * 0.5 * 0.5 * 0.005 = 1.25
#   leaves 30;  ((A,B),C) = (A,(B,C)) = 30 + 50 + 1.25 = 81.25;  ((A,C),B) = 30 + 0.5 + 1.25 = 31.75
FIGURE_2 = problem([10, 10, 10], {(0, 1): 0.5, (1, 2): 0.5, (0, 2): 0.005})


@pytest.mark.parametrize("name", ["greedy", "ii_greedy", "dp_left_deep", "zstream_ord", "dp_bushy", "auto"])
def test_figure_2_reordering_finds_a_and_c_first(name):
    tree = ALGORITHMS[name](FIGURE_2, intermediate)
    assert intermediate(FIGURE_2, tree) == pytest.approx(31.75)
    assert (0, 2) in subtrees(tree) or (2, 0) in subtrees(tree)


@pytest.mark.parametrize("name", ["trivial", "zstream"])
def test_figure_2_pattern_order_cannot(name):
    # ZStream keeps the leaves in order: its two trees (Figure 2 (a), (b)) both cost 81.25
    assert intermediate(FIGURE_2, ALGORITHMS[name](FIGURE_2, intermediate)) == pytest.approx(81.25)


# Kolchinsky & Schuster 1, "four cameras": SEQ(A, B, C, D), camera D sends one frame per ten of the others;
# card A = B = C = 10, D = 1, no predicates.  PM of a set is the product of its cards; leaves sum to 31.
#   order D,A,B,C: 31 + 10 + 100 + 1000 = 1141 (the best: the 3 internal nodes are a pair, a triple and the
#   root 1000; the cheapest pair is 10 and the cheapest triple 100, both with D, and D,A,B,C has both).
#   pattern order A,B,C,D: 31 + 100 + 1000 + 1000 = 2131.
CAMERAS = problem([10, 10, 10, 1])


def test_cameras_trivial_waits_for_nothing():
    tree = ALGORITHMS["trivial"](CAMERAS, intermediate)
    assert tree == (((0, 1), 2), 3)
    assert intermediate(CAMERAS, tree) == 2131


@pytest.mark.parametrize("name", ["efreq", "greedy", "dp_left_deep", "dp_bushy", "auto"])
def test_cameras_rarest_first(name):
    tree = ALGORITHMS[name](CAMERAS, intermediate)
    assert intermediate(CAMERAS, tree) == 1141


def test_cameras_efreq_order():
    assert ALGORITHMS["efreq"](CAMERAS, intermediate) == (((3, 0), 1), 2)


# ZStream 6.2, Query 6: IBM; Sun; Oracle; Google (units 0..3); the SEQ order is 1/2 on every pair.
# ZStream's DP chooses among the five trees that keep the order:
#   left-deep (((I,S),O),G), inner ((I,(S,O)),G), bushy ((I,S),(O,G)), (I,((S,O),G)), right-deep (I,(S,(O,G))).
def test_zstream_query_6_rates_1_100_100_100_left_deep():
    # card I = 1, S = O = G = 100.  PM: IS = 50, SO = OG = 5000, ISO = 10^4/8 = 1250, SOG = 10^6/8 = 125000,
    # ISOG = 10^6/64 = 15625.  Internal sums: left-deep 50 + 1250 + 15625 = 16925, inner 5000 + 1250 +
    # 15625 = 21875, bushy 50 + 5000 + 15625 = 20675, the other two 145625.  Leaves 301.
    p = problem([1, 100, 100, 100], default=0.5)
    tree = ALGORITHMS["zstream"](p, intermediate)
    assert tree == (((0, 1), 2), 3)
    assert intermediate(p, tree) == pytest.approx(16925 + 301)


def test_zstream_query_6_selective_sun_oracle_inner():
    # card 100 each; Sun-Oracle predicate 1/50: sel SO = 0.01.  PM: IS = OG = 5000, SO = 100,
    # ISO = 10^6 * .5 * .5 * .01 = 2500, SOG = 2500, root = 10^8 * .5^5 * .01 = 31250.
    # Internal sums: left-deep 38750, inner 100 + 2500 + 31250 = 33850, bushy 41250,
    # (I,((S,O),G)) 33850, right-deep 38750: the two trees joining Sun and Oracle first tie.  Leaves 400.
    p = problem([100] * 4, {(1, 2): 0.01}, default=0.5)
    tree = ALGORITHMS["zstream"](p, intermediate)
    assert (1, 2) in subtrees(tree)
    assert intermediate(p, tree) == pytest.approx(33850 + 400)


def test_zstream_query_6_selective_oracle_google_right_deep():
    # Oracle-Google predicate 1/50: sel OG = 0.01.  PM: IS = SO = 5000, OG = 100, ISO = 125000,
    # SOG = 2500, root 31250.  Internal sums: right-deep 100 + 2500 + 31250 = 33850 (the only minimum),
    # bushy 36350, (I,((S,O),G)) 38750, left-deep and inner 161250.
    p = problem([100] * 4, {(2, 3): 0.01}, default=0.5)
    tree = ALGORITHMS["zstream"](p, intermediate)
    assert tree == (0, (1, (2, 3)))
    assert intermediate(p, tree) == pytest.approx(33850 + 400)


# ---- the exact algorithms against brute force ----

@settings(max_examples=60, deadline=None)
@given(problems())
def test_dp_left_deep_is_the_best_order(p):
    tree = ALGORITHMS["dp_left_deep"](p, intermediate)
    assert is_left_deep(tree)
    assert intermediate(p, tree) == pytest.approx(cheapest(p, all_left_deep(p.n)), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(problems())
def test_dp_bushy_is_the_best_tree(p):
    tree = ALGORITHMS["dp_bushy"](p, intermediate)
    assert intermediate(p, tree) == pytest.approx(cheapest(p, all_trees(tuple(range(p.n)))), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(problems(max_n=7))
def test_zstream_is_the_best_tree_over_runs(p):
    tree = ALGORITHMS["zstream"](p, intermediate)
    assert tree in set(all_run_trees(0, p.n))
    assert intermediate(p, tree) == pytest.approx(cheapest(p, all_run_trees(0, p.n)), rel=1e-9)


@pytest.mark.parametrize("model, reference", [(driving, driving), (black_box(driving), driving),
                                              (black_box(intermediate), intermediate)],
                         ids=["node_cost", "black_box", "black_box_intermediate"])
@pytest.mark.parametrize("seed", range(8))
def test_exact_algorithms_under_other_models(model, reference, seed):
    # an asymmetric model priced through its node term, and whole-tree calls of models without one
    p = random_problem(5, seed)
    assert reference(p, ALGORITHMS["dp_bushy"](p, model)) == pytest.approx(
        cheapest(p, all_trees(tuple(range(5))), reference), rel=1e-9)
    assert reference(p, ALGORITHMS["dp_left_deep"](p, model)) == pytest.approx(
        cheapest(p, all_left_deep(5), reference), rel=1e-9)
    assert reference(p, ALGORITHMS["zstream"](p, model)) == pytest.approx(
        cheapest(p, all_run_trees(0, 5), reference), rel=1e-9)


def test_cost_tree_node_term_adds_up_to_the_model():
    # the algorithms price Cost_tree joins by its node term; on every tree the terms must add up to it
    for seed in range(5):
        p = random_problem(5, seed)
        costing = Costing(p, intermediate)
        for tree in all_trees(tuple(range(5))):
            assert priced(costing, tree).cost == pytest.approx(intermediate(p, tree), rel=1e-12)


def priced(costing, tree):
    if isinstance(tree, int):
        return costing.leaves[tree]
    return costing.join(priced(costing, tree[0]), priced(costing, tree[1]))


# ---- bounds every algorithm keeps ----

@settings(max_examples=40, deadline=None)
@given(problems(max_n=6))
def test_no_algorithm_beats_the_exact_ones(p):
    bushy = intermediate(p, ALGORITHMS["dp_bushy"](p, intermediate))
    ordered = intermediate(p, ALGORITHMS["dp_left_deep"](p, intermediate))
    for name, plan in ALGORITHMS.items():
        tree = plan(p, intermediate)
        assert sorted(leaves(tree)) == list(range(p.n)), name
        c = intermediate(p, tree)
        assert c >= bushy * (1 - 1e-9), name
        if name in LEFT_DEEP:
            assert is_left_deep(tree), name
            assert c >= ordered * (1 - 1e-9), name


@settings(max_examples=40, deadline=None)
@given(problems(max_n=6))
def test_the_informed_algorithms_are_no_worse_than_their_starts(p):
    def cost(name):
        return intermediate(p, ALGORITHMS[name](p, intermediate))

    assert cost("ii_greedy") <= cost("greedy") * (1 + 1e-9)
    assert cost("zstream_ord") <= cost("dp_left_deep") * (1 + 1e-9)  # its order's left-deep tree is a candidate
    assert cost("auto") <= cost("greedy") * (1 + 1e-9)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("n", [1, 2, 9, 14])
def test_every_unit_exactly_once(name, n):
    tree = ALGORITHMS[name](random_problem(n, n), intermediate, budget=0.05)
    assert sorted(leaves(tree)) == list(range(n))


# ---- determinism ----

@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_same_seed_same_plan(name):
    p = random_problem(8, 3)
    assert ALGORITHMS[name](p, intermediate, seed=5) == ALGORITHMS[name](p, intermediate, seed=5)


def test_ties_go_to_the_lower_index():
    # no predicates, equal cards: every order costs the same, so every order-based algorithm keeps 0, 1, 2, 3
    p = problem([10] * 4)
    for name in ("efreq", "greedy", "ii_greedy", "dp_left_deep"):
        assert ALGORITHMS[name](p, intermediate) == left_deep(range(4)), name


def test_ii_random_depends_on_its_seed():
    # from different random starts the local search settles in different local minima on some problem
    per_problem = [{ALGORITHMS["ii_random"](random_problem(9, s), intermediate, seed=seed) for seed in range(10)}
                   for s in range(5)]
    assert any(len(plans) > 1 for plans in per_problem)


# ---- budgets ----

def test_dp_bushy_past_a_tiny_budget_is_greedy():
    # 3^20 joins cannot be priced in a millisecond: DP-B does not start and returns GREEDY's plan
    p = random_problem(20, 1)
    started = time.perf_counter()
    tree = ALGORITHMS["dp_bushy"](p, intermediate, budget=0.001)
    assert time.perf_counter() - started < 5  # a hang guard, not a timing test
    assert tree == ALGORITHMS["greedy"](p, intermediate)


def test_dp_overrunning_its_deadline_falls_back_to_greedy():
    # the estimate (by n, for the intermediate model) lets DP-B start on 7 units, but this model takes
    # 1 ms per call, so 2,000 priced joins overrun 20 ms: the plan is GREEDY's
    def slow(p, tree):
        time.sleep(0.001)
        return intermediate(p, tree)

    p = random_problem(7, 2)
    greedy = ALGORITHMS["greedy"](p, intermediate)
    assert ALGORITHMS["dp_bushy"](p, slow, budget=0.02) == greedy
    assert ALGORITHMS["dp_left_deep"](p, slow, budget=0.005) == greedy
    # ZSTREAM-ORD: DP-LD overruns, so the order is greedy's, and no time is left for ZStream's program
    assert ALGORITHMS["zstream_ord"](p, slow, budget=0.005) == greedy


def test_large_problems_plan_within_their_budgets():
    p = random_problem(20, 4)
    greedy = intermediate(p, ALGORITHMS["greedy"](p, intermediate))
    for name in ("auto", "zstream_ord", "dp_left_deep"):
        tree = ALGORITHMS[name](p, intermediate, budget=0.01)
        assert sorted(leaves(tree)) == list(range(20))
        assert intermediate(p, tree) <= greedy * (1 + 1e-9), name


ZSTREAM_PATTERNS = [
    "PATTERN SEQ(A a, B b, C c, D d, E e) WHERE a.x < c.x AND b.x = e.x AND c.x > d.x + e.x WITHIN 10",
    "PATTERN SEQ(A a, AND(B b, C c), D d, E e) WHERE a.x < c.x AND d.x > b.x WITHIN 10",
    "PATTERN SEQ(A a, OR(B b, SEQ(C c, D d)), E e) WHERE a.x < e.x WITHIN 10",  # an OR unit: no masks
]


@pytest.mark.parametrize("text", ZSTREAM_PATTERNS)
def test_zstream_node_term_adds_up_to_the_model(text):
    # ZStream's Table 2 costs priced join by join (its node term, on the problem's bitmasks or by walking
    # the units) add up to the whole-tree model, SEQ and AND joins alike
    from jitcep.pattern.parser import parse
    from jitcep.plan.logical import logical_plan
    from jitcep.plan.planner.cardinality import join_problem
    from jitcep.plan.planner.cost import zstream
    from jitcep.plan.planner.statistics import from_user

    logical = logical_plan(parse(text))
    rng = random.Random(text)
    rates = {v: rng.uniform(0.01, 3.0) for v in from_user({}, logical).rates}
    p = join_problem(logical, from_user({"rates": rates}, logical), 10.0)
    assert (p.masks is None) == ("OR" in text)
    costing = Costing(p, zstream)
    for tree in all_trees(tuple(range(p.n))):
        assert priced(costing, tree).cost == pytest.approx(zstream(p, tree), rel=1e-9)


def test_auto_budget_scales_with_the_events():
    from jitcep.plan.planner.algorithms import auto

    assert auto.budget_for(10) == auto.MIN_BUDGET == 0.01  # hand-set: 10 ms at least
    assert auto.budget_for(2_000_000) == pytest.approx(0.02)  # 10 ns per event
    assert auto.budget_for(10**9) == auto.BUDGET == 0.05
