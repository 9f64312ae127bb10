"""The physical choices priced on statistics: a SEQ join's driver and a negation's placement.

Hand-computed costs (ZStream's Formula 1 with k = 1/4, p = 1, no predicates:
an operator costs its input records plus its output records) show each choice
flipping where ZStream (6.4) says it should; differential tests run every
choice against the reference evaluator on generated patterns and streams.
Last, what the join-order search sees of the operators: a negation thinning
its anchor's partial matches, and ZStream's model pricing a SEQ joined out of
its order as the AND join the executor runs.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jitcep import runtime
from jitcep.errors import UnsupportedPatternError
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.plan.explain import describe, to_text
from jitcep.plan.logical import logical_plan
from jitcep.plan.operators import NegationFilter, Scan, SemiJoinReduce, SeqJoin, rebuild_joins
from jitcep.plan.planner.statistics import Statistics
from jitcep.plan.rules import physical_plan
from jitcep.reference import evaluate as reference_evaluate
from test_compiled_differential import _as_tuples, _positive_names, gen_pattern, streams

T, W = 1000.0, 10.0  # the table's extent and the window, in ts units


def _stats(rates: dict) -> Statistics:
    return Statistics(dict(rates), {}, 1, 1.0, {v: "user" for v in rates}, T)


def _plan(text: str, rates: dict, shape=None):
    return physical_plan(logical_plan(parse(text)), Options(planner="greedy"), shape, _stats(rates), W)


def _nodes(plan, kind):
    return [n for n in plan.nodes() if isinstance(n, kind)]


NEG = "PATTERN SEQ(A a, !B n, C c, D d) WITHIN 10"


def _negation_costs(rb: float) -> tuple[float, float]:
    """The whole plan ((a, c), d) with !n pushed onto (a, c) and on top, by hand (ra = rc = 1, rd = 0.1).

    Records: a, c: 1000 each, d: 100; (a, c): ra rc T W = 10^4 (Kolchinsky's PM scaled to the table:
    ra T * rc T * Pt 1/2 * k 2 / (T / W)); joining d: x * rd W * 3/2 * 1/3 (k 3 / (2 * 1); the share of the
    ((a, c), d) pairs in order, (1/3!) / (1/2!) = 1/C(3, 2)).
    A record keeps when no B falls in its range, the range between a and c: c - a = W x, x uniform over
    (a, c) records, x ~ Beta(1, 2) over (a, c, d) (one of the record's three parts, density 2 (1 - x)), so
    with t = rb W the chance E[exp(-t x)] is (1 - e^-t) / t over (a, c), 2 (t - 1 + e^-t) / t^2 over (a, c, d).
    """
    scans = 2 * (1000 + 1000 + 100)
    ac = 1e4
    q = 0.1 * W * 3 / 2 / 3
    t = rb * W
    f_pushed, f_top = (-math.expm1(-t) / t, 2 * (t - 1 + math.exp(-t)) / t ** 2) if t else (1.0, 1.0)
    pushed = scans + 2 * ac + (ac + ac * f_pushed) + 2 * ac * f_pushed * q
    top = scans + 2 * ac + 2 * ac * q + (ac * q + ac * q * f_top)
    return pushed, top


@pytest.mark.parametrize("rb, placement", [(0.0, "matches"), (10.0, "pushed")])
def test_negation_placement_flips_with_the_negated_rate(rb, placement):
    # ZStream 6.4: NSEQ pushed down wins when the negation kills many partial matches; with no
    # negated events it only reads the lower join's records, and NEG on top reads fewer (the
    # join with the rare d is selective)
    plan = _plan(NEG, {"a": 1.0, "n": rb, "c": 1.0, "d": 0.1}, shape=(("a", "c"), "d"))
    [neg] = _nodes(plan, NegationFilter)
    pushed, top = _negation_costs(rb)
    assert dict(neg.costs) == pytest.approx({"pushed": pushed, "matches": top})
    assert neg.placement == placement
    assert (pushed < top) == (placement == "pushed")
    if placement == "pushed":
        assert neg.input.vars == ("a", "c")
    else:
        assert plan.root is neg
    tree = describe(plan)
    assert "choice_costs" in _find(tree, "negation")
    assert f"placement={placement} (cost pushed {pushed:.3g}, matches {top:.3g})" in to_text(tree)


def test_negation_placement_without_statistics_is_the_rule():
    plan = physical_plan(logical_plan(parse(NEG)), Options(), (("a", "c"), "d"))
    [neg] = _nodes(plan, NegationFilter)
    assert neg.placement == "pushed" and neg.costs == () and neg.input.vars == ("a", "c")


SEQ2 = "PATTERN SEQ(A a, B b) WITHIN 10"


def _driver_costs(ra: float, rb: float) -> tuple[float, float]:
    """The SEQ join (a, b) under each driver, by hand: L = ra T, R = rb T, pairs = ra rb T W."""
    L, R, pairs = ra * T, rb * T, ra * rb * T * W
    right = L + R * min(1.0, L) * math.log2(L + 2) + pairs
    left = L * math.log2(R + 2) + pairs * math.log2(pairs + 2)
    return right, left


@pytest.mark.parametrize("ra, rb, driver", [(0.01, 10.0, "left"), (1.0, 1.0, "right"), (10.0, 0.01, "right")])
def test_join_driver_follows_the_cheaper_loop(ra, rb, driver):
    plan = _plan(SEQ2, {"a": ra, "b": rb})
    [join] = _nodes(plan, SeqJoin)
    right, left = _driver_costs(ra, rb)
    assert dict(join.costs) == pytest.approx({"right": right, "left": left})
    assert join.driver == driver
    assert f"driver={driver} (cost right {right:.3g}, left {left:.3g})" in to_text(describe(plan))


def _events_stats(rates: dict, events: float) -> Statistics:
    return dataclasses.replace(_stats(rates), events=events)


@pytest.mark.parametrize("events, path", [(2_000.0, "right+rows"), (1e6, "left")])
def test_the_final_join_writes_rows_only_where_its_position_passes_pay(events, path):
    # SEQ(a, b), ra = rb = 1: L = R = 1000 records, 10^4 matches (ra rb T W), one partition.  The right
    # driver's loop is L + R log2(L + 2); its pairs are then put in canonical order (m log2(m + 2)); its rows
    # are written in place at 3 - 1 a row (a right leaf's pairs counted by two pointers, no counting pass)
    # through two passes over the table's positions (0.4 each: a right leaf)
    loop = 1000 + 1000 * math.log2(1002)
    m = 1e4
    costs = {"right": loop + m + m * math.log2(m + 2), "right+rows": loop + 2 * m + 0.4 * events * 2,
             "left": 1000 * math.log2(1002) + m * math.log2(m + 2)}
    plan = physical_plan(logical_plan(parse(SEQ2)), Options(planner="greedy"), None,
                         _events_stats({"a": 1.0, "b": 1.0}, events), W)
    [join] = _nodes(plan, SeqJoin)
    assert dict(join.costs) == pytest.approx(costs)
    assert min(costs, key=costs.get) == path
    assert (join.driver, join.rows) == ({"left": "left"}.get(path, "right"), path == "right+rows")


@pytest.mark.parametrize("events, rows", [(3_000.0, True), (1e7, False)])
def test_a_right_deep_root_over_a_left_leaf_keeps_its_pairs_when_matches_are_few(events, rows):
    # (a, (b, c)), every rate 1: (b, c) holds rb rc T W = 10^4 records, the root 3/2 * 1/C(3, 1) ra rb rc T W^2
    # = 50,000 matches (k 3 / (1 * 2); the share of (a, bc) pairs in order, (1/3!) / (1/2!)).  Its right input
    # is no leaf, so only the right driver: its loop L + R log2(L + 2) with L = 1000, then the pairs in
    # canonical order or the rows through one pass over the positions (a left leaf).  10^7 positions for
    # 50,000 matches: the pass costs 4 * 10^6, the pairs' order 7.8 * 10^5
    loop = 1000 + 1e4 * math.log2(1002)
    m = 50_000
    costs = {"right": loop + m + m * math.log2(m + 2), "right+rows": loop + 3 * m + 0.4 * events}
    plan = physical_plan(logical_plan(parse("PATTERN SEQ(A a, B b, C c) WITHIN 10")), Options(planner="greedy"),
                         ("a", ("b", "c")), _events_stats({"a": 1.0, "b": 1.0, "c": 1.0}, events), W)
    [root] = [n for n in _nodes(plan, SeqJoin) if len(n.vars) == 3]  # under the semi-join reduction
    assert root.driver == "right" and root.left == Scan("a", ("A",))
    assert dict(root.costs) == pytest.approx(costs)
    assert root.rows is rows
    text = to_text(describe(plan))
    assert ("matches from its pairs" in text) is not rows
    assert ("writes_rows" in _find(describe(plan), "SEQ join")) is not rows


def test_join_driver_without_statistics_is_the_rule():
    [join] = _nodes(physical_plan(logical_plan(parse(SEQ2)), Options()), SeqJoin)
    assert join.driver == "smaller" and join.costs == ()


def _find(tree, op):
    if tree["op"] == op:
        return tree
    return next(f for c in tree["children"] if (f := _find(c, op)) is not None) if tree["children"] else None


# --- every choice gives the reference's matches ------------------------------------------------


def _drivers(plan, driver):
    """``plan`` with every SEQ join over a leaf driven by ``driver`` (the others keep the right)."""
    def drive(n):
        if isinstance(n, SeqJoin) and isinstance(n.right, Scan):
            return dataclasses.replace(n, driver=driver)
        return n
    return dataclasses.replace(plan, root=rebuild_joins(plan.root, drive))


def _pairs_at_root(plan):
    """``plan`` with every SEQ join making its pairs rather than the match table's rows (:attr:`SeqJoin.rows`)."""
    def pairs(n):
        return dataclasses.replace(n, rows=False) if isinstance(n, SeqJoin) else n
    return dataclasses.replace(plan, root=rebuild_joins(plan.root, pairs))


def _on_top(plan):
    """``plan`` with every pushed negation lifted over whole matches."""
    lifted = []

    def rec(n):
        if isinstance(n, Scan):
            return n
        if isinstance(n, NegationFilter) and n.placement == "pushed":
            lifted.append(n.neg)
            return rec(n.input)
        if hasattr(n, "input"):
            return dataclasses.replace(n, input=rec(n.input))
        return dataclasses.replace(n, left=rec(n.left), right=rec(n.right))
    root = rec(plan.root)
    for neg in lifted:
        root = NegationFilter(root, neg, "matches")
    return dataclasses.replace(plan, root=root)


# patterns with a pushed negation or a SEQ join over a leaf, from the differential corpus
def _choices(seed):
    pattern, order = gen_pattern(seed)
    try:
        plan = runtime.check_supported(pattern, Options(order=order))
    except UnsupportedPatternError:
        return None
    pushed = any(isinstance(n, NegationFilter) and n.placement == "pushed" for n in plan.nodes())
    return pushed or any(isinstance(n, SeqJoin) and isinstance(n.right, Scan) for n in plan.nodes())


SEEDS = [s for s in range(200) if _choices(s)][:20]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_driver_and_placement_finds_the_reference_matches(seed):
    pattern, order = gen_pattern(seed)
    opts = Options(order=order)
    base = runtime.check_supported(pattern, opts)
    variants = [_drivers(base, d) for d in ("left", "right")] + [_on_top(_drivers(base, "left")), _on_top(base)]
    variants += [_pairs_at_root(v) for v in variants]

    @settings(max_examples=6, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(streams(pattern), st.sampled_from(range(len(variants))))
    def run(df, which):
        table = build_event_table(df, [pattern], type="type")
        names = _positive_names(pattern.body)
        [ref] = reference_evaluate([pattern], table, opts)
        [mt] = runtime.evaluate([pattern], build_event_table(df, [pattern], type="type"), opts,
                                plan=variants[which])
        assert _as_tuples(mt, names) == _as_tuples(ref, names), which
    run()


@pytest.mark.parametrize("text", ["PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN 5",
                                  "PATTERN SEQ(A a, B b, A c) WITHIN 4 EVENTS"])
@pytest.mark.parametrize("order", ["position", "strict_ts"])
def test_the_final_join_finds_the_reference_matches_by_rows_and_by_pairs(text, order, monkeypatch):
    # the root of either tree with nothing left to test writes the rows itself (rows=True) or makes its
    # pairs (rows=False), under each driver a leaf allows: every way, the reference's matches in its order
    from jitcep.execute import join as join_executor
    wrote = []
    real = join_executor.seq_join_rows
    monkeypatch.setattr(join_executor, "seq_join_rows", lambda *a, **k: wrote.append(1) or real(*a, **k))
    # the final join's own kernels, not a SEQ of three leaves written from the leaves (which ignores the
    # root's driver and rows: tests/test_compiled_seq3_leaves.py)
    monkeypatch.setattr(join_executor, "_leaf_chain", lambda node, state: None)
    pattern = parse(text)
    opts = Options(order=order)
    variants = []
    for shape in ((("a", "b"), "c"), ("a", ("b", "c"))):
        plan = physical_plan(logical_plan(pattern), opts, shape)
        reduced = isinstance(plan.root, SemiJoinReduce)
        join = plan.root.input if reduced else plan.root
        for d in ("left", "right") if isinstance(join.right, Scan) else ("right",):
            for r in (True, False):
                root = dataclasses.replace(join, driver=d, rows=r)
                variants.append(dataclasses.replace(plan, root=dataclasses.replace(plan.root, input=root)
                                                    if reduced else root))

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(streams(pattern, extra=8))
    def run(df):
        table = build_event_table(df, [pattern], type="type")
        [ref] = reference_evaluate([pattern], table, opts)
        want, first = _as_tuples(ref, ["a", "b", "c"]), None
        for plan in variants:
            root = plan.root.input if isinstance(plan.root, SemiJoinReduce) else plan.root
            wrote.clear()
            [mt] = runtime.evaluate([pattern], build_event_table(df, [pattern], type="type"), opts, plan=plan)
            assert _as_tuples(mt, ["a", "b", "c"]) == want, plan.root
            # the rows only where the plan lets the right-driven root write them (a non-empty left input)
            assert bool(wrote) <= (root.rows and root.driver == "right"), plan.root
            if root.rows and root.driver == "right" and len(want):
                assert wrote, plan.root
            rows = mt.to_bindings()  # and in one order (the canonical one, semantics section 11) every way
            first = rows if first is None else first
            assert rows == first, plan.root
    run()


def test_the_corpus_has_both_choices():
    plans = []
    for s in SEEDS:
        pattern, order = gen_pattern(s)
        plans.append(runtime.check_supported(pattern, Options(order=order)))
    assert any(isinstance(n, NegationFilter) and n.placement == "pushed" for p in plans for n in p.nodes())
    assert any(isinstance(n, SeqJoin) and isinstance(n.right, Scan) for p in plans for n in p.nodes())


# --- what the join-order problem and ZStream's model see of the physical operators ------------------


def test_a_negation_thins_the_partial_matches_of_its_anchor():
    # SEQ(a, !n, c, d): n's range lies between a and c, so every partial match holding a and c passed the
    # negation (Kolchinsky & Schuster 4: checked at the earliest point): their pair factor is the order's
    # 1/2 times the chance that no n falls between a and c, c - a = W x with x uniform over the (a, c)
    # records: E[exp(-rn W x)] = (1 - e^(-rn W)) / (rn W)
    from jitcep.plan.planner.cardinality import join_problem

    logical = logical_plan(parse(NEG))
    p = join_problem(logical, _stats({"a": 1.0, "n": 0.3, "c": 1.0, "d": 1.0}), W)
    a, c, d = p.units.index("a"), p.units.index("c"), p.units.index("d")
    assert p.sel[a][c] == pytest.approx(0.5 * -math.expm1(-0.3 * W) / (0.3 * W))
    assert p.sel[a][d] == p.sel[c][d] == 0.5


def test_the_structure_join_problem_keeps_per_logical_plan_is_no_other_plans_or_statistics():
    # join_problem keeps what it reads of the pattern's structure per logical plan object (the order
    # factors, conjunct counts, before), never the statistics: two plans, one logical plan under two
    # statistics, and a plan again after another, each give their own numbers (counted by hand)
    from jitcep.plan.planner.cardinality import join_problem

    seq = logical_plan(parse("PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 10"))
    conj = logical_plan(parse("PATTERN AND(A a, B b, C c) WHERE a.x < c.x AND a.y = b.y WITHIN 10"))
    ones = _stats({"a": 1.0, "b": 1.0, "c": 1.0})
    for _ in range(2):
        p = join_problem(seq, ones, W)
        assert (p.order[0][1], p.predicates[0][1], p.predicates[0][2], p.before[0][1]) == (0.5, 0, 1, True)
        assert p.card == (10.0, 10.0, 10.0) and p.sel[0][2] == 0.5 * 0.5  # default selectivity, Pt
        q = join_problem(conj, ones, W)
        assert (q.order[0][1], q.predicates[0][1], q.predicates[0][2], q.before[0][1]) == (1.0, 1, 1, False)
        given = Statistics({"a": 2.0, "b": 1.0, "c": 1.0}, {"a.x < c.x": 0.1}, 1, 1.0, {}, T)
        p = join_problem(seq, given, W)
        assert p.card == (20.0, 10.0, 10.0) and p.sel[0][2] == pytest.approx(0.1 * 0.5)


def test_zstream_prices_a_seq_joined_out_of_order_as_an_and_join():
    # SEQ(a, b, c), every card W * r = 10, no predicates (ZStream Table 2, k n = 0, p = 1):
    # ((a, b), c): SEQ (a; b): C_i = 10 * 10 * 1/2 = 50, C_o = 50; then SEQ ((a, b); c): Pt the share of
    #   (ab, c) pairs in order, (1/3!) / (1/2!) = 1/3: C_i = 50 * 10 / 3 = 166.67 = C_o: 433.33 in all.
    # ((a, c), b): SEQ (a; c) as above, 100; then b lies between a and c: an AND join reads every pair,
    #   C_i = 50 * 10 = 500, keeps C_o = 500 * 1/3 = 166.67: 766.67 in all.
    from jitcep.plan.planner.cardinality import join_problem
    from jitcep.plan.planner.cost import zstream

    p = join_problem(logical_plan(parse("PATTERN SEQ(A a, B b, C c) WITHIN 10")),
                     _stats({"a": 1.0, "b": 1.0, "c": 1.0}), W)
    assert zstream(p, ((0, 1), 2)) == pytest.approx(100 + 2 * 500 / 3)
    assert zstream(p, ((0, 2), 1)) == pytest.approx(100 + 500 + 500 / 3)
