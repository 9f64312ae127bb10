"""Statistics a cost model reads: arrival rates, selectivities, key partitions (issue 14).

Kolchinsky & Schuster (2018, sections 3 and 6.2) and ZStream (section 5.1,
Table 1) cost a plan from each event type's arrival rate ``r`` (ZStream's
``R_E * P_E``: after the type test and the single-class filters) and each
multi-class predicate's selectivity; :class:`Statistics` holds them for one
pattern, named as the pattern names them:

- ``rates[v]`` for every variable ``v`` (positive, negated, the closure's):
  events per unit of the window measure within one key partition, after
  ``v``'s type test and single-variable filter (and without a null key).
  The measure is the timestamp for a time window (or none) and the position
  for a count window, where a rate is events per position.
- ``selectivities[text]`` for every conjunct over several variables (a join
  predicate, a negation condition, a closure's member-wise, iterative or
  list conjunct), keyed by its pattern text (:func:`conjunct_texts`): the
  probability that it holds for a tuple of candidate events (each passing
  its type test and filter) within the window and the key partition.
- ``partitions``: the number of key partitions holding events, counted as
  ``1 / sum(s_p^2)`` (``s_p``: partition p's share of the events): the number
  of equal partitions in which two events share a key as often (the exact
  count for uniform partitions; what the join estimates need, since records
  only join within a partition).  1 without a key.
- ``skew``: the largest partition's share over the mean share (1 = uniform).
  No cost reads it: ``partitions``, counted from the share of equal pairs,
  already carries the skew a join of two sides sees; it is shown in
  ``explain`` so an uneven key is visible.
- ``extent``: the table's length in the window measure (ts units, or
  positions per stream), so estimates scale from one window to the table;
  None when not known (user statistics alone).
- ``events``: the table's events (its positions), what a pass over arrays
  indexed by position reads (the final join's rows, :mod:`jitcep.plan.rules.join_driver`);
  None when not known (user statistics alone).
- ``sources``: where each number came from, ``"sampled"``, ``"counted"``
  (a rate from an exact count of its types' events, with no sampled share
  kept by a filter or a key), ``"user"`` or ``"default"``, keyed as
  ``rates`` / ``selectivities`` are, plus
  ``"(partitions)"`` and ``"(skew)"`` (parentheses: no variable or
  conjunct has that text).

:func:`jitcep.plan.planner.sampling.estimate` estimates them from the
table; :func:`from_user` takes the user's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping

import numpy as np

from ...errors import PatternError, StatisticsError
from ...pattern import expr as E
from ...pattern.ast import CountWindow, TimeWindow
from ...pattern.expr import map_expr
from ...pattern.parser import parse_expr
from ...pattern.printer import expr_to_text
from ..kleene_refs import display_expr
from ..logical import LogicalPlan

WindowMeasure = Literal["time", "count"]

DEFAULT_RATE = 1.0
DEFAULT_SELECTIVITY = 0.5
PARTITIONS, SKEW = "(partitions)", "(skew)"


@dataclass(frozen=True)
class Statistics:
    """Rates, selectivities, key partitions of one pattern (see the module docstring)."""

    rates: dict[str, float]
    selectivities: dict[str, float]
    partitions: int = 1
    skew: float = 1.0
    sources: dict[str, str] = field(default_factory=dict)
    extent: float | None = None
    events: float | None = None


# --- what a pattern has statistics for -------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """A variable's events: ``types`` (None: any) passing ``filter``; ``kind`` "positive", "negated"
    or "closure"."""

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None
    kind: str


@dataclass(frozen=True)
class Conjunct:
    """A conjunct over several variables as the logical plan holds it (``expr``, whose variables may
    include :func:`~jitcep.plan.kleene_refs.prev_var`), its class ("join", "negation", "member", "prev",
    "list") and the variables it reads, sorted (the rows of a :class:`~jitcep.codegen.PredicateSet`)."""

    expr: E.Expr
    kind: str
    vars: tuple[str, ...]


def leaves(logical: LogicalPlan) -> dict[str, Leaf]:
    """Every variable with statistics: positive ones in pattern order, then negated ones, then the closures'
    and the groups' variables."""
    out = {v: Leaf(v, t, logical.filters.get(v), "positive") for v, t in logical.variables.items()}
    for n in logical.negations:
        out[n.var] = Leaf(n.var, n.types, n.filter, "negated")
    for c in logical.closures:
        out[c.var] = Leaf(c.var, c.types, c.filter, "closure")
    for g in logical.groups:
        for v, t, f in zip(g.vars, g.types, g.filters):
            out[v] = Leaf(v, t, f, "group")
    return out


