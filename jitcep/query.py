"""The public entry point: ``jitcep.compile(pattern, **options) -> Query`` and ``Query.run``.

Data flows one way (DESIGN.md section 1): text or builder -> validated pattern
AST -> event table -> an engine's match tables -> a Polars DataFrame
(:mod:`jitcep.output`).  Everything that can be checked without data (pattern
syntax and meaning, options) is checked by :func:`compile`; everything that
needs the data (columns, timestamps) by :meth:`Query.run`, before any output
exists.
"""

from __future__ import annotations

import warnings
from dataclasses import fields
from functools import partial
from typing import Any, Iterable

import polars as pl

from ._typing import Engine, ExplainFormat, Shape, TimeUnit
from .errors import ExplosionError, FallbackWarning, OptionError, PatternError, UnsupportedPatternError
from .kernels.alloc import Pools
from .options import Options, check_choice, check_run_arguments
from .pattern.ast import Pattern
from .pattern.parser import parse_many
from .pattern.validate import validate
from .threads import available

PatternLike = Any  # str | Pattern | builder (anything with .build() -> Pattern)


def _as_patterns(pattern: PatternLike) -> list[Pattern]:
    if isinstance(pattern, str):
        return parse_many(pattern)  # one text may hold several ';'-separated patterns
    if isinstance(pattern, Pattern):
        return [pattern]
    build = getattr(pattern, "build", None)
    if callable(build):
        built = build()
        if not isinstance(built, Pattern):
            raise PatternError(f"{type(pattern).__name__}.build() returned {type(built).__name__}, not a Pattern")
        return [built]
    if isinstance(pattern, (list, tuple)):
        out: list[Pattern] = []
        for item in pattern:
            if isinstance(item, (list, tuple)):
                raise PatternError("nested lists of patterns are not accepted; pass one flat list")
            out.extend(_as_patterns(item))
        return out
    raise PatternError(
        f"cannot compile a {type(pattern).__name__}: pass pattern text, a Pattern, a builder "
        "(an object with .build()) or a list of them")


def _engine(name: str, *, stacklevel: int = 1):
    """The ``evaluate(patterns, table, options) -> list[MatchTable]`` of an engine.

    ``"reference"``: the executable semantics.  ``"compiled"``: :func:`evaluate_compiled`,
    which runs what the compiled engine covers and the rest on the reference with a
    :class:`~jitcep.errors.FallbackWarning`; ``"auto"``: the same without the warning.
    """
    check_choice("engine", name, Engine)
    if name == "reference":
        from .reference import evaluate
        return evaluate
    return partial(evaluate_compiled, warn=name == "compiled", stacklevel=stacklevel)


_ARGUMENTS: dict[tuple, dict] = {}  # checked run arguments by their values and types (jitcep.options)


def _run_arguments(**arguments) -> dict:
    """:func:`~jitcep.options.check_run_arguments`, kept for arguments of plain values (names, numbers,
    None, tuples of names) by their values and types (``1`` and ``True`` differ): a rerun passes the
    same ones, and checking them was ~1-2% of a small run.  ``threads=None`` is the cores the process may
    run on now (its affinity may change), so it is asked each time."""
    if not all(v is None or type(v) in (str, int) or (type(v) is tuple and all(type(x) is str for x in v))
               for v in arguments.values()):
        return check_run_arguments(**arguments)  # a list, a float...: checked (and refused) as given
    key = tuple((k, type(v), v) for k, v in arguments.items())
    got = _ARGUMENTS.get(key)
    if got is None:
        got = check_run_arguments(**arguments)  # an error is raised every time, never kept
        if len(_ARGUMENTS) >= 64:
            _ARGUMENTS.clear()
        _ARGUMENTS[key] = got
    return {**got, "threads": available()} if arguments.get("threads", 0) is None else dict(got)


