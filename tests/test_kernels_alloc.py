"""jitcep.kernels.alloc: output sizes and the reused work space."""

from __future__ import annotations

import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitcep import config
from jitcep.kernels import alloc


def test_empty_sizes():
    a = alloc.empty(10, np.int64)
    assert a.shape == (10,) and a.dtype == np.int64
    b = alloc.empty(200_000, np.int64)  # 1.6 MB: cut from a 4 MB array
    assert b.shape == (200_000,) and b.base is not None and b.base.nbytes == 4 << 20
    c = alloc.empty(1 << 20, np.int64, mapped=True)  # 8 MB: cut from one past 33 MB
    assert c.shape == (1 << 20,) and c.base.nbytes > 33 << 20
    assert alloc.empty(1 << 23, np.int64, mapped=True).base is None  # 64 MB: itself


def test_scratch_is_reused_per_name_and_thread_and_not_kept_when_large():
    a = alloc.scratch("test.a", 100, np.int64)
    a[:] = 7
    again = alloc.scratch("test.a", 50, np.int64)
    assert np.shares_memory(a, again) and len(again) == 50
    assert not np.shares_memory(a, alloc.scratch("test.b", 100, np.int64))
    assert not np.shares_memory(a, alloc.scratch("test.a", 100, np.int32))
    bigger = alloc.scratch("test.a", 1000, np.int64)
    assert len(bigger) == 1000 and np.shares_memory(bigger, alloc.scratch("test.a", 10, np.int64))
    other = {}
    t = threading.Thread(target=lambda: other.setdefault("a", alloc.scratch("test.a", 100, np.int64)))
    t.start()
    t.join()
    assert not np.shares_memory(other["a"], bigger)
    n = config.SCRATCH_KEEP // 8 + 1
    assert not np.shares_memory(alloc.scratch("test.c", n, np.int64), alloc.scratch("test.c", n, np.int64))


# --- the buffer pool of a compiled query's runs ----------------------------------------------------------------


def test_a_pool_block_is_handed_out_again_only_when_no_view_of_it_lives():
    pool = alloc.BufferPool()
    size = 1 << 20
    a = pool.take(size)
    b = pool.take(size)  # a lives: another block
    assert not np.shares_memory(a, b)
    kept = a.view(np.int64)[10:20].reshape(2, 5)  # a view of a view still holds the block
    del a
    c = pool.take(size)
    assert not np.shares_memory(c, kept) and not np.shares_memory(c, b)
    del kept
    d = pool.take(size)  # the first block, free now (c and b hold the others)
    assert len(pool.blocks) == 3 and d.base is pool.blocks[0]
    del b, c, d
    assert pool.take(size).base is pool.blocks[0] and len(pool.blocks) == 3


def test_a_pool_block_held_by_a_polars_series_is_not_written():
    import polars as pl
    pool = alloc.BufferPool()
    a = pool.take(1 << 20).view(np.int64)
    a[:] = np.arange(len(a))
    s = pl.Series("x", a)  # may share a's memory (zero-copy), holding a
    del a
    b = pool.take(1 << 20).view(np.int64)
    b[:] = -1
    assert s.to_numpy().tolist() == list(range(1 << 17))


def test_a_pool_takes_the_smallest_free_block_that_holds_the_array():
    pool = alloc.BufferPool()
    big, small = pool.take(6 << 20), pool.take(1 << 20)
    assert (big.base.nbytes, small.base.nbytes) == (6 << 20, 1 << 20)
    del big, small
    again = pool.take(1 << 19)
    assert again.base is pool.blocks[1]  # the 1 MB block, not the larger one
    assert pool.take(100 << 20).base is pool.blocks[2]  # more than twice a free one's size: a new block
    # a small array never takes a block more than twice its size (the memory the block holds)
    assert pool.take(100 << 10).base.nbytes == alloc._block_size(100 << 10) < 200 << 10 and len(pool.blocks) == 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["take", "drop", "release"]), st.integers(0, 11), st.integers(0, 30)),
                max_size=60), st.integers(2, 40))
