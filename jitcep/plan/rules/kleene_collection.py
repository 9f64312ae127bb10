"""Rule: one KSEQ operator (ZStream 4.4.5) per closure, over the matches of the single variables.

By default the operators are stacked in pattern order over the join tree's root: there
every single variable is bound, so each closure's range is fixed (between
the last bound variable before it and the first bound one after it, an
array variable counting by its last / first member once its list is made,
semantics section 6), and so is whether its OR branch was taken.  A closure
whose first member the joins bind (its anchor, where no single variable
would bind an event) extends it and drops the anchor from the match's
variables.  Their mode
is the ``kleene=`` option (sections 6.1, 6.2); under
``order="nondecreasing_ts"`` a list's members tied with a neighbour may lie on
its other side by position, so a list can stretch a count window past its
bound although each member fits alone (section 2): the lists' spans are
checked there (:func:`ties_stretch`).
Under ``kleene="maximal"`` a closure's lists are runs of its members, so list
conjuncts reading it only through aggregates are tested on the runs
(``runs``), without gathering the lists that fail.  A closure that a later
one must follow in every match (``SEQ(B+ b[], C+ c[])``) is bounded by that
one's candidates before its lists are made (``bound``): records with no
candidate in range are dropped, and the members end before the last
candidate, so no list is made that no C can follow.  Likewise a negation
over an AND span, ``AND(A a, B+ b[], C c, !D n)``, kills every list holding
a member that it kills alone (the span grows with the list): under
``kleene="all"`` such members are dropped before the lists are made
(``prune``).

A Kleene group gets a :class:`GroupCollect` at its place in pattern order,
whose body is the group's own join tree: scans of its variables joined left
deep in body order, each iteration-local conjunct on the lowest join
covering it (as :mod:`.join_tree` and :mod:`.predicate_placement` do for the
pattern).

Placement (Kolchinsky & Schuster section 4, "Kleene closure patterns": the
closure is an event type ``T'`` the plan places like any other, its operator
where ``T'`` went).  A lone closure (no other closure or group) with a SEQ
neighbour on both sides (an anchored one: its anchor, then one after it)
may instead be collected on the lowest join binding those neighbours' single
variables (:attr:`~jitcep.plan.logical.Closure.near`; in an OR branch, over
its OR unit's union or higher, never inside it) and every single variable its
conjuncts read (but those a conjunct may wait for: :mod:`.kleene_split` tests
it on the carried lists where they join): its range is fixed there as at the top (the members lie
strictly between the neighbours, inside the record's span, so the window
cuts no list differently, under ``kleene="maximal"`` too), and the joins
above carry each record's lists.  That holds under skip-till-any-match and
when no variable joined above may bind a member (each is ordered before /
after the closure, or reads other types: section 3; a variable that may bind
one joins below the collection; under ``nondecreasing_ts`` every variable
reading the closure's types does, an event tied with a neighbour lying in
the range: :func:`~jitcep.plan.rules.kleene_units.lowerable`).
Where a planner searched the join order on statistics, the closure was a
unit ``T'`` of its problem (:func:`~jitcep.plan.rules.kleene_units.closure_units`,
:func:`jitcep.plan.planner.cardinality.join_problem`) and the searched tree
placed it: its KleeneCollect goes over the join binding its sibling's
variables (``kleene_places``, from :mod:`.join_order`), lower or at the top,
``searched``.  Without statistics the closure stays on top; on a shape given
with statistics the rule prices both (:func:`jitcep.plan.planner.cost.plan_cost`
over :func:`~jitcep.plan.planner.cardinality.estimate_work`, ZStream's
Formula 1, as a negation's placement) and keeps the cheaper, ties on top:
lower drops the records without a list before the joins above (a rare
closure), on top the joins above do not multiply each record into its lists
(a frequent one).
"""

from __future__ import annotations

import dataclasses

from ...pattern import expr as E
from ...pattern.ast import CountWindow
from ..logical import Closure
from ..operators import AndJoin, GroupCollect, KleeneCollect, Scan, SeqJoin, Union
from ..planner.cardinality import estimate_work
from ..planner.cost import plan_cost
from .join_tree import join
from .kleene_split import collected, place_filters
from .kleene_units import lowerable
from .type_overlap import _overlap, sides_overlap


def ties_stretch(logical, options) -> bool:
    """Whether a closure's list may stretch its match past the window although each member fits alone
    (its lists' spans are then checked: ``KleeneCollect.span_check``).

    Under ``nondecreasing_ts`` a member tied in time with a neighbour may lie
    past it by position, which stretches a count window (semantics section 6)
    but not a time window: the member has the neighbour's time.  Each member
    fits the window with its record (its range lies between its neighbours or
    is cut by the window), and every member of a list with its first (the
    enumeration's test, :func:`~jitcep.kernels.kleene.subsequences`), so under
    a time window (or none) every list fits.  Kept with a Kleene group in the
    plan, whose iterations are records of their own (and under
    ``kleene_window="iteration"`` need not fit one another)."""
    return options.order == "nondecreasing_ts" and (isinstance(logical.window, CountWindow) or bool(logical.groups))


