"""Differential: Kleene groups compiled == the reference evaluator on generated forms and streams.

Generated group forms (semantics §6): a group between, before or after single
variables, inside AND, in an OR branch, beside a negation, and with no single
variable (alone, or beside an array closure: the group lends its first
iteration); SEQ and AND bodies of one to three variables, every bound form;
filters, iteration-local, member-wise, iterative and list conjuncts, ``[k]``
keys; time / count / unbounded windows, the three orders and both
``kleene_window`` values.  The default run is a small representative sample;
``-m slow`` runs many more patterns and streams.
"""

from __future__ import annotations

import os
import random

import pytest

from jitcep.options import Options
from jitcep.pattern import expr as E
from jitcep.pattern.ast import Conj, CountWindow, Disj, EventVar, Kleene, Neg, Pattern, Seq, TimeWindow, Unbounded

from differential_helpers import agree_on_streams


FORMS = ["between", "and", "or", "negation", "anchored"]
N_PATTERNS = 4
N_STREAMS = 40


def _cmp(rng, left, right):
    return E.Cmp(rng.choice(E.CMP_OPS), left, right)


def gen_group_pattern(seed: int, form: str):
    """A pattern with one Kleene group of ``form`` (module docstring) and its options."""
    rng = random.Random(90_000 + seed + 1000 * FORMS.index(form))

    def types():
        return rng.choice([("A",), ("B",), ("A", "B"), None])

    gvars = [EventVar(f"g{i}", types()) for i in range(rng.randint(1, 3))]
    kind = rng.choice([Seq, Conj])
    # an AND group's sets of overlapping body matches grow as 2^matches: bounded, as a user would
    bounds = rng.choice([(1, None), (0, None), (1, 2), (2, None), (0, 2), (2, 3)] if kind is Seq
                        else [(1, 1), (1, 2), (0, 2), (2, 3)])
    if form == "anchored":
        bounds = (max(bounds[0], 1 if rng.random() < 0.7 else 0), bounds[1])
    group = Kleene(kind(tuple(gvars)), *bounds)
    singles = [EventVar(f"v{i}", types()) for i in range(rng.randint(1, 2))]
    scope = [v.name for v in singles]
    if form == "between":
        items = list(singles)
        items.insert(rng.randint(0, len(items)), group)
        body = Seq(tuple(items))
    elif form == "and":
        body = Conj((group, *singles)) if rng.random() < 0.5 else Seq((singles[0], Conj((group, *singles[1:]))))
    elif form == "or":
        body = Disj((Seq((singles[0], group)), EventVar("o", types())))
        scope = [singles[0].name]
    elif form == "negation":
        items = [singles[0], group, *singles[1:]]
        items.insert(rng.randint(1, len(items)), Neg(EventVar("n", types())))
        body = Seq(tuple(items))
    else:  # no single variable: the group lends its first iteration
        body = rng.choice([group, Conj((group, Kleene(EventVar("d", types()), 1, 2))),
                           Seq((group, Kleene(EventVar("d", types()), 1, None)))])
        scope = []
    g = [v.name for v in gvars]
    conj = [E.Equiv("k")] if rng.random() < 0.25 else []
    if rng.random() < 0.4:
        conj.append(E.Cmp(">", E.Attr(rng.choice(g), "x"), E.Lit(rng.randint(-2, 1))))
    if len(g) > 1 and rng.random() < 0.4:
        conj.append(_cmp(rng, E.Attr(g[0], "x"), E.Attr(g[-1], "x")))
    if scope and rng.random() < 0.4:
        conj.append(_cmp(rng, E.Attr(rng.choice(g), "x"), E.Attr(rng.choice(scope), "x")))
    if rng.random() < 0.35:
        conj.append(_cmp(rng, E.Attr(rng.choice(g), "x", "i"), E.Attr(rng.choice(g), "x", "i-1")))
    if rng.random() < 0.35:
        conj.append(rng.choice([
            lambda: E.Cmp(">=", E.Agg("count", g[0]), E.Lit(2)),
            lambda: E.Cmp(">", E.Agg("sum", rng.choice(g), "x"), E.Lit(0)),
            lambda: E.Cmp("<=", E.Attr(g[0], "x", 1), E.Attr(g[-1], "x", "len")),
        ])())
    window = rng.choices([TimeWindow(rng.randint(2, 8)), CountWindow(rng.randint(3, 8)), Unbounded()],
                         weights=[6, 3, 1])[0]
    options = Options(order=rng.choice(["position", "strict_ts", "nondecreasing_ts"]),
                      kleene_window=rng.choice(["match", "iteration"]))
    return Pattern(body, E.conjoin(conj), window), options


def _group_case(seed: int, form: str, n_streams: int) -> int:
    """Compiled == reference for the generated pattern of (seed, form); returns the cases that matched."""
    pattern, options = gen_group_pattern(seed, form)
    return agree_on_streams(pattern, options, seed, n_streams, max_size=9, motif=(("A",), ("B",)) * 3)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", range(N_PATTERNS))
def test_compiled_groups_equal_reference(seed, form):
    _group_case(seed, form, N_STREAMS)


def test_generated_group_cases_match_something():
    # the generator plants A / B motifs: a change that stops producing matches fails here, not silently
    assert sum(_group_case(seed, form, 15) for seed in range(2) for form in FORMS) > 0


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("seed", range(N_PATTERNS, N_PATTERNS + 100))
def test_compiled_groups_equal_reference_slow(seed, form):
    _group_case(seed, form, int(os.environ.get("JITCEP_SLOW_STREAMS", "200")))
