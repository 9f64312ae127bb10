"""A negation's candidate ranges read from an answer per position (one partition, a record per
``kernels.negation._RANKED`` events or more) or searched per record (jitcep.kernels.negation.negation_ranges):
through Query.run, with the rule forced each way, the matches are the reference evaluator's, for a negation
first, in the middle and last, with and without conditions, under time and count windows, each order,
partition_by (several partitions: always searched) and ties in ts."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep.kernels import negation
from jitcep.testing.streams import event_frames

PATTERNS = ["SEQ(A a, !C n, B b)", "SEQ(!C n, A a, B b)", "SEQ(A a, B b, !C n)", "SEQ(A a, !A n, A b)",
            "SEQ(A a, !C n, !D m, B b)", "AND(A a, !C n, B b)", "SEQ(A a, !ANY(C, D) n, B b, C c)"]
CONDITIONS = ["", "n.x > a.x", "n.x >= a.x AND n.x <= b.x", "[k]", "a.x < b.x"]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=event_frames(types=("A", "B", "C", "D"), max_size=30, max_step=1),
       condition=st.sampled_from(CONDITIONS), window=st.sampled_from(["1", "3", "4 EVENTS", "UNBOUNDED"]),
       order=st.sampled_from(["position", "strict_ts", "nondecreasing_ts"]), partition=st.booleans())
def test_ranked_and_searched_ranges_give_the_references_matches(pattern, df, condition, window, order, partition):
    text = f"PATTERN {pattern}{' WHERE ' + condition if condition else ''} WITHIN {window}"
    query = jitcep.compile(text, order=order)
    kw = dict(time="ts", type="type", partition_by="k" if partition else None)
    want = query.run(df, engine="reference", **kw)
    for ranked in (1 << 40, 0):  # a record per 2^40 events suffices (ranked where one partition); never
        with mock.patch.object(negation, "_RANKED", ranked), \
                mock.patch.object(negation, "_first_after_each", wraps=negation._first_after_each) as answers:
            got = query.run(df, **kw)
        assert ranked or not answers.called
        assert got.equals(want), (text, order, partition, ranked)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_ranked_ranges_run_on_one_partition(pattern):
    # the differential above counts nothing on luck: here a stream where every pattern has matches and
    # negated events, one partition, the ranked rule forced on, must read the answers per position
    import polars as pl
    types = "ACDBACBDCAABCDB"
    df = pl.DataFrame({"type": list(types), "ts": list(range(len(types))), "x": [i % 4 for i in range(len(types))],
                       "k": [0] * len(types)})
    query = jitcep.compile(f"PATTERN {pattern} WITHIN 6")
    want = query.run(df, time="ts", type="type", engine="reference")
    with mock.patch.object(negation, "_RANKED", 1 << 40), \
            mock.patch.object(negation, "_first_after_each", wraps=negation._first_after_each) as answers:
        got = query.run(df, time="ts", type="type")
    assert answers.called and want.height > 0
    assert got.equals(want)
