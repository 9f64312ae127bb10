"""A join's predicates tested in its loop (execute.join_where and execute.and_join_where, codegen.join_where):
the compiled engine with every SEQ or AND join with predicates taking that path equals the reference
evaluator, and the path ran."""

from __future__ import annotations

import contextlib
from unittest import mock

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import jitcep
from jitcep import config
from jitcep.execute import and_join_where, join_where
from jitcep.testing.streams import event_frames

PATTERNS = [
    # googleIncrease's shape: one join, a product across the pair
    "PATTERN SEQ(A a, B b) WHERE b.y >= a.y * 1.01 WITHIN 4",
    # googleAscend's: a chain over three, each join testing its own conjunct
    "PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x AND b.x < c.x WITHIN 5",
    # strings, a filter beside the join predicate, several conjuncts on one join
    "PATTERN SEQ(A a, B b, C c) WHERE a.s = c.s AND a.x != 1 AND c.x >= a.x AND b.y < 0.5 WITHIN 6",
    # an OR branch not taken: the conjunct over its unbound variable does not apply (semantics section 4)
    "PATTERN SEQ(A a, OR(B b, C c), A d) WHERE a.x <= b.x AND d.x > a.x WITHIN 5",
    # NULL in the arithmetic and IS NULL
    "PATTERN SEQ(A a, A b) WHERE b.x - a.x > 0 OR b.x IS NULL WITHIN 3",
    # a count window
    "PATTERN SEQ(B a, C b) WHERE a.y < b.y WITHIN 4 EVENTS",
]


@pytest.mark.parametrize("order", ["position", "strict_ts", "nondecreasing_ts"])
@pytest.mark.parametrize("text", PATTERNS)
@settings(max_examples=40, deadline=None)
@given(df=event_frames(max_size=16), keyed=st.booleans(), threads=st.sampled_from([1, 2]))
def test_predicates_in_the_join_loop_equal_the_reference(text, order, df, keyed, threads):
    RAN.setdefault((text, order), []).append(_equal_on_the_path(join_where, text, order, df, keyed, threads))


def _equal_on_the_path(path, text, order, df, keyed, threads, spied=("pairs",)):
    """Asserts the compiled run with every join taking ``path`` (module ``join_where`` or ``and_join_where``)
    from any size equals the reference; whether the path ran (one of its functions ``spied`` was called),
    or with several of them, which ran."""
    q = jitcep.compile(text, order=order)
    kw = dict(type="type", partition_by="k" if keyed else None)
    ran = {name: False for name in spied}

    def spy(name, real):
        def call(*a):
            ran[name] = True
            return real(*a)
        return call

    with mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 0), contextlib.ExitStack() as stack:
        for name in spied:
            stack.enter_context(mock.patch.object(path, name, spy(name, getattr(path, name))))
        got = q.run(df, threads=threads, **kw)
    assert got.equals(q.run(df, engine="reference", **kw))
    return any(ran.values()) if len(spied) == 1 else ran


RAN: dict[tuple, list[bool]] = {}


def test_the_path_ran():
    """The cases above took the path (a join with predicates) in a good share of their runs, and each
    pattern in some: a plan change that stopped it would otherwise pass them vacuously.  The share moves
    with the draws (empty inputs, a join off the path under two threads and several keys: 49-59% seen),
    so the bar is a quarter; a pattern's three orders together ran it 14-90 times in 120."""
    if not RAN:
        pytest.skip("the cases above did not run in this session")
    runs = [r for rs in RAN.values() for r in rs]
    assert len(runs) >= 100 and sum(runs) >= len(runs) // 4, (sum(runs), len(runs))
    for text in PATTERNS:
        assert any(any(RAN.get((text, o), ())) for o in ("position", "strict_ts", "nondecreasing_ts")), text


