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
        return {"overlap": any(_overlap(types[a], types[b]) for a in n.left.vars for b in n.right.vars)}
    root = per_tree("type_overlap", planning.logical, plan.root, lambda: remake_joins(plan.root, overlap))
    return dataclasses.replace(plan, root=root)
