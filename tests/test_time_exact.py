"""Time is exact: window tests hold for any int64 timestamps and any window (docs/semantics.md §2).

Two int64 timestamps can be up to 2**64 - 1 apart, more than int64 holds, so a
difference formed in int64 wraps.  The expected matches here come from small
oracles written out below with Python ints (which never wrap), from the
definitions of §2 (window), §6 (Kleene ranges) and §7 (negation ranges), and
from hand-enumerated cases; timestamps are drawn near int64's minimum and
maximum, windows near int64's maximum and past it.  Every case runs on both
engines.
"""

from __future__ import annotations

import datetime as dt
import itertools

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

from semantic_helpers import M, matches, use_engine

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def int64_times():
    """Timestamps near int64's ends, near 0, and anywhere in int64."""
    return st.one_of(st.integers(I64_MIN, I64_MIN + 3), st.integers(I64_MAX - 3, I64_MAX), st.integers(-3, 3),
                     st.integers(I64_MIN, I64_MAX))


def windows():
    """Windows small, around int64's maximum, around the widest int64 difference (2**64 - 1), anywhere."""
    return st.one_of(st.integers(1, 3), st.integers(2**63 - 3, 2**63 + 3), st.integers(2**64 - 3, 2**64 + 3),
                     st.integers(1, 2**64 + 3))


# --- both engines against an oracle over Python ints -------------------------------------------------


def _stream(rows):
    """(input rows in position order, type of each row, ts of each row as Python ints)."""
    order = sorted(range(len(rows)), key=lambda r: (rows[r][1], r))  # stable sort by time (§1)
    return order, [t for t, _ in rows], [ts for _, ts in rows]


def oracle(kind: str, rows, W: int):
    """The matches of pattern ``kind`` (:data:`PATTERNS`) over ``rows`` [(type, ts)], as the tuples
    :func:`semantic_helpers.matches` gives: input rows per positive variable, a tuple for a list."""
    order, typ, ts = _stream(rows)
    pos = {r: p for p, r in enumerate(order)}
    of = {t: [r for r in order if typ[r] == t] for t in "ABN"}  # rows of each type, in position order
    fits = lambda *rs: max(ts[r] for r in rs) - min(ts[r] for r in rs) <= W  # noqa: E731 (§2)
    pairs = [(a, b) for a in of["A"] for b in of["B"] if pos[a] < pos[b] and fits(a, b)]
    out = []
    if kind == "seq":
        out = pairs
    elif kind == "and":
        out = [(a, b) for a in of["A"] for b in of["B"] if fits(a, b)]
    elif kind == "seq3":
        out = [(a, b, c) for a, b in pairs for c in of["B"] if pos[c] > pos[b] and fits(a, b, c)]
    elif kind == "neg_start":  # §7: no N before a within the window measured from the last event
        out = [(a, b) for a, b in pairs if not any(pos[e] < pos[a] and ts[b] - ts[e] <= W for e in of["N"])]
    elif kind == "neg_end":  # no N after b within the window measured from the first event
        out = [(a, b) for a, b in pairs if not any(pos[e] > pos[b] and ts[e] - ts[a] <= W for e in of["N"])]
    elif kind == "kleene_end":  # §6.1: every non-empty subsequence of the Bs after a, all within W of a
        for a in of["A"]:
            bs = [b for b in of["B"] if pos[b] > pos[a] and fits(a, b)]
            out += [(a, lst) for k in range(1, len(bs) + 1) for lst in itertools.combinations(bs, k)]
    elif kind == "kleene_start":  # the Bs before a, all within W of a
        for a in of["A"]:
            bs = [b for b in of["B"] if pos[b] < pos[a] and fits(a, b)]
            out += [(lst, a) for k in range(1, len(bs) + 1) for lst in itertools.combinations(bs, k)]
    elif kind == "kleene_maximal":  # §6.2: every B strictly between a and n, one list
        for a in of["A"]:
            for n in of["N"]:
                bs = tuple(b for b in of["B"] if pos[a] < pos[b] < pos[n])
                if pos[a] < pos[n] and bs and fits(a, n):
                    out.append((a, bs, n))
    return M(*out)


