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

# Pattern size (docs/language.md, Limits).  MAX_NESTING: the deepest tree a pattern may hold, and the
# deepest its text may nest parentheses; MAX_VARIABLES: the most variables it may bind.  Every pass over
# a pattern (parser, validation, printer, ==/hash of the AST, codegen, both engines) recurses once per
# level, and the plans and the reference evaluator's search once per variable.  At these limits the
# deepest pattern of each shape runs end to end in about 420 Python frames, and 50 Kleene variables
# with a 100-level predicate across them in about 570, leaving the rest of Python's default recursion
# limit (1000) to the caller (tests/test_bad_input.py runs them with 500 and 650 frames to spare).
MAX_NESTING = 100
MAX_VARIABLES = 50

# Compiled-engine tuning (jitcep/execute/, jitcep/plan/rules/): these trade memory or a pass over the
# events for speed and never change a result.
#
# (record, negated event) or (match, closure member) pairs tested per chunk: bounds memory, not work.
NEG_PAIR_BUDGET = 1 << 20
# Types grouped per pass over the events (jitcep/execute/tables.py): a pass costs about the same for
# one type or eight.
TYPE_BATCH = 8
# A String key is coded at the records of the leaves' types alone when those are at most this share of
# the events (estimated from every KEY_SAMPLE_STEP-th event): a record costs more than a row of the full
# pass (its view is gathered), and all those types are grouped at once, also ones no leaf may get to
# read.  Measured (perf/bench_seq.py str data, 10^7 events): 3 / 12 of 32 types read end to end
# 83 -> 71 / 86-89 -> 80 ms, 24 of 32: 82-93 -> 107-117 ms had it applied.
KEY_AT_RECORDS_SHARE = 0.5
KEY_SAMPLE_STEP = 64
