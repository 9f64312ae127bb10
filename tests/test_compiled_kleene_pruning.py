"""Differential: closures beside a negation over an AND span, compiled == the reference evaluator.

Under ``kleene="all"`` a negation whose range an AND span bounds on an open
side kills every list holding a member it kills alone, so the compiled
engine drops such members before making lists
(:attr:`jitcep.plan.operators.KleeneCollect.prune`).  Generated patterns put
a closure (``+``, ``*``, ``{1,2}``) beside single variables in an AND (also
an AND holding a SEQ, or a SEQ holding the AND) with a negation, maybe with
member-wise, iterative and list conjuncts, ``[k]``, time / count windows and
the three orders; some negations read a variable or share the closure's
type, where nothing is pruned, as a control.  The default run is a small
sample; ``-m slow`` runs many more patterns and streams.  Hand-enumerated
cases: tests/test_kleene.py (``test_a_negation_over_an_and_span_...``).
"""

from __future__ import annotations

import os
import random

import pytest

import jitcep

from differential_helpers import agree_on_streams

N_PATTERNS = 8
N_STREAMS = 20


def gen_pattern(seed: int) -> tuple[str, dict]:
    """Pattern text with a closure and a negation in an AND, and its options."""
    rng = random.Random(91_000 + seed)
    closure = f"B{rng.choice(['+', '*', '{1,2}'])} b[]"
    negated = rng.choice(["!C n", "!C n", "!C n", "!B n"])  # !B n shares b's type: not pruned
    shape = rng.choice([
        f"AND(A a, {closure}, C c, {negated})",
        f"AND(A a, {closure}, {negated})",
        f"AND(SEQ(A a, {closure}), {negated})",
        f"SEQ(A a, AND({closure}, {negated}), C c)",
        f"SEQ(C c, AND(A a, {closure}, {negated}))",
    ])
    if "C c" in shape and negated == "!C n":
        shape = shape.replace("C c", "A c")
    conj = ["[k]"] if rng.random() < 0.5 else []
    conj += rng.sample(["b.x > a.x - 2", "b[i].x >= b[i-1].x", "count(b) <= 2", "n.x > a.x"],
                       rng.randint(0, 2))
    where = f" WHERE {' AND '.join(conj)}" if conj else ""
    window = rng.choice(["WITHIN 4", "WITHIN 6", "WITHIN 5 EVENTS"])
    return f"PATTERN {shape}{where} {window}", dict(order=rng.choice(["position", "strict_ts", "nondecreasing_ts"]),
                                                    max_kleene=5_000)


def _case(seed: int, n_streams: int) -> int:
    """Compiled == reference for the generated pattern of ``seed``; returns the streams with a match."""
    text, options = gen_pattern(seed)
    q = jitcep.compile(text, **options)
    [pattern] = q.patterns
    return agree_on_streams(pattern, q.options, seed, n_streams, max_size=10,
                            motif=(("B",), ("A",), ("C",), ("B",), ("B",), ("C",), ("B",)), label=text)


def test_the_generator_prunes_and_leaves_controls():
    # the sample holds both pruned patterns and controls, or it would test only one side
    pruned = ["members no negation kills alone" in jitcep.compile(t, **o).explain()
              for t, o in map(gen_pattern, range(N_PATTERNS))]
    assert any(pruned) and not all(pruned)


@pytest.mark.parametrize("seed", range(N_PATTERNS))
def test_pruned_closures_compiled_equal_reference(seed):
    _case(seed, N_STREAMS)


def test_generated_pruning_cases_match_something():
    assert sum(_case(seed, 10) for seed in range(N_PATTERNS)) > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(N_PATTERNS, N_PATTERNS + 100))
def test_pruned_closures_compiled_equal_reference_slow(seed):
    _case(seed, int(os.environ.get("JITCEP_SLOW_STREAMS", "100")))
