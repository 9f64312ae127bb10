"""RETURN integer arithmetic and sums over 128-bit and UInt64 columns (semantics section 4: exact, NULL
outside int64; jitcep.output's ``_exact_int`` and ``_wide_sum``, which compute in Polars' wrapping Int128
and let the float64 result say where the wrapped one may be off): every pair of values at the edges of
int64, 2^64, 2^126 and Int128 / UInt128, on both engines, against Python's integers."""

from __future__ import annotations

import itertools

import polars as pl
import pytest

import jitcep

_INT64 = (-(2**63), 2**63 - 1)

# the edges of each dtype's values and of the float64 check's 2^126 bound
EDGES = {
    pl.Int128: [0, 1, -1, 2**62, 3 * 2**62, -3 * 2**62, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64 - 1, 2**64,
                -(2**64), 2**100, 2**126 - 1, 2**126, -(2**126), 2**127 - 1, -(2**127)],
    pl.UInt128: [0, 1, 7, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**126, 2**127 - 1, 2**127, 2**128 - 1],
    pl.UInt64: [0, 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1],
}


def _exact(v):
    return v if v is not None and _INT64[0] <= v <= _INT64[1] else None


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("dtype", sorted(EDGES, key=str))
def test_integer_arithmetic_over_every_pair_of_edge_values_is_exact_or_null(dtype, engine):
    pairs = list(itertools.product(EDGES[dtype], repeat=2))
    df = pl.DataFrame({"type": ["A", "B"] * len(pairs), "ts": list(range(2 * len(pairs))),
                       "m": pl.Series([v for pair in pairs for v in pair], dtype=dtype)})
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 1 RETURN a.m + b.m AS s, a.m - b.m AS d, a.m * b.m AS p, "
                       "-a.m AS n, abs(b.m) AS ab, a.m + b.m - a.m AS t, b.m * 2 - 1 AS l")
    out = q.run(df, type="type", engine=engine)
    assert out.height == len(pairs)
    for r, (a, b) in zip(out.iter_rows(named=True), pairs):
        s = _exact(a + b)
        want = dict(s=s, d=_exact(a - b), p=_exact(a * b), n=_exact(-a), ab=_exact(abs(b)),
                    t=None if s is None else _exact(s - a), l=None if _exact(b * 2) is None else _exact(b * 2 - 1))
        assert {k: r[k] for k in want} == want, (a, b)


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("dtype", sorted(EDGES, key=str))
def test_sums_of_every_sublist_of_edge_values_are_exact_or_null(dtype, engine):
    # per key: an A, up to five B's, a C; SEQ(A a, B+ b[], C c) lists every non-empty subset of the B's, in
    # order, so one run sums each subset of each group's values
    edges = EDGES[dtype]
    groups = [edges[k:k + 5] for k in range(0, len(edges), 3)] + [[edges[-1]] * 4, [edges[-1], edges[-2]] * 2]
    types, keys, values = [], [], []
    for g, ms in enumerate(groups):
        types += ["A"] + ["B"] * len(ms) + ["C"]
        keys += [g] * (len(ms) + 2)
        values += [0] + ms + [0]
    df = pl.DataFrame({"type": types, "ts": list(range(len(types))), "g": keys,
                       "m": pl.Series(values, dtype=dtype)})
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c) WITHIN UNBOUNDED RETURN sum(b.m) AS s")
    out = q.run(df, type="type", partition_by="g", engine=engine)
    assert out.height == sum(2 ** len(ms) - 1 for ms in groups)
    for r in out.iter_rows(named=True):
        members = [m["m"] for m in r["b"]]
        assert r["s"] == _exact(sum(members)), members
