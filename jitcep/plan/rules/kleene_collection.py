"""Rule: one KSEQ operator (ZStream 4.4.5) per closure, over the matches of the single variables.

The operators are stacked in pattern order over the join tree's root: there
every single variable is bound, so each closure's range is fixed (between
the last bound variable before it and the first bound one after it, an
array variable counting by its last / first member once its list is made,
semantics section 6), and so is whether its OR branch was taken.  A closure
whose first member the joins bind (its anchor, where no single variable
would bind an event) extends it and drops the anchor from the match's
variables.  Their mode
is the ``kleene=`` option (sections 6.1, 6.2); under
``order="nondecreasing_ts"`` a list's members tied with a neighbour may lie on
its other side by position, so a list can stretch the match past the window
although each member fits alone (section 2): the lists' spans are checked.
"""

from __future__ import annotations

import dataclasses

from ..operators import KleeneCollect


def add(plan, planning):
    root = plan.root
    for K in planning.logical.closures:
        root = KleeneCollect(root, K, planning.options.kleene, planning.options.order == "nondecreasing_ts")
    anchors = {K.anchor for K in planning.logical.closures}
    return dataclasses.replace(plan, root=root, variables=tuple(v for v in plan.variables if v not in anchors))
