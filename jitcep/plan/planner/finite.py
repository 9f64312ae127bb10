"""Estimates kept finite: a record count or cost saturates at :data:`MAX_ESTIMATE` (docs/planning.md, "Extreme statistics").

A user's statistics may give rates of 1e30 events a unit or more, or selectivities near 0; over a long
window the products of such numbers overflow to inf, and inf * 0 or inf - inf is NaN, which compares
false with everything: a search or rule choosing on it would choose by the order it asks (and explain
would print ``inf`` or ``nan``).  The estimates saturate instead:

- a join problem's cardinalities (:func:`cards`) are capped where the product of them all would pass
  :data:`MAX_ESTIMATE`, the largest first to one common value, so that every set's PM (Kolchinsky &
  Schuster 3) and every product of two disjoint sets' stays a float; below that they are untouched;
- a record count or cost that is not a float at most :data:`MAX_ESTIMATE` (:func:`saturated`) is 0
  when one of its factors is 0 (a zero rate or selectivity: no record, whatever the others), else
  :data:`MAX_ESTIMATE`.

Plans among which only saturated estimates differ are priced alike; the matches never depend on the plan.
"""

from __future__ import annotations

import math

MAX_ESTIMATE = 1e150
"""The largest estimate: a product of two (a join's pairs) is still a float (1e300 < 1.8e308)."""


def saturated(value: float, *factors: float) -> float:
    """``value`` (the product of ``factors``, as its caller computed it) when it is a float at most
    :data:`MAX_ESTIMATE`; else 0 when one of ``factors`` is 0, else :data:`MAX_ESTIMATE` (an overflow,
    or NaN without a zero factor: an unknown huge number)."""
    if value <= MAX_ESTIMATE:  # False for NaN
        return value
    if any(f == 0.0 for f in factors):
        return 0.0
    return MAX_ESTIMATE


def cards(card: tuple[float, ...]) -> tuple[float, ...]:
    """``card`` (a join problem's records per window, each >= 0), unchanged when the product of their
    ``max(1, c)`` is at most :data:`MAX_ESTIMATE`; else each capped at one value C, the largest that
    keeps that product at :data:`MAX_ESTIMATE` (the largest cardinalities lose most: their order among
    the others is kept, ties among the capped).  A NaN cardinality counts as a capped one."""
    logs = [math.inf if not c <= math.inf else math.log(c) if c > 1.0 else 0.0 for c in card]
    budget = math.log(MAX_ESTIMATE)
    if sum(logs) <= budget:
        return card
    # water-filling: cap the k largest at C = (budget - the rest's logs) / k, for the first k where C is at
    # least the largest uncapped one
    desc = sorted(logs, reverse=True)
    for k in range(1, len(desc) + 1):
        cap = (budget - sum(desc[k:])) / k
        if k == len(desc) or cap >= desc[k]:
            break
    C = math.exp(cap)
    return tuple(C if not c <= C else c for c in card)
