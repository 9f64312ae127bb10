"""Rule: which input drives each SEQ join.

The right records drive (ZStream Algorithm 1: each searches its left range
from the EAT pointer).  When the right input is a leaf, the join may instead
be driven by the left records when they are many times fewer -- the partial
matches of a long SEQ thin out while every leaf keeps its size -- so the cost
follows the smaller input ("smaller": decided by the inputs' sizes as they
arrive, :func:`jitcep.kernels.join.seq_join`).  A join of two composite
inputs has no one-event side to binary-search, so its right side drives.
"""

from __future__ import annotations

import dataclasses

from ..operators import Scan, SeqJoin, rebuild_joins


def choose(plan, planning):
    def drive(n):
        if isinstance(n, SeqJoin):
            return dataclasses.replace(n, driver="smaller" if isinstance(n.right, Scan) else "right")
        return n
    return dataclasses.replace(plan, root=rebuild_joins(plan.root, drive))
