"""Bad input: every mistake a user can make ends in a named JitcepError saying what is wrong and how to fix
it, before anything is written (DESIGN.md section 5).

- ``MATRIX``: one row per mistake, (what the user does, the error class, a fragment of the message).  It
  grows with each issue; every row checks the exact class and that the message names the problem.
- NUL in column and variable names is read and written like any other name.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import jitcep
from jitcep.errors import (AttributeTypeError, DuplicateVariableError, ExplosionError, FallbackWarning,
                           InputFormatError, InvalidKleeneError, InvalidNegationError, InvalidWindowError,
                           JitcepError, MissingColumnError, MissingWindowError, OptionError, PatternError,
                           PatternSyntaxError, PatternValidationError, TimestampError, UnknownVariableError,
                           UnsupportedPatternError, WindowUnitError)
from jitcep.pattern import lit

EVENTS = pl.DataFrame({"type": ["A", "B", "A", "B", "C"], "ts": [1, 2, 3, 4, 5], "x": [5, 1, 7, 2, 3],
                       "s": ["p", "q", "p", "q", "r"]})
SEQ_AB = "PATTERN SEQ(A a, B b) WITHIN 10"


def compile_(pattern, **options):
    return lambda: jitcep.compile(pattern, **options)


def run_(text=SEQ_AB, events=EVENTS, *, options=None, **kwargs):
    kwargs = {"type": "type", **kwargs}
    return lambda: jitcep.compile(text, **(options or {})).run(events, **kwargs)


def where(condition: str) -> str:
    return f"PATTERN SEQ(A a, B b) WHERE {condition} WITHIN 10"


# One list per kind of mistake; MATRIX is all of them.
MEANING = [  # syntax and meaning: the named errors of parsing and validation
    pytest.param(compile_("PATTERN A a WHERE a.x = 'abc WITHIN 5"), PatternSyntaxError, "unterminated",
                 id="unterminated string"),
    pytest.param(compile_(42), PatternError, "cannot compile a int", id="not a pattern"),
    pytest.param(lambda: lit([1]), PatternValidationError, "not a literal", id="builder: list literal"),
    pytest.param(compile_(where("c.x > 1")), UnknownVariableError, "'c'", id="unknown variable"),
    pytest.param(compile_("PATTERN SEQ(A a, B a) WITHIN 10"), DuplicateVariableError, "twice",
                 id="duplicate variable"),
    pytest.param(compile_("PATTERN OR(A a, !B b) WITHIN 10"), InvalidNegationError, "OR", id="negation in OR"),
    pytest.param(compile_(where("a[1].x > 1")), InvalidKleeneError, "not a Kleene variable",
                 id="index on a single variable"),
    pytest.param(compile_("PATTERN SEQ(A a, B b) WITHIN 0"), InvalidWindowError, "> 0", id="window 0"),
    pytest.param(compile_("PATTERN SEQ(A a, B b)"), MissingWindowError, "WITHIN UNBOUNDED", id="no window"),
    pytest.param(compile_("PATTERN SEQ(OR(A a, B b), C c) WHERE a.x < b.x WITHIN 10"), UnsupportedPatternError,
                 "different OR branches", id="predicate across OR branches"),
    pytest.param(compile_(where("a.x > 1 OR [s]")), PatternValidationError, "top-level conjunct",
                 id="[attr] under OR"),
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
    pytest.param(run_(options=dict(max_matches=1)), ExplosionError, "max_matches", id="max_matches passed"),
    pytest.param(run_(options=dict(max_matches=1), engine="reference"), ExplosionError, "max_matches",
                 id="max_matches passed (reference)"),
]
MATRIX = MEANING + OPTIONS + RUN + INPUT


@pytest.mark.parametrize("action, error, fragment", MATRIX)
def test_bad_input_raises_a_named_error(action, error, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        with pytest.raises(JitcepError) as info:
            action()
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert fragment in str(info.value)


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
