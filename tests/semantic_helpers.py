"""Helpers for the hand-enumerated semantic tests.

The tests in ``test_seq.py`` ... ``test_papers.py`` are an *independent oracle*:
every expected match set is written by hand from the semantics text
(DESIGN.md section 2, docs/semantics.md), never produced by running jitcep.
These helpers only build small inputs and turn the public API's output back
into something a person can write down:

- :func:`events` builds a Polars table inline from a header and row tuples;
- :func:`matches` compiles a pattern, runs it through the public contract and
  returns the matches as a multiset (``collections.Counter``) of tuples of
  input row numbers, one entry per positive variable in output-column order.
  A Kleene variable contributes a tuple of rows, an unbound variable (an OR
  branch not taken) ``None``;
- :func:`M` writes an expected multiset: ``M((0, 2, 5), (0, 3, 5))``.

Every test runs on each engine (tests/conftest.py parametrises the modules
that use these helpers and sets the engine with :func:`use_engine`).  On
``compiled``, :func:`run` also checks the fallback contract: a query the
compiled engine does not cover (``jitcep.runtime.check_supported`` refuses one
of its patterns) must announce itself with exactly one FallbackWarning naming
each refusal, and a covered query must not warn; the result is then checked
against the same hand-written expectation as on the reference.
"""

from __future__ import annotations

import warnings
from collections import Counter
from contextlib import contextmanager

import polars as pl

from jitcep.errors import FallbackWarning, UnsupportedPatternError

ENGINE = "reference"  # set per test by tests/conftest.py


@contextmanager
def use_engine(engine: str):
    """Run the helpers with ``engine`` inside the block."""
    global ENGINE
    before, ENGINE = ENGINE, engine
    try:
        yield
    finally:
        ENGINE = before


def refusals(query) -> list[str]:
    """Why the compiled engine refuses each pattern of ``query`` it does not cover."""
    from jitcep import runtime

    out = []
    for p in query.patterns:
        try:
            runtime.check_supported(p, query.options)
        except UnsupportedPatternError as e:
            out.append(str(e))
    return out


def run_checked(query, df: pl.DataFrame, engine: str, **kwargs) -> pl.DataFrame:
    """``query.run(df, engine=engine, ...)``; on ``compiled``, assert the FallbackWarning contract."""
    if engine != "compiled":
        return query.run(df, engine=engine, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = query.run(df, engine=engine, **kwargs)
    fallbacks = [w for w in caught if issubclass(w.category, FallbackWarning)]
    for w in caught:  # hand the other warnings on
        if not issubclass(w.category, FallbackWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    why = refusals(query)
    if why:
        assert len(fallbacks) == 1, f"compiled engine refuses ({why}) but warned {len(fallbacks)} times"
        text = str(fallbacks[0].message)
        assert all(r in text for r in why) and "reference" in text, text
    else:
        assert not fallbacks, f"a covered query fell back: {fallbacks[0].message}"
    return out

# columns the output carries besides the variables (never a variable name in these tests)
_META = ("match_id", "pattern")


def events(header: str, *rows, schema: dict | None = None) -> pl.DataFrame:
    """A small event table: ``events("type ts price", ("A", 1, 10.0), ("B", 2, 12.0))``.

    Row ``k`` of the arguments is input row ``k`` (the ``row`` the output reports),
    whatever its timestamp, so tests can also feed unsorted input.
    """
    names = header.split()
    for r in rows:
        if len(r) != len(names):
            raise ValueError(f"row {r!r} does not fit header {names!r}")
    cols = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    if schema:
        return pl.DataFrame(cols, schema={n: schema.get(n) for n in names}, strict=False)
    return pl.DataFrame(cols, strict=False)


def M(*tuples) -> Counter:
    """An expected multiset of matches."""
    return Counter(tuples)


def run(pattern, df: pl.DataFrame, *, time: str = "ts", type: str | None = "type",
        time_unit: str | None = None, shape: str = "wide", partition_by=None, **options) -> pl.DataFrame:
    """Compile ``pattern`` with ``options`` and run it on ``df`` through the public API (``partition_by``:
    Query.run's, semantics section 13)."""
    import jitcep

    q = jitcep.compile(pattern, **options)
    kwargs = dict(time=time, type=type, shape=shape)
    if time_unit is not None:
        kwargs["time_unit"] = time_unit
    if partition_by is not None:
        kwargs["partition_by"] = partition_by
    if type is None:
        kwargs.pop("type")
    return run_checked(q, df, ENGINE, **kwargs)


def variable_columns(out: pl.DataFrame) -> list[str]:
    """The variable columns of a wide result: Struct or List(Struct) columns, in output order."""
    cols = []
    for name, dtype in out.schema.items():
        if name in _META:
            continue
        if isinstance(dtype, pl.Struct) or (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)):
            cols.append(name)
    return cols


def _rows_of(value):
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get("row")
    # a Kleene variable: a list of structs
    return tuple(v["row"] for v in value)


def as_tuples(out: pl.DataFrame, variables=None) -> list[tuple]:
    """Each match as a tuple of input rows, one entry per variable (see module docstring)."""
    cols = list(variables) if variables is not None else variable_columns(out)
    result = []
    for rec in out.select(cols).iter_rows(named=True):
        result.append(tuple(_rows_of(rec[c]) for c in cols))
    return result


def matches(pattern, df: pl.DataFrame, *, variables=None, **kwargs) -> Counter:
    """Run ``pattern`` on ``df`` and return the multiset of matches (see module docstring).

    ``variables`` fixes which variable columns appear in each tuple and in what
    order (default: every variable column in output order).
    """
    out = run(pattern, df, **kwargs)
    return Counter(as_tuples(out, variables))


def matches_by_pattern(patterns, df: pl.DataFrame, **kwargs) -> Counter:
    """Several patterns in one compile: a multiset of ``(pattern_index, rows...)``.

    Each pattern's own variable columns are the non-null, non-empty ones of that
    row (another pattern's list column may come back as null or as an empty
    list), so the tests here use no ``*`` closures and no OR.
    """
    out = run(patterns, df, **kwargs)
    cols = variable_columns(out)
    result = Counter()
    for rec in out.iter_rows(named=True):
        rows = tuple(_rows_of(rec[c]) for c in cols if rec[c] not in (None, []))
        result[(rec["pattern"],) + rows] += 1
    return result


def column_values(pattern, df: pl.DataFrame, column: str, *, variables=None, **kwargs) -> Counter:
    """Multiset of ``(rows..., value of column)`` per match, e.g. a RETURN aggregate."""
    out = run(pattern, df, **kwargs)
    keys = as_tuples(out, variables)
    vals = out[column].to_list()
    return Counter(k + (v,) for k, v in zip(keys, vals))
