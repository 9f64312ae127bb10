"""Validation: every rule raises its named error, naming the element at fault."""

import pytest

import jitcep

from jitcep.errors import (DuplicateVariableError, InvalidKleeneError, InvalidNegationError, InvalidWindowError,
                           MissingWindowError, PatternValidationError, UnknownVariableError,
                           UnsupportedPatternError)
from jitcep.options import Options
from jitcep.pattern.ast import CountWindow, EventVar, Kleene, Neg, Pattern, ReturnItem, Seq, TimeWindow
from jitcep.pattern.expr import Agg, Attr, BoolOp, Cmp, Equiv, In, Lit
from jitcep.pattern.parser import parse
from jitcep.pattern.validate import validate


@pytest.mark.parametrize("text", [
    """PATTERN SEQ(Stock a, !Stock b, Stock+ c[], Stock d)
       WHERE [symbol] AND a.price > 100 AND c[i].price > c[i-1].price AND d.volume < 0.8 * a.volume
       WITHIN 10 minutes RETURN a, c, avg(c.price) AS avg_c""",
    "PATTERN B* b[] WITHIN 10",                                      # matches need one event: semantics §3
    "PATTERN SEQ(A a, B* b[], C c) WHERE b.x > a.x WITHIN 10 EVENTS",
    "PATTERN KL(AND(G a, G b)){1,3} WHERE a.p < b.p AND count(a) > 1 WITHIN 180",
    "PATTERN SEQ(!T1 x, A a, AND(!F c, G d), !T2 y) WHERE x.p > a.p AND y.p < d.p WITHIN 5 s",
    "PATTERN OR(A a, SEQ(B b, C c)) WHERE a.x > 0 AND b.x < c.x WITHIN UNBOUNDED",
    "PATTERN SEQ(A a, B+ c[]) WHERE c[1].x < c[c.LEN].x AND c.LEN <= 3 WITHIN 1 h RETURN c[1].x AS first",
    "PATTERN A a WHERE a.s IN ('x', 'y') AND a.t IS NOT NULL AND NOT a.b WITHIN 2",
    "PATTERN A a WHERE [k = 'IBM'] WITHIN 1.5",
])
def test_valid_patterns_pass_unchanged(text):
    p = parse(text)
    assert validate(p) is p


def _raises(error, text, *fragments, options=None):
    with pytest.raises(error) as info:
        validate(parse(text) if isinstance(text, str) else text, options)
    assert type(info.value) is error
    for f in fragments:
        assert f in str(info.value)


@pytest.mark.parametrize("text, fragments", [
    ("PATTERN SEQ(A a, B b) WHERE c.x > 0 WITHIN 5", ("'c'", "bound: a, b")),
    ("PATTERN A a WITHIN 5 RETURN z", ("RETURN", "'z'")),
    ("PATTERN SEQ(A a, B+ c[]) WHERE avg(q.x) > 0 WITHIN 5", ("'q'",)),
])
def test_unknown_variable(text, fragments):
    _raises(UnknownVariableError, text, *fragments)


@pytest.mark.parametrize("text", [
    "PATTERN SEQ(A a, B a) WITHIN 5",
    "PATTERN SEQ(A a, !B a) WITHIN 5",
    "PATTERN OR(A a, A a) WITHIN 5",
    "PATTERN SEQ(A a, KL(AND(B b, C a))) WITHIN 5",
])
def test_duplicate_variable(text):
    _raises(DuplicateVariableError, text, "'a'", "twice")


@pytest.mark.parametrize("text, fragments", [
    ("PATTERN SEQ(A a, !SEQ(B b, C c)) WITHIN 5", ("!SEQ(B b, C c)", "group")),
    ("PATTERN SEQ(A a, !B+ b[]) WITHIN 5", ("!B+ b[]",)),
    ("PATTERN SEQ(A a, KL(!B b)) WITHIN 5", ("KL(!B b)",)),
    ("PATTERN OR(A a, !B b) WITHIN 5", ("!B b", "directly under OR")),
    ("PATTERN OR(A a, SEQ(C c, !B b, D d)) WITHIN 5", ("!B b", "inside an OR")),
    ("PATTERN SEQ(X x, KL(SEQ(A a, !B b))) WITHIN 5", ("!B b", "Kleene group")),
    ("PATTERN !A a WITHIN 5", ("no positive element",)),
    ("PATTERN SEQ(!A a, !B b) WITHIN 5", ("SEQ(!A a, !B b)", "no positive element")),
    ("PATTERN SEQ(X x, AND(!A a, !B b)) WITHIN 5", ("AND(!A a, !B b)",)),
    ("PATTERN SEQ(A a, !B b, !C c, D d) WHERE b.x = c.x WITHIN 5", ("b.x = c.x", "b, c")),
    ("PATTERN SEQ(A a, !B b) WITHIN 5 RETURN b.x", ("'b'", "negated")),
])
def test_invalid_negation(text, fragments):
    _raises(InvalidNegationError, text, *fragments)


