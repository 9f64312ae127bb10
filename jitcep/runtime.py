"""The compiled engine: plan each pattern, then run its physical plan over the event table.

``evaluate(patterns, table, options, plan=None) -> list[MatchTable]`` has the
signature and result of :func:`jitcep.reference.evaluate` (one canonical match
table per pattern).  The data flows one way: pattern AST -> logical plan
(:mod:`jitcep.plan.logical`) -> physical plan (:mod:`jitcep.plan.rules`,
key coding once the table is known) -> the executor
(:mod:`jitcep.execute`), whose operators call the Numba kernels
(:mod:`jitcep.kernels`) and the pattern's generated predicate function
(:mod:`jitcep.codegen`) -> match tables.

What it covers (:func:`check_supported`): SEQ / AND / OR of positive
variables, nested; negations (docs/semantics.md section 7) as elements of
SEQ / AND; Kleene array variables anywhere in SEQ / AND / OR (where nothing
but closures that may all be empty can bind an event, as the union of
alternatives that each bind one, :mod:`jitcep.pattern.nonempty`), under
``kleene="all"`` or ``"maximal"`` (sections 6.1, 6.2), with member-wise,
iterative (``v[i-1]``, under ``"all"``) and list conjuncts (aggregates,
``v[k]``, ``v[v.LEN]``; over two closures, whole lists or every pair of
members; a member with its whole list), also next to negations whose
conditions may read them; every
other predicate kind of section 4; ``[attr]`` keys; time, count and
unbounded windows; the three orders; every selection strategy (those other
than ``"skip_till_any_match"`` as NFA^b runs over singleton states, section 8:
:mod:`jitcep.plan.rules.nfa_runs`); every output policy with ``consume_types``,
``contiguous`` and ``freeze`` (section 9).  Anything else raises
:class:`~jitcep.errors.UnsupportedPatternError` *before* any work, so the
caller can fall back to the reference evaluator; this engine never returns
an answer for a pattern it does not cover.

A ``partition_by=`` table (independent streams, docs/semantics.md section 13)
runs in the same single call: partitions are (stream, ``[attr]`` key) pairs,
so joins never mix streams, and a count window measures positions inside the
stream.  Results equal :func:`jitcep.events.evaluate_per_partition` over this
engine, without a Python call per stream.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from . import config, first_run
from ._memo import PerObject, PerObjectAndKey
from .errors import ExplosionError, MissingWindowError, StatisticsError, UnsupportedPatternError
from .events import EventTable, check_types, window_span
from .execute import Profile, TableContext, execute
from .kernels.window import MAX_SPAN, most_per_window
from .matches import MatchTable
from .options import Options
from .pattern.ast import CountWindow, EventVar, Pattern, Seq, TimeWindow
from .pattern.combinations import check_combination
from .plan.planner.algorithms import auto
from .plan.planner.sampling import estimate, type_layout
from .plan.planner.statistics import from_user, window_extent
from .plan.logical import logical_plan
from .plan.operators import PhysicalPlan
from .plan.positive_structure import needs_alternatives
from .plan.rules import counted_choices, physical_plan
from .plan.rules.disjuncts import alternatives_plan
from .plan.rules.semijoin_reduction import left_out, reads_counts

_logical = PerObject(logical_plan)  # an analyst reruns one query (jitcep._memo)
_alternatives = PerObject(needs_alternatives)  # asked three times a run: each walk flattened the body
_default = PerObjectAndKey()  # per pattern: (options, tuning constants[, what]) -> the default physical plan
# per logical plan: (options, statistics, span, budget) -> the planner's plan, a few tables' statistics
_searched = PerObjectAndKey(keep=8)


def _tuning() -> tuple:
    """The values of every scalar tuning constant (jitcep/config.py): part of a kept plan's key, so that a
    bench or test that sets one between runs (perf/bench_reduction.py) gets the plan the new value makes,
    whichever constants the rules come to read (all of them: their names found once, 17 -> 1 us a run)."""
    return tuple(map(vars(config).get, _TUNING))


_TUNING = tuple(n for n, v in vars(config).items() if n.isupper() and isinstance(v, (bool, int, float, str)))


def _planned(pattern: Pattern, options: Options, plan_one, plan_alternative=None) -> PhysicalPlan:
    """``plan_one(logical, options)`` of the pattern's logical plan; where that refuses a part of the
    pattern that may bind nothing (closures that may all be empty), the union of its alternatives' plans,
    each made by ``plan_alternative`` (default ``plan_one``)
    (:func:`~jitcep.plan.rules.disjuncts.alternatives_plan`)."""
    try:
        logical = _logical(pattern)
    except UnsupportedPatternError as refusal:
        if not _alternatives(pattern):
            raise
        plan_alternative = plan_alternative or plan_one
        return alternatives_plan(pattern, options, lambda alt, o: plan_alternative(
            logical_plan(alt.pattern, alt.in_conj), o), refusal)
    return plan_one(logical, options)


def default_plan(pattern: Pattern, options: Options) -> PhysicalPlan:
    """The pattern's physical plan under ``options`` with the default join shape (kept per pattern object and
    tuning constants: the rules read some, e.g. ``DNF_MAX_ALTERNATIVES``)."""
    return _default(pattern, (options, _tuning()), lambda: _planned(pattern, options, physical_plan))


def check_supported(pattern: Pattern, options: Options) -> PhysicalPlan:
    """Raise UnsupportedPatternError if this engine does not cover ``pattern`` under ``options``.

    Returns the pattern's default plan (building it is part of the check); a pattern that passed is
    not checked again under the same options (a run asks twice, and the check is a function of them).
    """
    return _default(pattern, (options, _tuning(), "supported"), lambda: _checked(pattern, options))


def _checked(pattern: Pattern, options: Options) -> PhysicalPlan:
    """:func:`check_supported`'s checks, then the default plan."""
    if pattern.window is None:
        raise MissingWindowError("the pattern has no WITHIN; write WITHIN UNBOUNDED to ask for no window")
    check_combination(pattern, options)  # what the semantics leaves undefined, as the reference refuses it
    # default_plan raises for what the logical plan refuses (Kleene references it cannot place,
    # cross-branch predicates ...), unless the pattern is planned as alternatives
    logical = None if _alternatives(pattern) else _logical(pattern)
    if logical is not None and any(c.prev for c in logical.closures) and options.kleene == "maximal":
        raise UnsupportedPatternError("kleene=\"maximal\" takes every qualifying event, so an iterative predicate "
                                      "(v[i-1]) cannot hold between them (semantics section 6.2)")
    return default_plan(pattern, options)


