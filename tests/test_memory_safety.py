"""No input the public API accepts may crash the process (DESIGN.md section 5, docs/semantics.md §3).

A crash kills the interpreter, so every run here that once crashed happens in
a subprocess, and the test asserts that the subprocess ended normally with
the named error (a segmentation fault is a negative exit status).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import jitcep
from jitcep import reference, runtime
from jitcep.events import build_event_table
from jitcep.options import Options

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter that imports this checkout's jitcep."""
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=600, env=full_env, cwd=str(ROOT))


# --- typed variables without a type column ---------------------------------------------------


def test_typed_pattern_without_type_column_is_a_named_error_not_a_crash():
    # thousands of events: the type grouping of this input wrote out of bounds and killed the process
    got = run_python("""
        import polars as pl, jitcep
        df = pl.DataFrame({"kind": ["A", "B", "A", "B"] * 2000, "ts": list(range(8000))})
        q = jitcep.compile("PATTERN SEQ(A a, !C c, ANY(B, D) b) WITHIN 10")
        for engine in ("compiled", "reference"):
            try:
                q.run(df, engine=engine)
            except jitcep.MissingTypeColumnError as e:
                print(engine, "|", e)
            else:
                print(engine, "| no error")
    """)
    assert got.returncode == 0, got.stderr[-2000:]
    lines = got.stdout.strip().splitlines()
    assert [ln.split(" | ")[0] for ln in lines] == ["compiled", "reference"]
    for ln in lines:
        msg = ln.split(" | ")[1]
        # names the types the pattern uses and how to pass the column, in Python and on the command line
        assert "'A'" in msg and "'B'" in msg and "'C'" in msg and "'D'" in msg, msg
        assert 'type="kind"' in msg and "--type kind" in msg, msg


def test_typed_pattern_without_type_column_on_the_command_line(tmp_path):
    data = tmp_path / "events.parquet"
    pl.DataFrame({"kind": ["A", "B"] * 2000, "ts": list(range(4000))}).write_parquet(data)
    pat = tmp_path / "p.cep"
    pat.write_text("PATTERN SEQ(A a, B b) WITHIN 10")
    got = subprocess.run([sys.executable, "-m", "jitcep.cli", "run", str(pat), str(data)], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert got.returncode == 2, (got.returncode, got.stderr[-2000:])
    assert "MissingTypeColumnError" in got.stderr and "--type kind" in got.stderr
    assert got.stdout == ""


def test_missing_type_column_error_is_a_missing_column_error():
    df = pl.DataFrame({"kind": ["A"], "ts": [1]})
    with pytest.raises(jitcep.MissingColumnError):
        jitcep.compile("PATTERN SEQ(A a, * b) WITHIN 10").run(df, engine="reference")


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_untyped_pattern_needs_no_type_column(engine):
    df = pl.DataFrame({"ts": [1, 2, 4], "x": [3, 1, 5]})
    out = jitcep.compile("PATTERN SEQ(* a, * b) WHERE a.x < b.x WITHIN 2").run(df, engine=engine)
    # (0, 2) spans 3 > 2; (1, 2) has 1 < 5 and spans 2; (0, 1) has 3 > 1
    assert [(a["row"], b["row"]) for a, b in zip(out["a"], out["b"])] == [(1, 2)]


def test_table_without_type_column_gives_every_event_the_null_type():
    df = pl.DataFrame({"ts": [1, 2, 3, 4]})
    t = build_event_table(df, None)
    assert t.type_names == () and t.type_code.tolist() == [-1, -1, -1, -1]
    # evaluated directly over such a table, a typed variable matches nothing on either engine, and
    # an untyped one everything (semantics §3)
    typed = jitcep.compile("PATTERN SEQ(A a, * b) WITHIN 10").patterns[0]
    untyped = jitcep.compile("PATTERN SEQ(* a, * b) WITHIN 1").patterns[0]
    for evaluate in (reference.evaluate, runtime.evaluate):
        got_typed, got_untyped = evaluate([typed, untyped], t, Options())
        assert got_typed.n == 0
        assert sorted(zip(got_untyped.single["a"].tolist(), got_untyped.single["b"].tolist())) == \
            [(0, 1), (1, 2), (2, 3)]
