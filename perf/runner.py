"""``python -m perf run``: measure jitcep and its baselines on the workloads, print a table, write JSON.

Per workload: the engine under test runs ``repeats`` times after one warm-up
run; ``jit_s`` is the first run's extra time over a second one on a 1,000-row
head (Numba compilation or cache loading for a new pattern); ``compile_s`` is
``jitcep.compile`` (parse and validate).  Peak memory is measured in two extra
runs before the timed ones: the peak resident-set growth (Linux: ``/proc/self/clear_refs`` resets
the high-water mark, ``VmHWM`` reads it; this sees Polars' and Numba's native
allocations, which tracemalloc does not) and tracemalloc's peak (Python
objects and numpy buffers, which numpy reports to tracemalloc).  Each baseline
is checked against the engine's matches on the same input before its median
time counts; ``ratio`` = baseline time / engine time (above 1: jitcep is
faster; for ``numba_scan``, the scan limit, it is at most 1).
"""

from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from . import SCHEMA_VERSION
from . import baselines as B
from .workloads import Workload, WorkloadUnavailable

REFERENCE_ENGINE_MAX_EVENTS = 3_000   # the reference evaluator is brute force: small inputs only


@dataclass
class RunConfig:
    engine: str = "compiled"
    quick: bool = False
    repeats: int = 5
    budget_s: float = 20.0      # per baseline run; DuckDB is interrupted past it, others are not repeated
    baselines: tuple[str, ...] | None = None   # None: all
    verbose: bool = True
    clock: str = "wall"         # "cpu": every run timed by the process's CPU time (all its threads)


# ----------------------------------------------------------------------------------------------
# Memory


def _proc_status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # 5: reset the peak RSS (VmHWM) to the current RSS (Linux >= 4.0)
        return True
    except OSError:
        return False


def peak_rss_delta(fn) -> int | None:
    """Bytes by which the resident set's peak during ``fn()`` exceeded the resident set before it."""
    gc.collect()
    if not _reset_peak_rss():
        return None
    before = _proc_status("VmRSS")
    fn()
    peak = _proc_status("VmHWM")
    return None if before is None or peak is None else max(peak - before, 0)


