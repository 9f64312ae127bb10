"""One generated pattern against the reference evaluator on generated streams (the compiled forms' differentials).

The reference evaluator (:mod:`jitcep.reference`) is the oracle: a test draws
a pattern, checks that the compiled engine covers it (no fallback hides a
gap) and compares the two engines' matches on ``n_streams`` seeded
:func:`~jitcep.testing.streams.event_frames` streams.  It returns how many
streams had a match, so a test can fail a generator that stops producing any.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings

from jitcep import runtime
from jitcep.errors import ExplosionError
from jitcep.events import build_event_table
from jitcep.reference import evaluate as reference_evaluate
from jitcep.testing.streams import event_frames


def binding_tuples(mt) -> list:
    """A match table's matches as sorted tuples of (variable, value), a list variable's value a tuple."""
    return sorted((tuple(sorted((v, tuple(x) if isinstance(x, (list, tuple)) else x) for v, x in b.items()))
                   for b in mt.to_bindings()), key=repr)


def agree_on_streams(pattern, options, seed: int, n_streams: int, *, max_size: int, motif,
                     skip_explosions: bool = False, label: str = "") -> int:
    """Compiled == reference for ``pattern`` on ``n_streams`` streams of at most ``max_size`` events that
    plant ``motif``; returns the streams with a match.  ``skip_explosions``: a stream on which either
    engine stops with ExplosionError is not compared (the engines count partial work differently,
    semantics section 12)."""
    runtime.check_supported(pattern, options)  # compiled, not a fallback
    hits = [0]

    @hypothesis_seed(seed)
    @settings(max_examples=n_streams, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(event_frames(max_size=max_size, motif=motif))
    def run(df):
        table = build_event_table(df, [pattern], type="type")
        try:
            [ref] = reference_evaluate([pattern], table, options)
        except ExplosionError:
            if skip_explosions:
                return
            raise
        try:
            [mt] = runtime.evaluate([pattern], table, options)
        except ExplosionError:
            if skip_explosions:
                return
            raise
        assert binding_tuples(mt) == binding_tuples(ref), label
        hits[0] += ref.n > 0

    run()
    return hits[0]
