"""Bad input: every mistake a user can make ends in a named JitcepError saying what is wrong and how to fix
it, before anything is written (DESIGN.md section 5).

- ``MATRIX``: one row per mistake, (what the user does, the error class, a fragment of the message).  It
  grows with each issue; every row checks the exact class and that the message names the problem.
- Size: the deepest pattern of each shape runs through every pass (parser, validation, printer, both
  engines) with only 500 stack frames to spare, the widest (most variables) with 650, and one level or
  variable more is the named error (docs/language.md, Limits).
- NUL in column and variable names is read and written like any other name.
- Hypothesis: deep, huge and garbage pattern texts compile or raise a JitcepError, never anything else.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import contextmanager

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitcep
from jitcep.config import MAX_NESTING, MAX_VARIABLES
from jitcep.errors import (AttributeTypeError, DuplicateVariableError, ExplosionError, FallbackWarning,
                           InputFormatError, InvalidKleeneError, InvalidNegationError, InvalidWindowError,
                           JitcepError, MissingColumnError, MissingTypeColumnError, MissingWindowError,
                           OptionError, PatternError, PatternSyntaxError, PatternValidationError, TimestampError,
                           UnknownVariableError, UnsupportedPatternError, WindowUnitError)
from jitcep.pattern import col, lit, seq, to_text, var
from jitcep.pattern.parser import parse, parse_many

EVENTS = pl.DataFrame({"type": ["A", "B", "A", "B", "C"], "ts": [1, 2, 3, 4, 5], "x": [5, 1, 7, 2, 3],
                       "s": ["p", "q", "p", "q", "r"]})
SEQ_AB = "PATTERN SEQ(A a, B b) WITHIN 10"
BIG = "9" * 25            # an integer beyond int64
HUGE = "9" * 5000         # beyond Python's int-from-text limit (4300 digits)


def compile_(pattern, **options):
    return lambda: jitcep.compile(pattern, **options)


def run_(text=SEQ_AB, events=EVENTS, *, options=None, **kwargs):
    kwargs = {"type": "type", **kwargs}
    return lambda: jitcep.compile(text, **(options or {})).run(events, **kwargs)


def where(condition: str) -> str:
    return f"PATTERN SEQ(A a, B b) WHERE {condition} WITHIN 10"


def deep_sum(n: int):
    """``a.x + 1 + 1 + ...`` (n additions) built in Python: one tree level per addition."""
    e = col("a.x")
    for _ in range(n):
        e = e + 1
    return seq(var("A", "a"), var("B", "b")).where(e > 0).within(10)


def deep_seq(n: int):
    node = var("A", "a")
    for _ in range(n):
        node = seq(node)
    return seq(var("B", "b"), node).within(10)


TOO_DEEP = f"more than {MAX_NESTING} levels"

# One list per kind of mistake; MATRIX is all of them.
MEANING = [  # syntax and meaning: the named errors of parsing and validation
    pytest.param(compile_("PATTERN A a WHERE a.x = 'abc WITHIN 5"), PatternSyntaxError, "unterminated",
                 id="unterminated string"),
    pytest.param(compile_(42), PatternError, "cannot compile a int", id="not a pattern"),
    pytest.param(lambda: parse(42), PatternError, "must be a str", id="parse a non-string"),
    pytest.param(lambda: col(42), PatternError, "must be a str", id="col of a non-string"),
    pytest.param(lambda: lit([1]), PatternValidationError, "not a literal", id="builder: list literal"),
    pytest.param(compile_(where("c.x > 1")), UnknownVariableError, "'c'", id="unknown variable"),
    pytest.param(compile_("PATTERN SEQ(A a, B a) WITHIN 10"), DuplicateVariableError, "twice",
                 id="duplicate variable"),
    pytest.param(compile_("PATTERN OR(A a, !B b) WITHIN 10"), InvalidNegationError, "OR", id="negation in OR"),
    pytest.param(compile_(where("a[1].x > 1")), InvalidKleeneError, "not a Kleene variable",
                 id="index on a single variable"),
    pytest.param(compile_("PATTERN SEQ(A a, B b) WITHIN 0"), InvalidWindowError, "> 0", id="window 0"),
    pytest.param(compile_("PATTERN SEQ(A a, B b)"), MissingWindowError, "WITHIN UNBOUNDED", id="no window"),
    pytest.param(compile_("PATTERN SEQ(A a, B b) WITHIN 10 RETURN a AS y"), PatternValidationError,
                 "whole variable", id="alias on a whole variable"),
    pytest.param(compile_("PATTERN SEQ(A a, B+ b[]) WITHIN 10 RETURN b AS y"), PatternValidationError,
                 "whole variable", id="alias on a whole Kleene variable"),
    pytest.param(compile_("PATTERN SEQ(OR(A a, B b), C c) WHERE a.x < b.x WITHIN 10"), UnsupportedPatternError,
                 "different OR branches", id="predicate across OR branches"),
    pytest.param(compile_(where("a.x > 1 OR [s]")), PatternValidationError, "top-level conjunct",
                 id="[attr] under OR"),
]
TEXT = [  # pattern text: nesting, huge numbers
    pytest.param(compile_(where("(" * 150 + "a.x > 1" + ")" * 150)), PatternSyntaxError,
                 f"{TOO_DEEP} of parentheses", id="150 nested parentheses"),
    pytest.param(compile_(where("NOT " * 3000 + "a.x > 1")), PatternSyntaxError, TOO_DEEP, id="3000 NOTs"),
    pytest.param(compile_(where("- " * 3000 + "a.x > 1")), PatternSyntaxError, TOO_DEEP,
                 id="3000 unary minus"),
    pytest.param(compile_(where("abs(" * 150 + "a.x" + ")" * 150 + " > 1")), PatternSyntaxError, TOO_DEEP,
                 id="150 nested abs"),
    pytest.param(compile_(where("a.x" + " + 1" * 3000 + " > 1")), PatternSyntaxError,
                 "group it as (a + b) + (c + d)", id="3000-term sum"),
    pytest.param(compile_(where("a.x > 1" + " AND (a.x > 1 OR (a.x > 1" * 100 + "))" * 100)),
                 PatternSyntaxError, TOO_DEEP, id="alternating AND OR"),
    pytest.param(compile_("PATTERN SEQ(B b, " + "!" * 3000 + "A a) WITHIN 10"), PatternSyntaxError, TOO_DEEP,
                 id="3000 negation marks"),
    pytest.param(compile_("PATTERN " + "SEQ(" * 3000 + "A a" + ")" * 3000 + " WITHIN 10"),
                 PatternSyntaxError, TOO_DEEP, id="3000 nested SEQs"),
    pytest.param(compile_("PATTERN SEQ(B b, " + "AND(" * 150 + "A a" + ")" * 150 + ") WITHIN 10"),
                 PatternSyntaxError, TOO_DEEP, id="150 nested ANDs"),
    pytest.param(compile_("PATTERN SEQ(" + ", ".join(f"A a{i}" for i in range(1200)) + ") WITHIN 10"),
                 PatternValidationError, f"binds 1200 variables; at most {MAX_VARIABLES}", id="1200 variables"),
    pytest.param(compile_(where(f"a.x > {HUGE}")), PatternSyntaxError, "integer literal of 5000 digits",
                 id="5000-digit literal"),
    pytest.param(compile_(f"PATTERN SEQ(A a, B b) WITHIN {HUGE}"), PatternSyntaxError, "5000 digits",
                 id="5000-digit window"),
    pytest.param(compile_(f"PATTERN SEQ(A a, B{{2,{HUGE}}} b[]) WITHIN 10"), PatternSyntaxError,
                 "5000 digits", id="5000-digit Kleene bound"),
    pytest.param(compile_("PATTERN SEQ(A a, B b) WITHIN " + "9" * 309), PatternSyntaxError, "309 digits",
                 id="309-digit window"),
    pytest.param(compile_(where(f"a.x > {BIG}")), PatternValidationError, "outside the 64-bit integer range",
                 id="literal beyond int64"),
    pytest.param(compile_(where(f"a.x IN (1, -{BIG})")), PatternValidationError, "64-bit", id="IN beyond int64"),
    pytest.param(compile_(where(f"[x = {BIG}]")), PatternValidationError, "64-bit", id="[x = beyond int64]"),
    pytest.param(compile_(f"PATTERN SEQ(A a, B{{2,{BIG}}} b[]) WITHIN 10"), InvalidKleeneError,
                 "leave the maximum out", id="Kleene bound beyond int64"),
    pytest.param(compile_(f"PATTERN SEQ(A a, B b) WITHIN {BIG} EVENTS"), InvalidWindowError, "WITHIN UNBOUNDED",
                 id="count window beyond int64"),
    pytest.param(compile_(f"PATTERN SEQ(A a, B+ b[]) WHERE b[{BIG}].x > 1 WITHIN 10"), InvalidKleeneError,
                 "member index", id="member index beyond int64"),
]
BUILT = [  # patterns built in Python
    pytest.param(compile_(deep_sum(3000)), PatternValidationError, TOO_DEEP, id="builder: 3000-term sum"),
    pytest.param(compile_(deep_seq(3000)), PatternValidationError, TOO_DEEP, id="builder: 3000 nested seq"),
    pytest.param(compile_(seq(*(var("A", f"a{i}") for i in range(1200))).within(10)), PatternValidationError,
                 "binds 1200 variables", id="builder: 1200 variables"),
    pytest.param(compile_(seq(var("A", "a"), var("B", "b")).within(10**400)), InvalidWindowError,
                 "at most about 1.8e308", id="builder: window beyond float"),
    pytest.param(lambda: to_text(deep_seq(3000).build()), PatternValidationError, "no text form",
                 id="builder: print 3000 nested seq"),
    pytest.param(compile_(seq(var("A", "a"), var("B", "b")).where(col("a.x") > lit(10**5000)).within(10)),
                 PatternValidationError, "an integer of about 5001 digits", id="builder: 5000-digit literal"),
]
OPTIONS = [  # every option value is type-checked
    pytest.param(compile_(SEQ_AB, freeze=5), OptionError, "freeze takes a list or tuple", id="freeze=5"),
    pytest.param(compile_(SEQ_AB, freeze="a"), OptionError, "freeze=('a',)", id="freeze='a'"),
    pytest.param(compile_(SEQ_AB, freeze=["a", 5]), OptionError, "non-empty strings", id="freeze=['a', 5]"),
    pytest.param(compile_(SEQ_AB, consume_types="AB"), OptionError, "consume_types=('AB',)",
                 id="consume_types='AB'"),
    pytest.param(compile_(SEQ_AB, consume_types=3), OptionError, "consume_types", id="consume_types=3"),
    pytest.param(compile_(SEQ_AB, contiguous="ab"), OptionError, "groups of variable names",
                 id="contiguous='ab'"),
    pytest.param(compile_(SEQ_AB, contiguous=("a", "b")), OptionError, "contiguous=(('a', 'b'),)",
                 id="contiguous flat"),
    pytest.param(compile_(SEQ_AB, contiguous=[{"a", "b"}]), OptionError, "is a set", id="contiguous set"),
    pytest.param(compile_(SEQ_AB, contiguous=[[]]), OptionError, "empty group", id="contiguous empty group"),
    pytest.param(compile_(SEQ_AB, max_matches=True), OptionError, "positive integer", id="max_matches=True"),
    pytest.param(compile_(SEQ_AB, max_kleene=1.5), OptionError, "positive integer", id="max_kleene=1.5"),
    pytest.param(compile_(SEQ_AB, max_partials="10"), OptionError, "positive integer", id="max_partials='10'"),
    pytest.param(compile_(SEQ_AB, max_matches=0), OptionError, "positive integer", id="max_matches=0"),
    pytest.param(compile_(SEQ_AB, order=5), OptionError, "order=5", id="order=5"),
    pytest.param(compile_(SEQ_AB, strategy=["skip_till_any_match"]), OptionError, "is not one of",
                 id="strategy list"),
    pytest.param(compile_(SEQ_AB, output=None), OptionError, "output=None", id="output=None"),
    pytest.param(compile_(SEQ_AB, kleene="greedy"), OptionError, "kleene='greedy'", id="kleene='greedy'"),
    pytest.param(compile_(SEQ_AB, kleene_window=1), OptionError, "kleene_window=1", id="kleene_window=1"),
    pytest.param(compile_(SEQ_AB, windoww=3), OptionError, "unknown option", id="unknown option"),
    pytest.param(compile_(SEQ_AB, freeze=["z"]), UnknownVariableError, "freeze", id="freeze unknown variable"),
]
RUN = [  # Query.run's keywords
    pytest.param(run_(time=5), OptionError, "time= takes a column name", id="time=5"),
    pytest.param(run_(time=None), OptionError, "time= takes a column name", id="time=None"),
    pytest.param(run_(type=["type"]), OptionError, "type= takes a column name", id="type=list"),
    pytest.param(run_(time_unit="sec"), OptionError, "time_unit='sec'", id="time_unit='sec'"),
    pytest.param(run_(partition_by=5), OptionError, "partition_by= takes a column name", id="partition_by=5"),
    pytest.param(run_(partition_by=["s", 5]), OptionError, "non-empty strings", id="partition_by=['s', 5]"),
    pytest.param(run_(shape="tall"), OptionError, "shape='tall'", id="shape='tall'"),
    pytest.param(run_(engine="turbo"), OptionError, "engine='turbo'", id="engine='turbo'"),
]
INPUT = [  # the events
    pytest.param(run_(time="when"), MissingColumnError, "when", id="missing time column"),
    pytest.param(run_(type=None), MissingTypeColumnError, "type=", id="typed pattern without type="),
    pytest.param(run_(where("a.nope > 1")), MissingColumnError, "nope", id="missing attribute"),
    pytest.param(run_(events=42), InputFormatError, "int", id="input not a table"),
    pytest.param(run_(events="/nonexistent/events.parquet"), InputFormatError, "does not exist",
                 id="input file missing"),
    pytest.param(run_(events=EVENTS.with_columns(pl.lit(None, pl.Int64).alias("ts"))), TimestampError, "null",
                 id="null timestamps"),
    pytest.param(run_(where("a.s > 1")), AttributeTypeError, "string", id="string against number"),
    pytest.param(run_(where("a.s > 1"), engine="reference"), AttributeTypeError, "str",
                 id="string against number (reference)"),
    pytest.param(run_("PATTERN SEQ(A a, B b) WITHIN 10 minutes"), WindowUnitError, "time_unit",
                 id="duration over a numeric time column"),
    pytest.param(run_(events=EVENTS.with_columns(pl.concat_list("x").alias("l")), partition_by="l"),
                 AttributeTypeError, "partition by", id="partition_by a List column"),
    pytest.param(run_(events=EVENTS.with_columns(pl.struct("x").alias("st")), partition_by="st", engine="reference"),
                 AttributeTypeError, "partition by", id="partition_by a Struct column (reference)"),
    pytest.param(run_("PATTERN AND(A a, B b) WITHIN 10", options=dict(strategy="strict_contiguity")),
                 UnsupportedPatternError, "'AND(A a, B b)' is not a SEQ", id="strict_contiguity over a top-level AND"),
    pytest.param(run_(options=dict(max_matches=1)), ExplosionError, "max_matches", id="max_matches passed"),
    pytest.param(run_(options=dict(max_matches=1), engine="reference"), ExplosionError, "max_matches",
                 id="max_matches passed (reference)"),
]
MATRIX = MEANING + TEXT + BUILT + OPTIONS + RUN + INPUT


@pytest.mark.parametrize("action, error, fragment", MATRIX)
def test_bad_input_raises_a_named_error(action, error, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        with pytest.raises(JitcepError) as info:
            action()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert fragment in str(info.value)


# --- nesting at its limit ------------------------------------------------------------------------

def _frames_in_use() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


@contextmanager
def _frames_to_spare(frames: int):
    """Let the body use only ``frames`` more Python frames, as if jitcep were called from deep code."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames_in_use() + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


