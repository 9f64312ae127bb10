"""Rule: the join tree of scans and SEQ / AND / OR joins, from a shape (ZStream 4.1 plan trees).

Without a shape, left-deep in pattern order (the TRIVIAL plan of Kolchinsky
& Schuster 2018, 4.1).  A given shape must join whole items of the pattern's
operators, and a SEQ's items as adjacent runs, left before right.
"""

from __future__ import annotations

import dataclasses

from ...errors import UnsupportedPatternError
from ...pattern.ast import Seq
from ...pattern.structure import lca, vars_of
from ..logical import _KIND
from ..operators import AndJoin, Scan, SeqJoin, Union
from ..shapes import default_shape, shape_vars

_OPERATOR = {"SEQ": SeqJoin, "AND": AndJoin, "OR": Union}


def _join_kind(body, left: frozenset[str], right: frozenset[str]) -> str:
    """Check that joining ``left`` and ``right`` is valid for the pattern and return the join kind."""
    op = lca(body, left | right)
    child_sets = [vars_of(c) for c in op.children()]
    sides = []
    for side in (left, right):
        idx = [i for i, cs in enumerate(child_sets) if cs & side]
        if any(not cs <= side for cs in (child_sets[i] for i in idx)):
            raise UnsupportedPatternError(
                f"plan node {sorted(side)} splits an item of {_KIND[type(op)]}; join whole items only")
        sides.append(idx)
    if isinstance(op, Seq):
        li, ri = sides
        run = sorted(li + ri)
        if run != list(range(run[0], run[-1] + 1)) or max(li) >= min(ri) \
                or li != list(range(li[0], li[-1] + 1)):
            raise UnsupportedPatternError(
                f"SEQ plan node must join adjacent runs, left before right: {sorted(left)} then {sorted(right)}")
    return _KIND[type(op)]


def build(plan, planning):
    logical = planning.logical
    body = logical.positive
    shape = planning.shape if planning.shape is not None else default_shape(body)
    names = shape_vars(shape)
    if sorted(names) != sorted(logical.variables):
        raise UnsupportedPatternError(
            f"plan shape names {sorted(names)}, the pattern's positive variables are {sorted(logical.variables)}")

    def rec(s):
        if isinstance(s, str):
            return Scan(s, logical.variables[s], logical.filters[s])
        left, right = rec(s[0]), rec(s[1])
        return _OPERATOR[_join_kind(body, frozenset(left.vars), frozenset(right.vars))](left, right)
    return dataclasses.replace(plan, root=rec(shape))
