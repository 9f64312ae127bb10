"""The final SEQ join writing the match table's rows (jitcep.kernels.final_join.seq_join_rows) through
``Query.run``, against the reference evaluator.

tests/test_kernels_join.py compares the kernel with its naive twin on random buffers, and
tests/test_compiled_differential.py runs patterns on one thread with the planner's choice of path; here
the plan is made to write the rows at its root (the cost of the other ways to the match table is set
above it: the matches depend on none of these, docs/semantics.md sections 11 and 14), on two threads
with every pass split and every array pooled, over key partitions (``partition_by`` and ``[k]``), ties
in ts, time and count windows, unbound OR positions and names out of pattern order; under
``nondecreasing_ts`` the kernel writes the rows or declines at a tie (a left record ending after its
right event) and the pairs are ordered as any join's, and both must turn up, also over a left input with
an OR first or an AND.  A right leaf's pairs are counted by two pointers in a partition where the window
times follow the positions (``_fits_by_position`` says 2), else by a scan; both must turn up, and a run
where some partitions allow the pointers and others do not.
"""

from __future__ import annotations

import random
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings

import jitcep
from jitcep import config
from jitcep.execute import join as join_executor
from jitcep.kernels import final_join
from jitcep.plan.planner.algorithms import ALGORITHMS
from jitcep.plan.rules import join_driver
from jitcep.testing.streams import event_frames

SMALL = dict(POOL_MIN=1, THREAD_MIN_RECORDS=1, JOIN_CHUNK_PAIRS=3, KERNEL_MIN_PAIRS=2, TYPE_BATCH=1)

# (pattern, its variables): ties, an OR branch not taken (unbound), names out of pattern order, a key
PATTERNS = [
    ("PATTERN SEQ(A a, B b, C c) WITHIN 6", "abc"),
    ("PATTERN SEQ(A a, B b, C c) WITHIN 4 EVENTS", "abc"),
    ("PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN 8", "abc"),
    ("PATTERN SEQ(A a, OR(B b, D d), C c) WITHIN 5", "abdc"),
    ("PATTERN SEQ(A a, ANY(B, C) b, C c) WITHIN 3 EVENTS", "abc"),
    ("PATTERN SEQ(C z, A y, B x) WHERE [k] WITHIN 5 EVENTS", "zyx"),
    ("PATTERN SEQ(A a, B b, C c, D d) WITHIN 7", "abcd"),
]


def _rows_first(path, *args):
    """A cost for join_driver's final join: the rows path cheapest, then the others as the planner ranks them."""
    return 0.0 if path == "right+rows" else 1.0


def _fits_seen(seen):
    real = final_join._fits_by_position

    def spy(*args):
        pairs = real(*args)
        fits = args[-2]
        if len(fits):
            seen.add("pointers" if (fits == 2).all() else "mixed" if (fits == 2).any() else "scan")
        return pairs
    return spy


def _final_join_only():
    """Off: a SEQ of three leaves with nothing to test written from the leaves (tests/test_compiled_seq3_leaves.py),
    which would take these patterns' final join away from the kernel tested here."""
    return mock.patch.object(join_executor, "_leaf_chain", lambda node, state: None)


