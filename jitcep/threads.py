"""Threads of a run: how many the machine gives, and how a join's key partitions are split among them.

The compiled engine's kernels run without the GIL (``nogil`` in
:data:`jitcep.config.NUMBA_FLAGS`), and every operator's records are grouped
by key partition (:mod:`jitcep.execute.buffer`): records of different
partitions never meet in a join.  So a join splits into calls of the same
kernel over disjoint ranges of partitions, run side by side from a small
thread pool, whose outputs concatenated in partition order are exactly the
one call's output (:func:`jitcep.kernels.join.seq_join`); the semi-join
reduction's passes split the same way.  Work whose items are independent (a
predicate per candidate pair, an output record per pair) splits into equal
ranges of items, and so do the counting sorts and compactions (the events
grouped by type, a leaf's candidates by key, the pairs that pass): each range
counts first, then writes from the offset the counts before it give, so the
output is one pass's.  A pattern without an ``[attr]`` key (and
without ``partition_by=``) has one partition: its joins search for pairs on
one thread (docs/semantics.md section 14).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from . import config


def available() -> int:
    """The cores this process may run on (its CPU affinity where the system has one), like Polars' default."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def partition_ranges(goffs, threads: int) -> list[tuple[int, int]]:
    """Up to ``threads`` ranges ``[g0, g1)`` of partitions, in order, covering all of them, each with
    about the same share of the records of the buffers whose partition offsets are ``goffs``.

    One range when ``threads`` is 1, when there is one partition, or when the buffers hold fewer than
    :data:`jitcep.config.THREAD_MIN_RECORDS` records (a thread's start costs more than such a join).
    """
    G = len(goffs[0]) - 1
    work = sum(np.asarray(g, dtype=np.int64) - g[0] for g in goffs)  # records before each partition
    total = int(work[-1])
    if threads <= 1 or G <= 1 or total < config.THREAD_MIN_RECORDS:
        return [(0, G)]
    # the cut before partition g where the records before it pass each k/threads share of them
    cuts = np.searchsorted(work, [total * k // threads for k in range(1, threads)], side="left")
    bounds = sorted(set([0, *(int(min(max(c, 1), G - 1)) for c in cuts), G]))
    return list(zip(bounds[:-1], bounds[1:]))


def even_ranges(m: int, threads: int) -> list[tuple[int, int]]:
    """Up to ``threads`` ranges of ``[0, m)`` of equal length, in order (one below
    :data:`jitcep.config.THREAD_MIN_RECORDS` items)."""
    parts = max(1, min(threads, m)) if m >= config.THREAD_MIN_RECORDS else 1
    cuts = [m * k // parts for k in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


# One pool for the process, made at first use and never replaced: its threads start only as work
# arrives (up to the bound), so a bound above any core count costs nothing, and no caller can find the
# pool shut down under it.  A forked child has none of the parent's threads: it starts a pool afresh.
_POOL_BOUND = 256
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _workers() -> ThreadPoolExecutor:
    """The process's pool, kept between calls (starting threads per join costs more than a small join)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_BOUND, thread_name_prefix="jitcep")
        return _pool


def run_ranges(fn, ranges: list[tuple[int, int]]) -> list:
    """``[fn(g0, g1) for (g0, g1) in ranges]``: the first range on this thread, the others on pool
    threads; a range no pool thread has started by the time the first is done runs on this thread
    (on a busy machine a pool thread may wait for a core for a whole time slice, and this thread
    would wait on it).  Every range that started has finished when this returns or raises (they
    write into arrays the caller drops on an error); the first error, in range order, is raised."""
    if len(ranges) == 1:
        return [fn(*ranges[0])]
    pool = _workers()
    rest = [pool.submit(fn, *r) for r in ranges[1:]]
    try:
        out = [fn(*ranges[0])]
        here = [f.cancel() for f in rest]  # True: not started, and now never will on the pool
        out += [fn(*r) if h else f.result() for r, f, h in zip(ranges[1:], rest, here)]
    finally:
        for f in rest:  # after an error, a range not started never starts
            f.cancel()
        wait([f for f in rest if not f.cancelled()])  # (a cancelled one is done only once a thread dequeues it)
    return out
