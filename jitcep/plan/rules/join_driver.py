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

from ..operators import Scan, SeqJoin


def choose(plan, planning):
    def rec(n):
        if isinstance(n, Scan):
            return n
        left, right = rec(n.left), rec(n.right)
        if isinstance(n, SeqJoin):
            return dataclasses.replace(n, left=left, right=right,
                                       driver="smaller" if isinstance(right, Scan) else "right")
        return dataclasses.replace(n, left=left, right=right)
    return dataclasses.replace(plan, root=rec(plan.root))