def test_a_pool_takes_the_block_a_scan_of_every_block_picks(ops, keep_mb):
    """The pool finds a block through its blocks ordered by size; the rule it keeps, checked against a scan
    of every block: the smallest free block of ``size`` to twice a new one's bytes, the first by index
    among equal sizes, else a new block.  Sizes from a few that share blocks, blocks released under a cap."""
    with mock.patch.object(config, "POOL_KEEP", keep_mb << 20), mock.patch.object(alloc, "_kept", alloc._Kept()):
        _pool_against_a_scan(ops)


def _pool_against_a_scan(ops):
    pool = alloc.BufferPool()
    sizes = [(64 << 10) * (1 + k) + 4096 * (k % 3) for k in range(12)]
    live: list[np.ndarray] = []
    for op, k, at in ops:
        if op == "take":
            size, limit = sizes[k], 2 * alloc._block_size(sizes[k])
            # (no name bound to a block here: the reference would make it look taken)
            fits = [i for i in range(len(pool.blocks)) if size <= pool.blocks[i].nbytes <= limit and pool._free(i)]
            want = min(fits, key=lambda i: (pool.blocks[i].nbytes, i)) if fits else None
            n_blocks = len(pool.blocks)
            a = pool.take(size)
            assert len(a) == size
            if want is None:
                assert len(pool.blocks) == n_blocks + 1 and a.base is pool.blocks[-1]
            else:
                assert a.base is pool.blocks[want] and len(pool.blocks) == n_blocks
            live.append(a)
            del a
        elif op == "drop" and live:
            live.pop(at % len(live))
        elif op == "release":
            pool.release()
        order = sorted(range(len(pool.blocks)), key=lambda i: (pool.blocks[i].nbytes, i))
        assert pool.by_size == order and pool.sizes == [pool.blocks[i].nbytes for i in order]


def test_a_pool_keeps_the_blocks_used_last_up_to_its_bytes(monkeypatch):
    monkeypatch.setattr(config, "POOL_KEEP", 10 << 20)
    pool = alloc.BufferPool()
    first = pool.take(8 << 20).base
    del first
    pool.release()
    a, b = pool.take(5 << 20), pool.take(5 << 20)  # the 8 MB block is free and holds 5 MB: a is cut from it
    assert a.base.nbytes == alloc._block_size(8 << 20) and b.base.nbytes == alloc._block_size(5 << 20)
    del a, b
    pool.release()  # both taken in this run: the larger first does not fit beside the other within 10 MB
    assert pool.nbytes() <= 10 << 20 and len(pool.blocks) == 1


def _used(pool, mb):
    """A run of ``pool`` that takes one block of ``mb`` MB and releases it."""
    a = pool.take(mb << 20)
    del a
    pool.release()


def _capped(monkeypatch, mb: int, n: int) -> list:
    """``n`` new pools of a process whose pools keep ``mb`` MB in all (a cap of their own, not the process's)."""
    monkeypatch.setattr(config, "POOL_KEEP", mb << 20)
    monkeypatch.setattr(alloc, "_kept", alloc._Kept())
    return [alloc.BufferPool() for _ in range(n)]


def test_the_pools_of_a_process_keep_the_cap_in_all_first_come(monkeypatch):
    a, b, c = _capped(monkeypatch, 20, 3)
    _used(a, 8)
    _used(b, 8)
    _used(c, 8)  # 24 MB with a's and b's: c keeps nothing, a and b (not stale) keep theirs
    assert (a.nbytes(), b.nbytes(), c.nbytes()) == (8 << 20, 8 << 20, 0)
    for _ in range(3):  # queries taking turns: none takes another's blocks
        for p in (a, b, c):
            _used(p, 8)
            assert a.nbytes() + b.nbytes() + c.nbytes() <= 20 << 20
    assert (a.nbytes(), b.nbytes(), c.nbytes()) == (8 << 20, 8 << 20, 0)


def test_a_pool_takes_the_blocks_of_pools_whose_queries_stopped_running(monkeypatch):
    a, b, c = _capped(monkeypatch, 20, 3)
    _used(a, 8)
    _used(b, 8)
    _used(c, 12)
    assert c.nbytes() == 0
    _used(c, 12)
    _used(c, 12)  # a and b not released during c's last three: stale, a (the older) gives its block up first
    assert (a.nbytes(), b.nbytes(), c.nbytes()) == (0, 8 << 20, alloc._block_size(12 << 20))
    _used(c, 12)
    assert (a.nbytes(), b.nbytes()) == (0, 8 << 20)  # 20 MB in all: b stays
    del a  # a freed pool is forgotten
    _used(b, 8)
    assert len(alloc._kept.order) == 2


