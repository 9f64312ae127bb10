"""Which Kleene closures may be collected below the root of a join tree, and so become units of the join problem.

A closure whose range its nearest SEQ neighbours fix may be collected on the
lowest join binding them and every variable its conjuncts read, but those
only conjuncts tested on its carried lists read (:mod:`.kleene_split`)
(:mod:`.kleene_collection` places it there); Kolchinsky & Schuster
(section 4, "Kleene closure patterns") plan such a closure as an event type
``T'`` of the join problem, placed like any other unit
(:func:`jitcep.plan.planner.cardinality.join_problem`).  Kept apart from the
collection rule so that the join-order rule, which searches with the units,
does not import the rule that builds on its trees.
"""

from __future__ import annotations

from ...pattern import expr as E
from ...pattern.ast import CountWindow
from ..logical import Closure, Group
from .kleene_split import collected, split_off, splittable
from .type_overlap import _overlap


def lowerable(planning) -> dict:
    """closure variable -> ``need`` for each closure that may be collected below the root of a join tree
    (module docstring): on any join binding the single variables ``need`` -- its nearest SEQ neighbours',
    those its conjuncts read (but those only a conjunct :func:`~.kleene_split.splittable` reads: it is
    tested on the lists where they join), and those that may bind one of its members (sharing a type,
    neither ordered before nor after it, or any under ``order="nondecreasing_ts"``, where an event tied
    with a neighbour lies in the range and may be a variable ordered beyond that neighbour too: joined
    above the collection they would not be told apart from its members, section 3).

    Under ``nondecreasing_ts`` before() is ``ts <= ts``, which is transitive, so the nearest neighbours
    still fix the range: an event after the one before and before the one after is after every
    variable the SEQ orders before the closure and before every one after it, as at the top.

    With several closures, each is one whose conjuncts read no other closure (it would be collected
    before the list it reads), and only when every two closures are apart: a single variable lies
    between them in their SEQ (so neither bounds the other's range), or no SEQ orders them and they
    read no common type (so which one is collected first never decides which binds an event); under
    ``nondecreasing_ts`` only closures that read no common type (an event tied with the variable between
    them lies in both ranges).  Or adjacent: one right after the other in their SEQ, no single variable
    between (``SEQ(A a, B+ b[], E+ e[], C c)``).  Collected in pattern order, the first's range lies
    between its single neighbours (a, c: the second is not collected yet), the second's after the
    first's last member (a where that list is empty) and before c, and its members leave out the
    first's (section 3): so the second's ``need`` holds the first (the closure's variable: its ``T'``
    joined below it, or the two collected on one join, in pattern order), and both ranges are those at
    the top as soon as a and c are bound, whatever else is.

    In an OR branch (``scope``) likewise: the OR is one unit of the join problem, so a join binding
    ``need`` binds the whole OR, and whether its record took the closure's branch is decided there as at
    the top (its scope variables bound or not); the records that took another branch keep one unbound
    list.  A conjunct split off it (:mod:`.kleene_split`) is tested where its variables join on the
    carried lists: a record that took another branch carries one unbound list, which no conjunct reads
    (semantics section 4: a conjunct reading an unbound variable does not apply), so it keeps, as at the
    top, where the collection tests nothing on it.  An anchored closure's (group's) member-wise conjunct
    too: it is a join predicate on the anchor(s) as well, which a join above reads on the columns the
    collection keeps below the root (:attr:`~jitcep.plan.operators.KleeneCollect.vars`), and the filter
    tests the anchor again with the later members, so the lists kept are the top's.  An anchored closure (its
    first member, its anchor, bound by the joins where nothing else in its part binds an event) has its
    anchor for the neighbour before it (:attr:`~jitcep.plan.logical.Closure.near`): every other member
    lies after it, and it lies after everything the SEQ orders before the closure.

    A Kleene group likewise (in an OR branch too), apart from every other closure and group or adjacent
    to one (a group's iterations for members: the later one's range starts after the earlier one's last
    event, bounded from its list as at the top, under ``nondecreasing_ts`` too: the same comparisons on
    the same record, ``binds`` holding every variable of a type either reads): each
    iteration lies between its nearest neighbours, inside the record's
    span, so the window (either ``kleene_window``: an iteration between two events of the record fits
    with them whenever they fit) cuts no list differently; the variables that may bind one of its events
    and those its conjuncts read (but those split off, as a closure's: a group's lists are every chain of
    its candidate iterations, so the chains passing a member-wise or iterative conjunct are those of the
    passing candidates) are in ``need``.  Under ``nondecreasing_ts`` an
    iteration tied with a neighbour may lie past it by position (its collection puts the records back in
    end order): its time lies between the neighbours' times, so a window in time cuts nothing
    differently; a count window's span may grow, which under ``kleene_window="match"`` the collection
    and each join above check on sets of events that only grow toward the whole match (a list passing
    at the top passes each, and one failing at the top fails the last join); under "iteration" the
    iterations together need not fit, so such a group stays on top.  An anchored group (its first
    iteration bound by the joins, in an OR branch of nothing else) needs its anchors too: a SEQ group's
    later iterations lie after the first, so the anchors stand for its neighbour before it (``near``); an
    AND group's lie after it in canonical order only, so between its outside neighbours.  Its collection
    keeps the anchors' columns below the root (a join above may test the SEQ's order on them), which no
    window reads as events outside the groups (:func:`jitcep.execute.kleene.outside_groups`).

    A closure or group at an end of the pattern (the last item of its top-level SEQ, whose first item is
    a single variable ``f``; or the first, whose last is one) has one open side, bounded by the window
    measured from ``f``, the match's first (last) event: ``near`` is its one neighbour and ``f``.  Every
    other single variable lies between the two, so on any join binding them the range (after the
    neighbour, up to ``f``'s time plus the window) is the one at the top, and so is the window the
    collection checks (the record's first event is ``f``; under ``kleene_window="iteration"`` the events
    outside groups span from ``f`` to the neighbour, as at the top).  The lists widen the record's span
    on the open side only, inside the window from ``f``, so the joins above, which check their pairs'
    span, drop nothing the top keeps; each joins variables between ``f`` and the neighbour (an AND join
    testing the SEQ's order on their columns).  The collection puts its records back in end order (a
    list after the neighbour moves the record's end).  Under ``nondecreasing_ts`` an event tied with
    ``f`` may lie before it by position, so a count window's bound from the record's first event moves
    earlier as the record grows: below, the range holds the top's, and the lists of ``kleene="all"``
    (a group's chains) the top's and more, each extra one with a member outside the whole match's
    window, which the last join drops; but a ``kleene="maximal"`` closure's one list grows and is
    dropped whole where the top kept the shorter one: such a closure stays on top."""
    logical, options = planning.logical, planning.options
    if options.strategy != "skip_till_any_match":
        return {}
    types = logical.variables
    ties = options.order == "nondecreasing_ts"  # an event may tie with a neighbour on either side of it
    # a tied iteration past a neighbour by position widens a count window's span, which under "iteration"
    # the iterations together may exceed: the joins above, checking their pairs' span, would drop the match
    counted = isinstance(logical.window, CountWindow)
    stretched = counted and options.kleene_window == "iteration"
    constructs = (*logical.closures, *logical.groups)

    def apart(K, L) -> bool:
        if ties and _overlap(kinds(K), kinds(L)):  # one event tied with the variable between them fits both ranges
            return False
        if names(L) & set(K.after):
            return any(v in types and v in L.before for v in K.after)
        if names(L) & set(K.before):
            return any(v in types and v in L.after for v in K.before)
        return not _overlap(kinds(K), kinds(L))

    def adjacent(K, L) -> bool:  # L right before K in their SEQ: K's range starts after L's last member
        return bool(names(L) & set(K.before)) and not any(v in types and v in L.after for v in K.before)
    if not all(apart(K, L) or adjacent(K, L) or adjacent(L, K)
               for i, K in enumerate(constructs) for L in constructs[i + 1:]):
        return {}
    kvs = {v for K in constructs for v in names(K)}
    out = {}
    for K in constructs:
        read = {v for c in (*K.member, *K.prev, *K.lists, *K.each, *K.cross) for v in E.variables(c)}
        earlier = {lead(L) for L in constructs if adjacent(K, L)}
        if not K.near or read & (kvs - names(K)) or not earlier <= out.keys():
            continue
        if isinstance(K, Group) and ties and stretched:
            continue  # (module docstring: groups)
        if ties and counted and _open(K) and options.kleene == "maximal":
            continue  # (module docstring: at an end of the pattern)
        binds = {v for v in types if (ties or v not in K.before and v not in K.after) and _overlap(types[v], kinds(K))}
        # a conjunct that may be tested on the carried lists reads its variables where they join (kleene_split;
        # in an OR branch the records that took another one carry an unbound list, which it does not read)
        held = splittable(K, options.kleene)
        fixed = {v for c in (*K.member, *K.prev, *K.lists, *K.each) if c not in held for v in E.variables(c)}
        # an anchored group's first iteration: the later ones lie after it (SEQ) or after it in canonical order
        anchors = set(K.anchor) if isinstance(K, Group) else set()
        out[lead(K)] = frozenset(K.near) | (fixed & types.keys()) | binds | earlier | anchors
    return out


