"""The order's share of a set of variables (:mod:`jitcep.plan.planner.order_share`) and the costs built on
it, on fractions counted by hand and by brute force over permutations (never by the code under test):
with exchangeable event times, the share of S's tuples in a SEQ's order is e(S) / |S|! (docs/planning.md
"The order's selectivity")."""

from __future__ import annotations

import math
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.plan.logical import logical_plan
from jitcep.plan.operators import AndJoin, SeqJoin
from jitcep.plan.planner import cost
from jitcep.plan.planner.cardinality import estimate_rows, join_problem
from jitcep.plan.planner.order_share import series_blocks, share
from jitcep.plan.planner.statistics import Statistics
from jitcep.plan.rules import physical_plan
from test_kernels_join_search import sp_order


def _below(n, pairs):
    """``below`` masks of the order whose pairs (i, j) put i first."""
    return [sum(1 << i for i, j in pairs if j == k) for k in range(n)]


def test_hand_computed_shares():
    chain3 = series_blocks(_below(3, [(0, 1), (1, 2), (0, 2)]))
    assert share(chain3, 0b111) == pytest.approx(1 / 6)  # one order of 3! keeps a < b < c
    assert share(chain3, 0b101) == pytest.approx(1 / 2)  # two of them: as the pairwise Pt
    assert share(chain3, 0b010) == 1.0
    v = series_blocks(_below(3, [(0, 1), (0, 2)]))  # a < b, a < c: a first, b and c either way: 2 of 6
    assert share(v, 0b111) == pytest.approx(1 / 3)
    assert share(series_blocks(_below(3, [])), 0b111) == 1.0  # an AND: no order
    # two chains a0 < a1 and b0 < b1 < b2, the SEQ of them: one order of the 5! in all
    a, b = [0, 1], [2, 3, 4]
    pairs = [(0, 1), (2, 3), (3, 4), (2, 4)] + [(i, j) for i in a for j in b]
    blocks = series_blocks(_below(5, pairs))
    whole, left, right = share(blocks, 0b11111), share(blocks, 0b00011), share(blocks, 0b11100)
    assert whole == pytest.approx(1 / 120)
    # joined: the share of the (left, right) pairs, each in its order, whose union is: 1 / C(5, 2) = 1/10
    assert whole / (left * right) == pytest.approx(1 / math.comb(5, 2))
    # a chain of 7: 1/7! where the pairwise factor said 2^-21
    chain7 = series_blocks([(1 << i) - 1 for i in range(7)])
    assert share(chain7, 0b1111111) == pytest.approx(1 / 5040)


def test_orders_that_are_not_series_parallel_partial_orders_are_refused():
    assert series_blocks(_below(4, [(0, 2), (1, 2), (1, 3)])) is None  # an induced N
    assert series_blocks(_below(2, [(0, 1), (1, 0)])) is None  # a cycle
    assert series_blocks(_below(3, [(0, 1), (1, 2)])) is None  # not transitive
    assert series_blocks([0b1]) is None  # reflexive


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.randoms(use_true_random=False))
def test_share_is_the_fraction_of_permutations_in_order(n, rng):
    units = list(range(n))
    rng.shuffle(units)
    pairs = sp_order(rng, units)
    blocks = series_blocks(_below(n, pairs))
    assert blocks is not None
    for mask in range(1, 1 << n):
        s = [i for i in range(n) if mask >> i & 1]
        kept = sum(all(p.index(i) < p.index(j) for i, j in pairs if i in s and j in s) for p in permutations(s))
        assert share(blocks, mask) == pytest.approx(kept / math.factorial(len(s)))


def _problem(text, rates, span=10.0):
    return join_problem(logical_plan(parse(text)), Statistics(rates, {}), span)


def test_pm_and_costs_with_the_order_share():
    # SEQ of four, rate 1, window 10: card 10 each; PM(S) = 10^|S| / |S|!
    p = _problem("PATTERN SEQ(A a, B b, C c, D d) WITHIN 10", dict.fromkeys("abcd", 1))
    assert p.pm((0, 1, 2, 3)) == pytest.approx(10 ** 4 / 24)
    assert p.pm((0, 2, 3)) == pytest.approx(1000 / 6)
    # Cost_tree of (((a, b), c), d): leaves 40, PM(ab) = 50, PM(abc) = 166.67, PM(abcd) = 416.67
    assert cost.intermediate(p, (((0, 1), 2), 3)) == pytest.approx(40 + 50 + 1000 / 6 + 10000 / 24)
    # ZStream, ((a, b), (c, d)): each pair a Sequence of C_i = 10 * 10 / 2 = 50 = C_o (cost 100); the root
    # a Sequence of PM(ab) = PM(cd) = 50 with Pt = 1 / C(4, 2) = 1/6: C_i = 2500 / 6 = C_o
    assert cost.zstream(p, ((0, 1), (2, 3))) == pytest.approx(200 + 2 * 2500 / 6)
    # the same tree's node terms, as the searches price it
    nodes = cost.zstream_node(p, lambda m: p.pm([i for i in range(4) if m >> i & 1]), 0b0011, 0b1100)
    assert nodes == pytest.approx(2 * 2500 / 6)
    # SEQ(a, AND(b, c)): a first, then b and c either way: PM(abc) = 1000 / 3; AND: no order
    v = _problem("PATTERN SEQ(A a, AND(B b, C c)) WITHIN 10", dict.fromkeys("abc", 1))
    assert v.pm((0, 1, 2)) == pytest.approx(1000 / 3)
    assert _problem("PATTERN AND(A a, B b, C c) WITHIN 10", dict.fromkeys("abc", 1)).pm((0, 1, 2)) == 1000


def test_estimated_rows_agree_over_plan_shapes():
    # SEQ(a, b, c), rate 1, window 10, extent 1000: 3 * (T / W) * PM(abc) = 3 * 100 * 1000 / 6 = 50,000
    # matches, whatever the tree: (a, b) then c by SEQ joins (1/C(3, 2) of the (ab, c) pairs in order), or
    # (a, c) first and b by an AND join testing b's order (share(abc) / share(ac) = 1/3 of its pairs)
    lp = logical_plan(parse("PATTERN SEQ(A a, B b, C c) WITHIN 10"))
    stats = Statistics(dict.fromkeys("abc", 1), {}, extent=1000.0)
    for shape, kind in ((("a", "b"), "c"), SeqJoin), ((("a", "c"), "b"), AndJoin):
        plan = physical_plan(lp, Options(planner="greedy"), shape, stats, 10)
        rows = estimate_rows(plan, stats, 10)
        assert isinstance(plan.root, kind) or any(isinstance(n, kind) for n in plan.nodes())
        assert rows[id(plan.root)] == pytest.approx(50_000)
