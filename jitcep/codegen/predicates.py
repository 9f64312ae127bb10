"""Predicate expression trees -> one small ``@njit`` function per pattern.

The generated function evaluates predicate ``pid`` over a batch of candidate
bindings: ``P[k, j]`` is the event position bound to the predicate's k-th
variable (sorted by name) in candidate j, and ``out[j]`` receives whether the
predicate is TRUE.  It serves leaf filters (one variable, the positions of a
leaf's candidate events) and join predicates (several variables, the candidate
pairs of a join kernel) alike, so the generic kernels are compiled once and
this function is the per-pattern compiled code (with, for a large SEQ join,
its loop with these predicates' code in it: :mod:`jitcep.codegen.join_where`).

Every position it reads columns at is checked against the table as it is
loaded (the function returns False at the first one outside, and
:meth:`PredicateSet.mask` raises KernelInputError); :meth:`PredicateSet.bind`
checks that every column has one entry per event.

Null semantics are SQL's three-valued logic: an operation on a null is null,
``x / 0`` is null, AND is false if any operand is false, OR is true if any is
true, NOT null is null, and a predicate passes only when it is TRUE.

Kinds of values (semantics §4) follow :mod:`jitcep.pattern.kinds`: :func:`generate_source`
checks every predicate with it, and takes the width of every arithmetic result (int64 or float64)
from :func:`~jitcep.pattern.kinds.arith_kind`.  A column with nulls may hold no value at all on the
table, and such an attribute has no kind (§4); only the table check (``events.check_types``, the
same checker, run on both engines before any code is generated) sees whether it does, so here a
nullable column is of no kind, and where the table check let it pass for having no value, the code
generated for it is NULL at every event.

Strings are compared through ranks in one sorted universe of every dictionary
string and literal the pattern touches, so ``=``/``<`` on strings become integer
comparisons and string literals need not be known when the code is generated
(their ranks arrive in the array ``S``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._memo import PerObjectAndKey
from ..errors import KernelInputError, MissingColumnError, UnsupportedPatternError
from ..kernels.alloc import empty
from ..pattern import expr as E
from ..pattern import kinds
from ..threads import even_ranges, run_ranges
from .cache import load_module

_ALL_VALID = np.ones(1, dtype=np.bool_)
_CMP_PY = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
# an operator over cmp_if's code c = sign(int - float) (2: NaN, unordered), and the operator seen from
# the float's side
_CMP_CODE = {"=": "{c} == 0", "!=": "{c} != 0", "<": "{c} == -1", "<=": "({c} == -1 or {c} == 0)",
             ">": "{c} == 1", ">=": "({c} == 1 or {c} == 0)"}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INT_OPS = {"+": "add_i", "-": "sub_i", "*": "mul_i"}
ARITH_IMPORT = "from jitcep.kernels.arith import abs_i, add_i, cmp_if, mul_i, neg_i, sub_i"
"""The kernels :class:`_Gen`'s code calls, imported by every module generated from it."""


@dataclass(frozen=True)
class ColumnSpec:
    """What generated code needs to know about a column: its kind and whether it has nulls."""

    name: str
    kind: str          # int, float, bool, str, or a temporal kind (datetime, datetime_tz, duration, time)
    nullable: bool


def column_specs(table, names) -> dict[str, ColumnSpec]:
    """The specs of ``table``'s columns ``names`` (:func:`~jitcep.pattern.expr.columns_read`' answer), as the
    run's predicates and the planner's sample bind them."""
    specs = {}
    for name in names:
        col = table.column(name)
        specs[name] = ColumnSpec(name, col.temporal or col.kind, col.valid is not None)
    return specs


