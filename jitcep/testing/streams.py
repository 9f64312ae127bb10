"""Hypothesis strategies for event streams (Polars DataFrames), for users' and jitcep's own tests.

>>> from hypothesis import given
>>> from jitcep.testing.streams import event_frames
>>> @given(event_frames(max_size=20))
... def test_my_pattern(df): ...

A stream has a ``type`` column (from ``types``), an integer time column ``ts``
with duplicate timestamps likely (drawn as small non-negative steps, then
optionally shuffled so the input is not sorted), an integer key ``k`` and the
attributes ``x`` (int), ``y`` (float) and ``s`` (string), each with nulls at
``null_rate``.  Row order is the input order the output's ``row`` refers to.

Random streams rarely contain a long pattern's types in its order, so a
differential test on them mostly compares empty results.  ``motif`` plants
one: in about half of the streams long enough, the rows at randomly chosen
time ranks get the motif's types in time order (an element is a tuple of
types to choose from, or None for any), and with ``motif_key`` they share
one ``k`` value, so ``[k]`` can hold across many variables.
"""

from __future__ import annotations

import polars as pl
from hypothesis import strategies as st

DEFAULT_TYPES = ("A", "B", "C")
DEFAULT_STRINGS = ("p", "q", "r")


@st.composite
def event_frames(draw, *, types=DEFAULT_TYPES, n_keys: int = 3, strings=DEFAULT_STRINGS,
                 min_size: int = 0, max_size: int = 12, max_step: int = 2, null_rate: float = 0.15,
                 shuffle: bool = True, null_types: bool = False, motif=(),
                 motif_key: bool = False) -> pl.DataFrame:
    """A small event stream as a Polars DataFrame (see the module docstring for its columns)."""
    n = draw(st.integers(min_size, max_size))
    steps = draw(st.lists(st.integers(0, max_step), min_size=n, max_size=n))
    ts, t = [], 0
    for s in steps:
        t += s
        ts.append(t)
    if shuffle and n > 1 and draw(st.booleans()):
        perm = draw(st.permutations(range(n)))
        ts = [ts[i] for i in perm]

    # each column draws its nulls independently; about null_rate of the values are null
    def column(base):
        vals = draw(st.lists(base, min_size=n, max_size=n))
        mask = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
        return [None if m < null_rate else v for v, m in zip(vals, mask)]

    type_col = draw(st.lists(st.sampled_from(types), min_size=n, max_size=n))
    if null_types:
        mask = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
        type_col = [None if m < null_rate else v for v, m in zip(type_col, mask)]
    k_col = column(st.integers(0, n_keys - 1))
    if motif and n >= len(motif) and draw(st.booleans()):
        picked = draw(st.lists(st.integers(0, n - 1), min_size=len(motif), max_size=len(motif), unique=True))
        by_time = sorted(picked, key=lambda i: (ts[i], i))  # ties: rows in input order
        key = draw(st.integers(0, n_keys - 1))
        for row, choice in zip(by_time, motif):
            if choice is not None:
                type_col[row] = draw(st.sampled_from(choice))
            if motif_key:
                k_col[row] = key
    return pl.DataFrame(
        {
            "type": type_col,
            "ts": ts,
            "k": k_col,
            "x": column(st.integers(-3, 3)),
            "y": column(st.sampled_from([-1.5, 0.0, 0.5, 1.0, 2.5])),
            "s": column(st.sampled_from(strings)),
        },
        schema={"type": pl.String, "ts": pl.Int64, "k": pl.Int64, "x": pl.Int64, "y": pl.Float64,
                "s": pl.String},
    )
