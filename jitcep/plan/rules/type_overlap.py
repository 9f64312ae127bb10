"""Rule: whether a join's two sides may bind events of one type.

Distinct variables bind distinct events (docs/semantics.md section 3): a
join whose sides may read one type checks that a pair's records share no
event; sides of disjoint types skip that test.
"""

from __future__ import annotations

import dataclasses

from ..operators import Join, Scan


def _overlap(a, b) -> bool:
    return a is None or b is None or bool(set(a) & set(b))


def mark(plan, planning):
    types = planning.logical.variables

    def rec(n):
        if isinstance(n, Scan):
            return n
        left, right = rec(n.left), rec(n.right)
        if not isinstance(n, Join):
            return dataclasses.replace(n, left=left, right=right)
        overlap = any(_overlap(types[a], types[b]) for a in left.vars for b in right.vars)
        return dataclasses.replace(n, left=left, right=right, overlap=overlap)
    return dataclasses.replace(plan, root=rec(plan.root))
