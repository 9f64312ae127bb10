"""Compiling the generic kernels ahead of a first run: ``jitcep warmup``.

:func:`warmup` runs a few tiny patterns that together reach the kernel
specialisations a typical run needs (SEQ, AND, OR, negation, Kleene, key
partitions, time and count windows, String and Categorical type columns,
integer, float and datetime attributes), so a Docker image build or a
cluster's bootstrap script can pay Numba's compilation once; it then marks
the cache filled (:mod:`jitcep.first_run`), which silences the first-run notice.
"""

from __future__ import annotations

import sys
import time
from typing import Callable

from . import first_run


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

    # SEQ(a, b, c): its order one series node of three blocks
    a = join_search.SearchArrays([1.0, 2.0, 3.0], [[1.0, 0.5, 1.0], [0.5, 1.0, 1.0], [1.0, 1.0, 1.0]], ((1, 2, 4),),
                                 [1.0, 1.0, 2.0, 6.0], [[0, 1, 0], [1, 0, 0], [0, 0, 0]], [6, 4, 0], [0.0, 0.0, 0.0],
                                 join_search.ZSTREAM, 0.25, 1.0)
    join_search.dp_bushy(a)
    join_search.dp_left_deep(a)
    join_search.greedy(a, 0)
    join_search.zstream(a, [0, 1, 2])


def _planned_runs(compile) -> None:
    """Keyed (an integer and a String key) and unkeyed SEQ runs over a table large enough to be planned on
    estimated statistics (``planner="auto"`` estimates from :data:`jitcep.runtime.SMALL_WORK_TABLE` events
    on): the planner's
    sample kernels (:mod:`jitcep.kernels.sampling`, the largest of them alone ~10-20 s to compile) are
    reached by no tiny table; and one over a table from :data:`jitcep.runtime.SMALL_TABLE` events, whose
    partial matches ``auto`` bounds first (:func:`jitcep.runtime.small_work`'s kernel)."""
    import numpy as np
    import polars as pl

    from .runtime import SMALL_TABLE, SMALL_WORK_TABLE

    n = SMALL_WORK_TABLE
    rng = np.random.default_rng(1)
    table = pl.DataFrame({"type": np.array(["A", "B", "C", "D"])[rng.integers(0, 4, n)],
                          "ts": np.arange(n, dtype=np.int64), "k": rng.integers(0, 50, n),
                          "x": rng.integers(0, 10, n)}).with_columns(s=pl.col("k").cast(pl.String))
    for text in ("PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < c.x WITHIN 6",
                 "PATTERN SEQ(A a, B b, C c) WHERE [s] AND a.x < c.x WITHIN 6",  # a String key: its views sampled
                 "PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 6"):
        compile(text).run(table, time="ts", type="type", engine="compiled")
    compile("PATTERN SEQ(A a, B b, C c) WITHIN 6").run(table.head(SMALL_TABLE), time="ts", type="type",
                                                     engine="compiled")


def warmup(report: Callable[[str], None] | None = None) -> float:
    """Run :data:`PATTERNS` over tiny tables with the compiled engine, so their kernels are compiled and
    cached; returns the seconds it took.  ``report`` gets one line per step (default: stderr)."""
    import warnings

    from .errors import FallbackWarning
    from .query import compile

    first_run.silence()  # the runs below are the compilation announced; the first-run notice would repeat it
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
    _planned_runs(compile)
    say(f"jitcep: warmup: two planned runs, the planner's sample ({time.perf_counter() - t:.2f} s)")
    t = time.perf_counter()
    _join_searches()
    say(f"jitcep: warmup: the join-order searches ({time.perf_counter() - t:.2f} s)")
    first_run.mark_cached()
    total = time.perf_counter() - t0
    where = first_run.cache_directory()
    say(f"jitcep: warmup: done in {total:.1f} s; kernels cached in {where}" if where is not None else
        f"jitcep: warmup: done in {total:.1f} s; the kernels' cache is not used (see the warning above), so "
        "each process compiles them again")
    return total