# Each shape: n -> a pattern text whose nesting grows with n.
SHAPES = {
    "parentheses": lambda n: where("(" * n + "a.x > 0" + ")" * n),
    "NOT": lambda n: where("NOT " * n + "a.x > 0"),
    "AND OR": lambda n: where("".join(f"a.x {'>' if i % 2 else '<'} 0 {'AND' if i % 2 else 'OR'} ("
                                       for i in range(n)) + "b.x > 0" + ")" * n),
    "sum": lambda n: where("a.x" + " + 1" * n + " > 0"),
    "right operands": lambda n: where("a.x > " + "1 - (" * n + "b.x" + ")" * n),
    "unary minus": lambda n: where("- " * n + "a.x > 0"),
    "abs": lambda n: where("abs(" * n + "a.x" + ")" * n + " > 0"),
    "SEQ": lambda n: "PATTERN SEQ(B b, " + "SEQ(" * n + "A a" + ")" * n + ") WITHIN 10",
    "SEQ AND": lambda n: "PATTERN SEQ(B b, " + "".join("SEQ(" if i % 2 else "AND(" for i in range(n))
                         + "A a" + ")" * n + ") WITHIN 10",
    "negation": lambda n: "PATTERN SEQ(B b, " + "AND(" * n + "A a, !C c" + ")" * n + ") WITHIN 10",
    "OR": lambda n: "PATTERN SEQ(B b, " + "OR(" * n + "A a, C c" + ")" * n + ") WITHIN 10",
}


