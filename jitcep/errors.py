"""One exception hierarchy for everything jitcep raises on purpose.

Every error names the problem; input errors are raised before anything is
written, so a failed call leaves no partial output behind (DESIGN.md section 5).
"""

from __future__ import annotations


class JitcepError(Exception):
    """Base class of every error jitcep raises on purpose."""


# --- patterns ---------------------------------------------------------------


class PatternError(JitcepError):
    """A pattern that cannot be evaluated (syntax or meaning)."""


class PatternSyntaxError(PatternError):
    """Text that does not parse; carries the 1-based line and column and what was expected."""

    def __init__(self, message: str, *, line: int, column: int, expected: str | None = None,
                 text: str | None = None):
        self.line = line
        self.column = column
        self.expected = expected
        self.text = text
        where = f"line {line}, column {column}"
        full = f"{message} at {where}"
        if expected:
            full += f"; expected {expected}"
        if text is not None:
            lines = text.splitlines() or [""]
            if 1 <= line <= len(lines):
                full += f"\n  {lines[line - 1]}\n  {' ' * (column - 1)}^"
        super().__init__(full)


class PatternValidationError(PatternError):
    """A well-formed pattern whose meaning is undefined or inconsistent."""


class UnknownVariableError(PatternValidationError):
    """A predicate or RETURN item names a variable the pattern does not bind."""


class DuplicateVariableError(PatternValidationError):
    """Two pattern elements bind the same variable name."""


class InvalidNegationError(PatternValidationError):
    """A negation where the semantics are undefined (e.g. a pattern that is only negations)."""


class InvalidKleeneError(PatternValidationError):
    """A Kleene closure where the semantics are undefined, or an index used on a non-Kleene variable."""


class InvalidWindowError(PatternValidationError):
    """A window <= 0 or an unknown unit."""


class MissingWindowError(PatternValidationError):
    """A pattern without WITHIN, when no unbounded window was asked for explicitly."""


class UnsupportedPatternError(PatternValidationError):
    """A combination the chosen options do not define (e.g. a selection strategy on a nested AND)."""


# --- options ----------------------------------------------------------------


class OptionError(JitcepError, ValueError):
    """An unknown option or an option value outside its allowed set."""


class StatisticsError(OptionError):
    """Planner statistics (``statistics=``) naming a variable or conjunct the pattern does not have, or
    holding a rate that is negative or not finite, a selectivity outside [0, 1] (the message names the key)."""


# --- input ------------------------------------------------------------------


class InputError(JitcepError):
    """Event input that cannot be turned into an event table."""


class InputFormatError(InputError):
    """Input that is not a table or a readable Parquet/CSV file."""


class MissingColumnError(InputError, KeyError):
    """A column the call or the pattern names is not in the input."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class MissingTypeColumnError(MissingColumnError):
    """A pattern names event types, but the call gave no type column (``type=`` / ``--type``)."""


class TimestampError(InputError):
    """Null or non-numeric/non-temporal timestamps."""


class AttributeTypeError(InputError, TypeError):
    """An attribute whose type cannot be compared with the predicate's operand (e.g. str vs number)."""


class WindowUnitError(InputError):
    """A duration window over a numeric time column whose unit was not declared."""


# --- execution --------------------------------------------------------------


class ExplosionError(JitcepError):
    """A result or intermediate result grew past its configured cap; never truncated silently."""


class KernelInputError(JitcepError, ValueError):
    """A kernel wrapper refused arrays that break its documented invariant (an index out of range,
    offsets out of order): the engine never passes such arrays, so this is a bug to report."""


# --- distributed execution ------------------------------------------------------


class QueryShippingError(JitcepError):
    """A query that cannot be sent to remote workers (e.g. Spark executors): it does not pickle and
    unpickle to an equal query."""


class WorkerPythonError(JitcepError):
    """Spark's Python workers would run an interpreter that cannot run jitcep's tasks (jitcep not
    installed there, or another Python version): set ``PYSPARK_PYTHON`` before creating the session."""


# --- warnings -------------------------------------------------------------------


class FallbackWarning(UserWarning):
    """The compiled engine does not cover a pattern (or option), so that pattern ran on the reference
    evaluator: the answer is the same, only slower.  Silence it with
    ``warnings.filterwarnings("ignore", category=jitcep.FallbackWarning)`` or ``engine="auto"``."""


class UntrustedCacheWarning(UserWarning):
    """A compile cache directory that others could write (or that does not exist and cannot be made) is
    not used: compiled code is kept in memory instead, so every process compiles it again.  Cache
    files are unpickled, i.e. run as code, so only private directories may hold them (see
    :mod:`jitcep.cachedirs`)."""
