"""Differential: time columns at their edges under every selection strategy, compiled engine == reference.

tests/test_time_exact.py checks §2's exact window arithmetic near int64's ends
under skip-till-any-match against oracles of its own.  Here the NFA^b
strategies (§8: the window is part of every begin/take edge, ``strict_ts``
compares the previous selected event's time), negation (§7) and output
policies (§9) read the same times: an Int64 time column ending at int64's
maximum or starting at its minimum (with windows of 1, of int64's maximum and
of 2^64 - 1, which admits every pair), a Date column (windows of 23 hours,
1 day, 1 ns and 100,000 days) and a zoned Datetime[ns] column crossing a
daylight-saving change (12 hours, 11 hours, 1 day), each with ties, and
``WITHIN n EVENTS`` at 1 to 3, sometimes split by ``partition_by``.  The
compiled engine runs one and two threads, sometimes with its chunk and thread
constants patched tiny, and every frame must equal the reference's row for row.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from test_compiled_edge_keys import STRATEGIES, _outcome

N_EXAMPLES = 30
SLOW_EXAMPLES = int(os.environ.get("JITCEP_SLOW_EDGE_TIMES", "500"))
I64_MAX = 2**63 - 1
HITS = [0, 0]  # (cases compared, of them with a match)


def _times(kind: str, offsets: list[int]) -> pl.Series:
    """The time column of ``kind`` for nondecreasing small ``offsets``."""
    if kind == "int_max":  # the last events at int64's maximum
        return pl.Series([I64_MAX - offsets[-1] + o for o in offsets], dtype=pl.Int64)
    if kind == "int_min":
        return pl.Series([-I64_MAX - 1 + o for o in offsets], dtype=pl.Int64)
    if kind == "date":
        return pl.Series([dt.date(2020, 3, 7) + dt.timedelta(days=o) for o in offsets], dtype=pl.Date)
    # 12 hours apart across New York's change to summer time (2020-03-08 02:00): one step there is 11 hours
    naive = pl.Series([dt.datetime(2020, 3, 7, 12) + dt.timedelta(hours=12 * o) for o in offsets],
                      dtype=pl.Datetime("ns"))
    return naive.dt.replace_time_zone("America/New_York")


WINDOWS = {"int_max": ("1", "9223372036854775807", "18446744073709551615", "2 EVENTS"),
           "int_min": ("1", "3", "9223372036854775807", "1 EVENTS"),
           "date": ("1 days", "23 hours", "1 nanoseconds", "100000 days", "2 EVENTS"),
           "zoned": ("12 hours", "11 hours", "1 days", "3 EVENTS")}
TEXTS = ("PATTERN SEQ(A a, B b) WITHIN {w}",
         "PATTERN SEQ(A a, NOT(C n), B b) WITHIN {w}",
         "PATTERN SEQ(A a, B+ b[], C c) WITHIN {w}",
         "PATTERN SEQ(A a, B b, C c) WHERE [k] WITHIN {w}",
         "PATTERN SEQ(A a, B b) WHERE [k] WITHIN {w}")


@st.composite
def cases(draw):
    kind = draw(st.sampled_from(sorted(WINDOWS)))
    text = draw(st.sampled_from(TEXTS)).format(w=draw(st.sampled_from(WINDOWS[kind])))
    strategy = draw(st.sampled_from(STRATEGIES))
    if strategy == "partition_contiguity" and "[k]" not in text:
        strategy = "skip_till_any_match"
    opts = dict(strategy=strategy, output=draw(st.sampled_from(("all", "non_overlapping", "match_next"))),
                order=draw(st.sampled_from(("position", "strict_ts", "nondecreasing_ts"))),
                max_matches=20_000, max_partials=200_000)
    rng = draw(st.randoms(use_true_random=False))  # varied rows (Hypothesis' own draws favour repeats)
    n = rng.randint(4, 16)
    offsets = list(itertools.accumulate(rng.choice([0, 0, 1, 2]) for _ in range(n)))
    df = pl.DataFrame({"type": [rng.choice("AABBC") for _ in range(n)], "t": _times(kind, offsets),
                       "k": pl.Series([rng.choice([1, 1, 2, None]) for _ in range(n)], dtype=pl.Int64)})
    kw = {"time": "t", **({"time_unit": "s"} if kind.startswith("int") else {})}
    if draw(st.integers(0, 3)) == 0:
        kw["partition_by"] = "k"
    return text, opts, kw, draw(st.booleans()), df


def edge_times_agree(case) -> None:
    text, opts, kw, tiny, df = case
    ref = _outcome(text, opts, df, kw, engine="reference")
    for threads in (1, 2):
        got = _outcome(text, opts, df, kw, engine="compiled", planner="trivial", threads=threads, tiny=tiny)
        if ref is not None and got is not None:
            assert got == ref, f"{text}\n{opts} {kw} threads={threads} tiny={tiny}\n{df}"
    if isinstance(ref, list):
        HITS[0] += 1
        HITS[1] += len(ref) > 1


@settings(max_examples=N_EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_edge_time_columns_under_strategies_compiled_equals_reference(case):
    edge_times_agree(case)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_edge_time_columns_under_strategies_compiled_equals_reference_slow(case):
    edge_times_agree(case)


def test_edge_time_columns_compared_and_matched():
    """The draws above are not vacuous: most run, and the reference matches on a share of them."""
    if not HITS[0]:
        pytest.skip("the edge-time test did not run in this session")
    assert HITS[0] >= 0.6 * N_EXAMPLES and HITS[1] >= 0.2 * HITS[0], HITS


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("strategy", ["skip_till_any_match", "skip_till_next_match", "strict_contiguity"])
def test_a_day_across_summer_time_is_23_hours_of_instants(engine, strategy):
    # A at 2020-03-07 12:00 EST, B at 2020-03-08 12:00 EDT: 23 hours apart as instants (§2: a window
    # bounds the difference of the instants, never the calendar)
    import jitcep

    t = pl.Series([dt.datetime(2020, 3, 7, 12), dt.datetime(2020, 3, 8, 12)], dtype=pl.Datetime("ns"))
    df = pl.DataFrame({"type": ["A", "B"], "t": t.dt.replace_time_zone("America/New_York")})
    for window, n in (("23 hours", 1), ("22 hours", 0), ("1 days", 1)):
        q = jitcep.compile(f"PATTERN SEQ(A a, B b) WITHIN {window}", strategy=strategy)
        assert q.run(df, time="t", type="type", engine=engine).height == n, window
