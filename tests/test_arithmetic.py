"""Numbers mean one thing on every engine (docs/semantics.md §4, "Numbers").

Integer arithmetic is exact and NULL outside int64, ints compare with floats
by value, NaN compares FALSE except ``!=``, ``[attr]`` joins no NaN.  The
oracle here is a dozen lines written from §4 over Python's integers, not the
reference evaluator: both engines are checked against it, on data drawn at the
extremes (int64 bounds, 2^53 neighbours, NaN, infinities, nulls).
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep.kernels.arith import abs_i, add_i, cmp_if, mul_i, neg_i, sub_i
from jitcep.pattern.parser import parse_expr
from importlib import import_module

E = import_module("jitcep.pattern.expr")

LO, HI = -(1 << 63), (1 << 63) - 1
INT_EDGES = [0, 1, -1, 2, -2, 7, HI, LO, HI - 1, LO + 1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, 3037000499,
             -3037000500, 3_000_000_000, 4_000_000_000, 1 << 62, -(1 << 62)]
FLOAT_EDGES = [0.0, -0.0, 0.5, -1.5, 2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** 63, -2.0 ** 63, 2.0 ** 62, 1e300,
               math.inf, -math.inf, math.nan, 9.223372036854775e18]

ints = st.one_of(st.sampled_from(INT_EDGES), st.integers(LO, HI))
floats = st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(allow_nan=True, allow_infinity=True))


# --- the exact helpers against Python integers -----------------------------------------------------------


def _exact(r):
    return (r, True) if LO <= r <= HI else (None, False)


@settings(max_examples=600, deadline=None)
@given(ints, ints)
def test_int64_helpers_are_exact_or_null(a, b):
    for fn, r in ((add_i, a + b), (sub_i, a - b), (mul_i, a * b)):
        v, ok = fn(a, b)
        want, fits = _exact(r)
        assert bool(ok) == fits, (fn.__name__, a, b)
        if fits:
            assert int(v) == want
    for fn, r in ((neg_i, -a), (abs_i, abs(a))):
        v, ok = fn(a)
        assert bool(ok) == (LO <= r <= HI) and (not ok or int(v) == r)


@settings(max_examples=600, deadline=None)
@given(ints, floats)
def test_int_float_comparison_is_exact(i, f):
    c = cmp_if(i, f)
    if math.isnan(f):
        assert c == 2
    else:
        assert c == (i > f) - (i < f)  # Python compares int and float by value


# --- both engines against the rule ---------------------------------------------------------------------------

# x, y: Int64; f: Float64.  Every operator, int with int, int with float, literals at the bounds.
EXPRS = [
    "a.x + a.y > 0", "a.x - a.y < 0", "a.x * a.y > 0", "a.x * a.y IS NULL", "-a.x < 0", "abs(a.x) >= 0",
    "a.x < a.f", "a.x = a.f", "a.x != a.f", "a.f <= a.x", "a.x / a.y > a.f", "a.x + a.f > 0",
    "a.x * 2 - a.y >= 9223372036854775807", "a.x IN (9007199254740992.0, 1.5)", "a.x > 9007199254740992.0",
    "a.f >= 9223372036854775807", "NOT (a.f > 1)", "a.f = a.f", "a.x - -9223372036854775807 > a.y",
    "abs(a.x - a.y) <= 3", "a.f * a.x < a.y",
]


def _value(e, row):
    """§4 read literally: exact ints, NULL outside int64, float64 when mixed, / as float64."""
    if isinstance(e, E.Lit):
        return e.value
    if isinstance(e, E.Attr):
        return row[e.attr]
    if isinstance(e, E.Unary):
        v = _value(e.operand, row)
        if v is None:
            return None
        r = -v if e.op == "neg" else abs(v)
        return r if isinstance(r, float) or LO <= r <= HI else None
    if isinstance(e, E.Arith):
        x, y = _value(e.left, row), _value(e.right, row)
        if x is None or y is None:
            return None
        if e.op == "/":
            return None if y == 0 else float(x) / float(y)
        if isinstance(x, float) or isinstance(y, float):
            x, y = float(x), float(y)
        r = {"+": x + y, "-": x - y, "*": x * y}[e.op]
        return r if isinstance(r, float) or LO <= r <= HI else None
    return _truth(e, row)


def _truth(e, row):
    if isinstance(e, E.Cmp):
        x, y = _value(e.left, row), _value(e.right, row)
        if x is None or y is None:
            return None
        return {"=": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[e.op]
    if isinstance(e, E.IsNull):
        return (_value(e.operand, row) is None) != e.negated
    if isinstance(e, E.Not):
        v = _truth(e.operand, row)
        return None if v is None else not v
    if isinstance(e, E.In):
        x = _value(e.operand, row)
        hits = [None if x is None else x == v.value for v in e.values]
        return True if True in hits else (None if None in hits else False)
    raise AssertionError(f"the oracle does not read {e!r}")


rows = st.tuples(st.one_of(st.none(), ints), st.one_of(st.none(), ints), st.one_of(st.none(), floats))


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(rows, min_size=1, max_size=12))
def test_engines_follow_the_number_rules(engine, data):
    df = pl.DataFrame({"type": ["A"] * len(data), "ts": list(range(len(data))),
                       "x": [r[0] for r in data], "y": [r[1] for r in data], "f": [r[2] for r in data]},
                      schema={"type": pl.String, "ts": pl.Int64, "x": pl.Int64, "y": pl.Int64, "f": pl.Float64})
    q = jitcep.compile([f"PATTERN A a WHERE {e} WITHIN UNBOUNDED" for e in EXPRS])
    out = q.run(df, time="ts", type="type", engine=engine)
    got = {(p, r["row"]) for p, r in zip(out["pattern"].to_list(), out["a"].to_list())}
    want = set()
    for k, text in enumerate(EXPRS):
        e = parse_expr(text)
        for i, (x, y, f) in enumerate(data):
            if _truth(e, {"x": x, "y": y, "f": f}) is True:
                want.add((k, i))
    assert got == want


def test_integer_overflow_is_null_not_wrapped(engine):
    df = pl.DataFrame({"type": ["A", "A"], "ts": [1, 2], "x": [3_000_000_000, 3]})
    # 3e9 * 4e9 wraps to a negative int64; §4 makes it NULL, so neither comparison holds for row 0
    q = "PATTERN A a WHERE a.x * 4000000000 < 0 WITHIN UNBOUNDED"
    assert jitcep.compile(q).run(df, time="ts", type="type", engine=engine).height == 0
    q = "PATTERN A a WHERE a.x * 4000000000 IS NULL WITHIN UNBOUNDED"
    assert jitcep.compile(q).run(df, time="ts", type="type", engine=engine)["a"].struct.field("row").to_list() == [0]


def test_sum_of_ints_outside_int64_is_null(engine):
    df = pl.DataFrame({"type": ["A", "B", "B", "C"], "ts": [1, 2, 3, 4], "x": [0, 1 << 62, 1 << 62, 0]})
    q = "PATTERN SEQ(A a, B+ b[], C c) WHERE sum(b.x) IS NULL WITHIN 10"
    out = jitcep.compile(q).run(df, time="ts", type="type", engine=engine)
    # the list of both Bs sums to 2^63: NULL; each B alone fits
    assert [tuple(m["row"] for m in lst) for lst in out["b"].to_list()] == [(1, 2)]


def test_nan_key_joins_nothing_under_equivalence(engine):
    df = pl.DataFrame({"type": ["A", "B", "A", "B"], "ts": [1, 2, 3, 4], "k": [math.nan, math.nan, 1.0, 1.0]})
    out = jitcep.compile("PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10").run(df, time="ts", type="type",
                                                                          engine=engine)
    assert [(r["a"]["row"], r["b"]["row"]) for r in out.iter_rows(named=True)] == [(2, 3)]


def test_nan_key_is_one_partition_by_stream(engine):
    df = pl.DataFrame({"type": ["A", "B", "A", "B"], "ts": [1, 2, 3, 4], "k": [math.nan, math.nan, 1.0, 1.0]})
    out = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10").run(df, time="ts", type="type", engine=engine,
                                                                 partition_by="k")
    assert sorted((r["a"]["row"], r["b"]["row"]) for r in out.iter_rows(named=True)) == [(0, 1), (2, 3)]



def test_return_values_follow_the_number_rules(engine):
    # RETURN computes values with the same rules as WHERE: overflow and x / 0 are NULL, not a
    # wrapped int or inf; a float sum adds in list order (0.1 + 0.2 + 0.3, left to right)
    df = pl.DataFrame({"type": ["A", "B", "B", "B", "C"], "ts": [1, 2, 3, 4, 5],
                       "x": [LO, 1 << 62, 1 << 62, 0, 0], "f": [0.5, 0.1, 0.2, 0.3, 0.0]})
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c) WHERE count(b) = 3 WITHIN 10 "
                       "RETURN a.x * 2 AS m, a.x / c.x AS d, -a.x AS n, abs(a.x) AS ab, a.x + 1 AS p, "
                       "sum(b.x) AS s, sum(b.f) AS sf, avg(b.f) AS af, b[1].x * 2 AS m1")
    row = q.run(df, time="ts", type="type", engine=engine).row(0, named=True)
    assert (row["m"], row["d"], row["n"], row["ab"], row["p"]) == (None, None, None, None, LO + 1)
    assert row["s"] is None and row["m1"] is None  # 2^63: one past int64
    assert row["sf"] == (0.1 + 0.2) + 0.3 and row["af"] == ((0.1 + 0.2) + 0.3) / 3