AND_PATTERNS = [
    # hierarchy's shape: a chain of conjuncts over an AND of three
    "PATTERN AND(A a, B b, C c) WHERE a.x < b.x AND b.x < c.x WITHIN 4",
    # one type on both sides (distinct events), a product, strings
    "PATTERN AND(A a, A b) WHERE b.y >= a.y * 1.01 OR a.s = b.s WITHIN 3",
    # an OR branch not taken, and an AND inside a SEQ (its orderings keep that join off the path)
    "PATTERN AND(A a, OR(B b, C c)) WHERE a.x <= b.x AND c.x IS NULL WITHIN 3",
    "PATTERN SEQ(A a, AND(B b, C c)) WHERE b.x != c.x AND a.y < c.y WITHIN 5",
    # a count window
    "PATTERN AND(B a, C b) WHERE a.y < b.y WITHIN 3 EVENTS",
    # a SEQ inside the final AND join, and four variables in a chain of conjuncts (every final join has
    # one) whose names are not in the joins' order (the final join's rows compare them by name,
    # docs/semantics.md section 11)
    "PATTERN AND(SEQ(A a, B b), C c) WHERE a.x < c.x AND b.y <= c.y WITHIN 5",
    "PATTERN AND(C d, A b, B a, A c) WHERE d.x < b.x AND b.x <= a.x AND a.x != c.x WITHIN 3",
]


@pytest.mark.parametrize("order", ["position", "nondecreasing_ts"])
@pytest.mark.parametrize("text", AND_PATTERNS)
@settings(max_examples=40, deadline=None)
@given(df=event_frames(max_size=14), keyed=st.booleans(), threads=st.sampled_from([1, 2]))
def test_and_join_predicates_in_the_loop_equal_the_reference(text, order, df, keyed, threads):
    ran = _equal_on_the_path(and_join_where, text, order, df, keyed, threads, ("pairs", "rows"))
    AND_RAN.append(ran["pairs"] or ran["rows"])
    ROWS_RAN.setdefault(text, []).append(ran["rows"])


AND_RAN: list[bool] = []
ROWS_RAN: dict[str, list[bool]] = {}  # the final join writing the match table's rows (and_join_where.rows)


def test_the_and_path_ran():
    """The AND cases above took the path in most runs (a plan change that stopped it would otherwise pass
    them vacuously), and the final join wrote the rows itself in some of them."""
    if not AND_RAN:
        pytest.skip("the cases above did not run in this session")
    assert len(AND_RAN) >= 100 and sum(AND_RAN) >= len(AND_RAN) // 3, (sum(AND_RAN), len(AND_RAN))
    assert any(any(ran) for ran in ROWS_RAN.values())


def _every_type_often(n: int = 30) -> pl.DataFrame:
    """Types C, A, B, A over and over, two events a time unit, one key, x / y / s cycling with periods
    prime to the types' (so that every type meets every value), no nulls."""
    return pl.DataFrame({"type": [("C", "A", "B", "A")[i % 4] for i in range(n)], "ts": [i // 2 for i in range(n)],
                         "k": [0] * n, "x": [i * 3 % 7 - 3 for i in range(n)],
                         "y": [(-1.5, 0.0, 0.5, 1.0, 2.5)[i % 5] for i in range(n)],
                         "s": [("u", "v", "w")[i % 3] for i in range(n)]})


@pytest.mark.parametrize("order", ["position", "nondecreasing_ts"])
@pytest.mark.parametrize("text", [t for t in AND_PATTERNS if not t.startswith("PATTERN SEQ")])
def test_the_final_and_join_writes_the_rows(text, order):
    """Every pattern whose final join is an AND with predicates, on a table where each type comes often
    (one key partition, one thread): the final join wrote the match table's rows itself (the generated
    cases above reach it in only some of their draws), and its matches are the reference's."""
    df = _every_type_often()
    assert len(jitcep.compile(text, order=order).run(df, type="type", engine="reference")) > 0  # not vacuous
    assert _equal_on_the_path(and_join_where, text, order, df, False, 1, ("pairs", "rows"))["rows"]
