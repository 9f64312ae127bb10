"""A run's own type numbering: the compiled engine against the reference where the table's type codes are
never made (:func:`jitcep.execute.tables.run_types`, :class:`jitcep.events.table.TypeViews`).

A run whose leaves read a few types numbers only those, from the type column's Arrow views; names past
12 bytes, Categorical / Enum type columns and unsorted input keep the table's codes.  The reference
evaluator is the oracle (on a table of its own: it reads the table's codes), on streams over type names
of every length around 12 bytes, with null types, keys and several patterns in one run.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from differential_helpers import binding_tuples
from jitcep import runtime
from jitcep.events import build_event_table
from jitcep.events.coding import _dict_encode
from jitcep.execute import tables
from jitcep.kernels import encode as enc
from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.reference import evaluate as reference_evaluate
from jitcep.testing.streams import event_frames

# 0, 1, 11, 12 (two sharing 11 bytes, one of two-byte letters), 13 and 14 bytes
NAMES = ("A", "Bb", "abcdefghijk", "abcdefghijkl", "abcdefghijkX", "ééééé", "éééééé", "abcdefghijklm", "ééééééé")
SHORT = [t for t in NAMES if len(t.encode()) <= 12]
PATTERNS = [
    "PATTERN SEQ(abcdefghijkl a, abcdefghijkX b) WITHIN 4",
    "PATTERN SEQ(A a, éééééé b, Bb c) WHERE a.x < c.x WITHIN 5",
    "PATTERN SEQ(abcdefghijk a, abcdefghijkl b) WHERE [k] WITHIN 6",
    "PATTERN AND(ééééé a, A b) WHERE [k] WITHIN 3",
    "PATTERN SEQ(A a, NOT(abcdefghijkX n), Bb b) WITHIN 5",
    "PATTERN SEQ(Bb a, abcdefghijkl+ b[], A c) WITHIN 6",
    "PATTERN SEQ(abcdefghijklm a, A b) WITHIN 4",       # a name past 12 bytes: the table's codes
    "PATTERN SEQ(ééééééé a, éééééé b) WHERE [k] WITHIN 5",  # 14 bytes
    "PATTERN SEQ(* a, A b) WITHIN 3",                   # an untyped variable reads every type
]
OPTIONS = [Options(), Options(planner="greedy"), Options(planner="dp_left_deep")]  # the last two: sampled


def _as_type_dtype(df: pl.DataFrame, kind: str) -> pl.DataFrame:
    if kind == "categorical":
        return df.with_columns(pl.col("type").cast(pl.Categorical))
    if kind == "enum":
        return df.with_columns(pl.col("type").cast(pl.Enum(sorted(NAMES))))
    return df


def _run_types_spy():
    """A spy on tables.run_types: the numbering each run chose (None: the table's codes)."""
    chosen = []
    real = tables.run_types

    def spy(*args):
        got = real(*args)
        chosen.append(None if got is None else got[0])
        return got
    return chosen, mock.patch.object(tables, "run_types", spy)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(event_frames(types=NAMES, max_size=24, null_types=True), st.data())
def test_compiled_equals_reference_over_names_around_12_bytes(df, data):
    texts = data.draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True))
    patterns = [parse(t) for t in texts]
    options = data.draw(st.sampled_from(OPTIONS))
    kind = data.draw(st.sampled_from(["string", "string", "categorical", "enum"]))
    df = _as_type_dtype(df, kind)
    [*refs] = reference_evaluate(patterns, build_event_table(df, patterns, type="type"), options)
    table = build_event_table(df, patterns, type="type")  # its own: the oracle has coded the other's types
    chosen, spy = _run_types_spy()
    with spy:
        got = runtime.evaluate(patterns, table, options)
    for text, mt, ref in zip(texts, got, refs):
        assert binding_tuples(mt) == binding_tuples(ref), text
    if chosen and chosen[0] is not None:  # the run's own numbering ran: on String types only
        assert kind == "string"


def _sorted_frame(types, rng, n=400):
    return pl.DataFrame({"type": [types[i] for i in rng.integers(0, len(types), n)], "ts": np.arange(n),
                         "k": rng.integers(0, 3, n), "x": rng.integers(-3, 4, n)})


@pytest.mark.parametrize("text, kind, shuffled, numbered", [
    (PATTERNS[0], "string", False, ("abcdefghijkX", "abcdefghijkl")),
    (PATTERNS[3], "string", False, ("A", "ééééé")),
    (PATTERNS[5], "string", False, ("A", "Bb", "abcdefghijkl")),
    (PATTERNS[0], "string", True, None),        # unsorted input: the views are not by position
    (PATTERNS[0], "categorical", False, None),
    (PATTERNS[0], "enum", False, None),
    (PATTERNS[6], "string", False, None),        # a name of 13 bytes
    (PATTERNS[8], "string", False, None),        # an untyped variable
])
def test_the_run_numbers_its_own_types_where_it_can(text, kind, shuffled, numbered):
    rng = np.random.default_rng(3)
    df = _as_type_dtype(_sorted_frame(NAMES, rng), kind)
    if shuffled:
        df = df.sample(fraction=1.0, shuffle=True, seed=1)
    pattern = parse(text)
    [ref] = reference_evaluate([pattern], build_event_table(df, [pattern], type="type"), Options())
    assert ref.n > 0  # the streams make matches
    table = build_event_table(df, [pattern], type="type")
    chosen, spy = _run_types_spy()
    with spy:
        [mt] = runtime.evaluate([pattern], table, Options(planner="greedy"))
    assert binding_tuples(mt) == binding_tuples(ref)
    assert chosen[0] == numbered
    assert ("type_code" in table.__dict__) == (numbered is None)  # the table's codes never made when numbered


def test_patterns_of_one_run_share_one_pass():
    rng = np.random.default_rng(4)
    df = _sorted_frame(NAMES, rng)
    patterns = [parse(PATTERNS[0]), parse(PATTERNS[1]), parse(PATTERNS[4])]
    refs = reference_evaluate(patterns, build_event_table(df, patterns, type="type"), Options())
    table = build_event_table(df, patterns, type="type")
    with mock.patch.object(enc, "_run_view_codes", wraps=enc._run_view_codes) as kernel:
        got = runtime.evaluate(patterns, table, Options(planner="greedy"))
    assert kernel.call_count == 1
    assert [binding_tuples(m) for m in got] == [binding_tuples(r) for r in refs]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(NAMES)), max_size=40), st.lists(st.sampled_from(SHORT),
       min_size=1, max_size=4, unique=True))
def test_the_table_codes_its_types_when_first_read(xs, names):
    # the deferred codes are the eager ones; a run's codes are the names' indexes; a table numbered as a
    # run numbers its types still reads the real type
    df = pl.DataFrame({"type": pl.Series(xs, dtype=pl.String), "ts": np.arange(len(xs))})
    table = build_event_table(df, type="type")
    if not xs:
        return
    codes = table.run_type_codes(tuple(names))
    at = {t: j for j, t in enumerate(names)}
    assert codes.tolist() == [-1 if x is None else at.get(x, -1) for x in xs]
    assert "type_code" not in table.__dict__
    run_table = table.with_types(tuple(names), codes)
    assert run_table.column("type").python_value(0) == xs[0]  # the real type (the table codes it now)
    eager, eager_names, _ = _dict_encode(df.get_column("type"))
    assert table.type_names == eager_names and table.type_code.tolist() == eager.tolist()
    assert [table.value("type", p) for p in range(len(xs))] == xs
    assert table.run_type_codes(tuple(names)) is None  # coded now: the run uses the table's codes