class _Gen:
    """The lines of one predicate.  Every name it assigns is unique in the generated function (tagged
    with the predicate's id): Numba rebuilds SSA form for a name assigned twice by recursing through
    the blocks between the assignments, which over many predicates outgrows Python's stack."""

    def __init__(self, columns: dict[str, ColumnSpec], col_index: dict[str, int], strings: list[str],
                 pid: int = 0):
        self.columns = columns
        self.col_index = col_index
        self.strings = strings      # string literals, in order of first use
        self.lines: list[str] = []
        self.n = 0
        self.pid = pid

    def tmp(self) -> str:
        self.n += 1
        return f"t{self.pid}_{self.n}"

    def slot(self, k: int) -> str:
        """The name of the event position bound to the predicate's k-th variable."""
        return f"p{self.pid}_{k}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    # each method returns (value_code, ok_code, kind) with kind in int/float/str/bool/null
    def value(self, e: E.Expr, var_slot: dict[str, int]):
        if isinstance(e, E.Lit):
            v = e.value
            if v is None:
                return "0", "False", "null"
            if isinstance(v, bool):
                return ("True" if v else "False"), "True", "bool"
            if isinstance(v, int):
                return repr(v), "True", "int"
            if isinstance(v, float):
                return repr(v), "True", "float"  # finite: validate refuses inf and NaN
            if isinstance(v, str):
                if v not in self.strings:
                    self.strings.append(v)
                return f"S[{self.strings.index(v)}]", "True", "str"
            raise UnsupportedPatternError(f"literal {v!r} of unsupported type")
        if isinstance(e, E.Attr):
            p = self.slot(var_slot[e.var])
            if e.attr == "ts" and "ts" not in self.columns:
                return f"ts[{p}]", "True", "int"
            if e.attr not in self.columns:
                raise MissingColumnError(f"attribute {e.attr!r} (read as {e.var}.{e.attr}) is not in the events")
            spec = self.columns[e.attr]
            i = self.col_index[e.attr]
            val = f"l{i}[c{i}[{p}]]" if spec.kind == "str" else f"c{i}[{p}]"
            # validity is always an argument (length n, or [True] with stride 0 when the
            # column has no nulls) so one compiled function serves tables with and without nulls
            ok = f"v{i}[{p} * s{i}]"
            return val, ok, spec.kind
        if isinstance(e, E.Arith):
            lv, lo, lk = self.value(e.left, var_slot)
            rv, ro, rk = self.value(e.right, var_slot)
            width = kinds.arith_kind(e.op, _kind(lk), _kind(rk))
            t = self.tmp()
            if e.op == "/":  # true division of float64 operands; x / 0 is NULL (section 4)
                self.emit(f"ok_{t} = {lo} and {ro} and {rv} != 0")
                self.emit(f"{t} = np.float64({lv}) / np.float64({rv}) if ok_{t} else 0.0")
                return t, f"ok_{t}", "float"
            if width == kinds.FLOAT:
                self.emit(f"ok_{t} = {lo} and {ro}")
                self.emit(f"{t} = ({lv}) {e.op} ({rv})")
                return t, f"ok_{t}", "float"
            # int64 exact, NULL outside int64 (section 4); an open width (a NULL operand) is NULL either way
            self.emit(f"{t}, x_{t} = {_INT_OPS[e.op]}(np.int64({lv}), np.int64({rv}))")
            self.emit(f"ok_{t} = {lo} and {ro} and x_{t}")
            return t, f"ok_{t}", "int"
        if isinstance(e, E.Unary):
            v, o, k = self.value(e.operand, var_slot)
            t = self.tmp()
            if kinds.arith_kind(e.op, _kind(k)) == kinds.FLOAT:
                self.emit(f"ok_{t} = {o}")
                self.emit(f"{t} = {'-' if e.op == 'neg' else 'abs'}({v})")
                return t, f"ok_{t}", "float"
            self.emit(f"{t}, x_{t} = {'neg_i' if e.op == 'neg' else 'abs_i'}(np.int64({v}))")
            self.emit(f"ok_{t} = {o} and x_{t}")
            return t, f"ok_{t}", "int"
        return self.boolean(e, var_slot)

    def compare(self, op: str, lv: str, lk: str, rv: str, rk: str) -> str:
        """Code of ``lv op rv`` for two operands both valid; an int with a float compares exactly."""
        if {lk, rk} == {"int", "float"}:
            if lk == "float":
                lv, rv, op = rv, lv, _FLIPPED[op]
            return _CMP_CODE[op].format(c=f"cmp_if(np.int64({lv}), np.float64({rv}))")
        return f"({lv}) {_CMP_PY[op]} ({rv})"

    def boolean(self, e: E.Expr, var_slot):
        t = self.tmp()
        if isinstance(e, E.Cmp):
            lv, lo, lk = self.value(e.left, var_slot)
            rv, ro, rk = self.value(e.right, var_slot)
            self.emit(f"ok_{t} = {lo} and {ro}")
            self.emit(f"{t} = ok_{t} and {self.compare(e.op, lv, lk, rv, rk)}")
        elif isinstance(e, E.BoolOp):
            parts = [self.boolean_operand(x, var_slot) for x in e.items]
            nul = " or ".join(f"(not {o})" for v, o in parts)  # some operand is NULL
            if e.op == "and":
                fals = " or ".join(f"({o} and not {v})" for v, o in parts)
                self.emit(f"f_{t} = {fals}")
                self.emit(f"n_{t} = {nul}")
                self.emit(f"ok_{t} = f_{t} or not n_{t}")
                self.emit(f"{t} = not f_{t} and not n_{t}")
            else:
                tru = " or ".join(f"({o} and {v})" for v, o in parts)
                self.emit(f"{t} = {tru}")
                self.emit(f"ok_{t} = {t} or not ({nul})")
        elif isinstance(e, E.Not):
            v, o = self.boolean_operand(e.operand, var_slot)
            self.emit(f"ok_{t} = {o}")
            self.emit(f"{t} = not {v}")
        elif isinstance(e, E.In):
            v, o, k = self.value(e.operand, var_slot)
            tests, has_null = [], False
            for lit in e.values:
                lv, lo, lk = self.value(lit, var_slot)
                if lk == "null":
                    has_null = True
                    continue
                tests.append(self.compare("=", v, k, lv, lk))
            hit = " or ".join(tests) if tests else "False"
            self.emit(f"h_{t} = {o} and ({hit})")
            self.emit(f"ok_{t} = {o} and (h_{t} or {not has_null})")
            self.emit(f"{t} = {'not ' if e.negated else ''}h_{t}")
        elif isinstance(e, E.IsNull):
            v, o, k = self.value(e.operand, var_slot)
            self.emit(f"ok_{t} = True")
            self.emit(f"{t} = {'' if e.negated else 'not '}({o})")
        elif isinstance(e, E.Lit) and (e.value is None or isinstance(e.value, bool)):
            v, o, _ = self.value(e, var_slot)
            self.emit(f"ok_{t} = {o}")
            self.emit(f"{t} = {v}")
        elif isinstance(e, E.Attr):
            v, o, k = self.value(e, var_slot)
            self.emit(f"ok_{t} = {o}")
            # a condition is a boolean (section 4); another kind got here only as a column of no value
            self.emit(f"{t} = {v}" if k == "bool" else f"{t} = bool({v})")
        else:
            raise UnsupportedPatternError(f"the compiled engine cannot evaluate {type(e).__name__} here")
        return t, f"ok_{t}", "bool"

    def boolean_operand(self, e, var_slot):
        v, o, _ = self.boolean(e, var_slot)
        return v, o


