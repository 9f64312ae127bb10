"""partition_by= (semantics section 13) in the compiled engine: one call over all streams == the reference.

The reference evaluator splits a ``partition_by`` table into its streams and
evaluates each on its own; the compiled engine evaluates every stream in one
call (stream x ``[attr]`` partitions, count windows measured inside the
stream).  Generated patterns (tests/test_compiled_differential.py) x
generated streams with null keys x several partition keys: equal as multisets
of matches, and equal to running the compiled engine stream by stream.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings, strategies as st

from jitcep import runtime
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.pattern.ast import CountWindow, EventVar, Pattern, Seq
from jitcep.reference import evaluate as reference_evaluate
from jitcep.streams import evaluate_per_partition
from test_compiled_differential import (KLEENE_MODES, _as_tuples, _kleene_tuples, _positive_names, _shapes,
                                       check_overall_match_rate, gen_kleene_pattern, gen_pattern, hits_guard,
                                       kleene_streams, streams)

N_PATTERNS = 30
N_STREAMS = 60
KEYS = ["k", ["k", "s"], "type", "s"]


def _check(pattern, order, shape, df, by):
    table = build_event_table(df, [pattern], type="type", partition_by=by)
    assert table.partition.independent
    opts = Options(order=order)
    names = _positive_names(pattern.body)
    [ref] = reference_evaluate([pattern], table, opts)
    [got] = runtime.evaluate([pattern], table, opts, plan=shape)
    expected = _as_tuples(ref, names)
    assert _as_tuples(got, names) == expected
    canon = got.canonical()
    assert all((canon.single[v] == got.single[v]).all() for v in names), "result not in canonical order"
    # and stream by stream (what Query.run did before): same multiset
    [split] = evaluate_per_partition(lambda sub: runtime.evaluate([pattern], sub, opts, plan=shape), table)
    assert _as_tuples(split, names) == expected
    return bool(expected)


@pytest.mark.parametrize("seed", range(N_PATTERNS))
def test_partition_by_compiled_equals_reference(seed):
    pattern, order = gen_pattern(1000 + seed)
    shapes = _shapes(pattern, seed)

    hits = [0, 0]

    @hypothesis_seed(seed)
    @settings(max_examples=N_STREAMS, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(streams(pattern, null_types=True), st.integers(0, len(shapes) - 1), st.sampled_from(KEYS))
    def run(df, which, by):
        hits[0] += _check(pattern, order, shapes[which % len(shapes)], df, by)
        hits[1] += 1

    run()
    hits_guard(*hits, f"pattern {1000 + seed}", "partition", seed)


@pytest.mark.parametrize("mode", KLEENE_MODES)
@pytest.mark.parametrize("seed", range(6))
def test_partition_by_kleene_compiled_equals_reference(seed, mode):
    """Kleene closures (every mode of the differential suite) over partition_by streams."""
    kleene = mode.split("+")[0]
    pattern, order = gen_kleene_pattern(100 + seed, iterative=kleene == "all", negation="negation" in mode)
    opts = Options(order=order, kleene=kleene)
    runtime.check_supported(pattern, opts)  # compiled, not a fallback

    @hypothesis_seed(seed)
    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(kleene_streams(pattern), st.sampled_from(["k", "s"]))
    def run(df, by):
        table = build_event_table(df, [pattern], type="type", partition_by=by)
        [ref] = reference_evaluate([pattern], table, opts)
        [got] = runtime.evaluate([pattern], table, opts)
        assert _kleene_tuples(got) == _kleene_tuples(ref)

    run()


def test_count_window_counts_positions_inside_the_stream():
    import polars as pl

    # stream k=0: rows 0, 3 (positions 0 and 1 inside it); the other stream's rows sit between them
    df = pl.DataFrame({"ts": [0, 1, 2, 3], "type": ["A", "B", "B", "B"], "k": [0, 1, 1, 0]})
    pat = Pattern(Seq((EventVar("a", ("A",)), EventVar("b", ("B",)))), None, CountWindow(2))
    table = build_event_table(df, [pat], type="type", partition_by="k")
    [mt] = runtime.evaluate([pat], table, Options())
    rows = sorted((int(table.row[a]), int(table.row[b])) for a, b in zip(mt.single["a"], mt.single["b"]))
    assert rows == [(0, 3)]
    # one stream: WITHIN 2 EVENTS reaches only the next row
    [mt1] = runtime.evaluate([pat], build_event_table(df, [pat], type="type"), Options())
    assert mt1.n == 1 and int(mt1.single["b"][0]) == 1


def test_partition_by_and_equivalence_key_null_key():
    import polars as pl
    from jitcep.pattern import expr as _  # noqa: F401  (module import order)
    from importlib import import_module

    E = import_module("jitcep.pattern.expr")
    # [k] with partition_by="k": null keys form a stream, but [k] still matches no null
    df = pl.DataFrame({"ts": [0, 1, 2, 3], "type": ["A", "B", "A", "B"], "k": [None, None, 1, 1]})
    pat = Pattern(Seq((EventVar("a", ("A",)), EventVar("b", ("B",)))), E.Equiv("k"), CountWindow(5))
    table = build_event_table(df, [pat], type="type", partition_by="k")
    [mt] = runtime.evaluate([pat], table, Options())
    assert sorted(zip(table.row[mt.single["a"]].tolist(), table.row[mt.single["b"]].tolist())) == [(2, 3)]
    table2 = build_event_table(df, [Pattern(pat.body, None, pat.window)], type="type", partition_by="k")
    [mt2] = runtime.evaluate([Pattern(pat.body, None, pat.window)], table2, Options())
    assert sorted(zip(table2.row[mt2.single["a"]].tolist(), table2.row[mt2.single["b"]].tolist())) == \
        [(0, 1), (2, 3)]
    assert np.all(mt2.single["a"] >= 0)


# last in the module: runs after every parametrised case above (pytest keeps definition order)
def test_generated_cases_still_produce_matches():
    check_overall_match_rate("partition")
