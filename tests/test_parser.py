"""Parser: the agreed syntax maps to the agreed AST; syntax errors carry line, column and expectation."""

import pytest

from jitcep.errors import PatternError, PatternSyntaxError
from jitcep.pattern.ast import (Conj, CountWindow, Disj, EventVar, Kleene, Neg, Pattern, ReturnItem, Seq,
                                TimeWindow, Unbounded)
from jitcep.pattern.expr import Agg, Arith, Attr, BoolOp, Cmp, Equiv, In, IsNull, Lit, Not, Unary
from jitcep.pattern.parser import parse, parse_expr, parse_many

A, B = EventVar("a", ("A",)), EventVar("b", ("B",))


def body(text):
    return parse(f"PATTERN {text} WITHIN 5").body


def where(text):
    return parse(f"PATTERN SEQ(A a, B+ c[]) WHERE {text} WITHIN 5").where


def test_the_agreed_example():
    p = parse("""
        PATTERN SEQ(Stock a, !Stock b, Stock+ c[], Stock d)
        WHERE [symbol] AND a.price > 100 AND c[i].price > c[i-1].price AND d.volume < 0.8 * a.volume
        WITHIN 10 minutes
        RETURN a, c, avg(c.price) AS avg_c
    """)
    s = ("Stock",)
    assert p == Pattern(
        Seq((EventVar("a", s), Neg(EventVar("b", s)), Kleene(EventVar("c", s), 1, None), EventVar("d", s))),
        BoolOp("and", (
            Equiv("symbol"),
            Cmp(">", Attr("a", "price"), Lit(100)),
            Cmp(">", Attr("c", "price", "i"), Attr("c", "price", "i-1")),
            Cmp("<", Attr("d", "volume"), Arith("*", Lit(0.8), Attr("a", "volume"))),
        )),
        TimeWindow(10, "min"),
        (ReturnItem(Attr("a", "*")), ReturnItem(Attr("c", "*")), ReturnItem(Agg("avg", "c", "price"), "avg_c")),
    )


@pytest.mark.parametrize("text, expected", [
    ("A a", A),
    ("* x", EventVar("x", None)),
    ("ANY(A, B) x", EventVar("x", ("A", "B"))),
    ("SHELF-READING r", EventVar("r", ("SHELF-READING",))),
    ("'Stock Price' x", EventVar("x", ("Stock Price",))),
    ('"SEQ" x', EventVar("x", ("SEQ",))),
    ("A `my var`", EventVar("my var", ("A",))),
    ("!A a", Neg(A)), ("~A a", Neg(A)), ("NOT(A a)", Neg(A)), ("!(A a)", Neg(A)), ("~ (A a)", Neg(A)),
    ("A+ a[]", Kleene(A, 1, None)), ("A+ a", Kleene(A, 1, None)),
    ("A* a[]", Kleene(A, 0, None)),
    ("A{3} a[]", Kleene(A, 3, 3)), ("A{2,4} a[]", Kleene(A, 2, 4)), ("A{2,} a[]", Kleene(A, 2, None)),
    ("KL(A a)", Kleene(A, 1, None)), ("KL(A a[])", Kleene(A, 1, None)), ("KL(A a){1,3}", Kleene(A, 1, 3)),
    ("KL(A a)*", Kleene(A, 0, None)),
    ("KL(AND(A a, B b)){1,3}", Kleene(Conj((A, B)), 1, 3)),
    ("KL(SEQ(A a, B b))", Kleene(Seq((A, B)), 1, None)),
    ("ANY(A, B)+ x[]", Kleene(EventVar("x", ("A", "B")), 1, None)),
    ("SEQ(A a, OR(B b, AND(A c, B d)))",
     Seq((A, Disj((B, Conj((EventVar("c", ("A",)), EventVar("d", ("B",))))))))),
    ("seq(A a)", Seq((A,))),
])
def test_structure(text, expected):
    assert body(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("a.x = 1", Cmp("=", Attr("a", "x"), Lit(1))),
    ("a.x == 1", Cmp("=", Attr("a", "x"), Lit(1))),
    ("a.x <> 1", Cmp("!=", Attr("a", "x"), Lit(1))),
    ("a.x != 'it\\'s'", Cmp("!=", Attr("a", "x"), Lit("it's"))),
    ('a.x >= "q"', Cmp(">=", Attr("a", "x"), Lit("q"))),
    ("a.`Opening Price` > 1.5e3", Cmp(">", Attr("a", "Opening Price"), Lit(1500.0))),
    ("a.ts < c[1].ts", Cmp("<", Attr("a", "ts"), Attr("c", "ts", 1))),
    ("c[c.LEN].x > c[LEN].y", Cmp(">", Attr("c", "x", "len"), Attr("c", "y", "len"))),
    ("c.LEN > 2", Cmp(">", Agg("count", "c"), Lit(2))),
    ("count(c) = count(c[])", Cmp("=", Agg("count", "c"), Agg("count", "c"))),
    ("sum(c.x) < SUM(c[].x)", Cmp("<", Agg("sum", "c", "x"), Agg("sum", "c", "x"))),
    ("c.x > 0", Cmp(">", Attr("c", "x"), Lit(0))),
    ("c[].x > 0", Cmp(">", Attr("c", "x"), Lit(0))),
    ("a.x IN (1, -2, 'z', NULL)", In(Attr("a", "x"), (Lit(1), Lit(-2), Lit("z"), Lit(None)))),
    ("a.x NOT IN (TRUE)", In(Attr("a", "x"), (Lit(True),), True)),
    ("a.x IS NULL", IsNull(Attr("a", "x"))),
    ("a.x is not null", IsNull(Attr("a", "x"), True)),
    ("-a.x > -3", Cmp(">", Unary("neg", Attr("a", "x")), Lit(-3))),
    ("-(3) < abs(a.x - 1)", Cmp("<", Unary("neg", Lit(3)), Unary("abs", Arith("-", Attr("a", "x"), Lit(1))))),
    ("a.x - 1 - 2 > 0", Cmp(">", Arith("-", Arith("-", Attr("a", "x"), Lit(1)), Lit(2)), Lit(0))),
    ("a.x - (1 - 2) > 0", Cmp(">", Arith("-", Attr("a", "x"), Arith("-", Lit(1), Lit(2))), Lit(0))),
    ("a.x + 2 * 3 > 0", Cmp(">", Arith("+", Attr("a", "x"), Arith("*", Lit(2), Lit(3))), Lit(0))),
    ("TRUE", Lit(True)),
    ("[k = 'IBM']", Equiv("k", Lit("IBM"))),
    ("[k1, k2]", BoolOp("and", (Equiv("k1"), Equiv("k2")))),
])
def test_expressions(text, expected):
    assert where(text) == expected