def _kind(kind: str) -> str | None:
    """A generated operand's kind as :mod:`jitcep.pattern.kinds` names it: the NULL literal has none."""
    return None if kind == "null" else kind


def _check_kinds(pred: E.Expr, columns: dict[str, ColumnSpec]) -> None:
    """Check ``pred``'s kinds (semantics §4) as far as ``columns`` tell them (see the module docstring)."""
    def kind_of_attr(var: str, attr: str):
        spec = columns.get(attr)
        if spec is None:
            return kinds.INT if attr == "ts" else None  # a missing column: MissingColumnError, below
        return None if spec.nullable else spec.kind  # the column kinds are the checker's kind names

    kinds.check_predicate(pred, kind_of_attr, condition=True)


def generate_source(preds: list[E.Expr], columns: dict[str, ColumnSpec]) -> tuple[str, tuple[str, ...], list[str]]:
    """Source of ``predicates(pid, P, out, ts, S, c0, v0, s0, [l0], ...)`` for ``preds``.

    Per column i: values ``c``, validity ``v`` read at ``p * s`` (stride 0 over
    a one-element mask when the column has no nulls) and, for strings, the rank
    table ``l``.

    Returns the source, the column names in argument order and the string
    literals (whose ranks form ``S``).
    """
    attrs = {n.attr for p in preds for n in E.walk(p) if isinstance(n, E.Attr)}
    used = sorted(a for a in attrs if a != "ts" or a in columns)
    col_index = {c: i for i, c in enumerate(used)}
    strings: list[str] = []
    params = ["pid", "P", "out", "ts", "S"]
    for c in used:
        if c not in columns:
            raise MissingColumnError(f"attribute {c!r} is not in the events")
        i = col_index[c]
        params += [f"c{i}", f"v{i}", f"s{i}"]
        if columns[c].kind == "str":
            params.append(f"l{i}")
    body = []
    for pid, pred in enumerate(preds):
        _check_kinds(pred, columns)
        gen = _Gen(columns, col_index, strings, pid)
        vs = sorted(E.variables(pred))
        slot = {v: k for k, v in enumerate(vs)}
        val, ok, _ = gen.boolean(pred, slot)
        body.append(f"    {'if' if pid == 0 else 'elif'} pid == {pid}:")
        body.append(f"        for j{pid} in range(m):")
        for k in range(len(vs)):
            body.append(f"            {gen.slot(k)} = P[{k}, j{pid}]")
            body.append(f"            if {gen.slot(k)} < 0 or {gen.slot(k)} >= n_events:")
            body.append("                return False")
        for line in gen.lines:
            body.append(f"            {line}")
        body.append(f"            out[j{pid}] = {ok} and {val}")
    src = "\n".join([
        "# generated by jitcep.codegen.predicates; do not edit",
        "import numpy as np",
        "from numba import njit",
        "# NUMBA_FLAGS: given by the loader (jitcep.codegen.cache), which knows whether a disk cache is safe",
        ARITH_IMPORT,
        "",
        "",
        "@njit(**NUMBA_FLAGS)",
        f"def predicates({', '.join(params)}):",
        "    m = P.shape[1]",
        "    n_events = len(ts)",
        *body,
        "    return True",
        "",
    ])
    return src, tuple(used), strings


