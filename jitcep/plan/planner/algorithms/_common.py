"""What the plan-generation algorithms share: pricing trees under a cost model, and planning budgets.

Pricing.  A cost model is any function ``(problem, tree) -> float``.  The search
algorithms price many candidate trees that differ from known ones by one join,
so :class:`Costing` prices a join ``(left, right)`` of two priced subplans:

- when the model is a sum over the tree's nodes (Kolchinsky & Schuster's
  Cost_tree and Cost_ord, section 3; ZStream's operator costs, "adding up the
  costs of all the operators in the tree", ZStream 5.1), it may say so by
  carrying a ``node_cost(problem, pm, left, right) -> float`` attribute: the
  cost the root of ``(left, right)`` adds, ``left`` and ``right`` being the
  bitmasks of the units below each child (bit i: unit i) and ``pm(mask)`` the
  memoised PM of a set of units.  A join then costs
  ``cost(left) + cost(right) + node_cost(...)``: O(1) instead of a walk of the
  whole candidate, which is what puts ZStream's DP at 20 units under 10 ms;
- otherwise the model is called on the whole candidate tree (a black box).

Cost_tree's node term is PM(left | right) (section 3.2), ZStream's its Table 2
operator cost (:func:`..cost.zstream_node`); they are registered here
(:data:`NODE_COSTS`) rather than assumed, so a model without a node term is
never priced as if it were Cost_tree.

Exactness.  The dynamic programs keep one best subplan per set of units, which
finds the optimum when the model has optimal substructure (ZStream Theorem
5.1): true of every model with a node term, since the term sees the children's
units and not their shapes; for other models they are heuristics that still
return a valid tree.

Budgets.  ``budget`` is seconds of planning.  An exact algorithm first
estimates its time from the number of units (its ``estimate(n)``: priced joins
times the seconds per join measured with the intermediate model, rounded up;
perf/README.md) and does not start unless twice that fits (:data:`HEADROOM`);
once started
it checks a :class:`Deadline` (a slower model, a busy machine) and past it
returns GREEDY's plan (Kolchinsky 6.1) instead — so running out of time never
yields a plan worse than greedy's.  DuckDB's join-order optimizer bounds its
DP the same way.  Each such fallback is noted (:func:`noting` collects the
notes of the searches it surrounds; ``explain`` shows them), so a plan that is
not the optimum its algorithm promises says so.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

from ..cost import CostModel, intermediate, zstream, zstream_node
from ..problem import JoinProblem, Tree, left_deep


# Seconds an exact algorithm (or iterative improvement) may take when called without a budget: it was
# asked for the optimum, so generous, yet bounded so a 22-unit pattern cannot stall compile for hours
# (Kolchinsky 6.3: DP-B took over 50 hours at 22 units).
DEFAULT_BUDGET = 2.0


def _cost_tree_node(problem: JoinProblem, pm, left: int, right: int) -> float:
    """Cost_tree's term for an internal node: its partial matches, PM(left | right) (section 3.2)."""
    return pm(left | right)


# Node terms of the models in ``..cost``, which carry none themselves (the cost module owns the models,
# this package owns how they are searched); a model's own ``node_cost`` attribute takes precedence.
NODE_COSTS = ((intermediate, _cost_tree_node), (zstream, zstream_node))


# How many times slower than Cost_tree's a registered node term prices a join (perf/README.md, "Plan
# quality": ZStream's, 2.6-3.8x at 8-10 units, rounded up); the searches' time estimates scale by it.
STEP_FACTORS = ((zstream, 4.0),)


def step_factor(cost: CostModel) -> float:
    """The factor by which a search's time estimate (measured with Cost_tree) grows under ``cost``."""
    return next((f for model, f in STEP_FACTORS if model is cost), 1.0)


def node_cost_of(cost: CostModel):
    """The per-node term of ``cost`` if it declares one (see the module docstring), else None."""
    declared = getattr(cost, "node_cost", None)
    if declared is not None:
        return declared
    # by identity: a model that merely compares equal to a registered one is not known to decompose
    return next((term for model, term in NODE_COSTS if model is cost), None)


class Plan(NamedTuple):
    """A priced subplan: its tree, the bitmask of its units, its cost under the model."""

    tree: Tree
    mask: int
    cost: float


