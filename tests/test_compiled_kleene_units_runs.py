"""Session 16's Kleene search units through ``Query.run``: every planner on sampled and user statistics, two
threads, keys and ``partition_by``, with the rare paths' constants small, against the reference evaluator.

tests/test_planner_kleene_unit.py runs every algorithm's plan (``physical_plan`` on seeded random
statistics) through ``runtime.evaluate`` on one thread; here the same shapes' generators (a construct at
the pattern's end under ties with a count window, a group next to another construct under ties, an
anchored construct's member-wise conjuncts split off, a construct at an end) go the user's way: the
planner samples the table (or takes the user's rates), ``threads=2`` with
``config.THREAD_MIN_RECORDS`` at 1 splits every pass and join that can split, every array comes from the
run's buffer pool (``POOL_MIN`` 1 byte), and joins, candidate pairs and Kleene members go in chunks of a
few (docs/semantics.md sections 12 and 14: the matches depend on none of these).  A plan collecting the
construct below the root must turn up, or the test proves nothing about the units.
"""

from __future__ import annotations

import random
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings

import jitcep
from jitcep import config
from jitcep.plan.logical import logical_plan
from jitcep.plan.planner.algorithms import ALGORITHMS
from jitcep.plan.planner.statistics import leaves
from jitcep.pattern.parser import parse
from jitcep.testing.streams import event_frames

from test_planner_kleene_unit import gen_adjacent_group, gen_anchored_split, gen_end, gen_end_tied

SMALL = dict(POOL_MIN=1, THREAD_MIN_RECORDS=1, JOIN_CHUNK_PAIRS=3, KERNEL_MIN_PAIRS=2, NEG_PAIR_BUDGET=2,
             TYPE_BATCH=1)

_ENDS, _MIDDLE = (("B", "D"), ("E", "B"), ("B", "D")), (("A",), ("C", "F", "B"), ("C", "F"), ("D",))


def _end_motif(text: str) -> tuple:
    at_start = text.startswith(("PATTERN SEQ(KL", "PATTERN SEQ(B", "PATTERN SEQ(D"))
    return (*_ENDS, *_MIDDLE) if at_start else (*_MIDDLE, *_ENDS)


# shape: (generator, its options' overrides, the streams' motif (None: the end shapes'), the streams' types)
SHAPES = {
    "end_tied": (gen_end_tied, {}, None, "ABCDEF"),
    "end": (gen_end, {}, None, "ABCDEF"),
    "adjacent_group_tied": (gen_adjacent_group, {"order": "nondecreasing_ts"},
                            (("A",), ("B", "E"), ("E", "B"), ("B",), ("E",), ("C",), ("D",)), "ABCDEF"),
    "anchored_split": (gen_anchored_split, {},
                       (("A", "F"), ("B", "C"), ("E", "B"), ("B", "C"), ("E", "B"), ("C", "F"), ("D", "G")),
                       "ABCDEFGX"),
}


def _agree_runs(shape: str, seed: int, n_streams: int) -> int:
    """Every planner's ``Query.run`` of the shape's pattern ``seed`` == the reference on ``n_streams`` streams
    (ties everywhere: times step by 0 or 1); the number of runs whose plan collected a construct below the
    root (explain says so)."""
    gen, over, motif, types = SHAPES[shape]
    text, opts = gen(seed)
    opts = {**opts, **over}
    logical = logical_plan(parse(text))
    rng = random.Random(seed)
    lower = [0]

    @hypothesis_seed(seed)
    @settings(max_examples=n_streams, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(event_frames(types=tuple(types), max_size=14, max_step=1, motif=motif or _end_motif(text)))
    def run(df):
        part = "k" if rng.random() < 0.3 else None
        want = jitcep.compile(text, **opts).run(df, type="type", partition_by=part, engine="reference")
        for planner in (*ALGORITHMS, "auto"):
            q = jitcep.compile(text, **opts, planner=planner)
            # auto plans a table this small by rule unless given statistics
            user = ({"rates": {v: 10 ** rng.uniform(-3, 1) for v in leaves(logical)}}
                    if planner == "auto" or rng.random() < 0.5 else None)
            with mock.patch.multiple(config, **SMALL):
                got = q.run(df, type="type", partition_by=part, threads=2, statistics=user)
                lower[0] += "placement=lower (the join-order search's)" in q.explain(
                    df, type="type", partition_by=part, statistics=user)
            assert got.equals(want), (text, opts, planner, part, user)

    run()
    return lower[0]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_planner_runs_the_units_as_the_reference_finds_them(shape):
    assert sum(_agree_runs(shape, seed, 2) for seed in range(2)) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("shape, seed", [(shape, seed) for shape in SHAPES for seed in range(100, 140)])
def test_every_planner_runs_the_units_as_the_reference_finds_them_slow(shape, seed):
    _agree_runs(shape, seed, 6)
