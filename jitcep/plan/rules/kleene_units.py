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
    (module docstring): on any join binding the single variables ``need`` -- its nearest SEQ neighbours'
    (:attr:`~jitcep.plan.logical.Closure.near`), those its conjuncts read where it is collected
    (:func:`_read_where_collected`), those that may bind one of its members (:func:`_may_bind`), an
    adjacent closure collected before it and a group's anchors (:func:`_anchors`).  Each condition
    below is a predicate of its own, which says why it holds: the pairs of closures
    (:func:`_apart`, :func:`_adjacent`), a closure reading another's list (:func:`_reads_other_lists`), and
    the two cases that keep a closure on top (:func:`_stays_on_top`).

    Under ``nondecreasing_ts`` before() is ``ts <= ts``, which is transitive, so the nearest neighbours
    still fix the range: an event after the one before and before the one after is after every
    variable the SEQ orders before the closure and before every one after it, as at the top.

    In an OR branch (``scope``) likewise: the OR is one unit of the join problem, so a join binding
    ``need`` binds the whole OR, and whether its record took the closure's branch is decided there as at
    the top (its scope variables bound or not); the records that took another branch keep one unbound
    list.  An anchored closure (its first member, its anchor, bound by the joins where nothing else in
    its part binds an event) has its anchor for the neighbour before it
    (:attr:`~jitcep.plan.logical.Closure.near`): every other member lies after it, and it lies after
    everything the SEQ orders before the closure.

    A Kleene group likewise (in an OR branch too), apart from every other closure and group or adjacent
    to one (a group's iterations for members): each iteration lies between its nearest neighbours,
    inside the record's span, so the window (either ``kleene_window``: an iteration between two events
    of the record fits with them whenever they fit) cuts no list differently.

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
    list after the neighbour moves the record's end)."""
    logical, options = planning.logical, planning.options
    if options.strategy != "skip_till_any_match":
        return {}
    types = logical.variables
    ties = options.order == "nondecreasing_ts"  # an event may tie with a neighbour on either side of it
    constructs = (*logical.closures, *logical.groups)
    if not all(_apart(K, L, types, ties) or _adjacent(K, L, types) or _adjacent(L, K, types)
               for i, K in enumerate(constructs) for L in constructs[i + 1:]):
        return {}
    kvs = {v for K in constructs for v in names(K)}
    out = {}
    for K in constructs:
        # a closure right after another is collected after it, with that one's variable in its need
        earlier = {lead(L) for L in constructs if _adjacent(K, L, types)}
        if not K.near or _reads_other_lists(K, kvs) or not earlier <= out.keys() or \
                _stays_on_top(K, logical.window, options):
            continue
        out[lead(K)] = (frozenset(K.near) | _read_where_collected(K, options.kleene, types)
                        | _may_bind(K, types, ties) | earlier | _anchors(K))
    return out


def _apart(K, L, types, ties: bool) -> bool:
    """Whether closures (or groups) ``K`` and ``L`` may each be collected below the root whatever the
    other's place: a single variable lies between them in their SEQ (so neither bounds the other's
    range), or no SEQ orders them and they read no common type (so which one is collected first never
    decides which binds an event); under ``nondecreasing_ts`` only if they read no common type (an event
    tied with the variable between them lies in both ranges).  ``types``: the single variables' types."""
    if ties and _overlap(kinds(K), kinds(L)):  # one event tied with the variable between them fits both ranges
        return False
    if names(L) & set(K.after):
        return any(v in types and v in L.before for v in K.after)
    if names(L) & set(K.before):
        return any(v in types and v in L.after for v in K.before)
    return not _overlap(kinds(K), kinds(L))


def _adjacent(K, L, types) -> bool:
    """Whether ``L`` lies right before ``K`` in their SEQ, no single variable between
    (``SEQ(A a, B+ b[], E+ e[], C c)``), so that ``K``'s range starts after ``L``'s last member.

    Collected in pattern order, the first's range lies between its single neighbours (a, c: the second
    is not collected yet), the second's after the first's last member (a where that list is empty) and
    before c, and its members leave out the first's (section 3): so the second's ``need`` holds the
    first (the closure's variable: its ``T'`` joined below it, or the two collected on one join, in
    pattern order), and both ranges are those at the top as soon as a and c are bound, whatever else is.
    A group's iterations count as members: the later one's range starts after the earlier one's last
    event, bounded from its list as at the top, under ``nondecreasing_ts`` too (the same comparisons on
    the same record, :func:`_may_bind` holding every variable of a type either reads)."""
    return bool(names(L) & set(K.before)) and not any(v in types and v in L.after for v in K.before)


