"""Cost models, the join problem and estimated rows, on numbers computed by hand (issue 14).

Every expected number is worked out in a comment beside it, from the papers' formulas
(Kolchinsky & Schuster 2018 sections 3-5; ZStream section 5.1, Table 2), never by the code under test.
"""

from __future__ import annotations

import math

import pytest

from jitcep.errors import OptionError
from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.plan.logical import logical_plan
from jitcep.plan.operators import KleeneCollect, NegationFilter, NfaRuns, Scan, SeqJoin
from jitcep.plan.planner import cost
from jitcep.plan.planner.algorithms import ALGORITHMS
from jitcep.plan.planner.cardinality import EstimatedProblem, estimate_rows, estimate_work, join_problem
from jitcep.plan.planner.chain_shares import ChainShares, on_a_chain
from jitcep.plan.planner.next_match import next_match_partials
from jitcep.plan.planner.problem import JoinProblem
from jitcep.plan.planner.statistics import Statistics
from jitcep.plan.rules import Planning, join_order, physical_plan
from jitcep.plan.shapes import default_shape

# Three units a, b, c with card 10, 20, 5 and sel_ab = 0.5, sel_ac = 0.1, sel_bc = 0.2.
CARD = (10.0, 20.0, 5.0)
SEL = ((1.0, 0.5, 0.1), (0.5, 1.0, 0.2), (0.1, 0.2, 1.0))
PLAIN = JoinProblem(("a", "b", "c"), CARD, SEL, latency=2)
# The same problem from SEQ(a, b, c): every pair ordered (Pt = 0.5), so the predicates' own
# selectivities are P_ab = 0.5 / 0.5 = 1 (no predicate), P_ac = 0.1 / 0.5 = 0.2, P_bc = 0.2 / 0.5 = 0.4.
ORDERED = EstimatedProblem(("a", "b", "c"), CARD, SEL, 2, order=((1, .5, .5), (.5, 1, .5), (.5, .5, 1)),
                           predicates=((0, 0, 1), (0, 0, 1), (1, 1, 0)))
LEFT, RIGHT, AC_FIRST = ((0, 1), 2), (0, (1, 2)), ((0, 2), 1)


def test_intermediate_cost_tree():
    # leaves: 10 + 20 + 5 = 35; PM(abc) = 10 * 20 * 5 * 0.5 * 0.1 * 0.2 = 10
    # ((a, b), c): PM(ab) = 10 * 20 * 0.5 = 100 -> 35 + 100 + 10 = 145
    assert cost.intermediate(PLAIN, LEFT) == pytest.approx(145.0)
    # (a, (b, c)): PM(bc) = 20 * 5 * 0.2 = 20 -> 35 + 20 + 10 = 65
    assert cost.intermediate(PLAIN, RIGHT) == pytest.approx(65.0)
    # ((a, c), b): PM(ac) = 10 * 5 * 0.1 = 5 -> 35 + 5 + 10 = 50
    assert cost.intermediate(PLAIN, AC_FIRST) == pytest.approx(50.0)


def test_cost_ord():
    # Cost_ord (section 3.1): PM of every prefix of the order.  PM(a) = 10, PM(ab) = 100, PM(ac) = 5,
    # PM(abc) = 10.  (a, b, c): 10 + 100 + 10 = 120 = Cost_tree's 145 less the cards of b and c (20 + 5).
    assert cost.order(PLAIN, LEFT) == pytest.approx(120.0)
    # (a, c, b): 10 + 5 + 10 = 25; (c, a, b): PM(c) = 5, PM(ca) = 5 -> 5 + 5 + 10 = 20, where Cost_tree
    # prices both at 50: Cost_ord tells which of the first two units comes first
    assert cost.order(PLAIN, AC_FIRST) == pytest.approx(25.0)
    assert cost.order(PLAIN, ((2, 0), 1)) == pytest.approx(20.0)
    assert cost.intermediate(PLAIN, ((2, 0), 1)) == pytest.approx(cost.intermediate(PLAIN, AC_FIRST))
    assert cost.order(PLAIN, 1) == pytest.approx(20.0)
    with pytest.raises(ValueError, match="order-based"):
        cost.order(PLAIN, RIGHT)