def _deepest(shape) -> int:
    """The largest n whose text parses (parsing succeeds up to some n, then fails for every larger n)."""
    lo, hi = 0, 2 * MAX_NESTING
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            parse(shape(mid))
        except PatternSyntaxError:
            hi = mid - 1
        else:
            lo = mid
    return lo


@pytest.mark.parametrize("name", SHAPES)
def test_the_deepest_pattern_of_each_shape_runs_everywhere_with_500_frames(name):
    shape = SHAPES[name]
    n = _deepest(shape)
    assert n >= MAX_NESTING - 4  # the limit is the documented one, not cut short by a shape's own levels
    with pytest.raises(PatternSyntaxError, match="nests more than"):
        parse(shape(n + 1))
    with _frames_to_spare(500), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        q = jitcep.compile(shape(n))
        assert parse(q.text()) == q.patterns[0]
        hash(q.patterns[0])
        repr(q)
        reference = q.run(EVENTS, type="type", engine="reference")
        compiled = q.run(EVENTS, type="type", engine="compiled")
    assert compiled.equals(reference)


def test_a_tree_built_in_python_is_held_to_the_same_limit():
    # WHERE is Cmp(Arith^n(a.x), 0): n + 2 levels
    at_limit = jitcep.compile(deep_sum(MAX_NESTING - 2))
    assert parse(at_limit.text()) == at_limit.patterns[0]
    with pytest.raises(PatternValidationError, match=TOO_DEEP):
        jitcep.compile(deep_sum(MAX_NESTING - 1))
    # repr of a builder or an expression wrapper says what it is, and never raises
    assert "nested more than" in repr(deep_sum(3000))
    e = col("a.x")
    for _ in range(3000):
        e = e + 1
    assert "no text form" in repr(e)


