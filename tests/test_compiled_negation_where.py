"""A negation's conditions tested in the loop over its candidates (kernels.negation_filtered,
codegen.negation_where): through Query.run with every negation with plain conditions taking that path,
the matches are the reference evaluator's, for a negation first, in the middle and last, in an AND,
over an OR branch, with strings and NULLs, under time and count windows, each order and partition_by;
and the path ran."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep import config
from jitcep.execute import negation as negation_exec
from jitcep.testing.streams import event_frames

PATTERNS = ["SEQ(A a, !C n, B b)", "SEQ(!C n, A a, B b)", "SEQ(A a, B b, !C n)", "SEQ(A a, !A n, A b)",
            "SEQ(A a, !C n, !D m, B b)", "AND(A a, !C n, B b)", "SEQ(A a, !ANY(C, D) n, OR(B b, D d))"]
CONDITIONS = ["n.x > a.x", "a.x > n.x AND n.x < b.x", "n.y >= a.y * 1.01 OR n.s = a.s", "n.x - a.x != 1",
              "n.x IS NULL OR n.x <= a.x"]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=event_frames(types=("A", "B", "C", "D"), max_size=24, max_step=1),
       condition=st.sampled_from(CONDITIONS), window=st.sampled_from(["1", "3", "4 EVENTS"]),
       order=st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), partition=st.booleans())
def test_conditions_in_the_loop_give_the_references_matches(pattern, df, condition, window, order, partition):
    if "b." in condition and " b" not in pattern:
        condition = condition.replace("b.", "a.")
    query = jitcep.compile(f"PATTERN {pattern} WHERE {condition} WITHIN {window}", order=order)
    kw = dict(time="ts", type="type", partition_by="k" if partition else None)
    want = query.run(df, engine="reference", **kw)
    with mock.patch.object(config, "NEG_WHERE_MIN_RECORDS", 0), \
            mock.patch.object(negation_exec, "killed_where", wraps=negation_exec.killed_where) as ran:
        got = query.run(df, **kw)
    assert got.equals(want), (pattern, condition, window, order, partition)
    RAN.append(ran.called)


RAN: list[bool] = []


def test_the_path_ran():
    """The cases above took the path in most runs (a change that stopped it would otherwise pass them
    vacuously): a run with no record under its negation never asks."""
    assert len(RAN) >= 100 and sum(RAN) >= len(RAN) // 3, (sum(RAN), len(RAN))


def test_the_path_runs_on_a_stream_with_kills_and_survivors():
    import polars as pl
    # (a, b) within 6: (0, 1) has no C between; (0, 4)'s C 3 has x 3, not above a's 4: spared by the
    # condition alone; (2, 4), (2, 8) and (6, 8) die by C 3 or C 7
    types = "ABACBDACB"
    df = pl.DataFrame({"type": list(types), "ts": list(range(len(types))), "x": [4, 0, 1, 3, 0, 0, 1, 2, 0]})
    query = jitcep.compile("PATTERN SEQ(A a, !C n, B b) WHERE n.x > a.x WITHIN 6")
    want = query.run(df, time="ts", type="type", engine="reference")
    with mock.patch.object(config, "NEG_WHERE_MIN_RECORDS", 0), \
            mock.patch.object(negation_exec, "killed_where", wraps=negation_exec.killed_where) as ran:
        got = query.run(df, time="ts", type="type")
    unconditional = jitcep.compile("PATTERN SEQ(A a, !C n, B b) WITHIN 6").run(df, time="ts", type="type")
    assert ran.called and got.equals(want)
    assert (unconditional.height, want.height) == (1, 2)