def test_cost_ord_plans():
    # The six orders under Cost_ord (PM(bc) = 20): abc 120, acb 25, bac 130, bca 50, cab 20, cba 35:
    # (c, a, b) is the optimum; greedy starts from the cheapest unit alone (c: 5), appends a (PM(ca) = 5
    # against PM(cb) = 20), then b: the same order.
    for planner in ("greedy", "ii_greedy", "ii_random", "dp_left_deep", "auto"):
        assert ALGORITHMS[planner](PLAIN, cost.order) == ((2, 0), 1), planner
    # the order-based model with a tree-based planner is refused before any planning, naming both
    for planner in ("zstream", "zstream_ord", "dp_bushy"):
        with pytest.raises(OptionError, match=f'cost_model="order".*planner="{planner}"'):
            Options(cost_model="order", planner=planner)
    assert Options(cost_model="order").planner == "auto"


def test_zstream_operator_costs():
    # Formula 1: C = Ci + n * 0.25 * Ci + Co.
    # ((a, b), c): (a, b): Ci = 10 * 20 * 0.5 = 100, Co = 100 * P_ab (1) = 100, n = 0 -> 200.
    #   root: CARD(ab) = 100, CARD(c) = 5, Pt = 0.5 * 0.5, P = 0.2 * 0.4 = 0.08, n = 2:
    #   Ci = 100 * 5 * 0.25 = 125, Co = 125 * 0.08 = 10 -> 125 + 2 * 0.25 * 125 + 10 = 197.5.  Total 397.5.
    assert cost.zstream(ORDERED, LEFT) == pytest.approx(397.5)
    # (a, (b, c)): (b, c): Ci = 20 * 5 * 0.5 = 50, Co = 50 * 0.4 = 20, n = 1 -> 50 + 12.5 + 20 = 82.5.
    #   root: CARD(a) = 10, CARD(bc) = 20, Pt = 0.25, P = 1 * 0.2, n = 1: Ci = 50, Co = 10 -> 72.5.  Total 155.
    assert cost.zstream(ORDERED, RIGHT) == pytest.approx(155.0)
    # a problem without ordering factors: every node a Conjunction, P = sel, n = 0:
    # ((a, b), c): (a, b): Ci = 200, Co = 100 -> 300; root: Ci = 100 * 5 = 500, Co = 500 * 0.02 = 10 -> 510.
    assert cost.zstream(PLAIN, LEFT) == pytest.approx(810.0)


def test_zstream_table2_formulas():
    # Sequence: Ci = 10 * 20 * 0.5 = 100, Co = 100 * 0.1 = 10, n = 1 -> 100 + 25 + 10 = 135
    assert cost.seq_cost(10, 20, 0.5, 0.1, 1) == pytest.approx(135.0)
    # Conjunction: Ci = 200, Co = 20, n = 1 -> 200 + 50 + 20 = 270
    assert cost.and_cost(10, 20, 0.1, 1) == pytest.approx(270.0)
    # Disjunction: Ci = Co = 3 + 4 -> 14
    assert cost.or_cost(3, 4) == pytest.approx(14.0)
    # Kleene A; B; C: N = 20 * 0.5 * 0.5 = 5, Ci = 10 * 5 * 0.5 * 5 = 125, Co = 125 -> 250
    assert cost.kseq_cost(10, 20, 5) == pytest.approx(250.0)
    # with cnt = 2: N = 10, Ci = 250, Co = 250 * P_AC (0.5) = 125 -> 375
    assert cost.kseq_cost(10, 20, 5, cnt=2, p_ac=0.5) == pytest.approx(375.0)
    # Negation on top: Ci_seq = 10 * 5 * 0.5 = 25 = CARD_SEQ; Ci = 25 + 25 = 50,
    # Co = 25 + 25 * (1 - 0.25) * 1 = 43.75 -> 93.75
    assert cost.nseq_top_cost(10, 5) == pytest.approx(93.75)
    # Negation pushed: Ci = 5 + 25 = 30, Co = 5 + 25 * (1 - 0.25) = 23.75 -> 53.75
    assert cost.nseq_pushed_cost(10, 5) == pytest.approx(53.75)


