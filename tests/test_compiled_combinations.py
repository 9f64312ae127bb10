"""Differential: feature combinations through ``Query.run``, the compiled engine == the reference evaluator.

The single-feature differentials (test_compiled_differential.py, _strategies, _policies, _partition_by,
test_planners.py, test_threads.py) each vary one part of a query.  Here one seeded draw mixes them: a
pattern text with single variables, Kleene array variables (every bound form, min 0), ``KL(SEQ(..))`` /
``KL(AND(..))`` groups and nested SEQ / AND / OR, negations beside closures and groups and inside
nested SEQ / AND (never inside OR, semantics §7), filters, conditions and negation conditions on
aggregates, iterative and ``b[1]`` / ``b[b.LEN]`` conjuncts, ``[k]``, time / count / unbounded windows,
a RETURN with aliases and aggregates over lists (empty ones and null ones of an OR branch not taken);
sometimes a second pattern (§10); options: each selection strategy (§8; linear patterns under the NFA^b
ones), each order, each output policy with ``consume_types``, ``freeze`` and ``contiguous`` (§9),
``kleene="maximal"``, ``kleene_window="iteration"``, each planner; and run keywords ``partition_by``
(a column or a list, §13) and ``threads=1/2`` (§14); and, for some draws, the engine's chunk, batch and
threshold constants (jitcep.config) patched tiny so its chunked and threaded paths run on small inputs.
A draw the compiler refuses with a named error (JitcepError) is skipped and counted; the streams are
:func:`jitcep.testing.streams.event_frames` (ties, nulls, shuffled input).  Results are compared as the
README's row order says (§11), row for row, Kleene lists included.
"""

from __future__ import annotations

import contextlib
import os
import random
import warnings
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings

import jitcep
from jitcep import config
from jitcep._typing import Planner, allowed
from jitcep.errors import ExplosionError, FallbackWarning, JitcepError
from jitcep.testing.streams import event_frames

N_SEEDS = 24
N_STREAMS = 4
SLOW_SEEDS = int(os.environ.get("JITCEP_SLOW_COMBINATIONS", "400"))
HITS = [0, 0, 0]  # (cases the reference matched, cases compared, draws compiled)

# tiny values for the constants that choose chunked, batched or threaded paths (each read as config.X at run time)
TINY = dict(JOIN_CHUNK_PAIRS=4, KERNEL_MIN_PAIRS=2, NEG_PAIR_BUDGET=4, THREAD_MIN_RECORDS=2, TYPE_BATCH=1,
            ARGSORT_SMALL=2, JOIN_BY_LEFT=1, REDUCE_MIN_VARS=1, SORTED_CHECK_BLOCK=2, POOL_MIN=8,
            KEY_SAMPLE_STEP=1, VIEW_GATHER_CHUNK=2, STRING_VERIFY_CHUNK=2, JOIN_WHERE_MIN_RIGHT=0,
            NEG_WHERE_MIN_RECORDS=0)


class _Draw:
    """One query's variables as they are drawn."""

    def __init__(self, rng: random.Random, linear: bool):
        self.rng, self.linear = rng, linear
        self.singles: list[str] = []
        self.kleenes: list[str] = []
        self.negs: list[str] = []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def single(self) -> str:
        v = self.name("v")
        self.singles.append(v)
        return f"{self.rng.choice(['A', 'B', 'C', 'A', 'B', '*', 'ANY(A, C)'])} {v}"

    def kleene(self) -> str:
        v = self.name("b")
        self.kleenes.append(v)
        return f"{self.rng.choice('ABCB')}{self.rng.choice(['+', '*', '{1,2}', '{0,2}', '{2,3}', '+'])} {v}[]"

    def neg(self) -> str:
        v = self.name("n")
        self.negs.append(v)
        return f"!{self.rng.choice('ABCD')} {v}"

    def element(self, depth: int) -> str:
        r = self.rng.random()
        if self.linear or depth >= 2:
            return self.kleene() if r < 0.3 else self.single()
        if r < 0.45:
            return self.single()
        if r < 0.65:
            return self.kleene()
        op = self.rng.choice(["SEQ", "AND", "OR", "KL"])
        if op == "KL":
            return f"KL({self.rng.choice(['SEQ', 'AND'])}({self.single()}, {self.single()}))"
        items = [self.element(depth + 1) for _ in range(self.rng.randint(2, 3))]
        if op != "OR" and self.rng.random() < 0.4:
            items.insert(self.rng.randint(0, len(items)), self.neg())
        return f"{op}({', '.join(items)})"


