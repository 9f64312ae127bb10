"""A SEQ join that makes and tests its pairs a chunk of right records at a time (jitcep.execute.join's
``_seq_join_in_chunks``) returns the matches of one call: against the naive twin and the reference
evaluator on the differential corpus, with chunks shrunk to a few records so that every join with a
predicate runs in many of them, and its candidate-pair cap (``max_partials``) as one call counts it."""

from __future__ import annotations

import os
from unittest import mock

import polars as pl
import pytest

import jitcep
from jitcep import config
from jitcep.errors import ExplosionError
from jitcep.execute import join as join_exec, join_where
from test_compiled_differential import corpus_agrees

SEEDS = range(16)
RAN, CHUNKED = [0], [0]  # differential seeds run, and chunked joins over them


@pytest.fixture
def small_chunks():
    """Chunks of one right record to start, then about 3 pairs each; the joins run so are counted."""
    chunked = []
    real = join_exec._seq_join_in_chunks

    def counted(*args, **kw):
        chunked.append(1)
        return real(*args, **kw)

    with mock.patch.object(join_exec, "_FIRST_CHUNK", 1), mock.patch.object(config, "JOIN_CHUNK_PAIRS", 3), \
            mock.patch.object(join_exec, "_seq_join_in_chunks", counted):
        yield chunked
    RAN[0] += 1
    CHUNKED[0] += len(chunked)


@pytest.mark.parametrize("seed", SEEDS)
def test_chunked_seq_joins_equal_the_oracles(seed, small_chunks):
    corpus_agrees(seed, 60)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(16, 216))
def test_chunked_seq_joins_equal_the_oracles_slow(seed, small_chunks):
    corpus_agrees(seed, int(os.environ.get("JITCEP_SLOW_STREAMS", "300")), slow=True, extra=3)


def test_the_corpus_ran_chunked_joins():
    # the differential above is not vacuous: some of its joins took the chunked path
    if not RAN[0]:
        pytest.skip("no chunked differential case ran in this session (test selected alone)")
    assert CHUNKED[0] > 0


def _goog_like(n: int) -> pl.DataFrame:
    """``n`` events of one type a second, prices rising by 1 every 5 events and falling back every 50."""
    return pl.DataFrame({"ts": list(range(n)), "type": ["G"] * n, "p": [(i // 5) % 10 for i in range(n)]})


@pytest.fixture(autouse=True)
def _chunked():
    """These joins are large enough for the predicates to run in the join's loop (jitcep.execute.join_where):
    kept on the chunked path here, unless a test says otherwise."""
    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 1 << 62):
        yield


@pytest.mark.parametrize("path", ["chunks", "in_loop"])
def test_chunked_join_matches_hand_count(path):
    # SEQ(G a, G b) WHERE b.p >= a.p + 2 WITHIN 30: every pair counted by hand over the prices, on the
    # chunked path and on the in-loop one
    n = 9000  # past two first chunks of right records: the default constants chunk this join
    frame = _goog_like(n)
    p = frame["p"].to_list()
    expected = sum(1 for j in range(n) for i in range(max(0, j - 30), j) if p[j] >= p[i] + 2)
    q = jitcep.compile("PATTERN SEQ(G a, G b) WHERE b.p >= a.p + 2 WITHIN 30", planner="trivial")
    taken = (join_exec, "_seq_join_in_chunks") if path == "chunks" else (join_where, "pairs")
    with mock.patch.object(*taken, wraps=getattr(*taken)) as spy, \
            mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 1 << 62 if path == "chunks" else 1 << 12):
        got = q.run(frame, type="type")
    assert spy.called
    assert got.height == expected
    rows = got.select(pl.col("a").struct.field("row"), pl.col("b").struct.field("row").alias("rb")).rows()
    assert rows == sorted(rows, key=lambda r: (r[1], r[0]))  # canonical order: by end, then first


@pytest.mark.parametrize("spare", [0, -1])
@pytest.mark.parametrize("min_right", [1 << 62, 0], ids=["chunks", "in_loop"])
def test_chunked_join_counts_its_candidate_pairs_against_max_partials(spare, min_right):
    # the pairs within the window number n*30 - 465; the cap is on them, not on the few that pass (on both
    # paths of a join with predicates)
    n = 9000
    candidates = n * 30 - 30 * 31 // 2
    q = jitcep.compile("PATTERN SEQ(G a, G b) WHERE b.p >= a.p + 2 WITHIN 30", planner="trivial",
                       max_partials=candidates + spare)
    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", min_right):
        if spare < 0:
            with pytest.raises(ExplosionError, match=f"more than {candidates - 1} candidate"):
                q.run(_goog_like(n), type="type")
        else:
            assert q.run(_goog_like(n), type="type").height > 0


@pytest.mark.parametrize("chunk_pairs", [7, 64])
@pytest.mark.parametrize("spare", [0, -1, -200])
def test_a_cap_crossed_inside_a_small_chunk_is_the_whole_joins(chunk_pairs, spare):
    # chunks of a few right records (about 7 or 64 pairs, 30 per right record): the cap is crossed inside
    # the last chunk (spare -1) or several chunks before it (-200), and is an ExplosionError naming the
    # whole join's cap; at exactly the candidates (spare 0) the matches are the hand count's
    n = 600
    candidates = n * 30 - 30 * 31 // 2
    frame = _goog_like(n)
    p = frame["p"].to_list()
    expected = sum(1 for j in range(n) for i in range(max(0, j - 30), j) if p[j] >= p[i] + 2)
    q = jitcep.compile("PATTERN SEQ(G a, G b) WHERE b.p >= a.p + 2 WITHIN 30", planner="trivial",
                       max_partials=candidates + spare)
    with mock.patch.object(join_exec, "_FIRST_CHUNK", 1), mock.patch.object(config, "JOIN_CHUNK_PAIRS", chunk_pairs), \
            mock.patch.object(join_exec, "_seq_join_in_chunks", wraps=join_exec._seq_join_in_chunks) as spy:
        if spare < 0:
            with pytest.raises(ExplosionError, match=f"more than {candidates + spare} candidate"):
                q.run(frame, type="type")
        else:
            assert q.run(frame, type="type").height == expected
    assert spy.called
