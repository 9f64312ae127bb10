"""Query.explain and `jitcep explain`: the operator tree, the planner's choices, measured rows per node.

Row counts are enumerated by hand from the tables in each test.
"""

from __future__ import annotations

import polars as pl
import pytest

import jitcep
from jitcep import config
from jitcep.cli import main
from jitcep.errors import MissingColumnError, MissingTypeColumnError, OptionError


def frame(types: str, **cols) -> pl.DataFrame:
    return pl.DataFrame({"type": list(types), "ts": list(range(len(types))), **cols})


def nodes(tree: dict) -> list[dict]:
    """Every node, pre-order."""
    out = [tree]
    for c in tree["children"]:
        out += nodes(c)
    return out


def by_op(tree: dict, op: str) -> list[dict]:
    return [n for n in nodes(tree) if n["op"] == op]


def rows_of(tree: dict) -> list[tuple]:
    return [(n["op"], tuple(n["vars"]), n["rows"]) for n in nodes(tree)]


def test_seq_with_a_pushed_negation_rows_per_node():
    # A0 B1 C2 A3 C4 B5 C6: (a, c) pairs a < c: (0,2) (0,4) (0,6) (3,4) (3,6); B1 kills the first three,
    # B5 kills (3,6): one match
    df = frame("ABCACBC")
    q = jitcep.compile("PATTERN SEQ(A a, !B n, C c) WITHIN 10")
    tree = q.explain(df, type="type", analyze=True, format="dict")
    assert rows_of(tree) == [("pattern", ("a", "c"), 1), ("negation", ("a", "c"), 1), ("SEQ join", ("a", "c"), 5),
                             ("scan", ("a",), 2), ("scan", ("c",), 3)]
    assert tree["rows"] == q.run(df, type="type").height
    neg = by_op(tree, "negation")[0]
    assert neg["negated"] == "n" and neg["placement"] == "pushed" and neg["after"] == ["a"] and neg["before"] == ["c"]
    assert all(n["time_s"] >= 0 for n in nodes(tree))


def test_filters_and_join_predicates_are_counted_where_they_apply():
    # A(x=1) A(x=5) B(x=2) B(x=9): a.x > 2 leaves a1; b.x > a.x: (a1, b3)
    df = frame("AABB", x=[1, 5, 2, 9])
    tree = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x > 2 AND b.x > a.x WITHIN 10").explain(
        df, type="type", analyze=True, format="dict")
    assert rows_of(tree) == [("pattern", ("a", "b"), 1), ("SEQ join", ("a", "b"), 1), ("scan", ("a",), 1),
                             ("scan", ("b",), 2)]
    join = by_op(tree, "SEQ join")[0]
    assert join["predicates"] == ["b.x > a.x"] and join["window"] == "10"
    assert by_op(tree, "scan")[0]["predicates"] == ["a.x > 2"]


def test_or_and_and():
    # A0 B1 A2 C3: OR(a, b) is 3 records; AND(OR(a, b), C c): each of them with c3
    df = frame("ABAC")
    tree = jitcep.compile("PATTERN AND(OR(A a, B b), C c) WITHIN 10").explain(df, type="type", analyze=True,
                                                                             format="dict")
    assert rows_of(tree) == [("pattern", ("a", "b", "c"), 3), ("AND join", ("a", "b", "c"), 3),
                             ("OR union", ("a", "b"), 3), ("scan", ("a",), 2), ("scan", ("b",), 1),
                             ("scan", ("c",), 1)]


def test_kleene_lists_and_a_negation_over_whole_matches():
    # A0 B1 B2 C3 D4: (a0, c3) with lists [1], [2], [1, 2]; the trailing !d's range ends where the
    # window from a0 ends (section 7): WITHIN 4 EVENTS reaches position 3, so D4 is outside it
    df = frame("ABBCD")
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c, !D d) WITHIN 4 EVENTS")
    tree = q.explain(df, type="type", analyze=True, format="dict")
    assert rows_of(tree) == [("pattern", ("a", "c"), 3), ("negation", ("a", "c"), 3), ("kleene", ("a", "c"), 3),
                             ("SEQ join", ("a", "c"), 1), ("scan", ("a",), 1), ("scan", ("c",), 1)]
    assert tree["rows"] == q.run(df, type="type").height
    assert by_op(tree, "negation")[0]["placement"] == "matches"
    k = by_op(tree, "kleene")[0]
    assert (k["closure"], k["mode"], k["min"], k["max"]) == ("b", "all", 1, None)
    # WITHIN 5 EVENTS: D4 is in every match's range after c3: all three die
    tree = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c, !D d) WITHIN 5 EVENTS").explain(
        df, type="type", analyze=True, format="dict")
    assert [n["rows"] for n in nodes(tree)] == [0, 0, 3, 1, 1, 1]


