"""A SEQ join's predicates tested in its loop (execute.join_where, codegen.join_where): the compiled
engine with every SEQ join with predicates taking that path equals the reference evaluator, and the
path ran."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep import config
from jitcep.execute import join_where
from jitcep.testing.streams import event_frames

PATTERNS = [
    # googleIncrease's shape: one join, a product across the pair
    "PATTERN SEQ(A a, B b) WHERE b.y >= a.y * 1.01 WITHIN 4",
    # googleAscend's: a chain over three, each join testing its own conjunct
    "PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x AND b.x < c.x WITHIN 5",
    # strings, a filter beside the join predicate, several conjuncts on one join
    "PATTERN SEQ(A a, B b, C c) WHERE a.s = c.s AND a.x != 1 AND c.x >= a.x AND b.y < 0.5 WITHIN 6",
    # an OR branch not taken: the conjunct over its unbound variable does not apply (semantics section 4)
    "PATTERN SEQ(A a, OR(B b, C c), A d) WHERE a.x <= b.x AND d.x > a.x WITHIN 5",
    # NULL in the arithmetic and IS NULL
    "PATTERN SEQ(A a, A b) WHERE b.x - a.x > 0 OR b.x IS NULL WITHIN 3",
    # a count window
    "PATTERN SEQ(B a, C b) WHERE a.y < b.y WITHIN 4 EVENTS",
]


@pytest.mark.parametrize("order", ["position", "strict_ts", "nondecreasing_ts"])
@pytest.mark.parametrize("text", PATTERNS)
@settings(max_examples=40, deadline=None)
@given(df=event_frames(max_size=16), keyed=st.booleans(), threads=st.sampled_from([1, 2]))
def test_predicates_in_the_join_loop_equal_the_reference(text, order, df, keyed, threads):
    q = jitcep.compile(text, order=order)
    kw = dict(type="type", partition_by="k" if keyed else None)
    ran = []
    real = join_where.pairs

    def spy(*a):
        ran.append(1)
        return real(*a)

    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 0), mock.patch.object(join_where, "pairs", spy):
        got = q.run(df, threads=threads, **kw)
    assert got.equals(q.run(df, engine="reference", **kw))
    RAN.append(bool(ran))


RAN: list[bool] = []


def test_the_path_ran():
    """The cases above took the path (a join with predicates whose right records drive) in most runs:
    a plan change that stopped it would otherwise pass them vacuously."""
    assert len(RAN) >= 100 and sum(RAN) >= len(RAN) // 2, (sum(RAN), len(RAN))
