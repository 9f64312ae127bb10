"""No input the public API accepts may crash the process (DESIGN.md section 5, docs/semantics.md §3).

A crash kills the interpreter, so every run here that once crashed happens in
a subprocess, and the test asserts that the subprocess ended normally with
the named error (a segmentation fault is a negative exit status).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

import jitcep
from jitcep import reference, runtime
from jitcep.events import build_event_table
from jitcep.options import Options

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter that imports this checkout's jitcep."""
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600, env=full_env, cwd=str(ROOT))


# --- typed variables without a type column ---------------------------------------------------


def test_typed_pattern_without_type_column_is_a_named_error_not_a_crash():
    # thousands of events: the type grouping of this input wrote out of bounds and killed the process
    got = run_python("""
        import polars as pl, jitcep
        df = pl.DataFrame({"kind": ["A", "B", "A", "B"] * 2000, "ts": list(range(8000))})
        q = jitcep.compile("PATTERN SEQ(A a, !C c, ANY(B, D) b) WITHIN 10")
        for engine in ("compiled", "reference"):
            try:
                q.run(df, engine=engine)
            except jitcep.MissingTypeColumnError as e:
                print(engine, "|", e)
            else:
                print(engine, "| no error")
    """)
    assert got.returncode == 0, got.stderr[-2000:]
    lines = got.stdout.strip().splitlines()
    assert [ln.split(" | ")[0] for ln in lines] == ["compiled", "reference"]
    for ln in lines:
        msg = ln.split(" | ")[1]
        # names the types the pattern uses and how to pass the column, in Python and on the command line
        assert "'A'" in msg and "'B'" in msg and "'C'" in msg and "'D'" in msg, msg
        assert 'type="kind"' in msg and "--type kind" in msg, msg


