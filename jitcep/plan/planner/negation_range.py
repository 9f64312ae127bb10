"""The chance that no negated event falls in a negation's range (Kolchinsky & Schuster 4, "negation patterns").

A negation is a filter on the positive matches (or, placed below the root, on
the partial matches fixing its range: :mod:`jitcep.plan.rules.negation_placement`);
ZStream (Mei & Madden 2009, 4.4.2, Table 2) prices it from ``Pt``.  With the
negated events a Poisson process, the share of records it keeps is the mean
over the records of ``exp(-rate * len)``, the range's length varying over them
(:mod:`~jitcep.plan.planner.ranges`): :func:`none_in_range`, read by
:func:`~jitcep.plan.planner.cardinality.join_problem` (a negation's factor over
its anchor) and :func:`~jitcep.plan.planner.cardinality.estimate_work` (a
NegationFilter's rows).
"""

from __future__ import annotations

from .ranges import none_of, range_of


def none_in_range(rate: float, before, after, in_conj: bool, s: frozenset, W: float) -> float:
    """The chance that no event of a Poisson process of ``rate`` falls in the range of a negation (between
    its neighbours ``before`` / ``after`` among a record's variables ``s``; an AND-bounded side, ``in_conj``,
    ends at the record's first / last event, docs/semantics.md section 7) in a record of ``s``.

    The range is ``W x``, x ~ Beta(j, k - j) over the records (j of the k parts of a record's window,
    :func:`~jitcep.plan.planner.ranges.range_of`), so the chance is ``E[exp(-rate W x)]``
    (:func:`~jitcep.plan.planner.ranges.none_of`).  ``exp(-rate * E[len])`` is the same to first order
    in ``rate * len`` but, by Jensen's inequality, far below it once that is large: on 200,000 events of
    ``SEQ(A a, !N n, B b, C c) WITHIN 1500`` with N ten times as frequent (perf/bench_plans.py
    ``neg_frequent``) 1,570 of 179,645 (a, b) records survive, 0.87%; ``exp(-rate E[len])`` estimates
    2e-17 of them, gaps of mean ``W / 3`` taken as exponential ``(1 + rate W / 3)^-1`` 2.5%, this
    ``(1 - e^(-rate W)) / (rate W)`` 0.87%."""
    if not rate:
        return 1.0
    R = range_of(before, after, s, W, in_conj)
    return none_of(rate * R.W, R)
