"""The plan-generation algorithms (Kolchinsky & Schuster 2018, 6.1; ZStream 5.2.3): hand-checked plans from
the papers' examples, the exact ones against brute force written here, bounds, determinism, budgets.

Costs are Kolchinsky's Cost_tree (``cost.intermediate``): the partial matches of every node, leaves
included.  Expected values are computed by hand in the comments, never by the code under test.
"""

from __future__ import annotations

import random
import time
from math import comb
from itertools import combinations, permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep.plan.planner.algorithms import ALGORITHMS, LEFT_DEEP
from jitcep import config
from jitcep.plan.planner.algorithms import auto, dp_bushy, dp_left_deep, zstream, zstream_ord
from jitcep.plan.planner.algorithms._common import Clock, Costing, OverBudget, black_box_steps, noting
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
    tree = ALGORITHMS[name](random_problem(n, n), intermediate, steps=50_000)
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


# ---- budgets: counted steps, never the clock ----

def counting(calls):
    """Cost_tree with its node term counting the joins it prices in ``calls[0]`` (one step each)."""
    def node(problem, pm, left, right):
        calls[0] += 1
        return pm(left | right)

    def model(problem, tree):
        return intermediate(problem, tree)
    model.node_cost = node
    return model


# the joins each exact search prices, counted by hand: DP-B every ordered split of every set of 2+
# units (3^n - 2^(n+1) + 1), DP-LD every member of every such set last (n * 2^(n-1) - n), ZStream's
# program every root of every run of 2+ units ((n^3 - n) / 6)
EXACT_JOINS = {"dp_bushy": lambda n: 3 ** n - 2 ** (n + 1) + 1, "dp_left_deep": lambda n: n * 2 ** (n - 1) - n}


@pytest.mark.parametrize("name", sorted(EXACT_JOINS))
def test_exact_searches_run_exactly_when_their_joins_fit_the_steps(name):
    n = 7
    p = random_problem(n, 11)
    need = EXACT_JOINS[name](n)
    calls = [0]
    exact = ALGORITHMS[name](p, counting(calls), steps=need)
    assert calls[0] == need  # every step charged is one join priced
    assert exact == ALGORITHMS[name](p, intermediate)
    calls[0] = 0
    with noting() as notes:
        fallback = ALGORITHMS[name](p, counting(calls), steps=need - 1)
    assert fallback == ALGORITHMS["greedy"](p, intermediate)
    assert calls[0] == n * (n - 1) // 2  # greedy's joins alone: the search never started
    assert len(notes) == 1 and notes[0].startswith(f"{name} fell back to greedy's plan: {need:,} steps")