def add(plan, planning):
    logical, options = planning.logical, planning.options
    if not logical.closures and not logical.groups:  # nothing to collect: the plan as it is
        return plan
    collect = {**{K.var: K for K in logical.closures}, **{g.vars[0]: g for g in logical.groups}}
    listed = {K.var for K in logical.closures} | {v for g in logical.groups for v in g.vars}

    def operator(i, K):
        """The collection of closure / group ``K`` (``i``-th in pattern order) over its input: without the
        conjuncts reading a variable its input does not bind, which are tested higher up (kleene_split)."""
        if isinstance(K, Closure):
            def kleene(node):
                kept = collected(K, options.kleene, node.vars, logical.variables)
                return KleeneCollect(node, kept, options.kleene, ties_stretch(logical, options),
                                     options.kleene == "maximal" and aggregates_only(kept, listed),
                                     bounding(K, logical.kleene_order[i + 1:], logical.closures),
                                     prune=pruning(K, logical, options))
            return kleene
        return lambda node: GroupCollect(node, group_body(K),
                                         collected(K, options.kleene, node.vars, logical.variables),
                                         options.kleene_window == "iteration")
    made = [(v, operator(i, collect[v])) for i, v in enumerate(logical.kleene_order)]
    anchors = {K.anchor for K in logical.closures} | {v for g in logical.groups for v in g.anchor}
    variables = tuple(v for v in plan.variables if v not in anchors)
    if plan.kleene_places and planning.kleene is None:  # the join-order search placed the closures' T'
        places = {v: _binding(plan.root, frozenset(s)) for v, s in plan.kleene_places}
        at: dict = {}
        for v, make in made:  # in pattern order at each join, as on top
            node = places.get(v, plan.root)
            at.setdefault(id(node), []).append((make, "top" if node is plan.root else "lower", v in places))
        return _filtered(dataclasses.replace(plan, root=_collected(plan.root, at), variables=variables), planning)
    root = plan.root
    for _, make in made:
        root = make(root)
    top = dataclasses.replace(plan, root=root, variables=variables)
    target = lower_join(plan.root, planning)
    return top if target is None else _place(top, plan.root, target, made[0][1], planning)


def _filtered(plan, planning):
    """``plan`` with the conjuncts its collections left out tested on the carried lists higher up
    (:func:`~.kleene_split.place_filters`)."""
    closures = {**{K.var: K for K in planning.logical.closures}, **{g.vars[0]: g for g in planning.logical.groups}}
    return dataclasses.replace(plan, root=place_filters(plan.root, closures, planning.logical.variables))


def _collected(node, at):
    """The join tree ``node`` with the closures' collections ``at[id(join)]`` over each join: (``make``,
    the KleeneCollect over its input; its placement; whether the join-order search placed it)."""
    out = node if isinstance(node, Scan) else dataclasses.replace(node, left=_collected(node.left, at),
                                                                  right=_collected(node.right, at))
    for make, placement, searched in at.get(id(node), ()):
        out = dataclasses.replace(make(out), placement=placement, searched=searched)
    return out


def _binding(node, vars_: frozenset):
    """The node of the join tree ``node`` whose records bind exactly ``vars_``."""
    if frozenset(node.vars) == vars_:
        return node
    found = next((f for c in node.children if vars_ <= set(c.vars) and (f := _binding(c, vars_)) is not None), None)
    if found is None:  # the search admits only trees holding such a join (JoinProblem.admits_tree)
        raise AssertionError(f"no join of {node!r} binds exactly {sorted(vars_)}")
    return found


def _placed(top, tree, target, make, placement: str, planning, costs=()):
    """``top`` with its KleeneCollect (over ``tree``) made by ``make`` over ``target`` instead, as
    ``placement``, and the conjuncts it leaves out tested higher up."""
    root = _over(tree, target, lambda node: dataclasses.replace(make(node), placement=placement, costs=costs))
    return _filtered(dataclasses.replace(top, root=root), planning)


def lower_join(tree, planning):
    """The lowest join of the join tree ``tree`` where the pattern's closure (the only one) may be
    collected instead of over ``tree`` (module docstring), or None where it may not or that join is
    ``tree`` itself."""
    found = lowerable(planning)
    if len(planning.logical.closures) != 1 or planning.logical.groups or not found:
        return None
    [need] = found.values()
    node = tree
    # never inside an OR unit: its Union carries no lists (a closure in a branch is collected over it)
    while not isinstance(node, Union) and (inner := next((c for c in node.children if need <= set(c.vars)),
                                                          None)) is not None:
        node = inner
    if node is tree or not isinstance(node, (SeqJoin, AndJoin, Union)):
        return None
    return node


