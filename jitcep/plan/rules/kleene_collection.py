"""Rule: the closure's KSEQ operator (ZStream 4.4.5) over the matches of the other variables.

Its mode is the ``kleene=`` option (semantics sections 6.1, 6.2); under
``order="nondecreasing_ts"`` a list's members tied with a neighbour may lie on
its other side by position, so a list can stretch the match past the window
although each member fits alone (section 2): the lists' spans are checked.
"""

from __future__ import annotations

import dataclasses

from ..operators import KleeneCollect


def add(plan, planning):
    K = planning.logical.closure
    if K is None:
        return plan
    node = KleeneCollect(plan.root, K, planning.options.kleene, planning.options.order == "nondecreasing_ts")
    return dataclasses.replace(plan, root=node)