@pytest.mark.parametrize("text, fragments", [
    ("PATTERN SEQ(A a, B b) WHERE a[i].x > 0 WITHIN 5", ("a[i].x", "not a Kleene variable")),
    ("PATTERN SEQ(A a, B b) WHERE a[i-1].x > 0 WITHIN 5", ("a[i-1].x",)),
    ("PATTERN SEQ(A a, B b) WHERE a[1].x > 0 WITHIN 5", ("a[1].x",)),
    ("PATTERN SEQ(A a, B b) WHERE a[a.LEN].x > 0 WITHIN 5", ("a[a.LEN].x",)),
    ("PATTERN SEQ(A a, B b) WHERE a.LEN > 0 WITHIN 5", ("count(a)", "'a'")),
    ("PATTERN SEQ(A a, B b) WHERE sum(b.x) > 0 WITHIN 5", ("sum(b.x)",)),
    ("PATTERN SEQ(A a, !B b) WHERE count(b) > 0 WITHIN 5", ("count(b)",)),
    ("PATTERN A{3,2} a[] WITHIN 5", ("A{3,2} a[]", "greater than the maximum")),
    ("PATTERN A{0} a[] WITHIN 5", ("A{0} a[]", "0")),
    ("PATTERN A{0,0} a[] WITHIN 5", ("0",)),
    ("PATTERN KL(OR(A a, B b)) WITHIN 5", ("KL(OR(A a, B b))",)),
    ("PATTERN KL(SEQ(A a, B+ b[])) WITHIN 5", ("B+ b[]", "nested")),
    ("PATTERN KL(A+ a[]) WITHIN 5", ("closure of a closure",)),
    ("PATTERN KL(SEQ(A a, OR(B b, C c))) WITHIN 5", ("plain variables",)),
    ("PATTERN SEQ(A a, B+ c[]) WHERE c[0].x > 0 WITHIN 5", ("integer from 1",)),
])
def test_invalid_kleene(text, fragments):
    _raises(InvalidKleeneError, text, *fragments)


@pytest.mark.parametrize("text", [
    "PATTERN A a WITHIN 0", "PATTERN A a WITHIN -3 s", "PATTERN A a WITHIN 0 EVENTS",
    "PATTERN A a WITHIN 2.5 EVENTS", "PATTERN A a WITHIN -1 EVENTS",
])
def test_invalid_window(text):
    _raises(InvalidWindowError, text, "WITHIN")


@pytest.mark.parametrize("window", [TimeWindow(5, "fortnight"), TimeWindow(float("nan")), TimeWindow(True),
                                    CountWindow(2.0), "5 minutes"])
def test_invalid_window_objects(window):
    _raises(InvalidWindowError, Pattern(EventVar("a", ("A",)), window=window))


def test_missing_window_says_how_to_ask_for_unbounded():
    _raises(MissingWindowError, "PATTERN SEQ(A a, B b)", "WITHIN UNBOUNDED")


@pytest.mark.parametrize("text, fragments", [
    ("PATTERN A a WHERE a.x > 1 OR [sym] WITHIN 5", ("[sym]", "top-level conjunct")),
    ("PATTERN A a WHERE NOT [sym] WITHIN 5", ("[sym]",)),
    ("PATTERN A a WITHIN 5 RETURN a.x + 1 AS a", ("alias 'a'",)),
    ("PATTERN A a WITHIN 5 RETURN a.x AS v, a.y AS v", ("'v'", "twice")),
    ("PATTERN A a WITHIN 5 RETURN a.x AS match_id", ("'match_id'",)),
    ("PATTERN SEQ(A match_id, B b) WITHIN 5", ("variable 'match_id'", "output's own column")),
    ("PATTERN SEQ(A a, !B match_id, C c) WITHIN 5", ("variable 'match_id'",)),
    ("PATTERN SEQ(A a, B+ `pattern`[]) WITHIN 5", ("variable 'pattern'", "output's own column")),
    ("PATTERN SEQ(A a, B+ c[]) WITHIN 5 RETURN c[i].x", ("c[i].x",)),
    ("PATTERN A a WHERE a.x + 1 WITHIN 5", ("a.x + 1", "not a condition")),
    ("PATTERN A a WHERE a.x > 1 AND a.y * 2 WITHIN 5", ("a.y * 2", "not a condition")),
    ("PATTERN A a WHERE a.x + (a.y > 1) > 0 WITHIN 5", ("a.y > 1", "not a number")),
    ("PATTERN A a WHERE a.x + 'q' > 0 WITHIN 5", ("'q'", "not a number")),
])
def test_other_validation_errors(text, fragments):
    _raises(PatternValidationError, text, *fragments)


