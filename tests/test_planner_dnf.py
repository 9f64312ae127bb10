"""Patterns with an OR planned in DNF, one plan per alternative (Kolchinsky & Schuster 2018, section 4).

The DNF rewrite on hand-written fixtures; the choice between the OR as one
unit and the DNF form on a small cost table computed by hand; explain showing
the form and both costs; and every planner, in both forms, finding the
reference evaluator's matches on generated nested-OR patterns and streams.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep import config, runtime
from jitcep.errors import UnsupportedPatternError
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.pattern import expr as E
from jitcep.pattern.dnf import alternatives, count, has_or
from jitcep.pattern.normalize import normalize
from jitcep.pattern.parser import parse
from jitcep.pattern.printer import expr_to_text, node_to_text
from jitcep.plan.explain import describe, to_text
from jitcep.plan.logical import logical_plan
from jitcep.plan.operators import DisjunctUnion, OutputPolicy, SemiJoinReduce, SeqJoin, Union
from jitcep.plan.planner.statistics import Statistics
from jitcep.plan.rules import physical_plan
from jitcep.reference import evaluate as reference_evaluate
from test_planners import PLANNER_MODELS
from test_compiled_differential import (_as_tuples, _kleene_tuples, _positive_names, gen_kleene_form, gen_pattern,
                                       kleene_streams, streams)

# --- the rewrite ------------------------------------------------------------------------------------------

DNF_FIXTURES = [
    ("SEQ(A a, OR(B b, C c), D d)", ["SEQ(A a, B b, D d)", "SEQ(A a, C c, D d)"]),
    ("AND(OR(A a, B b), OR(C c, D d))", ["AND(A a, C c)", "AND(A a, D d)", "AND(B b, C c)", "AND(B b, D d)"]),
    # a branch that is itself a SEQ merges into the outer SEQ (normal form, semantics 5)
    ("SEQ(A a, OR(SEQ(B b, C c), D d))", ["SEQ(A a, B b, C c)", "SEQ(A a, D d)"]),
    ("OR(SEQ(A a, OR(B b, C c)), D d)", ["SEQ(A a, B b)", "SEQ(A a, C c)", "D d"]),
    ("SEQ(A a, !N n, OR(B b, AND(C c, D d)))", ["SEQ(A a, !N n, B b)", "SEQ(A a, !N n, AND(C c, D d))"]),
    ("AND(!N n, OR(A a, SEQ(B b, C c)))", ["AND(!N n, A a)", "AND(!N n, SEQ(B b, C c))"]),
]


@pytest.mark.parametrize("body, expected", DNF_FIXTURES)
def test_dnf_alternatives(body, expected):
    pattern = parse(f"PATTERN {body} WITHIN 5")
    assert count(pattern.body) == len(expected)
    assert [node_to_text(p.body) for p in alternatives(pattern)] == expected


def test_each_alternative_keeps_the_conjuncts_over_its_variables():
    pattern = parse("PATTERN SEQ(A a, OR(SEQ(B b, E e), C c), !N n, D d) WHERE [k] AND a.x < b.x AND c.y = 1 "
                    "AND n.z > c.z AND a.x < d.x AND e.x = 2 AND 1 < 2 WITHIN 5")
    got = [[expr_to_text(c) for c in E.conjuncts(p.where)] for p in alternatives(pattern)]
    assert got == [["[k]", "a.x < b.x", "a.x < d.x", "e.x = 2", "1 < 2"],
                   ["[k]", "c.y = 1", "n.z > c.z", "a.x < d.x", "1 < 2"]]


def test_or_only_inside_a_kleene_body_is_not_split():
    assert not has_or(normalize(parse("PATTERN SEQ(A a, B+ b[]) WITHIN 5").body))
    assert has_or(normalize(parse("PATTERN SEQ(A a, OR(B b, C c)) WITHIN 5").body))


# --- the choice on a small cost table ----------------------------------------------------------------------

T, W = 1000.0, 10.0  # the table's extent and the window, in ts units


def _plan(text: str, rates: dict, cost_model="intermediate", form=None, planner="greedy"):
    stats = Statistics(dict(rates), {}, 1, 1.0, {v: "user" for v in rates}, T)
    return physical_plan(logical_plan(parse(text)), Options(planner=planner, cost_model=cost_model), None, stats,
                         W, form=form)


OR2 = "PATTERN SEQ(A a, OR(B b, C c)) WITHIN 10"


def _by_hand(ra: float, rb: float, rc: float) -> tuple[float, float]:
    """Cost_tree of both forms of OR2 (every operator's estimated records, summed), by hand.

    Records: a scan ``r T``; a SEQ join of one a and one b ``ra T * rb T * Pt 1/2 * k 2 / (T / W) = ra rb T W``;
    a union the sum of its inputs.  Unit: scans a, b, c, the union (b | c), the join of a with it.
    DNF: per alternative a scan of a, of b (or c) and their join, then the union of the two joins.
    """
    joins = ra * rb * T * W + ra * rc * T * W
    unit = (ra + rb + rc) * T + (rb + rc) * T + joins
    dnf = 2 * ra * T + (rb + rc) * T + joins + joins
    return unit, dnf


@pytest.mark.parametrize("rates, form", [
    # a rare, b and c common: the unit plan reads the big union once more than the DNF's two joins
    ({"a": 0.001, "b": 0.5, "c": 0.5}, "dnf"),
    # a common, b and c rare: the DNF scans a twice and unites twice as many records
    ({"a": 1.0, "b": 0.01, "c": 0.01}, "unit"),
])
def test_the_cheaper_form_is_chosen(rates, form):
    plan = _plan(OR2, rates)
    unit, dnf = _by_hand(rates["a"], rates["b"], rates["c"])
    costs = dict(plan.form_costs)
    assert costs["unit"] == pytest.approx(unit) and costs["dnf"] == pytest.approx(dnf)
    assert plan.form == form
    assert isinstance(plan.root, DisjunctUnion) == (form == "dnf")
    if form == "dnf":
        assert [n.vars for n in plan.root.inputs] == [("a", "b"), ("a", "c")]
        assert plan.root.vars == ("a", "b", "c")


@pytest.mark.parametrize("cost_model", ["intermediate", "zstream"])
def test_dnf_lets_each_alternative_be_ordered_on_its_own(cost_model):
    # each branch joins one outside variable selectively: (a, b) in one, (c, d) in the other.  As one
    # unit the OR (b | c) is united first, so neither selective join can come first; in DNF each
    # alternative starts from its own
    text = "PATTERN SEQ(A a, OR(B b, C c), D d) WHERE a.x = b.x AND c.x = d.x WITHIN 10"
    stats = Statistics({v: 0.5 for v in "abcd"}, {"a.x = b.x": 0.001, "c.x = d.x": 0.001}, 1, 1.0, {}, T)
    plan = physical_plan(logical_plan(parse(text)), Options(planner="dp_bushy", cost_model=cost_model), None,
                         stats, W)
    assert plan.form == "dnf"
    # each alternative is a SEQ of three (its joins under a semi-join reduction where that pays; here
    # every event lies on ~9 chains of types and window, so none)
    joins = [alt.input if isinstance(alt, SemiJoinReduce) else alt for alt in plan.root.inputs]
    assert all(isinstance(j, SeqJoin) and len(j.vars) == 3 for j in joins)
    first = [alt.left if set(alt.left.vars) != {"a"} else alt.right for alt in joins]
    assert [(n.vars, [expr_to_text(p) for p in n.predicates]) for n in first] == [
        (("a", "b"), ["a.x = b.x"]), (("c", "d"), ["c.x = d.x"])]
    unit = physical_plan(logical_plan(parse(text)), Options(planner="dp_bushy", cost_model=cost_model), None,
                         stats, W, form="unit")
    assert unit.form == "unit" and dict(unit.form_costs) == dict(plan.form_costs)


def test_without_a_planner_the_or_stays_one_unit():
    plan = physical_plan(logical_plan(parse(OR2)), Options(planner="trivial"))
    assert plan.form is None and not plan.form_costs
    assert isinstance(plan.root.right, Union)


def test_past_the_bound_the_or_stays_one_unit_with_a_note(monkeypatch):
    monkeypatch.setattr(config, "DNF_MAX_ALTERNATIVES", 1)
    plan = _plan(OR2, {"a": 0.001, "b": 0.5, "c": 0.5})
    assert plan.form is None and not isinstance(plan.root, DisjunctUnion)
    assert plan.notes == ("OR planned as one unit, not in DNF: 2 alternatives, over DNF_MAX_ALTERNATIVES=1",)
    assert "planner: OR planned as one unit" in to_text(describe(plan))


def test_a_closure_is_collected_in_its_alternatives():
    plan = _plan("PATTERN SEQ(A a, OR(B+ b[], C c), D d) WITHIN 10", {"a": 0.001, "b": 0.5, "c": 0.5, "d": 0.5},
                 form="dnf")
    assert not plan.notes and isinstance(plan.root, DisjunctUnion)
    assert plan.list_vars == ("b",) and plan.root.vars == ("a", "c", "d")
    with pytest.raises(UnsupportedPatternError, match="no OR"):
        _plan("PATTERN SEQ(A a, B b) WITHIN 10", {}, form="dnf")


def test_output_policy_applies_over_the_union():
    stats = Statistics({"a": 0.001, "b": 0.5, "c": 0.5}, {}, 1, 1.0, {}, T)
    plan = physical_plan(logical_plan(parse(OR2)), Options(planner="greedy", output="non_overlapping"), None,
                         stats, W, form="dnf")
    assert isinstance(plan.root, OutputPolicy) and isinstance(plan.root.input, DisjunctUnion)
    assert not any(isinstance(n, OutputPolicy) for n in plan.root.input.inputs)


# --- explain -----------------------------------------------------------------------------------------------


def test_explain_shows_the_dnf_form_and_both_costs():
    plan = _plan(OR2, {"a": 0.001, "b": 0.5, "c": 0.5})
    d = describe(plan)
    assert d["form"] == "dnf" and d["form_costs"] == pytest.approx(dict(zip(("unit", "dnf"), _by_hand(0.001, 0.5,
                                                                                                     0.5))))
    text = to_text(d)
    lines = text.splitlines()
    assert lines[0].endswith("form=dnf (cost unit 2.01e+03, dnf 1.02e+03)")
    assert lines[1].strip().startswith("statistics:")
    assert lines[2].strip().startswith("DNF union (a, b, c)  est_rows=10")
    assert [ln.strip().split("  ")[0] for ln in lines[3:]] == ["SEQ join (a, b)", "scan (a)", "scan (b)",
                                                               "SEQ join (a, c)", "scan (a)", "scan (c)"]


def test_explain_through_the_api_with_user_statistics():
    q = jitcep.compile(OR2, planner="greedy", cost_model="intermediate")
    tree = q.explain(format="dict", statistics={"rates": {"a": 0.001, "b": 0.5, "c": 0.5}})
    assert tree["form"] in ("unit", "dnf")
    assert tree["form_costs"][tree["form"]] == min(tree["form_costs"].values())
    assert (tree["children"][0]["op"] == "DNF union") == (tree["form"] == "dnf")


# --- every planner, both forms, against the reference --------------------------------------------------------


def _nested_or_seeds(limit: int) -> list[int]:
    """Corpus patterns of 3 to 6 positive variables with an OR, that the compiled engine runs."""
    out = []
    for s in range(3000):
        pattern, order = gen_pattern(s)
        if has_or(normalize(pattern.body)) and 3 <= len(_positive_names(pattern.body)) <= 6:
            try:
                runtime.check_supported(pattern, Options(order=order))
            except UnsupportedPatternError:
                continue
            out.append(s)
            if len(out) == limit:
                break
    return out


SEEDS = _nested_or_seeds(60)
FAST = SEEDS[:10]


def _check(seed: int, examples: int):
    pattern, order = gen_pattern(seed)
    names = _positive_names(pattern.body)

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(streams(pattern), st.sampled_from(PLANNER_MODELS),
           st.sampled_from(["dnf", None]), st.sampled_from(["all", "non_overlapping", "match_single"]))
    def run(df, planner_model, form, output):
        planner, cost_model = planner_model
        table = build_event_table(df, [pattern], type="type")
        opts = Options(order=order, planner=planner, cost_model=cost_model, planner_seed=seed, output=output)
        [ref] = reference_evaluate([pattern], table, Options(order=order, output=output))
        if form is None:  # the form the planner chooses (statistics={}: "auto" plans small tables too)
            [mt] = runtime.evaluate([pattern], table, opts, statistics={})
        else:  # the DNF form whatever it costs, each alternative planned by ``planner`` on the estimates
            plan = runtime.costed(pattern, opts, table, {})
            plan = physical_plan(runtime._logical(pattern), opts, None, plan.statistics, plan.span, form=form)
            assert isinstance(plan.root, (DisjunctUnion, OutputPolicy))
            [mt] = runtime.evaluate([pattern], table, opts, plan=plan)
        assert _as_tuples(mt, names) == _as_tuples(ref, names), (planner, cost_model, form, output)
    run()


@pytest.mark.parametrize("seed", FAST)
def test_every_planner_in_both_forms_finds_the_reference_matches(seed):
    _check(seed, 4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS[len(FAST):])
def test_every_planner_in_both_forms_finds_the_reference_matches_sweep(seed):
    _check(seed, 12)


def test_the_corpus_has_nested_ors_of_every_kind():
    """The seeds hold an OR under a SEQ, under an AND, at the top, and alternatives with negations."""
    bodies = [normalize(gen_pattern(s)[0].body) for s in SEEDS]
    kinds = {type(b).__name__ for b in bodies}
    assert {"Seq", "Conj", "Disj"} <= kinds
    assert any("!" in node_to_text(b) for b in bodies)


def test_an_or_of_one_item_is_that_item():
    plan = _plan("PATTERN SEQ(A a, OR(B b), C c) WITHIN 10", {"a": 0.1, "b": 0.1, "c": 0.1})
    assert plan.form is None and not plan.notes


@pytest.mark.parametrize("kw", [{}, {"partition_by": "s"}, {"threads": 2}, {"partition_by": "s", "threads": 2}])
def test_the_dnf_form_through_the_api_equals_the_reference(kw):
    rng = np.random.default_rng(3)
    n = 3000
    df = pl.DataFrame({"ts": np.sort(rng.integers(0, n, n)), "type": rng.choice(list("ABCD"), n),
                       "x": rng.integers(0, 50, n), "s": rng.integers(0, 3, n)})
    text = "PATTERN SEQ(A a, OR(B b, C c), D d) WHERE a.x = b.x AND c.x = d.x WITHIN 10"
    stats = {"selectivities": {"a.x = b.x": 0.001, "c.x = d.x": 0.001}}
    q = jitcep.compile(text, planner="greedy", cost_model="intermediate")
    part = {k: v for k, v in kw.items() if k == "partition_by"}
    assert q.explain(df, type="type", format="dict", statistics=stats, **part)["form"] == "dnf"
    got = q.run(df, type="type", statistics=stats, **kw).drop("match_id")
    ref = q.run(df, type="type", engine="reference", **part).drop("match_id")
    assert len(got) > 10
    assert got.sort(got.columns).equals(ref.sort(ref.columns))


# closures in an OR branch, alone in one, or with no single variable beside them (kleene="all"; "maximal"
# takes only closures that are elements of a SEQ, semantics 6.2)
KLEENE_SEEDS = [(form, s) for form in ("or", "anchored") for s in range(30)
                if has_or(normalize(gen_kleene_form(s, form, "all")[0].body))]


@pytest.mark.parametrize("form, seed", KLEENE_SEEDS[:4] + KLEENE_SEEDS[-2:])
def test_closures_in_the_dnf_form_find_the_reference_matches(form, seed):
    pattern, order = gen_kleene_form(seed, form, "all")
    opts = Options(order=order, kleene="all")
    runtime.check_supported(pattern, opts)
    plan = physical_plan(runtime._logical(pattern), opts, form="dnf")

    @settings(max_examples=10, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(kleene_streams(pattern))
    def run(df):
        table = build_event_table(df, [pattern], type="type")
        [ref] = reference_evaluate([pattern], table, opts)
        [mt] = runtime.evaluate([pattern], table, opts, plan=plan)
        assert _kleene_tuples(mt) == _kleene_tuples(ref)
    run()