def plans_for(patterns, options: Options, plan=None) -> list[PhysicalPlan]:
    """The physical plan of each pattern (checked with :func:`check_supported`), before any work.

    ``plan``: None (default plan per pattern), or for each pattern a
    :class:`~jitcep.plan.operators.PhysicalPlan` or a plan shape (nested
    pairs of variable names), as one item for a single pattern or a list with
    one entry per pattern.
    """
    patterns = [patterns] if isinstance(patterns, Pattern) else list(patterns)
    if plan is None or isinstance(plan, (PhysicalPlan, str, tuple)):
        if len(patterns) != 1 and plan is not None:
            raise UnsupportedPatternError("give one plan per pattern (a list) when running several patterns")
        given = [plan] * len(patterns)
    else:
        given = list(plan)
        if len(given) != len(patterns):
            raise UnsupportedPatternError(f"{len(given)} plans for {len(patterns)} patterns")
    out = []
    for pat, p in zip(patterns, given):
        default = check_supported(pat, options)
        out.append(p if isinstance(p, PhysicalPlan) else default if p is None
                   else physical_plan(_logical(pat), options, p))
    return out


SMALL_TABLE = 4096
"""``planner="auto"`` plans a table of fewer events (or no table: ``explain`` without events) by rule,
left-deep in pattern order, unless the user gives statistics: estimating and searching cost ~0.5-3 ms
(3-8 units), as much as running a table that small (perf/notes/statistics.md "Planner statistics")."""


PLAN_MIN_WORK = 1 << 18
"""``planner="auto"`` plans by rule (left-deep in pattern order) a SEQ of event variables over a table
whose default plan builds fewer partial matches than this, bounded by :func:`small_work`: estimating
and searching cost ~1.5-2 ms (3 variables, more with more), more than such joins take (perf/notes/fixed_costs.md
"Per-run fixed costs against DuckDB and Polars")."""


SMALL_WORK_TABLE = 1 << 15
""":func:`small_work` is checked on tables under this many events: its passes over the type codes and
the ts cost ~0.1-0.3 ms there, against ~2 ms at 200,000 events (under load), as much as the planning it
would save, on tables whose runs take long enough that planning is a small share."""


