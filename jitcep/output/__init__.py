"""Match tables -> Polars DataFrames (the public output contract).

Wide shape (DESIGN.md section 1, "Output"): one row per match with

- ``match_id`` (Int64, 0..n-1) and, when several patterns ran, ``pattern``
  (Int64, 0-based index in the order the patterns were given);
- one column per positive variable, named as the variable: a Struct with
  ``row`` (Int64, 0-based input row number as given), ``ts`` (the input time
  column's dtype, so a Datetime stays a Datetime), the type column for
  variables that accept several types (``* v``, ``ANY(A, B) v``), then the
  attributes the pattern reads for that variable, then those RETURN names;
  a Kleene variable (and every variable of a Kleene group) is a List of such
  structs; an OR branch not taken gives null structs and null lists (an empty
  list means the variable is bound to no event, e.g. ``T* v[]`` matched none);
- RETURN items other than bare variables as their own columns (alias, or a
  default name such as ``avg_c_price`` or ``a_price``).

Long shape (like MATCH_RECOGNIZE ``ALL ROWS PER MATCH``): one row per
(match, variable, event) with ``match_id``, [``pattern``], ``variable`` (an Enum of the variable names),
``index`` (member index in a list, 0 for single variables), ``row``, ``ts``,
the attributes (null where a variable does not carry one), then the RETURN
columns of the match repeated on each of its rows.

Column dtypes depend only on the patterns and the input schema, never on the
number of matches: an empty result has exactly the schema of a non-empty one,
and :func:`output_schema` computes it without data (the Spark adapter builds
its result schema on the driver with it).

Everything is gathered by position arrays (numpy / Polars ``gather``); Kleene
lists are built from the match table's CSR offsets as Arrow list arrays, so
there is no Python loop per match.

This module assembles the frame in either shape; the parts it assembles, one
concept each: :mod:`.spec` (what each pattern outputs), :mod:`.values` (where
the values come from), :mod:`.columns` (a pattern's variable columns) with
:mod:`.lists` (list columns), :mod:`.returns` (RETURN expressions in Polars)
with :mod:`.int128` (exact integer arithmetic), :mod:`.layout` (the columns
several patterns share, semantics section 10).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..errors import InputError, MissingColumnError, PatternValidationError, TimestampError, UnsupportedPatternError
from ..events import EventTable, check_type_column, read_events, table_of_frame
from ..events.times import refused_time_dtype
from ..events.types import attribute_kind
from ..kernels.gather import row_numbers
from ..matches import MatchTable
from ..pattern import ast
from ..pattern import expr as ex
from .columns import _frame, _var_columns
from .layout import _check_shared_returns, _layout
from .returns import _CONDITIONS, _return_expr
from .spec import _ordered_union
from .values import ID_DTYPE, _Values


# --- wide ---------------------------------------------------------------------


def _wide(patterns, results, values: _Values) -> pl.DataFrame:
    specs, unified = _layout(patterns, values)
    multi = len(patterns) > 1
    if not multi and not specs[0].returns and specs[0].vars:  # the columns are the frame's, in their order
        cols = _var_columns(specs[0].vars, unified, values, results[0])
        _check_height(0, results[0], len(cols[0]))
        return _frame([pl.Series("match_id", row_numbers(results[0].n), dtype=ID_DTYPE), *cols])
    frames = []
    for k, (spec, mt) in enumerate(zip(specs, results)):
        cols = _var_columns(spec.vars, unified, values, mt)
        df = _frame(cols)
        if cols:
            _check_height(k, mt, df.height)
        if multi:
            pattern = pl.Series("pattern", np.full(mt.n, k, dtype=np.int64), dtype=ID_DTYPE)
            df = df.hstack([pattern]) if cols else pl.DataFrame([pattern])
        if spec.returns:
            lists = {v.name for v in spec.vars if v.is_list}
            # attributes with a column but no value in it (output_schema's table has no columns: its
            # schema is the one of a table with values)
            kindless = {a.attr for _, e in spec.returns for a in ex.walk(e) if isinstance(a, (ex.Attr, ex.Agg))
                        and a.attr in values.table.columns and attribute_kind(a.attr, values.table) is None}
            # a condition reads an integer column holding a value past int64 as float64, as WHERE does (section
            # 4); a value item keeps integer arithmetic, its dtype fixed by the input's schema alone
            floats = frozenset(a.attr for _, e in spec.returns for a in ex.walk(e)
                               if isinstance(a, (ex.Attr, ex.Agg)) and a.attr in values.table.columns
                               and attribute_kind(a.attr, values.table) == "float")
            # a bare attribute or aggregate item keeps its column's dtype (the output schema does not depend
            # on the data)
            df = df.with_columns([_return_expr(e, lists, set() if isinstance(e, (ex.Attr, ex.Agg)) else kindless, df,
                                               floats if isinstance(e, _CONDITIONS) else frozenset())
                                  .alias(name) for name, e in spec.returns])
        frames.append(df)
    _check_shared_returns(specs, frames)
    # Every frame carries full dtypes even when empty, so the relaxed diagonal
    # concat (missing columns -> typed nulls) gives a schema independent of n.
    out = pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]
    # eager column operations throughout: at small inputs a query plan per step was the fixed cost
    match_id = pl.Series("match_id", row_numbers(out.height), dtype=ID_DTYPE)  # zero-copy, from the run's pool
    lead = ["match_id"] + (["pattern"] if multi else [])
    var_cols = list(unified)
    ret_cols = [c for c in out.columns if c not in lead and c not in unified]
    return _frame([match_id, *(out.get_column(c) for c in lead[1:] + var_cols + ret_cols)])


def _check_height(k: int, mt: MatchTable, built: int) -> None:
    if mt.n != built:
        raise InputError(f"match table of pattern {k} is inconsistent: {mt.n} rows, {built} built")


# --- long ---------------------------------------------------------------------


def _long(wide: pl.DataFrame, patterns, values: _Values) -> pl.DataFrame:
    unified = _layout(patterns, values)[1]
    lead = ["match_id"] + (["pattern"] if "pattern" in wide.columns else [])
    ret_cols = [c for c in wide.columns if c not in lead and c not in unified]
    attrs = _ordered_union(*[[f for f, _ in fields] for _, fields in unified.values()])
    n = wide.height
    # Row order: by match, then variable (output column order), then list index.
    # Each variable's rows come out in match order, so the destination of every
    # row follows from per-match counts (prefix sums) instead of a sort.
    counts = [(wide[name].list.len().fill_null(0) if is_list else wide[name].is_not_null().cast(pl.UInt32))
              .cast(pl.Int64).to_numpy() for name, (is_list, _) in unified.items()]
    start = np.zeros(n, dtype=np.int64)
    if n:
        start[1:] = np.cumsum(np.sum(counts, axis=0))[:-1]
    var_dtype = pl.Enum(list(unified))  # fixed by the patterns; cheap to gather and compare
    parts, dests = [], []
    for name, (is_list, _), cnt in zip(unified, unified.values(), counts):
        sel = wide.select(*lead, pl.col(name).alias("_ev"))
        if is_list:
            sel = (sel.with_columns(pl.int_ranges(0, pl.col("_ev").list.len(), dtype=ID_DTYPE).alias("index"))
                   .explode("_ev", "index"))
        else:
            sel = sel.with_columns(pl.lit(0, dtype=ID_DTYPE).alias("index"))
        sel = (sel.filter(pl.col("_ev").is_not_null())
               .with_columns(pl.lit(name, dtype=var_dtype).alias("variable"))
               .unnest("_ev"))
        dests.append(start[sel["match_id"].to_numpy()] + sel["index"].to_numpy())
        start = start + cnt
        parts.append(sel)
    body = pl.concat(parts, how="diagonal_relaxed")
    dest = np.concatenate(dests)
    perm = np.empty(len(dest), dtype=np.int64)
    perm[dest] = np.arange(len(dest), dtype=np.int64)
    body = body.select(*lead, "variable", "index", *attrs)[perm]
    if ret_cols:  # match_id is the wide frame's row number
        body = pl.concat([body, wide.select(ret_cols)[body["match_id"].to_numpy()]], how="horizontal")
    return body


# --- public -------------------------------------------------------------------


def to_frame(patterns, results: list[MatchTable], table: EventTable, *, shape: str = "wide",
             source: pl.DataFrame | None = None, time: str = "ts", type: str | None = None) -> pl.DataFrame:
    """Matches of ``patterns`` (one :class:`MatchTable` each, positions into ``table``) as a DataFrame.

    ``source``: the input rows as given (optional); when present attributes are
    taken from it by input row number and keep their input dtypes, else they are
    decoded from ``table``.  ``time`` / ``type``: the input's time and type
    column names.  See the module docstring for the shapes.
    """
    patterns = list(patterns)
    if len(patterns) != len(results):
        raise ValueError(f"{len(patterns)} patterns but {len(results)} match tables")
    if not patterns:
        raise ValueError("no patterns")
    if shape not in ("wide", "long"):
        from .errors import OptionError
        raise OptionError(f"shape={shape!r} is not one of 'wide', 'long'")
    values = _Values(table, source, time, type)
    if shape == "long":
        _check_long_names(patterns, values)
    wide = _wide(patterns, results, values)
    return wide if shape == "wide" else _long(wide, patterns, values)


def _check_long_names(patterns, values: _Values) -> None:
    """The long shape's own columns, the event fields (attributes, the type field) and the RETURN names
    are columns side by side there: no name may be two of them.  A RETURN name is checked against the wide
    shape's columns when the pattern is validated; here, against the fields too."""
    specs, unified = _layout(patterns, values)
    own = {"match_id", "variable", "index"} | ({"pattern"} if len(patterns) > 1 else set())
    fields = {f for _, fields in unified.values() for f, _ in fields}
    clash = sorted(own & fields)
    if clash:
        raise UnsupportedPatternError(
            f"input column(s) {', '.join(map(repr, clash))} are event fields, which shape='long' outputs as "
            "columns beside its own match_id, [pattern,] variable and index; rename them or use shape='wide'")
    clash = sorted({name for spec in specs for name, _ in spec.returns} & (fields | {"variable", "index"}))
    if clash:
        raise PatternValidationError(f"RETURN column name(s) {', '.join(clash)} clash with the long shape's "
                                     "columns (variable, index and the events' fields); add AS aliases")


