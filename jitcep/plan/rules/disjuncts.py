"""Rule: an OR planned as one unit or the pattern in DNF, one plan per alternative (Kolchinsky & Schuster 4).

Kolchinsky & Schuster, section 4 "nested patterns": a pattern whose OR sits
under a SEQ / AND is converted to DNF and each conjunctive alternative
planned separately (:mod:`jitcep.pattern.dnf`), the matches being the union
of theirs (:class:`~jitcep.plan.operators.DisjunctUnion`).  Each alternative
is a flat pattern its algorithm orders freely, while the unit plan
(:mod:`.join_tree`) unites an OR's branches before anything outside joins them
and joins the OR's inside in pattern order; but the alternatives each
scan and join the items outside the ORs again.  So when a planner chose the
plan on statistics, both forms are priced on the same statistics and the
cheaper kept (ties: the unit plan): under ``cost_model="zstream"`` with
ZStream's Formula 1 summed over the operators (:func:`~jitcep.plan.planner.cost.plan_cost`, as
:mod:`.negation_placement` prices), under the other models with Cost_tree over
the operators (the records every operator holds, Kolchinsky 3.2).

The DNF form is not tried (the unit plan stays, with a ``planner:`` note in
``explain`` saying why) past :data:`jitcep.config.DNF_MAX_ALTERNATIVES`
alternatives (their number grows as a product), under a selection strategy other than
skip-till-any-match (it selects among the whole pattern's matches, SASE+ 2,
not each alternative's), or when an alternative would be partitioned by
another key.  ``output=`` and ``contiguous=`` apply to the whole pattern's
matches: over the union, not in each alternative.

A pattern the unit plan cannot join at all, because some part of it may
bind nothing but closures that may all be empty (a ``T* v[]`` alone in a
nested OR branch, ``SEQ(B* b[], C* c[])``), is planned only in that way
(:func:`alternatives_plan`): its alternatives each bind an event
(:mod:`jitcep.pattern.nonempty`), and the union binds a closure an
alternative takes empty to the empty list.
"""

from __future__ import annotations

import dataclasses

from ... import config
from ..._memo import PerObject
from ...errors import UnsupportedPatternError
from ...pattern.dnf import alternatives, count, has_or
from ...pattern.nonempty import nonempty_alternatives
from ...pattern.normalize import normalize
from ...pattern.structure import single_vars
from ..logical import logical_plan
from ..operators import DisjunctUnion, PhysicalPlan
from ..planner.cost import plan_cost
from . import match_constraints, output_policy


def form_cost(plan, planning) -> float:
    """``plan``'s cost on the planning's statistics (module docstring: Formula 1 under "zstream",
    Cost_tree over the operators otherwise)."""
    work = planning.work(plan)
    if planning.options.cost_model == "zstream":
        return plan_cost(plan, work)
    return sum(rows for _, rows in work.values())


def choose(plan, planning, build, form=None):
    """``plan`` (the unit plan, every rule applied) or the pattern's DNF plan, whichever costs less;
    ``build(planning)``: the plan of an OR-free alternative, every rule applied.

    ``form``: None to choose as the module docstring says; "unit" or "dnf" to take that form whatever
    it costs (the DNF form of a pattern it does not apply to raises UnsupportedPatternError), priced
    when there are statistics."""
    logical, options = planning.logical, planning.options
    if form is None and (planning.shape is not None or planning.statistics is None or options.planner == "trivial"):
        return plan
    split, k = _ors(logical.pattern.body)
    why = ("no OR" if not split
           else f"{k} alternatives, over DNF_MAX_ALTERNATIVES={config.DNF_MAX_ALTERNATIVES}"
           if k > config.DNF_MAX_ALTERNATIVES
           else f"strategy {options.strategy}" if options.strategy != "skip_till_any_match" else None)
    dnf = _dnf(plan, planning, build, k) if why is None else why
    if isinstance(dnf, str):
        if form == "dnf":
            raise UnsupportedPatternError(f"the pattern cannot be planned in DNF: {dnf}")
        return plan if dnf == "no OR" else dataclasses.replace(
            plan, notes=plan.notes + (f"OR planned as one unit, not in DNF: {dnf}",))
    if planning.statistics is None:
        return dataclasses.replace(dnf if form == "dnf" else plan, form=form)
    costs = (("unit", form_cost(plan, planning)), ("dnf", form_cost(dnf, planning)))
    chosen = dnf if form == "dnf" or form is None and costs[1][1] < costs[0][1] else plan  # ties: the unit plan
    return dataclasses.replace(chosen, form="dnf" if chosen is dnf else "unit", form_costs=costs)


