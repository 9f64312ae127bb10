"""Rule: OpenCEP's match-level constraints, ``freeze`` on the frozen variables' scans and ``contiguous``
over whole matches (docs/semantics.md section 9).

``freeze=("a",)`` restricts a to its active candidates, a property of a's
events alone, so it marks a's leaf (:attr:`~jitcep.plan.operators.Scan.frozen`)
and no partial match ever holds a frozen-out event.  ``contiguous`` relates
the positions of several variables of one match: a :class:`Contiguity` filter
over the join tree (with the closure's lists), under the negations that filter
whole matches, since section 9 applies it before negation.  Both name single
positive variables (:mod:`jitcep.pattern.combinations` refuses any other
name at compile time).
"""

from __future__ import annotations

import dataclasses

from ..operators import Contiguity, DisjunctUnion, NegationFilter, NfaRuns, Scan, _Unary


def add(plan, planning):
    options = planning.options
    root = plan.root
    if options.freeze:
        root = _freeze(root, set(options.freeze))
    groups = tuple(g for g in options.contiguous if len(g) > 1)  # a group of one constrains nothing
    if groups:
        root = _under_negations(root, lambda n: Contiguity(n, groups))
    return plan if root is plan.root else dataclasses.replace(plan, root=root)


def _freeze(node, frozen: set[str]):
    """``node`` with the scans of the ``frozen`` variables marked."""
    if isinstance(node, Scan):
        return dataclasses.replace(node, frozen=True) if node.var in frozen else node
    if isinstance(node, _Unary):
        return dataclasses.replace(node, input=_freeze(node.input, frozen))
    if isinstance(node, NfaRuns):  # a run's states read the leaves of their variables
        return dataclasses.replace(node, states=tuple(_freeze(s, frozen) for s in node.states))
    if isinstance(node, DisjunctUnion):
        return dataclasses.replace(node, inputs=tuple(_freeze(i, frozen) for i in node.inputs))
    return dataclasses.replace(node, left=_freeze(node.left, frozen), right=_freeze(node.right, frozen))


def _under_negations(node, wrap):
    """``node`` with ``wrap`` applied below the chain of negations over whole matches at its top."""
    if isinstance(node, NegationFilter) and node.placement == "matches":
        return dataclasses.replace(node, input=_under_negations(node.input, wrap))
    return wrap(node)
