"""Rule: where each negation filters (ZStream 4.4.2 and 5.1 Table 2; Kolchinsky & Schuster section 4).

A negation whose range only its SEQ neighbours (and its conditions'
variables) fix -- its ``anchor`` -- may be applied right after the lowest join
covering them ("pushed", ZStream's NSEQ; Kolchinsky: "at the earliest point
possible, when all positive events it depends on are already received"), so
killed partial matches never reach the joins above; or over whole matches
("matches", ZStream's NEG on top).  One bounded by the window or an AND span,
one next to a closure, and every negation under ``order="nondecreasing_ts"``
(where a positive event outside the join may tie into the range) filters
whole matches, over the root.  Several negations on one node apply in
pattern order.

Without statistics every negation that can be is pushed down.  A plan chosen
on statistics prices the whole plan with the negation pushed and on top
(:func:`jitcep.plan.planner.cost.plan_cost`: ZStream's Formula 1 per
operator) and keeps the cheaper: pushing reads every record of the lower
join and pays off when the negation kills many of them; on top it reads only
whole matches, cheaper when the negated events are rare and the joins above
are selective (ZStream 6.4, Figures 15-16).  Negations are decided one at a
time in pattern order, the later ones pushed while an earlier one is priced.
"""

from __future__ import annotations

import dataclasses

from ..operators import GroupCollect, Join, KleeneCollect, ListFilter, NegationFilter, NfaRuns, Scan
from ..planner.cardinality import estimate_work
from ..planner.cost import plan_cost


def _placed(plan, negations, pushed: set[int], costs: dict[int, tuple]):
    """``plan`` with the negations whose index is in ``pushed`` on the lowest join covering their anchor,
    the others over whole matches; ``costs``: the priced placements per negation index."""
    pending = [i for i in range(len(negations)) if i in pushed]
    at_root = [i for i in range(len(negations)) if i not in pushed]

    def rec(n):
        if isinstance(n, (Scan, NfaRuns)):  # NFA^b runs: negations filter the accepted matches (section 8)
            return n
        if isinstance(n, (KleeneCollect, GroupCollect, ListFilter)):  # over the join tree of the other variables
            return dataclasses.replace(n, input=rec(n.input))
        n = dataclasses.replace(n, left=rec(n.left), right=rec(n.right))
        if isinstance(n, Join):
            for i in [i for i in pending if negations[i].anchor <= set(n.vars)]:
                pending.remove(i)
                n = NegationFilter(n, negations[i], "pushed", costs.get(i, ()))
        return n

    root = rec(plan.root)
    for i in pending + at_root:  # an anchor no join covers (a one-variable root) filters whole matches
        root = NegationFilter(root, negations[i], "matches", costs.get(i, ()))
    return dataclasses.replace(plan, root=root)


def place(plan, planning):
    negations = planning.logical.negations
    if not negations:  # nothing to place: the tree as it is (rebuilding it copied every join)
        return plan
    pushable = planning.options.order != "nondecreasing_ts"
    pushed = {i for i, n in enumerate(negations) if pushable and n.anchor is not None}
    stats = planning.statistics
    if stats is None:
        return _placed(plan, negations, pushed, {})
    costs: dict[int, tuple] = {}
    for i in sorted(pushed):
        priced = []
        for placement, chosen in (("pushed", pushed), ("matches", pushed - {i})):
            candidate = _placed(plan, negations, chosen, {})
            priced.append((placement, plan_cost(candidate, estimate_work(candidate, stats, planning.span))))
        costs[i] = tuple(priced)
        if priced[1][1] < priced[0][1]:  # ties: pushed, the rule's choice
            pushed = pushed - {i}
    return _placed(plan, negations, pushed, costs)
