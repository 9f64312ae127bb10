"""Builder: the Python API produces exactly the AST the text produces."""

import numpy as np
import polars as pl
import pytest

import jitcep
from jitcep.errors import InvalidWindowError, PatternValidationError
from jitcep.pattern.ast import CountWindow, TimeWindow, Unbounded
from jitcep.pattern.builder import (E, and_, col, count, equiv, expr, kleene, lit, neg, or_, seq, var)
from jitcep.pattern.expr import Cmp, Lit, Attr, walk
from jitcep.pattern.parser import parse
from jitcep.pattern.validate import validate

S = "Stock"

CASES = [
    ("""PATTERN SEQ(Stock a, !Stock b, Stock+ c[], Stock d)
        WHERE [symbol] AND a.price > 100 AND c[i].price > c[i-1].price AND d.volume < 0.8 * a.volume
        WITHIN 10 minutes RETURN a, c, avg(c.price) AS avg_c""",
     seq(var(S, "a"), neg(var(S, "b")), kleene(var(S, "c"), min=1), var(S, "d"))
     .where(equiv("symbol"), col("a.price") > 100, col("c[i].price") > col("c[i-1].price"),
            col("d.volume") < 0.8 * col("a.volume"))
     .within(minutes=10).returns("a", "c", avg_c=col("c.price").avg())),

    ("PATTERN KL(AND(GOOG a, GOOG b)){1,3} WHERE a.p < b.p WITHIN 180",
     kleene(and_(var("GOOG", "a"), var("GOOG", "b")), min=1, max=3).where(col("a.p") < col("b.p")).within(180)),

    ("PATTERN SEQ(ANY(A, B) x, * y, SHELF-READING z) WHERE [k1, k2] AND x.v = y.v WITHIN 100 EVENTS",
     seq(var(["A", "B"], "x"), var("*", "y"), var("SHELF-READING", "z"))
     .where(equiv("k1", "k2"), col("x.v") == col("y.v")).within(events=100)),

    ("PATTERN OR(A a, SEQ(B b, C c)) WHERE (a.x >= 1 OR a.y != 'q') AND b.x < c.x WITHIN UNBOUNDED",
     or_(var("A", "a"), seq(var("B", "b"), var("C", "c")))
     .where((col("a.x") >= 1) | (col("a.y") != "q"), col("b.x") < col("c.x")).within(unbounded=True)),

    ("PATTERN SEQ(A a, B* b[], C{2,4} c[]) WHERE b.LEN > 1 AND sum(c.x) <= 10 AND c[1].x < c[c.LEN].x "
     "WITHIN 5 s",
     seq(var("A", "a"), kleene(var("B", "b"), min=0), kleene(var("C", "c"), 2, 4))
     .where(count("b") > 1, col("c.x").sum() <= 10, col("c[1].x") < col("c[c.LEN].x")).within(5, "s")),

    ("PATTERN A a WHERE a.x IN (1, 2, 'z') AND a.y NOT IN (TRUE) AND a.z IS NULL AND a.w IS NOT NULL "
     "WITHIN 2.5 h",
     var("A", "a").where(col("a.x").is_in(1, 2, "z"), col("a.y").not_in([True]), col("a.z").is_null(),
                         col("a.w").is_not_null()).within(hours=2.5)),

    ("PATTERN A a WHERE NOT (a.x > 1 AND a.y < 2) AND -a.x + abs(a.y) * 2 > -3 WITHIN 1 d",
     var("A", "a").where(~((col("a.x") > 1) & (col("a.y") < 2)), -col("a.x") + abs(col("a.y")) * 2 > -3)
     .within(days=1)),

    ("PATTERN A a WHERE a.x > 1 AND a.y > 2 AND a.z > 3 WITHIN 3",
     var("A", "a").where((col("a.x") > 1) & (col("a.y") > 2) & (col("a.z") > 3)).within(3)),

    ("PATTERN A a WHERE a.x > 1 AND a.y > 2 WITHIN 3",
     var("A", "a").where(col("a.x") > 1).where("a.y > 2").within(3)),

    ("PATTERN A a WHERE [symbol = 'IBM'] AND 10 - a.x / 2 > a.`Opening Price` WITHIN 1 ms",
     var("A", "a").where(equiv(symbol="IBM"), 10 - col("a.x") / 2 > col("a.`Opening Price`"))
     .within(1, "ms")),

    ("PATTERN SEQ(A a, AND(!F c, G d)) WHERE c.p > a.p WITHIN 60 RETURN a.p * 2 AS twice, d.q",
     seq(var("A", "a"), and_(neg(var("F", "c")), var("G", "d"))).where(col("c.p") > col("a.p")).within(60)
     .returns((col("a.p") * 2, "twice"), "d.q")),

    ("PATTERN KL(SEQ(A a, B b)){2,} WHERE count(a) = 2 AND max(b.v) > min(a.v) WITHIN 9 us RETURN b",
     kleene(seq(var("A", "a"), var("B", "b")), min=2).where(count("a") == 2, col("b.v").max() > col("a.v").min())
     .within(microseconds=9).returns("b")),

    ("PATTERN A a WHERE a.x > 1 AND TRUE WITHIN 3 RETURN a.x AS x1",
     var("A", "a").where(expr("a.x > 1 AND TRUE")).within(3).returns(col("a.x").alias("x1"))),
]