def test_pools_released_from_many_threads_at_once_keep_the_cap(monkeypatch):
    pools = _capped(monkeypatch, 24, 6)
    barrier = threading.Barrier(len(pools))

    def run(p, mb):
        barrier.wait()
        for _ in range(30):
            _used(p, mb)
    threads = [threading.Thread(target=run, args=(p, 2 + 2 * i)) for i, p in enumerate(pools)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(p.nbytes() for p in pools) <= 24 << 20
    assert len(alloc._kept.order) == len(pools)


def test_a_freed_pool_no_longer_counts_against_the_cap(monkeypatch):
    a, b = _capped(monkeypatch, 10, 2)
    _used(a, 8)
    del a
    _used(b, 8)
    assert b.nbytes() == 8 << 20


def test_a_forked_child_settles_its_pools_while_a_parent_thread_held_the_cap_locked(monkeypatch):
    monkeypatch.setattr(alloc, "_kept", alloc._Kept())
    assert _child_exit_while_held(alloc._kept.lock, _settle_and_exit, (), 60) == 0


def _child_exit_while_held(lock, target, args, timeout):
    """The exit code of a forked child running ``target(*args)`` while a thread of this process holds
    ``lock`` (None: it did not end within ``timeout`` seconds and was killed)."""
    import multiprocessing
    held, done = threading.Event(), threading.Event()

    def hold():
        with lock:
            held.set()
            done.wait(60)
    t = threading.Thread(target=hold)
    t.start()
    held.wait(60)
    try:
        child = multiprocessing.get_context("fork").Process(target=target, args=args)
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.kill()
            return None
    finally:
        done.set()
        t.join()
    return child.exitcode


def _settle_and_exit():
    import os
    _used(alloc.BufferPool(), 1)
    os._exit(0)


def test_empty_cuts_from_the_run_pool_only_in_its_context_and_from_a_pool_per_run():
    pools = alloc.Pools()
    n = config.POOL_MIN // 8
    assert alloc.empty(n, np.int64).base is None  # no run: NumPy's
    seen, other = [], {}
    with pools.run() as pool:
        a = alloc.empty(n, np.int64)
        assert a.base is pool.blocks[0] and a.dtype == np.int64 and len(a) == n
        assert alloc.empty(n - 1, np.int64).base is None  # below POOL_MIN: NumPy's
        t = threading.Thread(target=lambda: other.setdefault("a", alloc.empty(n, np.int64)))
        t.start()
        t.join()  # another thread has no pool in its context
        assert other["a"].base is None
        seen.append(pool)
    with pools.run() as again:
        assert again is seen[0]  # given back, taken again
    barrier, got = threading.Barrier(2), []

    def run():
        with pools.run() as p:
            got.append(p)
            barrier.wait()  # both runs at once: never one pool
    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] is not got[1] and len(pools.idle) == 1  # one kept: a second run at once is rare


def test_a_query_rerun_leaves_the_frames_it_returned_intact():
    # the pool reuses a run's arrays in the next run only when nothing refers to them: the first run's frame
    # (whose columns may be views of the pool's blocks) must not change when the query runs again on other data
    import polars as pl
    import jitcep
    n = 60_000

    def events(seed):
        r = np.random.default_rng(seed)
        return pl.DataFrame({"type": r.choice(["A", "B", "C"], n), "ts": np.arange(n), "x": r.integers(0, 100, n)})
    q = jitcep.compile("PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x WITHIN 6")
    first = q.run(events(1), type="type", threads=1)
    copy = first.clone().to_dict(as_series=False)
    assert first.height > 10_000
    second = q.run(events(2), type="type", threads=1)
    assert first.to_dict(as_series=False) == copy
    assert q.run(events(1), type="type", threads=1).equals(first)
    assert not second.equals(first)


