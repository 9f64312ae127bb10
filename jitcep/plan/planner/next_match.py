"""The partial matches per window of NFA^b runs under a selection strategy other than skip-till-any-match.

Kolchinsky & Schuster (2018, section 5.2) price the runs of an NFA^b (SASE+'s
automaton, :class:`~jitcep.plan.operators.NfaRuns`) by ``m[k]``, the partial
matches of its first k states per window: their matches are ``m[n]`` and their
work ``sum(m[k])`` (``Cost_next_ord``), scaled from a window to the table by
:func:`~jitcep.plan.planner.cardinality.estimate_work` and ordered by
:func:`jitcep.plan.planner.cost.strategy_cost`.
"""

from __future__ import annotations

import math


def next_match_partials(cards, sels, contiguity: float | None = None) -> list[float]:
    """The partial matches of size k = 1..n in one window of NFA^b runs over states in their order
    (Kolchinsky & Schuster 5.2), ``cards[i] = W * r_i``, ``sels[i]`` the selectivity of the conjuncts
    state i's edge tests.

    Skip-till-next-match (``contiguity`` None): the paper's ``m[k] = min(card_1..card_k) *
    prod(sels_1..sels_k)`` -- a partial match is extended by at most one event, so the rarest state
    bounds them.  Strict / partition contiguity: the paper adds a positional condition between
    neighbours, of selectivity ``contiguity`` (the chance that a given event is the next one); a run
    is then extended by the next event or not at all, ``m[k] = m[k-1] * card_k * contiguity * sels_k``.
    (The next-match formula with the condition as one more selectivity, ``min(card) * prod(sels) *
    contiguity^(k-1)``, drops a factor ``card`` per step: on 2 * 10^4 events of four uniform types,
    ``SEQ(A a, B b, C c) WHERE a.x < c.x WITHIN 10`` under strict contiguity has 155 matches, this
    estimates 286 with the pattern's own events for ``contiguity``, 164 with all of them, that one 42.)
    A SEQ's order is no factor: a run takes a later event by construction.
    """
    out: list[float] = []
    low, kept = math.inf, 1.0
    for k, (card, s) in enumerate(zip(cards, sels)):
        kept *= s
        if contiguity is None:
            low = min(low, card)
            out.append(low * kept)
        else:
            out.append(card * s if not k else out[-1] * card * contiguity * s)
    return out
