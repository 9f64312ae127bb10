"""Output and work arrays for the kernels: allocated by NumPy, never inside a kernel (issue 3, measured at 10^7 events).

NumPy advises arrays of at least 4 MB for transparent huge pages (Linux THP in
``madvise`` mode, the common default); an array allocated inside an ``@njit``
function (Numba's NRT allocator), or a smaller NumPy one, is not, and filling
it pays a page fault per 4 KB page: about 3x the fill itself.  So every
output that can be large (O(n) or O(matches)) is allocated here by the Python
wrapper and filled by the kernel.  An upper bound is fine (the wrapper returns
a view): untouched pages cost nothing.  Small tables (per code, per key) stay
inside the kernels.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
import threading
import weakref
from contextvars import ContextVar

import numpy as np

from .. import config

_HUGE = 1 << 22     # bytes: NumPy's threshold for advising huge pages (a fact of NumPy, not a tuning)
_MAPPED = 33 << 20  # bytes: above glibc's largest mmap threshold (32 MB), so always a fresh mapping
#                     (tuning thresholds: jitcep/config.py)


def empty(n: int, dtype, mapped: bool = False) -> np.ndarray:
    """``np.empty(n, dtype)``, as a view of a 4 MB array when it is between 512 KB and 4 MB.

    ``mapped``: an array of 4 MB or more is cut from one of at least 33 MB.
    glibc maps large blocks fresh (page-aligned: huge pages) but, once it has
    freed such blocks, raises its threshold up to 32 MB and serves the next
    from its heap, in small pages: for an output filled right away that cost
    2-3 ms per 10-40 MB at 10^7 events (the kept records of the type grouping).

    Inside :meth:`Pools.run` an array of ``config.POOL_MIN`` bytes or more is
    a view of a block of the run's :class:`BufferPool` instead.
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    pool = _active.get()
    if pool is not None and size >= config.POOL_MIN:
        return pool.take(size).view(dtype)
    if config.ALLOC_ROUND_UP <= size < _HUGE:  # a bigger array that gets huge pages faults in faster
        return np.empty(_HUGE // dtype.itemsize, dtype)[:n]
    if mapped and _HUGE <= size < _MAPPED:
        return np.empty(_MAPPED // dtype.itemsize + 1, dtype)[:n]
    return np.empty(n, dtype)


def counted_at_most(nbytes: int, mapped: bool = False) -> int:
    """At most the bytes ``max_memory`` counts (:func:`counted_sizes`, :func:`jitcep.budget.nbytes`) for an
    array of ``nbytes`` that :func:`empty` makes: a pool's block counts as a new one for it
    (:func:`_block_size`, at least its own bytes), and outside a pool's run (a worker thread, a caller
    with no pool) the 4 MB array or, with ``mapped``, the 33 MB one it is cut from."""
    most = _block_size(nbytes)
    if config.ALLOC_ROUND_UP <= nbytes < _HUGE:
        most = max(most, _HUGE)
    if mapped and _HUGE <= nbytes < _MAPPED:
        most = max(most, _MAPPED + 64)  # _MAPPED // itemsize + 1 items
    return most


def _block_size(size: int) -> int:
    """The bytes of a pool's new block for ``size``: rounded up to a sixteenth of the power of two above
    it, so that a rerun's slightly larger arrays fit.  Not to 4 MB as :func:`empty` rounds: that buys huge
    pages for the first faults, which a pool's block pays once, and the pool holds its blocks between runs."""
    step = 1 << max(size.bit_length() - 4, 0)
    return -(-size // step) * step


_active: ContextVar[BufferPool | None] = ContextVar("jitcep_buffer_pool", default=None)


class BufferPool:
    """The large arrays of one compiled query's runs, kept from run to run: a rerun finds its pages mapped.

    A run's arrays past glibc's thresholds are mapped fresh, or grow a heap
    that glibc trims again when they are freed, so every run pays a page
    fault per 4 KB it writes: simpleNot at x100 (perf/notes/opencep.md, "jitcep
    against OpenCEP") faulted ~6,000 pages a run, a third of its time.
    glibc's thresholds are process-wide (``mallopt``), the user's process
    to set; this pool keeps the memory of the runs of one query instead.

    A block is handed out again only when nothing but the pool refers to
    it: every array :func:`empty` makes from it is a view holding the block
    as its base, so a block is free exactly when no such view (and nothing
    that holds one: a Polars frame over it, a later view) is alive
    (CPython's reference count).  So a block freed during a run serves the
    rest of it, and one in the output the user keeps is never written.
    Between runs (:meth:`release`) the pool keeps the most recently used
    blocks, and every pool of the process together at most
    ``config.POOL_KEEP`` bytes (:class:`_Kept`).  Thread-safe: one run at
    a time is the rule (:class:`Pools`), but a lock guards the blocks anyway.
    """

    def __init__(self):
        self.blocks: list[np.ndarray] = []  # uint8 arrays that own their memory
        self.used: list[int] = []  # per block: the run that last took it
        # the blocks ordered by (bytes, index): a take reads only those of the sizes it may use, smallest
        # first (a pool holds ~20 blocks and a run takes ~30 arrays: scanning every block for each costs
        # 0.2 ms of a 10^6-event run, perf/notes/fixed_costs.md)
        self.sizes: list[int] = []  # ascending
        self.by_size: list[int] = []  # the block of each entry of ``sizes``
        # per block (by id, while in ``blocks``): the bytes a new block for its last array would hold,
        # what max_memory counts of it (:func:`counted_sizes`)
        self.counted: dict[int, int] = {}
        self.runs = 0
        self.running = False  # inside a run (:meth:`Pools.run`): other pools' releases take none of its blocks
        self.lock = threading.Lock()

    def take(self, size: int) -> np.ndarray:
        """``size`` bytes (uint8) cut from a free block, the smallest that holds them and is at most twice
        as large as a new one, else from a new block (:func:`_block_size`).  The bound keeps the memory a
        block holds near the array's size; ``max_memory`` counts the array as a new block for it
        (:func:`counted_sizes`), whichever block it was cut from."""
        limit = 2 * _block_size(size)
        with self.lock:
            best = -1
            sizes = self.sizes
            j = bisect.bisect_left(sizes, size)
            while j < len(sizes) and sizes[j] <= limit:  # smallest first, ties by index
                if self._free(self.by_size[j]):
                    best = self.by_size[j]
                    break
                j += 1
            if best < 0:
                best = len(self.blocks)
                self.blocks.append(np.empty(_block_size(size), np.uint8))
                self.used.append(self.runs)
                j = bisect.bisect_right(sizes, self.blocks[best].nbytes)  # after its size's: the largest index
                sizes.insert(j, self.blocks[best].nbytes)
                self.by_size.insert(j, best)
            self.used[best] = self.runs
            self.counted[id(self.blocks[best])] = _block_size(size)
            return self.blocks[best][:size]  # made under the lock: this view marks the block taken

    def _free(self, i: int) -> bool:
        return _refs(self.blocks, i) == _ALONE  # no view of the block is alive

    def release(self) -> None:
        """The end of a run: keep the blocks last taken most recently, up to ``config.POOL_KEEP`` bytes
        (blocks still referred to, as by the output, count too: they are free once the user drops it), and
        let the process's other pools give up what the cap no longer holds beside them (:class:`_Kept`)."""
        with self.lock:
            self.running = False
            self._keep(config.POOL_KEEP)
            self.runs += 1
        _kept.settle(self)

    def shed(self, excess: int) -> int:
        """Give up the blocks used least recently until ``excess`` bytes are gone (or none is left); the
        bytes given up.  A block a view still holds is only forgotten: freed with its last view.  A pool
        inside a run gives up nothing: the run may take its blocks again, and ``max_memory`` counts its
        arrays by their blocks (:func:`counted_sizes`), which must not change with other queries' runs."""
        with self.lock:
            if self.running:
                return 0
            before = sum(b.nbytes for b in self.blocks)
            self._keep(before - excess)
            return before - sum(b.nbytes for b in self.blocks)

    def _keep(self, limit: int) -> None:
        order = sorted(range(len(self.blocks)), key=lambda i: -self.used[i])
        kept, total = [], 0
        for i in order:
            if total + self.blocks[i].nbytes <= limit:
                kept.append(i)
                total += self.blocks[i].nbytes
        self.blocks = [self.blocks[i] for i in kept]
        self.used = [self.used[i] for i in kept]
        self.by_size = sorted(range(len(self.blocks)), key=lambda i: self.blocks[i].nbytes)  # stable: ties by index
        self.sizes = [self.blocks[i].nbytes for i in self.by_size]
        self.counted = {id(b): self.counted[id(b)] for b in self.blocks}  # no id of a block let go

    def nbytes(self) -> int:
        """The bytes the pool holds."""
        with self.lock:
            return sum(b.nbytes for b in self.blocks)


def counted_sizes() -> dict[int, int]:
    """What ``max_memory`` counts of the run's pool's blocks, by block id (empty outside a pool's run): an
    array that owns its memory counts its own bytes (:func:`jitcep.budget.nbytes`), but a block of the
    pool those of a new block for the array last cut from it.  A block
    serves arrays down to half its size, and the blocks a pool holds depend on the query's earlier runs:
    counted whole, one run's arrays weighed more after a run on larger events, and the same run raised
    ExplosionError or not by what ran before it."""
    pool = _active.get()
    return {} if pool is None else pool.counted


class _Kept:
    """The bytes the process's buffer pools keep between runs: ``config.POOL_KEEP`` in all, not per
    compiled query, so a process holding many queries (a service, a Spark Python worker running many
    patterns) holds at most that much for all of them.

    A released pool keeps what fits beside the others', after taking the
    blocks of *stale* pools: those not released during the last round of
    every live pool (their query stopped running; least recently released
    first).  Pools whose queries take turns keep theirs, first come first
    served, and the rest run as without a pool: evicting the least recent
    instead throws out, in a cycle of queries, exactly the blocks the next
    run needs, which measured slower than keeping nothing (perf/notes/opencep.md,
    "The pools' cap per process").  A single query running again and
    again ends up with the whole cap.

    Pools are held by weak reference: a query's pools are freed with it.
    Thread-safe (one lock; a pool's own lock is taken inside it, never the
    other way round) and fork-safe (a child starts with a fresh lock: a
    thread of the parent may have held it at the fork).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.order: dict[int, tuple[weakref.ref, int]] = {}  # id -> (pool, clock at its release), oldest first
        self.clock = 0

    def settle(self, pool: BufferPool) -> None:
        """``pool`` was just released: it keeps what fits within the cap beside the others, stale ones
        giving theirs up first."""
        with self.lock:
            self.clock += 1
            self.order.pop(id(pool), None)
            self.order[id(pool)] = (weakref.ref(pool), self.clock)
            live = []
            for key, (ref, at) in list(self.order.items()):
                p = ref()
                if p is None:  # freed with its query
                    del self.order[key]
                elif p is not pool:
                    live.append((p, at))
            excess = sum(p.nbytes() for p, _ in live) + pool.nbytes() - config.POOL_KEEP
            for p, at in live:  # least recently released first
                if excess <= 0 or self.clock - at <= len(live) + 1:
                    break
                excess -= p.shed(excess)
            if excess > 0:
                pool.shed(excess)

    def _after_fork(self) -> None:
        self.lock = threading.Lock()


_kept = _Kept()
os.register_at_fork(after_in_child=lambda: _kept._after_fork())


def _refs(blocks: list, i: int) -> int:
    return sys.getrefcount(blocks[i])


_ALONE = _refs([np.empty(1, np.uint8)], 0)
"""What :func:`_refs` counts of an array only its list holds, measured by the same call (the count's
temporaries depend on the interpreter)."""


class Pools:
    """A compiled query's idle :class:`BufferPool`\\ s: each run takes one (a new one when every pool is in
    use by another thread's run) and gives it back, so runs of one query from several threads never share
    a pool; at most ``keep`` idle pools are kept."""

    def __init__(self, keep: int = 1):
        self.idle: list[BufferPool] = []
        self.keep = keep
        self.lock = threading.Lock()
        self.pid = os.getpid()

    @contextlib.contextmanager
    def run(self):
        """Within the block, :func:`empty` on this thread (and in this context) cuts large arrays from a
        pool of this query's."""
        if self.pid != os.getpid():  # a forked child: another thread may have held a lock at the fork
            self.__init__(self.keep)
        with self.lock:
            pool = self.idle.pop() if self.idle else BufferPool()
        with pool.lock:
            pool.running = True
        token = _active.set(pool)
        try:
            yield pool
        finally:
            _active.reset(token)
            pool.release()
            with self.lock:
                if len(self.idle) < self.keep:
                    self.idle.append(pool)


def optional_mask(mask) -> np.ndarray | None:
    """A bool mask argument for a kernel: None stays None, so Numba compiles a specialisation without
    the test (a one-element mask read with stride 0 instead made the loops 1.3-3x slower)."""
    return None if mask is None else np.ascontiguousarray(mask, dtype=np.bool_)


_scratch = threading.local()  # kernels release the GIL: one set of buffers per thread


def scratch(name: str, n: int, dtype) -> np.ndarray:
    """An ``n``-element work array that does not outlive the call, reused from call to call.

    A kernel's working space sized by an upper bound (every event's record,
    before the kept ones are counted) is mostly never touched; freshly mapped
    it still costs page faults on the part that is, and on this kind of
    virtual machine a fresh page costs about 0.6 ms per MB (10^6 events, three
    of 32 types grouped: 3.5 -> 1.9 ms with the buffer reused).  Buffers up to
    64 MB are kept per thread and per ``name``; the caller must not return or
    keep the array.
    """
    dtype = np.dtype(dtype)
    if n * dtype.itemsize > config.SCRATCH_KEEP:  # larger scratch is allocated per call, not kept
        return empty(n, dtype)
    pool = _scratch.__dict__
    buf = pool.get((name, dtype))
    if buf is None or len(buf) < n:
        buf = pool[(name, dtype)] = empty(n, dtype)
    return buf[:n]