def test_typed_pattern_without_type_column_on_the_command_line(tmp_path):
    data = tmp_path / "events.parquet"
    pl.DataFrame({"kind": ["A", "B"] * 2000, "ts": list(range(4000))}).write_parquet(data)
    pat = tmp_path / "p.cep"
    pat.write_text("PATTERN SEQ(A a, B b) WITHIN 10")
    got = subprocess.run([sys.executable, "-m", "jitcep.cli", "run", str(pat), str(data)], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert got.returncode == 2, (got.returncode, got.stderr[-2000:])
    assert "MissingTypeColumnError" in got.stderr and "--type kind" in got.stderr
    assert got.stdout == ""


def test_missing_type_column_error_is_a_missing_column_error():
    df = pl.DataFrame({"kind": ["A"], "ts": [1]})
    with pytest.raises(jitcep.MissingColumnError):
        jitcep.compile("PATTERN SEQ(A a, * b) WITHIN 10").run(df, engine="reference")


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_untyped_pattern_needs_no_type_column(engine):
    df = pl.DataFrame({"ts": [1, 2, 4], "x": [3, 1, 5]})
    out = jitcep.compile("PATTERN SEQ(* a, * b) WHERE a.x < b.x WITHIN 2").run(df, engine=engine)
    # (0, 2) spans 3 > 2; (1, 2) has 1 < 5 and spans 2; (0, 1) has 3 > 1
    assert [(a["row"], b["row"]) for a, b in zip(out["a"], out["b"])] == [(1, 2)]


def test_table_without_type_column_gives_every_event_the_null_type():
    df = pl.DataFrame({"ts": [1, 2, 3, 4]})
    t = build_event_table(df, None)
    assert t.type_names == () and t.type_code.tolist() == [-1, -1, -1, -1]
    # evaluated directly over such a table, a typed variable matches nothing on either engine, and
    # an untyped one everything (semantics §3)
    typed = jitcep.compile("PATTERN SEQ(A a, * b) WITHIN 10").patterns[0]
    untyped = jitcep.compile("PATTERN SEQ(* a, * b) WITHIN 1").patterns[0]
    for evaluate in (reference.evaluate, runtime.evaluate):
        got_typed, got_untyped = evaluate([typed, untyped], t, Options())
        assert got_typed.n == 0
        assert sorted(zip(got_untyped.single["a"].tolist(), got_untyped.single["b"].tolist())) == \
            [(0, 1), (1, 2), (2, 3)]


# --- every kernel wrapper refuses indexes outside its arrays ------------------------------------------

# Each case calls one wrapper with an index-like input out of range; before the wrappers checked,
# each of these read or wrote outside an array.  All run in one subprocess (a crash ends only it),
# which prints each case's outcome.
_BAD_INPUTS = r'''
import json
import numpy as np
from jitcep.errors import KernelInputError
from jitcep.kernels import (encode, final_join, grouping, join, kleene, list_columns, negation, order, reduction,
                            sampling, selection)
from jitcep.codegen import PredicateSet
from jitcep.codegen.join_where import join_where
from jitcep.codegen.predicates import ColumnSpec
from jitcep.kernels import join_filtered
from jitcep.pattern import expr as E

i64 = lambda *xs: np.array(xs, dtype=np.int64)
ts = i64(0, 1, 2, 3)
leaf = lambda *ps: (lambda p: (p.reshape(-1, 1), p, p, i64(0, len(p))))(i64(*ps))  # start is end
buf2 = (i64(0, 1, 2, 3).reshape(2, 2), i64(0, 2), i64(1, 3), i64(0, 2))


def recs(*pairs):  # group_with_keys records: key << 32 | position, value
    r = np.zeros((len(pairs), 2), np.int64)
    for j, (key, p) in enumerate(pairs):
        r[j, 0] = (key << 32) | p
    return r


class Table:
    def __init__(self, n, col):
        self.ts = np.arange(n, dtype=np.int64)
        self.columns = {"x": col}


class Col:
    def __init__(self, values):
        self.kind, self.values, self.valid, self.dictionary = "int", values, None, ()


pred = E.Cmp("<", E.Attr("a", "x"), E.Lit(2))
ps = PredicateSet([pred], {"x": ColumnSpec("x", "int", False)})

CASES = {
    "counting_sort: code past n_codes": lambda: grouping.counting_sort(i64(0, 5), 3),
    "group_with_keys: code past n_codes": lambda: grouping.group_with_keys(i64(0, 7) , 2, None, i64(1, 2)),
    "group_with_keys: keep shorter than the codes": lambda: grouping.group_with_keys(
        i64(0, 1), 3, None, i64(1, 2), keep=np.ones(2, np.bool_)),
    "group_with_keys: values shorter than the codes": lambda: grouping.group_with_keys(i64(0, 1), 2, None, i64(1)),
    "leaf_by_key: key past G": lambda: grouping.leaf_by_key(recs((0, 0), (5, 1)), 2, None),
    "leaf_by_key: position past wt": lambda: grouping.leaf_by_key(recs((0, 0), (0, 100)), 1, None, ts),
    "group_with_key_runs: key past G": lambda: grouping.group_with_key_runs(i64(0, 1), 2, i64(0, 9), 3, i64(1, 2)),
    "group_with_key_runs: code past n_codes": lambda: grouping.group_with_key_runs(i64(0, 7), 2, i64(0, 1), 2,
                                                                                    i64(1, 2)),
    "leaf_of_run: key offsets past the records": lambda: grouping.leaf_of_run(recs((0, 0), (0, 1)), i64(0, 1, 5)),
    "leaf_of_run: key offsets descending": lambda: grouping.leaf_of_run(recs((0, 0), (0, 1)), i64(0, 2, 1)),
    "leaf_of_run: position past wt": lambda: grouping.leaf_of_run(recs((0, 0), (0, 100)), i64(0, 2), ts),
    "stream_positions: position past n": lambda: grouping.stream_positions(i64(0, 99), i64(0, 2), 3),
    "stream_positions: offsets past order": lambda: grouping.stream_positions(i64(0, 1), i64(0, 5), 3),
    "draw_sample: more blocks than there are": lambda: sampling.draw_sample(i64(0, 1), 2, 3, 4, 0, 0),
    "draw_sample: draws from no events": lambda: sampling.draw_sample(i64(), 2, 0, 0, 5, 0),
    "candidates: key flags shorter than the events": lambda: sampling.candidates(
        i64(0, 1, 2), np.ones((2, 3), np.bool_), np.ones(1, np.bool_)),
    "window_ranges: candidate past the sample": lambda: sampling.window_ranges(
        i64(0), i64(0), i64(0), i64(0, 70), i64(0, 0, 1, 1), ts, 5, True),
    "window_ranges: first event past the sample": lambda: sampling.window_ranges(
        i64(70), i64(0), i64(0), i64(0), i64(0, 0, 1, 1), ts, 5, False),
    "block_sample: block past the table": lambda: sampling.block_sample(i64(0, 1, 2, 3), ts[:4], i64(2), 2),
    "sample_with_key: blocks past the table": lambda: sampling.sample_with_key(
        i64(0, 1, 2, 3), ts[:4], 3, 3, 1, 2, 0, 2, False, i64(0, 1, 2, 3), None, 1, np.ones((1, 4), np.bool_)),
    "key_codes: position past the column": lambda: sampling.key_codes(i64(0, 1), None, i64(0, 2)),
    "key_codes: validity shorter than the values": lambda: sampling.key_codes(
        i64(0, 1), np.ones(1, np.bool_), None),
    "extend_tuples: candidate range past the candidates": lambda: sampling.extend_tuples(
        i64(0).reshape(1, 1), i64(0), i64(0), i64(1), i64(5), i64(0, 1), ts, ts, 5.0, i64(0)),
    "extend_tuples: candidate past the sample": lambda: sampling.extend_tuples(
        i64(0).reshape(1, 1), i64(0), i64(0), i64(0), i64(1), i64(70), ts, ts, 5.0, i64(0)),
    "seq_join: offsets past the records": lambda: join.seq_join(
        (i64(0).reshape(1, 1), i64(0), i64(0), i64(0, 100)), leaf(1), ts, ts, 10, "position", False, 10**6),
    "seq_join: partitions differ": lambda: join.seq_join(
        (i64(0).reshape(1, 1), i64(0), i64(0), i64(0, 1, 1)), leaf(1), ts, ts, 10, "position", False, 10**6),
    "seq_join: record arrays differ in length": lambda: join.seq_join(
        (i64(0, 1).reshape(2, 1), i64(0), i64(0, 1), i64(0, 2)), leaf(2), ts, ts, 10, "position", False, 10**6),
    "and_join: descending offsets": lambda: join.and_join(
        (i64(0, 1).reshape(2, 1), i64(0, 1), i64(0, 1), i64(2, 0)), leaf(2), ts, ts, 10, False, 10**6),
    "pair_columns: a pair past the records": lambda: join.pair_columns(
        i64(0, 1).reshape(2, 1), i64(0).reshape(1, 1), i64(0, 2), i64(0, 0), [(0, 0)]),
    "pair_columns: a column past the records": lambda: join.pair_columns(
        i64(0, 1).reshape(2, 1), i64(0).reshape(1, 1), i64(0), i64(0), [(1, 1)]),
    "keep_pairs: keep shorter than the pairs": lambda: join.keep_pairs(i64(0, 1), i64(0, 1), i64(0, 0),
                                                                       np.ones(1, np.bool_)),
    "seq_join: negative window": lambda: join.seq_join(leaf(0), leaf(1), ts, ts, -1, "position", False, 10**6),
    "earliest_end: offsets past the leaf": lambda: reduction.earliest_end(
        (i64(0), i64(0), i64(0, 9)), (i64(1), i64(1), i64(0, 1)), i64(1), np.ones(1, np.bool_), 0),
    "earliest_end: partitions differ": lambda: reduction.earliest_end(
        (i64(0), i64(0), i64(0, 1)), (i64(1), i64(1), i64(0, 1, 1)), i64(1), np.ones(1, np.bool_), 0),
    "earliest_end: ends shorter than the leaf": lambda: reduction.earliest_end(
        (i64(0), i64(0), i64(0, 1)), (i64(1, 2), i64(1, 2), i64(0, 2)), i64(1), np.ones(2, np.bool_), 0),
    "latest_start: descending offsets": lambda: reduction.latest_start(
        (i64(0, 1), i64(0, 1), i64(2, 0)), i64(0, 1), np.ones(2, np.bool_), (i64(2), i64(2), i64(0, 1)), 0),
    "latest_start: times shorter than the positions": lambda: reduction.latest_start(
        (i64(0, 1), i64(0), i64(0, 2)), i64(0, 1), np.ones(2, np.bool_), (i64(2), i64(2), i64(0, 1)), 0),
    "chain_reach: measures shorter than the leaf": lambda: reduction.chain_reach(
        [(i64(0), i64(0), i64(0, 1)), (i64(1, 2), i64(1, 2), i64(0, 2))], [i64(0), i64(1)], 0, 10),
    "negation_ranges: candidate past the events": lambda: negation.negation_ranges(
        buf2, (i64(0, 50), i64(0, 2)), ts, ts, 10, "position", [1], [], False),
    "negation_ranges: column past the record": lambda: negation.negation_ranges(
        buf2, (i64(1, 2), i64(0, 2)), ts, ts, 10, "position", [7], [], False),
    "negation_ranges: record position past the events": lambda: negation.negation_ranges(
        (i64(0, 90).reshape(1, 2), i64(0), i64(90), i64(0, 1)), (i64(1, 2), i64(0, 2)), ts, ts, 10,
        "position", [], [], False),
    "negation_ranges: leaf offsets past the leaf": lambda: negation.negation_ranges(
        buf2, (i64(1, 2), i64(0, 9)), ts, ts, 10, "position", [0], [], False),
    "negation_ranges (ranked): record position past the events": lambda: negation.negation_ranges(
        (i64(0, 90).reshape(1, 2), i64(0), i64(90), i64(0, 1)), (i64(1, 2), i64(0, 2)), ts, ts, 10,
        "position", [1], [0], False, ranked=True),
    "negation_ranges (ranked): candidate past the events": lambda: negation.negation_ranges(
        buf2, (i64(0, 50), i64(0, 2)), ts, ts, 10, "position", [1], [], False, ranked=True),
    "killed_unconditionally: range past the candidates": lambda: negation.killed_unconditionally(
        buf2[0], i64(0, 0), i64(1, 9), i64(1, 2)),
    "candidate_pairs: range past the candidates": lambda: negation.candidate_pairs(
        buf2[0], i64(0, 0), i64(1, 9), i64(1, 2), np.zeros(2, np.bool_), 0, 100),
    "candidate_pairs: range ends before it starts": lambda: negation.candidate_pairs(
        buf2[0], i64(2, 0), i64(0, 2), i64(1, 2), np.zeros(2, np.bool_), 0, 100),
    "candidate_rows: range past the candidates": lambda: negation.candidate_rows(
        buf2[0], i64(0, 0), i64(1, 9), i64(1, 2), np.zeros(2, np.bool_), 0, 100, [-1, 0]),
    "candidate_rows: column past the record": lambda: negation.candidate_rows(
        buf2[0], i64(0, 0), i64(1, 1), i64(1, 2), np.zeros(2, np.bool_), 0, 100, [-1, 5]),
    "next_ranges: run partition past the leaf": lambda: selection.next_ranges(
        i64(1), i64(0), i64(3), (i64(1, 2), i64(0, 2)), ts, ts, 10, False),
    "next_ranges: last position past the events": lambda: selection.next_ranges(
        i64(40), i64(0), i64(0), (i64(1, 2), i64(0, 2)), ts, ts, 10, False),
    "next_ranges: leaf offsets past the leaf": lambda: selection.next_ranges(
        i64(1), i64(0), i64(0), (i64(1, 2), i64(0, 9)), ts, ts, 10, False),
    "contiguous_next: successor past the events": lambda: selection.contiguous_next(
        i64(0), i64(0), i64(0), i64(70, 2, 3, -1), i64(0, 0, 0, 0), ts, ts, 10, False),
    "contiguous_next: slot shorter than the events": lambda: selection.contiguous_next(
        i64(0), i64(0), i64(0), i64(1, 2, 3, -1), i64(0), ts, ts, 10, False),
    "successors: position past n": lambda: selection.successors(i64(0, 9), i64(0, 2), 4),
    "round_ranges: nxt narrower than alive": lambda: selection.round_ranges(
        np.ones((2, 3), np.bool_), i64(0, 1), np.zeros((2, 2), np.int64), np.ones(3, np.bool_)),
    "round_ranges: kleene shorter than the states": lambda: selection.round_ranges(
        np.ones((2, 3), np.bool_), i64(0, 1), np.zeros((2, 3), np.int64), np.ones(1, np.bool_)),
    "next_relevant: row past the runs": lambda: selection.next_relevant(
        np.zeros((2, 3), np.int64), i64(0, 0), i64(2, 2), i64(0, 5), 1),
    "advance: nxt shorter than alive": lambda: selection.advance(
        np.ones((2, 3), np.bool_), np.zeros((1, 3), np.int64), i64(0, 0), i64(2, 2)),
    "fork_runs: row past the runs": lambda: selection.fork_runs(
        np.zeros((2, 3), np.int64), np.zeros((2, 1), np.int64), np.zeros((2, 1), np.int64), i64(0, 0), i64(0, 0),
        i64(7), i64(4), 1, 0, 0),
    "fork_runs: Kleene state past the lists": lambda: selection.fork_runs(
        np.zeros((2, 3), np.int64), np.zeros((2, 1), np.int64), np.zeros((2, 1), np.int64), i64(0, 0), i64(0, 0),
        i64(1), i64(4), 1, 3, 0),
    "first_at_or_after: range ends before it starts": lambda: selection.first_at_or_after(
        i64(1, 2, 3), i64(2), i64(0), i64(5)),
    "subsequences: offsets past the members": lambda: kleene.subsequences(
        i64(0, 9), i64(0, 1), ts, False, 1, None, 100, 100),
    "subsequences: member past the events": lambda: kleene.subsequences(
        i64(0, 2), i64(0, 70), ts, False, 1, None, 100, 100),
    "subsequences: follows table too small": lambda: kleene.subsequences(
        i64(0, 2), i64(0, 1), ts, False, 1, None, 100, 100, np.ones(1, np.bool_)),
    "subsequences: window measure shorter than the events": lambda: kleene.subsequences(
        i64(0, 2), i64(0, 1), ts, False, 1, None, 100, 100, wt=i64(0, 1), W=3),
    "subsequence_counts: offsets past the members": lambda: kleene.subsequence_counts(
        i64(0, 9), i64(0, 1), 1, None, 100, 100),
    "subsequence_counts: member past the window measure": lambda: kleene.subsequence_counts(
        i64(0, 2), i64(0, 70), 1, None, 100, 100, wt=ts, W=3),
    "iteration_lists: offsets past the candidates": lambda: kleene.iteration_lists(
        i64(0, 9), *(i64(0, 1),) * 6, i64(0), i64(0), True, False, 3, 1, None, 100, 100, 100),
    "iteration_lists: record measures shorter than the records": lambda: kleene.iteration_lists(
        i64(0, 2, 2), *(i64(0, 1),) * 6, i64(0), i64(0), True, False, 3, 1, None, 100, 100, 100),
    "iteration_lists: follows table too small": lambda: kleene.iteration_lists(
        i64(0, 2), *(i64(0, 1),) * 6, i64(0), i64(0), True, False, 3, 1, None, 100, 100, 100,
        np.ones(1, np.bool_)),
    "outside_lists: record past the lists": lambda: kleene.outside_lists(i64(0, 5), i64(1, 2), i64(0, 1), i64(3)),
    "every_passes: offsets past the verdicts": lambda: kleene.every_passes(i64(0, 4), np.ones(3, np.bool_)),
    "every_passes: negative first": lambda: kleene.every_passes(i64(0, 1), np.ones(1, np.bool_), -1),
    "outside_lists: offsets past the members": lambda: kleene.outside_lists(i64(0), i64(1), i64(0, 4), i64(3)),
    "member_pairs: offsets past the members": lambda: kleene.member_pairs(i64(0, 9), i64(0, 1)),
    "segment_aggregate: offsets past the values": lambda: kleene.segment_aggregate(
        i64(0, 9), i64(1, 2), np.ones(2, np.bool_), "sum"),
    "closure_runs: descending offsets": lambda: kleene.closure_runs(i64(0, 5, 2), 1, 3),
    "gather_lists: run past the members": lambda: kleene.gather_lists(i64(1, 2), i64(1), i64(2)),
    "anchored_members: record past the anchors": lambda: kleene.anchored_members(i64(0, 3), i64(1, 2), i64(0)),
    "lists_within: member past the events": lambda: kleene.lists_within(i64(0), i64(0, 1), i64(9), i64(0), i64(0),
                                                                        ts, 5),
    "list_key: offsets past the members": lambda: list_columns.list_key(i64(0, 9), i64(1, 2), None, i64(0),
                                                                        np.zeros(12, np.int64), i64(0), i64(0)),
    "list_key: a part past the key": lambda: list_columns.list_key(i64(0, 2), i64(1, 2), None, i64(0),
                                                                   np.zeros(2, np.int64), i64(0), i64(0)),
    "canonical_order: list key offsets past the key": lambda: order.canonical_order(
        i64(0, 1).reshape(2, 1), i64(0), i64(0, 1, 5), i64(1, 2)),
    "list_bounds: offsets past the members": lambda: list_columns.list_bounds(i64(0, 9), i64(1, 2), i64(0),
                                                                              i64(0)),
    "take_lists: list past the offsets": lambda: list_columns.take_lists(i64(0, 2), i64(1, 2), i64(1)),
    "canonical_pairs: pair past the left records": lambda: order.canonical_pairs(
        i64(0, 1).reshape(2, 1), i64(2).reshape(1, 1), i64(2), i64(0), i64(0), 5),
    "canonical_pairs: position past the events": lambda: order.canonical_pairs(
        i64(0, 1).reshape(2, 1), i64(9).reshape(1, 1), i64(1), i64(0), i64(1), 5),
    "seq_join_rows: offsets past the records": lambda: final_join.seq_join_rows(
        (i64(0).reshape(1, 1), i64(0), i64(0), i64(0, 100)), leaf(1), ts, ts, 10, "position", False, 10**6,
        i64(0, 1), 5),
    "seq_join_rows: a column past the records": lambda: final_join.seq_join_rows(leaf(0), leaf(1), ts, ts, 10, "position",
                                                                           False, 10**6, i64(0, 2), 5),
    "seq_join_rows: an end past the events": lambda: final_join.seq_join_rows(leaf(0), leaf(1), ts, ts, 10, "position",
                                                                        False, 10**6, i64(0, 1), 1),
    "run_aggregates: run past the values": lambda: kleene.run_aggregates(
        i64(0, 1), i64(2, 5), i64(1, 2, 3), np.ones(3, np.bool_), "sum"),
    "run_aggregates: valid shorter than the values": lambda: kleene.run_aggregates(
        i64(0), i64(3), i64(1, 2, 3), np.ones(2, np.bool_), "min"),
    "range_group: value outside the given bounds": lambda: encode.range_group(i64(0, 1, 9), bounds=(0, 2)),
    "present_codes: value past size": lambda: encode.present_codes(i64(0, 9), None, 3),
    "apply_table: value past the table": lambda: encode.apply_table(i64(0, 9), None, np.zeros(3, np.int32)),
    "rank_inplace: code past the ranks": lambda: encode.rank_inplace(np.array([0, 9], np.int32),
                                                                    np.zeros(3, np.int32)),
    "first_rows: code past k": lambda: encode.first_rows(i64(0, 9), 2),
    "view_codes_at: row past the views": lambda: encode.view_codes_at(np.zeros(4, np.uint64), i64(0, 5)),
    "string_codes: offsets past the bytes": lambda: encode.string_codes(i64(0, 2, 90), np.zeros(3, np.uint8), None),
    "HashCoder.feed: rows past n": lambda: encode.HashCoder(2).feed(1, i64(5, 6), None),
    "predicates: position past the table": lambda: ps.mask(0, i64(0, 40).reshape(1, 2), ps.bind(Table(4, Col(ts)))),
    "predicates: column shorter than the table": lambda: ps.bind(Table(8, Col(ts))),
    "seq_join_where: a predicate's event past the table": lambda: join_filtered.seq_join_where(
        join_where(ps, [0], ("a",), ("b",)), (i64(40).reshape(1, 1), i64(0), i64(0), i64(0, 1)), leaf(1), ts, ts,
        10, "position", False, 10**6, ps.bind(Table(4, Col(ts)))),
    "seq_join_where: offsets past the records": lambda: join_filtered.seq_join_where(
        join_where(ps, [0], ("a",), ("b",)), (i64(0).reshape(1, 1), i64(0), i64(0), i64(0, 100)), leaf(1), ts, ts,
        10, "position", False, 10**6, ps.bind(Table(4, Col(ts)))),
}
out = {}
for name, call in CASES.items():
    try:
        call()
    except KernelInputError as e:
        out[name] = "KernelInputError"
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
    else:
        out[name] = "no error"
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def bad_input_outcomes() -> dict:
    import json

    got = run_python(_BAD_INPUTS)
    assert got.returncode == 0, f"the process died ({got.returncode}):\n{got.stderr[-3000:]}"
    return json.loads(got.stdout.strip().splitlines()[-1])


def test_every_kernel_wrapper_refuses_out_of_range_indexes(bad_input_outcomes):
    wrong = {case: outcome for case, outcome in bad_input_outcomes.items() if outcome != "KernelInputError"}
    assert not wrong, wrong
    assert len(bad_input_outcomes) >= 30


def test_kernel_input_error_is_a_jitcep_error():
    assert issubclass(jitcep.errors.KernelInputError, jitcep.JitcepError)


# --- the kernel and differential tests again, every array access bounds-checked ----------------------

# Kernel tests against their naive twins, the engine at the int64 time extremes, the bad-input
# matrix and a sample of the differential tests (compiled engine vs oracles on generated streams),
# rerun with NUMBA_BOUNDSCHECK=1: an index the wrappers let through raises IndexError there instead
# of reading foreign memory.  A sample, not every test: compiling every kernel with bounds checks
# takes a while, and this runs in the default selection (about 2 minutes on 2 cores).
BOUNDSCHECKED = [
    "tests/test_kernels_join.py",
    "tests/test_kernels_negation.py",
    "tests/test_kernels_kleene.py",
    "tests/test_kernels_grouping.py",
    "tests/test_kernels_sampling.py",
    "tests/test_kernels_window.py",
    "tests/test_kernels_policies.py",
    "tests/test_kernels_order.py",  # with kernels.list_columns and kernels.closure_order
    "tests/test_kernels_gather.py",
    "tests/test_kernels_selection.py",
    "tests/test_kernels_reduction.py",
    "tests/test_kernels_join_search.py",
    "tests/test_kernels_join_filtered.py",  # the generated SEQ join with its predicates in its loop
    "tests/test_kernels_and_join_filtered.py",  # the generated AND join with its predicates in its loop
    "tests/test_kernels_negation_filtered.py",  # the generated negation with its conditions in its loop
    # an integer array's extent (kernels.extent.min_max, which every one-pass index check runs)
    "tests/test_kernels_encode.py::test_value_range_equals_min_max_of_the_valid_values",
    # the String coding's view table (kernels.encode._view_fill and its growth)
    *(f"tests/test_kernels_encode.py::test_view_codes_{name}" for name in (
        "match_naive", "recode_the_first_rows_in_sorted_order", "ignore_bytes_past_the_length", "table_grows",
        "at_match_naive", "at_grows_its_table")),
    # strings past 12 bytes coded from their views and buffers (kernels.encode._long_view_fill)
    *(f"tests/test_kernels_encode.py::test_long_view_codes_{name}" for name in (
        "match_naive", "table_grows_and_tells_apart_shared_prefixes", "refuse_a_view_past_its_buffer",
        "stop_past_max_codes")),
    # a run's types numbered from the views (kernels.encode._run_view_codes)
    *(f"tests/test_kernels_encode.py::test_run_view_codes_{name}" for name in (
        "match_naive", "ignore_bytes_past_the_length", "refuse_chunks_past_their_views_or_rows")),
    *(f"tests/test_time_exact.py::test_windows_at_int64_extremes_equal_the_python_int_oracle[compiled-{kind}]"
      for kind in ("seq", "and", "seq3", "neg_start", "neg_end", "kleene_end", "kleene_start", "kleene_maximal")),
    "tests/test_memory_safety.py::test_every_kernel_wrapper_refuses_out_of_range_indexes",
    "tests/test_compiled_differential.py::test_compiled_equals_oracle[0]",
    "tests/test_compiled_differential.py::test_compiled_equals_oracle[1]",
    *(f"tests/test_compiled_differential.py::test_compiled_kleene_equals_reference[0-{mode}]"
      for mode in ("maximal", "all", "maximal+negation", "all+negation")),
    "tests/test_compiled_policies.py::test_policies_compiled_equal_reference[0]",
    "tests/test_compiled_reduction.py::test_reduced_compiled_equals_reference[0]",
    *(f"tests/test_compiled_strategies.py::test_compiled_strategy_equals_reference[{strategy}-0]"
      for strategy in ("skip_till_next_match", "partition_contiguity", "strict_contiguity")),
    # a Kleene state alone (seed 3) and read with a later variable (seed 8): the runs' list edges
    "tests/test_compiled_strategies.py::test_compiled_kleene_state_equals_reference[skip_till_next_match-3]",
    "tests/test_compiled_strategies.py::test_compiled_kleene_state_equals_reference[strict_contiguity-8]",
    *(f"tests/test_compiled_differential.py::test_compiled_kleene_forms_equal_reference[0-all+{form}]"
      for form in ("and+negation", "anchored", "item")),
    *(f"tests/test_compiled_groups.py::test_compiled_groups_equal_reference[0-{form}]"
      for form in ("between", "anchored")),
]

_PROBE = """
import numpy as np
from numba import njit

@njit
def past_the_end(a):
    return a[len(a)]

try:
    past_the_end(np.zeros(2))
except IndexError:
    print("bounds checked")
"""


def test_kernel_and_differential_tests_pass_with_numba_boundscheck(tmp_path):
    # compiled code cached by ordinary runs was compiled without bounds checks: fresh Numba and
    # codegen caches, so that every kernel and generated predicate is compiled with them
    env = dict(NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               JITCEP_CACHE_DIR=str(tmp_path / "codegen"))
    probe = run_python(_PROBE, **env)
    assert probe.stdout.strip() == "bounds checked", probe.stderr[-2000:]
    got = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *BOUNDSCHECKED],
                         capture_output=True, text=True, timeout=1200, cwd=str(ROOT),
                         env=dict(os.environ, PYTHONPATH=str(ROOT), **env))
    assert got.returncode == 0, got.stdout[-4000:] + got.stderr[-2000:]
    assert " passed" in got.stdout and "error" not in got.stdout.splitlines()[-1]