def evaluate_compiled(patterns, table, options: Options, *, warn: bool = True,
                      stacklevel: int = 1, statistics=None, threads: int = 1) -> list:
    """Match tables of ``patterns`` over ``table``: compiled where covered, reference elsewhere.

    Same contract as :func:`jitcep.reference.evaluate`.  Each pattern is checked
    with :func:`jitcep.runtime.check_supported` (what it does not compile yet
    is listed in its module docstring); the ones it refuses run
    on the reference evaluator, announced by one FallbackWarning naming the
    reason, so an uncovered pattern costs time, never a wrong answer.  The
    runtime also refuses (before any work) what it meets only with the table;
    that falls back the same way.  Both engines evaluate ``partition_by`` streams
    natively in one call (semantics §13); ``max_matches`` bounds the total
    over both engines (§12).  ``stacklevel``: which caller the warning names
    (1: the caller of this function).  ``threads``: the compiled engine's
    threads (:mod:`jitcep.threads`); the reference evaluator uses one.
    """
    from . import reference, runtime

    patterns = [patterns] if isinstance(patterns, Pattern) else list(patterns)
    refused: dict[int, str] = {}
    covered: list[int] = []
    for i, p in enumerate(patterns):
        try:
            runtime.check_supported(p, options)
        except UnsupportedPatternError as e:
            refused[i] = str(e)
        else:
            covered.append(i)
    results: list = [None] * len(patterns)
    if covered:
        sub = [patterns[i] for i in covered]
        try:
            stats = runtime.check_statistics(statistics, patterns)
            got = runtime.evaluate(sub, table, options, statistics=[stats[i] for i in covered], threads=threads)
        except UnsupportedPatternError as e:
            refused.update({i: str(e) for i in covered})
        else:
            for i, mt in zip(covered, got):
                results[i] = mt
    if refused:
        order = sorted(refused)
        if warn:
            warnings.warn(FallbackWarning(_fallback_message(refused, len(patterns))), stacklevel=stacklevel + 1)
        for i, mt in zip(order, reference.evaluate([patterns[i] for i in order], table, options)):
            results[i] = mt
    if sum(mt.n for mt in results) > options.max_matches:
        raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap with "
                             f"jitcep.compile(..., max_matches=N) or make the pattern more selective")
    return results


def _fallback_message(refused: dict[int, str], n: int) -> str:
    reasons = {}
    for i, why in sorted(refused.items()):
        reasons.setdefault(why, []).append(i)
    parts = []
    for why, idx in reasons.items():
        which = "" if n == 1 else ("patterns " if len(idx) > 1 else "pattern ") + ", ".join(map(str, idx)) + ": "
        parts.append(which + why)
    runs = "it runs" if len(refused) == 1 else "they run"
    return f"{'; '.join(parts)}; {runs} on the reference evaluator (same result, slower)"


