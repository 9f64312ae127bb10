"""The public entry point: ``jitcep.compile(pattern, **options) -> Query`` and ``Query.run``.

Data flows one way (DESIGN.md section 1): text or builder -> validated pattern
AST -> event table -> an engine's match tables -> a Polars DataFrame
(:mod:`jitcep.output`).  Everything that can be checked without data (pattern
syntax and meaning, options) is checked by :func:`compile`; everything that
needs the data (columns, timestamps) by :meth:`Query.run`, before any output
exists.
"""

from __future__ import annotations

from typing import Any, Iterable

import polars as pl

from ._typing import Engine, Shape, TimeUnit, allowed
from .errors import OptionError, PatternError
from .options import Options
from .pattern.ast import Pattern

PatternLike = Any  # str | Pattern | builder (anything with .build() -> Pattern)


def _parse_text(text: str) -> list[Pattern]:
    from .pattern import parser

    # one text may hold several patterns separated by ';'
    out = parser.parse_many(text)
    return list(out)


def _as_patterns(pattern: PatternLike) -> list[Pattern]:
    if isinstance(pattern, str):
        return _parse_text(pattern)
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


def _validate(p: Pattern, options: Options) -> Pattern:
    from .pattern.validate import validate

    checked = validate(p, options)
    return checked if isinstance(checked, Pattern) else p


def _check_choice(name: str, value, alias) -> None:
    if value not in allowed(alias):
        raise OptionError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed(alias)))}")


def _engine(name: str):
    """The ``evaluate(patterns, table, options) -> list[MatchTable]`` of an engine."""
    _check_choice("engine", name, Engine)
    if name == "reference":
        from .reference import evaluate
        return evaluate
    try:  # the compiled engine registers itself as jitcep.runtime.evaluate
        from .runtime import evaluate
    except ImportError as e:
        raise OptionError("engine='compiled' is not available yet; use engine='reference'") from e
    return evaluate


class Query:
    """One or several validated patterns with their options, ready to run on event tables.

    Build it with :func:`jitcep.compile`.  ``patterns`` is the tuple of pattern
    ASTs in the order given (the ``pattern`` output column indexes it),
    ``options`` the validated :class:`~jitcep.options.Options`.
    """

    __slots__ = ("patterns", "options")

    def __init__(self, patterns: Iterable[Pattern], options: Options):
        object.__setattr__(self, "patterns", tuple(patterns))
        object.__setattr__(self, "options", options)

    def __setattr__(self, name, value):
        raise AttributeError("Query is immutable; compile a new one")

    def text(self) -> str:
        """The canonical text of the patterns (parses back to equal ASTs), ``;``-separated."""
        from .pattern.printer import to_text

        return ";\n".join(to_text(p) for p in self.patterns)

    def __repr__(self) -> str:
        try:
            text = self.text()
        except ImportError:  # printer not available: fall back to the AST
            text = "; ".join(map(repr, self.patterns))
        changed = {k: v for k, v in vars_of(self.options).items() if v != vars_of(Options())[k]}
        opts = "".join(f", {k}={v!r}" for k, v in changed.items())
        return f"jitcep.compile({text!r}{opts})"

    def run(self, events, *, time: str = "ts", type: str | None = None, time_unit: TimeUnit | None = None,
            partition_by: str | list[str] | None = None, engine: Engine = "reference",
            shape: Shape = "wide") -> pl.DataFrame:
        """Find every match of the patterns in ``events``.

        Parameters
        ----------
        events
            A Polars DataFrame or LazyFrame, a pandas DataFrame, an Arrow table,
            or a path to a Parquet or CSV file.  Rows need not be sorted.
        time
            The time column (integers, floats, Date or Datetime).
        type
            The event-type column; without it only untyped variables (``* v``) match.
        time_unit
            The unit of a numeric time column (``"s"``, ``"ms"``, ...); needed
            when a pattern's window is a duration such as ``10 minutes``.
        partition_by
            Column(s) splitting the events into independent streams, one per
            value (like ``group_by``: null is a value of its own); every match
            lies in one stream, and windows counted in events, contiguity,
            negation and output policies all see only that stream (semantics §13).
        engine
            ``"reference"`` (the executable semantics) or ``"compiled"``.
        shape
            ``"wide"``: one row per match; ``"long"``: one row per (match, variable, event).

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
        _check_choice("shape", shape, Shape)
        if time_unit is not None:
            _check_choice("time_unit", time_unit, TimeUnit)
        evaluate = _engine(engine)
        from .events import build_event_table, read_events
        from .output import to_frame, wants_all_columns

        # Read the input once: the event table is built from this frame (a zero-copy
        # select) and the output gathers values from it by row number, so they keep
        # their input dtypes.  Every error (columns, timestamps) is raised here.
        source = read_events(events, self.patterns, time=time, type=type, time_unit=time_unit,
                             partition_by=partition_by, all_columns=wants_all_columns(self.patterns))
        table = build_event_table(source, self.patterns, time=time, type=type, time_unit=time_unit,
                                  partition_by=partition_by)
        if table.partition is not None and table.partition.independent and engine != "reference":
            # partition_by (semantics §13): each key value is a stream of its own.  The
            # reference evaluator splits by itself (one cap budget); other engines run per group.
            from .events import evaluate_per_partition

            results = evaluate_per_partition(lambda sub: evaluate(self.patterns, sub, self.options), table,
                                             max_matches=self.options.max_matches)
        else:
            results = evaluate(self.patterns, table, self.options)
        return to_frame(self.patterns, results, table, shape=shape, source=source, time=time, type=type)


def vars_of(options: Options) -> dict:
    from dataclasses import fields

    return {f.name: getattr(options, f.name) for f in fields(options)}


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
    return Query([_validate(p, opts) for p in patterns], opts)
