"""``jitcep warmup`` compiles and caches the kernels (jitcep/warmup.py); the first-run notice on a terminal (jitcep/first_run.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jitcep import first_run, warmup

ROOT = Path(__file__).resolve().parent.parent


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """warmup's per-process state reset, its cache directory a new empty one."""
    monkeypatch.setattr(first_run, "_noticed", False)
    monkeypatch.setattr(first_run, "_known_cached", False)
    monkeypatch.setattr(first_run, "cache_directory", lambda: tmp_path / "kernels")
    return tmp_path / "kernels"


def test_notice_on_a_terminal_once_until_the_cache_is_marked(fresh):
    term = FakeTerminal()
    first_run.notice(term)
    first_run.notice(term)
    assert term.getvalue() == first_run.NOTICE + "\n"
    first_run.mark_cached()
    assert first_run.marker().exists() and first_run.marker().parent == fresh


def test_no_notice_when_the_cache_is_marked(fresh, monkeypatch):
    first_run.mark_cached()
    monkeypatch.setattr(first_run, "_known_cached", False)  # a new process: it looks at the disk
    assert not first_run.should_notice(FakeTerminal())


def test_no_notice_off_a_terminal(fresh):
    assert first_run.should_notice(FakeTerminal())
    stream = io.StringIO()
    first_run.notice(stream)
    assert stream.getvalue() == ""


def test_no_notice_without_a_trusted_cache(monkeypatch):
    # compiled in memory every time: "first run only" would be false (an UntrustedCacheWarning says why)
    monkeypatch.setattr(first_run, "_noticed", False)
    monkeypatch.setattr(first_run, "_known_cached", False)
    monkeypatch.setattr(first_run, "cache_directory", lambda: None)
    assert not first_run.should_notice(FakeTerminal())


def test_marker_names_the_kernel_sources(fresh, monkeypatch, tmp_path):
    # an upgraded jitcep (other kernel sources) is not taken for a warm cache
    before = first_run.marker()
    other = tmp_path / "src"
    other.mkdir()
    (other / "join.py").write_text("changed = True\n")
    monkeypatch.setattr(first_run, "_KERNELS", other)
    assert first_run.marker() != before


def _env(tmp_path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), JITCEP_CACHE_DIR=str(tmp_path / "jitcep"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _on_terminal(code: str, env: dict) -> str:
    """stdout of ``python -c code`` run with its stderr on a pseudo-terminal."""
    import pty

    master, slave = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, stderr=slave, stdout=subprocess.PIPE,
                              text=True, timeout=600)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0
    return done.stdout.strip()


ASK = "import sys; from jitcep import first_run; print(first_run.should_notice(sys.stderr))"


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_warmup_fills_the_cache_and_silences_the_notice(tmp_path):
    env = _env(tmp_path)
    assert _on_terminal(ASK, env) == "True"

    # `jitcep warmup`, then the kernel signatures it compiled written to a file (stdout stays the CLI's)
    sigs = tmp_path / "signatures.txt"
    code = ("import sys, importlib, pkgutil\n"
            "from numba.core.registry import CPUDispatcher\n"
            "from jitcep.cli import main\n"
            "rc = main(['warmup'])\n"
            "import jitcep.kernels as K\n"
            "with open(sys.argv[1], 'w') as f:\n"
            "    for m in pkgutil.iter_modules(K.__path__):\n"
            "        for name, d in vars(importlib.import_module('jitcep.kernels.' + m.name)).items():\n"
            "            if isinstance(d, CPUDispatcher):\n"
            "                f.writelines(f'{m.name}.{name} {s}\\n' for s in d.signatures)\n"
            "sys.exit(rc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(sigs)], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "jitcep: warmup: done" in done.stderr
    # a constant passed from one kernel to another is a specialisation of its own (Numba types it as a
    # Literal): compiled again on a first run for nothing (perf/notes/compile.md, compile latency)
    compiled = sigs.read_text().splitlines()
    assert any(line.startswith("join._seq_join ") for line in compiled)
    # the planner's sample, keyed and not (reached only by tables large enough to be planned)
    assert len([line for line in compiled if line.startswith("sampling._sample ")]) >= 2
    assert any(line.startswith("sampling._sample_views ") for line in compiled)  # a String key's sample
    assert any(line.startswith("window._most_per_window ") for line in compiled)  # auto's bound on a small table
    assert [line for line in compiled if "Literal" in line] == []
    numba_dir = tmp_path / "numba"
    indexed = {p.name.split(".")[0] for p in numba_dir.glob("kernels_*/*.nbi")}
    assert {"grouping", "join", "negation", "kleene", "encode"} <= indexed
    assert list(numba_dir.glob("kernels_*/jitcep-warm-*"))

    assert _on_terminal(ASK, env) == "False"


def test_cli_warmup_subcommand(monkeypatch, capsys):
    from jitcep import cli

    seen = []
    monkeypatch.setattr(warmup, "warmup", lambda: seen.append(True))
    assert cli.main(["warmup"]) == 0
    assert seen == [True]


def test_a_run_with_list_output_does_not_import_pandas():
    # pandas is not needed to build the output, and importing it cost a run 1.2 s: pyarrow's array()
    # imports it to test whether its argument is a pandas object
    code = ("import sys, polars as pl, jitcep\n"
            "df = pl.DataFrame({'type': ['A', 'B', 'B', 'C'], 'ts': [1, 2, 3, 4], 'x': [1, 2, 3, 4]})\n"
            "out = jitcep.compile('PATTERN SEQ(A a, B+ b[], C c) WITHIN 5').run(df, time='ts', type='type',\n"
            "                                                                   engine='compiled')\n"
            "ts = out['b'].list.eval(pl.element().struct.field('ts')).to_list()\n"
            "assert sorted(ts) == [[2], [2, 3], [3]], ts  # every nonempty subsequence of the two B events\n"
            "print('pandas' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
