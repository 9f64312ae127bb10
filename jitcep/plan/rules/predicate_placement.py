"""Rule: each multi-variable predicate on the lowest join covering its variables (ZStream 4.1).

A predicate whose variables meet only at an OR was refused by the logical plan.
"""

from __future__ import annotations

import dataclasses

from ...pattern import expr as E
from ..operators import Scan
from ._per_tree import per_tree


def place(plan, planning):
    def rec(n, todo):
        if isinstance(n, Scan):
            return n
        lv, rv = set(n.left.vars), set(n.right.vars)
        to_left = [p for p in todo if E.variables(p) <= lv]
        to_right = [p for p in todo if E.variables(p) <= rv]
        here = tuple(p for p in todo if p not in to_left and p not in to_right)
        left, right = rec(n.left, to_left), rec(n.right, to_right)
        if left is n.left and right is n.right and here == n.predicates:  # kept, not copied
            return n
        return dataclasses.replace(n, left=left, right=right, predicates=here)
    root = per_tree("predicate_placement", planning.logical, plan.root,
                    lambda: rec(plan.root, list(planning.logical.joins)))
    return plan if root is plan.root else dataclasses.replace(plan, root=root)
