"""Join-tree shapes: nested pairs of variable names, e.g. ``(("a", "b"), "c")``.

Any binary tree over the positive variables that keeps every OR whole is
valid (:mod:`jitcep.plan.rules.join_tree` picks each join's operator); the
executor gives identical results for all of them.  :func:`default_shape` is
the TRIVIAL plan of Kolchinsky & Schuster (2018, 4.1); :func:`all_shapes`
enumerates ZStream's space (SEQ items joined as adjacent runs, left before
right, section 4.1) and :func:`all_trees` every valid tree, so tests can run
each one.
"""

from __future__ import annotations

from itertools import product
from typing import Union

from ..errors import UnsupportedPatternError
from ..pattern.ast import EventVar, Node, Seq
from ..pattern.structure import splits_or, walk_nodes
from .positive_structure import positive

Shape = Union[str, tuple]


def default_shape(body: Node) -> Shape:
    """Left-deep in pattern order, recursively (the TRIVIAL plan of Kolchinsky & Schuster 2018, 4.1)."""
    body = positive(body)

    def rec(n):
        if isinstance(n, EventVar):
            return n.name
        acc = rec(n.items[0])
        for c in n.items[1:]:
            acc = (acc, rec(c))
        return acc
    return rec(body)


def _brackets(parts: list) -> list:
    """Every binary bracketing of an ordered run of sub-shapes (Catalan many)."""
    if len(parts) == 1:
        return [parts[0]]
    out = []
    for i in range(1, len(parts)):
        for left in _brackets(parts[:i]):
            for right in _brackets(parts[i:]):
                out.append((left, right))
    return out


def _set_trees(parts: list) -> list:
    """Every binary tree over an unordered set of sub-shapes, both orientations of each split."""
    if len(parts) == 1:
        return [parts[0]]
    out = []
    n = len(parts)
    for mask in range(1, (1 << n) - 1):
        left = [parts[i] for i in range(n) if mask >> i & 1]
        right = [parts[i] for i in range(n) if not mask >> i & 1]
        for lt in _set_trees(left):
            for rt in _set_trees(right):
                out.append((lt, rt))
    return out


def all_shapes(body: Node, limit: int = 10_000) -> list[Shape]:
    """All valid plan shapes of a (small) pattern: every bracketing of SEQ runs, every tree over AND/OR items."""
    body = positive(body)

    def rec(n) -> list:
        if isinstance(n, EventVar):
            return [n.name]
        out = []
        for choice in product(*(rec(c) for c in n.items)):
            trees = _brackets(list(choice)) if isinstance(n, Seq) else _set_trees(list(choice))
            out.extend(trees)
            if len(out) > limit:
                raise UnsupportedPatternError(f"more than {limit} plan shapes")
        return out
    return rec(body)


def all_trees(body: Node, limit: int = 10_000) -> list[Shape]:
    """Every join tree over the positive variables of a (small) pattern, each split in both orientations,
    that keeps every OR whole (:func:`~jitcep.pattern.structure.splits_or`): the space the order- and
    tree-based planners of Kolchinsky & Schuster (2018, sections 3-4) search.  More than ``limit``
    trees raise UnsupportedPatternError (an n-variable pattern has up to (2n-2)! / (n-1)! of them)."""
    body = positive(body)
    names = [n.name for n in walk_nodes(body) if isinstance(n, EventVar)]
    count = 1
    for k in range(n := len(names), 2 * n - 1):  # (2n-2)! / (n-1)!: the count without the OR rule
        count *= k
    if count > 50 * limit:  # too many to list and filter, whatever the OR rule would prune
        raise UnsupportedPatternError(f"more than {limit} plan shapes")
    out = [t for t in _set_trees(names)
           if not any(splits_or(body, frozenset(shape_vars(s))) for s in _subtrees(t))]
    if len(out) > limit:
        raise UnsupportedPatternError(f"more than {limit} plan shapes")
    return out


def _subtrees(shape: Shape):
    yield shape
    if not isinstance(shape, str):
        yield from _subtrees(shape[0])
        yield from _subtrees(shape[1])


def shape_vars(shape: Shape) -> tuple[str, ...]:
    """The variable names of ``shape``, left to right (UnsupportedPatternError if it is not a shape)."""
    if isinstance(shape, str):
        return (shape,)
    if not (isinstance(shape, tuple) and len(shape) == 2):
        raise UnsupportedPatternError(f"a plan shape is a variable name or a pair of shapes, got {shape!r}")
    return shape_vars(shape[0]) + shape_vars(shape[1])
