"""Cost-based planning end to end: every planner finds the reference's matches; statistics steer plans.

The plan-generation algorithms and cost models have their own unit tests
(test_planner_algorithms.py, test_planner_cost.py, test_planner_statistics.py);
here they run inside the engine, on generated patterns and streams, against
the oracles.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep import runtime
from jitcep._typing import CostModel, Planner, allowed
from jitcep.errors import StatisticsError
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.plan.planner.algorithms import ALGORITHMS
from jitcep.plan.planner.cost import COST_MODELS
from jitcep.reference import evaluate as reference_evaluate
from test_compiled_differential import _as_tuples, _positive_names, gen_pattern, streams

PLANNERS = allowed(Planner)


def test_every_planner_and_cost_model_is_selectable():
    assert set(PLANNERS) == set(ALGORITHMS)
    assert set(allowed(CostModel)) <= set(COST_MODELS)


# every planner with every cost model it accepts (Cost_ord prices order-based plans only)
PLANNER_MODELS = [(p, m) for p in PLANNERS for m in allowed(CostModel)
                  if not (m == "order" and p in ("zstream", "zstream_ord", "dp_bushy"))]


# patterns of 3 to 6 variables from the differential corpus (the planner has a choice to make)
SEEDS = [s for s in range(400) if 3 <= len(_positive_names(gen_pattern(s)[0].body)) <= 6][:24]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_planner_finds_the_reference_matches(seed):
    pattern, order = gen_pattern(seed)

    @settings(max_examples=4, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(streams(pattern), st.sampled_from(PLANNER_MODELS))
    def run(df, planner_model):
        planner, cost_model = planner_model
        table = build_event_table(df, [pattern], type="type")
        names = _positive_names(pattern.body)
        [ref] = reference_evaluate([pattern], table, Options(order=order))
        opts = Options(order=order, planner=planner, cost_model=cost_model, planner_seed=seed)
        # statistics={}: "auto" plans these small tables too (without, it keeps the pattern order)
        [mt] = runtime.evaluate([pattern], build_event_table(df, [pattern], type="type"), opts, statistics={})
        assert _as_tuples(mt, names) == _as_tuples(ref, names), (planner, cost_model)
    run()


def _frame():
    # C is rare (every 50th event), A and B common; c.x > a.x keeps half of the (a, c) pairs;
    # above runtime.SMALL_TABLE and runtime.SMALL_WORK_TABLE, so "auto" plans it
    n = runtime.SMALL_WORK_TABLE + 1000
    types = ["C" if i % 50 == 0 else "AB"[i % 2] for i in range(n)]
    return pl.DataFrame({"type": types, "ts": list(range(n)), "x": [(i * 7919) % 100 for i in range(n)]})


TEXT = "PATTERN SEQ(A a, B b, C c) WHERE c.x > a.x WITHIN 20"


def _first_join(tree: dict) -> set:
    """The variables of the lowest join of a left-deep explain tree."""
    node = tree
    while node["children"] and node["children"][0]["op"] not in ("scan",):
        node = node["children"][0]
    return set(node["vars"])


def test_the_planner_starts_with_the_rare_event():
    df = _frame()
    trivial = jitcep.compile(TEXT, planner="trivial").explain(df, type="type", format="dict")
    assert _first_join(trivial) == {"a", "b"}
    for planner in ("efreq", "greedy", "dp_left_deep", "dp_bushy", "auto"):
        tree = jitcep.compile(TEXT, planner=planner).explain(df, type="type", format="dict")
        assert "c" in _first_join(tree), planner
    q = jitcep.compile(TEXT, planner="greedy")
    assert q.run(df, type="type").equals(jitcep.compile(TEXT).run(df, type="type"))


def test_auto_keeps_the_pattern_order_on_a_small_table():
    df = _frame()
    small = df.head(runtime.SMALL_TABLE - 1)
    auto = jitcep.compile(TEXT)  # the default planner
    assert auto.options.planner == "auto"
    assert _first_join(auto.explain(small, type="type", format="dict")) == {"a", "b"}
    assert _first_join(auto.explain(format="dict")) == {"a", "b"}  # no events, no statistics
    # given statistics, even none, it plans: on the sample of the small table, C is still the rare one
    assert "c" in _first_join(auto.explain(small, type="type", format="dict", statistics={}))
    assert "c" in _first_join(auto.explain(df.head(runtime.SMALL_WORK_TABLE), type="type", format="dict"))
    assert auto.run(small, type="type").equals(jitcep.compile(TEXT, planner="trivial").run(small, type="type"))


def test_auto_keeps_the_pattern_order_where_the_joins_are_bounded_small():
    # the frame above with its events 100 units apart: a window of 20 holds one event, so pattern order
    # builds at most 2880 (a) + 2880 x 1 x 1 (a, b) partial matches, under runtime.PLAN_MIN_WORK; over a
    # window of 10^6 every event is in one window and it plans again
    df = _frame().head(6000).with_columns(pl.col("ts") * 100)
    assert runtime.SMALL_TABLE <= df.height < runtime.SMALL_WORK_TABLE
    auto = jitcep.compile(TEXT)
    tree = auto.explain(df, type="type", format="dict")
    assert _first_join(tree) == {"a", "b"} and "statistics" not in tree
    # the semi-join reduction's rule reads the same counts: 2880 (a, b) records short of the chain
    note, reduction = tree["planner_notes"]
    assert "at most 5760 partial matches" in note and "2880 x 1 x 1" in note and "PLAN_MIN_WORK" in note
    assert "semi-join reduction left out: at most 2880 partial matches short of the whole chain" in reduction
    assert "planner: pattern order, no statistics" in auto.explain(df, type="type")
    assert auto.run(df, type="type").equals(jitcep.compile(TEXT, planner="trivial").run(df, type="type"))
    wide = jitcep.compile(TEXT.replace("WITHIN 20", "WITHIN 1000000"))
    assert "c" in _first_join(wide.explain(df, type="type", format="dict"))
    # given statistics, it plans on them whatever the bound
    assert "c" in _first_join(auto.explain(df, type="type", format="dict", statistics={}))
    # half the events in a burst of 30 units, the rest far apart: few per window on average, but the
    # bound counts the most one window holds, so it plans
    burst = _frame().head(6000).with_columns(pl.when(pl.col("ts") < 3000).then(pl.col("ts") // 100)
                                  .otherwise(pl.col("ts") * 1000).alias("ts"))
    assert "c" in _first_join(auto.explain(burst, type="type", format="dict"))


def test_user_statistics_steer_the_plan_and_are_shown_with_their_source():
    df = _frame()
    q = jitcep.compile(TEXT, planner="efreq")
    # say that A is the rare one: the plan starts from a
    tree = q.explain(df, type="type", format="dict", statistics={"rates": {"a": 1e-6}})
    assert "a" in _first_join(tree)
    st_ = tree["statistics"]
    # c has no filter and no key: its rate is its events counted by the run's grouping, over the extent
    assert st_["sources"]["a"] == "user" and st_["sources"]["c"] == "counted"
    assert all("est_rows" in n and "cost" in n for n in _nodes(tree["children"][0]))
    text = q.explain(df, type="type", statistics={"rates": {"a": 1e-6}, "partitions": 3})
    assert "statistics: rates" in text and "a=1e-06 (user)" in text
    # no key: one partition by default, overridden here; the skew is the default's
    assert "partitions 3 (user), skew 1 (default)" in text
    # every operator's line shows its estimated rows and cost, as the dict form's keys
    ops = [line for line in text.splitlines()[2:] if line.strip()]
    assert ops and all("est_rows=" in line and " cost=" in line for line in ops)


def test_a_filtered_rate_is_sampled_and_an_unfiltered_one_counted():
    df = _frame()
    st_ = jitcep.compile("PATTERN SEQ(A a, B b, C c) WHERE a.x >= 50 AND c.x > a.x WITHIN 20").explain(
        df, type="type", format="dict")["statistics"]
    # a's rate is its count times the sampled share its filter keeps; b's and c's are counts
    assert st_["sources"]["a"] == "sampled"
    assert st_["sources"]["b"] == st_["sources"]["c"] == "counted"
    assert st_["sources"]["c.x > a.x"] == "sampled"
    n_c = int((df["type"] == "C").sum())
    assert st_["rates"]["c"] == pytest.approx(n_c / (df.height - 1))


def test_analyze_shows_estimated_beside_measured_rows_and_time():
    df = _frame()  # above runtime.SMALL_TABLE: "auto" estimates and plans
    q = jitcep.compile(TEXT)
    tree = q.explain(df, type="type", analyze=True, format="dict")
    assert tree["statistics"]["sources"]["a"] == "counted"
    nodes = _nodes(tree["children"][0])
    assert all({"est_rows", "cost", "rows", "time_s"} <= set(n) for n in nodes)
    assert tree["rows"] == len(q.run(df, type="type"))  # the measured rows are the run's
    text = q.explain(df, type="type", analyze=True)
    ops = [line for line in text.splitlines()[2:] if line.strip()]
    assert ops and all("est_rows=" in line and " rows=" in line and " time=" in line for line in ops)


def _nodes(tree):
    out = [tree]
    for c in tree["children"]:
        out += _nodes(c)
    return out


def test_bad_statistics_are_named_errors_before_any_work(tmp_path):
    q = jitcep.compile(TEXT, planner="greedy")
    missing = tmp_path / "no_such_file.parquet"  # never read: the statistics are refused first
    for bad in ({"rates": {"z": 1.0}}, {"rates": {"a": -1.0}}, {"selectivities": {"c.x > a.x": 1.5}},
                {"selectivities": {"a.x = b.x": 0.1}}, "fast"):
        with pytest.raises(StatisticsError):
            q.run(missing, type="type", statistics=bad)
        with pytest.raises(StatisticsError):
            q.explain(missing, type="type", statistics=bad)


def test_plans_are_deterministic_for_a_seed(monkeypatch):
    # the same plan on a second compile while the wall clock jumps an hour at every reading, as on a
    # machine under any load: planning budgets are counted steps (planner/algorithms/_common.py)
    import time

    df = _frame()
    text = "PATTERN SEQ(A a, B b, C c, A d) WHERE c.x > a.x AND d.x < b.x WITHIN 20"
    first = {planner: jitcep.compile(text, planner=planner, planner_seed=7).explain(df, type="type")
             for planner in PLANNERS}
    now = [0.0]

    def slow_clock():
        now[0] += 3600.0
        return now[0]
    for fn in ("perf_counter", "monotonic", "time"):
        monkeypatch.setattr(time, fn, slow_clock)
    for planner in PLANNERS:
        again = jitcep.compile(text, planner=planner, planner_seed=7).explain(df, type="type")
        assert again == first[planner], planner


def test_explain_says_when_an_exact_search_fell_back_to_greedy():
    # 14 units: dp_bushy's 3^14 - 2^15 + 1 priced joins (4,766,585 steps) do not fit its 2,000,000, so it
    # returns greedy's plan at once; auto (50,000 steps) takes zstream_ord over greedy's order; 4 units fit
    wide = "PATTERN SEQ(" + ", ".join(f"A v{i}" for i in range(14)) + ") WITHIN 10"
    notes = {}
    for planner in ("dp_bushy", "dp_left_deep", "auto", "greedy"):
        tree = jitcep.compile(wide, planner=planner).explain(format="dict", statistics={})
        notes[planner] = tree.get("planner_notes", [])
    assert len(notes["dp_bushy"]) == 1 and notes["dp_bushy"][0].startswith("dp_bushy fell back to greedy's plan")
    assert notes["dp_left_deep"] == []  # 14 * 2^13 - 14 = 114,674 joins, inside its 2,000,000
    assert notes["auto"][0].startswith("auto ran zstream_ord") and "greedy's order" in notes["auto"][1]
    assert notes["greedy"] == []
    text = jitcep.compile(wide, planner="dp_bushy").explain()
    assert "planner: dp_bushy fell back to greedy's plan" in text
    narrow = "PATTERN SEQ(A a, B b, C c, D d) WITHIN 10"
    assert "planner_notes" not in jitcep.compile(narrow, planner="dp_bushy").explain(format="dict")


@pytest.mark.parametrize("cost_model, per_join", [("intermediate", 1), ("zstream", 4)])
def test_explain_notes_a_fallback_exactly_past_the_step_budget(monkeypatch, cost_model, per_join):
    # 6 units: dp_bushy prices 3^6 - 2^7 + 1 = 602 joins, 1 step each under Cost_tree, 4 under ZStream's
    # node term; its default budget set to exactly that runs it, one step less falls back
    from jitcep import config

    text = "PATTERN SEQ(" + ", ".join(f"A v{i}" for i in range(6)) + ") WITHIN 10"
    for steps, fell_back in ((602 * per_join, False), (602 * per_join - 1, True)):
        monkeypatch.setattr(config, "PLAN_DEFAULT_STEPS", steps)
        tree = jitcep.compile(text, planner="dp_bushy", cost_model=cost_model).explain(format="dict", statistics={})
        notes = tree.get("planner_notes", [])
        assert notes == ([f"dp_bushy fell back to greedy's plan: {602 * per_join:,} steps, over the {steps:,} left "
                          f"of its planning budget"] if fell_back else []), steps


def test_a_rerun_on_equal_statistics_reuses_the_plan_and_other_statistics_plan_again(monkeypatch):
    # runtime.searched keeps the planner's plan per logical plan and the values it was planned on: the
    # same table sampled again gives equal statistics, so the second run plans nothing; the user's
    # statistics are other values, planned afresh, and still steer the plan
    df = _frame()
    q = jitcep.compile(TEXT, planner="efreq")
    planned = []
    real = runtime.physical_plan
    def spy(*a, **k):  # the searches (with statistics), not the default plan's build
        if len(a) > 3 and a[3] is not None:
            planned.append(a)
        return real(*a, **k)
    monkeypatch.setattr(runtime, "physical_plan", spy)
    first = q.run(df, type="type")
    assert len(planned) == 1
    assert q.run(df, type="type").equals(first) and len(planned) == 1
    sampled = q.explain(df, type="type", format="dict")
    assert len(planned) == 1
    tree = q.explain(df, type="type", format="dict", statistics={"rates": {"a": 1e-6, "b": 1e-6}})
    assert len(planned) == 2 and _first_join(tree) == {"a", "b"} != _first_join(sampled)
    assert q.explain(df, type="type", format="dict") == sampled and len(planned) == 2
    # a tuning constant a rule reads, set between runs (perf/bench_reduction.py does), plans again
    from jitcep import config
    monkeypatch.setattr(config, "REDUCE_MIN_VARS", 99)
    assert q.run(df, type="type").equals(first) and len(planned) == 3
