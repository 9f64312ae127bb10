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

Budgets.  Planning is bounded by counted work, never by the clock, so the
plan never depends on how busy the machine is.  A budget is a number of
*steps* (``steps=``; :data:`jitcep.config.PLAN_STEP_NS` nanoseconds each, a
virtual clock calibrated once on the development machine).  A search charges
its :class:`Clock` for every join it prices, ``Costing.steps_per_join`` steps
each: 1 under Cost_tree's node term, more under a slower node term
(:data:`STEP_FACTORS`), and, for a model priced on whole trees, a number that
grows with the tree (:func:`black_box_steps`).  The exact algorithms know
their count in advance (their ``joins(n)``: priced joins by the size of the
joined set) and do not start unless it fits in the steps left; iterative
improvement charges move by move and stops when the next move would not fit.
Past its budget an exact algorithm returns GREEDY's plan (Kolchinsky 6.1)
instead, so running out of budget never yields a plan worse than greedy's;
DuckDB's join-order optimizer bounds its DP the same way.  Each such fallback
is noted (:func:`noting` collects the notes of the searches it surrounds;
``explain`` shows them), so a plan that is not the optimum its algorithm
promises says so.
"""

from __future__ import annotations

import math
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from typing import NamedTuple

from .... import config
from ....kernels import join_search
from ..cardinality import extended
from ..cost import K_PREDICATE, P_OUTPUT, CostModel, intermediate, order, zstream, zstream_node
from ..order_share import FACTORIALS
from ..problem import JoinProblem, Tree, left_deep


def _cost_tree_node(problem: JoinProblem, pm, left: int, right: int) -> float:
    """Cost_tree's term for an internal node: its partial matches, PM(left | right) (section 3.2)."""
    return pm(left | right)


def _cost_ord_node(problem: JoinProblem, pm, left: int, right: int) -> float:
    """Cost_ord's term for appending the unit ``right`` to the order ``left`` (section 3.1): the new
    prefix's partial matches, less the unit's own, which its leaf was priced at (an NFA holds single events
    as partial matches only at its first state).  Only order-based (left-deep) plans have one."""
    if right & (right - 1):
        raise ValueError("Cost_ord prices order-based (left-deep) plans: a join's right input is one unit")
    return pm(left | right) - pm(right)


# Node terms of the models in ``..cost``, which carry none themselves (the cost module owns the models,
# this package owns how they are searched); a model's own ``node_cost`` attribute takes precedence.
NODE_COSTS = ((intermediate, _cost_tree_node), (order, _cost_ord_node), (zstream, zstream_node))


# The kernels' code for each registered node term (kernels/join_search.py prices these in compiled loops)
KERNEL_TERMS = ((_cost_tree_node, join_search.COST_TREE), (_cost_ord_node, join_search.COST_ORD),
                (zstream_node, join_search.ZSTREAM))


# Steps a join priced by a registered node term is charged, when slower than Cost_tree's (one step):
# ZStream's, 2.6-3.8x Cost_tree's time per join at 8-10 units (perf/notes/plan_quality.md, "Plan quality"), rounded up.
STEP_FACTORS = ((zstream, 4),)


def step_factor(cost: CostModel) -> int:
    """Steps one join priced by ``cost``'s node term is charged (1: Cost_tree's)."""
    return next((f for model, f in STEP_FACTORS if model is cost), 1)


