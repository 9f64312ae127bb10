"""Iterative improvement over join orders (Swami 1989; Kolchinsky & Schuster 2018, 6.1), for II-RANDOM and II-GREEDY.

"A local search JQPG algorithm, starting from some initial execution plan and
attempting a set of moves to improve the cost function, until a local minimum
is reached. [...] The functions used to traverse between states are swap (the
positions of two event types in a plan are swapped) and cycle (the positions
of three event types are shifted)."  States are orders (left-deep plans).

Moves are tried in a fixed order — every swap (i, j), i < j, then every cycle
(i, j, k), i < j < k, in both directions — and the first improving one is taken
(first improvement, as Swami's II); the search stops at an order no move
improves, or when the next move's joins do not fit in its budget of steps (it
then returns the best order so far, never worse than its start).  A move from
position p is charged the joins it prices, those of the prefixes p + 1 .. n
(``_common.Clock``); re-pricing the prefixes after an improving move is not
charged, as it follows at most one move of each pass.  Fixed move order keeps
it deterministic: only II-RANDOM's start depends on the seed.
"""

from __future__ import annotations

from itertools import combinations

from ._common import Clock, Costing, OverBudget, Plan, note


def moves(n: int):
    """Every swap and cycle of positions, as (first position changed, permutation of positions)."""
    for i, j in combinations(range(n), 2):
        yield i, {i: j, j: i}
    for i, j, k in combinations(range(n), 3):
        yield i, {i: k, j: i, k: j}
        yield i, {i: j, j: k, k: i}


def _prefixes(costing: Costing, order: list[int]) -> list[Plan]:
    """The priced left-deep plans of every prefix of ``order`` (prefix k joins order[:k + 1])."""
    out = [costing.leaves[order[0]]]
    for i in order[1:]:
        out.append(costing.join(out[-1], costing.leaves[i]))
    return out


def _price_from(costing: Costing, prefixes: list[Plan], order: list[int], start: int) -> float:
    """The cost of ``order``, which agrees with the order of ``prefixes`` before position ``start``."""
    plan = prefixes[start - 1] if start else costing.leaves[order[0]]
    for i in order[max(start, 1):]:
        plan = costing.join(plan, costing.leaves[i])
    return plan.cost


def improve(costing: Costing, order, steps: int | None) -> list[int]:
    """The local minimum reached from ``order`` by swap and cycle moves (or the best order within ``steps``)."""
    clock = Clock(steps)
    per_join = costing.steps_per_join
    n = len(order)
    # a move from position p re-prices the joins of the prefixes p + 1 .. n (position 0: from the second)
    move_steps = [sum(per_join[k] for k in range(max(p, 1) + 1, n + 1)) for p in range(n)]
    order = list(order)
    prefixes = _prefixes(costing, order)
    while True:
        for start, perm in moves(n):
            # charged per move: one pass over the O(n^3) moves can take seconds under a model without a node term
            try:
                clock.charge(move_steps[start])
            except OverBudget:
                note(f"iterative improvement stopped at its planning budget of {clock.budget:,} steps, before a "
                     f"local minimum")
                return order
            moved = [order[perm.get(p, p)] for p in range(n)]
            # strict improvement: a local search must not cycle between equal-cost orders
            if _price_from(costing, prefixes, moved, start) < prefixes[-1].cost:
                order, prefixes = moved, _prefixes(costing, moved)
                break
        else:
            return order
