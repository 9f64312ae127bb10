"""Differential: closures that may all be empty where nothing else binds, compiled == the reference evaluator.

The compiled engine plans these as alternatives that each bind an event
(jitcep/pattern/nonempty.py, semantics §3, §5, §6) united with the closures an
alternative takes empty bound to the empty list.  Generated forms:

- ``or_branch``: a ``T* v[]`` / ``T{0,2} v[]`` / ``KL(SEQ|AND(..)){0,2}`` alone in an OR branch nested
  in a SEQ or an AND beside single variables (the branch taken with an empty list binds nothing);
- ``closures``: a SEQ or an AND of two or three closures that may all be empty (one of them maybe a
  group), maybe with a negation, maybe as one branch of a top-level OR;
- ``nested_negation``: a SEQ / AND of closures that may all be empty with an AND / SEQ inside holding a
  negation beside closures, so that taking them empty leaves the negation alone there (§7: it keeps the
  range its AND gives it);
- ``runs``: a SEQ of two or three array variables that may all be empty, maybe with a negation, under
  an NFA^b strategy (semantics §8: a run takes its first event at one of them);

with filters, member-wise conjuncts (also over two closures or a closure and a single variable),
iterative ones and list ones (``count``, ``sum``, ``v[1]``, ``v[v.LEN]``, which an empty list makes 0 or
NULL), ``[k]`` keys, time / count / unbounded windows and the three orders.  The default run is a small
sample; ``-m slow`` runs many more patterns and streams.  Hand-enumerated cases: tests/test_kleene_empty.py.
"""

from __future__ import annotations

import os
import random

import pytest

from jitcep.errors import InvalidNegationError
from jitcep.options import Options
from jitcep.pattern import expr as E
from jitcep.pattern.ast import Conj, CountWindow, Disj, EventVar, Kleene, Neg, Pattern, Seq, TimeWindow, Unbounded
from jitcep.pattern.validate import check_structure

from differential_helpers import agree_on_streams

FORMS = ["or_branch", "closures", "nested_negation", "runs"]
N_PATTERNS = 3
N_STREAMS = 12
#: small caps: two unbounded closures over a stream of 9 events may have thousands of lists
CAPS = dict(max_matches=20_000, max_kleene=2_000, max_partials=200_000)


def _types(rng):
    return rng.choice([("A",), ("B",), ("A", "B"), None])


def _closure(rng, name: str, group: bool):
    """A closure that may be empty: an array variable, or a group over one or two variables."""
    if group:
        body = rng.choice([Seq, Conj])(tuple(EventVar(f"{name}{i}", _types(rng)) for i in range(rng.randint(1, 2))))
        return Kleene(body, 0, 2)
    return Kleene(EventVar(name, _types(rng)), 0, rng.choice([None, 2, 3]))


def _lists(k: Kleene) -> list[str]:
    return [v.name for v in (k.body.items if isinstance(k.body, (Seq, Conj)) else (k.body,))]