def small_work(logical, table: EventTable, counted=None) -> str | None:
    """Why ``auto`` plans ``logical`` on ``table`` by rule (:data:`PLAN_MIN_WORK`), with the numbers and
    where they come from as ``explain`` shows them; None when it estimates and searches.

    For ``SEQ(v0, ..., vk)`` of event variables (nothing else), left-deep in pattern order: a partial
    match of ``v0..vj`` is an event of v0's types and, for each later variable, one of its events in the
    window after it, so there are at most ``n0 * w1 * ... * wj`` of them, ``n0`` the events of v0's
    types and ``wi`` a bound on the events of vi's types one window holds (:func:`pattern_order_counts`).
    Their sum over the prefixes is the bound.
    Types, not predicates or keys: those only lower the real count.  Checked only on tables under
    :data:`SMALL_WORK_TABLE` events (this test runs before every small table's plan, so it must cost
    little beside the run).  ``counted``: :func:`pattern_order_counts` of the two, when made."""
    if table.n >= SMALL_WORK_TABLE:
        return None
    counted = counted or pattern_order_counts(logical, table)
    if counted is None:
        return None
    counts = counted[1]
    bound = _prefix_sum(counts[0], counts[1:])
    if bound >= PLAN_MIN_WORK:
        return None
    return (f"pattern order, no statistics: at most {bound} partial matches in pattern order "
            f"(events of the first variable's types, then the most of each next variable's types in "
            f"one window: {' x '.join(map(str, counts))}, summed over the prefixes), under "
            f"{PLAN_MIN_WORK} (runtime.PLAN_MIN_WORK): estimating and searching would cost more than "
            "any join order saves")


def pattern_order_counts(logical, table: EventTable) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """For ``SEQ(v0, ..., vk)`` of event variables (nothing else): the events of each variable's types,
    and ``(n0, w1, ..., wk)``, ``n0`` the events of v0's types and ``wi`` a bound on the events of vi's
    types one window holds (the most in two adjacent bins of width span + 1; a count window's length
    at most); None for any other pattern or an empty table.  One compiled pass over the type codes and
    ts for every variable (:func:`jitcep.kernels.window.most_per_window`: as NumPy steps it was 10% of a
    10,000-event run).  What :func:`small_work` and the semi-join reduction's rule without statistics
    read (:attr:`jitcep.plan.rules.Planning.counts`)."""
    body, n = logical.positive, table.n
    if (logical.closures or not n or not isinstance(body, Seq)
            or not all(isinstance(v, EventVar) for v in body.items)):
        return None
    window = logical.window
    span = window_span(window, table) if isinstance(window, TimeWindow) else None
    # the SEQ's variables are the leaves' first rows, in its order (type_layout)
    allowed = type_layout(logical, table.type_names)[1][:len(body.items)]
    sizes, most = most_per_window(table.type_code, table.ts, allowed, MAX_SPAN if span is None else span)
    sizes, most = sizes.tolist(), most.tolist()
    counts = [sizes[0]]
    for k, w in zip(sizes[1:], most[1:]):
        counts.append(min(k, window.n) if isinstance(window, CountWindow) else k if span is None else w)
    return tuple(sizes), tuple(counts)


def _counted(pattern: Pattern, options: Options, counted, note: str | None = None) -> PhysicalPlan:
    """The default plan made with what the rules read of the table without statistics
    (:func:`pattern_order_counts`), with ``note`` (:func:`small_work`'s) as its first planner note.
    Kept per pattern, options and what the rules decide from the counts
    (:func:`~jitcep.plan.rules.counted_choices`), not the counts themselves: a table of another size
    reuses the plan (a copy of the plan was a fifth of a small run's planning).  The reduction's reason
    is the plan's last note and holds the numbers of the table it was made on: the plan with a table's
    notes is kept per plan, counts and ``note`` (a rerun on one table formats no note)."""
    key = (options, _tuning(), "counted", counted_choices(counted))
    first, got = _default(pattern, key, lambda: (left_out(counted), _planned(pattern, options, functools.partial(
        physical_plan, counts=counted))))  # first: the reason on the table the plan was made on, if noted

    def noted() -> PhysicalPlan:
        notes = ((note,) if note is not None else ()) + (
            got.notes[:-1] + (left_out(counted),) if first is not None and got.notes[-1:] == (first,)
            else got.notes)
        return got if notes == got.notes else dataclasses.replace(got, notes=notes)
    return _NOTED(got, (counted, note), noted)


