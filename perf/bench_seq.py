"""Standalone benchmark: SEQ of 3, 6, 12, 24 typed events with a key equality and range predicates.

    /tmp/venv/bin/python perf/bench_seq.py --n 2000000 --lengths 3 6 12 24 [--flavours str cat int]

For each length k the pattern is

    PATTERN SEQ(T0 e0, T1 e1, ..., T{k-1} e{k-1})
    WHERE [symbol] AND e0.price > 20 AND e{k-1}.price > e0.price
    WITHIN W

over synthetic events (``--types`` types, ``--keys`` symbols, ts steps 0..2),
in input flavours (``--flavours``): type and symbol as String columns ("str"),
as Categorical ones ("cat"), or String type with an Int64 symbol ("int").
Printed per flavour and length (the median of ``--repeat`` runs): stage times
on a warm process (build = Polars -> event table, leaves / joins inside the
engine, output = match tables -> Polars), events/s end to end, matches/s, the
ratio to one bare Numba pass over the same columns — "x bare" over the coded
columns the engine builds (int32 type and key codes), "x in" over the input
columns as given (a String column read as its 16-byte Arrow views, a
Categorical as its physical codes, an integer key as its values; the target's yardstick, see
perf/notes/design_targets.md) — peak memory above the
input (VmHWM in a fresh process per row, so no allocator pages kept from
earlier runs hide it; see :func:`memory_child`) against the input columns the
pattern reads, and compile latency: cold (empty Numba and jitcep caches, fresh
process), cached (same caches, fresh process) and a new pattern in a warm
process.  DESIGN.md section 6 has the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import polars as pl


FLAVOURS = ("str", "cat", "int")


def make_events(n: int, n_types: int, n_keys: int, seed: int = 0, flavour: str = "int") -> pl.DataFrame:
    """Synthetic events; ``flavour`` is how type and key arrive: "str" (String type "T7" and symbol
    "S123"), "cat" (the same as Categorical, as analysts' tables often carry them), "int" (String
    type, Int64 symbol)."""
    rng = np.random.default_rng(seed)
    df = pl.DataFrame({
        "ts": np.cumsum(rng.integers(0, 3, n)).astype(np.int64),
        "type": pl.Series(rng.integers(0, n_types, n)).cast(pl.String).str.replace(r"^", "T"),
        "symbol": rng.integers(0, n_keys, n).astype(np.int64),
        "price": rng.uniform(0, 100, n),
        "volume": rng.integers(0, 1000, n).astype(np.int64),
    })
    if flavour in ("str", "cat"):
        df = df.with_columns(symbol=pl.format("S{}", "symbol"))
    if flavour == "cat":
        df = df.with_columns(pl.col("type", "symbol").cast(pl.Categorical))
    return df


def pattern_text(k: int, window: int, low: int = 20) -> str:
    items = ", ".join(f"T{i} e{i}" for i in range(k))
    return (f"PATTERN SEQ({items}) WHERE [symbol] AND e0.price > {low} AND e{k - 1}.price > e0.price "
            f"WITHIN {window}")


def bare_pass(ts, type_code, key, price):
    """One Numba pass over the columns the pattern reads (the DESIGN.md section 6 yardstick), compiled
    and warmed: call the result to run it."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def _scan(ts, tc, key, price):
        acc = 0.0
        cnt = 0
        last = ts[0]
        for i in range(len(ts)):
            if tc[i] == 0 and price[i] > 20.0:
                cnt += 1
            acc += price[i] * (key[i] & 7) + (ts[i] - last)
            last = ts[i]
        return acc, cnt

    _scan(ts[:10], type_code[:10], key[:10], price[:10])
    return lambda: _scan(ts, type_code, key, price)