def test_iterative_predicate_is_printed_with_its_indexes():
    tree = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10").explain(format="dict")
    # plain b.x is member i (semantics section 4): the text that also keys the conjunct's selectivity
    assert by_op(tree, "kleene")[0]["predicates"] == ["b.x > b[i-1].x"]


def test_maximal_list_conjuncts_over_aggregates_only_run_on_runs():
    def runs(where, **opts):
        q = jitcep.compile(f"PATTERN SEQ(A a, B{{1,3}} b[], C c) WHERE {where} WITHIN 10", **opts)
        [k] = by_op(q.explain(format="dict"), "kleene")
        return k["runs"], "aggregates over runs" in q.explain()

    # semantics section 6.2: a maximal closure's lists are runs of its members; aggregates read only those
    assert runs("sum(b.x) > a.x AND count(b) >= 2", kleene="maximal") == (True, True)
    assert runs("sum(b.x) > a.x", kleene="all") == (False, False)  # every subsequence: no runs
    assert runs("b[1].x > a.x", kleene="maximal") == (False, False)  # a member, not an aggregate
    assert runs("b.x > a.x", kleene="maximal") == (False, False)  # no list conjunct at all


def test_a_join_whose_left_input_is_empty_does_not_run_its_right_input(monkeypatch):
    df = frame("BBC")  # no A: the left scan is empty, the (b, c) side never runs
    # the reduction planned on this small table whatever its bound (semijoin_reduction.left_out)
    monkeypatch.setattr(config, "REDUCE_FIXED_MATCHES", -1 << 62)
    tree = jitcep.compile("PATTERN SEQ(A a, B b, C c) WITHIN 10").explain(df, type="type", analyze=True,
                                                                         format="dict")
    # the semi-join reduction over the joins reads its leaves in order and stops at the empty one too
    assert [n["rows"] for n in nodes(tree)] == [0, 0, 0, 0, 0, 0, 0]
    assert by_op(tree, "scan")[1]["time_s"] == 0.0  # b: not run


def test_negation_placement_follows_the_order_option():
    text = "PATTERN SEQ(A a, !B n, C c) WITHIN 10"
    assert by_op(jitcep.compile(text).explain(format="dict"), "negation")[0]["placement"] == "pushed"
    tree = jitcep.compile(text, order="nondecreasing_ts").explain(format="dict")
    assert by_op(tree, "negation")[0]["placement"] == "matches"


def test_text_format_is_an_indented_tree():
    df = frame("ABAB", k=["x", "y", "x", "x"])
    text = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10").explain(df, type="type", analyze=True)
    lines = text.splitlines()
    assert lines[0].startswith("pattern 0: PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10") and "key [k]" in lines[0]
    assert "rows=2" in lines[0]  # (a0, b3), (a2, b3)
    assert lines[1].startswith("  SEQ join (a, b)") and "driver=" in lines[1]
    assert lines[2].startswith("    scan (a)") and lines[3].startswith("    scan (b)")
    assert "key_coding" in jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10").explain(format="dict")


def test_key_coding_is_chosen_with_a_table():
    df = frame("ABAB", k=["x", "y", "x", "x"], n=[1, 2, 1, 1])
    assert jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10").explain(format="dict")["key_coding"] is None
    assert jitcep.compile("PATTERN SEQ(A a, B b) WHERE [n] WITHIN 10").explain(
        df, type="type", format="dict")["key_coding"] == "values"
    assert jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k, n] WITHIN 10").explain(
        df, type="type", format="dict")["key_coding"] == "dense"


