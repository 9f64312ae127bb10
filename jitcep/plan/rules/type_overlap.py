"""Rule: whether a join's two sides may bind events of one type.

Distinct variables bind distinct events (docs/semantics.md section 3): a
join whose sides may read one type checks that a pair's records share no
event; sides of disjoint types skip that test.
"""

from __future__ import annotations

import dataclasses

from ..operators import Join, remake_joins
from ._per_tree import per_tree


def _overlap(a, b) -> bool:
    return a is None or b is None or bool(set(a) & set(b))


def sides_overlap(types, left_vars, right_vars) -> bool:
    """Whether an event may be a candidate of a variable on each side (``types``: variable -> its types, None
    for any type): each side's types united once, linear in the variables."""
    left, right = [types[v] for v in left_vars], [types[v] for v in right_vars]
    return None in left or None in right or not set().union(*left).isdisjoint(set().union(*right))


def mark(plan, planning):
    types = planning.logical.variables

    def overlap(n):
        if not isinstance(n, Join):
            return {}
        return {"overlap": sides_overlap(types, n.left.vars, n.right.vars)}
    root = per_tree("type_overlap", planning.logical, plan.root, lambda: remake_joins(plan.root, overlap))
    return dataclasses.replace(plan, root=root)
