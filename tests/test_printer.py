"""Printer: canonical text, and parse(to_text(p)) == p for hand-picked tricky trees."""

import pytest

from jitcep.errors import PatternValidationError
from jitcep.pattern.ast import (Conj, CountWindow, Disj, EventVar, Kleene, Neg, Pattern, ReturnItem, Seq,
                                TimeWindow, Unbounded)
from jitcep.pattern.expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, In, IsNull, Lit, Not, Unary
from jitcep.pattern.parser import parse
from jitcep.pattern.printer import expr_to_text, node_to_text, to_text

x, y = Attr("a", "x"), Attr("a", "y")


def test_canonical_layout():
    text = ("event seq(Stock a, ~Stock b, KL(Stock c), Stock d) where [symbol] and a.price>100 "
            "within 10 minutes return a, avg(c[].price) as avg_c")
    assert to_text(parse(text)) == (
        "PATTERN SEQ(Stock a, !Stock b, Stock+ c[], Stock d)\n"
        "WHERE [symbol] AND a.price > 100\n"
        "WITHIN 10 min\n"
        "RETURN a, avg(c.price) AS avg_c")


@pytest.mark.parametrize("node, text", [
    (EventVar("v", None), "* v"),
    (EventVar("v", ("A", "B")), "ANY(A, B) v"),
    (EventVar("v", ("SHELF-READING",)), "SHELF-READING v"),
    (EventVar("v", ("has space",)), "'has space' v"),
    (EventVar("v", ("and",)), "'and' v"),
    (EventVar("select", ("A",)), "A select"),
    (EventVar("in", ("A",)), "A `in`"),
    (EventVar("a`b", ("A",)), "A `a``b`"),
    (Kleene(EventVar("v", ("A",)), 0, None), "A* v[]"),
    (Kleene(EventVar("v", ("A",)), 2, 2), "A{2} v[]"),
    (Kleene(EventVar("v", ("A",)), 2, 5), "A{2,5} v[]"),
    (Kleene(EventVar("v", ("A",)), 2, None), "A{2,} v[]"),
    (Kleene(EventVar("v", None), 1, None), "KL(* v)"),
    (Kleene(EventVar("v", ("A", "B")), 1, 3), "KL(ANY(A, B) v){1,3}"),
    (Kleene(Conj((EventVar("a", ("G",)), EventVar("b", ("G",)))), 1, 3), "KL(AND(G a, G b)){1,3}"),
    (Disj((EventVar("a", ("A",)), Seq((EventVar("b", ("B",)),)))), "OR(A a, SEQ(B b))"),
])
def test_structure_text(node, text):
    assert node_to_text(node) == text


@pytest.mark.parametrize("expr, text", [
    (Arith("-", x, Arith("-", y, Lit(1))), "a.x - (a.y - 1)"),
    (Arith("-", Arith("-", x, y), Lit(1)), "a.x - a.y - 1"),
    (Arith("*", Arith("+", x, Lit(1)), Lit(2)), "(a.x + 1) * 2"),
    (Arith("-", x, Lit(-5)), "a.x - -5"),
    (Unary("neg", Lit(5)), "-(5)"),                 # not -5, which is the literal Lit(-5)
    (Unary("neg", Lit(-5)), "-(-5)"),
    (Unary("neg", Unary("neg", x)), "-(-a.x)"),     # never '--', which starts a comment
    (Unary("neg", x), "-a.x"),
    (Unary("abs", Arith("-", x, y)), "abs(a.x - a.y)"),
    (Not(BoolOp("and", (Cmp("<", x, y), Cmp(">", x, Lit(0))))), "NOT (a.x < a.y AND a.x > 0)"),
    (BoolOp("or", (BoolOp("or", (Lit(True), Lit(False))), Lit(None))), "(TRUE OR FALSE) OR NULL"),
    (BoolOp("and", (Lit(True), BoolOp("or", (Lit(False), Lit(True))))), "TRUE AND (FALSE OR TRUE)"),
    (Cmp("=", Cmp("<", x, y), Lit(True)), "(a.x < a.y) = TRUE"),
    (In(x, (Lit(1), Lit("q'\\"), Lit(None)), True), "a.x NOT IN (1, 'q\\'\\\\', NULL)"),
    (IsNull(Arith("+", x, y), True), "a.x + a.y IS NOT NULL"),
    (Cmp(">", Attr("c", "x", "len"), Attr("c", "len", 1)), "c[c.LEN].x > c[1].`len`"),
    (Cmp(">", Attr("c", "Opening Price", "i-1"), Agg("count", "c")), "c[i-1].`Opening Price` > count(c)"),
    (Equiv("k", Lit(-2.5)), "[k = -2.5]"),
    (Lit("line\nbreak\ttab"), "'line\\nbreak\\ttab'"),
    (Lit(1e20), "1e+20"),
])
def test_expression_text(expr, text):
    assert expr_to_text(expr) == text


TRICKY = [
    Pattern(Seq((EventVar("a", ("A",)), Neg(EventVar("b", None)), Kleene(EventVar("c", ("C-1x",)), 0, 7))),
            BoolOp("and", (Equiv("k"), Equiv("`odd` key", Lit("v")),
                           Cmp("<", Unary("neg", Lit(0.0)), Arith("/", Attr("a", "select"), Lit(-3))),
                           BoolOp("and", (Not(Not(IsNull(Attr("c", "x", "i")))), Lit(False))))),
            CountWindow(3)),
    Pattern(Disj((EventVar("a", ("OR",)), EventVar("b", ("x y",)))), Lit(True), Unbounded(),
            (ReturnItem(Attr("a", "*"), "AS"), ReturnItem(Unary("abs", Attr("b", "ts")), "t"))),
    Pattern(Kleene(Seq((EventVar("a", ("A",)), EventVar("b", ("B",)))), 2, None),
            Cmp(">=", Agg("max", "a", "x"), Arith("*", Lit(2), Agg("min", "b", "len"))),
            TimeWindow(0.25, "us")),
    Pattern(EventVar("é", ("Ünïcode",)), In(Attr("é", "ß"), (Lit("日本"),)), TimeWindow(1, None)),
]


@pytest.mark.parametrize("pattern", TRICKY)
def test_round_trip_of_tricky_patterns(pattern):
    assert parse(to_text(pattern)) == pattern


def test_non_finite_literals_have_no_text():
    with pytest.raises(PatternValidationError, match="finite"):
        expr_to_text(Cmp(">", x, Lit(float("inf"))))


def test_single_operand_boolop_is_rejected():
    with pytest.raises(PatternValidationError, match="at least two"):
        expr_to_text(BoolOp("and", (Lit(True),)))


# --- property tests over the shipped strategies ------------------------------

from hypothesis import given, settings  # noqa: E402

from jitcep.pattern.parser import parse_expr  # noqa: E402
from jitcep.pattern.validate import validate  # noqa: E402
from jitcep.testing.patterns import exprs, patterns  # noqa: E402


def _round_trip(pattern):
    assert validate(pattern) is pattern   # the strategy only draws valid patterns
    text = to_text(pattern)
    assert parse(text) == pattern
    assert to_text(parse(text)) == text   # canonical text is a fixed point


@settings(max_examples=100, deadline=None)
@given(patterns())
def test_round_trip_property(pattern):
    _round_trip(pattern)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(patterns(max_depth=4))
def test_round_trip_property_many(pattern):
    _round_trip(pattern)


@settings(max_examples=150, deadline=None)
@given(exprs(("a", "in", "my var"), ("c", "len")))
def test_expression_round_trip_property(expr):
    assert parse_expr(expr_to_text(expr)) == expr