def test_latency_model():
    # Cost_lat: PM of the siblings on the path from c's leaf to the root.
    # ((a, b), c): c's sibling is (a, b): 100.  (a, (b, c)): (b, c)'s sibling a: 10, c's sibling b: 20 -> 30.
    assert cost.latency_cost(PLAIN, LEFT) == pytest.approx(100.0)
    assert cost.latency_cost(PLAIN, RIGHT) == pytest.approx(30.0)
    # ((a, c), b): (a, c)'s sibling b: 20, c's sibling a: 10 -> 30
    assert cost.latency_cost(PLAIN, AC_FIRST) == pytest.approx(30.0)
    # alpha 0.5: 0.5 * 145 + 0.5 * 100 = 122.5; 0.5 * 65 + 0.5 * 30 = 47.5
    assert cost.COST_MODELS["latency"](PLAIN, LEFT) == pytest.approx(122.5)
    assert cost.COST_MODELS["latency"](PLAIN, RIGHT) == pytest.approx(47.5)
    # alpha 0: Cost_tree alone; alpha 1: latency alone
    assert cost.latency(0.0)(PLAIN, LEFT) == pytest.approx(145.0)
    assert cost.latency(1.0)(PLAIN, LEFT) == pytest.approx(100.0)
    # no last unit: no latency term: 0.5 * 145
    no_last = JoinProblem(("a", "b", "c"), CARD, SEL)
    assert cost.latency(0.5)(no_last, LEFT) == pytest.approx(72.5)
    for bad in (-0.1, 1.5, "x", True):
        with pytest.raises(OptionError, match="alpha"):
            cost.latency(bad)


def test_selection_strategy_models():
    # skip_till_next_match: min(card) * prod(sel) per node.  ((a, b), c): leaves 10 + 20 + 5 = 35,
    # (a, b): min(10, 20) * 0.5 = 5, root: min 5 * 0.01 = 0.05 -> 40.05
    assert cost.strategy_cost("skip_till_next_match")(PLAIN, LEFT) == pytest.approx(40.05)
    assert cost.COST_MODELS["skip_till_next_match"](PLAIN, LEFT) == pytest.approx(40.05)
    # contiguity with 100 events per window: PM times 0.01 per pair adjacent in the pattern (a-b, b-c).
    # ((a, b), c): leaves 35, PM(ab) = 100 -> 1, PM(abc) = 10 -> 10 * 0.01 ** 2 = 0.001: 36.001
    strict = cost.strategy_cost("strict_contiguity", window_events=100)
    assert strict(PLAIN, LEFT) == pytest.approx(36.001, rel=1e-9)
    # ((a, c), b): (a, c) not adjacent: PM(ac) = 10 * 5 * 0.1 = 5 -> 35 + 5 + 0.001
    assert strict(PLAIN, AC_FIRST) == pytest.approx(40.001, rel=1e-9)
    # default events per window: sum(card) = 35 -> 1/35 per adjacent pair: 35 + 100/35 + 10/35**2
    assert cost.COST_MODELS["partition_contiguity"](PLAIN, LEFT) == pytest.approx(35 + 100 / 35 + 10 / 35 ** 2)
    assert cost.strategy_cost("skip_till_any_match") is cost.intermediate
    with pytest.raises(OptionError, match="strategy"):
        cost.strategy_cost("greedy")


def test_registry_shape():
    assert set(cost.COST_MODELS) == {"intermediate", "order", "zstream", "latency", "skip_till_next_match",
                                     "strict_contiguity", "partition_contiguity"}
    for model in cost.COST_MODELS.values():
        assert isinstance(model(PLAIN, LEFT), float)


