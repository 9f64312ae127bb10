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
    between them in their SEQ (so neither bounds the other's range: a closure next to another counts it
    by its last / first member), or no SEQ orders them and they read no common type (so which one is
    collected first never decides which binds an event); under ``nondecreasing_ts`` only closures that
    read no common type (an event tied with the variable between them lies in both ranges)."""
    logical, options = planning.logical, planning.options
    if logical.groups or options.strategy != "skip_till_any_match":
        return {}
    types = logical.variables
    ties = options.order == "nondecreasing_ts"  # an event may tie with a neighbour on either side of it

    def apart(K, L) -> bool:
        if ties and _overlap(K.types, L.types):  # one event tied with the variable between them fits both ranges
            return False
        if L.var in K.after:
            return any(v in types and v in L.before for v in K.after)
        if L.var in K.before:
            return any(v in types and v in L.after for v in K.before)
        return not _overlap(K.types, L.types)
    if not all(apart(K, L) for i, K in enumerate(logical.closures) for L in logical.closures[i + 1:]):
        return {}
    kvs = {K.var for K in logical.closures}
    out = {}
    for K in logical.closures:
        read = {v for c in (*K.member, *K.prev, *K.lists, *K.each, *K.cross) for v in E.variables(c)}
        if K.anchor is not None or K.scope or not K.near or read & (kvs - {K.var}):
            continue
        binds = {v for v in types if (ties or v not in K.before and v not in K.after) and _overlap(types[v], K.types)}
        # a conjunct that may be tested on the carried lists reads its variables where they join (kleene_split)
        held = splittable(K, options.kleene)
        fixed = {v for c in (*K.member, *K.prev, *K.lists, *K.each) if c not in held for v in E.variables(c)}
        out[K.var] = frozenset(K.near) | (fixed & types.keys()) | binds
    return out


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
    out = []
    for K in logical.closures:
        if K.var in found and not found[K.var] >= every:
            kept = collected(K, mode, found[K.var], every)
            out.append((kept, found[K.var], mode, split_off(K, kept)))
    return tuple(out)
