"""jitcep: complex event processing over columnar event tables.

>>> import jitcep
>>> q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10 minutes")
>>> df = q.run(events, time="ts", type="type")          # doctest: +SKIP

Patterns follow SASE / ZStream (see docs/language.md); semantics are in
docs/semantics.md.  Every error jitcep raises on purpose is a
:class:`JitcepError`.
"""

from __future__ import annotations

from .errors import (
    AttributeTypeError,
    DuplicateVariableError,
    ExplosionError,
    FallbackWarning,
    InputError,
    InputFormatError,
    InvalidKleeneError,
    InvalidNegationError,
    InvalidWindowError,
    JitcepError,
    KernelInputError,
    MissingColumnError,
    MissingTypeColumnError,
    MissingWindowError,
    OptionError,
    PatternError,
    PatternSyntaxError,
    PatternValidationError,
    QueryShippingError,
    StatisticsError,
    TimestampError,
    UnknownVariableError,
    UnsupportedPatternError,
    UntrustedCacheWarning,
    WindowUnitError,
    WorkerPythonError,
)
from .options import Options
from .output import output_schema
from .query import Query, compile

__version__ = "0.1.0"

__all__ = [
    "compile",
    "Query",
    "Options",
    "output_schema",
    "JitcepError",
    "PatternError",
    "PatternSyntaxError",
    "PatternValidationError",
    "UnknownVariableError",
    "DuplicateVariableError",
    "InvalidNegationError",
    "InvalidKleeneError",
    "InvalidWindowError",
    "MissingWindowError",
    "UnsupportedPatternError",
    "OptionError",
    "InputError",
    "InputFormatError",
    "MissingColumnError",
    "MissingTypeColumnError",
    "TimestampError",
    "AttributeTypeError",
    "WindowUnitError",
    "ExplosionError",
    "KernelInputError",
    "QueryShippingError",
    "StatisticsError",
    "WorkerPythonError",
    "FallbackWarning",
    "UntrustedCacheWarning",
    "__version__",
]