def _timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def _words(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column as a Numba pass reads the input: the two 8-byte words of a String column's 16-byte Arrow
    views (strided, no copy); a Categorical's physical codes or an integer column's values, twice."""
    import pyarrow as pa

    if s.dtype == pl.String:
        arr = s.rechunk().to_arrow(compat_level=pl.CompatLevel.newest())
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        assert arr.type == pa.string_view() and arr.null_count == 0
        words = np.frombuffer(arr.buffers()[1], dtype=np.uint64)[2 * arr.offset:2 * (arr.offset + len(arr))]
        return words[0::2], words[1::2]
    values = (s.to_physical() if s.dtype == pl.Categorical else s).to_numpy()
    return values, values


def bare_pass_input(df: pl.DataFrame):
    """:func:`bare_pass` over the input columns as given: String columns are read as their 16-byte views.

    The coded columns of :func:`bare_pass` do not exist until the engine
    builds them; a pass that starts from the input reads a String column's
    views (four times the bytes of an int32 code), a Categorical's physical
    codes (compared twice: the same word) and an integer key's int64 values.
    """
    from numba import njit

    @njit(cache=True, nogil=True)
    def _scan(ts, t0, t1, key, price, a, b):
        acc = 0.0
        cnt = 0
        last = ts[0]
        for i in range(len(ts)):
            if t0[i] == a and t1[i] == b and price[i] > 20.0:
                cnt += 1
            acc += price[i] * (key[i] & 7) + (ts[i] - last)
            last = ts[i]
        return acc, cnt

    ts, price = df.get_column("ts").to_numpy(), df.get_column("price").to_numpy()
    t0, t1 = _words(df.get_column("type"))
    key = _words(df.get_column("symbol"))[-1]  # a view's second word: inline bytes 4..11
    first = int(np.flatnonzero((df.get_column("type") == "T0").to_numpy())[0])
    args = (ts, t0, t1, key, price, t0[first], t1[first])
    _scan(*(x[:10] for x in args[:5]), *args[5:])
    return lambda: _scan(*args)


def _vmhwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) * 1024
    return 0


def _vmrss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def run_one(df: pl.DataFrame, k: int, window: int, repeat: int) -> dict:
    from jitcep import runtime
    from jitcep.events import build_event_table
    from jitcep.execute import Profile
    from jitcep.options import Options
    from jitcep.output import to_frame
    from jitcep.pattern import parse
    from jitcep.plan import Scan

    pat = parse(pattern_text(k, window))
    opts = Options()

    # warm: kernels loaded and this pattern's predicates compiled, so the timed runs and the
    # peak memory measure the work, not Numba (compile latency is measured separately below)
    warm = build_event_table(df.head(10_000), [pat], time="ts", type="type")
    to_frame([pat], runtime.evaluate([pat], warm, opts), warm, time="ts", type="type")
    full = build_event_table(df, [pat], time="ts", type="type")
    bare = bare_pass(full.ts, full.type_code, full.columns["symbol"].values, full.columns["price"].values)
    bare_in = bare_pass_input(df)
    runs = []
    for _ in range(repeat):
        profile = Profile()  # the leaves' time: the scans' (the rest of evaluate is joins + setup)
        _reset_hwm()
        rss0 = _vmrss()
        t0 = time.perf_counter()
        table = build_event_table(df, [pat], time="ts", type="type")
        t1 = time.perf_counter()
        [mt] = runtime.evaluate([pat], table, opts, profile=profile)
        t2 = time.perf_counter()
        out = to_frame([pat], [mt], table, time="ts", type="type")
        t3 = time.perf_counter()
        peak = _vmhwm() - rss0
        leaves = sum(profile.stats.get(id(n), (0, 0.0))[1] for p in profile.plans for n in p.nodes()
                     if isinstance(n, Scan))
        r = dict(build=t1 - t0, evaluate=t2 - t1, leaves=leaves, joins=t2 - t1 - leaves,
                 output=t3 - t2, total=t3 - t0, matches=mt.n, rows=out.height, peak=peak,
                 # the yardsticks beside each run: the host's neighbours slow everything for
                 # seconds at a time, so a ratio is taken between times of the same moment
                 bare=min(_timed(bare) for _ in range(3)), bare_in=min(_timed(bare_in) for _ in range(3)))
        runs.append(r)
    mid = (len(runs) - 1) // 2
    best = sorted(runs, key=lambda r: r["total"])[mid]  # the median run (noisy machine)
    for y in ("bare", "bare_in"):  # the median ratio of a run to its own yardstick
        best[f"x_{y}"] = sorted(r["total"] / r[y] for r in runs)[mid]
        best[f"eng_x_{y}"] = sorted(r["evaluate"] / r[y] for r in runs)[mid]
    cols = table.ts.nbytes + table.type_code.nbytes + table.columns["price"].values.nbytes + \
        table.columns["symbol"].values.nbytes
    best["input_bytes"] = cols
    return best


_COMPILE_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from jitcep import runtime
from jitcep.events import build_event_table
from jitcep.options import Options
from jitcep.pattern import parse
sys.path.insert(0, {perf!r})
from bench_seq import make_events, pattern_text
t1 = time.perf_counter()
df = make_events(2000, 32, 10, flavour={flavour!r})
pat = parse(pattern_text({k}, 1000))
table = build_event_table(df, [pat], time="ts", type="type")
t2 = time.perf_counter()
runtime.evaluate([pat], table, Options())
t3 = time.perf_counter()
runtime.evaluate([pat], table, Options())
t4 = time.perf_counter()
build_event_table(df, [pat], time="ts", type="type")
t5 = time.perf_counter()
print(json.dumps(dict(imports=t1 - t0, first=t3 - t2, second=t4 - t3, build_first=t2 - t1, build_second=t5 - t4)))
"""


def compile_latency(k: int, flavour: str = "str") -> dict:
    """First-run latency in fresh processes: cold (empty caches), then cached (same caches)."""
    perf = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(tmp, "numba"), JITCEP_CACHE_DIR=os.path.join(tmp, "gen"))
        res = {}
        for label in ("cold", "cached"):
            out = subprocess.run([sys.executable, "-c", _COMPILE_CHILD.format(perf=perf, k=k, flavour=flavour)], env=env,
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            res[label] = r["first"] - r["second"]
            res[label + "_build"] = r["build_first"] - r["build_second"]  # the table-building kernels
            res[label + "_imports"] = r["imports"]
    return res


def warm_new_pattern(k: int) -> float:
    """Latency of a never-seen pattern in a warm process (kernels loaded; its predicates compile)."""
    from jitcep import runtime
    from jitcep.events import build_event_table
    from jitcep.options import Options
    from jitcep.pattern import parse

    df = make_events(2000, 32, 10)
    low = int(time.time() * 1000) % 1_000_000 + 1000  # a fresh constant: source never cached
    pat = parse(pattern_text(k, 1000, low=-low))
    table = build_event_table(df, [pat], time="ts", type="type")
    t0 = time.perf_counter()
    runtime.evaluate([pat], table, Options())
    t1 = time.perf_counter()
    runtime.evaluate([pat], table, Options())
    t2 = time.perf_counter()
    return (t1 - t0) - (t2 - t1)


def memory_child(n: int, n_types: int, n_keys: int, k: int, window: int, flavour: str = "int") -> dict:
    """Peak memory of one end-to-end run in a fresh process (no allocator pages kept from other runs).

    The child generates the same events (same seed; in anonymous memory, not a
    memory-mapped file whose pages would count as they are touched) and warms
    the pattern on 10,000 rows; the peak is VmHWM minus the resident size just
    before the run: what build, evaluate and output allocate on top of the input.
    """
    from jitcep import runtime
    from jitcep.events import build_event_table
    from jitcep.options import Options
    from jitcep.output import to_frame
    from jitcep.pattern import parse

    df = make_events(n, n_types, n_keys, flavour=flavour)
    pat = parse(pattern_text(k, window))
    warm = build_event_table(df.head(10_000), [pat], time="ts", type="type")
    to_frame([pat], runtime.evaluate([pat], warm, Options()), warm, time="ts", type="type")
    del warm
    _reset_hwm()
    rss0 = _vmrss()
    table = build_event_table(df, [pat], time="ts", type="type")
    [mt] = runtime.evaluate([pat], table, Options())
    out = to_frame([pat], [mt], table, time="ts", type="type")
    return dict(peak=_vmhwm() - rss0, rows=out.height)


# Allocators that return freed memory at once: otherwise the run may reuse pages the data generation
# freed (Polars' jemalloc keeps them for a while, glibc raises its mmap threshold after large frees)
# and its growth above the input reads low (once even negative).
_RETURN_FREED = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0",
                 "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "0"}


def peak_memory(args, k: int, window: int, flavour: str) -> int:
    cmd = [sys.executable, os.path.abspath(__file__), "--memory-child",
           *map(str, (args.n, args.types, args.keys, k, window, FLAVOURS.index(flavour)))]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=dict(os.environ, **_RETURN_FREED))
    return json.loads(out.stdout.strip().splitlines()[-1])["peak"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--lengths", type=int, nargs="+", default=[3, 6, 12, 24])
    ap.add_argument("--types", type=int, default=32)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--window", type=int, default=2000, help="W in ts units (mean step 1)")
    ap.add_argument("--window-factors", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-latency subprocesses")
    ap.add_argument("--flavours", nargs="+", choices=FLAVOURS, default=["str", "cat"],
                    help="how type and key columns arrive: String, Categorical, or String type + Int64 key")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    ap.add_argument("--memory-child", nargs=6, type=int, metavar=("N", "TYPES", "KEYS", "K", "W", "FLAVOUR"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        *rest, fl = args.memory_child
        print(json.dumps(memory_child(*rest, flavour=FLAVOURS[fl])))
        return

    hdr = (f"{'in':>3} {'k':>3} {'W':>6} {'build':>7} {'leaves':>7} {'joins':>7} {'output':>7} {'total':>7} "
           f"{'Mev/s':>6} {'matches':>8} {'match/s':>9} {'bare ms':>7} {'x bare':>7} {'eng x bare':>10} "
           f"{'in ms':>6} {'x in':>5} "
           f"{'peak MB':>8} {'input MB':>8}")
    for flavour in args.flavours:
        t = time.perf_counter()
        df = make_events(args.n, args.types, args.keys, flavour=flavour)
        print(f"# {flavour}: {args.n:,} events, {args.types} types, {args.keys} keys, "
              f"type {df.schema['type']}, symbol {df.schema['symbol']}, generated in {time.perf_counter() - t:.1f}s")
        print(hdr)
        for k in args.lengths:
            for f in args.window_factors:
                W = args.window * f
                r = run_one(df, k, W, args.repeat)
                r["peak"] = float("nan") if args.no_memory else peak_memory(args, k, W, flavour)
                print(f"{flavour:>3} {k:>3} {W:>6} {r['build']:7.3f} {r['leaves']:7.3f} {r['joins']:7.3f} "
                      f"{r['output']:7.3f} {r['total']:7.3f} {args.n / r['total'] / 1e6:6.1f} {r['matches']:>8} "
                      f"{r['matches'] / r['total']:9.0f} {r['bare'] * 1e3:7.1f} {r['x_bare']:7.1f} "
                      f"{r['eng_x_bare']:10.1f} {r['bare_in'] * 1e3:6.1f} {r['x_bare_in']:5.1f} "
                      f"{r['peak'] / 2**20:8.1f} {r['input_bytes'] / 2**20:8.1f}",
                      flush=True)
        del df
    if not args.no_compile:
        print("# compile latency (s): first run minus second run of a 2000-event table")
        for k in args.lengths:
            c = compile_latency(k, args.flavours[0])
            w = warm_new_pattern(k)
            print(f"k={k:>2}: cold {c['cold']:.2f} (+ table kernels {c['cold_build']:.2f})  "
                  f"cached (new process) {c['cached']:.2f} (+ {c['cached_build']:.2f})  "
                  f"new pattern, warm process {w:.2f}  (imports {c['cached_imports']:.2f})", flush=True)


if __name__ == "__main__":
    main()