# --- join_problem -------------------------------------------------------------------


def _problem(text, rates, sels):
    lp = logical_plan(parse(text))
    return join_problem(lp, Statistics(rates, sels), 10)


def test_join_problem_or_is_one_unit():
    p = _problem("PATTERN SEQ(A a, OR(B b, C c), D d) WHERE a.x < d.x AND a.x + b.x < d.x WITHIN 10",
                 {"a": 1, "b": 2, "c": 3, "d": 0.5}, {"a.x < d.x": 0.2, "a.x + b.x < d.x": 0.125})
    assert p.units == ("a", ("b", "c"), "d")
    # card = span * rate: a 10, the OR 10 * 2 + 10 * 3 = 50, d 5
    assert p.card == pytest.approx((10.0, 50.0, 5.0))
    # the 3-variable conjunct: 0.125 ** (1/3) = 0.5 per pair; the SEQ order: 0.5 per pair.
    # (a, OR): branch b (weight 20/50): 0.5 * 0.5; branch c (30/50): 0.5 -> 0.4 * 0.25 + 0.6 * 0.5 = 0.4
    assert p.sel[0][1] == pytest.approx(0.4) and p.sel[1][0] == pytest.approx(0.4)
    # (a, d): 0.2 * 0.5 (split) * 0.5 (order) = 0.05
    assert p.sel[0][2] == pytest.approx(0.05)
    # (OR, d): 0.4 * (0.5 * 0.5) + 0.6 * 0.5 = 0.4
    assert p.sel[1][2] == pytest.approx(0.4)
    assert p.latency == 2
    assert p.order[0][2] == pytest.approx(0.5) and p.predicates[0][2] == 2


def test_join_problem_three_variable_conjunct_and_order():
    p = _problem("PATTERN SEQ(A a, B b, C c) WHERE a.x + b.x < c.x WITHIN 10",
                 {"a": 1, "b": 1, "c": 1}, {"a.x + b.x < c.x": 0.125})
    # each pair: 0.125 ** (1/3) = 0.5, times the order 0.5 -> 0.25
    assert [p.sel[0][1], p.sel[0][2], p.sel[1][2]] == pytest.approx([0.25] * 3)
    # PM(abc) = 10 ** 3 * 0.125 (the conjunct, whole) / 3! (the share of triples in order) = 20.833...
    assert p.pm((0, 1, 2)) == pytest.approx(1000 * 0.125 / 6)


def test_join_problem_and_has_no_order_factor():
    p = _problem("PATTERN AND(A a, B b) WHERE a.x < b.x WITHIN 10", {"a": 2, "b": 0.5}, {"a.x < b.x": 0.3})
    assert p.card == pytest.approx((20.0, 5.0))
    assert p.sel[0][1] == pytest.approx(0.3)
    assert p.latency is None
    # a SEQ whose last item is an AND has no single last unit
    q = _problem("PATTERN SEQ(A a, AND(B b, C c)) WITHIN 10", {"a": 1, "b": 1, "c": 1}, {})
    assert q.latency is None and q.sel[1][2] == 1.0 and q.sel[0][1] == 0.5


# --- estimate_rows ----------------------------------------------------------------------


def _rows(text, rates, sels, options=Options()):
    lp = logical_plan(parse(text))
    plan = physical_plan(lp, options)
    rows = estimate_rows(plan, Statistics(rates, sels, extent=1000.0), 10)
    return plan, rows


def _by_type(plan, rows, kind):
    return [rows[id(n)] for n in plan.nodes() if isinstance(n, kind)]


def test_estimate_rows_seq_join():
    plan, rows = _rows("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10", {"a": 1, "b": 2}, {"a.x < b.x": 0.1})
    # scans: rate * extent: 1000 and 2000
    assert sorted(_by_type(plan, rows, Scan)) == pytest.approx([1000.0, 2000.0])
    # each a meets the b's after it within the window: 1000 * (2 * 10) * 0.1 = 2000
    assert _by_type(plan, rows, SeqJoin) == pytest.approx([2000.0])


