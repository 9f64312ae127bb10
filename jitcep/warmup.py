"""Compiling the generic kernels ahead of a first run: ``jitcep warmup`` and the first-run notice.

The kernels (:mod:`jitcep.kernels`) are compiled by Numba on their first
call with each combination of argument types, and kept in Numba's disk cache
(:mod:`jitcep.cachedirs` says where).  On a new machine the first run of a
pattern therefore waits seconds for compilation.  :func:`warmup` runs a few
tiny patterns that together reach the specialisations a typical run needs
(SEQ, AND, OR, negation, Kleene, key partitions, time and count windows, String
and Categorical type columns, integer, float and datetime attributes), so a
Docker image build or a cluster's bootstrap script can pay that once.

A run on a terminal whose kernels are not cached yet prints one line
(:data:`NOTICE`) so the wait is not taken for a hang.  Whether they are is
decided cheaply, without asking Numba to load anything: a marker file in the
kernels' Numba cache directory, written after a warm-up or a compiled run
completes, named by the Numba and Python versions and the kernel sources'
sizes and times (what Numba's own cache is keyed by), so an upgrade or an
emptied cache brings the notice back.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Callable, TextIO

NOTICE = "jitcep: compiling kernels, first run only (jitcep warmup does it ahead)"

_KERNELS = Path(__file__).parent / "kernels"
_noticed = False
_known_cached = False  # the marker was seen or written by this process: no need to look again


def _cache_directory() -> Path | None:
    """The directory Numba keeps the kernels' cache in; None when it is not used (not trusted)."""
    from . import config

    if not config.NUMBA_FLAGS["cache"]:
        return None
    from .kernels import grouping

    try:  # Numba's own locator decides it (NUMBA_CACHE_DIR, __pycache__ or the per-user directory)
        return Path(grouping._counting_sort._cache._cache_path)
    except AttributeError:  # a Numba whose cache object is laid out otherwise: no notice, no marker
        return None


def _stamp() -> str:
    import numba

    h = hashlib.sha1(f"{numba.__version__} {sys.version_info[:2]}".encode())
    for src in sorted(_KERNELS.glob("*.py")):
        st = src.stat()
        h.update(f"{src.name} {st.st_mtime_ns} {st.st_size}".encode())
    return h.hexdigest()[:16]


def marker() -> Path | None:
    """The file that says this installation's kernels are in the cache; None when nothing is cached."""
    directory = _cache_directory()
    return None if directory is None else directory / f"jitcep-warm-{_stamp()}"


def kernels_cached() -> bool:
    """Whether a warm-up or a compiled run has filled the kernels' cache (True when there is no cache
    to fill: compiling in memory every time is announced by an UntrustedCacheWarning instead)."""
    global _known_cached
    if not _known_cached:
        m = marker()
        _known_cached = m is None or m.exists()
    return _known_cached


def mark_cached() -> None:
    """Record that the kernels' cache is filled (after a successful warm-up or compiled run)."""
    global _known_cached
    if _known_cached:
        return
    m = marker()
    if m is not None and not m.exists():
        try:
            m.parent.mkdir(parents=True, exist_ok=True)
            m.touch()
        except OSError:  # a cache Numba could not write either: the notice stays, nothing else changes
            return
    _known_cached = True