def black_box_steps(k: int) -> int:
    """Steps a model without a node term is charged for pricing a tree of ``k`` units: the named ones
    (Cost_tree, latency, the strategies' models, ZStream's called whole) walk the tree and price every
    node's set, about ``(2/3) k^2`` node-term joins' time (measured per call at 4, 8, 12 and 16 units
    against DP-B's time per join; perf/notes/planning_time.md, "Budgets in counted steps")."""
    return max(1, 2 * k * k // 3)


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
        factor = step_factor(cost)
        # steps charged per priced join by the size of the joined set (index k: k units)
        self.steps_per_join = tuple(factor if self._node_cost is not None else black_box_steps(k)
                                    for k in range(problem.n + 1))
        # PM by bitmask: the pairwise product built one unit at a time, raw(S | {i}) = raw(S) * card[i] *
        # prod sel[i][j], j in S, then times the order's share of the set (sel without the order then)
        masks = getattr(problem, "masks", None)
        self._sel = problem.sel if masks is None else masks.sel
        self._share = None if masks is None else masks.share
        # the share a semi-join reduction keeps of a set's records (cardinality.extended), where planned
        self._extends = getattr(problem, "extends", ()) if masks is not None else ()
        self._pm, self._raw = {}, {0: 1.0}
        self._closures = bool(problem.closures)
        self.leaves = tuple(Plan(i, 1 << i, self._admitted(cost(problem, i))) for i in range(problem.n))

    compiled = True
    """Whether the searches may run their loops compiled (:attr:`arrays`); the Python loops are the
    kernels' twins, which tests run by setting this False."""

    @cached_property
    def arrays(self) -> join_search.SearchArrays | None:
        """The problem as :mod:`jitcep.kernels.join_search` reads it, when a kernel prices its joins exactly
        as :meth:`join_cost` does: a registered node term (by identity: a model's own ``node_cost`` may be
        one), no closure unit (admissibility), at most ``join_search.MAX_UNITS`` units, and under ZStream's
        term a problem with memoised set functions (``masks``: its order series-parallel over whole units);
        else None (and the searches run in Python)."""
        return self._search_arrays() if self.compiled else None

    def _search_arrays(self) -> join_search.SearchArrays | None:
        p = self.problem
        model = next((code for term, code in KERNEL_TERMS if term is self._node_cost), None)
        if model is None or p.closures or p.n > join_search.MAX_UNITS:
            return None
        n = p.n
        masks = getattr(p, "masks", None)
        if masks is None and model == join_search.ZSTREAM:  # Pt and n pair by pair, in Python
            return None
        sel, blocks = (p.sel, ()) if masks is None else (masks.sel, masks.blocks)
        count = [[0] * n] * n if masks is None else p.predicates
        after = [0] * n if masks is None else [masks.all_after(1 << i) for i in range(n)]
        return join_search.SearchArrays(p.card, sel, blocks, FACTORIALS[:n + 1], count, after,
                                        [leaf.cost for leaf in self.leaves], model, K_PREDICATE, P_OUTPUT,
                                        self._extends)

    def pm(self, mask: int) -> float:
        """PM of the units in ``mask`` (section 3), memoised: the pairwise product, times the order's share of
        the set where the problem has one (:attr:`jitcep.plan.planner.cardinality.EstimatedProblem.masks`),
        times the share of its records a semi-join reduction keeps where one may be planned
        (:func:`jitcep.plan.planner.cardinality.extended`)."""
        out = self._pm.get(mask)
        if out is None:
            out = self._pairwise(mask) * (self._share(mask) if self._share is not None else 1.0)
            if self._extends:
                out *= extended(self._extends, mask)
            self._pm[mask] = out
        return out

    def _pairwise(self, mask: int) -> float:
        out = self._raw.get(mask)
        if out is None:
            i = mask.bit_length() - 1
            rest = mask ^ (1 << i)
            out = self._pairwise(rest) * self.problem.card[i]
            row = self._sel[i]
            for j in members(rest):
                out *= row[j]
            self._raw[mask] = out
        return out

    def steps(self, joins: dict[int, int]) -> int:
        """Steps charged for pricing ``joins`` (joined set's size -> number of joins priced)."""
        return sum(count * self.steps_per_join[k] for k, count in joins.items())

    def join_cost(self, left: Plan, right: Plan) -> float:
        """The cost of the tree ``(left.tree, right.tree)``; infinite when the problem does not admit the
        join (a closure unit joined before its ``need``, :meth:`JoinProblem.admits`), so that no search
        keeps it while an admitted plan exists (one always does: ``need`` joined, then the closure).  A
        join over an inadmissible subplan is infinite too (a model priced on whole trees would not know)."""
        if self._closures and (not self.problem.admits(left.mask | right.mask)
                               or left.cost == math.inf or right.cost == math.inf):
            return math.inf
        if self._node_cost is None:
            return self._admitted(self.cost(self.problem, (left.tree, right.tree)))
        return self._admitted(left.cost + right.cost + self._node_cost(self.problem, self.pm, left.mask, right.mask))

    def _admitted(self, cost: float) -> float:
        """``cost`` of an admitted plan, at most the largest float where the problem has closure units:
        statistics large enough make PMs overflow to inf (or inf * 0 to nan), and an admitted plan priced
        so would tie with the refused joins, so that a search could keep one of those."""
        return cost if not self._closures or cost <= sys.float_info.max else sys.float_info.max

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
    """Raised by :meth:`Clock.charge` when a search's next work does not fit in its budget."""


class Clock:
    """A planning budget of ``steps`` (see the module docstring): the work charged so far and what is
    left.  Counted, not timed: the same search on the same problem stops at the same point on any
    machine under any load."""

    def __init__(self, steps: int | None = None):
        self.budget = config.PLAN_DEFAULT_STEPS if steps is None else int(steps)
        self.spent = 0

    def left(self) -> int:
        return self.budget - self.spent

    def charge(self, steps: int) -> None:
        """Spend ``steps``, or raise :class:`OverBudget` (spending nothing) when they do not fit."""
        if steps > self.budget - self.spent:
            raise OverBudget
        self.spent += steps


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


def within_budget(search, steps: int, clock: Clock, fallback, fell_back: str = "a search fell back"):
    """``search(clock)`` if its ``steps`` fit in what is left of ``clock``, else ``fallback()``, noting
    ``fell_back`` with the reason (:func:`note`).  ``steps`` is the search's exact count, so a search that
    starts finishes; should it not (a caller's count too low), it still stops at the budget and falls back."""
    left = clock.left()
    if steps <= left:
        try:
            return search(clock)
        except OverBudget:
            note(f"{fell_back}: stopped at its planning budget of {clock.budget:,} steps")
            return fallback()
    note(f"{fell_back}: {steps:,} steps, over the {left:,} left of its planning budget")
    return fallback()


def compiled_search(costing: Costing, kernel, joins: dict[int, int], clock: Clock | None, *args):
    """``kernel(costing.arrays, *args)``, a search of :mod:`jitcep.kernels.join_search`, charged its
    ``joins`` once it ran (``OverBudget``, spending nothing, when they do not fit in ``clock``): its result
    without the NaN flag, or None where it does not run (no arrays, or the kernel declines the problem) or
    priced a join NaN; the caller then runs its Python loop, the kernel's twin."""
    if costing.arrays is None:
        return None
    steps = costing.steps(joins)
    if clock is not None and steps > clock.left():
        raise OverBudget
    got = kernel(costing.arrays, *args)
    if got is None or got[2]:
        return None
    if clock is not None:
        clock.charge(steps)
    return got[0], got[1]


def greedy_order(costing: Costing) -> list[int]:
    """GREEDY's order (:mod:`.greedy`; the fallback of the exact searches); ties go to the lower index."""
    rest = list(range(costing.problem.n))
    # a closure unit first would make every next join inadmissible (infinite)
    closures = {c.unit for c in costing.problem.closures}
    first = min((i for i in rest if i not in closures), key=lambda i: costing.leaves[i].cost)
    if (got := compiled_search(costing, join_search.greedy, {}, None, first)) is not None:
        return got[0].tolist()
    rest.remove(first)
    plan, out = costing.leaves[first], [first]
    while rest:
        priced = [(costing.join_cost(plan, costing.leaves[i]), i) for i in rest]
        cost, best = min(priced)
        plan = costing.join(plan, costing.leaves[best], cost)
        out.append(best)
        rest.remove(best)
    return out


def on_costing(planned):
    """The algorithm ``plan(problem, cost, *, seed=0, steps=None)`` (the signature of every algorithm,
    :mod:`jitcep.plan.planner.algorithms`) of the search ``planned(costing, steps)``, which prices with a
    :class:`Costing` of the problem and model made here; ``auto`` calls ``planned`` with one it made already
    (one for its attempt and its fallback).  Its docstring is ``planned``'s."""
    def plan(problem: JoinProblem, cost: CostModel, *, seed: int = 0, steps: int | None = None) -> Tree:
        return planned(Costing(problem, cost), steps)
    plan.__module__, plan.__doc__ = planned.__module__, planned.__doc__
    return plan


def exact_or_greedy(search, joins: dict[int, int], costing: Costing, steps: int | None, name: str) -> Tree:
    """``search(costing, clock) -> Tree`` if the ``joins`` it prices fit in ``steps`` (default
    :data:`jitcep.config.PLAN_DEFAULT_STEPS`), else GREEDY's plan (see :func:`within_budget`); ``name``:
    the algorithm's, for the note."""
    return within_budget(lambda c: search(costing, c), costing.steps(joins), Clock(steps),
                         lambda: left_deep(greedy_order(costing)), f"{name} fell back to greedy's plan")
