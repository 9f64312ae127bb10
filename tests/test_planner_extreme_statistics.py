"""Planning on extreme user statistics: every planner returns a plan whose printed estimates are finite,
or a named error (docs/planning.md, "Extreme statistics"; jitcep/plan/planner/finite.py).

Rates of 1e30 events a unit and more over a window of 10^9 overflow a product of floats to inf, and
inf * 0 (a zero rate or selectivity beside them) is NaN, which every comparison answers False: a search,
``auto``'s choice or a rule comparing costs would choose by the order it asks, and explain would print
``inf`` / ``nan``.  The estimates saturate at a finite value instead; the matches never depend on it
(checked against the reference evaluator on a small table).
"""

from __future__ import annotations

import math
import typing

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitcep
from jitcep._typing import CostModel, Planner
from jitcep.errors import JitcepError
from jitcep.plan.planner.finite import MAX_ESTIMATE, cards, saturated

# (pattern, the conjuncts a user may give a selectivity for)
PATTERNS = [
    ("PATTERN SEQ(A a, B b, C c, D d) WHERE a.x < b.x AND c.x > d.x WITHIN 1000000000", ["a.x < b.x", "c.x > d.x"]),
    ("PATTERN SEQ(A a, !N n, B b, C c) WHERE a.x < c.x AND n.x > a.x WITHIN 1000000000", ["a.x < c.x"]),
    ("PATTERN SEQ(A a, B+ b[], C c, D d) WHERE a.x < c.x WITHIN 1000000000", ["a.x < c.x"]),
    ("PATTERN AND(A a, B b, SEQ(C c, D d)) WHERE a.x < d.x WITHIN 1000000000", ["a.x < d.x"]),
    ("PATTERN SEQ(A a, KL(SEQ(B b, E e))+, C c, D d) WHERE [k] WITHIN 1000000000", []),
    ("PATTERN SEQ(A a, OR(B b, C c), D d) WHERE a.x < d.x WITHIN 1000000000", ["a.x < d.x"]),
]
VARIABLES = "abcden"
RATES = st.sampled_from([0.0, 1e-300, 1e-3, 1.0, 1e30, 1e100, 1e200, 1e300, 1.7e308])
SELECTIVITIES = st.sampled_from([0.0, 1e-300, 1e-12, 0.5, 1.0])
PLANNERS = [p for p in typing.get_args(Planner) if p != "trivial"]
COST_MODELS = list(typing.get_args(CostModel))

EVENTS = pl.DataFrame({"type": list("ABEBECDNAD"), "ts": list(range(10)), "x": [0, 1, 2, 3, 1, 2, 5, 0, 1, 4],
                       "k": [1] * 10})


def _numbers(tree):
    """Every estimate the explain dict prints: est_rows, cost, and the costs beside each choice."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key in ("est_rows", "cost") and value is not None:
                yield key, value
            elif key in ("choice_costs", "form_costs"):
                yield from ((f"{key}[{k}]", v) for k, v in value.items())
            elif key == "children":
                for child in value:
                    yield from _numbers(child)


@settings(max_examples=120, deadline=None, database=None)
@given(case=st.sampled_from(PATTERNS), rates=st.dictionaries(st.sampled_from(VARIABLES), RATES, max_size=6),
       sels=st.lists(SELECTIVITIES, min_size=2, max_size=2), partitions=st.sampled_from([1, 10**6, 10**300]),
       planner=st.sampled_from(PLANNERS), model=st.sampled_from(COST_MODELS), events=st.booleans())
def test_every_planner_prints_finite_estimates_on_extreme_statistics(case, rates, sels, partitions, planner, model,
                                                                   events):
    text, conjuncts = case
    stats = {"rates": {v: r for v, r in rates.items() if f" {v}" in text},
             "selectivities": dict(zip(conjuncts, sels)), "partitions": partitions}
    try:
        q = jitcep.compile(text, planner=planner, cost_model=model)
        tree = q.explain(EVENTS if events else None, type="type", statistics=stats, format="dict")
    except JitcepError:
        return  # a named error (a cost model the planner does not take, ...) is a fine answer
    printed = list(_numbers(tree))
    assert printed, "a plan chosen on statistics prints its estimates"
    bad = [(k, v) for k, v in printed if not (math.isfinite(v) and 0.0 <= v)]
    assert not bad, (text, stats, planner, model, bad)


@pytest.mark.parametrize("planner", ["greedy", "dp_bushy", "zstream", "auto"])
def test_a_plan_on_overflowing_statistics_finds_the_reference_matches(planner):
    # the plan is chosen on saturated estimates (its driver among them); the matches are the reference's
    text = "PATTERN SEQ(A a, B+ b[], C c, D d) WHERE a.x < c.x WITHIN 1000000000"
    stats = {"rates": {"a": 1e300, "b": 1e300, "c": 1e300}, "selectivities": {"a.x < c.x": 0.0}}
    q = jitcep.compile(text, planner=planner)
    assert q.run(EVENTS, type="type", statistics=stats).equals(q.run(EVENTS, type="type", engine="reference"))


def test_saturated_is_the_value_below_the_bound_zero_with_a_zero_factor_else_the_bound():
    assert saturated(2.5, 5.0, 0.5) == 2.5
    assert saturated(MAX_ESTIMATE, 1.0) == MAX_ESTIMATE
    assert saturated(math.inf * 0.0, math.inf, 0.0) == 0.0      # NaN from inf * 0: no record
    assert saturated(1e300 * 1e300, 1e300, 1e300) == MAX_ESTIMATE  # overflow
    assert saturated(1e200, 1e100, 1e100) == MAX_ESTIMATE         # a float past the bound
    assert saturated(math.inf - math.inf) == MAX_ESTIMATE          # NaN, no zero factor: unknown, huge


def test_cards_are_untouched_below_the_bound_and_capped_largest_first_above_it():
    below = (1e10, 0.5, 3.0, 1e40)
    assert cards(below) is below
    # 1e300 and inf over 10 and 0.5: the product of max(1, c) is 1e150 with the two largest at sqrt(1e149)
    got = cards((1e300, 10.0, math.inf, 0.5))
    assert got[1:4:2] == (10.0, 0.5)
    assert got[0] == got[2] == pytest.approx(10 ** 74.5, rel=1e-9)
    # a NaN cardinality is capped as the largest are; the product of all never passes the bound
    got = cards((math.nan, 1e200, 1e-3))
    assert got[2] == 1e-3 and got[0] == got[1] == pytest.approx(1e75, rel=1e-9)
    # 24 units of 1e10: 1e240, each capped at 10^(150/24)
    got = cards((1e10,) * 24)
    assert all(c == pytest.approx(10 ** 6.25, rel=1e-9) for c in got)
    assert math.prod(got) == pytest.approx(MAX_ESTIMATE, rel=1e-6)
