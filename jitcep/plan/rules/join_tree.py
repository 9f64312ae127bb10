"""Rule: the join tree of scans and joins, from a shape (ZStream 4.1 plan trees; Kolchinsky & Schuster 3).

The shape is given (``plan=``) or chosen by :mod:`.join_order` (left-deep in
pattern order unless a planner is asked for).  A shape may join any two sets of variables;
what the pattern's structure says about every pair across the two sides
decides the operator (Kolchinsky & Schuster section 4 reduce SEQ to a
conjunction with ordering predicates):

- every left variable before every right one (their lowest common operator
  a SEQ, the left one's item first): a :class:`SeqJoin`; every right one
  before every left one: the same with the sides swapped;
- no pair ordered (an AND between each): an :class:`AndJoin`;
- some ordered, some not, or in both directions: an :class:`AndJoin` whose
  ``sequence`` lists the ordered pairs, each tested on the candidates;
- the two sides whole items of one OR: a :class:`Union`.

An OR is evaluated as one union of its items: a plan node may hold variables
of an OR and of its outside only once it holds the whole OR
(:func:`jitcep.pattern.structure.splits_or`).
"""

from __future__ import annotations

import dataclasses

from ...errors import UnsupportedPatternError
from ...pattern.structure import relations, splits_or
from ..operators import AndJoin, Scan, SeqJoin, Union
from ..shapes import shape_vars
from . import join_order
from ._per_tree import per_tree


def join(body, left, right):
    """The operator joining plan nodes ``left`` and ``right`` (see the module docstring)."""
    rel = relations(body, left.vars, right.vars)
    kinds = set(rel.values())
    united = frozenset(left.vars) | frozenset(right.vars)
    if splits_or(body, united):
        raise UnsupportedPatternError(
            f"plan node {sorted(united)} joins part of an OR with other variables; an OR's items are "
            f"united first (join whole items only)")
    if kinds == {"or"}:
        return Union(left, right)
    if "or" in kinds:
        raise UnsupportedPatternError(f"plan node joins {sorted(left.vars)} with {sorted(right.vars)} across an OR")
    if kinds == {"before"}:
        return SeqJoin(left, right)
    if kinds == {"after"}:
        return SeqJoin(right, left)
    sequence = tuple((x, y) if r == "before" else (y, x) for (x, y), r in rel.items() if r != "and")
    return AndJoin(left, right, sequence=sequence)


def build(plan, planning):
    logical = planning.logical
    body = logical.positive
    shape, notes, places = join_order.shape(planning)
    names = shape_vars(shape)
    if sorted(names) != sorted(logical.variables):
        raise UnsupportedPatternError(
            f"plan shape names {sorted(names)}, the pattern's positive variables are {sorted(logical.variables)}")

    def rec(s):
        if isinstance(s, str):
            return Scan(s, logical.variables[s], logical.filters[s])
        return join(body, rec(s[0]), rec(s[1]))
    root = per_tree("join_tree", logical, shape, lambda: rec(shape), by_value=True)
    return dataclasses.replace(plan, root=root, notes=notes, kleene_places=places)