def _canonical(e: E.Expr, kvs: tuple[str, ...]) -> E.Expr:
    """A user's conjunct in the logical plan's form: ``kv[i].x`` is ``kv.x`` (a member-wise reference) for
    each closure variable ``kv`` of ``kvs``."""
    if not kvs:
        return e
    return map_expr(e, lambda x: E.Attr(x.var, x.attr) if isinstance(x, E.Attr) and x.var in kvs and x.index == "i"
                    else None)


def conjunct_texts(logical: LogicalPlan) -> dict[str, Conjunct]:
    """Every conjunct with a selectivity, by its key: the pattern text (:func:`expr_to_text`) of the
    conjunct as the logical plan holds it (what explain prints), an iterative one written with
    ``v[i-1]``; a member-wise reference ``v[i].x`` reads ``v.x``."""
    kv = logical.closure_vars
    found: list[tuple[E.Expr, str]] = [(j, "join") for j in logical.joins]
    found += [(cond, "negation") for n in logical.negations for cond in n.conds]
    for c in logical.closures:
        found += [(m, "member") for m in c.member + c.cross] + [(p, "prev") for p in c.prev]
        found += [(li, "list") for li in c.lists] + [(e, "each") for e in c.each]
    out: dict[str, Conjunct] = {}
    for e, kind in found:
        out.setdefault(expr_to_text(display_expr(e, kv)), Conjunct(e, kind, tuple(sorted(E.variables(e)))))
    return out


def window_extent(window, table) -> tuple[WindowMeasure, float]:
    """(measure, span) of ``window`` on ``table``: a time window's duration in ts units, a count
    window's ``n`` (positions a window holds), and for no window / ``UNBOUNDED`` the table's time
    range (at least 1): every event is in one window."""
    if isinstance(window, CountWindow):
        return "count", float(window.n)
    if isinstance(window, TimeWindow):
        from ...events import window_span  # here, not on top: jitcep.events imports the runtime, which imports this
        return "time", float(window_span(window, table))
    ts = table.ts
    return "time", float(max(int(ts[-1]) - int(ts[0]), 1)) if len(ts) else 1.0


# --- user statistics --------------------------------------------------------------