def should_notice(stream: TextIO) -> bool:
    """Whether to print :data:`NOTICE` on ``stream``: a terminal, once per process, kernels not cached."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or stream-like object without a terminal
        return False
    return tty and not _noticed and not kernels_cached()


def notice(stream: TextIO | None = None) -> None:
    """Print :data:`NOTICE` when :func:`should_notice` says so (called before the compiled engine runs)."""
    global _noticed
    stream = sys.stderr if stream is None else stream
    if should_notice(stream):
        _noticed = True
        print(NOTICE, file=stream, flush=True)


def _tables():
    import numpy as np
    import polars as pl

    n = 12
    rng = np.random.default_rng(0)
    base = pl.DataFrame({
        "type": ["A", "B", "C"] * (n // 3),
        "ts": np.arange(n, dtype=np.int64),
        "k": rng.integers(0, 3, n),
        "x": rng.integers(0, 10, n),
        "y": rng.random(n),
        "s": ["p", "q", "r", "p"] * (n // 4),
    })
    yield "String type, int time", base, {"time": "ts", "type": "type"}
    yield ("Categorical type and key, datetime time",
           base.with_columns(pl.col("type").cast(pl.Categorical), pl.col("s").cast(pl.Categorical),
                             pl.from_epoch(pl.col("ts"), time_unit="s").alias("ts")),
           {"time": "ts", "type": "type"})


#: the patterns :func:`warmup` runs: one per operator family the compiled engine has
PATTERNS = (
    "PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < c.x AND b.y > 0.1 WITHIN 6",
    "PATTERN SEQ(A a, B b) WHERE [s] AND a.x + 1 > b.x WITHIN 5",
    "PATTERN SEQ(A a, !B n, C c) WHERE a.x < c.x AND n.y > 0.5 WITHIN 6",
    "PATTERN AND(A a, C c) WHERE a.y < c.y WITHIN 4",
    "PATTERN OR(A a, SEQ(B b, C c)) WHERE [k] WITHIN 5",
    "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] AND a.x <= c.x WITHIN 6",
    "PATTERN SEQ(A a, C c) WHERE a.x != c.x WITHIN 4 EVENTS",
)
#: options :func:`warmup` runs the first pattern under as well: their operators' kernels (semantics 9)
OPTION_SETS = (
    dict(output="non_overlapping", freeze=("a",)),
    dict(output="match_next", consume_types=("B",), contiguous=(("a", "b"),)),
)


def _join_searches() -> None:
    """Each compiled join-order search once (:mod:`jitcep.kernels.join_search`): a run plans on statistics
    only from 4,096 events, so the tiny tables above never reach them."""
    from .kernels import join_search

    a = join_search.SearchArrays([1.0, 2.0, 3.0], [[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]], [6, 5, 3],
                                 [[0, 1, 0], [1, 0, 0], [0, 0, 0]], [6, 4, 0], [0.0, 0.0, 0.0], join_search.ZSTREAM,
                                 0.5, 0.25, 1.0)
    join_search.dp_bushy(a)
    join_search.dp_left_deep(a)
    join_search.greedy(a, 0)
    join_search.zstream(a, [0, 1, 2])


def warmup(report: Callable[[str], None] | None = None) -> float:
    """Run :data:`PATTERNS` over tiny tables with the compiled engine, so their kernels are compiled and
    cached; returns the seconds it took.  ``report`` gets one line per step (default: stderr)."""
    import warnings

    from .errors import FallbackWarning
    from .query import compile

    global _noticed
    _noticed = True  # the runs below are the compilation announced; the first-run notice would repeat it
    say = report or (lambda line: print(line, file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    for label, table, cols in _tables():
        for text, options in [(p, {}) for p in PATTERNS] + [(PATTERNS[0], o) for o in OPTION_SETS]:
            t = time.perf_counter()
            with warnings.catch_warnings():
                # a pattern the compiled engine refuses would warm nothing: fail loudly, it is a bug here
                warnings.simplefilter("error", FallbackWarning)
                compile(text, **options).run(table, engine="compiled", **cols)
            shown = text.removeprefix("PATTERN ") + "".join(f" {k}={v!r}" for k, v in options.items())
            say(f"jitcep: warmup: {label}: {shown} ({time.perf_counter() - t:.2f} s)")
    t = time.perf_counter()
    _join_searches()
    say(f"jitcep: warmup: the join-order searches ({time.perf_counter() - t:.2f} s)")
    mark_cached()
    total = time.perf_counter() - t0
    where = _cache_directory()
    say(f"jitcep: warmup: done in {total:.1f} s; kernels cached in {where}" if where is not None else
        f"jitcep: warmup: done in {total:.1f} s; the kernels' cache is not used (see the warning above), so "
        "each process compiles them again")
    return total
