"""What a rule decides from the join tree and the logical plan alone, kept per tree.

A query run on a new table is planned again (new statistics), and the search
usually returns the join tree an earlier table's plan had; the rules that read
nothing but that tree and the logical plan (the operators a shape makes, where
each predicate goes, which joins may bind one type twice) would redo the same
work on it.  They keep their result per (logical plan, tree) instead: both are
immutable, and an entry holds its tree so that an id is not reused while it lives.
"""

from __future__ import annotations

from ..._memo import PerObjectAndKey

KEEP = 64  # trees kept per logical plan, over its rules: past it the oldest leave

_KEPT = PerObjectAndKey(keep=KEEP)  # logical plan -> {(rule, tree key): (tree, result)}


def per_tree(rule: str, logical, tree, compute, by_value: bool = False):
    """``compute()``, the result of ``rule`` on ``tree`` for ``logical``, made once per (logical, tree):
    by identity (an operator tree), or by value (``by_value``: a shape of nested tuples of names)."""
    key = (rule, tree if by_value else id(tree))
    got = _KEPT.get(logical, key)
    if got is None or got[0] is not tree and not by_value:
        got = _KEPT.put(logical, key, (tree, compute()))
    return got[1]