def test_a_query_run_from_several_threads_at_once_gives_each_its_frame():
    import polars as pl
    import jitcep
    n = 40_000
    frames = [pl.DataFrame({"type": np.random.default_rng(s).choice(["A", "B"], n), "ts": np.arange(n),
                            "x": np.random.default_rng(s + 9).integers(0, 50, n)}) for s in range(4)]
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 8")
    expected = [q.run(f, type="type", threads=1) for f in frames]
    got = [None] * 4
    barrier = threading.Barrier(4)

    def run(i):
        barrier.wait()
        for _ in range(3):
            got[i] = q.run(frames[i], type="type", threads=1)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g.equals(e) for g, e in zip(got, expected))


def test_a_forked_child_runs_a_query_whose_pools_a_parent_thread_held_locked():
    # a thread of the parent inside the pools' lock at the fork: the child's copy of the lock stays held
    import polars as pl
    import jitcep
    q = jitcep.compile("PATTERN SEQ(A a, B b) WITHIN 10")
    df = pl.DataFrame({"type": ["A", "B"] * 50, "ts": list(range(100))})
    want = q.run(df, type="type", threads=1).height
    assert _child_exit_while_held(q._pools.lock, _run_and_exit, (q, df, want), 120) == 0


def _run_and_exit(q, df, want):
    import os
    os._exit(0 if q.run(df, type="type", threads=1).height == want else 1)


# every array of these runs from the pool (POOL_MIN of one byte): a block the engine let go of while a kernel,
# a later array or the output still read it would show as a wrong answer, or as a kept frame that changed
POOLED_PATTERNS = [
    "PATTERN SEQ(A a, B b, C c) WHERE a.x < b.x AND b.x > c.x WITHIN 6",
    "PATTERN SEQ(A a, B b, C c) WHERE [k] AND a.x < c.x WITHIN 8",
    "PATTERN SEQ(A a, B+ b[], C c) WHERE a.x < c.x WITHIN 6",
    "PATTERN SEQ(A a, KL(SEQ(B b, C c)), A d) WHERE a.x < d.x WITHIN 8",
    "PATTERN SEQ(A a, NOT(B b), C c) WHERE a.x < c.x WITHIN 6",
    "PATTERN AND(A a, B b, C c) WHERE a.x < b.x WITHIN 4",
    "PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 5 EVENTS",
    "PATTERN SEQ(A a, B b, C c) WITHIN 6",
]


