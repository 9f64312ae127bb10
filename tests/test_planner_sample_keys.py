"""The planner's sample (jitcep/plan/planner/sampling.py) over every key dtype with nulls, on sliced and chunked
frames, tables of 0-3 rows and types absent: every planner that samples plans, and its plan finds the reference
evaluator's matches (the statistics change the plan, never the matches), with finite statistics.

The sample's constants are made small (blocks of 8 events, 16 tuples a conjunct, 64 events of a type) so its
block, key and rare-type paths run on a table of a few hundred events; a String key not coded yet goes
through the one-call view sample (``kernels.sampling.sample_with_views``), a Categorical or Enum key and an
integer one through their codes.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import jitcep
from jitcep import config
from jitcep.plan.planner import sampling

TEXTS = [
    "PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < c.x WITHIN 8",
    "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] AND b[i].x > a.x WITHIN 6",
    "PATTERN SEQ(A a, NOT(D d), E e, C c) WHERE [k] AND a.x < c.x WITHIN 6",  # E absent from some tables
]
PLANNERS = ("dp_bushy", "greedy", "zstream")


def _frame(seed: int, n: int, key: str) -> pl.DataFrame:
    """``n`` events of types A-D (E at every 11th: a rare type), about a third of the keys null, ``key``'s dtype."""
    r = np.random.default_rng(seed)
    kv = [None if r.random() < 0.3 else int(v) for v in r.integers(0, 6, n)]
    types = r.choice(list("AABCD"), n).astype(object)
    types[::11] = "E"
    df = pl.DataFrame({"type": types.tolist(), "ts": np.sort(r.integers(0, max(n // 3, 1), n)),
                       "x": r.integers(-3, 4, n)})
    if key in ("Int64", "UInt16"):
        k = pl.Series("k", kv, dtype=getattr(pl, key))
    else:
        # long enough that the String coding reads its views, not the inline prefix alone
        k = pl.Series("k", [None if v is None else f"key-of-some-length-{v:04d}" for v in kv], dtype=pl.String)
        if key == "Categorical":
            k = k.cast(pl.Categorical)
        elif key == "Enum":
            k = k.cast(pl.Enum([f"key-of-some-length-{v:04d}" for v in range(7)]))
    return df.with_columns(k)


def _forms(df: pl.DataFrame):
    """``df``, a slice of it (offset buffers), the same in three chunks, and its first 0-3 rows."""
    sliced = df[7:]
    yield "whole", df
    yield "sliced", sliced
    yield "chunked", pl.concat([sliced[:100], sliced[100:301], sliced[301:]], rechunk=False)
    for n in range(4):
        yield f"first {n}", sliced[:n]


@pytest.mark.parametrize("key", ["Int64", "UInt16", "String", "Categorical", "Enum"])
def test_every_sampling_planner_finds_the_reference_matches_over_every_key_dtype(key, monkeypatch):
    for name, value in (("BLOCK", 8), ("TUPLES", 16), ("TYPE_SAMPLE", 64), ("KEY_SAMPLE", 32), ("SAMPLE", 64),
                        ("MIN_CANDIDATES", 4)):
        monkeypatch.setattr(sampling, name, value)
    monkeypatch.setattr(sampling, "_INTERMEDIATE", 8 * sampling.TUPLES)
    monkeypatch.setattr(sampling, "_FIRST", 2 * sampling.TUPLES)
    monkeypatch.setattr(config, "KEY_SAMPLE_STEP", 2)
    df = _frame(len(key), 700, key)
    for text in TEXTS:
        want = {}
        for planner in PLANNERS:
            q = jitcep.compile(text, planner=planner)
            for form, events in _forms(df):
                if form not in want:
                    want[form] = q.run(events, type="type", engine="reference")
                assert q.run(events, type="type", threads=2).equals(want[form]), (text, planner, form)
                stats = q.explain(events, type="type", format="dict")["statistics"]
                assert all(np.isfinite(v) for v in (*stats["rates"].values(), *stats["selectivities"].values())), \
                    (text, planner, form, stats)
        assert want["whole"].height > 0, text


@pytest.mark.parametrize("window", ["1e300", "9.3e18", "1e300 days"])
def test_a_window_past_int64_samples_its_conjuncts_and_finds_the_reference_matches(window):
    # the sample's tuples are bounded by the window in ts units: 1e300 (or 1e300 days of nanoseconds) is no
    # int64, and the planner's sample raised Numba's TypingError (an unnamed error) on
    # SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 1e300 with any sampling planner
    df = pl.DataFrame({"type": list("ABEBECDABCECD"), "ts": list(range(13)),
                       "x": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1]})
    for text in (f"PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN {window}",
                 f"PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN {window}"):
        want = jitcep.compile(text).run(df, type="type", time_unit="ns", engine="reference")
        assert want.height > 0
        for planner in PLANNERS:
            q = jitcep.compile(text, planner=planner)
            assert q.run(df, type="type", time_unit="ns").equals(want), (text, planner)
            stats = q.explain(df, type="type", time_unit="ns", format="dict")["statistics"]
            assert all(0.0 <= v <= 1.0 for v in stats["selectivities"].values()), (text, planner, stats)


@pytest.mark.parametrize("key", ["Int64", "UInt16", "short String"])  # a longer String: step by step anyway
def test_the_one_call_samples_estimate_what_the_step_by_step_reads_do(key, monkeypatch):
    # the one-call samples (kernels.sampling.sample_with_key / sample_with_views) read the key only at block
    # events of a type some variable takes and code a String key's views at those alone; the step-by-step
    # path (taken when they return None) reads it at every sampled position: the same draws and blocks, so
    # the same statistics, with a type read by two variables, a type absent from the table, and nulls
    from jitcep import runtime
    for name, value in (("BLOCK", 8), ("TUPLES", 16), ("TYPE_SAMPLE", 64), ("KEY_SAMPLE", 32), ("SAMPLE", 64),
                        ("MIN_CANDIDATES", 4)):
        monkeypatch.setattr(sampling, name, value)
    monkeypatch.setattr(sampling, "_INTERMEDIATE", 8 * sampling.TUPLES)
    monkeypatch.setattr(sampling, "_FIRST", 2 * sampling.TUPLES)
    df = _frame(3, 500, "String" if key == "short String" else key)
    if key == "short String":  # 12 bytes or less: inline views, coded by sample_with_views
        df = df.with_columns(pl.col("k").str.slice(19))
    fused = [0]
    real = {f: getattr(sampling, f) for f in ("sample_with_key", "sample_with_views")}

    def counted(f):
        def call(*a, **k):
            fused[0] += 1
            return real[f](*a, **k)
        return call

    estimated = []
    real_estimate = runtime.estimate
    monkeypatch.setattr(runtime, "estimate", lambda *a, **k: estimated.append(real_estimate(*a, **k)) or estimated[-1])
    for text in ("PATTERN SEQ(A a, A b, C c) WHERE [k] AND a.x < b.x WITHIN 8",  # A read by two variables
                 "PATTERN SEQ(A a, B b, F f) WHERE [k] AND a.x < b.x WITHIN 8",  # F absent
                 TEXTS[1]):
        for events in (df, df[5:]):
            got = []
            for one_call in (True, False):
                estimated.clear()
                for f in real:
                    monkeypatch.setattr(sampling, f, counted(f) if one_call else lambda *a, **k: None)
                out = jitcep.compile(text, planner="dp_bushy").run(events, type="type")
                got.append((repr(estimated), out))
            assert got[0][0] == got[1][0], text
            assert got[0][1].equals(got[1][1])
    assert fused[0] >= 6  # the one-call path ran
