"""Caps, budgets and Numba flags: the one place that sets them."""

from __future__ import annotations

# Numba: every kernel is compiled with these; nothing else sets them.
NUMBA_FLAGS = dict(cache=True, nogil=True, fastmath=False)

# Default caps.  Modes that can explode combinatorially stop with ExplosionError
# when they pass a cap; they never truncate silently.
DEFAULT_MAX_MATCHES = 10_000_000          # matches per run (all patterns)
DEFAULT_MAX_KLEENE = 1_000_000            # Kleene lists enumerated per binding of the other variables
DEFAULT_MAX_PARTIALS = 50_000_000         # intermediate partial matches in the reference evaluator
DEFAULT_MAX_MEMORY = 1 << 30              # bytes of intermediate results the compiled engine holds at once