def _agree(text, names, order, n_frames, seed, seen):
    rng = random.Random(seed)

    @hypothesis_seed(seed)
    @settings(max_examples=n_frames, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(event_frames(types=("A", "B", "C", "D"), max_size=24, max_step=1, n_keys=3,
                        motif=(("A",), ("B", "D"), ("C",))))
    def run(df):
        part = rng.choice([None, "k"])
        want = jitcep.compile(text, order=order).run(df, type="type", partition_by=part, engine="reference")
        for planner in rng.sample(sorted(ALGORITHMS), 2):
            q = jitcep.compile(text, order=order, planner=planner)
            user = {"rates": {v: 10 ** rng.uniform(-3, 1) for v in names}} if rng.random() < 0.7 else None
            with mock.patch.multiple(config, **SMALL), _final_join_only(), \
                    mock.patch.object(join_driver, "final_join_cost", _rows_first), \
                    mock.patch.object(final_join, "_fits_by_position", _fits_seen(seen)):
                got = q.run(df, type="type", partition_by=part, threads=2, statistics=user)
            assert got.equals(want), (text, order, planner, part, user)

    run()


@pytest.mark.parametrize("order", ["position", "strict_ts"])
def test_the_final_join_writing_rows_finds_the_reference_matches(order):
    seen = set()
    for i, (text, names) in enumerate(PATTERNS):
        _agree(text, names, order, 4, i, seen)
    assert {"pointers", "scan"} <= seen or "pointers" in seen and order == "position", seen


@pytest.mark.parametrize("slow", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_final_join_under_ties_writes_rows_or_declines(slow):
    # under nondecreasing_ts the kernel writes the rows over a right leaf, or declines where a left
    # record ends after its right event (a tie): the join's pairs are then ordered as any join's; both
    # must turn up, and the matches are the reference's either way
    seen, outcomes = set(), set()
    real = join_executor.seq_join_rows

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        outcomes.add("declined" if out is None else "rows")
        return out
    with mock.patch.object(join_executor, "seq_join_rows", spy):
        for i, (text, names) in enumerate(PATTERNS):
            _agree(text, names, "nondecreasing_ts", 40 if slow else 4, 50 + i, seen)
    assert outcomes == {"declined", "rows"}, outcomes


@pytest.mark.slow
@pytest.mark.parametrize("order", ["position", "strict_ts"])
@pytest.mark.parametrize("seed", range(100, 106))
def test_the_final_join_writing_rows_finds_the_reference_matches_slow(order, seed):
    seen = set()
    for i, (text, names) in enumerate(PATTERNS):
        _agree(text, names, order, 60, seed * 10 + i, seen)
    assert "pointers" in seen


@pytest.mark.parametrize("partition", ["partition_by", "key"])
def test_partitions_counted_by_pointers_beside_one_counted_by_a_scan(partition):
    # key 0: a, then b and c at one ts (b first): under strict_ts (a, b) does not end before c, and b's count
    # position is below c's, so the pointers cannot count partition 0 (its window times do not follow the
    # positions there); key 1: a, b, c at increasing ts, counted by pointers.  Hand-counted: key 1's
    # (a, b, c) only, and key 1's (a, b2, c) where b2 follows b.
    df = pl.DataFrame({"type": ["A", "A", "B", "B", "C", "B", "C"], "ts": [0, 1, 2, 3, 3, 4, 6],
                       "k": [1, 0, 1, 0, 0, 1, 1]})
    text = ("PATTERN SEQ(A a, B b, C c) WITHIN 7 EVENTS" if partition == "partition_by" else
            "PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN 7 EVENTS")
    part = "k" if partition == "partition_by" else None
    seen = set()
    q = jitcep.compile(text, order="strict_ts", planner="zstream")
    with mock.patch.object(join_driver, "final_join_cost", _rows_first), _final_join_only(), \
            mock.patch.object(final_join, "_fits_by_position", _fits_seen(seen)):
        for threads in (1, 2):
            with mock.patch.multiple(config, **SMALL):
                got = q.run(df, type="type", partition_by=part, threads=threads,
                            statistics={"rates": {"a": 0.01, "b": 0.1, "c": 1.0}})
            rows = [(r["a"]["row"], r["b"]["row"], r["c"]["row"]) for r in got.to_dicts()]
            assert rows == [(0, 2, 6), (0, 5, 6)], (threads, rows)
    assert seen == {"mixed"}, seen
    assert got.equals(q.run(df, type="type", partition_by=part, engine="reference"))


# left inputs whose records are not one chain of leaves: an OR first (the record's first position is its
# bound branch's), an AND (its first position is either leaf's)
LEFT_SHAPES = [
    ("PATTERN SEQ(OR(A a, D d), B b, C c) WITHIN 5", "adbc"),
    ("PATTERN SEQ(AND(A a, B b), C c) WITHIN 5", "abc"),
]


@pytest.mark.parametrize("slow", [False, pytest.param(True, marks=pytest.mark.slow)])
@pytest.mark.parametrize("text, names", LEFT_SHAPES)
def test_the_final_join_over_an_or_or_and_on_its_left_under_ties_writes_rows_or_declines(text, names, slow):
    outcomes = set()
    real = join_executor.seq_join_rows

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        outcomes.add("declined" if out is None else "rows")
        return out
    with mock.patch.object(join_executor, "seq_join_rows", spy):
        _agree(text, names, "nondecreasing_ts", 40 if slow else 6, 72, set())
    assert outcomes == {"declined", "rows"}, outcomes
