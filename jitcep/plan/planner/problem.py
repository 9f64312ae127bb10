"""A join-order problem: what the plan-generation algorithms see of a pattern (Kolchinsky & Schuster 2018, 3).

Kolchinsky & Schuster reduce CEP plan generation to join query plan
generation (Theorems 1 and 2): each unit of the pattern is a relation of
``card[i] = W * r_i`` records (its events in one window, after its type test
and filters), each pair of units has the selectivity ``sel[i][j]`` of the
predicates between them (1 when none; a SEQ's order between them counts as
a predicate, section 4), and the expected partial matches of a set S of units
are ``PM(S) = prod(card[i] for i in S) * prod(sel[i][j] for i < j in S)``.

A *unit* is a positive variable, or a whole OR (its items are united before
anything outside joins them, :func:`jitcep.pattern.structure.splits_or`),
written as its join shape.  A plan is a shape over the units' indices:
an int (a unit) or a pair of plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

Tree = Union[int, tuple]


@dataclass(frozen=True)
class JoinProblem:
    """``units``: what each index stands for (a variable name, or an OR's shape); ``card``: records
    per window; ``sel``: symmetric pairwise selectivities (``sel[i][i]`` unused); ``latency``: index
    of the unit whose event completes a match last (the last item of a top-level SEQ), None if none
    (Kolchinsky & Schuster 5.1)."""

    units: tuple
    card: tuple[float, ...]
    sel: tuple[tuple[float, ...], ...]
    latency: int | None = None

    def __post_init__(self):
        n = len(self.units)
        if len(self.card) != n or len(self.sel) != n or any(len(row) != n for row in self.sel):
            raise ValueError("a join problem needs one cardinality and one row of selectivities per unit")

    @property
    def n(self) -> int:
        return len(self.units)

    def pm(self, members) -> float:
        """PM(S): expected partial matches of the set of units ``members`` (section 3)."""
        ms = sorted(members)
        out = math.prod(self.card[i] for i in ms)
        for a, i in enumerate(ms):
            for j in ms[a + 1:]:
                out *= self.sel[i][j]
        return out

    def shape(self, tree: Tree):
        """``tree`` (unit indices) as a join shape over the units (variable names / OR shapes)."""
        if isinstance(tree, int):
            return self.units[tree]
        return (self.shape(tree[0]), self.shape(tree[1]))


def leaves(tree: Tree) -> tuple[int, ...]:
    """The unit indices of ``tree``, left to right."""
    return (tree,) if isinstance(tree, int) else leaves(tree[0]) + leaves(tree[1])


def left_deep(order) -> Tree:
    """The left-deep tree joining units in ``order`` (an order-based plan, section 3.1)."""
    it = iter(order)
    tree = next(it)
    for i in it:
        tree = (tree, i)
    return tree
