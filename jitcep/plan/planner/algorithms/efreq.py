"""EFREQ: units by ascending event frequency, left-deep (Kolchinsky & Schuster 2018, 6.1).

"The events are processed by the ascending order of their arrival
frequencies" — the plan of PB-CED and the Lazy NFA, which waits for the rarest
event first.  Frequency is ``card`` (W * r_i, section 3.1); the cost model and
the selectivities are not read, which is the method's known weakness (it is
the baseline Kolchinsky's Figure 7 normalises by).
"""

from __future__ import annotations

from ..problem import JoinProblem, Tree, left_deep


def plan(problem: JoinProblem, cost, *, seed: int = 0, steps: int | None = None) -> Tree:
    """The left-deep tree over units by ascending ``card``, ties by index (a closure unit right after its
    ``need`` when it comes before it: :meth:`JoinProblem.admissible_order`)."""
    return left_deep(problem.admissible_order(sorted(range(problem.n), key=lambda i: (problem.card[i], i))))