class Costing:
    """Prices trees and joins of subplans for one problem and one cost model."""

    def __init__(self, problem: JoinProblem, cost: CostModel):
        if problem.n == 0:
            raise ValueError("a plan needs at least one unit")
        self.problem = problem
        self.cost = cost
        self._node_cost = node_cost_of(cost)
        # PM by bitmask; built one unit at a time, PM(S | {i}) = PM(S) * card[i] * prod sel[i][j], j in S
        self._pm = {0: 1.0}
        self.leaves = tuple(Plan(i, 1 << i, cost(problem, i)) for i in range(problem.n))

    def pm(self, mask: int) -> float:
        """PM of the units in ``mask`` (section 3), memoised."""
        out = self._pm.get(mask)
        if out is None:
            i = mask.bit_length() - 1
            rest = mask ^ (1 << i)
            out = self.pm(rest) * self.problem.card[i]
            row = self.problem.sel[i]
            for j in members(rest):
                out *= row[j]
            self._pm[mask] = out
        return out

    def join_cost(self, left: Plan, right: Plan) -> float:
        """The cost of the tree ``(left.tree, right.tree)``."""
        if self._node_cost is None:
            return self.cost(self.problem, (left.tree, right.tree))
        return left.cost + right.cost + self._node_cost(self.problem, self.pm, left.mask, right.mask)

    def join(self, left: Plan, right: Plan, cost: float | None = None) -> Plan:
        """The priced plan ``(left, right)``; ``cost`` when the caller already priced it."""
        if cost is None:
            cost = self.join_cost(left, right)
        return Plan((left.tree, right.tree), left.mask | right.mask, cost)


def members(mask: int):
    """The unit indices in ``mask``, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class OverBudget(Exception):
    """Raised inside an exact search when its deadline has passed."""


class Deadline:
    """A planning deadline ``budget`` seconds from now; :meth:`check` raises :class:`OverBudget` past it."""

    def __init__(self, budget: float):
        self.at = time.perf_counter() + budget

    def left(self) -> float:
        """Seconds until the deadline (negative past it)."""
        return self.at - time.perf_counter()

    def passed(self) -> bool:
        return self.left() < 0

    def check(self) -> None:
        if self.passed():
            raise OverBudget


# A search starts only when twice its estimate fits in the time left: the estimates are medians on a
# shared machine, and a search abandoned at its deadline makes the plan depend on the machine's load
# (measured: with no headroom, DP-LD at 12 units under a 50 ms budget was cut on a third of the problems).
HEADROOM = 2.0


def affordable(seconds: float, left: float) -> bool:
    """Whether a search estimated at ``seconds`` should start with ``left`` seconds to go."""
    return seconds * HEADROOM <= left


_NOTES: ContextVar[list | None] = ContextVar("planning_notes", default=None)


@contextmanager
def noting():
    """Collect, in the list it yields, a note for every search run inside that did not finish: an exact
    algorithm past its budget, what it returned instead and why."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note(text: str) -> None:
    """Record ``text`` for the innermost :func:`noting` (nothing outside one)."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(text)


def within_budget(search, seconds: float, deadline: Deadline, fallback, fell_back: str = "a search fell back"):
    """``search(deadline)`` if its estimated ``seconds`` are :func:`affordable` before ``deadline`` and it
    finishes by then, else ``fallback()``, noting ``fell_back`` with the reason (:func:`note`)."""
    left = deadline.left()
    if affordable(seconds, left):
        try:
            return search(deadline)
        except OverBudget:
            note(f"{fell_back}: past its planning deadline (estimated {seconds * 1e3:.3g} ms)")
            return fallback()
    note(f"{fell_back}: estimated {seconds * 1e3:.3g} ms, twice that over the {max(left, 0) * 1e3:.3g} ms "
         f"of budget left")
    return fallback()


def greedy_order(costing: Costing) -> list[int]:
    """GREEDY's order (:mod:`.greedy`; the fallback of the exact searches); ties go to the lower index."""
    rest = list(range(costing.problem.n))
    first = min(rest, key=lambda i: costing.leaves[i].cost)
    rest.remove(first)
    plan, out = costing.leaves[first], [first]
    while rest:
        priced = [(costing.join_cost(plan, costing.leaves[i]), i) for i in rest]
        cost, best = min(priced)
        plan = costing.join(plan, costing.leaves[best], cost)
        out.append(best)
        rest.remove(best)
    return out


def exact_or_greedy(search, seconds: float, problem: JoinProblem, cost: CostModel, budget: float | None,
                    name: str) -> Tree:
    """``search(costing, deadline) -> Tree`` if it can finish within ``budget`` seconds (default
    :data:`DEFAULT_BUDGET`), else GREEDY's plan (see :func:`within_budget`); ``name``: the algorithm's,
    for the note."""

    deadline = Deadline(DEFAULT_BUDGET if budget is None else budget)
    costing = Costing(problem, cost)
    return within_budget(lambda d: search(costing, d), seconds * step_factor(cost), deadline,
                         lambda: left_deep(greedy_order(costing)), f"{name} fell back to greedy's plan")
