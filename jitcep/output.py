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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from ._memo import PerObject, PerObjectAndKey
from .errors import InputError, MissingColumnError, PatternValidationError, TimestampError, UnsupportedPatternError
from .events import EventTable, check_type_column, read_events, table_of_frame
from .events.times import refused_time_dtype
from .events.types import attribute_kind
from .kernels.gather import input_rows, row_numbers, take
from .matches import MatchTable
from .pattern import ast
from .pattern import expr as ex
from .pattern.kinds import INT64_MAX, INT64_MIN

ID_DTYPE = pl.Int64
# value sources of the fixed struct fields: not strings, so no input column's name is one
ROW, TS, TYPE = ("row",), ("ts",), ("type",)

_KIND_DTYPE = {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean, "str": pl.String}


# --- what each pattern outputs ------------------------------------------------


@dataclass(frozen=True)
class _VarSpec:
    name: str
    is_list: bool
    with_type: bool            # carries the type column (several types accepted)
    attrs: tuple[str, ...]     # attribute fields after row / ts / type
    whole: bool                # RETURN names the whole variable: every input column


@dataclass(frozen=True)
class _PatternSpec:
    vars: tuple[_VarSpec, ...]
    returns: tuple[tuple[str, ex.Expr], ...]   # (column name, expression)


def _ordered_union(*seqs) -> tuple:
    seen: dict = {}
    for s in seqs:
        for x in s:
            seen.setdefault(x, None)
    return tuple(seen)


def _return_name(item: ast.ReturnItem, k: int) -> str:
    """Default column name of a RETURN item: ``avg_c_price``, ``count_c``, ``a_price``, ``c_1_price``."""
    if item.alias:
        return item.alias
    e = item.expr
    if isinstance(e, ex.Agg):
        return f"{e.func}_{e.var}" + (f"_{e.attr}" if e.attr else "")
    if isinstance(e, ex.Attr):
        idx = "" if e.index in (None, "i") else f"_{'last' if e.index == 'len' else e.index}"
        return f"{e.var}{idx}_{e.attr}"
    return f"return_{k}"


def _compute_spec(p: ast.Pattern) -> _PatternSpec:
    positive = ast.positive_vars(p.body)
    lists = set(ast.kleene_vars(p.body))
    types = {v.name: v.types for v in ast.event_vars(p.body)}
    reads: dict[str, list[str]] = {v: [] for v in positive}
    equiv: list[str] = []
    whole: set[str] = set()

    def note(e: ex.Expr):
        for n in ex.walk(e):
            if isinstance(n, ex.Attr) and n.var in reads and n.attr not in ("ts", "*"):
                reads[n.var].append(n.attr)
            elif isinstance(n, ex.Agg) and n.var in reads and n.attr is not None and n.attr != "ts":
                reads[n.var].append(n.attr)
            elif isinstance(n, ex.Equiv):
                equiv.append(n.attr)

    if p.where is not None:
        note(p.where)
    returns: list[tuple[str, ex.Expr]] = []
    for k, item in enumerate(p.returns):
        e = item.expr
        if isinstance(e, ex.Attr) and e.attr == "*":
            if e.var not in reads:
                raise PatternValidationError(f"RETURN {e.var}: not a positive variable of the pattern")
            whole.add(e.var)
            continue
        note(e)
        returns.append((_return_name(item, k), e))
    names = [n for n, _ in returns]
    clash = sorted({n for n in names if names.count(n) > 1 or n in reads or n in ("match_id", "pattern")})
    if clash:
        raise PatternValidationError(
            f"RETURN column name(s) {', '.join(clash)} clash with another output column; add AS aliases")
    specs = []
    for v in positive:
        t = types[v]
        attrs = tuple(a for a in _ordered_union(equiv, reads[v]) if a not in ("ts",))
        bad = [a for a in attrs if a == "row"]
        if bad:
            raise UnsupportedPatternError(
                f"variable {v} reads an attribute named 'row', which is reserved for the input row number")
        specs.append(_VarSpec(v, v in lists, t is None or len(t) > 1, attrs, v in whole))
    return _PatternSpec(tuple(specs), tuple(returns))


_pattern_spec = PerObject(_compute_spec)  # an analyst reruns one query (jitcep._memo)


# --- where values come from -----------------------------------------------------