def _reads_other_lists(K, kvs: set) -> bool:
    """Whether a conjunct of ``K`` reads another closure or group (``kvs``: every Kleene variable): it
    would be collected before the list it reads, so it stays on top."""
    read = {v for c in (*K.member, *K.prev, *K.lists, *K.each, *K.cross) for v in E.variables(c)}
    return bool(read & (kvs - names(K)))


def _stays_on_top(K, window, options) -> bool:
    """Whether ``K`` stays on top although its range is fixed below: two cases under ``nondecreasing_ts``
    and a count window, where a tied event past a neighbour by position widens a record's span.

    A group under ``kleene_window="iteration"``: an iteration tied with a neighbour may lie past it by
    position (its collection puts the records back in end order); its time lies between the neighbours'
    times, so a window in time cuts nothing differently; but a count window's span may grow, which under
    ``kleene_window="match"`` the collection and each join above check on sets of events that only grow
    toward the whole match (a list passing at the top passes each, and one failing at the top fails the
    last join), while under "iteration" the iterations together need not fit: the joins above, checking
    their pairs' span, would drop the match.

    A ``kleene="maximal"`` closure at an end of the pattern (:func:`_open`): an event tied with ``f``
    may lie before it by position, so a count window's bound from the record's first event moves earlier
    as the record grows: below, the range holds the top's, and the lists of ``kleene="all"`` (a group's
    chains) the top's and more, each extra one with a member outside the whole match's window, which the
    last join drops; but a maximal closure's one list grows and is dropped whole where the top kept the
    shorter one."""
    if options.order != "nondecreasing_ts" or not isinstance(window, CountWindow):
        return False
    if isinstance(K, Group) and options.kleene_window == "iteration":
        return True
    return _open(K) and options.kleene == "maximal"


def _read_where_collected(K, mode: str, types) -> set:
    """The single variables (of ``types``) that ``K``'s conjuncts read where it is collected: all but
    those only a conjunct :func:`~.kleene_split.splittable` reads, which is tested on the carried lists
    where they join (:mod:`.kleene_split`).

    In an OR branch a record that took another branch carries one unbound list, which no such conjunct
    reads (semantics section 4: a conjunct reading an unbound variable does not apply), so it keeps, as
    at the top, where the collection tests nothing on it.  An anchored closure's (group's) member-wise
    conjunct too: it is a join predicate on the anchor(s) as well, which a join above reads on the
    columns the collection keeps below the root (:attr:`~jitcep.plan.operators.KleeneCollect.vars`),
    and the filter tests the anchor again with the later members, so the lists kept are the top's.  A
    group's lists are every chain of its candidate iterations, so the chains passing a member-wise or
    iterative conjunct are those of the passing candidates: its split-off conjuncts likewise."""
    held = splittable(K, mode)
    return {v for c in (*K.member, *K.prev, *K.lists, *K.each) if c not in held for v in E.variables(c)} & types.keys()


def _may_bind(K, types, ties: bool) -> set:
    """The single variables (of ``types``) that may bind one of ``K``'s members: sharing a type, neither
    ordered before nor after it, or any under ``order="nondecreasing_ts"``, where an event tied with a
    neighbour lies in the range and may be a variable ordered beyond that neighbour too.  Joined above
    the collection they would not be told apart from its members (section 3)."""
    return {v for v in types if (ties or v not in K.before and v not in K.after) and _overlap(types[v], kinds(K))}


def _anchors(K) -> set:
    """An anchored group's anchors (its first iteration, bound by the joins in an OR branch of nothing
    else): a SEQ group's later iterations lie after the first, so the anchors stand for its neighbour
    before it (``near``); an AND group's lie after it in canonical order only, so between its outside
    neighbours.  Its collection keeps the anchors' columns below the root (a join above may test the
    SEQ's order on them), which no window reads as events outside the groups
    (:func:`jitcep.execute.kleene.outside_groups`).  A closure's anchor is in its ``near`` already."""
    return set(K.anchor) if isinstance(K, Group) else set()


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