def peak_traced(fn) -> int:
    """tracemalloc's peak during ``fn()`` (Python objects and numpy buffers)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ----------------------------------------------------------------------------------------------
# Environment


def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu": cpu,
            "cpu_count": os.cpu_count(), "cpus_usable": usable, "python": platform.python_version(),
            "hostname": platform.node()}


def versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("jitcep", "numba", "numpy", "polars", "pyarrow", "duckdb", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_info() -> dict:
    root = Path(__file__).resolve().parent.parent

    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "jitcep", "perf")) if commit else None
    return {"commit": commit or None, "dirty": dirty}


def default_engine() -> str:
    """``compiled`` when the compiled engine is importable, else ``reference``."""
    try:
        from jitcep.runtime import evaluate  # noqa: F401
        return "compiled"
    except ImportError:
        return "reference"


# ----------------------------------------------------------------------------------------------
# Timing


_CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter  # set by run() from RunConfig.clock


def _timed(fn):
    t = _clock()
    out = fn()
    return _clock() - t, out


def _with_budget(b: B.Baseline, state, budget_s: float):
    """Run ``b`` once; interrupt it past ``budget_s`` when it can be interrupted.  (seconds, result | None)."""
    timer = None
    fired = threading.Event()
    if b.interrupt is not None:
        def fire():
            fired.set()
            b.interrupt(state)
        timer = threading.Timer(budget_s, fire)
        timer.start()
    try:
        dt, out = _timed(lambda: b.run(state))
    except Exception:
        if fired.is_set():
            return None, None
        raise
    finally:
        if timer is not None:
            timer.cancel()
    return dt, out


class EngineUnderTest:
    """jitcep with a chosen engine on one input, with its matches and median time (cached per input size)."""

    def __init__(self, engine: str, q, repeats: int, options: dict | None = None):
        self.engine, self.q, self.repeats, self.options = engine, q, repeats, options or {}
        self._cache: dict[int, dict] = {}

    def measure(self, df: pl.DataFrame, *, memory: bool = False) -> dict:
        if df.height in self._cache and not memory:
            return self._cache[df.height]
        import jitcep

        dt_compile, query = _timed(lambda: jitcep.compile(self.q.text(), **self.options))
        src = df.drop("row")

        def once(frame=src):
            return query.run(frame, time="ts", type="type", engine=self.engine, threads=__import__("perf").THREADS)
        # JIT cost: a small head run twice (the first compiles or loads the cache); keeping the
        # data small leaves the allocator's retained memory small for the peak measurement below
        head = src.head(min(1_000, src.height))
        jit = _timed(lambda: once(head))[0] - _timed(lambda: once(head))[0]
        res = {}
        if memory:
            cols = ["ts", "type", *([self.q.key] if self.q.key else []), *self.q.attrs]
            res["input_bytes"] = int(src.select(cols).estimated_size())
            # the first full-size run: its pages are new, so the resident-set peak shows them
            res["peak_rss_bytes"] = peak_rss_delta(once)
            res["peak_traced_bytes"] = peak_traced(once)
        first, out = _timed(once)
        runs = [_timed(once)[0] for _ in range(self.repeats)]
        med = statistics.median(runs)
        res.update({"events": df.height, "matches": out.height, "compile_s": dt_compile, "first_run_s": first,
                    "jit_s": max(jit, 0.0), "runs_s": runs, "median_s": med,
                    "events_per_s": df.height / med if med > 0 else None,
                    "matches_per_s": out.height / med if med > 0 else None,
                    "output_bytes": int(out.estimated_size()),
                    "rows": B.canonical(B.jitcep_matches(out, self.q))})
        self._cache[df.height] = res
        return res


def _check(rows: np.ndarray, expected: np.ndarray) -> str | None:
    """None when the two match multisets are equal, else a short description of the difference."""
    got = B.canonical(rows)
    if got.shape == expected.shape and np.array_equal(got, expected):
        return None
    g = {tuple(r) for r in got.tolist()}
    e = {tuple(r) for r in expected.tolist()}
    extra, missing = sorted(g - e)[:3], sorted(e - g)[:3]
    return (f"{len(got)} matches vs jitcep's {len(expected)}; extra {extra}, missing {missing}"
            if extra or missing else f"{len(got)} matches vs jitcep's {len(expected)} (multiplicities differ)")


def run_workload(w: Workload, cfg: RunConfig) -> dict:
    n = w.quick_n if cfg.quick else w.n
    if cfg.engine == "reference":
        n = min(n or REFERENCE_ENGINE_MAX_EVENTS, REFERENCE_ENGINE_MAX_EVENTS)
    entry = {"name": w.name, "family": w.family, "params": w.params, "real": w.real}
    try:
        df, q = w.make(n)
    except WorkloadUnavailable as e:
        entry.update(status="unavailable", reason=str(e))
        return entry
    df = B.with_rows(df)
    entry.update(status="ok", pattern=q.text(), events=df.height)
    eut = EngineUnderTest(cfg.engine, q, cfg.repeats, w.options)
    full = eut.measure(df, memory=True)
    entry["engine"] = {k: v for k, v in full.items() if k != "rows"}
    entry["matches"] = full["matches"]
    results = {}
    for b in B.registry(cfg.engine):
        if cfg.baselines is not None and b.name not in cfg.baselines:
            continue
        results[b.name] = _run_baseline(b, df, q, eut, full, cfg)
    entry["baselines"] = results
    entry["ratios"] = {k: v["ratio"] for k, v in results.items() if v.get("ratio") is not None}
    if any(v["status"] == "mismatch" for v in results.values()):
        entry["status"] = "mismatch"
    return entry


def _run_baseline(b: B.Baseline, df: pl.DataFrame, q, eut: EngineUnderTest, full: dict, cfg: RunConfig) -> dict:
    why = b.unavailable()
    if why:
        return {"status": "unavailable", "reason": why}
    sub, ref = df, full
    limit = b.limit(q)
    if limit is not None and df.height > limit:
        if not b.prefix_ok:
            return {"status": "skipped", "reason": f"input larger than {limit} events"}
        sub = df.head(limit)
        ref = eut.measure(sub)
    try:
        state = b.prepare(sub, q)
        dt, out = _with_budget(b, state, cfg.budget_s)
    except Exception as e:  # a baseline failing is reported, not fatal to the run
        return {"status": "error", "reason": f"{type(e).__name__}: {e}"[:500], "events": sub.height}
    if dt is None:
        return {"status": "timeout", "reason": f"interrupted after {cfg.budget_s:g} s", "events": sub.height}
    res = {"events": sub.height, "prefix": sub.height < df.height}
    if b.kind == "matches":
        diff = _check(out, ref["rows"])
        if diff:
            return {**res, "status": "mismatch", "reason": diff}
        res["matches"] = len(out)
    runs = [dt]
    # repeat within the budget; a slow baseline gets fewer repeats, never none
    while len(runs) < cfg.repeats and sum(runs) + statistics.median(runs) <= cfg.budget_s:
        runs.append(_timed(lambda: b.run(state))[0])
    med = statistics.median(runs)
    res.update(status="ok", runs_s=runs, median_s=med, events_per_s=sub.height / med if med > 0 else None,
               engine_median_s=ref["median_s"], ratio=(med / ref["median_s"]) if ref["median_s"] > 0 else None)
    return res


# ----------------------------------------------------------------------------------------------
# Report


def _fmt_rate(x) -> str:
    if x is None:
        return "-"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return f"{x:.3g}"


def _fmt_ratio(v: dict | None) -> str:
    if v is None:
        return ""
    st = v["status"]
    if st != "ok":
        return {"mismatch": "MISMATCH", "timeout": "timeout", "unavailable": "n/a", "skipped": "skip",
                "error": "ERROR"}.get(st, st)
    r = v["ratio"]
    return f"{r:.3g}x" + ("*" if v.get("prefix") else "")


def format_table(doc: dict) -> str:
    names: list[str] = []
    for w in doc["workloads"]:
        for b in w.get("baselines", {}):
            if b not in names:
                names.append(b)
    head = ["workload", "events", "matches", "ev/s", "match/s", "ms", "jit s", "peak MB", *names]
    rows = [head]
    for w in doc["workloads"]:
        if w["status"] == "unavailable":
            rows.append([w["name"], "-", "-", "unavailable: " + w["reason"][:60]] + [""] * (len(head) - 4))
            continue
        e = w["engine"]
        peak = e.get("peak_rss_bytes")
        rows.append([w["name"], str(w["events"]), str(w["matches"]), _fmt_rate(e["events_per_s"]),
                     _fmt_rate(e["matches_per_s"]), f"{e['median_s'] * 1e3:.1f}", f"{e['jit_s']:.2f}",
                     "-" if peak is None else f"{peak / 2**20:.1f}",
                     *[_fmt_ratio(w["baselines"].get(b)) for b in names]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(wd) if i else c.ljust(wd) for i, (c, wd) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append(f"engine={doc['engine']}  ratio = baseline time / jitcep time on the same input "
                 "(* = measured on a prefix); numba_scan is the scan limit")
    for w in doc["workloads"]:
        for b, v in w.get("baselines", {}).items():
            if v["status"] in ("mismatch", "error"):
                lines.append(f"{v['status'].upper()} {w['name']} / {b}: {v['reason']}")
    return "\n".join(lines)


def run(workloads: list[Workload], cfg: RunConfig, out: str | Path | None) -> dict:
    """Measure ``workloads``; write the JSON document to ``out`` (if given) and return it."""
    global _clock
    _clock = _CLOCKS[cfg.clock]
    doc = {"clock": cfg.clock, "schema": SCHEMA_VERSION, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "engine": cfg.engine, "quick": cfg.quick, "repeats": cfg.repeats, "budget_s": cfg.budget_s,
           "threads": __import__("perf").THREADS, "machine": machine(), "versions": versions(), "git": git_info(),
           "argv": sys.argv[1:], "workloads": []}
    for w in workloads:
        t = time.perf_counter()
        entry = run_workload(w, cfg)
        entry["wall_s"] = time.perf_counter() - t
        doc["workloads"].append(entry)
        if cfg.verbose:
            print(f"  {w.name}: {entry['status']} ({entry['wall_s']:.1f} s)", file=sys.stderr, flush=True)
        if out:  # after every workload, so a long run that dies keeps what it measured
            _write(doc, Path(out), complete=False)
    if out:
        _write(doc, Path(out), complete=True)
    return doc


def _write(doc: dict, path: Path, *, complete: bool) -> None:
    doc["complete"] = complete
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=_json_default))
    tmp.replace(path)   # never a half-written file


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    raise TypeError(f"cannot serialise {type(x).__name__}")