class _Values:
    """Gathers attribute values by event-table position.

    With ``source`` (the input as given, a Polars DataFrame) values are taken
    from it by input row number, so every column keeps its input dtype; without
    it they are decoded from the event table's columns.
    """

    def __init__(self, table: EventTable, source: pl.DataFrame | None, time: str, type: str | None):
        self.table, self.source, self.time, self.type = table, source, time, type
        self.columns = None if source is None else source.columns  # a Polars call each time it is asked

    def signature(self) -> tuple:
        """What the output's layout (:func:`_layout`) depends on besides the patterns."""
        if self.source is not None:
            return ("source", tuple(self.columns), self.time, self.type)
        return ("table", bool(self.table.type_names), tuple(self.table.columns), self.type)

    def has_type(self) -> bool:
        if self.source is not None:
            return self.type is not None
        return bool(self.table.type_names)

    def type_field(self) -> str:
        return self.type if self.type is not None else "type"

    def all_attrs(self) -> tuple[str, ...]:
        """Every attribute a whole-variable RETURN outputs."""
        if self.source is not None:
            return tuple(c for c in self.columns if c not in (self.time, self.type, "row"))
        return tuple(c for c in self.table.columns if c not in ("ts", "row"))

    def gather(self, attr: str, pos: np.ndarray, rows: np.ndarray | None) -> pl.Series:
        """Values of ``attr`` ("ts", the type field or an attribute) at positions ``pos`` (input rows
        ``rows``, given when there is a source)."""
        if self.source is not None:
            col = self.source_column(attr)
            if col is None:
                return pl.repeat(None, len(rows), dtype=pl.String, eager=True)
            return _take_series(self.source.get_column(col), rows)
        t = self.table
        if attr == TS:
            return pl.Series(t.ts[pos], dtype=pl.Int64).cast(t.time_dtype)
        if attr == TYPE:
            # code -1 (null type) -> the appended null at index len(type_names)
            names = pl.Series([*t.type_names, None], dtype=pl.String)
            codes = t.type_code[pos].astype(np.int64)
            return names.gather(np.where(codes < 0, len(t.type_names), codes))
        c = t.column(attr)  # an input column or the virtual ``type`` (EventTable.column)
        if c.kind == "str":
            return c.strings_at(pos)
        s = pl.Series(c.values[pos], dtype=_KIND_DTYPE[c.kind])
        if c.valid is not None:
            s = pl.select(pl.when(pl.lit(pl.Series(c.valid[pos]))).then(s)).to_series()
        return s

    def source_column(self, attr: str) -> str | None:
        """The input column holding ``attr``'s values (None: the type of an input without a type column,
        all null); MissingColumnError when the input has no such column."""
        if attr == "type" and "type" not in self.columns:
            attr = TYPE  # the type pseudo-attribute: the event's type name
        if attr == TYPE and self.type is None:
            return None
        col = {TS: self.time, TYPE: self.type}.get(attr, attr)
        if col not in self.columns:
            raise MissingColumnError(f"column {col!r} is not in the input; columns: {self.columns}")
        return col


def _frame(series: list[pl.Series]) -> pl.DataFrame:
    """``pl.DataFrame(series)`` (named, equal lengths) in a fifth of its Python calls: a small run's
    output makes several (perf/notes/opencep.md, "Fewer Python/Polars calls a warm run on small tables")."""
    if not series:
        return pl.DataFrame()
    return series[0].to_frame().hstack(series[1:]) if len(series) > 1 else series[0].to_frame()


def _take_series(s: pl.Series, rows: np.ndarray) -> pl.Series:
    """``s`` at ``rows``: a numeric or temporal column without nulls by one compiled gather over its
    physical values (zero-copy in and out), anything else by indexing the series with ``rows``."""
    dtype = s.dtype
    number = (dtype.is_integer() and dtype not in (pl.Int128, pl.UInt128)) or dtype.is_float()  # NumPy has no 128
    if (number or dtype.is_temporal()) and s.null_count() == 0:
        # a number is its own physical value; a temporal one's by a cast (``to_physical`` is a Polars query,
        # ~60 us, a fixed cost)
        phys = s if number else s.cast(pl.Int32 if dtype == pl.Date else pl.Int64)
        out = pl.Series(s.name, take(phys.to_numpy(), rows), dtype=phys.dtype)
        return out if number else out.cast(dtype)
    return s[rows]  # indexing by an array takes eagerly; ``gather`` is a Polars query (its pool), ~0.3 ms more


# --- wide ---------------------------------------------------------------------