class Query:
    """One or several validated patterns with their options, ready to run on event tables.

    Build it with :func:`jitcep.compile`.  ``patterns`` is the tuple of pattern
    ASTs in the order given (the ``pattern`` output column indexes it),
    ``options`` the validated :class:`~jitcep.options.Options`.

    A query keeps the large arrays of its last run for its next run: a
    rerun then writes into memory already mapped instead of faulting in
    fresh pages (:class:`jitcep.kernels.alloc.BufferPool`).  All queries
    of the process keep ``jitcep.config.POOL_KEEP`` bytes (256 MB) in all.
    They are freed with the query; arrays of a returned frame are never
    written while it lives.
    """

    __slots__ = ("patterns", "options", "_pools")

    def __init__(self, patterns: Iterable[Pattern], options: Options):
        object.__setattr__(self, "patterns", tuple(patterns))
        object.__setattr__(self, "options", options)
        # the large arrays of its runs, kept for the next run (jitcep.kernels.alloc.BufferPool)
        object.__setattr__(self, "_pools", Pools())

    def __setattr__(self, name, value):
        raise AttributeError("Query is immutable; compile a new one")

    def text(self) -> str:
        """The canonical text of the patterns (parses back to equal ASTs), ``;``-separated."""
        from .pattern.printer import to_text

        return ";\n".join(to_text(p) for p in self.patterns)

    def __repr__(self) -> str:
        default = Options()
        opts = "".join(f", {f.name}={getattr(self.options, f.name)!r}" for f in fields(Options)
                       if getattr(self.options, f.name) != getattr(default, f.name))
        return f"jitcep.compile({self.text()!r}{opts})"

    def run(self, events, *, time: str = "ts", type: str | None = None, time_unit: TimeUnit | None = None,
            partition_by: str | list[str] | None = None, engine: Engine = "compiled",
            shape: Shape = "wide", time_format: str | None = None,
            progress: bool | None = None, statistics=None, threads: int | None = None) -> pl.DataFrame:
        """Find every match of the patterns in ``events``.

        Parameters
        ----------
        events
            A Polars DataFrame or LazyFrame, a pandas DataFrame, an Arrow table,
            or a path to a Parquet or CSV file (a literal file name, not a glob
            pattern: pass ``pl.scan_parquet("dir/*.parquet")`` to read several).
            Rows need not be sorted.
        time
            The time column (integers, floats, Date or Datetime; text is parsed,
            see ``time_format``).
        type
            The event-type column.  Required when a pattern names a type (``A a``,
            ``ANY(A, B) a``): without it only untyped variables (``* v``) could
            match, so that raises :class:`~jitcep.errors.MissingTypeColumnError`.
        time_unit
            The unit of a numeric time column (``"s"``, ``"ms"``, ...); needed
            when a pattern's window is a duration such as ``10 minutes``.
        partition_by
            Column(s) splitting the events into independent streams, one per
            value (like ``group_by``: null is a value of its own); every match
            lies in one stream, and windows counted in events, contiguity,
            negation and output policies all see only that stream (semantics §13).
        engine
            ``"compiled"`` (default): the Numba engine for what it covers (SEQ / AND /
            OR of positive variables, skip-till-any-match, every ``output`` policy); any other
            pattern runs on the reference evaluator with a
            :class:`~jitcep.errors.FallbackWarning` saying why -- per pattern when
            several run.  ``"auto"``: the same, silently.  ``"reference"``: the
            executable semantics for everything.
        shape
            ``"wide"``: one row per match; ``"long"``: one row per (match, variable, event).
        time_format
            The strftime format of a text time column, e.g. ``"%d/%m/%Y %H:%M"``
            (a Date when it has no time-of-day directive, else a Datetime).
            Without it, a CSV file's time column is parsed when it holds ISO dates
            or date-times, and text in other inputs is refused.  Text that does not
            parse raises :class:`~jitcep.errors.TimestampError`.
        statistics
            Your numbers for the compiled engine's planner (``planner=`` other than
            ``"trivial"``), over the ones it estimates from the events: a mapping
            ``{"rates": {"a": 2.0}, "selectivities": {"a.x < b.x": 0.1}}`` (see
            :func:`jitcep.plan.planner.statistics.from_user`), or with several
            patterns a list with one mapping (or None) per pattern.  They change
            the plan, never the matches; an unknown variable or conjunct, a
            negative rate or a selectivity outside [0, 1] is a
            :class:`~jitcep.errors.StatisticsError`.
        threads
            How many threads the compiled engine's joins may use: ``None``
            (default) every core this process may run on, like Polars; ``1``
            one.  The joins split the key partitions among them, and their
            predicates and output records the candidate pairs (a pattern
            without an ``[attr]`` key or ``partition_by`` has one partition, so
            its joins search for pairs on one thread: docs/semantics.md §14);
            the matches and their order are the same for every count.  Not a
            positive integer: :class:`~jitcep.errors.OptionError`.
        progress
            Name each stage on stderr as it starts (reading, building the event
            table, matching, building the output; :mod:`jitcep.progress`).
            ``None`` (default): a bar only on an interactive terminal and only
            once the run has taken 2 s, so scripts, tests and quick runs print
            nothing.  ``True``: at once, one line per stage where stderr is not a
            terminal (a notebook) and a bar where it is.  ``False``: never.

        Returns
        -------
        polars.DataFrame
            See :mod:`jitcep.output` for the columns.

        Examples
        --------
        >>> import polars as pl, jitcep
        >>> df = pl.DataFrame({"type": ["A", "B", "A", "B"], "ts": [1, 2, 3, 4], "x": [5, 1, 7, 2]})
        >>> q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x > 6 WITHIN 10")
        >>> q.run(df, type="type")["b"].struct.field("row").to_list()
        [3]
        """
        from .progress import display

        shown = display(progress, self.STAGES)
        try:
            out = self._run(events, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                            engine=engine, shape=shape, time_format=time_format, stage=shown.stage,
                            statistics=statistics, threads=threads)
        except BaseException:
            shown.close(done=False)
            raise
        shown.close()
        return out

    #: the stages of a run, in order, as reported to ``_run``'s ``stage`` callback
    STAGES = ("reading", "building the event table", "matching", "building the output")

    def _run(self, events, *, time, type, time_unit, partition_by, engine, shape, time_format=None,
             stage=None, _stacklevel: int = 3, statistics=None, threads: int | None = None) -> pl.DataFrame:
        """:meth:`run`, calling ``stage(name)`` as each of :attr:`STAGES` starts (the progress display):
        the arguments checked (:meth:`_checked`), the events read (:meth:`_table`), the engine's match
        tables and the output frame (:func:`jitcep.output.to_frame`), these two in the query's pool.
        The engine is called here, not in a helper: its ``FallbackWarning`` names the frame
        ``_stacklevel`` above this one (the caller of :meth:`run`)."""
        checked = self._checked(statistics, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                                engine=engine, shape=shape, time_format=time_format, threads=threads)
        partition_by = checked["partition_by"]  # a tuple if given as another iterable: read once, here
        evaluate = _engine(engine, stacklevel=_stacklevel)
        note = stage if stage is not None else (lambda name: None)
        from .output import to_frame, wants_all_columns

        source, table = self._table(events, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                                    time_format=time_format, all_columns=wants_all_columns(self.patterns),
                                    note=note)
        note(self.STAGES[2])
        # the run's large arrays, output columns too, from this query's pool (jitcep.kernels.alloc.BufferPool)
        with self._pools.run():
            if engine == "reference":  # no plan to inform: the statistics were checked above
                results = evaluate(self.patterns, table, self.options)
            else:
                results = evaluate(self.patterns, table, self.options, statistics=statistics,
                                   threads=checked["threads"])
            note(self.STAGES[3])
            return to_frame(self.patterns, results, table, shape=shape, source=source, time=time, type=type)

    def _checked(self, statistics, **arguments) -> dict:
        """The run arguments (:func:`_run_arguments`) and ``statistics``
        (:func:`jitcep.runtime.check_statistics`) checked before the events are read, as :meth:`run` and
        :meth:`explain` take them: a bad value is its named error before any work."""
        checked = _run_arguments(**arguments)
        from . import runtime
        runtime.check_statistics(statistics, self.patterns)
        return checked

    def _table(self, events, *, time, type, time_unit, partition_by, time_format, all_columns, note):
        """(source frame, event table) of ``events``; ``note`` names the reading and building stages."""
        from .events import check_type_column, read_events, table_of_frame
        if type is None:  # typed variables could never match: a forgotten argument (semantics §3)
            check_type_column(self.patterns)
        # Read the input once: the event table is built from this frame (a zero-copy
        # select) and the output gathers values from it by row number, so they keep
        # their input dtypes.  Every error (columns, timestamps) is raised here.
        note(self.STAGES[0])
        source = read_events(events, self.patterns, time=time, type=type, time_unit=time_unit,
                             partition_by=partition_by, all_columns=all_columns, time_format=time_format)
        note(self.STAGES[1])
        table = table_of_frame(source, self.patterns, time=time, type=type, time_unit=time_unit,
                               partition_by=partition_by)
        return source, table

    def explain(self, events=None, *, time: str = "ts", type: str | None = None, time_unit: TimeUnit | None = None,
                partition_by: str | list[str] | None = None, analyze: bool = False,
                format: ExplainFormat = "text", time_format: str | None = None, statistics=None,
                threads: int | None = None):
        """The plan of each pattern: its operators, what each reads and tests, and the planner's choices.

        Parameters
        ----------
        events
            Optional, as :meth:`run` takes them.  With events the plan includes
            the choices that depend on the table (how a key is coded); with
            ``analyze=True`` the query runs, and every operator carries the records it
            produced (``rows``) and its own warm time (``time_s``, its inputs excluded);
            the pattern's ``rows`` is its number of matches.  A run that loaded or
            compiled kernels (a process's first, a query's first: its predicates) is
            run again and the warm one reported.
        time, type, time_unit, partition_by, time_format, statistics
            As for :meth:`run`; bad values raise the same named errors, before any work.
            With a ``planner=`` other than ``"trivial"`` and no events, the plan is
            chosen on ``statistics`` and defaults (marked as such); ``"auto"`` (the
            default) without ``statistics`` shows the pattern-order plan, as it
            runs on a table under 4,096 events.
        analyze
            Run the query and measure each operator (needs ``events``).
        format
            ``"text"``: the operator tree as an indented string, like Polars'
            ``LazyFrame.explain``.  ``"dict"``: the same tree as nested dicts with
            keys ``op``, ``vars``, ``children``, ``predicates``, ``window``, the
            planner's choices (``driver``, ``placement``, ``mode``, ``key_coding`` ...),
            for a plan chosen on statistics ``est_rows``, ``cost``,
            ``choice_costs`` (the priced alternatives of a driver or a placement;
            the final join's include ``right+rows``), ``writes_rows=False`` on a
            final join that makes its pairs rather than the match rows,
            and ``planner_notes`` (an exact search that fell back past its budget),
            and, with ``analyze``, ``rows`` and ``time_s`` (and each compiled
            pattern's ``threads``).  Several patterns: one tree per pattern under
            an ``op="patterns"`` root.
        threads
            As for :meth:`run`: the threads of the ``analyze`` run.

        Examples
        --------
        >>> import jitcep
        >>> print(jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10").explain())
        pattern 0: PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10
          SEQ join (a, b)  driver=smaller  within 10  where a.x < b.x
            scan (a)  types A
            scan (b)  types B
        """
        from .explain import explain_tree, render

        check_choice("format", format, ExplainFormat)
        if not isinstance(analyze, bool):
            raise OptionError(f"analyze={analyze!r} is not True or False")
        if analyze and events is None:
            raise OptionError("explain(analyze=True) runs the query: give it the events")
        checked = self._checked(statistics, time=time, type=type, time_unit=time_unit, partition_by=partition_by,
                                time_format=time_format, threads=threads)
        table = None
        if events is not None:
            table = self._table(events, time=time, type=type, time_unit=time_unit,
                                partition_by=checked["partition_by"], time_format=time_format, all_columns=False,
                                note=lambda name: None)[1]
        return render(explain_tree(self.patterns, self.options, table, analyze, statistics, checked["threads"]),
                      format)


def compile(pattern: PatternLike, **options) -> Query:  # noqa: A001 - the public name
    """Parse, validate and bind options: the one way to build a :class:`Query`.

    Parameters
    ----------
    pattern
        Pattern text (several patterns separated by ``;``), a Pattern AST, a
        builder (anything with ``.build()``), or a list of them; several
        patterns run in one pass and the output's ``pattern`` column says which
        pattern a match belongs to (0-based, in the order given).
    **options
        ``order``, ``strategy``, ``output``, ``kleene``, caps ... (see
        :class:`jitcep.options.Options`).  An unknown option or value raises
        :class:`~jitcep.errors.OptionError`.

    Examples
    --------
    >>> import jitcep
    >>> q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10 s", strategy="skip_till_next_match")
    >>> len(q.patterns), q.options.strategy
    (1, 'skip_till_next_match')
    """
    opts = Options.from_kwargs(**options)
    patterns = _as_patterns(pattern)
    if not patterns:
        raise PatternError("no pattern given")
    return Query([validate(p, opts) for p in patterns], opts)