def test_a_search_never_prices_past_its_clock():
    n = 6
    p = random_problem(n, 12)
    for search, need in ((lambda c, clock: dp_bushy.search(c, clock), 3 ** n - 2 ** (n + 1) + 1),
                         (lambda c, clock: dp_left_deep.search(c, clock), n * 2 ** (n - 1) - n),
                         (lambda c, clock: zstream.search(c, range(n), clock), (n ** 3 - n) // 6)):
        calls = [0]
        clock = Clock(need)
        search(Costing(p, counting(calls)), clock)
        assert calls[0] == clock.spent == need
        calls[0] = 0
        clock = Clock(need - 1)
        with pytest.raises(OverBudget):
            search(Costing(p, counting(calls)), clock)
        assert calls[0] == clock.spent <= need - 1


def test_zstream_order_charges_both_stages():
    n = 6
    p = random_problem(n, 13)
    dp_ld, program = n * 2 ** (n - 1) - n, (n ** 3 - n) // 6
    calls = [0]
    best = zstream_ord.plan(p, counting(calls), steps=dp_ld + program)
    assert calls[0] == dp_ld + program and best == zstream_ord.plan(p, intermediate)
    with noting() as notes:  # one step short: greedy's order, then the program over it still fits
        zstream_ord.plan(p, intermediate, steps=dp_ld + program - 1)
    assert len(notes) == 1 and notes[0].startswith("zstream_ord took greedy's order")
    with noting() as notes:  # not even the program fits: the left-deep tree over greedy's order
        tree = zstream_ord.plan(p, intermediate, steps=program - 1)
    assert tree == ALGORITHMS["greedy"](p, intermediate) and len(notes) == 2


def test_auto_runs_dp_bushy_exactly_when_its_steps_fit():
    n = 7
    p = random_problem(n, 14)
    need = 3 ** n - 2 ** (n + 1) + 1
    with noting() as notes:
        assert ALGORITHMS["auto"](p, intermediate, steps=need) == ALGORITHMS["dp_bushy"](p, intermediate)
    assert notes == []
    with noting() as notes:
        assert ALGORITHMS["auto"](p, intermediate, steps=need - 1) == ALGORITHMS["zstream_ord"](p, intermediate)
    assert notes == [f"auto ran zstream_ord: dp_bushy needs {need:,} steps at 7 units, over the {need - 1:,} of its "
                     f"planning budget"]
    # ZStream's node term is charged 4 steps a join: the same budget no longer fits DP-B
    from jitcep.plan.planner.cost import zstream as zstream_model
    with noting() as notes:
        ALGORITHMS["auto"](p, zstream_model, steps=4 * need - 1)
    assert notes[0].startswith(f"auto ran zstream_ord: dp_bushy needs {4 * need:,} steps")


def test_a_model_without_a_node_term_is_charged_by_tree_size():
    n = 5
    p = random_problem(n, 15)

    def black_box(problem, tree):  # Cost_tree without its node term: priced whole
        return intermediate(problem, tree)

    need = sum(comb(n, k) * (2 ** k - 2) * black_box_steps(k) for k in range(2, n + 1))
    assert black_box_steps(2) == 2 and black_box_steps(5) == 16  # 2 k^2 / 3, rounded down
    assert ALGORITHMS["dp_bushy"](p, black_box, steps=need) == ALGORITHMS["dp_bushy"](p, intermediate)
    assert ALGORITHMS["dp_bushy"](p, black_box, steps=need - 1) == ALGORITHMS["greedy"](p, intermediate)


def test_iterative_improvement_stops_at_its_step_budget():
    p = random_problem(9, 3)
    free = ALGORITHMS["ii_random"](p, intermediate, seed=4)
    for steps in (0, 10, 100, 1000):
        calls = [0]
        with noting() as notes:
            tree = ALGORITHMS["ii_random"](p, counting(calls), seed=4, steps=steps)
        assert sorted(leaves(tree)) == list(range(9))
        if notes:  # stopped early: the moves priced fit in the steps (the re-pricing after a move aside)
            assert notes[0].startswith("iterative improvement stopped at its planning budget")
        else:
            assert tree == free
    with noting() as notes:
        ALGORITHMS["ii_random"](p, intermediate, seed=4, steps=0)
    assert len(notes) == 1


def test_the_clock_decides_no_plan(monkeypatch):
    # the wall clock jumps an hour at every reading (a machine under any load): every plan is the same
    problems_ = [random_problem(n, n) for n in (4, 8, 11, 14)]
    before = {(name, i): ALGORITHMS[name](p, intermediate, seed=3, steps=20_000)
              for name in ALGORITHMS for i, p in enumerate(problems_)}
    now = [0.0]

    def slow_clock():
        now[0] += 3600.0
        return now[0]
    for fn in ("perf_counter", "monotonic", "time", "process_time", "thread_time"):
        monkeypatch.setattr(time, fn, slow_clock)
    for fn in ("perf_counter_ns", "monotonic_ns", "time_ns"):
        monkeypatch.setattr(time, fn, lambda: int(slow_clock() * 1e9))
    after = {(name, i): ALGORITHMS[name](p, intermediate, seed=3, steps=20_000)
             for name in ALGORITHMS for i, p in enumerate(problems_)}
    assert after == before


def test_large_problems_plan_within_their_budgets():
    p = random_problem(20, 4)
    greedy = intermediate(p, ALGORITHMS["greedy"](p, intermediate))
    for name in ("auto", "zstream_ord", "dp_left_deep"):
        tree = ALGORITHMS[name](p, intermediate, steps=10_000)
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
    assert config.AUTO_MIN_STEPS == 10_000 and config.AUTO_STEPS == 50_000  # ~10 and ~50 ms at 1 us a step
    assert auto.budget_for(10) == 10_000  # at least the minimum
    assert auto.budget_for(2_000_000) == 20_000  # 10 ns per event: 0.01 steps
    assert auto.budget_for(10**9) == 50_000