class PredicateSet:
    """The compiled predicates of one pattern, bound per event table with :meth:`bind`."""

    def __init__(self, preds: list[E.Expr], columns: dict[str, ColumnSpec]):
        self.preds = list(preds)
        self.vars = [tuple(sorted(E.variables(p))) for p in self.preds]
        self.source, self.column_names, self.strings = generate_source(self.preds, columns)
        self.columns = columns
        self.fn = load_module(self.source, "jitcep_pred").predicates if self.preds else None
        self.joins: dict = {}  # joins and negations with these predicates in their loop, by layout (codegen)

    def bind(self, table) -> tuple:
        """Arguments after ``(pid, P, out)`` for ``table``: ts, string-literal ranks, columns.

        ``table`` is an EventTable, whose columns are looked up with
        :meth:`~jitcep.events.EventTable.column` (so ``type`` is the type name
        unless the input has such a column), or a view with ``ts`` and a
        ``columns`` dict (the per-list columns of Kleene conditions).  Every
        column must hold one value (and validity) per event of ``table``
        (KernelInputError otherwise): the generated code reads them at positions
        it checks against ``len(ts)``.
        """
        n = len(table.ts)
        lookup = getattr(table, "column", None) or table.columns.__getitem__
        cols = {c: lookup(c) for c in self.column_names}
        for c in self.column_names:
            col = cols[c]
            if len(col.values) != n or (col.valid is not None and len(col.valid) != n):
                raise KernelInputError(f"predicates: column {c!r} does not hold one value per event ({n})")
        str_cols = [c for c in self.column_names if self.columns[c].kind == "str"]
        universe = sorted(set(self.strings).union(*(cols[c].dictionary for c in str_cols)))
        rank = {s: i for i, s in enumerate(universe)}
        S = np.array([rank[s] for s in self.strings] or [0], dtype=np.int64)
        args = [table.ts, S]
        for c in self.column_names:
            col = cols[c]
            args.append(col.values)
            if col.valid is None:
                args += [_ALL_VALID, 0]
            else:
                args += [col.valid, 1]
            if self.columns[c].kind == "str":
                args.append(np.array([rank[s] for s in col.dictionary] or [0], dtype=np.int64))
        return tuple(args)

    def mask(self, pid: int, P: np.ndarray, bound: tuple, threads: int = 1) -> np.ndarray:
        """Whether predicate ``pid`` is TRUE for each column of ``P`` (k x m event positions).

        ``threads``: the columns are split into up to that many ranges tested side by side (the
        generated function runs without the GIL; each candidate's answer is its own).  One thread calls
        the function directly: the ranges and their closure were a fifth of each of the planner's small
        calls (:func:`jitcep.plan.planner.sampling.estimate`).
        """
        m = P.shape[1]
        out = empty(m, np.bool_)  # NumPy-allocated, huge-page sized when large (jitcep.kernels.alloc)
        if m:
            if P.shape[0] != len(self.vars[pid]):
                raise KernelInputError(f"predicates: {P.shape[0]} rows of positions for {len(self.vars[pid])} variables")
            if threads <= 1:
                ok = self.fn(pid, np.ascontiguousarray(P, dtype=np.int64), out, *bound)
            else:
                def test(a: int, b: int) -> bool:
                    return self.fn(pid, np.ascontiguousarray(P[:, a:b], dtype=np.int64), out[a:b], *bound)
                ok = all(run_ranges(test, even_ranges(m, threads)))
            if not ok:
                raise KernelInputError("predicates: a candidate position lies outside the event table")
        return out


