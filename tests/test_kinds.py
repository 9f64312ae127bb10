"""Kinds of predicate values (docs/semantics.md §4): the rules of jitcep.pattern.kinds, and the same
answer — matches, or the same named error at the same stage — on both engines.

Every expected kind, error and match set below is written by hand from §4.  The module uses
semantic_helpers, so every test runs on each engine (tests/conftest.py); the rule tables do not
depend on it.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from semantic_helpers import M, events, matches, run

import jitcep
from jitcep.errors import AttributeTypeError, PatternValidationError
from jitcep.pattern.kinds import (BOOL, DATETIME, DATETIME_TZ, DURATION, FLOAT, INT, NUMBER, STR, TIME,
                                  check_predicate, infer, result_kind)
from jitcep.pattern.parser import parse_expr

# --- the rules, operator by operator ------------------------------------------------------------------

RESULTS = [
    # arithmetic: int with int exact, a float makes a float, / always float, NULL leaves the width open
    ("+", INT, INT, INT), ("-", INT, FLOAT, FLOAT), ("*", FLOAT, FLOAT, FLOAT), ("/", INT, INT, FLOAT),
    ("+", None, INT, NUMBER), ("*", None, FLOAT, FLOAT), ("/", None, None, FLOAT),
    ("neg", INT, None, INT), ("abs", FLOAT, None, FLOAT), ("neg", None, None, NUMBER),
    # comparisons: numbers with numbers (int with float too), strings (ordered too), booleans by = / !=,
    # each temporal kind with itself; NULL with anything
    ("<", INT, FLOAT, BOOL), ("=", STR, STR, BOOL), ("<", STR, STR, BOOL), ("=", BOOL, BOOL, BOOL),
    ("!=", BOOL, BOOL, BOOL), ("<=", DATETIME, DATETIME, BOOL), ("=", DATETIME_TZ, DATETIME_TZ, BOOL),
    (">", DURATION, DURATION, BOOL), ("=", TIME, TIME, BOOL), ("=", None, STR, BOOL), ("<", DATETIME, None, BOOL),
    ("=", None, None, BOOL),
    # aggregates
    ("count", None, None, INT), ("sum", INT, None, INT), ("sum", FLOAT, None, FLOAT), ("sum", None, None, NUMBER),
    ("avg", INT, None, FLOAT), ("min", STR, None, STR), ("max", DATETIME, None, DATETIME), ("min", BOOL, None, BOOL),
    # conditions
    ("condition", BOOL, None, BOOL), ("condition", None, None, BOOL),
]


@pytest.mark.parametrize("op, left, right, kind", RESULTS)
def test_result_kind(op, left, right, kind):
    assert result_kind(op, left, right) == kind


ERRORS = [
    ("=", INT, BOOL, "comparing a number value with a boolean value"),
    ("!=", BOOL, FLOAT, "comparing a boolean value with a number value"),
    ("<", BOOL, BOOL, "booleans compare only with = and !="),
    ("<", STR, INT, "comparing a string value with a number value"),
    ("+", BOOL, INT, "arithmetic on a boolean value, which is not a number"),
    ("*", INT, STR, "arithmetic on a string value, which is not a number"),
    ("-", DATETIME, DATETIME, "no duration literals"),
    ("abs", DURATION, None, "arithmetic on a duration value"),
    ("<", DATETIME, INT, "compares only with its own kind"),
    ("=", DATETIME, DATETIME_TZ, "dt.replace_time_zone"),
    ("=", DURATION, TIME, "comparing a duration value with a time of day value"),
    ("=", DATETIME, STR, "comparing a datetime value with a string value"),
    ("sum", STR, None, "sum() over a string value, which is not a number"),
    ("avg", BOOL, None, "avg() over a boolean value"),
    ("sum", DATETIME, None, "no duration literals"),
    ("condition", INT, None, "a number value is a value, not a condition"),
    ("condition", STR, None, "not a condition"),
    ("condition", DATETIME, None, "not a condition"),
]


@pytest.mark.parametrize("op, left, right, message", ERRORS)
def test_result_kind_errors(op, left, right, message):
    with pytest.raises(AttributeTypeError) as info:
        result_kind(op, left, right)
    assert message in str(info.value)
    with pytest.raises(PatternValidationError):  # the caller names the error class (compile time)
        result_kind(op, left, right, error=PatternValidationError)


# --- whole expressions --------------------------------------------------------------------------------

ATTRS = {"x": INT, "f": FLOAT, "s": STR, "b": BOOL, "d": DATETIME, "n": None}


def _kind_of(var, attr):
    return ATTRS[attr]


@pytest.mark.parametrize("text, kind", [
    ("a.x + a.f", FLOAT), ("a.x * 2", INT), ("a.x / 2", FLOAT), ("-a.x", INT), ("abs(a.f)", FLOAT),
    ("a.x + a.n", NUMBER), ("a.x > a.f", BOOL), ("count(k)", INT), ("avg(k.x)", FLOAT), ("sum(k.n)", NUMBER),
    ("max(k.d)", DATETIME), ("a.s IN ('u', 'v')", BOOL), ("NOT a.b", BOOL), ("a.b AND a.n", BOOL),
    ("a.n IS NULL", BOOL), ("a.n = 'u'", BOOL), ("a.s", STR), ("a.d", DATETIME), ("NULL", None),
])
def test_infer(text, kind):
    assert infer(parse_expr(text), _kind_of) == kind


@pytest.mark.parametrize("text, message", [
    ("a.x IN (1, 'u')", "comparing a number attribute (a.x) with a string literal ('u')"),
    ("a.b AND a.x > 0 OR a.x", "a number attribute (a.x) is a value, not a condition"),
    ("(a.x > 1) + 1 > 0", "arithmetic on a boolean expression (a.x > 1)"),
    ("sum(k.s) > 1", "sum() over a string attribute (k.s)"),
    ("a.d = a.x", "comparing a datetime attribute (a.d) with a number attribute (a.x)"),
    ("NOT a.f", "a number attribute (a.f) is a value, not a condition"),
])
def test_infer_errors(text, message):
    with pytest.raises(AttributeTypeError) as info:
        infer(parse_expr(text), _kind_of)
    assert message in str(info.value)


def test_a_where_conjunct_is_a_condition_a_return_item_a_value():
    with pytest.raises(AttributeTypeError, match=r"not a condition in predicate a\.x \+ 1"):
        check_predicate(parse_expr("a.x + 1"), _kind_of, condition=True)
    assert check_predicate(parse_expr("a.x + 1"), _kind_of, condition=False) == INT


# --- both engines: the same matches, or the same error at the same stage -------------------------------

DF = events(
    "type ts x f b s nul d",
    ("A", 1, 1, 1.5, True, "u", None, dt.date(2024, 1, 1)),
    ("B", 2, 2, 2.0, False, "v", None, dt.date(2024, 1, 2)),
    ("B", 3, 1, 0.5, True, "t", None, dt.date(2023, 12, 31)),
    schema={"type": pl.String, "ts": pl.Int64, "x": pl.Int64, "f": pl.Float64, "b": pl.Boolean, "s": pl.String,
            "nul": pl.Null, "d": pl.Date},
)


def _seq(where: str) -> str:
    return f"PATTERN SEQ(A a, B b) WHERE {where} WITHIN 10"


@pytest.mark.parametrize("where, expected", [
    ("a.x < b.f", M((0, 1))),                 # an int with a float, by value
    ("a.x = b.x", M((0, 2))),
    ("a.s < b.s", M((0, 1))),                 # strings are ordered: 'u' < 'v', not 'u' < 't'
    ("a.b = b.b", M((0, 2))),
    ("b.b", M((0, 2))),                       # a boolean attribute is a condition
    ("NOT b.b", M((0, 1))),
    ("a.x + b.x = 3", M((0, 1))),
    ("b.x / 2 = 0.5", M((0, 2))),             # true division: 1 / 2 is 0.5
    ("a.d < b.d", M((0, 1))),                 # instants by what they denote
    ("a.nul = 'z'", M()),                     # an all-null attribute has no kind: NULL, no match ...
    ("a.nul", M()),                           # ... even as a condition (NULL rejects)
    ("a.nul + 1 > 0", M()),
    ("a.nul < b.s OR b.x = 1", M((0, 2))),    # NULL OR TRUE is TRUE
])
def test_well_kinded_predicates_match_alike(where, expected):
    assert matches(_seq(where), DF) == expected


@pytest.mark.parametrize("where, message", [
    # a number with a boolean: codegen and the reference refused it, the table check accepted it
    ("a.x = b.b", "comparing a number attribute (a.x) with a boolean attribute (b.b)"),
    ("a.x = TRUE", "comparing a number attribute (a.x) with a boolean literal (TRUE)"),
    ("a.x IN (TRUE, 2)", "comparing a number attribute (a.x) with a boolean literal (TRUE)"),
    ("[b = 1]", "comparing a boolean attribute (b) with a number literal (1)"),
    # booleans are not ordered, and not numbers
    ("a.b < b.b", "booleans compare only with = and !="),
    ("a.b + 1 > 0", "arithmetic on a boolean attribute (a.b), which is not a number"),
    # a value is not a condition: the reference rejected every match, codegen raised
    ("a.x AND b.b", "a number attribute (a.x) is a value, not a condition"),
    ("a.s", "a string attribute (a.s) is a value, not a condition"),
    ("NOT a.f", "a number attribute (a.f) is a value, not a condition"),
    # strings and temporal values compare with their own kind only
    ("a.s = 1", "comparing a string attribute (a.s) with a number literal (1)"),
    ("a.s IN ('u', 1)", "comparing a string attribute (a.s) with a number literal (1)"),
    ("a.d = 1", "compares only with its own kind"),
    ("a.d - b.d > 0", "no duration literals"),
    ("a.d = b.x", "comparing a datetime attribute (a.d) with a number attribute (b.x)"),
])
def test_misuse_is_the_same_error_on_both_engines(where, message):
    with pytest.raises(AttributeTypeError) as info:
        run(_seq(where), DF)
    assert message in str(info.value)


def test_the_error_comes_before_any_event_is_matched():
    # no C event: no candidate ever reaches the predicate, and it still raises (the table's kinds decide)
    with pytest.raises(AttributeTypeError, match="with a boolean attribute"):
        run("PATTERN SEQ(A a, C c) WHERE a.x = c.b WITHIN 10", DF)


@pytest.mark.parametrize("where, message", [
    ("1 = TRUE", "comparing a number literal (1) with a boolean literal (TRUE)"),
    ("TRUE < FALSE", "booleans compare only with = and !="),
    ("a.x + 'q' > 0", "arithmetic on a string literal ('q'), which is not a number"),
    ("-TRUE = a.x", "arithmetic on a boolean literal (TRUE)"),
    ("a.x > 0 AND 5", "a number literal (5) is a value, not a condition"),
    ("NOT 'u'", "a string literal ('u') is a value, not a condition"),
    ("a.x / 2", "a number expression (a.x / 2) is a value, not a condition"),
])
def test_what_the_literals_show_fails_at_compile(where, message):
    # the same rules, before any table is read: PatternValidationError from jitcep.compile
    with pytest.raises(PatternValidationError) as info:
        jitcep.compile(_seq(where))
    assert message in str(info.value)


def test_attribute_kinds_wait_for_the_table():
    # a.x's kind is unknown at compile: the mismatch with a listed string is found at run time
    jitcep.compile(_seq("a.x IN (1, 'u')"))
    with pytest.raises(AttributeTypeError, match=r"a number attribute \(a\.x\) with a string literal"):
        run(_seq("a.x IN (1, 'u')"), DF)
