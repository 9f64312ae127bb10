"""Generic ``@njit`` kernels, compiled once and cached (no per-pattern code here).

A *buffer* (ZStream section 4.2) is the tuple ``(pos, start, end, goff)``:
``pos`` (m x k int64) holds the event positions of each record's variables
(-1: unbound, an OR branch not taken), ``start``/``end`` the first and last
position of the record, and ``goff`` (G+1) CSR offsets of the key partitions;
within a partition records are sorted by ``end``.  The join kernels take the
buffer with its records' times, ``(pos, start, end, goff, tstart, tend, wstart,
wend)`` (``ts`` and the window measure at start and end, as ZStream's records
carry them), so they never read times at scattered positions.

Large outputs are allocated by NumPy in the Python wrappers and filled by the
kernels (:mod:`jitcep.kernels.alloc` says why).
"""

from .grouping import (counting_sort, group_with_key_runs, group_with_keys, leaf_by_key, leaf_of_run,
                       stream_positions)
from .join import and_join, seq_join

__all__ = ["and_join", "counting_sort", "group_with_key_runs", "group_with_keys", "leaf_by_key", "leaf_of_run",
           "seq_join", "stream_positions"]