def test_whole_event_only_as_a_return_item():
    p = Pattern(EventVar("a", ("A",)), Cmp("=", Attr("a", "*"), Lit(1)), TimeWindow(5))
    _raises(PatternValidationError, p, "whole event 'a'")


def test_malformed_trees_from_python_are_rejected():
    a = EventVar("a", ("A",))
    for bad, error in [
        (Pattern(Seq(()), window=TimeWindow(1)), PatternValidationError),
        (Pattern(EventVar("a", ()), window=TimeWindow(1)), PatternValidationError),
        (Pattern(EventVar("", ("A",)), window=TimeWindow(1)), PatternValidationError),
        (Pattern(Kleene(a, -1, None), window=TimeWindow(1)), InvalidKleeneError),
        (Pattern(Kleene(a, 1.5, None), window=TimeWindow(1)), InvalidKleeneError),
        (Pattern(Neg(Kleene(a)), window=TimeWindow(1)), InvalidNegationError),
        (Pattern(a, In(Attr("a", "x"), ()), TimeWindow(1)), PatternValidationError),
        (Pattern(a, BoolOp("and", (Lit(True),)), TimeWindow(1)), PatternValidationError),
        (Pattern(a, Cmp("~", Attr("a", "x"), Lit(1)), TimeWindow(1)), PatternValidationError),
        (Pattern(a, Cmp("<", Attr("a", "x"), Lit(float("inf"))), TimeWindow(1)), PatternValidationError),
        (Pattern(Kleene(a), Cmp("<", Agg("median", "a", "x"), Lit(1)), TimeWindow(1)), PatternValidationError),
        (Pattern(Kleene(a), Cmp("<", Agg("sum", "a"), Lit(1)), TimeWindow(1)), PatternValidationError),
        (Pattern(a, Equiv("k", Attr("a", "x")), TimeWindow(1)), PatternValidationError),
        (Pattern(a, None, TimeWindow(1), (ReturnItem(Attr("a", "x"), ""),)), PatternValidationError),
        ("PATTERN A a", PatternValidationError),
    ]:
        with pytest.raises(error):
            validate(bad)


def test_predicate_across_or_branches_is_unsupported():
    _raises(UnsupportedPatternError, "PATTERN SEQ(X x, OR(A a, B b)) WHERE a.v = b.v WITHIN 10",
            "a.v = b.v", "OR branches")


def test_options_name_bound_positive_variables():
    text = "PATTERN SEQ(A a, !N n, B b) WITHIN 5"
    validate(parse(text), Options.from_kwargs(contiguous=[["a", "b"]], freeze=["a"]))
    _raises(UnknownVariableError, text, "contiguous", "'z'", options=Options.from_kwargs(contiguous=[["a", "z"]]))
    _raises(UnknownVariableError, text, "freeze", "'q'", options=Options.from_kwargs(freeze=["q"]))
    _raises(InvalidNegationError, text, "freeze", "'n'", options=Options.from_kwargs(freeze=["n"]))


@pytest.mark.parametrize("text, options, quoted", [
    ("PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10", {"kleene": "maximal"},
     "b[i].x > b[i-1].x"),
    ("PATTERN AND(SEQ(A a, B+ b[], C c), D d) WITHIN 10", {"kleene": "maximal"}, "B+ b[]"),
    ("PATTERN SEQ(A a, KL(SEQ(B b, C c)), D d) WITHIN 10", {"kleene": "maximal"}, "KL(SEQ(B b, C c))"),
    ("PATTERN SEQ(A a, B+ b[], C c) WITHIN 10", {"kleene": "maximal", "strategy": "skip_till_next_match"},
     "skip_till_next_match"),
    ("PATTERN SEQ(A a, AND(B b, C c)) WITHIN 10", {"strategy": "strict_contiguity"}, "AND(B b, C c)"),
    ("PATTERN SEQ(A a, B b) WITHIN 10", {"strategy": "partition_contiguity"}, "[attr]"),
])
def test_undefined_option_combinations_are_refused_at_compile(text, options, quoted):
    # docs/semantics.md §6.2, §8: refused by compile, quoting the pattern, not discovered by run
    with pytest.raises(UnsupportedPatternError) as e:
        jitcep.compile(text, **options)
    assert quoted in str(e.value)


def test_normal_form_makes_nested_seqs_linear_for_the_strategies():
    # SEQ(A a, SEQ(B b, C c)) is SEQ(A a, B b, C c) (section 5): a linear pattern
    jitcep.compile("PATTERN SEQ(A a, SEQ(B b, C c)) WITHIN 10", strategy="skip_till_next_match")
