"""A leaf read from the type grouping's key runs (jitcep.kernels.grouping.group_with_key_runs, split by
leaf_of_run) finds the reference evaluator's matches on either side of ``SLOTS_MAX`` (type, key) slots:
exactly that many (grouped by type and key in one go) and one key more (by type, then by key), for an
Int key (its value range), a String key (coded whole, or at the leaves' events only) and a Categorical
one, with null keys, a type the pattern names that the table lacks, ``partition_by`` streams (whose
codes combine with the key's), on one thread and on two.  And a String key of several Arrow chunks,
sliced and run twice, whose views its Column keeps."""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest

from jitcep import config, runtime
from jitcep.events import build_event_table
from jitcep.execute import scan
from jitcep.kernels import grouping
from jitcep.options import Options
from jitcep.pattern import parse
from jitcep.reference import evaluate as reference_evaluate
from differential_helpers import binding_tuples

# two leaf types, A and B, grouped in one batch: 2 x (G + 1) slots, SLOTS_MAX at G = SLOTS_MAX / 2 - 1
AT_MAX = grouping.SLOTS_MAX // 2 - 1


def _frame(n_keys: int, n: int = 6000, seed: int = 0) -> pl.DataFrame:
    """``n`` events of types A, B, C over keys 0 .. n_keys - 1 (each present; a tenth null), one
    timestamp step 0-2 apart, so that ties occur and a few pairs per key fall within a short window."""
    rng = np.random.default_rng(seed)
    keys = np.concatenate([np.arange(n_keys), rng.integers(0, n_keys, n - n_keys)])
    rng.shuffle(keys)
    k = pl.Series("k", keys, dtype=pl.Int64)
    k = pl.when(pl.Series(rng.random(n) < 0.1)).then(None).otherwise(k)
    return pl.DataFrame({"ts": np.cumsum(rng.integers(0, 3, n)), "type": rng.choice(["A", "B", "C"], n),
                         "x": rng.integers(0, 5, n), "s": rng.integers(0, 2, n)}).with_columns(k=k)


def _as(df: pl.DataFrame, dtype: str) -> pl.DataFrame:
    if dtype == "int":
        return df
    k = pl.format("k{}", pl.col("k"))  # null stays null
    return df.with_columns(k.cast(pl.Categorical) if dtype == "cat" else k)


PATTERNS = [
    "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 200",  # the final join writes the rows
    "PATTERN SEQ(A a, B b, A c) WHERE [k] AND c.x > a.x WITHIN 2000",  # a predicate across the joins
    "PATTERN SEQ(A a, B b, D d) WHERE [k] WITHIN 200",  # D: no such type in the table
]


# the key as Int64, String coded whole or at the leaves' events only (parts 1.0), Categorical; with streams
KEYS = [("int", 0.5, False), ("int", 0.5, True), ("str", 0.5, False), ("str", 1.0, False), ("str", 0.5, True),
        ("cat", 0.5, False)]


@pytest.mark.parametrize("dtype,parts,streams", KEYS)
@pytest.mark.parametrize("extra", [0, 1])
@pytest.mark.parametrize("text", PATTERNS)
def test_leaves_of_key_runs_equal_the_reference_either_side_of_slots_max(text, extra, dtype, parts, streams):
    n_keys = AT_MAX + extra
    df = _as(_frame(n_keys, seed=n_keys), dtype)
    pattern = parse(text)
    opts = Options()
    by = {"partition_by": "s"} if streams else {}
    table = build_event_table(df, [pattern], type="type", **by)
    [ref] = reference_evaluate([pattern], table, opts)
    table = build_event_table(df, [pattern], type="type", **by)  # uncoded again: the engine groups it itself
    runs, split = [], []
    real, real_split = grouping._by_key, scan.leaf_of_run

    def spy(*args):
        out = real(*args)
        runs.append(out[2].shape)
        return out

    def spy_split(*args):
        split.append(1)
        return real_split(*args)
    with mock.patch.object(config, "KEY_AT_RECORDS_SHARE", parts), mock.patch.object(grouping, "_by_key", spy), \
            mock.patch.object(scan, "leaf_of_run", spy_split):
        [mt] = runtime.evaluate([pattern], table, opts, threads=1)
        assert binding_tuples(mt) == binding_tuples(ref)
        # two threads, every pass split however few its records: the slots counted and scattered per range
        with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
            [mt2] = runtime.evaluate([pattern], build_event_table(df, [pattern], type="type", **by), opts, threads=2)
        assert binding_tuples(mt2) == binding_tuples(ref)
    if "D d" not in text:
        assert ref.n > 0  # not vacuous
    # the grouping by type and key ran where the (type, key) slots fit SLOTS_MAX, and only there
    slots = [rows * cols for rows, cols in runs]
    assert all(s <= grouping.SLOTS_MAX for s in slots)
    # (D's pattern: a run numbering only its own types gives D, absent from the table, slots too, so its
    # batch of three types passes SLOTS_MAX either side; its matches are checked above)
    if not streams and dtype == "int" and "D d" not in text:
        assert (grouping.SLOTS_MAX in slots) == (extra == 0)
        assert bool(split) == (extra == 0)  # and the leaves were its key runs, split


def test_a_string_key_of_several_chunks_sliced_and_run_twice_equals_the_reference():
    # the key's Arrow views are taken chunk by chunk and kept on its Column (events/column.py): a frame
    # of several chunks (short strings: coded from the views), sliced so that chunks start mid-view, run
    # twice on one table and once on a new one, coded whole or at the leaves' events only
    rng = np.random.default_rng(7)

    def part(n: int, t0: int) -> pl.DataFrame:
        return pl.DataFrame({"ts": np.arange(t0, t0 + n), "type": rng.choice(["A", "B", "C"], n),
                             "k": [None if rng.random() < 0.1 else f"key{rng.integers(0, 5)}" for _ in range(n)],
                             "x": rng.integers(0, 5, n)}, schema={"ts": pl.Int64, "type": pl.String, "k": pl.String,
                                                                   "x": pl.Int64})
    df = pl.concat([part(50, 0), part(70, 50), part(40, 120)], rechunk=False)
    assert df["k"].n_chunks() == 3
    pattern = parse("PATTERN SEQ(A a, B b, C c) WHERE [k] AND c.x > a.x WITHIN 10")
    opts = Options()
    seen = 0
    for frame in (df, df.slice(7, 140), df.slice(50, 70)):
        [ref] = reference_evaluate([pattern], build_event_table(frame.rechunk(), [pattern], type="type"), opts)
        seen += ref.n
        for parts in (0.5, 1.0):
            table = build_event_table(frame, [pattern], type="type")
            fresh = build_event_table(frame, [pattern], type="type")
            with mock.patch.object(config, "KEY_AT_RECORDS_SHARE", parts):
                runs = [runtime.evaluate([pattern], t, opts)[0] for t in (table, table, fresh)]
            assert all(binding_tuples(mt) == binding_tuples(ref) for mt in runs), (frame.height, parts)
    assert seen > 0