def wants_all_columns(patterns) -> bool:
    """Whether some pattern RETURNs a whole variable (every input column is then output)."""
    return any(isinstance(i.expr, ex.Attr) and i.expr.attr == "*" for p in patterns for i in p.returns)


def empty_match_table(pattern: ast.Pattern) -> MatchTable:
    """A match table with no matches for ``pattern`` (every variable present, typed)."""
    lists = set(ast.kleene_vars(pattern.body))
    pos = [v for v in ast.positive_vars(pattern.body)]
    return MatchTable(0, {v: np.zeros(0, np.int64) for v in pos if v not in lists},
                      {v: (np.zeros(1, np.int64), np.zeros(0, np.int64)) for v in pos if v in lists})


def output_schema(query, input_schema, *, time: str = "ts", type: str | None = None,
                  shape: str = "wide") -> pl.Schema:
    """The schema :meth:`Query.run` returns for input of ``input_schema``, computed without data.

    ``query``: a :class:`jitcep.Query` or a list of patterns.  ``input_schema``:
    a ``pl.Schema`` or a mapping column -> dtype (the columns the run reads).

    >>> import polars as pl, jitcep
    >>> q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x > b.x WITHIN 10")
    >>> s = jitcep.output_schema(q, {"ts": pl.Int64, "type": pl.String, "x": pl.Float64}, type="type")
    >>> s.names()
    ['match_id', 'a', 'b']
    >>> s["a"]
    Struct({'row': Int64, 'ts': Int64, 'x': Float64})
    """
    patterns = list(getattr(query, "patterns", query))
    schema = pl.Schema(input_schema)
    if time not in schema:
        raise MissingColumnError(f"time column {time!r} is not in the input schema; columns: {list(schema)}")
    if type is None:  # typed variables could never match: Query.run's MissingTypeColumnError (semantics §3)
        check_type_column(patterns)
    if schema[time] == pl.String:  # a table of values: text a run is not told to parse (semantics §1)
        raise refused_time_dtype(time, schema[time])
    if schema[time] == pl.Null:  # a table of values: null timestamps, which a run refuses (semantics §1)
        raise TimestampError(f"time column {time!r} has dtype Null: its values can only be null timestamps")
    # the run's own reading and table of no rows: its named errors (a missing column, a column's dtype, a
    # predicate mixing kinds, the type column's dtype) before any Polars operation meets the dtypes
    source = read_events(pl.DataFrame(schema=schema), patterns, time=time, type=type, all_columns=True)
    table = table_of_frame(source, patterns, time=time, type=type)
    return to_frame(patterns, [empty_match_table(p) for p in patterns], table, shape=shape,
                    source=source, time=time, type=type).schema