@pytest.mark.parametrize("text, builder", CASES, ids=[str(i) for i in range(len(CASES))])
def test_builder_equals_text(text, builder):
    assert builder.build() == parse(text)
    validate(builder.build())


def test_windows():
    a = var("A", "a")
    assert a.within(300).window == TimeWindow(300, None)
    assert a.within(10, "minutes").window == TimeWindow(10, "min")
    assert a.within(seconds=3).window == TimeWindow(3, "s")
    assert a.within(events=7).window == CountWindow(7)
    assert a.within(unbounded=True).window == Unbounded()
    for bad in [dict(), dict(amount=1, events=2), dict(minutes=1, hours=2), dict(amount=1, unit="fortnight"),
                dict(fortnights=1)]:
        with pytest.raises(InvalidWindowError):
            a.within(**bad)


def test_builders_are_immutable():
    a = var("A", "a")
    b = a.where(col("a.x") > 1)
    assert a.where_ is None and b.where_ == Cmp(">", Attr("a", "x"), Lit(1))


def test_misuse_raises_named_errors():
    with pytest.raises(PatternValidationError, match="truth value"):
        bool(col("a.x") > 1)
    with pytest.raises(PatternValidationError, match="truth value"):
        1 < col("a.x") < 2  # noqa: B015 - chained comparison calls bool()
    with pytest.raises(PatternValidationError, match="whole pattern"):
        seq(var("A", "a").within(5), var("B", "b"))
    with pytest.raises(PatternValidationError, match="reference"):
        col("a.x + 1")
    with pytest.raises(PatternValidationError):
        col("a.x") > object()
    with pytest.raises(PatternValidationError, match="Kleene attribute"):
        (col("a.x") + 1).avg()
    with pytest.raises(PatternValidationError):
        lit([1])
    with pytest.raises(PatternValidationError):
        col("a.x").is_in(col("a.y"))
    with pytest.raises(PatternValidationError):
        equiv()
    with pytest.raises(PatternValidationError):
        seq("A a")


def test_expression_wrapper_repr_and_unhashable():
    e = (col("a.x") + 1) * 2 == lit(4)
    assert repr(e) == "E((a.x + 1) * 2 = 4)"
    assert isinstance(e, E)
    with pytest.raises(TypeError):
        hash(e)


# --- NumPy scalars are the Python values they hold ------------------------------------------------------

NP_EVENTS = pl.DataFrame({
    "type": ["A", "B", "A", "B", "B", "A", "B"], "ts": [1, 2, 3, 4, 5, 6, 7],
    "x": [1.5, 2.0, 3.0, 2.0, 2.5, 2.0, 1.0], "n": [1, 3, 2, 4, 3, 1, 5],
    "f": [True, False, True, True, False, False, True], "s": ["u", "x", "u", "u", "u", "u", "y"],
})

NP_CASES = [  # (text, a function building the same pattern with NumPy scalars)
    ("PATTERN SEQ(A a, B b) WHERE a.x < 2.5 AND b.n >= 3 AND a.f = TRUE AND b.s != 'x' AND a.n IN (1, 2) "
     "WITHIN 5",
     lambda: seq(var("A", "a"), var("B", "b"))
     .where(col("a.x") < np.float64(2.5), col("b.n") >= np.int64(3), col("a.f") == np.bool_(True),
            col("b.s") != np.str_("x"), col("a.n").is_in(np.int32(1), np.uint8(2)))
     .within(np.int64(5))),
    ("PATTERN SEQ(A a, B{1,2} b[]) WHERE [s = 'u'] AND b.x * 2.5 > a.x - 1 WITHIN 3 EVENTS",
     lambda: seq(var("A", "a"), kleene(var("B", "b"), min=np.int64(1), max=np.int16(2)))
     .where(equiv(s=np.str_("u")), col("b.x") * np.float32(2.5) > col("a.x") - lit(np.int8(1)))
     .within(events=np.int64(3))),
]


@pytest.mark.parametrize("text, builder", NP_CASES, ids=["single", "kleene"])
def test_numpy_scalars_become_python_literals(text, builder, engine):
    q = jitcep.compile(builder())
    assert q.patterns == (parse(text),)
    assert parse(q.text()) == q.patterns[0]                       # the text round-trips through the parser
    lits = [n.value for n in walk(q.patterns[0].where) if isinstance(n, Lit)]
    assert lits and all(type(v) in (bool, int, float, str) for v in lits)
    built = q.run(NP_EVENTS, type="type", engine=engine)
    assert built.height > 0
    assert built.equals(jitcep.compile(text).run(NP_EVENTS, type="type", engine=engine))


def test_numpy_scalars_in_a_hand_made_ast_too():
    assert Lit(np.float64(2.5)).value.__class__ is float
    assert TimeWindow(np.int64(10)).amount.__class__ is int
    assert lit(np.bool_(False)).node == Lit(False) and type(lit(np.bool_(False)).node.value) is bool
    with pytest.raises(PatternValidationError, match="not a literal"):
        lit(np.datetime64("2024-01-01"))