PATTERNS = {
    "seq": ("PATTERN SEQ(A a, B b) WITHIN {W}", {}),
    "and": ("PATTERN AND(A a, B b) WITHIN {W}", {}),
    "seq3": ("PATTERN SEQ(A a, B b, B c) WITHIN {W}", {}),
    "neg_start": ("PATTERN SEQ(!N n, A a, B b) WITHIN {W}", {}),
    "neg_end": ("PATTERN SEQ(A a, B b, !N n) WITHIN {W}", {}),
    "kleene_end": ("PATTERN SEQ(A a, B+ b[]) WITHIN {W}", {}),
    "kleene_start": ("PATTERN SEQ(B+ b[], A a) WITHIN {W}", {}),
    "kleene_maximal": ("PATTERN SEQ(A a, B+ b[], N n) WITHIN {W}", {"kleene": "maximal"}),
}


def _frame(rows) -> pl.DataFrame:
    return pl.DataFrame({"type": [t for t, _ in rows], "ts": [ts for _, ts in rows]},
                        schema={"type": pl.String, "ts": pl.Int64})


@pytest.mark.parametrize("kind", sorted(PATTERNS))
def test_windows_at_int64_extremes_equal_the_python_int_oracle(kind, engine):
    text, options = PATTERNS[kind]

    @settings(max_examples=40, deadline=None, database=None)
    @given(st.lists(st.tuples(st.sampled_from("ABN"), int64_times()), min_size=1, max_size=7), windows())
    def check(rows, W):
        with use_engine(engine):
            assert matches(text.format(W=W), _frame(rows), **options) == oracle(kind, rows, W)

    check()


# --- hand-enumerated cases ------------------------------------------------------------------------------


def test_datetimes_four_hundred_years_apart_are_not_within_an_hour(engine):
    # Datetime[ns] at 1800 and 2200 differ by ~1.26e19 ns, more than int64 holds
    df = pl.DataFrame({"type": ["A", "B", "B"],
                       "ts": [dt.datetime(1800, 1, 1), dt.datetime(2200, 1, 1), dt.datetime(1800, 1, 1, 0, 30)]},
                      schema={"type": pl.String, "ts": pl.Datetime("ns")})
    with use_engine(engine):
        # only B2, half an hour after A0, is within the hour
        assert matches("PATTERN SEQ(A a, B b) WITHIN 1 hour", df) == M((0, 2))
        assert matches("PATTERN AND(A a, B b) WITHIN 1 hour", df) == M((0, 2))
        # the negation at the start looks back an hour from b: A0 is not within an hour of B1
        assert matches("PATTERN SEQ(!A n, B b) WITHIN 1 hour", df) == M((1,))


def test_the_int64_extremes_are_the_widest_pair(engine):
    df = pl.DataFrame({"type": ["A", "B"], "ts": [I64_MIN, I64_MAX]}, schema={"type": pl.String, "ts": pl.Int64})
    with use_engine(engine):
        # the span is exactly 2**64 - 1: a window of that size holds it, one less does not
        assert matches("PATTERN SEQ(A a, B b) WITHIN 1", df) == M()
        assert matches(f"PATTERN SEQ(A a, B b) WITHIN {2**63 - 1}", df) == M()
        assert matches(f"PATTERN SEQ(A a, B b) WITHIN {2**64 - 2}", df) == M()
        assert matches(f"PATTERN SEQ(A a, B b) WITHIN {2**64 - 1}", df) == M((0, 1))
        assert matches(f"PATTERN SEQ(A a, B b) WITHIN {2**70}", df) == M((0, 1))
        assert matches("PATTERN SEQ(A a, B b) WITHIN UNBOUNDED", df) == M((0, 1))
        assert matches("PATTERN AND(B b, A a) WITHIN 10", df) == M()


def test_negation_far_in_the_past_does_not_kill(engine):
    # N at int64's minimum is 2**64 - 2 before b, far outside WITHIN 10 measured back from b
    df = pl.DataFrame({"type": ["N", "A", "B"], "ts": [I64_MIN, I64_MAX - 1, I64_MAX]},
                      schema={"type": pl.String, "ts": pl.Int64})
    with use_engine(engine):
        assert matches("PATTERN SEQ(!N n, A a, B b) WITHIN 10", df) == M((1, 2))
        assert matches("PATTERN SEQ(A a, B+ b[]) WITHIN 10", df) == M((1, (2,)))
        assert matches("PATTERN SEQ(N n, B+ b[]) WITHIN 10", df) == M()
