"""A negation whose conditions are tested in the loop over its candidates (semantics section 7).

:func:`killed_where` runs a function generated per (pattern, negation) by
:mod:`jitcep.codegen.negation_where`: for each record of a match buffer, the candidates of its range
``[lo, hi)`` of the negated leaf (:func:`jitcep.kernels.negation.negation_ranges`) in order, the
record's own events left out (as :func:`~jitcep.kernels.negation.candidate_rows` leaves them), each
tested on the negation's conditions as it is found; the record dies at the first one passing them all.
The records killed are those :mod:`jitcep.execute.negation`'s rounds of candidate pairs kill.

The generated function's statuses: 0 done; -2 a range outside the candidates; -3 a condition's event
outside the table.
"""

from __future__ import annotations

import numpy as np

from .checks import check_lengths, fail


def killed_where(fn, pos, lo, hi, cand, bound: tuple) -> np.ndarray:
    """Which records (rows of ``pos``) some candidate of their range ``[lo[r], hi[r])`` of ``cand`` (event
    positions), not one of their own events, kills: passes every condition generated into ``fn``
    (:func:`jitcep.codegen.negation_where.negation_where`), ``bound`` its columns
    (:meth:`jitcep.codegen.predicates.PredicateSet.bind` over the event table).

    Invariants (KernelInputError otherwise): ``pos``, ``lo`` and ``hi`` have one entry per record (checked
    here); every range lies in ``cand`` and every position a condition reads in the table (checked by
    the function as it reads them)."""
    check_lengths("killed_where", len(lo), pos=pos, hi=hi)
    killed = np.zeros(len(lo), dtype=np.bool_)
    status = fn(pos, lo, hi, cand, killed, *bound)
    if status == -2:
        raise fail("killed_where", f"a range is outside the {len(cand)} candidates")
    if status == -3:
        raise fail("killed_where", "a condition's event lies outside the event table")
    return killed