def test_estimate_rows_negation():
    plan, rows = _rows("PATTERN SEQ(A a, !C c, B b) WITHIN 10", {"a": 1, "b": 2, "c": 0.3}, {})
    # SEQ(a, b): 1000 * 2 * 10 = 20000; the range between a and b: b - a = 10 x, x uniform over the (a, b)
    # records; no C there: E[exp(-0.3 * 10 x)] = (1 - e^-3) / 3 = 0.3167
    kept = 20000.0 * -math.expm1(-3.0) / 3.0
    assert _by_type(plan, rows, SeqJoin) == pytest.approx([20000.0])
    assert _by_type(plan, rows, NegationFilter) == pytest.approx([kept])
    assert rows[id(plan.root)] == pytest.approx(kept)


def test_estimate_rows_kleene():
    text = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"
    rates = {"a": 1, "b": 0.6, "c": 1}
    plan, rows = _rows(text, rates, {})
    # SEQ(a, c): 1000 * 1 * 10 = 10000; the range between a and c is c - a = 10 x, x uniform in [0, 1]
    # (an (a, c) pair is as likely at every distance within the window); its members are Poisson of mean
    # 0.6 * 10 x = 6 x; all: E[2^N] - 1 = E[e^(6 x)] - 1 = (e^6 - 1) / 6 - 1 = 66.07 lists
    assert _by_type(plan, rows, SeqJoin) == pytest.approx([10000.0])
    assert _by_type(plan, rows, KleeneCollect) == pytest.approx([10000.0 * ((math.exp(6) - 1) / 6 - 1)])
    assert _by_type(plan, rows, KleeneCollect) == pytest.approx([660_714.0], rel=1e-5)
    plan, rows = _rows(text, rates, {}, Options(kleene="maximal"))
    # maximal: one list when a member is there: 1 - E[e^(-6 x)] = 1 - (1 - e^-6) / 6
    assert _by_type(plan, rows, KleeneCollect) == pytest.approx([10000.0 * (1 - (1 - math.exp(-6)) / 6)])
    # an iterative conjunct of selectivity 0.5: E[(1 + 0.5)^N - 1] / 0.5 = (E[e^(3 x)] - 1) / 0.5
    # = ((e^3 - 1) / 3 - 1) / 0.5 = 10.72 lists
    plan, rows = _rows("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10", rates,
                       {"b.x > b[i-1].x": 0.5})
    assert _by_type(plan, rows, KleeneCollect) == pytest.approx([10000.0 * ((math.exp(3) - 1) / 3 - 1) / 0.5])


def test_estimate_rows_union_and_partitions():
    lp = logical_plan(parse("PATTERN SEQ(A a, OR(B b, C c)) WITHIN 10"))
    plan = physical_plan(lp, Options())
    rows = estimate_rows(plan, Statistics({"a": 1, "b": 2, "c": 3}, {}, partitions=4, extent=1000.0), 10)
    # 4 partitions: scans 4 * rate * 1000; union 4 * (2000 + 3000) = 20000;
    # SEQ(a, b) 4 * 1000 * 2 * 10 = 80000, SEQ(a, c) 120000 -> root 200000
    assert rows[id(plan.root)] == pytest.approx(200000.0)
    assert sorted(_by_type(plan, rows, Scan)) == pytest.approx([4000.0, 8000.0, 12000.0])