def _fields(v: _VarSpec, values: _Values) -> tuple[tuple[str, str], ...]:
    """(field name, value source) pairs of a variable's struct, in output order."""
    out = [("row", ROW), ("ts", TS)]
    if v.with_type and values.has_type():
        if values.type_field() in ("row", "ts"):
            raise UnsupportedPatternError(
                f"variable {v.name} accepts several types, so its struct holds the type column "
                f"{values.type_field()!r} beside its own 'row' and 'ts' fields; rename the type column")
        out.append((values.type_field(), TYPE))
    attrs = _ordered_union(v.attrs, values.all_attrs() if v.whole else ())
    taken = {f for f, _ in out}
    out += [(a, a) for a in attrs if a not in taken]
    return tuple(out)


def _var_columns(vars_, unified, values: _Values, mt: MatchTable) -> list[pl.Series]:
    """The output column of each variable of one pattern: a struct, or a list of structs.

    Every field's values are gathered once for all the variables (their event
    positions end to end) and sliced per variable: at small inputs a Polars
    call per field per variable was the fixed cost of a run.
    """
    positions = [mt.lists[v.name][1][:mt.lists[v.name][0][-1]] if v.is_list else mt.single[v.name] for v in vars_]
    starts = np.cumsum([0] + [len(p) for p in positions])
    # every variable's positions end to end (unbound: 0, masked below) and their input rows, one pass each
    table = values.table
    rows = _rows_in_place(vars_, mt) if table.row_map() is None else None
    every_bound = rows is not None  # _rows_in_place found no unbound position
    if rows is None:
        rows = input_rows(positions, table.row_map(), table.n)
    every = rows if values.source is not None or table.row_map() is None else input_rows(positions, None, table.n)
    srcs = list(dict.fromkeys(src for v in vars_ for _, src in unified[v.name][1] if src != ROW))
    # one Series per source column, by a compiled take where it can (a frame gather runs on Polars' thread
    # pool, which a forked child does not have: it would wait forever, tests/test_threads.py)
    times = _times_in_place(vars_, mt, values) if TS in srcs else None
    gathered = {src: times if src == TS and times is not None else values.gather(src, every, rows) for src in srcs}
    gathered[ROW] = pl.Series("row", rows, dtype=ID_DTYPE)  # named: ~half the calls of an unnamed one
    frames: dict[tuple, pl.DataFrame] = {}  # per field list: every field, all variables end to end
    out = []
    for v, lo, hi in zip(vars_, starts[:-1], starts[1:]):
        fields = unified[v.name][1]
        if fields not in frames:
            frames[fields] = _frame([_named(gathered[src], name) for name, src in fields])
        # a slice of a frame and one struct of it: a DataFrame per variable was the fixed cost at small inputs
        s = frames[fields].slice(int(lo), int(hi - lo)).to_struct(v.name)
        if v.is_list:
            # A list variable of an OR branch not taken is null, not [] (which means
            # "bound, no member", e.g. T* v[] matched zero events).
            unbound = mt.list_unbound.get(v.name)
            unbound = unbound if unbound is not None and unbound.any() else None
            off = mt.lists[v.name][0]
            lists = _lists_by_arrow if _arrow_carries(s.dtype) else _lists_by_groups
            s = lists(s, off, unbound)
        elif not every_bound:
            bound = mt.single[v.name] >= 0
            if not bound.all():
                s = pl.select(pl.when(pl.lit(pl.Series(bound))).then(s).alias(v.name)).to_series()
        out.append(s)
    return out


def _arrow_carries(dtype: pl.DataType) -> bool:
    """Whether Arrow has a type for ``dtype``: not for Polars' 128-bit integers, at any depth."""
    if dtype in (pl.Int128, pl.UInt128):
        return False
    if isinstance(dtype, pl.Struct):
        return all(_arrow_carries(f.dtype) for f in dtype.fields)
    inner = getattr(dtype, "inner", None)  # List, Array
    return inner is None or _arrow_carries(inner)


def _lists_by_arrow(members: pl.Series, off: np.ndarray, unbound: np.ndarray | None) -> pl.Series:
    """A list per match of the ``members`` (structs, end to end) between offsets ``off``, null where
    ``unbound``: one Arrow list array over the members' own buffers."""
    # through Polars, not pa.array: pyarrow's array() imports pandas (1.2 s) to test for its types
    mask = None if unbound is None else pl.Series(np.asarray(unbound, dtype=bool)).to_arrow()
    # Arrow's C schema holds names as C strings, so Polars panics exporting a name with a NUL:
    # the list is built unnamed, with stand-in field names if a column's name has one
    names = [f.name for f in members.dtype.fields]
    nul = any("\0" in name for name in names)
    inner = members.struct.rename_fields([f"f{i}" for i in range(len(names))]) if nul else members
    arr = pa.LargeListArray.from_arrays(_arrow_int64(off), inner.rename("").to_arrow(), mask=mask)
    out = pl.Series(members.name, arr)
    return out.list.eval(pl.element().struct.rename_fields(names)) if nul else out