def test_boolean_precedence_and_chains():
    p, q, r = (Cmp(">", Attr("a", n), Lit(0)) for n in "pqr")
    assert where("a.p > 0 OR a.q > 0 AND a.r > 0") == BoolOp("or", (p, BoolOp("and", (q, r))))
    assert where("a.p > 0 AND a.q > 0 AND a.r > 0") == BoolOp("and", (p, q, r))
    # parentheses keep the tree: (p AND q) AND r is not flattened
    assert where("(a.p > 0 AND a.q > 0) AND a.r > 0") == BoolOp("and", (BoolOp("and", (p, q)), r))
    assert where("NOT a.p > 0 AND a.q > 0") == BoolOp("and", (Not(p), q))
    assert where("NOT NOT a.p > 0") == Not(Not(p))


def test_equivalence_list_splices_into_the_and_chain():
    c = Cmp(">", Attr("a", "x"), Lit(1))
    assert where("[k1, k2] AND a.x > 1") == BoolOp("and", (Equiv("k1"), Equiv("k2"), c))
    assert where("a.x > 1 AND [k1, k2 = 3]") == BoolOp("and", (c, Equiv("k1"), Equiv("k2", Lit(3))))


@pytest.mark.parametrize("text, window", [
    ("WITHIN 300", TimeWindow(300, None)),
    ("WITHIN 2.5 h", TimeWindow(2.5, "h")),
    ("WITHIN 10 minutes", TimeWindow(10, "min")),
    ("WITHIN 1 SECOND", TimeWindow(1, "s")),
    ("within 3 ms", TimeWindow(3, "ms")),
    ("WITHIN 7 days", TimeWindow(7, "d")),
    ("WITHIN 100 EVENTS", CountWindow(100)),
    ("WITHIN UNBOUNDED", Unbounded()),
    ("WITHIN -4", TimeWindow(-4, None)),  # parsed; validation rejects it with InvalidWindowError
    ("", None),
])
def test_windows(text, window):
    assert parse(f"PATTERN A a {text}").window == window


def test_keywords_comments_event_and_separators():
    text = """
    -- first pattern
    event and(A a, B b) where a.x = b.x   # trailing comment
    within 5 s;
    PATTERN A a WITHIN UNBOUNDED;
    """
    first, second = parse_many(text)
    assert first.body == Conj((A, B))
    assert first.where == Cmp("=", Attr("a", "x"), Attr("b", "x"))
    assert second == Pattern(A, None, Unbounded())


def test_return_items():
    p = parse("PATTERN SEQ(A a, B+ c[]) WITHIN 5 RETURN a, c[1].x AS first, c.LEN AS n, a.x * 2")
    assert p.returns == (
        ReturnItem(Attr("a", "*")),
        ReturnItem(Attr("c", "x", 1), "first"),
        ReturnItem(Agg("count", "c"), "n"),
        ReturnItem(Arith("*", Attr("a", "x"), Lit(2))),
    )