def test_on_a_chain_is_the_poisson_share_of_records_with_a_chain():
    # SEQ(v0, v1, v2) with W r = 0.5 each (sase_equiv_v1000: 20 types, 1,000 keys, window 10,000):
    # chains(all) = 3 * 0.5^3 / 3! = 0.0625; chains(v0) = 0.5 -> x = 0.125, 1 - e^-x = 0.1175
    # (measured 8.6%); chains(v0, v1) = 2 * 0.25 / 2! = 0.25 -> x = 0.25, 1 - e^-x = 0.2212 (20%)
    chain = ("v0", "v1", "v2")
    wr = dict.fromkeys(chain, 0.5)
    assert on_a_chain(wr, chain, ["v1"]) == pytest.approx(1 - math.exp(-0.125))
    assert on_a_chain(wr, chain, ["v0", "v1"]) == pytest.approx(1 - math.exp(-0.25))
    assert on_a_chain(wr, chain, list(chain)) == 1.0  # a record of them all in order is a chain
    # W r = 5 (100 keys): a leaf's event lies on (3 * 125 / 6) / 5 = 12.5 chains, a (v1, v2) record on
    # (3 * 125 / 6) / (2 * 25 / 2) = 2.5: kept 0.999996 and 0.918 (measured 95% and 80%)
    wr = dict.fromkeys(chain, 5.0)
    assert on_a_chain(wr, chain, ["v0"]) == pytest.approx(1 - math.exp(-12.5))
    assert on_a_chain(wr, chain, ["v1", "v2"]) == pytest.approx(1 - math.exp(-2.5))
    # a type absent from the window: no record of it, none kept
    assert on_a_chain({"v0": 0.0, "v1": 1.0, "v2": 1.0}, chain, ["v0"]) == 0.0
    assert on_a_chain({"v0": 0.0, "v1": 1.0, "v2": 1.0}, chain, ["v1"]) == 0.0


def test_chain_shares_take_a_set_by_its_size_and_product():
    # SEQ(v0, v1, v2, v3), W r = 1, 2, 0.5, 4: chains(all) = 4 * 4 / 4! = 2/3; the set {v0, v2} of a bushy
    # join (product 0.5): chains = 2 * 0.5 / 2! = 0.5, x = 4/3; {v1, v2, v3} (product 4): 3 * 4 / 3! = 2,
    # x = 1/3; a single v3: chains = 4, x = 1/6
    chain = ("v0", "v1", "v2", "v3")
    share = ChainShares({"v0": 1.0, "v1": 2.0, "v2": 0.5, "v3": 4.0}, chain)
    assert share(2, 0.5) == pytest.approx(1 - math.exp(-4 / 3))
    assert share(3, 4.0) == pytest.approx(1 - math.exp(-1 / 3))
    assert share(1, 4.0) == pytest.approx(1 - math.exp(-1 / 6))
    assert share(4, 4.0) == 1.0  # every variable: a chain
    assert share(1, 0.0) == 0.0  # a type absent from the window


def test_chain_shares_at_overflowing_and_zero_rates_are_never_nan():
    # a rate of 0 beside an overflowing one: chains(all) = 0 x inf, no chain, so no record extends (0);
    # every W r infinite: chains and records both overflow, inf / inf, nothing known saved (1); one tiny
    # rate among huge ones: the pairs' product overflows, the chain's does not (finite, no NaN)
    chain = ("a", "b", "c")
    zero = ChainShares({"a": 0.0, "b": math.inf, "c": 1.0}, chain)
    assert zero(2, math.inf) == 0.0 and zero(1, math.inf) == 0.0 and zero(2, 1.0) == 0.0
    inf = ChainShares({"a": math.inf, "b": math.inf, "c": math.inf}, chain)
    assert inf(2, math.inf) == 1.0 and inf(1, math.inf) == 1.0
    mixed = ChainShares({"a": 1e200, "b": 1e200, "c": 1e-300}, chain)
    assert all(not math.isnan(mixed(k, p)) for k, p in ((2, math.inf), (1, 1e200), (2, 1e-100)))