class KeptPredicateSets:
    """Predicate sets kept instead of generated again on every run (an analyst reruns one query; the
    source costs ~0.5 ms to generate and load): per the objects the predicates are read from, told apart
    by identity as :mod:`jitcep._memo` tells patterns apart (as values ``1 == 1.0``, so trees equal as
    values may differ in literal kinds; the entry holds the objects, so no id is reused while it lives),
    and under them per column specs.  The run keys a plan's set by its root and constants
    (:mod:`jitcep.execute.state`), the planner's sample by the logical plan
    (:mod:`jitcep.plan.planner.sampling`)."""

    def __init__(self):
        self._kept = PerObjectAndKey(ident=lambda objs: tuple(map(id, objs)))

    def __call__(self, sources: tuple, preds: list, specs: dict[str, ColumnSpec]) -> PredicateSet:
        """The predicate set of ``preds`` over columns ``specs``; ``preds`` read from ``sources`` (the same
        predicates, in the same order, whenever the sources are the same objects)."""
        return self._kept(sources, tuple(sorted(specs.items())), lambda: PredicateSet(preds, specs))


def loop_params(pset: PredicateSet) -> list[str]:
    """The arguments of a function generated with :func:`loop_tests` after its own: the bound columns of
    ``pset`` (:meth:`PredicateSet.bind`'s tuple)."""
    params = ["ts", "S"]
    for i, c in enumerate(pset.column_names):
        params += [f"c{i}", f"v{i}", f"s{i}"] + ([f"l{i}"] if pset.columns[c].kind == "str" else [])
    return params


def loop_tests(pset: PredicateSet, pids, read, fail: str, pad: str = " " * 16) -> str:
    """Lines testing predicates ``pids`` of ``pset`` on one binding inside a generated loop (a join's or a
    negation's, :mod:`jitcep.codegen.join_where`, :mod:`jitcep.codegen.negation_where`): variable ``v``'s
    event position is the expression ``read(v)``; a predicate that is not TRUE goes on to the loop's next
    item (``continue``); a position past the table runs the statement ``fail``; a predicate with an
    unbound variable (an OR branch not taken) does not apply (semantics section 4, as
    ``RunState.mask_where_bound``).  The code is :class:`_Gen`'s, over the function's
    :func:`loop_params`, so a predicate means what the predicate function makes it mean."""
    strings = list(pset.strings)  # every literal is there already: S's ranks keep their slots
    col_index = {c: i for i, c in enumerate(pset.column_names)}
    lines = []
    for pid in pids:
        pred = pset.preds[pid]
        gen = _Gen(pset.columns, col_index, strings, pid)
        vs = sorted(E.variables(pred))
        assert vs, "a predicate in a loop reads a variable (the logical plan keeps constants apart)"
        val, ok, _ = gen.boolean(pred, {v: k for k, v in enumerate(vs)})
        slots = [gen.slot(k) for k in range(len(vs))]
        lines += [f"{pad}{s} = {read(v)}" for s, v in zip(slots, vs)]
        lines.append(f"{pad}if {' and '.join(f'{s} >= 0' for s in slots)}:")
        lines.append(f"{pad}    if {' or '.join(f'{s} >= n_events' for s in slots)}:")
        lines.append(f"{pad}        {fail}")
        lines += [f"{pad}    {line}" for line in gen.lines]
        lines.append(f"{pad}    if not ({ok} and {val}):")
        lines.append(f"{pad}        continue")
    assert strings == pset.strings, "a literal outside the predicate set"
    return "\n".join(lines) + "\n"