_NOTED = PerObjectAndKey(keep=8)  # per plan made on counts (and tuning): (counts, note) -> the plan with their notes


def _prefix_sum(first: int, factors: list[int]) -> int:
    """``first * f1 + first * f1 * f2 + ...``: the partial matches of every prefix past the first."""
    total, prefix = 0, first
    for f in factors:
        prefix *= f
        total += prefix
    return total


def costed(pattern: Pattern, options: Options, table: EventTable | None, statistics=None,
           ctx: TableContext | None = None) -> PhysicalPlan:
    """The plan ``options.planner`` chooses for ``pattern`` on statistics of ``table`` overridden by the
    user's ``statistics``; without a table, on the user's numbers and defaults alone (for ``explain``).
    Under "auto" a small table or none, without ``statistics``, keeps the default plan (:data:`SMALL_TABLE`),
    as does a table whose joins are bounded small (:func:`small_work`, with its reason as the plan's note),
    and the search's budget scales with the table (:func:`~jitcep.plan.planner.algorithms.auto.budget_for`).
    ``ctx``: the run's table context, whose grouping by type gives the estimate a rare type's exact count
    and positions (the ``groups`` of :func:`~jitcep.plan.planner.sampling.estimate`)."""
    if options.planner == "auto" and statistics is None:
        if table is None:
            return default_plan(pattern, options)
        # under SMALL_TABLE only the reduction's rule reads the counts: counted where it may
        counted = (None if table.n >= SMALL_WORK_TABLE or _alternatives(pattern) or (
            table.n < SMALL_TABLE and not reads_counts(_logical(pattern), options))
                   else pattern_order_counts(_logical(pattern), table if ctx is None else ctx.sampled_table()))
        if table.n < SMALL_TABLE:
            return default_plan(pattern, options) if counted is None else _counted(pattern, options, counted)
        note = None if counted is None else small_work(_logical(pattern), table, counted)
        if note is not None:
            return _counted(pattern, options, counted, note)

    def plan_one(logical, options, given=statistics):
        if table is None:
            return physical_plan(logical, options, None, from_user(given or {}, logical), 1.0)
        measure, span = window_extent(logical.window, table)
        groups = None if ctx is None else functools.partial(ctx.grouped, logical.key)
        sampled = table if ctx is None else ctx.sampled_table()  # its types numbered as ctx.grouped's
        stats = estimate(logical, sampled, window_measure=measure, span=span, groups=groups)
        if given is not None:
            stats = from_user(given, logical, base=stats)
        budget = auto.budget_for(table.n) if options.planner == "auto" else None
        return searched(logical, options, stats, span, budget)
    # the user's statistics name the pattern's variables and conjuncts, not an alternative's: each
    # alternative is planned on its own sampled numbers
    return _planned(pattern, options, plan_one, lambda logical, options: plan_one(logical, options, None))


def searched(logical, options: Options, stats, span: float, budget: int | None) -> PhysicalPlan:
    """``physical_plan(logical, options, None, stats, span, budget)``, kept per logical plan and the
    values of its inputs (and of the tuning constants, :func:`_tuning`): the plan is a
    function of them alone, and an analyst reruns one query on one table, whose sample gives the same
    statistics each time.  The search and the rules cost 0.5-1 ms
    per run for a SEQ of 3 and ~12 ms for a SEQ of 24 at 10^6 events (perf/notes/planning_time.md)."""
    key = (options, _statistics_key(stats), span, budget, _tuning())
    return _searched(logical, key, lambda: physical_plan(logical, options, None, stats, span, budget))


def _statistics_key(stats) -> tuple:
    """The values of a :class:`~jitcep.plan.planner.statistics.Statistics` as a hashable tuple."""
    return (tuple(stats.rates.items()), tuple(stats.selectivities.items()), stats.partitions, stats.skew,
            tuple(stats.sources.items()), stats.extent, stats.events)


