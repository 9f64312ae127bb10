"""The compiled engine's own contract: what it refuses, plan checking, caps, the on-disk code cache."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import import_module

import numpy as np
import pytest

from jitcep import config, runtime
from jitcep.codegen import ColumnSpec, PredicateSet
from jitcep.errors import ExplosionError, MissingWindowError, UnsupportedPatternError
from jitcep.events import Column, EventTable
from jitcep.execute import negation, scan, tables
from jitcep.options import Options
from jitcep.pattern.ast import Conj, EventVar, Kleene, Neg, Pattern, Seq, TimeWindow
from jitcep.plan import AndJoin, Scan, SeqJoin, Union, all_shapes, all_trees, build_plan
from jitcep.plan.operators import SemiJoinReduce

E = import_module("jitcep.pattern.expr")


def table(types, ts, x=None):
    names = tuple(sorted(set(types)))
    cols = {} if x is None else {"x": Column("int", np.array(x, dtype=np.int64), None)}
    return EventTable(ts=np.array(ts, dtype=np.int64), row=np.arange(len(ts), dtype=np.int64),
                      type_code=np.array([names.index(t) for t in types], dtype=np.int32), type_names=names,
                      columns=cols, time_unit_ns=None, time_dtype=None)


A, B, C = (EventVar(n, (n.upper(),)) for n in "abc")


def bindings(mt):
    return [tuple(b.values()) for b in mt.to_bindings()]


def test_a_refused_pattern_is_refused_before_any_work(monkeypatch):
    # closures that may all be empty are planned as 3 alternatives (b only, c only, both); past the
    # limit on alternatives the compiled engine refuses the pattern by name, before reading the table
    # (nothing the semantics defines is refused under the default limits: tests/test_generated_corpus.py)
    monkeypatch.setattr(config, "DNF_MAX_ALTERNATIVES", 1)
    pattern = Pattern(Seq((Kleene(B, 0, None), Kleene(C, 0, None))), None, TimeWindow(5))
    with pytest.raises(UnsupportedPatternError, match="compiled engine.*DNF_MAX_ALTERNATIVES"):
        runtime.evaluate([pattern], table("AC", [1, 2]), Options())


@pytest.mark.parametrize("shape", [None, ("a", ("c", "d")), (("a", "c"), "d")])
def test_negation_between_start_and_end(shape):
    # positions:     0    1    2    3    4    5
    # types:         A    B    C    A    C    D     ts = position, WITHIN 5
    D = EventVar("d", ("D",))
    t = table("ABCACD", list(range(6)))
    mid = Pattern(Seq((A, Neg(B), C, D)), None, TimeWindow(5))
    # the B at 1 kills every (a=0, c) pair; a=3 has no B before its c=4
    assert sorted(bindings(runtime.evaluate([mid], t, Options(), plan=shape)[0])) == [(3, 4, 5)]
    start = Pattern(Seq((Neg(B), A, C)), None, TimeWindow(3))
    # a B before a and within 3 of the match's last event: (3, 4) has one (ts 1 >= 4 - 3); (0, 2) none
    got = sorted(bindings(runtime.evaluate([start], t, Options())[0]))
    assert got == [(0, 2)]
    end = Pattern(Seq((A, C, Neg(B))), None, TimeWindow(5))
    # a B after c within 5 of a: none after position 2, so every (a, c) survives
    assert sorted(bindings(runtime.evaluate([end], t, Options())[0])) == [(0, 2), (0, 4), (3, 4)]
    conj = Pattern(Seq((A, Conj((Neg(B), C)))), None, TimeWindow(5))
    # SEQ(a, AND(!b, c)): no B after a and before the match's last event
    assert sorted(bindings(runtime.evaluate([conj], t, Options())[0])) == [(3, 4)]


@pytest.mark.parametrize("opts", [dict(strategy="skip_till_next_match"), dict(strategy="strict_contiguity")])
def test_kleene_state_read_with_a_later_variable_runs_under_other_strategies(opts):
    # the conjunct's last identifier is c: c's begin edge reads b's list, avg(B1.x) = 1 < C2.x = 2, and
    # with C2.x = 1 it fails (SASE+ 3.2 step 2)
    where = E.Cmp("<", E.Agg("avg", "b", "x"), E.Attr("c", "x"))
    pattern = Pattern(Seq((A, Kleene(B, 1, None), C)), where, TimeWindow(5))
    [m] = runtime.evaluate([pattern], table("ABC", [1, 2, 3], [0, 1, 2]), Options(**opts))
    assert bindings(m) == [(0, 2, (1,))]  # singletons, then lists
    [m] = runtime.evaluate([pattern], table("ABC", [1, 2, 3], [0, 1, 1]), Options(**opts))
    assert bindings(m) == []


@pytest.mark.parametrize("opts", [dict(strategy="skip_till_next_match"), dict(strategy="strict_contiguity")])
def test_closures_that_may_all_be_empty_run_under_other_strategies(opts):
    # A(0) B(1) C(2), adjacent: a run begins at B1 (b = [1], then c empty or [2]) or at C2 (b empty);
    # each alternative's runs are the runs of the pattern whose first event is in that closure
    pattern = Pattern(Seq((Kleene(B, 0, None), Kleene(C, 0, None))), None, TimeWindow(5))
    [m] = runtime.evaluate([pattern], table("ABC", [1, 2, 3], [0, 1, 2]), Options(**opts))
    assert sorted(bindings(m)) == [((), (2,)), ((1,), ()), ((1,), (2,))]


def test_missing_window_is_an_error():
    with pytest.raises(MissingWindowError):
        runtime.evaluate([Pattern(Seq((A, B)))], table("AB", [1, 2]), Options())


def _joins(plan):
    """The join tree of a plan of a SEQ of three: under the semi-join reduction of its leaves."""
    assert isinstance(plan.root, SemiJoinReduce) and plan.root.chain == ("a", "b", "c")
    return plan.root.input


def test_seq_items_joined_out_of_order():
    # SEQ(a, b, c) joined as ((a, c), b): a before c is a SEQ join; b then joins (a, c) with a before b
    # and b before c, an AND join testing both orders (Kolchinsky & Schuster section 4)
    p = Pattern(Seq((A, B, C)), None, TimeWindow(5))
    root = _joins(build_plan(p, (("a", "c"), "b")))
    assert isinstance(root, AndJoin) and set(root.sequence) == {("a", "b"), ("b", "c")}
    assert isinstance(root.left, SeqJoin) and root.left.vars == ("a", "c")
    # a shape naming the later side first: the SEQ join takes the earlier side as its left input
    root = _joins(build_plan(p, ("c", ("b", "a"))))
    assert isinstance(root, SeqJoin) and root.vars == ("a", "b", "c") and root.left.vars == ("a", "b")
    # A0 B1 A2 C3 B4 C5 (ts 0..5), WITHIN 3: (0, 1, 3), (2, 4, 5) under every join tree
    t = table(list("ABACBC"), [0, 1, 2, 3, 4, 5])
    trees = all_trees(p.body)
    assert len(trees) == 12
    for shape in trees:
        [mt] = runtime.evaluate([Pattern(Seq((A, B, C)), None, TimeWindow(3))], t, Options(), plan=shape)
        assert sorted(bindings(mt)) == [(0, 1, 3), (2, 4, 5)], shape


def test_an_or_is_united_before_it_joins_outside_variables():
    from jitcep.pattern.ast import Disj
    p = Pattern(Seq((A, Disj((B, C)), EventVar("d", ("D",)))), None, TimeWindow(5))
    with pytest.raises(UnsupportedPatternError, match="OR"):
        build_plan(p, ((("a", "b"), "c"), "d"))
    assert isinstance(build_plan(p, (("a", ("c", "b")), "d")).root.left.right, Union)


def test_predicates_go_to_the_lowest_covering_node():
    where = E.BoolOp("and", (E.Cmp(">", E.Attr("a", "x"), E.Lit(1)),
                             E.Cmp("<", E.Attr("b", "x"), E.Attr("c", "x")),
                             E.Cmp("<", E.Attr("a", "x"), E.Attr("c", "x"))))
    root = _joins(build_plan(Pattern(Seq((A, B, C)), where, TimeWindow(5)), ("a", ("b", "c"))))
    assert isinstance(root.left, Scan) and root.left.filter is not None
    assert root.right.predicates == (where.items[1],)
    assert root.predicates == (where.items[2],)


def test_all_shapes_counts():
    # SEQ of 4: Catalan(3) = 5 bracketings; AND of 3: 3 splits x 2 orientations x 2 sub-orientations = 12
    assert len(all_shapes(Seq((A, B, C, EventVar("d", ("D",)))))) == 5
    assert len(all_shapes(Conj((A, B, C)))) == 12


def test_cross_branch_predicate_is_refused():
    from jitcep.pattern.ast import Disj
    where = E.Cmp("<", E.Attr("a", "x"), E.Attr("b", "x"))
    with pytest.raises(UnsupportedPatternError, match="OR branches"):
        build_plan(Pattern(Disj((A, B)), where, TimeWindow(5)))


def test_hand_enumerated_seq_with_explicit_plans():
    # A0 B1 A2 C3 B4 C5 at ts 0..5, WITHIN 3: (a, b, c) with a < b < c and c.ts - a.ts <= 3
    t = table(list("ABACBC"), [0, 1, 2, 3, 4, 5])
    p = Pattern(Seq((A, B, C)), None, TimeWindow(3))
    expected = [(0, 1, 3), (2, 4, 5)]
    for shape in all_shapes(p.body):
        [mt] = runtime.evaluate([p], t, Options(), plan=shape)
        assert sorted(bindings(mt)) == expected, shape


def test_max_matches_raises_explosion():
    t = table(["A"] * 30 + ["B"] * 30, list(range(60)))
    p = Pattern(Seq((A, B)), None, TimeWindow(100))
    with pytest.raises(ExplosionError, match="max_matches"):
        runtime.evaluate([p], t, Options(max_matches=100))
    with pytest.raises(ExplosionError, match="max_partials"):
        runtime.evaluate([p], t, Options(max_partials=100))


def test_generated_code_is_reused_by_a_second_process(tmp_path):
    preds = [E.Cmp(">", E.Attr("a", "x"), E.Lit(12345))]
    env = dict(os.environ, JITCEP_CACHE_DIR=str(tmp_path / "gen"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    code = (
        "import numpy as np\n"
        "from importlib import import_module\n"
        "E = import_module('jitcep.pattern.expr')\n"
        "from jitcep.codegen import ColumnSpec, PredicateSet\n"
        "ps = PredicateSet([E.Cmp('>', E.Attr('a', 'x'), E.Lit(12345))], {'x': ColumnSpec('x', 'int', False)})\n"
        "out = np.empty(2, np.bool_)\n"
        "ps.fn(0, np.array([[0, 1]]), out, np.zeros(2, np.int64), np.zeros(1, np.int64),\n"
        "      np.array([1, 20000]), np.ones(1, np.bool_), 0)\n"
        "print(out.tolist(), ps.fn.stats.cache_hits and sum(ps.fn.stats.cache_hits.values()))\n"
    )
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.split()[:2] == ["[False,", "True]"]
    assert int(second.stdout.split()[-1]) >= 1, "second process compiled again instead of loading the cache"
    assert PredicateSet(preds, {"x": ColumnSpec("x", "int", False)}).source.count("def predicates") == 1


def test_negation_is_pushed_down_to_the_join_of_its_neighbours(monkeypatch):
    """ZStream 4.4.2: SEQ(a, !b, c, d) kills (a, c) pairs before d joins; not under nondecreasing_ts."""
    D = EventVar("d", ("D",))
    t = table("ABCACD", list(range(6)))
    pat = Pattern(Seq((A, Neg(B), C, D)), None, TimeWindow(5))
    seen = []
    real = negation._killed

    def spy(state, node, buf):
        seen.append((buf.vars, len(buf.start)))
        return real(state, node, buf)

    monkeypatch.setattr(negation, "_killed", spy)
    [mt] = runtime.evaluate([pat], t, Options(), plan=(("a", "c"), "d"))
    assert seen == [(("a", "c"), 3)] and bindings(mt) == [(3, 4, 5)]
    seen.clear()
    [mt] = runtime.evaluate([pat], t, Options(order="nondecreasing_ts"), plan=(("a", "c"), "d"))
    assert seen == [(("a", "c", "d"), 3)] and bindings(mt) == [(3, 4, 5)]


@pytest.mark.parametrize("keys", [
    [-5, -4, None, -5, -4, None, -5],          # narrow range below zero, nulls: the column's values are the codes
    [0, 10**12, None, 0, 10**12, None, 0],     # a range too wide for one partition per value: coded
])
def test_integer_keys_partition_like_the_reference(keys):
    import polars as pl

    from jitcep.events import build_event_table
    from jitcep.reference import evaluate as reference_evaluate
    df = pl.DataFrame({"ts": list(range(7)), "type": ["A", "B", "A", "B", "A", "B", "B"], "k": keys},
                      schema={"ts": pl.Int64, "type": pl.String, "k": pl.Int64})
    pat = Pattern(Seq((A, B)), E.Equiv("k"), TimeWindow(10))
    t = build_event_table(df, [pat], type="type")
    [mt] = runtime.evaluate([pat], t, Options())
    [ref] = reference_evaluate([pat], t, Options())
    # a0 shares its key with b3 and b6; a4's key has no later B; null keys (rows 2, 5) join nothing
    assert bindings(ref) == [(0, 3), (0, 6)]
    assert bindings(mt) == bindings(ref)


def test_types_are_grouped_in_batches_as_leaves_need_them(monkeypatch):
    import polars as pl

    from jitcep import config
    from jitcep.events import build_event_table
    from jitcep.pattern import parse
    from jitcep.reference import evaluate as reference_evaluate
    # SEQ of 11 types: without the semi-join reduction the first pass groups the first 8 the plan builds,
    # a second the rest; under it every leaf is read before any join, so one pass groups all 11.  Events
    # of T0..T10 in order twice (keys 0 and 1), the second run missing T9 (no match for k=1)
    types = [f"T{i}" for i in range(11)]
    rows = [(t, i, 0) for i, t in enumerate(types)] + [(t, 20 + i, 1) for i, t in enumerate(types) if t != "T9"]
    df = pl.DataFrame(rows, schema=["type", "ts", "k"], orient="row")
    text = "PATTERN SEQ(" + ", ".join(f"{t} v{i}" for i, t in enumerate(types)) + ") WHERE [k]"
    calls = []  # the types kept by each grouping pass (by type alone, or by type and key)
    real, real_runs = tables.group_with_keys, tables.group_with_key_runs
    monkeypatch.setattr(tables, "group_with_keys", lambda *a, **k: calls.append(a[4].sum()) or real(*a, **k))
    monkeypatch.setattr(tables, "group_with_key_runs",
                        lambda *a, **k: calls.append(a[5].sum()) or real_runs(*a, **k))

    def run(pattern_text):  # a new pattern object: its default plan is made under the config of the moment
        calls.clear()
        pat = parse(pattern_text)
        table = build_event_table(df, [pat], type="type")
        [mt] = runtime.evaluate([pat], table, Options())
        return pat, table, mt
    # the reduction planned on this small table whatever its bound (semijoin_reduction.left_out)
    monkeypatch.setattr(config, "REDUCE_FIXED_MATCHES", -1 << 62)
    pat, table, mt = run(text + " WITHIN 100")
    [ref] = reference_evaluate([pat], table, Options())
    assert bindings(mt) == bindings(ref) == [tuple(range(11))]
    assert calls == [11]  # the reduction's leaves: one pass
    monkeypatch.setattr(config, "REDUCE_MIN_VARS", 99)
    pat, table, mt = run(text + " WITHIN 100")
    assert bindings(mt) == [tuple(range(11))] and calls == [8, 3]  # kept types per pass
    # a pattern whose partial matches die before the ninth leaf never groups the last types
    pat, table, mt = run(text + " AND v1.ts < 0 WITHIN 100")
    assert mt.n == 0 and calls == [8]


def test_default_plan_is_kept_per_pattern_object_not_per_equal_value():
    from jitcep.pattern import parse

    p = parse("PATTERN SEQ(A a, B b) WHERE a.x > 1 WITHIN 10")
    assert runtime.check_supported(p, Options()) is runtime.check_supported(p, Options())
    # equal as values (1 == 1.0) but not the same pattern: its own plan, with its own literal
    q = parse("PATTERN SEQ(A a, B b) WHERE a.x > 1.0 WITHIN 10")
    assert p == q
    assert type(runtime.check_supported(q, Options()).root.left.filter.right.value) is float
    assert type(runtime.check_supported(p, Options()).root.left.filter.right.value) is int
    # a bounded cache: old patterns leave it
    kept = runtime._default.per_object
    for i in range(kept.size + 1):
        runtime.check_supported(parse(f"PATTERN SEQ(A a, B b) WHERE a.x > {i} WITHIN 10"), Options())
    assert len(kept.entries) == kept.size


def test_unfiltered_leaves_of_the_same_types_share_one_grouping(monkeypatch):
    import polars as pl

    from jitcep.events import build_event_table
    from jitcep.pattern import parse
    from jitcep.reference import evaluate as reference_evaluate

    rng = np.random.default_rng(3)
    n = 400
    df = pl.DataFrame({"type": rng.choice(["A", "B"], n), "ts": np.sort(rng.integers(0, 300, n)),
                       "k": rng.integers(0, 4, n), "x": rng.integers(-5, 5, n)})
    pat = parse("PATTERN SEQ(A a, A b, B c, A d) WHERE [k] AND a.x > 0 AND d.x > b.x WITHIN 12")
    table = build_event_table(df, [pat], type="type")
    calls = []  # the leaves made: grouped by key (leaf_by_key), or split from records grouped so (leaf_of_run)
    real, real_run = scan.leaf_by_key, scan.leaf_of_run
    monkeypatch.setattr(scan, "leaf_by_key", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(scan, "leaf_of_run", lambda *a, **k: calls.append(1) or real_run(*a, **k))
    [mt] = runtime.evaluate([pat], table, Options())
    [ref] = reference_evaluate([pat], table, Options())
    assert sorted(bindings(mt)) == sorted(bindings(ref)) and mt.n > 0
    assert len(calls) == 3  # a (filtered), b (and d: the same unfiltered A leaf), c


def _string_key_frame(n, n_types, sorted_input, seed=4):
    import polars as pl

    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(0, n // 2, n))
    if not sorted_input:
        ts = rng.permutation(ts)
    keys = [None if i == 0 else f"k{i}" for i in rng.integers(0, 9, n)]
    return pl.DataFrame({"type": [f"T{i}" for i in rng.integers(0, n_types, n)], "ts": ts, "k": keys,
                         "x": rng.integers(-5, 5, n)})


@pytest.mark.parametrize("sorted_input", [True, False])
def test_string_key_is_coded_only_at_the_events_of_the_leaves_types(sorted_input, monkeypatch):
    from jitcep.events import build_event_table
    from jitcep.pattern import parse
    from jitcep.reference import evaluate as reference_evaluate

    df = _string_key_frame(3000, 12, sorted_input)
    pats = [parse("PATTERN SEQ(T0 a, !T3 n, T1 b) WHERE [k] AND a.x > n.x WITHIN 40"),
            parse("PATTERN AND(T2 a, T0 b) WHERE [k] AND a.x < b.x WITHIN 15")]
    table = build_event_table(df, pats, type="type")
    coded = []
    real = Column.codes_at
    monkeypatch.setattr(Column, "codes_at", lambda self, pos: coded.append(np.array(pos)) or real(self, pos))
    got = runtime.evaluate(pats, table, Options())
    assert not table.columns["k"].coded  # never coded in full
    # one coding, of the events of the four types the leaves read whose key is not null, in position order
    rows = table.row
    wanted = [p for p in range(table.n) if df["type"][int(rows[p])] in ("T0", "T1", "T2", "T3")
              and df["k"][int(rows[p])] is not None]
    assert len(coded) == 1 and coded[0].tolist() == wanted
    ref = reference_evaluate(pats, build_event_table(df, pats, type="type"), Options())
    for mt, r in zip(got, ref):
        assert sorted(bindings(mt)) == sorted(bindings(r))
    assert sum(mt.n for mt in got) > 0


@pytest.mark.parametrize("text", ["PATTERN SEQ(T0 a, T1 b, T2 c) WHERE [k] WITHIN 40",  # most events
                                  "PATTERN SEQ(T0 a, * b) WHERE [k] WITHIN 10"])        # an untyped leaf
def test_string_key_is_labelled_in_full_when_leaves_read_most_events(text, monkeypatch):
    from jitcep.events import build_event_table
    from jitcep.pattern import parse
    from jitcep.reference import evaluate as reference_evaluate

    df = _string_key_frame(2000, 4, True)
    pat = parse(text)
    table = build_event_table(df, [pat], type="type")
    monkeypatch.setattr(Column, "codes_at", lambda self, pos: pytest.fail("coded at records"))
    [mt] = runtime.evaluate([pat], table, Options())
    col = table.columns["k"]
    assert not col.coded and "_labels" in vars(col)  # one labelling pass over every event, no dictionary
    [ref] = reference_evaluate([pat], build_event_table(df, [pat], type="type"), Options())
    assert sorted(bindings(mt)) == sorted(bindings(ref)) and mt.n > 0


@pytest.mark.parametrize("sorted_input", [True, False])
@pytest.mark.parametrize("dtype", ["cat", "enum"])
def test_categorical_key_partitions_by_category_ids(sorted_input, dtype, monkeypatch):
    import polars as pl

    from jitcep.events import build_event_table
    from jitcep.pattern import parse
    from jitcep.reference import evaluate as reference_evaluate

    df = _string_key_frame(2000, 5, sorted_input, seed=6)
    pl.Series(["k8", "zz", "k3"]).cast(pl.Categorical)  # ids not in string order
    df = df.with_columns(pl.col("k").cast(pl.Categorical if dtype == "cat" else pl.Enum(["k8", "k3", "k1", "k2",
                                                                                         "k4", "k5", "k6", "k7"])))
    pats = [parse("PATTERN SEQ(T0 a, T1 b, T2 c) WHERE [k] AND a.x < c.x WITHIN 30"),
            parse("PATTERN SEQ(T3 a, * b) WHERE [k] WITHIN 3")]
    table = build_event_table(df, pats, type="type")
    monkeypatch.setattr(Column, "codes_at", lambda self, pos: pytest.fail("coded at records"))
    got = runtime.evaluate(pats, table, Options())
    assert not table.columns["k"].coded
    ref = reference_evaluate(pats, build_event_table(df, pats, type="type"), Options())
    for mt, r in zip(got, ref):
        assert sorted(bindings(mt)) == sorted(bindings(r)) and mt.n > 0
