"""The reference evaluator: the executable form of docs/semantics.md.

Brute force on purpose: every other engine path is tested against it, so it
must be obviously correct rather than fast.  Layout:

- :mod:`.exprs`       predicate interpretation, SQL three-valued logic (§4)
- :mod:`.analysis`    pattern checks and precomputation (§2–§7)
- :mod:`.candidates`  per-variable candidate lists, order and window bounds (§1–§3)
- :mod:`.search`      enumeration under skip-till-any-match, Kleene modes (§5–§6)
- :mod:`.negation`    negation ranges (§7)
- :mod:`.nfa`         NFA^b runs for the other selection strategies (§8)
- :mod:`.policies`    output policies, contiguous, freeze (§9)
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import ExplosionError
from ..events import check_types
from ..matches import MatchTable
from ..options import Options
from ..pattern.ast import Pattern
from ..pattern.combinations import check_combination
from ..streams import evaluate_per_partition
from .analysis import analyze
from .exprs import Ctx
from .negation import negations_hold
from .nfa import NfaRuns
from .policies import active_candidates, contiguous_ok, select
from .search import AnyMatchSearch, Budget

__all__ = ["evaluate"]


def evaluate(patterns, table, options: Options | None = None) -> list[MatchTable]:
    """Every match of each pattern over ``table`` (an EventTable), one canonical MatchTable per pattern.

    Bindings: a single positive variable -> position; a Kleene variable or a
    variable inside a Kleene group -> tuple of positions (group members
    aligned by iteration); an OR branch not taken -> None (semantics §3).
    A table partitioned by ``partition_by=`` is evaluated group by group
    (§13).  Caps (§12) raise ExplosionError; undefined patterns raise the
    named PatternValidationError subclasses.
    """
    try:
        return _evaluate(patterns, table, options)
    except RecursionError:
        # the search binds one event per level of recursion (search.py): a list or pattern deeper than
        # Python's stack is a cap like any other (§12), never a crash
        raise ExplosionError(
            f"the reference evaluator went deeper than Python's recursion limit ({sys.getrecursionlimit()}) "
            f"while binding one match: a Kleene list or pattern of hundreds of events; bound the closure "
            f"({{n,m}}) or run it on the compiled engine") from None


def _evaluate(patterns, table, options: Options | None) -> list[MatchTable]:
    if isinstance(patterns, Pattern):
        patterns = [patterns]
    options = options if options is not None else Options()
    check_types(patterns, table)  # kinds of values (§4), for every pattern before any match is searched
    budget = Budget(options)
    if table.partition is not None and table.partition.independent:
        # partition_by (§13): every group is a stream of its own; one budget for all
        return evaluate_per_partition(
            lambda sub: [_evaluate_one(p, sub, options, budget) for p in patterns], table)
    out = []
    for pattern in patterns:
        out.append(_evaluate_one(pattern, table, options, budget))
    return out


def _evaluate_one(pattern: Pattern, table, options: Options, budget: Budget) -> MatchTable:
    info = analyze(pattern, table)
    check_combination(pattern, options)
    if any(c.fn(Ctx(table, {}, {})) is not True for c in info.constants):
        # a conjunct that mentions no variable applies to every match and holds only if TRUE (§4)
        return MatchTable.from_bindings([], info.single, info.lists).canonical()
    results: dict = {}
    matcher_cls = AnyMatchSearch if options.strategy == "skip_till_any_match" else NfaRuns

    def emit():
        m = matcher
        if not m.trail:
            return  # a match binds at least one positive event (§3)
        binding = {}
        for v in info.positive:
            x = m.b[v]
            binding[v] = tuple(x) if isinstance(x, list) else x
        if options.contiguous and not contiguous_ok(binding, options.contiguous):
            return
        if not negations_hold(m):
            return
        key = tuple(binding[v] for v in info.positive)
        if key not in results:
            budget.match()
            results[key] = binding

    matcher = matcher_cls(info, table, options, budget, emit)
    for v in options.freeze:  # freeze (§9): only active candidates may bind v; a filter, pushed down
        active = active_candidates(info, table, v)
        keep = [p for p in matcher.cand[v].tolist() if p in active]
        matcher.cand[v] = np.asarray(keep, dtype=np.int64)
        matcher.cand_ts[v] = table.ts[matcher.cand[v]]
        if hasattr(matcher, "cand_sets"):
            matcher.cand_sets[v] = set(keep)
    matcher.run()
    mt = MatchTable.from_bindings(list(results.values()), info.single, info.lists).canonical()
    return select(mt, info, table, options)