def _across(first: str, last: str, levels: int) -> str:
    """A condition ``levels`` deep relating the first and the last variable."""
    return ("".join(f"{last} - {first} {'>' if i % 2 else '<'} 0 {'AND' if i % 2 else 'OR'} ("
                    for i in range(levels)) + f"{last} > {first}" + ")" * levels)


def _chain(n: int) -> str:
    return " AND ".join(f"a{i}.x + 1 = a{i + 1}.x" for i in range(n - 1))


def _nest_alternately(n: int) -> str:
    body = "A a0"
    for i in range(1, n):
        body = f"SEQ({body}, A a{i})" if i % 2 else f"AND({body}, A a{i})"
    return body


# Each: (n, deep) -> a pattern binding n variables; with ``deep``, a condition as deep as the WHERE around
# it allows relates the first and the last, so the reference evaluator evaluates it at the bottom of
# its search, which recurses once per variable.
WIDE = {
    "SEQ": lambda n, deep: ("PATTERN SEQ(" + ", ".join(f"A a{i}" for i in range(n)) + ") WHERE " + _chain(n)
                            + (f" AND ({_across('a0.x', f'a{n - 1}.x', 94)})" if deep else "")
                            + " WITHIN UNBOUNDED"),
    "SEQ AND": lambda n, deep: (f"PATTERN {_nest_alternately(n)} WHERE {_chain(n)}"
                                + (f" AND ({_across('a0.x', f'a{n - 1}.x', 94)})" if deep else "")
                                + " WITHIN UNBOUNDED"),
    "Kleene": lambda n, deep: ("PATTERN SEQ(" + ", ".join(f"A{{1,2}} a{i}[]" for i in range(n)) + ")"
                               + (f" WHERE {_across('a0[1].x', f'a{n - 1}[1].x', 95)}" if deep else "")
                               + " WITHIN UNBOUNDED"),
}

