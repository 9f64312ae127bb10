"""Unit tests of the reference evaluator's internals (docs/semantics.md).

Expected matches are enumerated by hand from the semantics text, never
produced by the evaluator.  Streams are tiny; each event is named by its
input row so expectations read as rows.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

from jitcep.errors import (AttributeTypeError, ExplosionError, MissingWindowError, OptionError,
                           UnsupportedPatternError, WindowUnitError)
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.pattern.ast import Pattern, Seq, EventVar, TimeWindow
from jitcep.reference import evaluate
from jitcep.reference.analysis import analyze
from jitcep.reference.exprs import and3, arith, compare, or3
from jitcep.reference.nfa import NfaRuns
from jitcep.reference.search import AnyMatchSearch, Budget


def table(rows, pattern_texts, **kw):
    """rows: (type, ts, x[, k]) tuples -> (patterns, EventTable)."""
    cols = {"type": [r[0] for r in rows], "ts": [r[1] for r in rows], "x": [r[2] for r in rows]}
    if rows and len(rows[0]) > 3:
        cols["k"] = [r[3] for r in rows]
    pats = [parse(t) for t in pattern_texts]
    return pats, build_event_table(pl.DataFrame(cols), pats, time="ts", type="type", **kw)


def rows_of(mt, tab, order):
    """Matches as tuples of input rows (tuples for lists, None for unbound), in variable order."""
    out = set()
    for b in mt.to_bindings():
        key = []
        for v in order:
            x = b[v]
            if x is None:
                key.append(None)
            elif isinstance(x, tuple):
                key.append(tuple(int(tab.row[p]) for p in x))
            else:
                key.append(int(tab.row[x]))
        out.add(tuple(key))
    return out


def run(rows, text, variables, **opts):
    pats, tab = table(rows, [text])
    mt, = evaluate(pats, tab, Options.from_kwargs(**opts))
    return rows_of(mt, tab, variables)


# --- §4 three-valued logic ------------------------------------------------------


def test_three_valued_logic():
    assert and3([True, None]) is None and and3([False, None]) is False and and3([True, True]) is True
    assert or3([False, None]) is None and or3([True, None]) is True and or3([False]) is False
    assert compare("<", None, 1) is None and compare("=", "a", "a") is True
    assert arith("/", 1, 0) is None and arith("+", None, 1) is None and arith("/", 3, 2) == 1.5


def test_type_mismatch_raises():
    with pytest.raises(AttributeTypeError):
        compare("<", "a", 1)
    with pytest.raises(AttributeTypeError):
        compare("<", True, False)


def test_null_attribute_rejects_and_is_null_accepts():
    rows = [("A", 1, None), ("A", 2, 5.0)]
    assert run(rows, "PATTERN A a WHERE a.x > 0 OR a.x <= 0 WITHIN 10", ["a"]) == {(1,)}
    assert run(rows, "PATTERN A a WHERE a.x IS NULL WITHIN 10", ["a"]) == {(0,)}
    assert run(rows, "PATTERN A a WHERE NOT (a.x IN (1, 2)) WITHIN 10", ["a"]) == {(1,)}


# --- §1 orders, §2 windows ---------------------------------------------------------


TIES = [("A", 1, 0), ("A", 1, 0), ("A", 2, 0)]


@pytest.mark.parametrize("order, expected", [
    ("position", {(0, 1), (0, 2), (1, 2)}),
    ("strict_ts", {(0, 2), (1, 2)}),
    ("nondecreasing_ts", {(0, 1), (1, 0), (0, 2), (1, 2)}),
])
def test_orders(order, expected):
    assert run(TIES, "PATTERN SEQ(A a, A b) WITHIN 10", ["a", "b"], order=order) == expected


def test_time_window_inclusive_and_count_window():
    rows = [("A", 0, 0), ("B", 5, 0), ("B", 6, 0)]
    assert run(rows, "PATTERN SEQ(A a, B b) WITHIN 5", ["a", "b"]) == {(0, 1)}
    assert run(rows, "PATTERN SEQ(A a, B b) WITHIN 2 EVENTS", ["a", "b"]) == {(0, 1)}
    assert run(rows, "PATTERN SEQ(A a, B b) WITHIN 3 EVENTS", ["a", "b"]) == {(0, 1), (0, 2)}


def test_missing_window_and_duration_without_unit():
    pats, tab = table([("A", 0, 0)], ["PATTERN A a WITHIN 5"])
    with pytest.raises(MissingWindowError):
        evaluate([Pattern(Seq((EventVar("a", ("A",)),)))], tab)
    with pytest.raises(WindowUnitError):
        evaluate([Pattern(EventVar("a", ("A",)), window=TimeWindow(5, "min"))], tab)


# --- §5 structure -----------------------------------------------------------------


def test_or_leaves_other_branch_unbound_and_branch_predicates():
    rows = [("A", 0, 1), ("B", 1, 9), ("C", 2, 0)]
    got = run(rows, "PATTERN SEQ(OR(A a, B b), C c) WHERE b.x > 5 WITHIN 10", ["a", "b", "c"])
    assert got == {(0, None, 2), (None, 1, 2)}


def test_and_any_order_distinct():
    rows = [("A", 0, 0), ("A", 1, 0)]
    assert run(rows, "PATTERN AND(A a, A b) WITHIN 10", ["a", "b"]) == {(0, 1), (1, 0)}


# --- §6 Kleene ----------------------------------------------------------------------


KL_ROWS = [("A", 0, 0), ("B", 1, 3), ("B", 2, 1), ("B", 3, 2), ("C", 4, 0)]


def test_kleene_all_every_subsequence():
    got = run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", ["a", "b", "c"])
    lists = {(1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2, 3)}
    assert got == {(0, l, 4) for l in lists}


def test_kleene_iterative_predicate_and_aggregates():
    got = run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x AND count(b) >= 2 WITHIN 10",
              ["a", "b", "c"])
    assert got == {(0, (2, 3), 4)}
    got = run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b.x) = 4 WITHIN 10", ["a", "b", "c"])
    assert got == {(0, (1, 2), 4)}
    got = run(KL_ROWS, "PATTERN SEQ(A a, B{2} b[], C c) WHERE b[1].x > b[b.LEN].x WITHIN 10", ["a", "b", "c"])
    assert got == {(0, (1, 2), 4), (0, (1, 3), 4)}


def test_kleene_star_allows_empty_and_bounds():
    got = run(KL_ROWS[:2] + KL_ROWS[4:], "PATTERN SEQ(A a, B* b[], C c) WITHIN 10", ["a", "b", "c"])
    assert got == {(0, (), 2), (0, (1,), 2)}


def test_kleene_maximal_one_list_and_sliding_count():
    got = run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", ["a", "b", "c"], kleene="maximal")
    assert got == {(0, (1, 2, 3), 4)}
    got = run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WHERE b.x > 1 WITHIN 10", ["a", "b", "c"],
              kleene="maximal")
    assert got == {(0, (1, 3), 4)}
    got = run(KL_ROWS, "PATTERN SEQ(A a, B{2} b[], C c) WITHIN 10", ["a", "b", "c"], kleene="maximal")
    assert got == {(0, (1, 2), 4), (0, (2, 3), 4)}
    with pytest.raises(UnsupportedPatternError):
        run(KL_ROWS, "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10", ["a"],
            kleene="maximal")


# --- §2 kleene_window: "match" vs "iteration" ---------------------------------------

# two AND(A, B) body matches 4 apart: (rows 0, 1) and (rows 2, 3); (0, 3) and (2, 1) span > 2
KW_ROWS = [("A", 0, 0), ("B", 1, 0), ("A", 4, 0), ("B", 5, 0)]


def test_kleene_window_root_group():
    text = "PATTERN KL(AND(A a, B b)){1,2} WITHIN 2"
    singles = {((0,), (1,)), ((2,), (3,))}
    assert run(KW_ROWS, text, ["a", "b"]) == singles  # the pair spans 5 > 2
    assert run(KW_ROWS, text, ["a", "b"], kleene_window="iteration") == singles | {((0, 2), (1, 3))}


def test_kleene_window_count_window_and_shared_events():
    # WITHIN 2 EVENTS: body matches (0,1), (2,1), (2,3) (AND: a after b is fine); any two of
    # them cover 3 positions, so only "iteration" pairs them, sharing events across iterations
    text = "PATTERN KL(AND(A a, B b)){1,2} WITHIN 2 EVENTS"
    singles = {((0,), (1,)), ((2,), (1,)), ((2,), (3,))}
    assert run(KW_ROWS, text, ["a", "b"]) == singles
    assert run(KW_ROWS, text, ["a", "b"], kleene_window="iteration") == singles | {
        ((0, 2), (1, 1)), ((0, 2), (1, 3)), ((2, 2), (1, 3))}


def test_kleene_window_outer_events_answer_to_every_iteration():
    # AND(A x, KL(SEQ(B b, C c))) WITHIN 3: x (ts 3) sits between the iterations (0,1) and
    # (3,4) and is within 3 of each; the two iterations together span 6
    rows = [("B", 0, 0), ("C", 1, 0), ("A", 3, 0), ("B", 5, 0), ("C", 6, 0)]
    text = "PATTERN AND(A x, KL(SEQ(B b, C c)){1,2}) WITHIN 3"
    singles = {(2, (0,), (1,)), (2, (3,), (4,))}
    assert run(rows, text, ["x", "b", "c"]) == singles
    assert run(rows, text, ["x", "b", "c"], kleene_window="iteration") == singles | {(2, (0, 3), (1, 4))}
    # an outer event ordered before every iteration bounds them all: the options coincide
    rows = [("A", 0, 0), ("B", 1, 0), ("C", 2, 0), ("B", 3, 0), ("C", 4, 0)]
    text = "PATTERN SEQ(A x, KL(SEQ(B b, C c)){1,2}) WITHIN 3"
    for kw in ("match", "iteration"):
        assert run(rows, text, ["x", "b", "c"], kleene_window=kw) == {(0, (1,), (2,))}


def test_kleene_window_two_groups_and_array_members():
    # iterations of two different groups need not fit one window together
    rows = [("A", 0, 0), ("B", 1, 0), ("C", 5, 0), ("D", 6, 0)]
    text = "PATTERN AND(KL(SEQ(A a, B b)){1,1}, KL(SEQ(C c, D d)){1,1}) WITHIN 2"
    assert run(rows, text, ["a", "b", "c", "d"]) == set()
    assert run(rows, text, ["a", "b", "c", "d"], kleene_window="iteration") == {((0,), (1,), (2,), (3,))}
    # an array variable's members are not iterations of a group: the window covers them all
    rows = [("A", 0, 0), ("A", 4, 0)]
    for kw in ("match", "iteration"):
        assert run(rows, "PATTERN A+ a[] WITHIN 2", ["a"], kleene_window=kw) == {((0,),), ((1,),)}


def test_kleene_window_invalid_value():
    with pytest.raises(OptionError, match="kleene_window"):
        Options(kleene_window="union")
    with pytest.raises(OptionError, match="kleene_window"):
        Options.from_kwargs(kleene_window="per_iteration")


def test_unbound_list_variable_is_none_not_empty():
    # branch 1 binds b to the empty list, branch 2 leaves a and b unbound (§3)
    rows = [("A", 0, 0), ("C", 1, 0)]
    pats, tab = table(rows, ["PATTERN OR(SEQ(A a, B* b[]), C c) WITHIN 10"])
    mt, = evaluate(pats, tab)
    assert rows_of(mt, tab, ["a", "b", "c"]) == {(0, (), None), (None, None, 1)}
    assert mt.take(mt.list_unbound["b"].nonzero()[0]).to_bindings() == [{"a": None, "c": 1, "b": None}]


def test_kleene_cap():
    rows = [("B", t, 0) for t in range(8)]
    with pytest.raises(ExplosionError, match="max_kleene"):
        run(rows, "PATTERN B+ b[] WITHIN 100", ["b"], max_kleene=10)


# --- §7 negation ----------------------------------------------------------------


NEG_ROWS = [("N", 0, 0), ("A", 1, 0), ("N", 2, 0), ("C", 3, 0), ("N", 4, 0), ("A", 5, 0), ("C", 6, 0)]


def test_negation_middle_start_end_and():
    assert run(NEG_ROWS, "PATTERN SEQ(A a, !N n, C c) WITHIN 10", ["a", "c"]) == {(5, 6)}
    # start: no N before a within the window from c (WITHIN 3: window reaches ts >= ts(c) - 3)
    assert run(NEG_ROWS, "PATTERN SEQ(!N n, A a, C c) WITHIN 3", ["a", "c"]) == set()
    assert run(NEG_ROWS[1:], "PATTERN SEQ(!N n, A a, C c) WITHIN 2", ["a", "c"]) == {(0, 2)}
    # end: no N after c within the window from a (N@4 is past ts(a) + 2 = 3 for the match (1, 3))
    assert run(NEG_ROWS, "PATTERN SEQ(A a, C c, !N n) WITHIN 2", ["a", "c"]) == {(1, 3), (5, 6)}
    assert run(NEG_ROWS, "PATTERN SEQ(A a, C c, !N n) WITHIN 3", ["a", "c"]) == {(5, 6)}
    # inside AND: no N strictly inside the span
    assert run(NEG_ROWS, "PATTERN AND(A a, C c, !N n) WITHIN 10", ["a", "c"]) == {(5, 6)}


def test_negation_condition_must_hold():
    rows = [("A", 0, 5), ("N", 1, 1), ("C", 2, 0)]
    assert run(rows, "PATTERN SEQ(A a, !N n, C c) WHERE n.x > a.x WITHIN 10", ["a", "c"]) == {(0, 2)}
    assert run(rows, "PATTERN SEQ(A a, !N n, C c) WHERE n.x < a.x WITHIN 10", ["a", "c"]) == set()


# --- §8 selection strategies ------------------------------------------------------------


STRAT = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 100"


def test_strict_contiguity():
    rows = [("A", 0, 0), ("B", 1, 0), ("B", 2, 0), ("C", 3, 0)]
    assert run(rows, STRAT, ["a", "b", "c"], strategy="strict_contiguity") == {(0, (1, 2), 3)}
    rows = [("A", 0, 0), ("B", 1, 0), ("X", 2, 0), ("B", 3, 0), ("C", 4, 0)]
    assert run(rows, STRAT, ["a", "b", "c"], strategy="strict_contiguity") == set()


def test_skip_till_next_match_vs_any():
    rows = [("A", 0, 0), ("B", 1, 0), ("X", 2, 0), ("B", 3, 0), ("C", 4, 0)]
    # B3 is relevant, so the run takes it; proceeding to c only when C4 can begin it (SASE+ step 6)
    assert run(rows, STRAT, ["a", "b", "c"], strategy="skip_till_next_match") == {(0, (1, 3), 4)}
    # with the closure last, every proceed point is a match
    assert run(rows[:4], "PATTERN SEQ(A a, B+ b[]) WITHIN 100", ["a", "b"],
               strategy="skip_till_next_match") == {(0, (1,)), (0, (1, 3))}
    assert run(rows, STRAT, ["a", "b", "c"]) == {(0, (1,), 4), (0, (3,), 4), (0, (1, 3), 4)}


def test_partition_contiguity():
    rows = [("A", 0, 0, 1), ("B", 1, 0, 1), ("B", 2, 0, 2), ("B", 3, 0, 1), ("C", 4, 0, 1)]
    text = "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] WITHIN 100"
    assert run(rows, text, ["a", "b", "c"], strategy="partition_contiguity") == {(0, (1, 3), 4)}
    with pytest.raises(UnsupportedPatternError):
        run(rows, STRAT, ["a"], strategy="partition_contiguity")


def test_strategy_on_nested_pattern_is_unsupported():
    with pytest.raises(UnsupportedPatternError):
        run([("A", 0, 0)], "PATTERN SEQ(A a, AND(B b, C c)) WITHIN 10", ["a"], strategy="skip_till_next_match")


def _nfa_any(pat, tab):
    """NFA^b runs with skip-till-any-match ignore edges (True everywhere)."""
    opts = Options()
    info = analyze(pat, tab)
    found = set()
    m = NfaRuns(info, tab, Options(strategy="skip_till_next_match"), Budget(opts), lambda: found.add(
        tuple(tuple(x) if isinstance(x, list) else x for x in (m.b[v] for v in info.positive))))
    m.strategy = "skip_till_any_match"
    m.run()
    return found


def _search_any(pat, tab):
    info = analyze(pat, tab)
    found = set()
    m = AnyMatchSearch(info, tab, Options(), Budget(Options()), lambda: found.add(
        tuple(tuple(x) if isinstance(x, list) else x for x in (m.b[v] for v in info.positive))))
    m.run()
    return found


@pytest.mark.parametrize("seed", range(12))
def test_nfa_any_match_equals_declarative_search(seed):
    """SASE+: under skip-till-any-match the NFA^b runs and the declarative definition agree (§8)."""
    rng = random.Random(seed)
    rows = [(rng.choice("ABC"), t // 2, rng.randint(0, 3)) for t in range(14)]
    text = rng.choice([
        "PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x >= b[i-1].x WITHIN 4",
        "PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 5",
        "PATTERN SEQ(A{1,2} a[], C c) WHERE count(a) + c.x > 2 WITHIN 3",
    ])
    pats, tab = table(rows, [text])
    assert _nfa_any(pats[0], tab) == _search_any(pats[0], tab)


# --- §9 output policies, §12 caps -----------------------------------------------------


POL = [("A", 0, 0), ("B", 1, 0), ("A", 2, 0), ("B", 3, 0)]


def test_non_overlapping_and_consumption():
    text = "PATTERN SEQ(A a, B b) WITHIN 10"
    assert run(POL, text, ["a", "b"]) == {(0, 1), (0, 3), (2, 3)}
    assert run(POL, text, ["a", "b"], output="non_overlapping") == {(0, 1), (2, 3)}
    assert run(POL, text, ["a", "b"], output="match_single") == {(0, 1), (2, 3)}
    assert run(POL, text, ["a", "b"], output="match_single", consume_types=["A"]) == {(0, 1), (2, 3)}
    assert run(POL, text, ["a", "b"], output="match_single", consume_types=["X"]) == {(0, 1), (0, 3), (2, 3)}
    rows = [("A", 0, 0), ("A", 1, 0), ("A", 2, 0)]
    # match_next: one chance per (event, variable); row 1 may still bind b after binding a
    assert run(rows, "PATTERN SEQ(A a, A b) WITHIN 10", ["a", "b"], output="match_next") == {(0, 1), (1, 2)}


def test_contiguous_and_freeze():
    text = "PATTERN SEQ(A a, B b) WITHIN 10"
    assert run(POL, text, ["a", "b"], contiguous=[["a", "b"]]) == {(0, 1), (2, 3)}
    rows = [("A", 0, 0), ("A", 1, 0), ("B", 2, 0), ("A", 5, 0), ("B", 6, 0)]
    # A@0 is open until ts 3 (WITHIN 3): A@1 is frozen, A@5 is active again
    assert run(rows, "PATTERN SEQ(A a, B b) WITHIN 3", ["a", "b"], freeze=["a"]) == {(0, 2), (3, 4)}


def test_match_and_partial_caps():
    with pytest.raises(ExplosionError, match="max_matches"):
        run(POL, "PATTERN SEQ(A a, B b) WITHIN 10", ["a"], max_matches=2)
    with pytest.raises(ExplosionError, match="max_partials"):
        run(POL, "PATTERN SEQ(A a, B b) WITHIN 10", ["a"], max_partials=3)


def test_several_patterns_one_table_each():
    pats, tab = table(POL, ["PATTERN A a WITHIN 1", "PATTERN SEQ(A a, B b) WITHIN 1"])
    one, two = evaluate(pats, tab)
    assert one.n == 2 and two.n == 2
