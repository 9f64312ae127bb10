"""Compile latency as a user feels it (issue 12), each case in a fresh subprocess:

    python perf/bench_compile.py --runs 3

- ``demo cold``: ``jitcep demo`` end to end (interpreter start and import
  included) with empty ``NUMBA_CACHE_DIR`` and ``JITCEP_CACHE_DIR``: the
  first run on a new machine.
- ``new shape, warm process``: a process runs the demo pattern, then a pattern
  of another shape (``--shapes``); only the second is timed, in the process.
  Twice: with empty caches (``caches empty``: the first session's second
  pattern) and with the kernels already on disk (``kernels cached``: after
  ``jitcep warmup`` or an earlier run; the new pattern's own predicate module
  is still compiled, as its source is new).
- ``warm cache, fresh process``: a new process imports jitcep and runs a
  pattern whose code is all on disk (interpreter start and import included).
  ``import floor`` is the same process importing only polars and numba: the
  part jitcep cannot remove.

Every case gets new temporary cache directories per run (the warm ones are
filled by an untimed run first), so runs do not share caches with each other
or with the user's.  Printed: min and median of ``--runs`` runs, in seconds.
The machine's other load moves these numbers: compare rows of one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: patterns over the demo table (jitcep/data/nasdaq_demo.parquet), each a shape the demo pattern is not
SHAPES = {
    "seq3": "PATTERN SEQ(AAPL a, GOOG g, AMZN z) WHERE a.close < g.close AND z.volume > 1000 WITHIN 5 minutes",
    "and": "PATTERN AND(AAPL a, GOOG g) WHERE a.close > a.open WITHIN 2 minutes",
    "kleene": "PATTERN SEQ(AAPL a, GOOG+ g[], AMZN z) WHERE a.open < a.close WITHIN 3 minutes",
}

# what the child processes run; the first line is the imports a warm-cache process pays for
_CHILD = """
import time, json, sys
t0 = time.perf_counter()
import jitcep
from jitcep.cli import demo_files
t1 = time.perf_counter()
data = demo_files()[1]
first, second = sys.argv[1], sys.argv[2]
jitcep.compile(first).run(data, time="ts", type="ticker", engine="compiled")
t2 = time.perf_counter()
if second:
    jitcep.compile(second).run(data, time="ts", type="ticker", engine="compiled")
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "second": t3 - t2}))
"""


def _env(tmp: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"), JITCEP_CACHE_DIR=os.path.join(tmp, "jitcep"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(args: list[str], env: dict) -> tuple[float, str]:
    """Wall time of a fresh process, and its stdout (it must exit 0)."""
    t = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if done.returncode:
        raise RuntimeError(f"{args[:2]} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, done.stdout


def _child(env: dict, first: str, second: str = "") -> dict:
    wall, out = _run(["-c", _CHILD, first, second], env)
    return dict(json.loads(out.strip().splitlines()[-1]), wall=wall)


def demo_pattern() -> str:
    return (ROOT / "jitcep" / "data" / "demo.cep").read_text()


def demo_cold() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return _run(["-c", "import sys; from jitcep.cli import main; sys.exit(main(['demo']))"], _env(tmp))[0]


_kernels: list[str] = []  # a Numba cache that every shape has run against once, made on first use


def _kernel_cache() -> str:
    if not _kernels:
        tmp = tempfile.mkdtemp(prefix="bench-compile-")
        env = _env(tmp)
        for text in SHAPES.values():
            _child(env, demo_pattern(), text)
        _kernels.append(env["NUMBA_CACHE_DIR"])
    return _kernels[0]


def new_shape(shape: str, kernels_cached: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(tmp)
        if kernels_cached:
            # the kernels' cache copied; the predicate modules' cache entries are keyed by their file's
            # path, which is under this run's new JITCEP_CACHE_DIR, so the new pattern is compiled
            shutil.copytree(_kernel_cache(), env["NUMBA_CACHE_DIR"])
        return _child(env, demo_pattern(), SHAPES[shape])["second"]


def warm_fresh(shape: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(tmp)
        _child(env, SHAPES[shape])
        return _child(env, SHAPES[shape])["wall"]


def import_floor() -> float:
    return _run(["-c", "import polars, numba"], dict(os.environ))[0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--shapes", nargs="+", default=["seq3", "and", "kleene"], choices=sorted(SHAPES))
    p.add_argument("--cases", nargs="+", default=["demo", "new", "warm"], choices=["demo", "new", "warm"])
    p.add_argument("--json", help="also write the runs' times to this file")
    a = p.parse_args(argv)

    cases: list[tuple[str, object]] = []
    if "demo" in a.cases:
        cases.append(("demo cold (jitcep demo, empty caches)", demo_cold))
    if "new" in a.cases:
        for s in a.shapes:
            cases.append((f"new shape {s}, warm process, caches empty", lambda s=s: new_shape(s, False)))
        for s in a.shapes:
            cases.append((f"new shape {s}, warm process, kernels cached", lambda s=s: new_shape(s, True)))
    if "warm" in a.cases:
        for s in a.shapes:
            cases.append((f"{s}, fresh process, warm cache (import incl.)", lambda s=s: warm_fresh(s)))
        cases.append(("import floor (python -c 'import polars, numba')", import_floor))

    results = {}
    width = max(len(name) for name, _ in cases)
    print(f"{'case':<{width}}  {'min s':>7}  {'median s':>8}  runs")
    for name, fn in cases:
        times = [fn() for _ in range(a.runs)]
        results[name] = times
        print(f"{name:<{width}}  {min(times):7.2f}  {statistics.median(times):8.2f}  {len(times)}", flush=True)
    for d in _kernels:
        shutil.rmtree(os.path.dirname(d), ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