def _open(K) -> bool:
    """Whether closure or group ``K`` has a ``near`` but no neighbour on one side: the last (first) item of
    the top-level SEQ (:attr:`~jitcep.plan.logical.Closure.near`)."""
    return bool(K.near) and not K.anchor and not (K.before and K.after)


def lead(K) -> str:
    """The name of closure or group ``K`` as a unit (:attr:`~jitcep.plan.logical.LogicalPlan.kleene_order`'s):
    a closure's variable, a group's first variable."""
    return K.var if isinstance(K, Closure) else K.vars[0]


def names(K) -> set:
    """The variables of closure or group ``K``."""
    return {K.var} if isinstance(K, Closure) else set(K.vars)


def kinds(K):
    """The types closure or group ``K`` reads (None: any)."""
    if isinstance(K, Closure):
        return K.types
    return None if any(t is None for t in K.types) else tuple(t for ts in K.types for t in ts)


def closure_units(planning) -> tuple:
    """The closures the join-order search places as units of its problem (Kolchinsky & Schuster 4's
    ``T'``; :func:`jitcep.plan.planner.cardinality.join_problem`): ``(closure, need, mode, split)`` for
    each closure :func:`lowerable` allows below the root, unless ``need`` is every variable (the root is
    then its only place), in pattern order: ``closure`` as collected on a join binding ``need``, without
    the conjuncts ``split`` (form -> conjuncts) it leaves to be tested on its lists higher up
    (:mod:`.kleene_split`)."""
    found = lowerable(planning)
    logical, mode = planning.logical, planning.options.kleene
    every = logical.variables.keys()
    out, units = [], set()
    by_lead = {lead(K): K for K in (*logical.closures, *logical.groups)}
    for v in logical.kleene_order:
        K, need = by_lead[v], found.get(v)
        # a closure right after another is collected after it: only where that one is a unit too
        if need is not None and not need >= every and need - every <= units:
            kept = collected(K, mode, need, every)
            out.append((kept, need, mode, split_off(K, kept)))
            units.add(v)
    return tuple(out)
