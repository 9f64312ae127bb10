"""Caps bound memory, not only output (docs/semantics.md §12).

Every cap is checked while the structure it bounds grows: an explosion ends in
ExplosionError with the peak memory near ``max_memory``, whatever the
pattern, and below the caps the result is the reference evaluator's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitcep
from jitcep.errors import ExplosionError

_PROBE = textwrap.dedent("""
    import json, resource, sys
    import numpy as np, polars as pl, jitcep
    pattern, n, options = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    warm = pl.DataFrame({"type": ["A", "B", "A"], "ts": [1, 2, 3]})
    jitcep.compile(pattern, **options).run(warm, time="ts", type="type")  # compile and import first
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"type": rng.choice(["A", "B"], n), "ts": np.arange(n)})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        jitcep.compile(pattern, **options).run(df, time="ts", type="type")
        error = None
    except jitcep.JitcepError as e:
        error = f"{type(e).__name__}: {e}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"error": error, "growth_mib": (peak - before) / 1024}))
""")

MAX_MEMORY = 64 << 20


@pytest.mark.parametrize("pattern, n, options", [
    # every (a, d) pair has a third of the events as members: about n^3 / 12 (record, member) pairs
    ("PATTERN SEQ(* a, A* c[], * d) WITHIN UNBOUNDED", 700, {}),
    ("PATTERN SEQ(* a, A* c[], * d) WITHIN UNBOUNDED", 700, {"kleene": "maximal"}),
    ("PATTERN SEQ(* a, A* c[], * d) WITHIN UNBOUNDED", 700, {"max_kleene": 1000}),
    # the joins: n^2 / 2 pairs at the first, then more
    ("PATTERN SEQ(* a, * b, * c, * d, * e, * f) WITHIN UNBOUNDED", 3000, {"max_matches": 10}),
])
def test_an_explosion_stops_near_max_memory(pattern, n, options):
    options = {**options, "max_memory": MAX_MEMORY}
    out = subprocess.run([sys.executable, "-c", _PROBE, pattern, str(n), json.dumps(options)],
                         capture_output=True, text=True, timeout=600, env={**os.environ})
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["error"] is not None and got["error"].startswith("ExplosionError") \
        and "max_memory" in got["error"], got
    # chunks of candidate pairs (2^20 at a time) and their temporaries come on top of the budget
    assert got["growth_mib"] < MAX_MEMORY / 2**20 + 160, got


def _streams():
    row = st.tuples(st.sampled_from(["A", "B", "C"]), st.integers(0, 3))
    return st.lists(row, min_size=1, max_size=14)


PATTERNS = ["PATTERN SEQ(A a, B b, C c) WITHIN 6", "PATTERN SEQ(A a, B* b[], C c) WITHIN 8",
            "PATTERN AND(A a, * b, C c) WITHIN 5", "PATTERN SEQ(* a, A+ b[], * c) WITHIN UNBOUNDED"]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_streams(), st.sampled_from([1, 2_000, 20_000, 1 << 30]))
def test_under_the_cap_the_result_is_the_references(pattern, rows, limit):
    ts = np.cumsum([r[1] for r in rows])
    df = pl.DataFrame({"type": [r[0] for r in rows], "ts": ts})
    q = jitcep.compile(pattern, max_memory=limit)
    want = jitcep.compile(pattern).run(df, time="ts", type="type", engine="reference")
    try:
        got = q.run(df, time="ts", type="type", engine="compiled")
    except ExplosionError as e:
        assert "max_memory" in str(e) and limit < 1 << 30
        return
    assert got.equals(want)


def test_a_list_deeper_than_the_recursion_limit_is_an_explosion_on_the_reference():
    n = sys.getrecursionlimit() + 100
    df = pl.DataFrame({"type": ["A"] + ["B"] * n + ["C"], "ts": list(range(n + 2))})
    q = jitcep.compile(f"PATTERN SEQ(A a, B{{{n}}} b[], C c) WITHIN UNBOUNDED")
    with pytest.raises(ExplosionError, match="recursion limit"):
        q.run(df, time="ts", type="type", engine="reference")


def test_max_memory_must_be_a_positive_integer():
    for bad in (0, -1, 1.5, True, "1GB"):
        with pytest.raises(jitcep.OptionError):
            jitcep.compile("PATTERN A a WITHIN 5", max_memory=bad)


def test_earlier_lists_copied_for_each_new_list_are_charged_before_they_are_made():
    # one record whose closure b holds 1000 members, and 1000 new lists of the next closure for it: the
    # copies of b's list (one per new list, 8 MB) must be refused by a 4 MB budget before any is made
    from types import SimpleNamespace
    from unittest import mock

    from jitcep.budget import MemoryBudget
    from jitcep.execute import kleene
    from jitcep.execute.buffer import Buffer

    one = np.zeros(1, np.int64)
    buf = Buffer(("a",), one.reshape(1, 1), one, one, np.array([0, 1], np.int64), one, one, one, one,
                 {"b": (np.array([0, 1000], np.int64), np.arange(1000, dtype=np.int64))})
    src = np.zeros(1000, np.int64)
    with mock.patch.object(kleene, "gather_lists", side_effect=AssertionError("copied before the check")), \
            pytest.raises(ExplosionError, match="max_memory"):
        kleene._per_list(SimpleNamespace(memory=MemoryBudget(4 << 20)), buf, src)
    off, lists = kleene._per_list(SimpleNamespace(memory=MemoryBudget(64 << 20)), buf, src)["b"]
    assert off.tolist() == list(range(0, 1000 * 1000 + 1, 1000))
    assert lists.tolist() == list(range(1000)) * 1000


@pytest.mark.parametrize("in_loop", [False, True], ids=["tested_after", "tested_in_loop"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("options", [{"max_partials": 5000}, {"max_memory": 1 << 20}])
def test_a_joins_pair_arrays_never_outgrow_its_cap(options, threads, in_loop):
    # a SEQ join fills its pair arrays before it checks its cap (jitcep.kernels.join._stopped), and sized the
    # next ones by the pairs per record so far times the records left: SEQ(A a, A b) WITHIN 50 over 2,000
    # A's (about 100,000 pairs) asked for arrays of 122,000 pairs under max_partials=5,000; four A's WITHIN
    # 50 over 20,000 A's under max_memory=1 GiB wrote 6 GB of pairs before raising
    from unittest import mock

    from jitcep.kernels import join as join_kernels

    sizes = []
    real = join_kernels._pair_arrays

    def recorded(n):
        sizes.append(n)
        return real(n)

    df = pl.DataFrame({"type": ["A"] * 2000, "ts": np.arange(2000), "x": np.zeros(2000, np.int64)})
    q = jitcep.compile("PATTERN SEQ(A a, A b) WHERE a.x <= b.x WITHIN 50", **options)
    # in_loop: the join with its predicate in its loop (jitcep.execute.join_where), whatever its size; its
    # arrays were sized from the pairs so far alone (3,000 A's then 4,096 B's under a cap of 20,000: 368 MB)
    from jitcep import config
    with mock.patch.object(join_kernels, "_pair_arrays", recorded), pytest.raises(ExplosionError), \
            mock.patch.object(config, "JOIN_WHERE_MIN_RIGHT", 0 if in_loop else config.JOIN_WHERE_MIN_RIGHT):
        q.run(df, time="ts", type="type", threads=threads)
    most = max(options.get("max_partials", 0), join_kernels._MIN_PAIRS)
    # (li, ri, g): 24 bytes a pair, in the budget beside the inputs (semantics section 12)
    assert sizes and (max(sizes) <= most if "max_partials" in options else 24 * max(sizes) <= options["max_memory"])