def _lists_by_groups(members: pl.Series, off: np.ndarray, unbound: np.ndarray | None) -> pl.Series:
    """:func:`_lists_by_arrow` by Polars alone, for members Arrow has no type for (128-bit integers):
    the members grouped by their match, a placeholder row (filtered out) for each empty list."""
    n = len(off) - 1
    lengths = np.diff(off)
    empty = np.flatnonzero(lengths == 0)
    match = np.concatenate([np.repeat(np.arange(n), lengths), empty])
    member = np.concatenate([np.ones(len(members), np.bool_), np.zeros(len(empty), np.bool_)])
    values = pl.concat([members.rename("v"), pl.Series("v", [None] * len(empty), members.dtype)])
    order = np.argsort(match, kind="stable")
    frame = pl.DataFrame([pl.Series("g", match[order]), pl.Series("m", member[order]), values[order]])
    out = frame.group_by("g", maintain_order=True).agg(pl.col("v").filter(pl.col("m"))).get_column("v")
    if unbound is not None:
        out = pl.select(pl.when(pl.lit(pl.Series(~unbound))).then(out)).to_series()
    return out.rename(members.name)


def _named(s: pl.Series, name: str) -> pl.Series:
    """``s`` named ``name`` (an alias is a copy and a rename: ~6 calls, where the name is mostly the
    gathered column's own)."""
    return s if s.name == name else s.alias(name)