_RUN_OF_A = pl.DataFrame({"type": ["A"] * 120, "ts": list(range(120)), "x": list(range(120))})


def _run_or_explode(q, engine):
    try:  # the search reaches its bottom either way; a cap may stop the Kleene pattern there
        return q.run(_RUN_OF_A, type="type", engine=engine)
    except ExplosionError:
        return None


@pytest.mark.parametrize("name", WIDE)
def test_the_widest_pattern_runs_everywhere_with_650_frames(name):
    make = WIDE[name]
    with pytest.raises(PatternValidationError, match=f"binds {MAX_VARIABLES + 1} variables"):
        jitcep.compile(make(MAX_VARIABLES + 1, False))
    options = dict(max_matches=100, max_kleene=100)
    with _frames_to_spare(650), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        deep = jitcep.compile(make(MAX_VARIABLES, True), **options)
        assert parse(deep.text()) == deep.patterns[0]
        reference = _run_or_explode(deep, "reference")
        # the compiled engine plans one level per variable; a deep condition costs it no more frames
        # (test_the_deepest_pattern_...) but a long Numba compile, so it runs the pattern without one
        flat = jitcep.compile(make(MAX_VARIABLES, False), **options)
        compiled, flat_reference = _run_or_explode(flat, "compiled"), _run_or_explode(flat, "reference")
    if name != "Kleene":
        assert reference.height > 0 and compiled.equals(flat_reference) and compiled.equals(reference)


