"""Skip-till-next-match's search: each NFA^b run's next qualifying event (SASE+ 3.1; docs/semantics.md section 8).

Shared by the runs over singleton states (:mod:`jitcep.execute.nfa`) and those
with a Kleene state (:mod:`jitcep.execute.nfa_kleene`), which differ only in
how a (run, candidate) pair is tested.
"""

from __future__ import annotations

import numpy as np

from .. import config


def first_passing(cand: np.ndarray, lo: np.ndarray, hi: np.ndarray, active: np.ndarray, passes) -> np.ndarray:
    """Each run's first candidate of ``cand[lo:hi]`` for which ``passes(runs, events)`` holds (-1: none),
    for the runs ``active``; ``passes`` None: the first candidate.  The test runs on chunks of (run,
    candidate) pairs, grouped by run with candidates ascending, whose width doubles per round within
    ``config.NEG_PAIR_BUDGET`` pairs (a run's next qualifying event is usually near)."""
    nxt = np.full(len(lo), -1, dtype=np.int64)
    if passes is None:
        nxt[active] = cand[lo[active]]
        return nxt
    lo = lo.copy()
    width = 1
    while len(active):
        take = np.minimum(hi[active] - lo[active], width)
        runs = np.repeat(active, take)
        # candidate i of a run's chunk: lo + i
        idx = lo[runs] + np.arange(len(runs)) - np.repeat(np.cumsum(take) - take, take)
        ok = np.flatnonzero(passes(runs, cand[idx]))
        found, at = np.unique(runs[ok], return_index=True)  # each run's first passing candidate
        nxt[found] = cand[idx[ok[at]]]
        lo[active] += take
        active = active[(nxt[active] < 0) & (lo[active] < hi[active])]
        width = max(1, min(2 * width, config.NEG_PAIR_BUDGET // max(len(active), 1)))
    return nxt