def _arrow_int64(a: np.ndarray) -> pa.Array:
    """``a`` as an Arrow int64 array over the same memory (a Polars Series in between costs ~40 calls)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a)])


def _rows_in_place(vars_, mt: MatchTable) -> np.ndarray | None:
    """The input rows of every variable's positions end to end, uncopied, or None.

    With sorted input a position is its input row; a final join's match table holds its columns as the
    rows of one matrix (``MatchTable.block``), so when the variables are those rows in that order and
    none is unbound, the matrix read end to end is the rows: 8 bytes a match and variable that are not
    written again (6.65M matches of 3 variables: 160 MB of fresh pages, perf/notes/output_and_core.md).
    Whether one is unbound the kernel that wrote the matrix may have said (``MatchTable.bound``).
    """
    block = mt.block
    if block is None or any(v.is_list for v in vars_) or [v.name for v in vars_] != list(mt.single):
        return None
    flat = block.reshape(-1)  # C-ordered: a view
    return flat if mt.bound or not len(flat) or flat.min() >= 0 else None


def _times_in_place(vars_, mt: MatchTable, values: _Values) -> pl.Series | None:
    """The time field of every variable's positions end to end as the final join wrote it beside its
    rows (``MatchTable.times``: the event table's ts), or None.  Only where those values are the time
    column's own: an Int64 column (its values as they are) or a Datetime (its physical values, in its
    unit, whatever its zone); a column of any other type is gathered at the positions (its values differ
    from the table's ts)."""
    if mt.times is None or any(v.is_list for v in vars_) or [v.name for v in vars_] != list(mt.single):
        return None
    table = values.table
    dtype = table.time_dtype if values.source is None else values.source.schema[values.time]
    if dtype != table.time_dtype or not (dtype == pl.Int64 or isinstance(dtype, pl.Datetime)):
        return None
    s = pl.Series(values.time, mt.times.reshape(-1), dtype=pl.Int64)  # C-ordered: a view
    return s if dtype == pl.Int64 else s.cast(dtype)


def _int64_or_null(r: pl.Expr) -> pl.Expr:
    """An exact Int128 result as Int64, NULL outside int64 (semantics section 4)."""
    return pl.when(r.is_between(INT64_MIN, INT64_MAX)).then(r).otherwise(None).cast(pl.Int64)


_WIDE = (pl.Int128, pl.UInt128)
_WRAP_SAFE = 2.0**126
"""Below it in float64, an integer result of one operation on 128-bit operands is below 2^127 exactly (the
float's error is at most 2^-50 of it, or of its operands' sizes, below 2^129: 2^79); at or past it, past int64."""


def _int128(x: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """An integer as Int128, a UInt128 past Int128 wrapped (less 2^128): its value modulo 2^128."""
    return x.reinterpret(signed=True) if dtype == pl.UInt128 else x.cast(pl.Int128)


def _exact_int(op: str, args: tuple, dtypes: tuple) -> pl.Expr:
    """Integer ``+ - *``, ``neg`` or ``abs`` exactly, NULL outside int64 (semantics section 4).  Computed in
    Int128, whose arithmetic Polars wraps modulo 2^128: exact wherever the result lies within Int128; for
    operands of 64 bits a result that wraps (a UInt64 product past 2^127) lands outside int64, so NULL as
    it should be; with a 128-bit operand the float64 result says where it may not (2^64 * 2^64 wraps to 0)."""
    def apply(a, b=None):
        if op == "neg":
            return -a
        if op == "abs":
            return a.abs()
        return {"+": a + b, "-": a - b, "*": a * b}[op]
    wide = [_int128(x, t) for x, t in zip(args, dtypes)]
    # Polars has no Int128 negate: 0 - x
    r = _int64_or_null(pl.lit(0, dtype=pl.Int128) - wide[0] if op == "neg" else apply(*wide))
    if not any(t in _WIDE for t in dtypes):
        return r
    return pl.when(apply(*(x.cast(pl.Float64) for x in args)).abs() < _WRAP_SAFE).then(r).otherwise(None)


def _wide_sum(vals: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """The exact sum of a list of 128-bit integers as Int64, NULL outside int64 (semantics section 4): each
    member split at 2^64 (a UInt128 past Int128 wrapped, its 2^128 counted apart), the halves summed in Int128
    without wrapping for any list a run holds (fewer than 2^62 members)."""
    two64 = pl.lit(2**64, dtype=pl.Int128)
    x = vals.list.eval(_int128(pl.element(), dtype))
    hi = x.list.eval(pl.element() // two64).list.sum()
    lo = x.list.eval(pl.element() % two64).list.sum()
    if dtype == pl.UInt128:
        hi = hi + vals.list.eval((pl.element() >= pl.lit(2**127, dtype=pl.UInt128)).cast(pl.Int128)).list.sum() * two64
    h, low = hi + lo // two64, lo % two64
    below = pl.lit(2**63, dtype=pl.Int128)
    return (pl.when((h == 0) & (low < below)).then(low).when((h == -1) & (low >= below)).then(low - two64)
            .otherwise(None).cast(pl.Int64))


def _return_expr(e: ex.Expr, lists: set[str], kindless: set[str], frame: pl.DataFrame,
                 floats: frozenset[str] = frozenset()) -> pl.Expr:
    """A RETURN expression as a Polars expression over the wide frame's struct columns.

    Numbers follow semantics section 4 as predicates do: integer results exact and
    NULL outside int64 (computed in Int128), ``/`` on Float64 operands and NULL for
    a zero divisor, float sums added in list order.  ``frame`` (the wide columns,
    possibly empty) gives the operands' dtypes; ``floats``: integer attributes read as
    float64 (an integer column holding a value past int64, section 4).
    """
    def rec(x):
        r = _return_expr(x, lists, kindless, frame, floats)
        if isinstance(x, (ex.Attr, ex.Agg)) and x.attr == "ts" and _dtype(r, frame).is_temporal():
            # inside an expression a.ts is a number in time-column units (section 4), as in WHERE: a Date's
            # or Datetime's physical value; a bare a.ts item keeps the time column's dtype
            r = r.to_physical()
        return r

    if isinstance(e, ex.Lit):  # an integer is an int64 (section 4), not Polars' Int32 for a small literal
        return pl.lit(e.value, dtype=pl.Int64) if type(e.value) is int else pl.lit(e.value)
    if isinstance(e, ex.Attr):
        one = e.var not in lists or e.index not in (None, "i")  # one value, not a list of members' values
        return _as_float(_attr_expr(e, lists, kindless, frame), one and e.attr in floats)
    if isinstance(e, ex.Agg):
        return _agg_expr(e, lists, kindless, frame, floats)
    if isinstance(e, ex.Arith):
        a, b = rec(e.left), rec(e.right)
        if e.op == "/":
            a, b = a.cast(pl.Float64), b.cast(pl.Float64)
            return pl.when(b != 0).then(a / b).otherwise(None)
        (a, ta), (b, tb) = _decimal_as_float(a, frame), _decimal_as_float(b, frame)
        if ta.is_integer() and tb.is_integer():
            return _exact_int(e.op, (a, b), (ta, tb))
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    if isinstance(e, ex.Unary):
        x, t = _decimal_as_float(rec(e.operand), frame)
        if t == pl.Null:
            return x  # no kind: NULL stays NULL (Polars has no neg / abs of its Null dtype)
        if t.is_integer():
            return _exact_int(e.op, (x,), (t,))
        return -x if e.op == "neg" else x.abs()
    if isinstance(e, (ex.Cmp, ex.In)) and any(isinstance(a, ex.Attr) and a.attr in kindless for a in ex.walk(e)):
        return pl.lit(None, dtype=pl.Boolean)  # NULL (section 4); a number column of nulls may meet a string
    if isinstance(e, ex.Cmp):
        return _compare(e.op, rec(e.left), rec(e.right), frame)
    if isinstance(e, ex.BoolOp):
        items = [rec(i) for i in e.items]
        return pl.all_horizontal(items) if e.op == "and" else pl.any_horizontal(items)
    if isinstance(e, ex.Not):
        return ~rec(e.operand)
    if isinstance(e, ex.In):
        # `=` with each listed value, OR'ed in three-valued logic: TRUE if one is equal, else NULL if the
        # operand or an item is NULL (section 4); Polars' is_in neither mixes ints and floats nor gives NULL
        x = rec(e.operand)
        found = pl.any_horizontal([_compare("=", x, pl.lit(v.value), frame) for v in e.values])
        return ~found if e.negated else found
    if isinstance(e, ex.IsNull):
        x = rec(e.operand)
        return x.is_not_null() if e.negated else x.is_null()
    raise UnsupportedPatternError(f"RETURN cannot compute {type(e).__name__}")


def _decimal_as_float(x: pl.Expr, frame: pl.DataFrame) -> tuple[pl.Expr, pl.DataType]:
    """An arithmetic operand and its dtype, a decimal as float64 (semantics section 4), as ``sum`` and ``avg``
    read one: Polars' Decimal arithmetic raises where a result passes its precision."""
    dtype = _dtype(x, frame)
    return (x.cast(pl.Float64), pl.Float64()) if dtype.is_decimal() else (x, dtype)


def _dtype(x: pl.Expr, frame: pl.DataFrame) -> pl.DataType:
    """The dtype of ``x`` over the wide frame's columns (evaluated on none of its rows)."""
    return frame.head(0).select(x).dtypes[0]


def _attr_expr(e: ex.Attr, lists: set[str], kindless: set[str], frame: pl.DataFrame) -> pl.Expr:
    """``v.attr`` (``ts`` is the struct's ts field), ``c[k].attr`` / ``c[len].attr`` of a Kleene variable, or
    a Kleene variable's ``c.attr``: the list of its members' values (only ever a bare item)."""
    field, col = e.attr, pl.col(e.var)
    if e.var not in lists:
        if e.index not in (None,):
            raise UnsupportedPatternError(f"RETURN: {e.var} is not a Kleene variable and cannot be indexed")
        return _no_kind(col.struct.field(field), field in kindless, frame)
    if e.index in (None, "i"):
        return col.list.eval(pl.element().struct.field(field))
    if e.index == "i-1":
        raise UnsupportedPatternError("RETURN cannot use the iterative index [i-1]")
    at = -1 if e.index == "len" else int(e.index) - 1
    return _no_kind(col.list.get(at, null_on_oob=True).struct.field(field), field in kindless, frame)


def _agg_expr(e: ex.Agg, lists: set[str], kindless: set[str], frame: pl.DataFrame,
              floats: frozenset[str] = frozenset()) -> pl.Expr:
    """``count`` / ``sum`` / ``avg`` / ``min`` / ``max`` over a Kleene variable's members (semantics section 4:
    NULL where no member has a value, integer sums exact, float sums in list order, strings by text)."""
    if e.var not in lists:
        raise UnsupportedPatternError(f"RETURN {e.func}({e.var}): {e.var} is not a Kleene variable")
    if e.func == "count":
        return pl.col(e.var).list.len().cast(pl.Int64)
    vals = pl.col(e.var).list.eval(_as_float(pl.element().struct.field(e.attr), e.attr in floats))
    if e.func in ("min", "max"):
        dtype = _dtype(vals.list.first(), frame)
        coded = isinstance(dtype, (pl.Enum, pl.Categorical))
        if coded:  # strings by their text (section 4), not the Enum's or Categorical's category order
            vals = vals.list.eval(pl.element().cast(pl.String))
        m = vals.list.min() if e.func == "min" else vals.list.max()
        return _no_kind(m.cast(dtype) if coded else m, e.attr in kindless, frame)
    present = vals.list.drop_nulls().list.len()  # no non-null member: NULL, as in SQL (section 4)
    if e.attr == "ts":  # a number in time-column units (section 4): a Date's or Datetime's physical value
        vals = vals.list.eval(pl.element().to_physical())
    member = _dtype(vals.list.first(), frame)
    if e.func == "sum" and member.is_integer():
        total = (_wide_sum(vals, member) if member in _WIDE
                 else _int64_or_null(vals.list.eval(pl.element().cast(pl.Int128)).list.sum()))
        return pl.when(present > 0).then(total).otherwise(None)
    # in list order, one addition at a time (Polars' own float sum is pairwise)
    total = vals.list.eval(pl.element().drop_nulls().cast(pl.Float64).cum_sum()).list.last()
    return total if e.func == "sum" else total / present


_CONDITIONS = (ex.Cmp, ex.In, ex.IsNull, ex.BoolOp, ex.Not)
_CMP = {"=": pl.Expr.eq, "!=": pl.Expr.ne, "<": pl.Expr.lt, "<=": pl.Expr.le, ">": pl.Expr.gt, ">=": pl.Expr.ge}


def _compare(op: str, a: pl.Expr, b: pl.Expr, frame: pl.DataFrame) -> pl.Expr:
    """``a op b``; an int and a float by their exact values (semantics section 4), where Polars rounds the
    int to a float: rounding is monotonic, so the floats decide where they differ, and where they are
    equal the float is a whole number and both compare exactly as Int128."""
    cmp = _CMP[op]
    ta, tb = frame.head(0).select(a.alias("l"), b.alias("r")).dtypes
    if isinstance(ta, (pl.Enum, pl.Categorical)) or isinstance(tb, (pl.Enum, pl.Categorical)):
        # strings by their text: an Enum orders by its categories, and Polars compares neither an Enum
        # with a Categorical nor with a string outside its categories
        return cmp(a.cast(pl.String), b.cast(pl.String))
    if isinstance(ta, pl.Datetime) and isinstance(tb, pl.Datetime) and ta.time_zone != tb.time_zone:
        # instants in two zones (a zone-less one with a zoned one is refused before, section 4)
        return cmp(a.dt.convert_time_zone("UTC"), b.dt.convert_time_zone("UTC"))
    if not ((ta.is_integer() and tb.is_float()) or (ta.is_float() and tb.is_integer())):
        out = cmp(a, b)
    else:
        fa, fb = a.cast(pl.Float64), b.cast(pl.Float64)
        exact = cmp(a.cast(pl.Int128, strict=False), b.cast(pl.Int128, strict=False))
        out = pl.when(fa != fb).then(cmp(fa, fb)).otherwise(exact)
    nans = [x.is_nan() for x, t in ((a, ta), (b, tb)) if t.is_float()]
    if not nans:
        return out
    # NaN compares FALSE with every value, itself too, and != TRUE (section 4): Polars' NaN equals NaN and
    # orders above every number; a NULL operand keeps the comparison NULL
    nan = pl.any_horizontal(nans) & a.is_not_null() & b.is_not_null()
    return pl.when(nan).then(pl.lit(op == "!=")).otherwise(out)


def _as_float(x: pl.Expr, floated: bool) -> pl.Expr:
    """An integer attribute's value as WHERE reads it: float64 (the nearest value) for an integer column
    holding a value past int64 (semantics section 4), ``floated``; else as it is."""
    return x.cast(pl.Float64) if floated else x


def _no_kind(x: pl.Expr, kindless: bool, frame: pl.DataFrame) -> pl.Expr:
    """An operand read from an attribute with no value in the table: it has no kind, so every operation on
    it is NULL (semantics section 4).  A column of nulls other than a number becomes Polars' Null dtype,
    which every operation takes, so ``0 + a.s`` does not meet Polars' String + Int check (nor ``a.t + 1``
    its Datetime one); numbers keep their dtype, so arithmetic over them keeps one schema."""
    if kindless and not _dtype(x, frame).is_numeric():
        return x.cast(pl.Null)
    return x


def _unify(specs: list[_PatternSpec], values: _Values) -> dict[str, tuple[bool, tuple]]:
    """Variable name -> (is_list, struct fields), merged over all patterns.

    A name used by several patterns shares one column whose struct holds the
    union of their fields; a name that is a list in one pattern and single in
    another, or a RETURN name in another, cannot share a column (semantics section 10).
    """
    out: dict[str, tuple[bool, tuple]] = {}
    for spec in specs:
        for v in spec.vars:
            f = _fields(v, values)
            if v.name in out:
                is_list, prev = out[v.name]
                if is_list != v.is_list:
                    raise UnsupportedPatternError(
                        f"variable {v.name} is a Kleene list in one pattern and a single event in another; "
                        "rename it in one of them")
                # by field name: a name holds the same values whichever source a pattern reads them from
                # (the type field of ``* a`` and ``a.type`` of another pattern)
                names = {name for name, _ in prev}
                f = prev + tuple(field for field in f if field[0] not in names)
            out[v.name] = (v.is_list, f)
    for spec in specs:
        for name, _ in spec.returns:
            if name in out:
                raise UnsupportedPatternError(
                    f"{name!r} is a variable in one pattern and a RETURN name in another; rename it in one of them")
    return out


def _check_shared_returns(specs: list[_PatternSpec], frames: list[pl.DataFrame]) -> None:
    """A RETURN name several patterns give shares one column when its values are of one kind (semantics
    section 10): Polars' relaxed concatenation would otherwise turn numbers into strings or Booleans into
    numbers.  Every pair of the name's dtypes is judged, whatever the patterns' order: the column's
    dtype is the supertype of them all."""
    seen: dict[str, list[tuple[int, pl.DataType]]] = {}
    for k, (spec, df) in enumerate(zip(specs, frames)):
        for name, _ in spec.returns:
            dtype = df.schema[name]
            before = seen.setdefault(name, [])
            for j, prev in before:
                if not _one_kind(prev, dtype):
                    raise UnsupportedPatternError(
                        f"RETURN {name!r} is {prev} in pattern {j} and {dtype} in pattern {k}: one column holds "
                        f"one kind of value, in a dtype that holds every one exactly; rename it in one of them")
            before.append((k, dtype))


def _one_kind(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether values of dtypes ``a`` and ``b`` share a column: one dtype, numbers (Polars' supertype) unless
    no integer or decimal dtype holds both exactly, nulls only, or lists of such."""
    if a == b or a == pl.Null or b == pl.Null:
        return True
    if a.is_numeric() and b.is_numeric():
        return a.is_float() or b.is_float() or not (_past_128(a, b) or _past_128(b, a) or _past_38_digits(a, b))
    return isinstance(a, pl.List) and isinstance(b, pl.List) and _one_kind(a.inner, b.inner)


def _past_128(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether Polars' supertype of ``a`` and ``b`` rounds or drops values of ``a``: a UInt128 beside a signed
    integer (Int128 is the widest)."""
    return a == pl.UInt128 and b.is_signed_integer()


# the decimal digits left of the point an integer dtype's values need (Int128's 39 past any Decimal's 38)
_INT_DIGITS = {pl.Int8: 3, pl.Int16: 5, pl.Int32: 10, pl.Int64: 19, pl.Int128: 39,
               pl.UInt8: 3, pl.UInt16: 5, pl.UInt32: 10, pl.UInt64: 20, pl.UInt128: 39}
_DECIMAL_DIGITS = 38  # Decimal(38, s), Polars' widest, holds 38 - s digits left of the point


def _past_38_digits(a: pl.DataType, b: pl.DataType) -> bool:
    """Whether a decimal beside an integer or another decimal needs more digits than any Decimal holds: the
    most digits left of the point of either plus the larger scale (Polars' supertype, Decimal(38, s) or
    narrower, then fails on the values past it)."""
    if not (a.is_decimal() or b.is_decimal()):
        return False

    def digits(d: pl.DataType) -> tuple[int, int]:
        if d.is_decimal():
            p, s = d.precision or _DECIMAL_DIGITS, d.scale or 0
            return p - s, s
        return _INT_DIGITS[d.base_type()], 0
    (ia, sa), (ib, sb) = digits(a), digits(b)
    return max(ia, ib) + max(sa, sb) > _DECIMAL_DIGITS


# per patterns (by their ids, holding them): the input's signature -> the layout, a few schemas each
_LAYOUTS = PerObjectAndKey(keep=8, ident=lambda patterns: tuple(map(id, patterns)))


def _layout(patterns, values: _Values) -> tuple[list[_PatternSpec], dict[str, tuple[bool, tuple]]]:
    """(each pattern's spec, the unified variable columns :func:`_unify`): a function of the patterns and
    the input's columns (:meth:`_Values.signature`), kept per both, so a rerun on input of one schema
    lays out its output once; another schema (columns, time or type column) lays it out afresh.
    Keyed by the patterns' ids, holding them, so an id is not reused while its entry lives."""
    def make():
        specs = [_pattern_spec(p) for p in patterns]
        return specs, _unify(specs, values)
    return _LAYOUTS(tuple(patterns), values.signature(), make)


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