@pytest.mark.parametrize("text", POOLED_PATTERNS)
@pytest.mark.parametrize("partition_by", [None, "k"])
def test_runs_with_every_array_pooled_equal_the_reference_and_keep_their_frames(text, partition_by):
    import polars as pl
    import jitcep

    def events(seed, n=300):
        r = np.random.default_rng(seed)
        return pl.DataFrame({"type": r.choice(["A", "B", "C"], n), "ts": np.sort(r.integers(0, n // 2, n)),
                             "x": r.integers(0, 20, n), "k": r.integers(0, 4, n)})
    q = jitcep.compile(text)
    one, two = events(1), events(2)
    run = dict(type="type", partition_by=partition_by)
    want = q.run(one, engine="reference", **run)
    want_sliced = q.run(one[5:], engine="reference", **run)
    want_two = q.run(two, engine="reference", **run)
    assert want.height > 0
    with mock.patch.object(config, "POOL_MIN", 1):
        for threads in (1, 2):
            first = q.run(one, threads=threads, **run)
            kept = first.clone()
            tail = first[3:]
            other = q.run(two, threads=threads, **run)  # reuses every block the first run let go
            assert first.equals(want) and first.equals(kept) and tail.equals(kept[3:])
            assert q.run(one[5:], threads=threads, **run).equals(want_sliced)
            assert first.equals(kept) and other.equals(want_two)


def test_max_memory_counts_a_pooled_array_alike_whatever_block_it_was_cut_from():
    # a block serves arrays down to half its size: counted as the block, an array weighed more after a run
    # that left larger blocks than in a fresh pool, so the memory budget's verdict depended on earlier runs
    from jitcep.budget import nbytes
    size = 3 << 20
    fresh = alloc.Pools()
    with fresh.run():
        want = nbytes(alloc.empty(size // 8, np.int64))
    used = alloc.Pools()
    with used.run():
        big = alloc.empty((5 << 20) // 8, np.int64)
        del big
    with used.run() as pool:
        a = alloc.empty(size // 8, np.int64)
        assert a.base.nbytes > want and a.base is pool.blocks[0]  # cut from the larger block
        assert nbytes(a) == nbytes(a, a[10:], a.view(np.uint8)) == want


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 80 << 17).map(lambda n: 8 * n) | st.sampled_from([0, 8, (1 << 16) - 8, 1 << 16, (1 << 19) - 8,
                                                                         1 << 19, (1 << 22) - 8, 1 << 22, 33 << 20]),
       st.booleans(), st.sampled_from(["none", "fresh", "used"]))
def test_counted_at_most_bounds_what_max_memory_counts_for_an_array_empty_makes(size, mapped, where):
    # the fused k-leaf path bounds the joins' outputs it never makes by this (execute.join._held_at_most): it
    # must be at least what jitcep.budget.nbytes counts for the array, made outside a pool (a 4 MB or a 33 MB
    # array cut), in a fresh pool or in one whose larger block serves it; and close to it once past 4 MB
    from jitcep.budget import nbytes
    pools = alloc.Pools()
    if where == "used":
        with pools.run():
            big = alloc.empty(2 * size // 8 + 1, np.int64)
            del big
    with pools.run() if where != "none" else mock.MagicMock():
        counted = nbytes(alloc.empty(size // 8, np.int64, mapped=mapped))
    bound = alloc.counted_at_most(size, mapped)
    assert counted <= bound
    if size >= 1 << 22:
        assert bound <= size + size // 8 + (32 << 20 if mapped and size < 33 << 20 else 0)


def test_a_query_near_max_memory_raises_or_not_whatever_it_ran_before():
    # the same query on the same events must give the same answer, matches or ExplosionError, after a run on
    # larger events (whose blocks the pool keeps) as when compiled fresh: the budget set just past what
    # the smaller events need, found by bisection on fresh queries
    import polars as pl
    import jitcep
    from jitcep.errors import ExplosionError

    def events(seed, n):
        r = np.random.default_rng(seed)
        return pl.DataFrame({"type": r.choice(["A", "B", "C"], n), "ts": np.sort(r.integers(0, n, n)),
                             "x": r.integers(0, 100, n)})
    text = "PATTERN SEQ(A a, B b, C c) WHERE a.x < c.x AND b.x > a.x WITHIN 12"
    larger, smaller = events(1, 60_000), events(2, 40_000)

    def height(limit, before=None):
        q = jitcep.compile(text, max_memory=limit, planner="trivial")
        if before is not None:
            try:
                q.run(before, type="type", threads=1)
            except ExplosionError:
                pass
        try:
            return q.run(smaller, type="type", threads=1).height
        except ExplosionError:
            return None
    lo, hi = 1 << 16, 1 << 28
    assert height(hi) is not None
    while hi - lo > 1 << 14:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if height(mid) is None else (lo, mid)
    assert height(hi) is not None and height(hi, larger) == height(hi)


def test_a_runs_pool_keeps_its_blocks_and_counts_while_other_queries_release(monkeypatch):
    # query A's run (as on another thread) holds an array cut from a larger free block; query B's releases
    # meanwhile settle the process's cap: A's pool looks stale (not released lately) but is running, so it
    # keeps its blocks, and max_memory still counts A's array as the new block it would need
    from jitcep.budget import nbytes
    monkeypatch.setattr(config, "POOL_KEEP", 8 << 20)
    monkeypatch.setattr(alloc, "_kept", alloc._Kept())
    A, B = alloc.Pools(), alloc.Pools()
    n = 600_000  # int64: 4.8 MB, its block ~5.2 MB; half of it is cut from that block too
    with A.run():
        del_me = alloc.empty(n, np.int64)
        del del_me
    with A.run() as pool:
        a = alloc.empty(n // 2 + 1, np.int64)
        assert a.base.nbytes > alloc._block_size(a.nbytes)  # cut from the larger block
        counted = nbytes(a)
        assert counted == alloc._block_size(a.nbytes)
        token = alloc._active.set(None)
        try:
            for _ in range(5):
                with B.run():
                    y = alloc.empty(n, np.int64)
                    del y
        finally:
            alloc._active.reset(token)
        assert nbytes(a) == counted and len(pool.blocks) == 1
    del a
    with B.run():  # A released: it may now give its block up to the cap
        pass
    assert sum(p.nbytes() for p in (*A.idle, *B.idle)) <= 8 << 20
