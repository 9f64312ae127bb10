"""Caps, budgets and Numba flags: the one place that sets them."""

from __future__ import annotations

from pathlib import Path

from .cachedirs import numba_cache_trusted

# Numba: every kernel is compiled with these; nothing else sets them.  ``cache``: compiled code is
# kept on disk only in a directory nobody else can write (jitcep/cachedirs.py), as it is loaded by
# unpickling; decided when jitcep is imported, as the kernels are decorated then.
NUMBA_FLAGS = dict(cache=numba_cache_trusted(Path(__file__).parent / "kernels"), nogil=True, fastmath=False)

# Default caps.  Modes that can explode combinatorially stop with ExplosionError
# when they pass a cap; they never truncate silently.
DEFAULT_MAX_MATCHES = 10_000_000          # matches per run (all patterns)
DEFAULT_MAX_KLEENE = 1_000_000            # Kleene lists enumerated per binding of the other variables
DEFAULT_MAX_PARTIALS = 50_000_000         # intermediate partial matches in the reference evaluator
DEFAULT_MAX_MEMORY = 1 << 30              # bytes of intermediate results the compiled engine holds at once

# Pattern nesting: the deepest tree a pattern may hold, and the deepest its text may nest parentheses
# (docs/language.md).  Every pass over a pattern (parser, validation, printer, ==/hash of the AST,
# codegen, both engines) recurses once per level; at 100 levels the deepest pattern of every shape
# runs end to end in about 420 Python frames, leaving more than half of Python's default recursion
# limit (1000) to the caller (tests/test_bad_input.py runs each shape at the limit with 500 frames).
MAX_NESTING = 100