def _or_count(body) -> tuple[bool, int]:
    """Whether ``body`` has an OR to split (normalised: OR(P) is P, semantics 5), and its DNF alternatives."""
    body = normalize(body)
    return has_or(body), count(body)


_ors = PerObject(_or_count)  # body -> _or_count(body): asked on every plan chosen on statistics


def _dnf(plan, planning, build, k: int):
    """The pattern's DNF plan, or why there is none (module docstring)."""
    logical = planning.logical
    # output= and contiguous= apply to the union (module docstring); the alternatives share the search budget
    inner = dataclasses.replace(planning.options, output="all", contiguous=())
    budget = None if planning.budget is None else planning.budget // k
    subplans = []
    for alt in alternatives(logical.pattern):
        try:
            sub = logical_plan(alt)
        except UnsupportedPatternError as e:  # what the alternative alone would be refused for
            return f"an alternative is not supported ({e})"
        if sub.key != logical.key:
            return "an alternative has another [attr] key"
        subplans.append(build(dataclasses.replace(planning, logical=sub, options=inner, shape=None, budget=budget)))
    root = DisjunctUnion(tuple(p.root for p in subplans), plan.variables)
    dnf = dataclasses.replace(plan, root=root, notes=tuple(f"alternative {i}: {n}" for i, p in enumerate(subplans)
                                                            for n in p.notes))
    return output_policy.add(match_constraints.add(dnf, planning), planning)


def alternatives_plan(pattern, options, build, refusal: UnsupportedPatternError) -> PhysicalPlan:
    """The plan of ``pattern`` under ``options``, which the unit plan refuses (``refusal``) for a part that
    may bind nothing (module docstring): the union of its alternatives' plans, ``build(alternative,
    options)`` making each (every rule applied) from a :class:`~jitcep.pattern.nonempty.Alternative`.

    Under a selection strategy other than skip-till-any-match the union means the pattern too (section
    8): the pattern is linear, so its closures that may all be empty are Kleene states in one SEQ, and
    a run of its automaton takes its first event at one of them, having proceeded through the ones
    before it empty: from there on it is a run of the alternative where that closure is the first
    non-empty one (whose states before it are gone, and whose proceed conjuncts read their empty lists,
    as :func:`~jitcep.pattern.nonempty.on_empty` does).

    Raises ``refusal`` (with why) where the union would not mean the pattern: under ``kleene="maximal"``
    a closure takes every qualifying event, never "empty or at least one" by choice (section 6.2; no
    pattern reaches it: "maximal" needs a single variable in the top SEQ, which binds an event); past
    :data:`jitcep.config.DNF_MAX_ALTERNATIVES` alternatives.
    """
    from . import Planning  # the rules' package imports this module

    why = "kleene=\"maximal\"" if options.kleene == "maximal" else None
    alts = [] if why else nonempty_alternatives(pattern)
    if len(alts) > config.DNF_MAX_ALTERNATIVES:
        why = f"{len(alts)} alternatives (DNF_MAX_ALTERNATIVES={config.DNF_MAX_ALTERNATIVES})"
    if why:
        raise UnsupportedPatternError(f"{refusal}; it runs a pattern whose closures may all be empty where "
                                      f"nothing else binds as alternatives that each bind an event, but not "
                                      f"under {why}")
    inner = dataclasses.replace(options, output="all", contiguous=())
    plans = [build(a, inner) for a in alts]
    base = plans[0]  # every alternative keeps the [attr] tests (they name no variable): one key
    variables = single_vars(normalize(pattern.body))
    if len(plans) == 1:
        root = base.root
    else:
        root = DisjunctUnion(tuple(p.root for p in plans), variables, tuple(a.empty for a in alts),
                             tuple(p.constants for p in plans))
    notes = (f"planned as {len(plans)} alternatives that each bind an event (closures that may be empty)",
             *(f"alternative {i}: {n}" for i, p in enumerate(plans) for n in p.notes))
    plan = PhysicalPlan(pattern, root, variables, base.key, base.constants if len(plans) == 1 else (),
                        pattern.window, notes=notes)
    planning = Planning(None, options)
    return output_policy.add(match_constraints.add(plan, planning), planning)