def test_parse_expr():
    assert parse_expr("a.x > 1 AND [s]") == BoolOp("and", (Cmp(">", Attr("a", "x"), Lit(1)), Equiv("s")))


def _syntax_error(text):
    with pytest.raises(PatternSyntaxError) as info:
        parse(text)
    return info.value


@pytest.mark.parametrize("text, line, column, expected", [
    ("PATTERN SEQ(A a,, B b) WITHIN 5", 1, 17, "a pattern element"),
    ("PATTERN SEQ(A a, B b\nWHERE a.x > 1", 2, 1, "',' or ')'"),
    ("PATTERN A a\n  WHERE a.x >\n  WITHIN 3", 3, 3, "an expression"),
    ("PATTERN A a WITHIN 5 fortnights", 1, 22, "EVENTS or a unit"),
    ("PATTERN A a[] WITHIN 5", 1, 12, "a closure on the type"),
    ("PATTERN A a WHERE a.x = 'abc", 1, 25, "a closing '"),
    ("PATTERN A and WITHIN 1", 1, 11, "a variable name"),
    ("PATTERN A a WHERE c[i-2].x > 0", 1, 23, "1"),
    ("PATTERN A a WHERE c[d.LEN].x > 0", 1, 21, "c.LEN"),
    ("PATTERN A a WHERE foo(a.x) > 1", 1, 19, "one of count, sum, avg, min, max, abs"),
    ("PATTERN A a WHERE a > 1", 1, 21, "'.' and an attribute"),
    ("PATTERN A a WHERE sum(c) > 1", 1, 24, "'.' and an attribute"),
    ("PATTERN A a WHERE a.x @ 1", 1, 23, None),
    ("PATTERN A a WITHIN 5 WHERE a.x > 1", 1, 22, "WHERE, WITHIN, RETURN, ';' or end of text"),
    ("SEQ(A a)", 1, 1, "PATTERN or EVENT"),
    ("PATTERN A a; PATTERN B b", 1, 12, "a single pattern"),
    ("  -- only a comment", 1, 20, "PATTERN or EVENT"),
    ("PATTERN A{2,x} a[] WITHIN 5", 1, 13, "a maximum count"),
    ("PATTERN A a WHERE a.x = 'a\\qb' WITHIN 5", 1, 27, "one of \\n"),
])
def test_syntax_errors_locate_the_problem(text, line, column, expected):
    err = _syntax_error(text)
    assert (err.line, err.column) == (line, column)
    if expected is not None:
        assert expected in err.expected
    assert err.text == text
    assert f"line {line}, column {column}" in str(err)


def test_error_message_shows_the_line_with_a_caret():
    err = _syntax_error("PATTERN SEQ(A a,\n  B b,, C c) WITHIN 5")
    assert str(err).endswith("\n    B b,, C c) WITHIN 5\n        ^")


def test_not_text_is_a_pattern_error():
    with pytest.raises(PatternError, match="must be a str, got int"):
        parse(42)


def test_the_papers_spellings():
    # SASE Q2 and SASE+ Query 1 / 3 as printed in the papers (modulo their WHERE blocks)
    q2 = parse("EVENT SEQ(SHELF-READING x, !(COUNTER-READING y), EXIT-READING z) "
               "WHERE x.id = y.id AND x.id = z.id WITHIN 12 hours")
    assert q2.body == Seq((EventVar("x", ("SHELF-READING",)), Neg(EventVar("y", ("COUNTER-READING",))),
                           EventVar("z", ("EXIT-READING",))))
    assert q2.window == TimeWindow(12, "h")
    q1 = parse("PATTERN SEQ(Shelf a, ~(Register b), Exit c) WHERE [tag_id] WITHIN 12 hours")
    assert q1.body.items[1] == Neg(EventVar("b", ("Register",)))
    q3 = parse("PATTERN SEQ(Stock+ a[], Stock b) WHERE [symbol] AND a[1].price > 0 AND "
               "b.volume < 0.8 * a[a.len].volume WITHIN 1 hour")
    assert q3.where.items[2].right.right == Attr("a", "volume", "len")


from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = ["PATTERN ", "SEQ(", "AND(", "OR(", "KL(", "ANY(", "NOT(", "!", "~", "A ", "a", "b", "c", ", ", ")",
           "(", "[", "]", "{", "}", "+", "*", "-", "/", ".", "i", "1", "2.5", "LEN", " WHERE ", " WITHIN ",
           " RETURN ", " EVENTS", " min", "'s'", "`q`", ";", " = ", " < ", " IN ", " IS ", " NULL", " AS ",
           "count(", "avg(", "abs(", "\n", "--x\n", "'", '"', "`", "@"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=25).map("".join))
def test_any_text_parses_or_raises_a_syntax_error(text):
    try:
        parse_many(text)
    except PatternSyntaxError as e:
        assert e.line >= 1 and e.column >= 1
