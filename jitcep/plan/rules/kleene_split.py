"""Which of a closure's conjuncts are tested above its collection, on the lists the joins carry, and where.

Kolchinsky & Schuster (section 4, "Kleene closure patterns") plan a closure
as an event type ``T'`` whose predicates with the other units keep their
selectivities: joined early, ``T'`` meets a predicate with a later unit
where that unit joins, like any other pair of units.  jitcep's collection of
a closure below the root (:mod:`.kleene_collection`) carries each record's
list up through the joins above (:mod:`jitcep.execute.join`), so a conjunct
reading the closure with a variable joined later need not raise the
collection to a join binding that variable: it is split off the collection
and tested on the carried lists by a :class:`~jitcep.plan.operators.ListFilter`
on the lowest join binding every variable it reads.

Which conjuncts may be split (docs/semantics.md sections 4, 6): under
``kleene="all"`` every qualifying subsequence of the candidates is a list
(6.1), so the lists that pass a member-wise conjunct (``b[i].x < d.x``) are
exactly the lists of the candidates without it whose every member passes,
and those that pass an iterative one (``b[i].x > b[i-1].x + d.x``) the lists
whose every consecutive pair passes: a filter on the lists gives the same
set.  A list conjunct (``sum(b.x) > d.x``, ``b[b.LEN].x < d.x``) and one
reading a member with the whole list (``b[i].x > avg(b.x) + d.x``) are read
on each list once it is made, in either mode, so they are plain filters of
the lists.  Under ``kleene="maximal"`` a member-wise conjunct decides which
events are members of the one list (6.2): it stays in the collection, whose
``need`` then holds its variables (:mod:`.kleene_units`).
"""

from __future__ import annotations

import dataclasses

from ...pattern import expr as E
from ..logical import Closure, Group
from ..operators import GroupCollect, Join, KleeneCollect, ListFilter, NfaRuns, Scan, Union, _Unary

_FORMS = ("member", "prev", "lists", "each")


def splittable(K: Closure | Group, mode: str) -> tuple[E.Expr, ...]:
    """The conjuncts of closure or group ``K`` that may be tested on its lists after they are made (module
    docstring), under ``kleene=mode`` (a group's lists are every chain of its candidate iterations, as
    under "all", in either mode)."""
    return (K.member + K.prev if mode == "all" or isinstance(K, Group) else ()) + K.lists + K.each


def collected(K: Closure | Group, mode: str, bound, single) -> Closure | Group:
    """``K`` as collected over a join binding the variables ``bound``: without the conjuncts of
    :func:`splittable` reading a single variable (of ``single``) that join does not bind."""
    bound = set(bound)
    later = [c for c in splittable(K, mode) if not E.variables(c) & set(single) <= bound]
    if not later:
        return K
    return dataclasses.replace(K, **{f: tuple(c for c in getattr(K, f) if c not in later) for f in _FORMS})


def split_off(K: Closure | Group, kept: Closure | Group) -> dict[str, tuple[E.Expr, ...]]:
    """The conjuncts of ``K`` that its collection ``kept`` (:func:`collected`) leaves out, by form."""
    return {f: tuple(c for c in getattr(K, f) if c not in getattr(kept, f)) for f in _FORMS}


def place_filters(root, closures, single):
    """``root`` with a :class:`ListFilter` on the lowest join above each closure's (group's) collection
    that binds the single variables (of ``single``) read by the conjuncts the collection left out
    (``closures``: the closures and groups as the pattern states them, by variable; a group by its first)."""
    single = set(single)

    def rec(node):
        """(``node`` rebuilt, the (closure variable, form, conjunct) split off below it and not yet placed)."""
        if isinstance(node, (Scan, NfaRuns)):
            return node, []
        if isinstance(node, _Unary):
            inner, pending = rec(node.input)
            node = dataclasses.replace(node, input=inner)
            if isinstance(node, (KleeneCollect, GroupCollect)):
                K = node.closure if isinstance(node, KleeneCollect) else node.group
                kv = K.var if isinstance(K, Closure) else K.vars[0]
                pending = pending + [(kv, f, c) for f, cs in split_off(closures[kv], K).items() for c in cs]
            return node, pending
        left, pl = rec(node.left)
        right, pr = rec(node.right)
        node = dataclasses.replace(node, left=left, right=right)
        pending = pl + pr
        if not isinstance(node, (*Join, Union)):
            return node, pending
        here = [p for p in pending if E.variables(p[2]) & single <= set(node.vars)]
        for kv in dict.fromkeys(kv for kv, _, _ in here):
            forms = {f: tuple(c for v, g, c in here if v == kv and g == f) for f in _FORMS}
            group = closures[kv].vars if isinstance(closures[kv], Group) else ()
            node = ListFilter(node, kv, **forms, group=group)
        return node, [p for p in pending if p not in here]

    out, left = rec(root)
    if left:  # the root binds every single variable
        raise AssertionError(f"conjuncts {[c for _, _, c in left]} split off a closure found no join above it")
    return out
