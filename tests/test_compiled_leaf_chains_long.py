"""Long SEQs of leaves with nothing to test (k = 4..8), written straight from the leaves
(jitcep.kernels.final_join_chain, jitcep.execute.join._leaf_chains), under every planner: the reference
evaluator's frame, and the caps of the joins the path replaces (max_partials, max_memory: the path
switched off decides; max_matches: the reference's count decides, semantics section 12).
tests/test_compiled_leaf_chains.py covers four and five distinct types under fixed plan shapes."""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep._typing import Planner, allowed
from jitcep.errors import ExplosionError
from jitcep.execute import join

PLANNERS = allowed(Planner)


@st.composite
def chains(draw, max_events=22):
    """(pattern text, events): a SEQ of 4..8 variables over one to three types (repeated: every leaf may
    read the same events), middle names ascending or not, a time or count window; events with ties,
    some out of row order, a partition column."""
    k = draw(st.integers(4, 8))
    kinds = "ABC"[:draw(st.integers(1, 3))]
    types = draw(st.lists(st.sampled_from(kinds), min_size=k, max_size=k))
    names = [f"v{i}" for i in range(k)]
    if draw(st.booleans()):  # middle names in SEQ order: the path is taken
        names = [draw(st.sampled_from(["a", "z"]))] + names[1:-1] + [draw(st.sampled_from(["b", "y"]))]
    else:
        names = draw(st.permutations(names))
    window = draw(st.sampled_from(["2", "4", f"{k} EVENTS", f"{k + 3} EVENTS"]))
    n = draw(st.integers(0, max_events))
    ts = np.cumsum(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))).astype(np.int64)
    order = np.array(draw(st.permutations(range(n))) if draw(st.booleans()) else range(n), dtype=np.int64)
    df = pl.DataFrame({"type": [draw(st.sampled_from(kinds)) for _ in range(n)], "ts": ts[order] if n else ts,
                       "p": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))},
                      schema={"type": pl.String, "ts": pl.Int64, "p": pl.Int64})
    seq = ", ".join(f"{t} {v}" for t, v in zip(types, names))
    return f"PATTERN SEQ({seq}) WITHIN {window}", df


def _outcome(query, df, **kw):
    try:
        return query.run(df, type="type", **kw)
    except ExplosionError as e:
        return str(e)


def _same(a, b) -> bool:
    return a.equals(b) if isinstance(a, pl.DataFrame) and isinstance(b, pl.DataFrame) else a == b


def _check_reference(case, planner, order, partitioned, threads) -> bool:
    """The compiled frame is the reference's; whether the chain kernel wrote it."""
    text, df = case
    query = jitcep.compile(text, order=order, planner=planner)
    kw = {"partition_by": "p"} if partitioned else {}
    try:
        want = query.run(df, type="type", engine="reference", **kw)
    except ExplosionError:
        return False
    with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
        assert query.run(df, type="type", threads=threads, **kw).equals(want)
    return kernel.called


def _references(examples: int, max_events: int) -> list[bool]:
    taken = []

    @settings(max_examples=examples, deadline=None)
    @given(chains(max_events), st.sampled_from(PLANNERS), st.sampled_from(["position", "strict_ts"]), st.booleans(),
           st.sampled_from([1, 2]))
    def check(case, planner, order, partitioned, threads):
        taken.append(_check_reference(case, planner, order, partitioned, threads))

    check()
    return taken


def test_long_chains_are_the_references_under_every_planner():
    assert any(_references(40, 22)), "the chain path never ran: the test proves little"


def _check_caps(case, planner, cap, threads):
    text, df = case
    base = jitcep.compile(text, planner=planner)
    try:
        matches = base.run(df, type="type", engine="reference").height
    except ExplosionError:
        return False
    # max_matches: the reference's count decides (semantics section 12), taken path or not
    q = jitcep.compile(text, planner=planner, max_matches=max(1, matches + cap % 3 - 1))
    got = _outcome(q, df, threads=threads)
    assert isinstance(got, str) == (matches > max(1, matches + cap % 3 - 1))
    # max_partials / max_memory: past a join's cap the path declines and the joins raise as they would alone
    taken = False
    for over in ({"max_partials": cap}, {"max_memory": 64 * cap}, {"max_memory": 2**29}):
        q = jitcep.compile(text, planner=planner, **over)
        with mock.patch.object(join, "seq_chain_rows", wraps=join.seq_chain_rows) as kernel:
            got = _outcome(q, df, threads=threads)
        taken |= kernel.called
        with mock.patch.object(join, "_leaf_chain", lambda node, state: None):
            assert _same(got, _outcome(q, df, threads=threads)), over
    return taken


@pytest.mark.slow
def test_long_chains_caps_hold_under_every_planner():
    taken = []

    @settings(max_examples=400, deadline=None)
    @given(chains(), st.sampled_from(PLANNERS), st.integers(1, 400), st.sampled_from([1, 2]))
    def check(case, planner, cap, threads):
        taken.append(_check_caps(case, planner, cap, threads))

    check()
    assert sum(taken) >= 20, "the chain path was seldom taken: the test proves little"


@pytest.mark.slow
def test_long_chains_are_the_references_many():
    assert sum(_references(400, 30)) >= 20, "the chain path was seldom taken: the test proves little"
