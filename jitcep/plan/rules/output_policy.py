"""Rule: the output policy over whole matches, the plan's root (docs/semantics.md section 9).

Section 9 applies ``output=`` after strategies, negations and the match-level
constraints, to the whole match set: so it is the last operator, over every
other.  ``consume_types`` only says which events ``match_single`` and
``match_next`` consume; under ``"all"`` and ``"non_overlapping"`` it changes
nothing, so those plans do not carry it.
"""

from __future__ import annotations

import dataclasses

from ..operators import OutputPolicy


def add(plan, planning):
    options = planning.options
    if options.output == "all":
        return plan
    consume = options.consume_types if options.output in ("match_single", "match_next") else None
    return dataclasses.replace(plan, root=OutputPolicy(plan.root, options.output, consume))
