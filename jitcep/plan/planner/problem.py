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
written as its join shape, or a Kleene closure ``KL(T)`` as the paper's event
type ``T'`` (section 4, "Kleene closure patterns": :class:`ClosureUnit`).  A
plan is a shape over the units' indices: an int (a unit) or a pair of plans.

A closure unit may only be joined with a plan covering its ``need`` (the
units fixing its range, docs/planning.md "Kleene placement"): a tree is
*admissible* when every node holding the closure and any other unit holds
all of its ``need`` (:meth:`JoinProblem.admits`), a condition on sets that
the searches test per join (``algorithms._common.Costing``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

from .finite import cards

Tree = Union[int, tuple]


@dataclass(frozen=True)
class ClosureUnit:
    """A closure as a unit of the problem (Kolchinsky & Schuster 4's ``T'``): ``unit``, its index;
    ``need``, the bitmask of the units its sibling in a tree must cover (where its range is fixed and
    its operator can run); ``tests``, the conjuncts its operator tests (ZStream's ``n``, Formula 1)."""

    unit: int
    need: int
    tests: int = 0


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
    closures: tuple[ClosureUnit, ...] = ()

    def __post_init__(self):
        # past MAX_ESTIMATE the PMs would overflow (and inf * 0 make NaN): the largest capped (.finite)
        capped = cards(tuple(self.card))
        if capped is not self.card:
            object.__setattr__(self, "card", capped)
        n = len(self.units)
        if len(self.card) != n or len(self.sel) != n or any(len(row) != n for row in self.sel):
            raise ValueError("a join problem needs one cardinality and one row of selectivities per unit")
        for c in self.closures:
            if not 0 <= c.unit < n or c.need >> n or c.need >> c.unit & 1 or not c.need:
                raise ValueError(f"closure unit {c.unit} needs a non-empty set of other units, got {c.need:b}")

    def admits(self, mask: int) -> bool:
        """Whether a plan node over the units of ``mask`` can be run: each closure unit it holds is alone
        or with all of its ``need``."""
        return all(not mask >> c.unit & 1 or mask == 1 << c.unit or mask & c.need == c.need
                   for c in self.closures)

    def admits_tree(self, tree: Tree) -> bool:
        """Whether every node of ``tree`` is admitted (:meth:`admits`)."""
        if isinstance(tree, int):
            return True
        return (self.admits(sum(1 << i for i in leaves(tree)))
                and self.admits_tree(tree[0]) and self.admits_tree(tree[1]))

    def closure_unit(self, i: int) -> ClosureUnit | None:
        """The :class:`ClosureUnit` of unit ``i``, None when it is not a closure."""
        return next((c for c in self.closures if c.unit == i), None)

    def admissible_order(self, order) -> list[int]:
        """``order`` with each closure unit moved right after the last unit of its ``need`` when it comes
        before it (the first place in that order where its range is fixed), so that its left-deep tree is
        admissible; the others keep their order."""
        out = list(order)
        for c in self.closures:
            pos = out.index(c.unit)
            out.pop(pos)
            last = max(k for k, i in enumerate(out) if c.need >> i & 1)
            out.insert(max(last + 1, pos), c.unit)
        return out

    def pattern_order(self) -> list[int]:
        """The units in pattern (index) order, each closure unit right after the last unit of its ``need``
        (the closure units are numbered after the others; in the pattern a closure lies between its
        neighbours, and this is the first place after them where its range is fixed)."""
        out = [i for i in range(self.n) if self.closure_unit(i) is None]
        for c in self.closures:
            out.insert(max(k for k, i in enumerate(out) if c.need >> i & 1) + 1, c.unit)
        return out

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
