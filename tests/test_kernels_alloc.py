"""jitcep.kernels.alloc: output sizes and the reused work space."""

from __future__ import annotations

import threading

import numpy as np

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
