"""Rule: where each negation filters (ZStream 4.4.2, negation pushed down).

A negation whose range only its SEQ neighbours (and its conditions'
variables) fix -- its ``anchor`` -- is applied right after the lowest join
covering them, so killed partial matches never reach the joins above.  One
bounded by the window or an AND span, one next to a closure, and every
negation under ``order="nondecreasing_ts"`` (where a positive event outside
the join may tie into the range) filters whole matches, over the root.
Several negations on one node apply in pattern order.
"""

from __future__ import annotations

import dataclasses

from ..operators import Join, KleeneCollect, NegationFilter, NfaRuns, Scan


def place(plan, planning):
    pushable = planning.options.order != "nondecreasing_ts"
    pending = [n for n in planning.logical.negations if pushable and n.anchor is not None]
    at_root = [n for n in planning.logical.negations if not (pushable and n.anchor is not None)]

    def rec(n):
        if isinstance(n, (Scan, NfaRuns)):  # NFA^b runs: negations filter the accepted matches (section 8)
            return n
        if isinstance(n, KleeneCollect):  # over the join tree of the other variables
            return dataclasses.replace(n, input=rec(n.input))
        n = dataclasses.replace(n, left=rec(n.left), right=rec(n.right))
        if isinstance(n, Join):
            for neg in [g for g in pending if g.anchor <= set(n.vars)]:
                pending.remove(neg)
                n = NegationFilter(n, neg, "pushed")
        return n

    root = rec(plan.root)
    for neg in pending + at_root:  # an anchor no join covers (a one-variable root) filters whole matches
        root = NegationFilter(root, neg, "matches")
    return dataclasses.replace(plan, root=root)
