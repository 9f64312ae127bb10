"""The shipped pattern generator's corpus on both engines: same matches, same errors, no unnamed fallback.

Patterns come from :func:`jitcep.testing.patterns.patterns` (every node kind: SEQ, AND, OR, ANY,
negation, Kleene closures and groups, every predicate and RETURN form, time / count / unbounded
windows) over the columns of :func:`jitcep.testing.streams.event_frames` streams (ties, nulls, input
out of time order).  Each pair is run by the reference evaluator (the semantics) and by the compiled
engine with ``FallbackWarning`` raised as an error.  Per pair:

- both return a frame: the frames are equal, row order and dtypes included;
- one raises a jitcep error: the other raises the same class (bad input is refused alike);
- the compiled engine falls back: its reason must be one of :data:`KNOWN_GAPS`, the forms not
  compiled yet.  The list is empty (issue 15's bar): any fallback fails the test.

Runs take small caps (:data:`CAPS`): a drawn pattern can be exponential (an AND group without an
upper bound has 2^n lists of n iterations), and the engines count partial work differently, so a pair
where either engine stops at a cap (ExplosionError) is not compared; the caps have their own tests.
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

import jitcep
from jitcep.errors import ExplosionError, FallbackWarning, JitcepError
from jitcep.pattern import to_text
from jitcep.testing.patterns import TYPE_NAMES, patterns
from jitcep.testing.streams import event_frames
from polars.testing import assert_frame_equal

#: the streams' attribute columns (x int, y float, s string, k int key, ts the time)
ATTRS = ("x", "y", "s", "k", "ts")
#: resource caps for every run (docs/semantics.md, caps): small, so that an exponential pattern stops early
CAPS = dict(max_matches=20_000, max_kleene=2_000, max_partials=50_000, max_memory=256 << 20)
#: fallback reasons still expected (regular expressions over the FallbackWarning's text)
KNOWN_GAPS: tuple[str, ...] = ()  # issue 15's bar: every form compiled


def _outcome(pattern, df, engine: str):
    """The frame a run returns, or the jitcep error / FallbackWarning it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", FallbackWarning)
            return jitcep.compile(pattern, **CAPS).run(df, time="ts", type="type", engine=engine, time_unit="s")
    except (JitcepError, FallbackWarning) as e:
        return e


def _check(pattern, df) -> None:
    ref = _outcome(pattern, df, "reference")
    com = _outcome(pattern, df, "compiled")
    text = to_text(pattern)
    if isinstance(com, FallbackWarning):
        reason = str(com)
        assert any(re.search(gap, reason) for gap in KNOWN_GAPS), f"new fallback reason for {text!r}: {reason}"
        return
    if isinstance(ref, ExplosionError) or isinstance(com, ExplosionError):
        return  # a cap stopped one of them: nothing to compare (see the module docstring)
    if isinstance(ref, Exception) or isinstance(com, Exception):
        assert type(ref) is type(com), f"{text!r}: reference gave {ref!r}, compiled {com!r}"
        return
    assert_frame_equal(com, ref, check_row_order=True, check_dtypes=True)


_CORPUS = dict(suppress_health_check=list(HealthCheck), deadline=None, database=None)


@settings(max_examples=60, **_CORPUS)
@given(patterns(attrs=ATTRS), event_frames(types=TYPE_NAMES[:4], max_size=10))
def test_generated_corpus_agrees_on_both_engines(pattern, df):
    _check(pattern, df)


@pytest.mark.slow
@settings(max_examples=1500, **_CORPUS)
@given(patterns(attrs=ATTRS), event_frames(types=TYPE_NAMES[:4], max_size=12))
def test_generated_corpus_agrees_on_both_engines_slow(pattern, df):
    _check(pattern, df)
