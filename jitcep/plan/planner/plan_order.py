"""The pattern's order as a physical plan's joins test it, and the share of an AND join's pairs in that order.

A SEQ join reads only the pairs of its inputs in order; an AND join reads every
pair within the window and tests its ``sequence`` pairs' order as predicates.
The share of those pairs in order is ``share(S) / (share(L) share(R))`` over the
order the plan's joins test (:mod:`.order_share`: linear extensions of a
series-parallel order, ``e(S) / |S|!``; docs/planning.md "The order's
selectivity"), where ZStream (Mei & Madden 2009, Table 1) and Kolchinsky &
Schuster (2018, section 4) price each ordered pair at ``Pt`` = 1/2
(:data:`~.order_share.ORDER_FACTOR`), kept here where the order is no
series-parallel one.  Read by :func:`~jitcep.plan.planner.cardinality.estimate_work`.
"""

from __future__ import annotations

from ..operators import AndJoin, SeqJoin
from .order_share import ORDER_FACTOR, series_blocks, share


class PlanOrder:
    """The pattern's order over the variables of ``plan``'s joins, as they test it (a SEQ join: every left
    variable before every right one; an AND join: its ``sequence`` pairs), for :func:`~.cardinality.estimate_work`: the
    share of an AND join's pairs in order is ``share(S) / (share(L) share(R))`` (docs/planning.md "The
    order's selectivity"), or :data:`ORDER_FACTOR` per tested pair where that order is no series-parallel
    order (:func:`~.order_share.series_blocks`; none of a pattern's)."""

    def __init__(self, plan):
        first: dict[str, set] = {}
        for n in plan.nodes():
            if isinstance(n, SeqJoin):
                for y in n.right.vars:
                    first.setdefault(y, set()).update(n.left.vars)
            elif isinstance(n, AndJoin):
                for x, y in n.sequence:
                    first.setdefault(y, set()).add(x)
        names = sorted(set(first).union(*first.values()))
        self.index = {v: i for i, v in enumerate(names)}
        below = [sum(1 << self.index[x] for x in first.get(v, ())) for v in names]
        changed = True
        while changed:  # transitive closure (the joins test each pair once; closed already but for lists)
            changed = False
            for i, b in enumerate(below):
                more = b
                for j in range(len(names)):
                    if b >> j & 1:
                        more |= below[j]
                if more != b:
                    below[i], changed = more, True
                if more >> i & 1:  # a cycle: no order
                    changed = False
                    break
        self.blocks = series_blocks(below)

    def _share(self, vs) -> float:
        return share(self.blocks, sum(1 << self.index[v] for v in vs if v in self.index))

    def across(self, s, sa, sb, sequence) -> float:
        """The share of the pairs of records of ``sa`` and ``sb`` (each in order) in order over ``s``."""
        if self.blocks is None:
            return ORDER_FACTOR ** sum(1 for x, y in sequence if x in s and y in s)
        return self._share(s) / (self._share(sa) * self._share(sb))