def test_several_patterns_and_a_reference_fallback(monkeypatch):
    from jitcep import config

    monkeypatch.setattr(config, "DNF_MAX_ALTERNATIVES", 1)  # the second's 2 alternatives: a fallback
    df = frame("ABAB")
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10; "
                       "PATTERN SEQ(A+ x[], OR(C* c[], D d), B+ y[]) WITHIN 10")
    tree = q.explain(df, type="type", analyze=True, format="dict")
    assert tree["op"] == "patterns" and [c["pattern"] for c in tree["children"]] == [0, 1]
    first, second = tree["children"]
    assert first["engine"] == "compiled" and first["rows"] == 3  # (0,1) (0,3) (2,3)
    assert second["engine"] == "reference" and "DNF_MAX_ALTERNATIVES=1" in second["reason"]
    out = q.run(df, type="type", engine="auto")
    assert second["rows"] == out.filter(pl.col("pattern") == 1).height
    assert tree["rows"] == out.height
    assert q.explain().splitlines()[0] == "2 patterns"


def test_bad_arguments_are_named_errors_before_any_work():
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10")
    df = frame("AB")
    with pytest.raises(OptionError, match="format"):
        q.explain(format="xml")
    with pytest.raises(OptionError, match="events"):
        q.explain(analyze=True)
    with pytest.raises(OptionError, match="analyze"):
        q.explain(df, type="type", analyze="yes")
    with pytest.raises(MissingTypeColumnError):
        q.explain(df)
    with pytest.raises(MissingColumnError):
        q.explain(df, type="type", time="when")
    with pytest.raises(OptionError, match="time_unit"):
        q.explain(df, type="type", time_unit="fortnights")


def test_cli_explain(tmp_path, capsys):
    pat = tmp_path / "p.cep"
    pat.write_text("PATTERN SEQ(A a, !B n, C c) WITHIN 10")
    data = tmp_path / "e.parquet"
    frame("ABCACBC").write_parquet(data)
    assert main(["explain", str(pat)]) == 0
    out = capsys.readouterr().out
    assert "negation !n" in out and "SEQ join (a, c)" in out and "rows=" not in out
    assert main(["explain", str(pat), str(data), "--type", "type", "--analyze"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "rows=1" in out[0] and "rows=5" in out[2]
    assert main(["explain", str(pat), "--analyze"]) == 2
    assert "INPUT" in capsys.readouterr().err
    assert main(["explain", str(pat), str(data)]) == 2  # typed pattern, no --type
    assert "MissingTypeColumnError" in capsys.readouterr().err


def test_analyze_runs_again_only_after_cold_work(monkeypatch):
    """A run during which Numba loaded or compiled something (a query's first: its generated predicate
    function, whose constant no other test uses) is run again, profiled on the same plans and table, and
    the second reported; a warm query's explain runs once."""
    from jitcep import runtime

    calls = []
    execute = runtime.execute

    def spy(plan, ctx, options, profile=None, threads=1):
        calls.append((repr(plan.root), ctx.table, profile))
        return execute(plan, ctx, options, profile, threads)

    monkeypatch.setattr(runtime, "execute", spy)
    df = frame("ABCACBC", x=[1.0, 2.0, 0.5, 3.0, 2.5, 4.0, 9.0])
    # (a, c) pairs (0,2) (0,4) (0,6) (3,4) (3,6); B1 kills the first three, B5 (3,6); (3,4): 3 < 2.5 + 0.73519
    q = jitcep.compile("PATTERN SEQ(A a, !B n, C c) WHERE a.x < c.x + 0.73519 WITHIN 10")
    tree = q.explain(df, type="type", analyze=True, format="dict")
    assert len(calls) == 2 and calls[0][:2] == calls[1][:2]
    cold, reported = calls[0][2], calls[1][2]
    assert cold is not None and reported is not None and cold is not reported
    assert tree["rows"] == 1 and all(n["time_s"] >= 0 for n in nodes(tree))
    calls.clear()
    again = q.explain(df, type="type", analyze=True, format="dict")
    assert len(calls) == 1 and calls[0][2] is not None
    assert rows_of(again) == rows_of(tree)


def test_cold_work_sees_the_compiler_lock_taken_on_any_thread():
    """What decides the second run: Numba takes its compiler lock to load or compile (on whichever thread
    the kernel is first called), and a block that never takes it leaves the list empty."""
    import threading

    from numba.core.compiler_lock import global_compiler_lock

    from jitcep.explain import _cold_work

    with _cold_work() as seen:
        pass
    assert seen == []

    def take():
        with global_compiler_lock:
            pass

    with _cold_work() as seen:
        t = threading.Thread(target=take)
        t.start()
        t.join()
    assert seen
    with _cold_work() as after:  # the listener left with its block
        pass
    assert after == []