def _place(top, tree, target, make, planning):
    """``top`` (the closure's KleeneCollect over ``tree``, made by ``make``) or the plan collecting it on
    ``target`` instead: the placement asked for (``planning.kleene``), else the rule's (top) without
    statistics, else the cheaper of the two on them (ties: top)."""
    def placed(placement, costs=()):
        return _placed(top, tree, target if placement == "lower" else tree, make, placement, planning, costs)

    if planning.kleene is not None:
        return placed(planning.kleene)
    if planning.statistics is None:
        return top
    costs = tuple((k, plan_cost(p, estimate_work(p, planning.statistics, planning.span)))
                  for k, p in ((k, placed(k)) for k in ("top", "lower")))
    return placed("lower" if costs[1][1] < costs[0][1] else "top", costs)


def _over(node, target, make):
    """The join tree ``node`` with ``make(target)`` (a collection) over its subtree ``target``."""
    if node is target:
        return make(node)
    if isinstance(node, Scan):
        return node
    return dataclasses.replace(node, left=_over(node.left, target, make), right=_over(node.right, target, make))


def bounding(K: Closure, later, closures) -> tuple[Closure, ...]:
    """The closures collected after ``K`` (variables ``later``) that bound its range from above before
    their lists are made (:attr:`KleeneCollect.bound`): ordered after it by a SEQ, never empty
    (``min`` >= 1; an anchored one binds its first member already), in the same OR branch, so that every
    match of a record that takes ``K``'s branch holds a member of each, and ``K``'s members lie before it."""
    return tuple(L for L in closures if L.var in later and L.var in K.after and L.min >= 1
                 and L.anchor is None and L.scope == K.scope)


def pruning(K: Closure, logical, options) -> tuple:
    """The negations that kill every list of ``K`` holding a member they kill alone
    (:attr:`KleeneCollect.prune`), under ``kleene="all"``, where a list is any
    subsequence of the members (semantics section 6.1), so dropping such a member
    drops exactly the lists the negation would.

    A negation qualifies when its range (semantics section 7) only widens as
    the match does: it has an AND ancestor and at least one side open, so that
    side is bounded by the match's span, and no Kleene construct bounds a side
    (a closure's last member bounding it from below would narrow it as the list
    grows).  It has no condition (a condition reading the closure could spare
    a longer list), and its types are disjoint from every positive variable's
    and construct's, so no event of a match is ever one of its candidates.
    ``K`` lies outside any OR branch and is not anchored.
    """
    if options.kleene != "all" or K.scope or K.anchor is not None:
        return ()
    arrays = {C.var for C in logical.closures} | {v for g in logical.groups for v in g.vars}
    types = [*logical.variables.values(), *(C.types for C in logical.closures),
             *(t for g in logical.groups for t in g.types)]
    return tuple(n for n in logical.negations
                 if n.in_conj and not (n.before and n.after) and not (set(n.before) | set(n.after)) & arrays
                 and not (n.conds or n.list_conds or n.each)
                 and n.types is not None and not any(_overlap(t, n.types) for t in types))


def aggregates_only(K: Closure, lists) -> bool:
    """Whether ``K`` has list conjuncts and each reads ``K`` only through aggregates (``count(b)``,
    ``sum(b.x)`` ..., never ``b[k]`` / ``b[b.LEN]``) and no other list (names of ``lists``): then
    under ``kleene="maximal"`` they are tested on runs of members (ZStream's closure count, Figure 6),
    before the lists are gathered."""
    return bool(K.lists) and all(
        not any(isinstance(x, E.Attr) and x.var == K.var for x in E.walk(c))
        and not (E.variables(c) - {K.var}) & set(lists)
        for c in K.lists)


def group_body(group):
    """The join tree whose records are ``group``'s iterations (module docstring)."""
    types = dict(zip(group.vars, group.types))
    node = None
    for v, t, f in zip(group.vars, group.types, group.filters):
        scan = Scan(v, t, f)
        if node is None:
            node = scan
            continue
        node = join(group.body, node, scan)
        covered = set(node.vars)
        here = tuple(p for p in group.joins if E.variables(p) <= covered and not E.variables(p) <= set(node.left.vars))
        overlap = sides_overlap(types, node.left.vars, node.right.vars)
        node = dataclasses.replace(node, predicates=here, overlap=overlap)
        if isinstance(node, SeqJoin):
            node = dataclasses.replace(node, driver="smaller" if isinstance(node.right, Scan) else "right")
    return node
