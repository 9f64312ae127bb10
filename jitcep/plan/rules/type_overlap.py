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


def mark(plan, planning):
    types = planning.logical.variables

    def overlap(n):
        if not isinstance(n, Join):
            return {}
        # a variable of any type (None) may share a type with every other; else some type is on both sides
        # (each side's types united once: comparing every pair of variables was quadratic in a SEQ's length)
        left, right = [types[v] for v in n.left.vars], [types[v] for v in n.right.vars]
        return {"overlap": None in left or None in right or not set().union(*left).isdisjoint(set().union(*right))}
    root = per_tree("type_overlap", planning.logical, plan.root, lambda: remake_joins(plan.root, overlap))
    return dataclasses.replace(plan, root=root)