def prepare(patterns, table: EventTable, options: Options, plan=None,
            statistics=None, threads: int = 1) -> tuple[TableContext, list[PhysicalPlan]]:
    """The run's table context and each pattern's plan with its key coding (the rule that needs the table),
    after every check that comes before any work.

    With a planner other than "trivial", a pattern without a given plan is
    planned on statistics estimated from ``table``, overridden by
    ``statistics`` (a mapping, :func:`jitcep.plan.planner.statistics.from_user`;
    several patterns: a list with one mapping or None per pattern).
    ``threads``: the table context's passes over the events split over that many (:mod:`jitcep.threads`).

    With a planner, the table context is made first, from the default plans
    (the planner changes which joins, not which leaves), and, where its first
    grouping by type holds every leaf type whatever the plan
    (:meth:`~jitcep.execute.tables.TableContext.first_batch_fixed`), its key
    codes and that grouping made (:meth:`~jitcep.execute.tables.TableContext.prefetch`):
    the run needs them whatever the plan, and the planner reads a rare
    type's exact count and positions from that grouping instead of passing
    over the type column (:func:`costed`).  The planned plans reuse the context when they read the
    same types under the same keys (:meth:`~jitcep.execute.tables.TableContext.adopt`).
    """
    patterns = [patterns] if isinstance(patterns, Pattern) else list(patterns)
    plans = plans_for(patterns, options, plan)
    check_types(patterns, table)  # every pattern's kinds (semantics section 4), before any work
    user = check_statistics(statistics, patterns)
    ctx = None
    if options.planner != "trivial":
        given = plan if isinstance(plan, list) else [plan] * len(patterns)
        ctx = TableContext(table, plans, threads)
        early = ctx if ctx.first_batch_fixed() else None
        if early is not None:
            early.prefetch()
        plans = [costed(pat, options, table, u, early) if g is None else p
                 for pat, p, g, u in zip(patterns, plans, given, user)]
    if ctx is None or not ctx.adopt(plans):
        ctx = TableContext(table, plans, threads)
    return ctx, [_with_coding(p, ctx.coding[p.key][0]) for p in plans]


_CODED = PerObjectAndKey()  # per plan: key coding -> the plan with it


def _with_coding(plan: PhysicalPlan, coding) -> PhysicalPlan:
    """``plan`` with its key coding set (for explain), kept per plan and coding: a copy walks the tree
    (``PhysicalPlan.__post_init__``), a tenth of a small run's planning calls."""
    return _CODED(plan, coding, lambda: dataclasses.replace(plan, key_coding=coding))


def check_statistics(statistics, patterns) -> list:
    """The user's statistics as one mapping (or None) per pattern, each checked against its pattern
    (:func:`~jitcep.plan.planner.statistics.from_user`) before any work; StatisticsError otherwise.

    A pattern the compiled engine does not plan (it runs on the reference
    evaluator) has no plan for them to inform: its entry is not checked.
    """
    patterns = [patterns] if isinstance(patterns, Pattern) else list(patterns)
    n = len(patterns)
    if statistics is None:  # nothing to check (a run asks three times)
        return [None] * n
    if isinstance(statistics, Mapping):
        if n != 1:
            raise StatisticsError("several patterns run: give statistics= as a list with one mapping (or None) "
                                  "per pattern")
        given = [statistics] * n
    elif isinstance(statistics, (list, tuple)) and len(statistics) == n:
        given = list(statistics)
    else:
        raise StatisticsError(f"statistics= takes a mapping, or a list of {n} (one per pattern), got {statistics!r}")
    for pattern, mapping in zip(patterns, given):
        if mapping is not None:
            try:
                logical = _logical(pattern)
            except UnsupportedPatternError:
                continue
            from_user(mapping, logical)
    return given


def evaluate(patterns, table: EventTable, options: Options, plan=None,
             profile: Profile | None = None, statistics=None, threads: int = 1) -> list[MatchTable]:
    """Matches of each pattern over ``table``, canonical order (same contract as the reference).

    ``plan``: as :func:`plans_for` takes it.  ``profile``: collects each
    operator's records and time (``explain(analyze=True)``).  ``statistics``:
    the user's numbers for the planner, as :func:`prepare` takes them.
    ``threads``: how many threads the passes and joins may use (:mod:`jitcep.threads`;
    the matches do not depend on it).

    Raises UnsupportedPatternError (before any work) for what the engine does
    not cover, ExplosionError past ``options.max_partials`` candidate pairs in
    one join or ``options.max_matches`` matches in total.
    """
    ctx, plans = prepare(patterns, table, options, plan, statistics, threads)
    first_run.notice()  # the kernels' first compilation takes seconds: say so on a terminal
    out, total = [], 0
    for pl_ in plans:
        if profile is not None:
            profile.plans.append(pl_)
        mt, found = execute(pl_, ctx, options, profile, threads)
        total += found  # before an output policy chose among them (docs/semantics.md section 12)
        if total > options.max_matches:
            raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                                 f"or narrow the pattern")
        out.append(mt)
    first_run.mark_cached()
    return out