def _conjuncts(rng: random.Random, d: _Draw, strategy: str) -> list[str]:
    conj = ["[k]"] if strategy == "partition_contiguity" or rng.random() < 0.35 else []
    for v in d.singles + d.negs:
        if rng.random() < 0.3:
            conj.append(rng.choice([f"{v}.x > 0", f"{v}.x <= 1", f"{v}.y IS NOT NULL", f"{v}.x IN (1, 2)"]))
    for b in d.kleenes:
        r = rng.random()
        if r < 0.2:
            conj.append(f"{b}[i].x >= {b}[i-1].x")
        elif r < 0.35:
            conj.append(f"sum({b}.x) > 0")
        elif r < 0.5:
            conj.append(rng.choice([f"{b}[i].x > -2", f"{b}[1].x <= {b}[{b}.LEN].x", f"avg({b}.y) < 2"]))
        elif r < 0.6 and d.singles:
            conj.append(f"count({b}) <= 2")
    if len(d.singles) >= 2 and rng.random() < 0.5:
        a, c = rng.sample(d.singles, 2)
        conj.append(rng.choice([f"{a}.x < {c}.x", f"{a}.y <= {c}.y + 1"]))
    for n in d.negs:
        if d.singles and rng.random() < 0.5:
            conj.append(f"{n}.x > {rng.choice(d.singles)}.x")
        elif d.kleenes and rng.random() < 0.3:
            conj.append(f"{n}.x > max({rng.choice(d.kleenes)}.x)")
    return conj


def _returns(rng: random.Random, d: _Draw) -> str:
    if rng.random() >= 0.35:
        return ""
    parts = rng.sample(d.singles + d.kleenes, min(2, len(d.singles + d.kleenes)))
    for b in d.kleenes:
        if rng.random() < 0.6:
            parts.append(rng.choice([f"count({b}) AS c_{b}", f"sum({b}.x) AS s_{b}", f"max({b}.y) AS m_{b}",
                                     f"avg({b}.x) AS a_{b}", f"min({b}.x) AS mi_{b}"]))
    parts += [f"{v}.x AS x_{v}" for v in d.singles if rng.random() < 0.3]
    return " RETURN " + ", ".join(parts) if parts else ""


def gen_query(seed: int) -> tuple[str, dict, dict, bool, bool]:
    """(pattern text, compile options, run keywords, patch the constants tiny?, has Kleene lists?)."""
    rng = random.Random(seed)
    strategy = rng.choice(["skip_till_any_match"] * 3 + ["skip_till_next_match", "partition_contiguity",
                                                           "strict_contiguity"])
    linear = strategy != "skip_till_any_match"
    d = _Draw(rng, linear)
    items = [d.element(0) for _ in range(rng.randint(1, 4))]
    for _ in range(rng.choice([0, 1, 1, 2])):
        items.insert(rng.randint(0, len(items)), d.neg())
    if not d.singles and not d.kleenes:
        items.append(d.single())
    body = f"SEQ({', '.join(items)})" if (linear or rng.random() < 0.8) else f"AND({', '.join(items)})"
    conj = _conjuncts(rng, d, strategy)
    window = rng.choice([f"WITHIN {rng.randint(1, 6)}", f"WITHIN {rng.randint(2, 8)} EVENTS", "WITHIN UNBOUNDED"])
    text = f"PATTERN {body}" + (f" WHERE {' AND '.join(conj)}" if conj else "") + f" {window}{_returns(rng, d)}"
    # caps (§12) small enough that a dense closure over an unbounded window stops the reference evaluator's
    # enumeration in a moment (an ExplosionError case is not compared) rather than running for minutes
    opts: dict = dict(strategy=strategy, max_matches=20_000, max_kleene=5_000, max_partials=200_000)
    if rng.random() < 0.5:
        opts["order"] = rng.choice(["position", "strict_ts", "nondecreasing_ts"])
    if rng.random() < 0.4:
        opts["output"] = rng.choice(["non_overlapping", "match_single", "match_next"])
        if rng.random() < 0.3:
            opts["consume_types"] = tuple(rng.sample(["A", "B", "C"], rng.randint(1, 2)))
    if rng.random() < 0.15 and not linear:
        opts["kleene"] = "maximal"
    if rng.random() < 0.15:
        opts["kleene_window"] = "iteration"
    if rng.random() < 0.5:
        opts["planner"] = rng.choice(allowed(Planner))
    if rng.random() < 0.1 and d.singles:
        opts["freeze"] = (rng.choice(d.singles),)
    if rng.random() < 0.1 and len(d.singles) >= 2 and "KL(" not in body:
        opts["contiguous"] = (tuple(d.singles[:2]),)
    texts = [text]
    if rng.random() < 0.25 and "freeze" not in opts and "contiguous" not in opts:
        texts.append(rng.choice(["PATTERN SEQ(A a, B b) WITHIN 4", "PATTERN SEQ(A a, !C n, B+ b[]) WHERE [k] WITHIN 5"]
                                + ([] if linear else ["PATTERN AND(B b, C c) WHERE b.x < c.x WITHIN 3 EVENTS",
                                                      "PATTERN SEQ(A a, B* b[], C c) WITHIN 5 RETURN a, count(b) AS cb"])))
    run_kw: dict = {}
    if rng.random() < 0.3:
        run_kw["partition_by"] = rng.choice(["s", ["s"], ["k"], ["s", "k"]])
    if rng.random() < 0.4:
        run_kw["threads"] = rng.choice([1, 2])
    return ";\n".join(texts), opts, run_kw, rng.random() < 0.4, bool(d.kleenes)