def from_user(mapping: Mapping, logical: LogicalPlan, base: Statistics | None = None) -> Statistics:
    """Statistics given by the user, merged over ``base`` (usually
    :func:`~jitcep.plan.planner.sampling.estimate`'s).

    The mapping (every key optional)::

        {"rates": {"a": 2.0, "b": 0.01},          # per variable: events per unit of the
                                                  # window measure in one key partition, >= 0
         "selectivities": {"a.x < b.x": 0.1},     # per conjunct text, in [0, 1]
         "partitions": 100,                       # an int >= 1
         "skew": 1.0}                             # a number >= 1

    Variables are any of the pattern's (positive, negated, the closure's);
    a conjunct is written as in the pattern, compared after parsing (``a.x<b.x``
    and ``a.x < b.x`` are one key; ``v[i].x`` and ``v.x`` too): see
    :func:`conjunct_texts`.  Numbers the mapping leaves out keep ``base``'s;
    without ``base``, rates are :data:`DEFAULT_RATE` and selectivities
    :data:`DEFAULT_SELECTIVITY` (source "default").

    Raises :class:`~jitcep.errors.StatisticsError` naming the key for an
    unknown section, variable or conjunct, a rate that is negative or not a
    finite number, a selectivity outside [0, 1], partitions below 1 or not
    an int, a skew below 1.
    """
    if not isinstance(mapping, Mapping):
        raise StatisticsError(f"statistics must be a mapping, got {type(mapping).__name__}")
    unknown = set(mapping) - {"rates", "selectivities", "partitions", "skew"}
    if unknown:
        raise StatisticsError(f"unknown statistics key(s) {sorted(map(str, unknown))}; "
                              f"expected 'rates', 'selectivities', 'partitions', 'skew'")
    known_vars = leaves(logical)
    known_conj = conjunct_texts(logical)
    if base is None:
        base = Statistics({v: DEFAULT_RATE for v in known_vars}, {t: DEFAULT_SELECTIVITY for t in known_conj},
                          sources={**{v: "default" for v in known_vars}, **{t: "default" for t in known_conj},
                                   PARTITIONS: "default", SKEW: "default"})
    rates, sels, sources = dict(base.rates), dict(base.selectivities), dict(base.sources)
    for v, r in _section(mapping, "rates").items():
        if v not in known_vars:
            raise StatisticsError(f"statistics rates: unknown variable {v!r}; the pattern's variables: "
                                  f"{', '.join(known_vars)}")
        r = _number(r, f"rates[{v!r}]")
        if not math.isfinite(r) or r < 0:
            raise StatisticsError(f"statistics rates[{v!r}] = {r!r}: a rate is a finite number >= 0")
        rates[v], sources[v] = r, "user"
    kv = logical.closure_vars
    for text, s in _section(mapping, "selectivities").items():
        key = _conjunct_key(text, known_conj, kv)
        s = _number(s, f"selectivities[{text!r}]")
        if not 0.0 <= s <= 1.0:
            raise StatisticsError(f"statistics selectivities[{text!r}] = {s!r}: a selectivity is in [0, 1]")
        sels[key], sources[key] = s, "user"
    partitions, skew = base.partitions, base.skew
    if "partitions" in mapping:
        p = mapping["partitions"]
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise StatisticsError(f"statistics partitions = {p!r}: an int >= 1")
        partitions, sources[PARTITIONS] = int(p), "user"
    if "skew" in mapping:
        skew = _number(mapping["skew"], "skew")
        if not math.isfinite(skew) or skew < 1:
            raise StatisticsError(f"statistics skew = {skew!r}: a finite number >= 1 (1: uniform partitions)")
        sources[SKEW] = "user"
    return Statistics(rates, sels, partitions, skew, sources, base.extent, base.events)


def _section(mapping: Mapping, name: str) -> Mapping:
    got = mapping.get(name, {})
    if not isinstance(got, Mapping):
        raise StatisticsError(f"statistics {name!r} must be a mapping, got {type(got).__name__}")
    return got


def _number(x, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise StatisticsError(f"statistics {where} = {x!r}: not a number")
    return float(x)


def _conjunct_key(text, known: dict[str, Conjunct], kv: tuple[str, ...]) -> str:
    if not isinstance(text, str):
        raise StatisticsError(f"statistics selectivities: a key is a conjunct's text, got {text!r}")
    if text in known:
        return text
    try:
        key = expr_to_text(_canonical(parse_expr(text), kv))
    except PatternError:
        key = None
    if key not in known:
        listed = "; ".join(known) or "none"
        raise StatisticsError(f"statistics selectivities: unknown conjunct {text!r}; the pattern's multi-variable "
                              f"conjuncts: {listed}")
    return key


def with_defaults(stats: Statistics, logical: LogicalPlan) -> Statistics:
    """``stats`` with a default for every variable or conjunct of ``logical`` it lacks (source "default")."""
    rates, sels, sources = dict(stats.rates), dict(stats.selectivities), dict(stats.sources)
    for v in leaves(logical):
        if v not in rates:
            rates[v], sources[v] = DEFAULT_RATE, "default"
    for t in conjunct_texts(logical):
        if t not in sels:
            sels[t], sources[t] = DEFAULT_SELECTIVITY, "default"
    return replace(stats, rates=rates, selectivities=sels, sources=sources)