def test_next_match_partials():
    # Kolchinsky 5.2, states with card 10, 20, 5 per window and edge selectivities 1, 0.5, 0.2.
    # skip-till-next-match: m[k] = min(card_1..k) * prod(sel_1..k): 10, min(10, 20) * 0.5 = 5,
    # min(10, 20, 5) * 0.5 * 0.2 = 0.5
    assert next_match_partials([10, 20, 5], [1, 0.5, 0.2]) == pytest.approx([10, 5, 0.5])
    # contiguity 1/35: m[k] = m[k-1] * card_k / 35 * sel_k: 10, 10 * 20 / 35 * 0.5 = 100/35,
    # 100/35 * 5 / 35 * 0.2 = 100/1225
    assert next_match_partials([10, 20, 5], [1, 0.5, 0.2], 1 / 35) == pytest.approx([10, 100 / 35, 100 / 1225])


def test_estimate_rows_nfa_runs():
    # SEQ(a, b, c) under skip-till-next-match, rates 1, 2, 0.5 per ts, W 10, extent 1000: cards 10, 20, 5;
    # the edge of c tests a.x < c.x (0.4).  m = 10, 10, 5 * 0.4 = 2 per window; 1000 / 10 windows:
    # rows 200, work (C_i) (10 + 10 + 2) * 100 = 2200
    text = "PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 10"
    rates, sels = {"a": 1, "b": 2, "c": 0.5}, {"a.x < c.x": 0.4}
    plan, rows = _rows(text, rates, sels, Options(strategy="skip_till_next_match"))
    assert isinstance(plan.root, NfaRuns)
    assert rows[id(plan.root)] == pytest.approx(200.0)
    work = estimate_work(plan, Statistics(rates, sels, extent=1000.0), 10)
    assert work[id(plan.root)][0] == pytest.approx(2200.0)
    # strict contiguity: 1 / 35 per step (the states' own events per window, 10 + 20 + 5):
    # m = 10, 10 * 20 / 35 = 200/35, 200/35 * 5 / 35 * 0.4 = 400/1225 per window -> rows 4000/122.5
    plan, rows = _rows(text, rates, sels, Options(strategy="strict_contiguity"))
    assert rows[id(plan.root)] == pytest.approx(400 / 1225 * 100)


def test_cost_model_names_the_strategy_models():
    for name in ("skip_till_next_match", "strict_contiguity", "partition_contiguity"):
        assert cost.cost_model(Options(cost_model=name)) is cost.COST_MODELS[name]
    with pytest.raises(OptionError, match="cost_model"):
        Options(cost_model="next")


def test_no_join_order_search_under_other_strategies():
    # the NFA^b runs take the states in pattern order: a planner's order would be dropped, so none is
    # searched (its statistics would put the rare c first under skip-till-any-match)
    lp = logical_plan(parse("PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 10"))
    stats = Statistics({"a": 5, "b": 5, "c": 0.01}, {"a.x < c.x": 0.5}, extent=1000.0)
    assert join_order.shape(Planning(lp, Options(planner="dp_bushy"), statistics=stats, span=10))[0] \
        != default_shape(lp.positive)
    for strategy in ("skip_till_next_match", "strict_contiguity"):
        planning = Planning(lp, Options(planner="dp_bushy", strategy=strategy), statistics=stats, span=10)
        assert join_order.shape(planning) == (default_shape(lp.positive), (), ())


def test_latency_alpha_option_weighs_the_latency_model():
    # Cost_tree alone at 0, latency alone at 1 (the values of test_latency_model), 0.5 by default
    assert cost.cost_model(Options(cost_model="latency", latency_alpha=0))(PLAIN, LEFT) == pytest.approx(145.0)
    assert cost.cost_model(Options(cost_model="latency", latency_alpha=1))(PLAIN, LEFT) == pytest.approx(100.0)
    assert cost.cost_model(Options(cost_model="latency"))(PLAIN, LEFT) == pytest.approx(122.5)
    assert cost.cost_model(Options(cost_model="zstream", latency_alpha=1)) is cost.COST_MODELS["zstream"]
    for bad in (-0.1, 1.5, float("nan"), True, "0.5", None):
        with pytest.raises(OptionError, match="latency_alpha"):
            Options(latency_alpha=bad)
