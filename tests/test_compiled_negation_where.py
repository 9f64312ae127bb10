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
from jitcep.errors import JitcepError
from jitcep.execute import negation as negation_exec
from jitcep.testing.streams import event_frames
from test_compiled_join_where_kinds import _wide_frame

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


# conditions over every kind of column a condition reads (tests/test_compiled_join_where_kinds.py's wide
# frame: UInt64 and Int128 past int64, int64 past 2^53, NaN and -0.0, Booleans, Dates beside Datetimes,
# Durations, each with nulls), a negation first, between and beside an OR branch not taken (b or d unbound)
WIDE_NEGATIONS = [
    "PATTERN SEQ(A a, NOT(C n), B b) WHERE n.u >= a.u AND n.i != b.i AND n.big > b.f WITHIN 4",
    "PATTERN SEQ(A a, NOT(C n), OR(B b, D d)) WHERE n.d <= b.t AND n.du != d.du WITHIN 4",
    "PATTERN SEQ(NOT(C n), A a, B b) WHERE NOT (n.f < a.f) AND n.bo = b.bo AND abs(n.big - a.big) < 2 WITHIN 4",
    "PATTERN AND(A a, NOT(C n), B b) WHERE n.x * a.big > b.u OR n.s = a.s WITHIN 4",
]


@pytest.mark.parametrize("text", WIDE_NEGATIONS)
@settings(max_examples=10, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=event_frames(types=("A", "B", "C", "D"), max_size=14, max_step=1), extra=st.data(),
       order=st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), partition=st.booleans(),
       threads=st.sampled_from([1, 2]), cap=st.one_of(st.none(), st.integers(1, 30)))
def test_conditions_over_every_kind_of_column_in_the_loop_equal_the_tested_after_path_and_the_reference(
        text, df, extra, order, partition, threads, cap):
    # the loop against the pairs tested after it under the same max_partials (the same error where the
    # joins meet it) and, below it, against the reference evaluator
    df = _wide_frame(df, extra)
    kw = dict(type="type", partition_by="k" if partition else None, threads=threads)

    def run(least):
        with mock.patch.object(config, "NEG_WHERE_MIN_RECORDS", least), \
                mock.patch.object(negation_exec, "killed_where", wraps=negation_exec.killed_where) as ran:
            try:
                got = jitcep.compile(text, order=order, **({} if cap is None else {"max_partials": cap})).run(df, **kw)
            except JitcepError as e:
                got = type(e).__name__
        return got, ran.called
    (got, ran), (after, _) = run(0), run(1 << 62)
    assert got == after if isinstance(got, str) or isinstance(after, str) else got.equals(after)
    if not isinstance(got, str):
        assert got.equals(jitcep.compile(text, order=order).run(df, engine="reference", **{**kw, "threads": 1}))
    WIDE_RAN.setdefault(text, []).append(ran)


WIDE_RAN: dict[str, list[bool]] = {}


def test_the_path_ran_over_every_kind_of_column():
    """Each negation above took the loop in some runs (else they would pass vacuously)."""
    if not WIDE_RAN:
        pytest.skip("the cases above did not run in this session")
    assert all(any(WIDE_RAN.get(text, ())) for text in WIDE_NEGATIONS), {t: sum(r) for t, r in WIDE_RAN.items()}