def test_generated_predicate_code_assigns_every_name_once():
    # Numba rebuilds SSA form for a name assigned twice by recursing through the blocks between the
    # assignments: with a deep predicate after others, deeper than Python's stack
    import ast

    from jitcep.codegen.predicates import ColumnSpec, generate_source

    preds = [parse(where(c)).where for c in ("a.x < b.x", "a.x + 1 > 2 OR b.x / 2 < a.x", "NOT a.x = 1")]
    source, _, _ = generate_source(preds, {"x": ColumnSpec("x", "int", True)})
    assigned = [n.id for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    assert len(assigned) > 10 and len(assigned) == len(set(assigned))


def test_the_longest_integer_literal_is_a_window_both_engines_run(engine):
    # every integer the lexer accepts converts to a finite float: no OverflowError later
    from jitcep.pattern.lexer import _MAX_INT_DIGITS

    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN " + "9" * _MAX_INT_DIGITS)
    assert q.run(EVENTS, type="type", engine=engine).height == jitcep.compile(
        "PATTERN SEQ(A a, B b) WITHIN UNBOUNDED").run(EVENTS, type="type", engine=engine).height


# --- NUL in names ----------------------------------------------------------------------------------

def _without_nul(value):
    if isinstance(value, dict):
        return {k.replace("\0", ""): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def test_nul_in_column_and_variable_names_is_read_and_written(engine):
    # Arrow's C schema holds names as C strings, so Polars panics exporting a name with a NUL in it:
    # jitcep never exports the names it reads (String attributes, keys) or writes (list variables' structs)
    plain = pl.DataFrame({"type": ["A", "B", "B", "A", "B"], "ts": [1, 2, 3, 4, 5],
                          "st": ["p", "q", "p", "p", "q"], "k": ["u", "u", "v", "v", "v"]})
    nul = plain.rename({"type": "ty\0pe", "ts": "t\0s", "st": "s\0t", "k": "k\0"})
    text = ("PATTERN SEQ(A `a\0`, B+ `b\0`[]) WHERE [`k\0`] AND `a\0`.`s\0t` = 'p' AND `b\0`.`s\0t` = 'q' "
            "WITHIN 10 RETURN `a\0`, `b\0`")
    got = jitcep.compile(text).run(nul, time="t\0s", type="ty\0pe", engine=engine)
    want = jitcep.compile(text.replace("\0", "")).run(plain, type="type", engine=engine)
    assert want.height > 0
    assert _without_nul(got.to_dicts()) == want.to_dicts()
    by_key = jitcep.compile(SEQ_AB).run(nul, time="t\0s", type="ty\0pe", partition_by="k\0", engine=engine)
    assert by_key.height == jitcep.compile(SEQ_AB).run(plain, type="type", partition_by="k", engine=engine).height


# --- hypothesis: nothing but JitcepError ---------------------------------------------------------------

_TINY = pl.DataFrame({"type": ["A", "B", "C", "A"], "ts": [1, 2, 3, 4], "x": [1, 2, 3, 4],
                      "s": ["p", "q", "p", "q"]})


def _compiles_or_names_the_error(text: str) -> None:
    try:
        q = jitcep.compile(text, max_matches=1000, max_partials=100_000, max_kleene=1000)
    except JitcepError as e:
        assert str(e)
        return
    assert parse_many(q.text()) == list(q.patterns)
    try:
        q.run(_TINY, type="type", engine="reference")
    except JitcepError as e:
        assert str(e)


_EXPR_WRAPS = ["({})", "NOT {}", "- {}", "abs({})", "{} + 1", "2 * ({})", "1 - ({})", "a.x > 0 AND ({})",
               "({}) OR b.x < 0", "{} = TRUE", "({}) IS NULL"]
_STRUCT_WRAPS = ["SEQ({})", "AND(B b{i}, {})", "OR({}, C c{i})", "SEQ({}, !C n{i})", "!{}", "KL({})",
                 "NOT({})", "SEQ(A a{i}+ , {})"]


@st.composite
def _deep_texts(draw):
    n = draw(st.integers(0, 3 * MAX_NESTING))
    expr = "a.x > 0"
    for wrap in draw(st.lists(st.sampled_from(_EXPR_WRAPS), min_size=n, max_size=n)):
        expr = wrap.format(expr)
    m = draw(st.integers(0, 3 * MAX_NESTING))
    body = "SEQ(A a, B b)"
    for i, wrap in enumerate(draw(st.lists(st.sampled_from(_STRUCT_WRAPS), min_size=m, max_size=m))):
        body = wrap.replace("{i}", str(i)).format(body)
    return f"PATTERN {body} WHERE {expr} WITHIN 10"


_DIGITS = st.integers(1, 6000).map(lambda n: "9" * n) | st.integers(-2**70, 2**70).map(str)
_NUMBER_SLOTS = ["a.x > {}", "a.x IN (1, {})", "[x = {}]", "a.x > {}.5", "a.x < 1e{}", "b[{}].x > 0",
                 "a.x * {} > -{}"]


@st.composite
def _huge_literal_texts(draw):
    digits = draw(_DIGITS)
    slot = draw(st.sampled_from(_NUMBER_SLOTS + ["WINDOW", "KLEENE", "EVENTS"]))
    if slot == "WINDOW":
        return f"PATTERN SEQ(A a, B+ b[]) WITHIN {digits}"
    if slot == "KLEENE":
        return f"PATTERN SEQ(A a, B{{1,{digits}}} b[]) WITHIN 10"
    if slot == "EVENTS":
        return f"PATTERN SEQ(A a, B+ b[]) WITHIN {digits} EVENTS"
    return f"PATTERN SEQ(A a, B+ b[]) WHERE {slot.format(digits, digits)} WITHIN 10"


_PIECES = ["PATTERN ", "SEQ(", "AND(", "OR(", "KL(", "ANY(", "NOT(", "!", "~", "A ", "B ", "a", "b", ", ", ")",
           "(", "[", "]", "{", "}", "+", "*", "-", "/", ".", "x", "i", "1", "2.5", "LEN", " WHERE ", " WITHIN ",
           " RETURN ", " EVENTS", " min", "'s'", "`q`", ";", " = ", " < ", " IN ", " IS ", " NULL", " AS ",
           "count(", "avg(", "abs(", "\n", "--x\n", "'", '"', "`", "@", "\0", "é", HUGE, BIG, "NOT ", " AND "]

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_deep_texts())
def test_deeply_nested_text_compiles_or_raises_a_jitcep_error(text):
    _compiles_or_names_the_error(text)


@_SETTINGS
@given(_huge_literal_texts())
def test_huge_literals_compile_or_raise_a_jitcep_error(text):
    _compiles_or_names_the_error(text)


@_SETTINGS
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(max_size=200)
       | st.text(max_size=100).map(lambda t: "PATTERN " + t))
def test_garbage_text_compiles_or_raises_a_jitcep_error(text):
    _compiles_or_names_the_error(text)


# --- what is accepted is stored in one form ---------------------------------------------------------------

def test_option_values_are_stored_in_one_form():
    import numpy as np

    opts = jitcep.compile(SEQ_AB, consume_types={"B", "A"}, contiguous=[["a", "b"]], freeze=["a"],
                          max_matches=np.int64(7)).options
    assert opts.consume_types == ("A", "B") and opts.contiguous == (("a", "b"),) and opts.freeze == ("a",)
    assert type(opts.max_matches) is int and opts.max_matches == 7
    assert jitcep.compile(SEQ_AB, consume_types=np.array(["A"])).options.consume_types == ("A",)
    # partition_by may be any iterable of names: it is read once, before the engines see it
    got = jitcep.compile(SEQ_AB).run(EVENTS, type="type", partition_by=(c for c in ["s"]))
    assert got.height == jitcep.compile(SEQ_AB).run(EVENTS, type="type", partition_by=["s"]).height