@contextlib.contextmanager
def tiny_constants(on: bool):
    with contextlib.ExitStack() as stack:
        for name, value in (TINY.items() if on else ()):
            stack.enter_context(mock.patch.object(config, name, value))
        yield


def _run(q, df, engine: str, kw: dict, tiny: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # a fallback would compare the reference with itself
        with tiny_constants(tiny):
            return q.run(df, time="ts", type="type", engine=engine, **kw)


def _result(q, df, engine, kw, tiny):
    """The result frame, or the named error's type (an ExplosionError: None, the engines count work apart)."""
    try:
        return _run(q, df, engine, kw, tiny)
    except ExplosionError:
        return None
    except JitcepError as e:
        return type(e)


def combination_agrees(seed: int, n_streams: int, *, max_size: int) -> None:
    text, opts, kw, tiny, _ = gen_query(seed)
    try:
        q = jitcep.compile(text, **opts)
    except JitcepError:
        return  # a combination the semantics refuses, with a named error
    HITS[2] += 1

    @hypothesis_seed(seed)
    @settings(max_examples=n_streams, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(event_frames(types=("A", "B", "C", "D"), max_size=max_size))
    def run(df):
        ref = _result(q, df, "reference", kw, False)
        out = _result(q, df, "compiled", kw, tiny)
        if ref is None or out is None:
            return
        where = f"{text}\n{opts} {kw} tiny={tiny}\n{df}"
        assert not isinstance(ref, type) and not isinstance(out, type) or ref is out, (ref, out, where)
        if isinstance(ref, type):
            return
        assert out.schema == ref.schema, where
        want, got = [repr(r) for r in ref.iter_rows()], [repr(r) for r in out.iter_rows()]
        assert got == want, where  # row for row: §11 orders tied Kleene lists too
        HITS[0] += ref.height > 0
        HITS[1] += 1

    run()


@pytest.mark.parametrize("seed", range(N_SEEDS))
def test_combinations_compiled_equals_reference(seed):
    combination_agrees(seed, N_STREAMS, max_size=16)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(N_SEEDS, N_SEEDS + SLOW_SEEDS))
def test_combinations_compiled_equals_reference_slow(seed):
    combination_agrees(seed, 20, max_size=40)


def test_combinations_compiled_and_matched():
    """The draws above are not vacuous: most compile, and the reference matches on a share of the cases."""
    if not HITS[1]:
        pytest.skip("the combination tests did not run in this session")
    assert HITS[2] >= 0.6 * N_SEEDS or HITS[1] >= 200, HITS
    assert HITS[0] >= 0.1 * HITS[1], HITS


# Row 0 is another stream's (null key), row 2 another key's: each shifts the Bs' positions inside the
# k=1 stream of partition_by="k" (§13) against the whole table's.  Matches, by hand: a=1, c=5 and b one of
# [3], [4], [3, 4]; they tie on every single variable, so §11 orders them by the list, lexicographically:
# [3], [3, 4], [4].  Each policy's scan (§9) keeps the first, (1, [3], 5), and drops the others (a's event
# is bound again; they start before the kept match ends).  With partition_by="k" the k=1 stream has the
# same matches in the same order (positions within a stream keep the table's order), so the same answer;
# with partition_by=["k", "type"] no stream holds an A, a B and a C.
TIED_LISTS = [("D", 0, None), ("A", 1, 1), ("D", 2, 0), ("B", 2, 1), ("B", 2, 1), ("C", 3, 1)]


@pytest.mark.parametrize("output", ["non_overlapping", "match_single", "match_next"])
def test_a_policy_over_tied_kleene_lists_keeps_the_same_match_in_every_stream_split(output):
    import polars as pl

    df = pl.DataFrame({"type": [r[0] for r in TIED_LISTS], "ts": [r[1] for r in TIED_LISTS],
                       "k": [r[2] for r in TIED_LISTS]})
    q = jitcep.compile("PATTERN SEQ(A a, B+ b[], C c) WHERE [k] WITHIN 6", output=output)
    for engine, threads in (("reference", None), ("compiled", 1), ("compiled", 2)):
        for partition_by, want in ((None, [(1, (3,), 5)]), ("k", [(1, (3,), 5)]), (["k", "type"], [])):
            kw = dict(time="ts", type="type", engine=engine)
            kw.update({"threads": threads} if threads else {})
            kw.update({"partition_by": partition_by} if partition_by else {})
            got = [(r["a"]["row"], tuple(m["row"] for m in r["b"]), r["c"]["row"])
                   for r in q.run(df, **kw).iter_rows(named=True)]
            assert got == want, (engine, threads, partition_by)