def gen_pattern(seed: int, form: str):
    """A pattern of ``form`` (module docstring) and its options."""
    rng = random.Random(70_000 + seed + 1000 * FORMS.index(form))
    singles: list[str] = []
    negated = False
    if form == "or_branch":
        k = _closure(rng, "b", rng.random() < 0.3)
        ks = [k]
        other = EventVar("c", _types(rng)) if rng.random() < 0.6 else Seq((EventVar("c", _types(rng)),
                                                                           EventVar("d", _types(rng))))
        disj = Disj((k, other) if rng.random() < 0.7 else (other, k))
        outside = [EventVar(f"v{i}", _types(rng)) for i in range(rng.randint(1, 2))]
        singles = [v.name for v in outside]
        items = list(outside)
        items.insert(rng.randint(0, len(items)), disj)
        body = rng.choice([Seq, Conj])(tuple(items))
    elif form == "nested_negation":
        ks = [_closure(rng, name, False) for name in "bce"[:rng.randint(2, 3)]]
        outer, inner = rng.choice([(Seq, Conj), (Conj, Seq), (Seq, Conj)])
        inside = [*ks[1:], Neg(EventVar("n", _types(rng)))]
        rng.shuffle(inside)
        items = [ks[0], inner(tuple(inside))]
        rng.shuffle(items)
        body = outer(tuple(items))
        negated = True
    elif form == "runs":  # linear (semantics §8): array variables and a negation in a SEQ
        ks = [_closure(rng, name, False) for name in "bce"[:rng.randint(2, 3)]]
        items = list(ks)
        negated = rng.random() < 0.3
        if negated:
            items.insert(rng.randint(0, len(items)), Neg(EventVar("n", _types(rng))))
        body = Seq(tuple(items))
    else:
        ks = [_closure(rng, name, i == 1 and rng.random() < 0.3) for i, name in enumerate("bce"[:rng.randint(2, 3)])]
        kind = rng.choice([Seq, Seq, Conj])
        items: list = list(ks)
        negated = kind is Seq and rng.random() < 0.3
        if negated:
            items.insert(rng.randint(1, len(items) - 1), Neg(EventVar("n", _types(rng))))
        body = kind(tuple(items))
        if rng.random() < 0.25:
            body = Disj((body, EventVar("o", _types(rng))))
    first, last = _lists(ks[0]), _lists(ks[-1])
    conj = [E.Equiv("k")] if rng.random() < 0.25 else []
    if rng.random() < 0.4:
        conj.append(E.Cmp(">", E.Attr(rng.choice(first), "x"), E.Lit(rng.randint(-2, 1))))
    if len(ks) > 1 and rng.random() < 0.3:  # member-wise over two closures: every pair of members
        conj.append(E.Cmp(rng.choice(E.CMP_OPS), E.Attr(first[0], "x"), E.Attr(last[0], "x")))
    if singles and rng.random() < 0.4:
        conj.append(E.Cmp(rng.choice(E.CMP_OPS), E.Attr(first[0], "x"), E.Attr(rng.choice(singles), "x")))
    if isinstance(ks[0].body, EventVar) and rng.random() < 0.3:
        conj.append(E.Cmp(">=", E.Attr(first[0], "x", "i"), E.Attr(first[0], "x", "i-1")))
    if rng.random() < 0.5:
        conj.append(rng.choice([
            lambda: E.Cmp(">=", E.Agg("count", first[0]), E.Lit(1)),
            lambda: E.Cmp("<", E.Agg("count", last[0]), E.Lit(2)),
            lambda: E.Cmp(">", E.Agg("sum", last[0], "x"), E.Lit(0)),
            lambda: E.BoolOp("or", (E.Cmp("=", E.Agg("count", first[0]), E.Lit(0)),
                                    E.Cmp("<=", E.Attr(first[0], "x", 1), E.Lit(1)))),
            lambda: E.IsNull(E.Attr(last[0], "x", "len"), negated=rng.random() < 0.5),
        ])())
    if negated and rng.random() < 0.5:
        conj.append(E.Cmp("<", E.Attr("n", "x"), E.Lit(1)))
    if form == "nested_negation" and rng.random() < 0.4:  # a negation condition reading a closure
        conj.append(E.Cmp(rng.choice(E.CMP_OPS), E.Attr("n", "x"), rng.choice(
            [E.Attr(first[0], "x"), E.Agg("count", last[0])])))
    window = rng.choices([TimeWindow(rng.randint(2, 6)), CountWindow(rng.randint(2, 5)), Unbounded()],
                         weights=[6, 3, 1])[0]
    strategy = "skip_till_any_match"
    if form == "runs":
        strategy = rng.choice(["skip_till_next_match", "partition_contiguity", "strict_contiguity"])
        if strategy == "partition_contiguity" and E.Equiv("k") not in conj:  # its partitions (§8)
            conj.insert(0, E.Equiv("k"))
    options = Options(order=rng.choice(["position", "strict_ts", "nondecreasing_ts"]), strategy=strategy, **CAPS)
    return Pattern(body, E.conjoin(conj), window), options


def _case(seed: int, form: str, n_streams: int) -> int:
    """Compiled == reference for the generated pattern of (seed, form); returns the streams with a match."""
    pattern, options = gen_pattern(seed, form)
    try:
        check_structure(pattern.body)
    except InvalidNegationError:  # the generator can put a negation alone in an OR branch: not a pattern
        return 0
    return agree_on_streams(pattern, options, seed, n_streams, max_size=8, motif=(("A",), ("B",)) * 2,
                            skip_explosions=True)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", range(N_PATTERNS))
def test_compiled_empty_closures_equal_reference(seed, form):
    _case(seed, form, N_STREAMS)


def test_generated_cases_match_something():
    # the generator plants A / B motifs: a change that stops producing matches fails here, not silently
    assert sum(_case(seed, form, 8) for seed in range(1) for form in FORMS) > 0


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", range(N_PATTERNS, N_PATTERNS + 100))
def test_compiled_empty_closures_equal_reference_slow(seed, form):
    _case(seed, form, int(os.environ.get("JITCEP_SLOW_STREAMS", "150")))
