"""The logical plan: what a pattern asks for, analysed once, before any physical choice.

From the normal form of the pattern (docs/semantics.md section 5) it records
the structure the compiled engine joins (:func:`positive`: SEQ / AND / OR of
positive variables), every negated variable with what fixes its range
(section 7), every Kleene array variable with what bounds its range (section 6), and
each WHERE conjunct in its class (section 4), as ZStream section 4.1 places
them: an ``[attr]`` equivalence test is the partition key, a conjunct over one
variable that variable's filter, over several a join predicate, over none a
constant; conjuncts on a closure are member-wise, iterative (``v[i-1]``) or
read the whole list; conjuncts on a negated variable are its filter or its
conditions.  The physical plan (:mod:`jitcep.plan.rules`) is built from this
by rules; nothing here depends on options or data.

A Kleene group ``KL(SEQ(..))`` / ``KL(AND(..))`` is a :class:`Group`: its
body's conjuncts make the iterations (one match of the body each), the rest
relate iterations to the match and to each other (section 6).

What the compiled engine does not evaluate raises
:class:`~jitcep.errors.UnsupportedPatternError` here, before any work; so does
a part of the pattern that may bind nothing but closures that may all be
empty (several such closures where no single variable binds an event, one
alone in a nested OR branch): the runtime plans those as alternatives that
each bind an event (:func:`~.positive_structure.needs_alternatives`).

This module holds the records and builds them; each analysis they are made
from is a module of its own, imports flowing one way: the positive structure
and its anchors (:mod:`.positive_structure`), each Kleene construct's range
(:mod:`.kleene_contexts`), the conjuncts' classes (:mod:`.conjunct_classes`),
and the names a conjunct reads Kleene members by (:mod:`.kleene_refs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.ast import EventVar, Node, Pattern, Seq, Window
from .conjunct_classes import Classes, PatternStructure, classify, pattern_structure


@dataclass(frozen=True, slots=True)
class Negated:
    """A negated variable (docs/semantics.md section 7; ZStream 4.4.2 NSEQ).

    ``before`` / ``after``: the positive variables (and a Kleene array
    variable, by its last / first member) the SEQ structure orders before /
    after it: its range lies between the last bound one of ``before`` and the
    first bound one of ``after``.  ``in_conj``: it has an AND ancestor (an
    empty side is then bounded by the match's span, else by the window).
    ``conds``: the conjuncts mentioning it and a positive variable.
    ``anchor``: the variables of its nearest positive SEQ neighbours and of
    ``conds`` when those alone decide its range (every ancestor a SEQ, a
    neighbour on both sides, no closure): any join covering ``anchor`` may
    then apply it; None: it applies to whole matches only.  ``list_conds``:
    conditions reading a closure's whole list; ``each``: those reading a
    member of it (``b[i]``, maybe ``b[i-1]``) with the whole list or its
    predecessor, as :attr:`Closure.each` writes them, holding for a candidate
    when they hold for every member i (section 4).
    """

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None
    conds: tuple[E.Expr, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    in_conj: bool
    anchor: frozenset[str] | None = None
    list_conds: tuple[E.Expr, ...] = ()
    each: tuple[E.Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class Closure:
    """An array variable ``T+ v[]`` (semantics section 6; ZStream 4.4.5 KSEQ).

    Its members come from the events of its type between what the SEQ
    structure orders before / after it (``before`` / ``after``: single
    variables, and other array variables by their last / first member; the
    last bound one of ``before``, the first bound one of ``after``); an open
    side is bounded by the window, like a negation's range, and every two
    members must fit the window too (a closure inside AND has two open
    sides).  ``scope``: the single variables of the innermost OR branch
    holding it (a match that took another branch leaves it unbound); empty
    outside any OR.  ``filter``: conjuncts on the members alone
    (``v[i].x`` / plain ``v.x`` read as a single event); ``member``:
    member-wise conjuncts that also mention other variables; ``lists``:
    conjuncts read on the whole list (aggregates, ``v[k]``, ``v[v.LEN]``);
    ``prev``: iterative conjuncts (``v[i].x > v[i-1].x``, SASE+ section 2)
    over ``v`` (member i) and :func:`~.kleene_refs.prev_var` ``(v)`` (member i - 1).
    ``cross``: member-wise conjuncts over ``v`` and a closure or group
    collected before it (``b.x < v.x``), holding for every pair of members (section 4).
    ``anchor``: the single variable binding its first member, where no
    single variable would bind an event (:func:`anchor_vars`); the other
    members then lie after it.  ``each``: conjuncts reading a member (and
    maybe its predecessor) together with the whole list (``v[i].x >
    avg(v.x)``, ``v[i].x > v[i-1].x + v[1].x``), held by a list when they
    hold for every member i (section 4), with ``v[i]`` read as
    :func:`~.kleene_refs.member_var` ``(v)`` and ``v[i-1]`` as :func:`~.kleene_refs.prev_var` ``(v)``.
    ``lists`` and ``each`` also hold the conjuncts reading other Kleene
    constructs collected before this one: their whole lists, or (``each``)
    every member of one of them with this list (:func:`_kleene_multi_class`).
    ``near``: the single variables of its nearest SEQ neighbours that bind
    one, when it has one on both sides (empty otherwise): every other
    variable of ``before`` / ``after`` lies beyond them, so a record binding
    these fixes its range (as a negation's ``anchor``;
    :mod:`jitcep.plan.rules.kleene_collection` may collect it there).  An
    anchored closure's members lie after its anchor, which lies after
    everything the SEQ orders before the closure: its ``near`` is its
    anchor and its nearest neighbour after it (empty without one).  The
    last (first) item of the top-level SEQ, outside any OR and not anchored,
    whose first (last) positive item is a single variable: its nearest
    neighbour and that variable, the match's first (last) event, from which
    the window bounds its open side (:func:`_seq_ends`).
    """

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None
    member: tuple[E.Expr, ...]
    lists: tuple[E.Expr, ...]
    prev: tuple[E.Expr, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    min: int
    max: int | None
    scope: tuple[str, ...] = ()
    cross: tuple[E.Expr, ...] = ()
    anchor: str | None = None
    each: tuple[E.Expr, ...] = ()
    near: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Group:
    """A Kleene group ``KL(SEQ(..)){n,m}`` / ``KL(AND(..)){n,m}`` (semantics section 6; ZStream 4.4.5).

    An iteration is one match of ``body`` (the SEQ / AND of the group's
    ``vars`` as written, each of ``types[i]`` passing ``filters[i]``, the
    iteration-local conjuncts ``joins`` over several of them).  A list is
    ``min``..``max`` iterations: for a SEQ body each after the previous one
    (every event before, at a larger position), for an AND body a set of
    distinct body matches in canonical order, which may share events.  Like a
    :class:`Closure`'s: ``before`` / ``after`` / ``scope``; ``member``:
    conjuncts over group variables member-wise and single variables outside
    (each iteration with the match); ``prev``: iterative conjuncts between
    consecutive iterations (:func:`~.kleene_refs.prev_var` of a group variable reads the
    previous iteration's); ``lists``: conjuncts on the whole lists.
    ``anchor``: where no single variable would bind an event, the single
    variables (one per group variable) binding its first iteration, which
    the joins bind (as a :class:`Closure`'s anchor); empty otherwise.
    ``each``: conjuncts reading an iteration (and maybe the previous one)
    together with whole lists (``a[i].x > avg(b.x)``, ``a[i].x > a[i-1].x
    OR count(a) > 3``), held by a list when they hold for every iteration i,
    as :attr:`Closure.each` writes them (``member_var`` / ``prev_var`` of
    each group variable, one i for the group: section 4).  Like a closure's,
    ``lists`` and ``each`` also hold conjuncts reading constructs collected
    before; ``cross``: member-wise conjuncts over its iterations and the
    members of one construct collected before, for every pair (as
    :attr:`Closure.cross`).  ``near``: as :attr:`Closure.near`; an anchored
    SEQ group's later iterations lie after its first, so its anchors stand for
    the neighbour before it (an AND group's need not: its outside neighbours).
    """

    body: Node
    vars: tuple[str, ...]
    types: tuple[tuple[str, ...] | None, ...]
    filters: tuple[E.Expr | None, ...]
    joins: tuple[E.Expr, ...]
    member: tuple[E.Expr, ...]
    prev: tuple[E.Expr, ...]
    lists: tuple[E.Expr, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    min: int
    max: int | None
    scope: tuple[str, ...] = ()
    anchor: tuple[str, ...] = ()
    each: tuple[E.Expr, ...] = ()
    cross: tuple[E.Expr, ...] = ()
    near: tuple[str, ...] = ()

    @property
    def seq(self) -> bool:
        return isinstance(self.body, Seq)


@dataclass(frozen=True)
class LogicalPlan:
    """One pattern analysed (see the module docstring).

    ``positive``: the normal form without negations and closures (the tree
    the joins build); ``variables``: its variables in pattern order, each with
    its types; ``filters``: the single-variable filter of each; ``joins``:
    conjuncts over several positive variables; ``key``: the ``[attr]``
    attributes; ``constants``: conjuncts over no variable; ``closures``:
    the array variables in pattern order; ``groups``: the Kleene groups;
    ``kleene_order``: every closure's variable and group's first variable,
    in pattern order (the order their lists are collected in).
    """

    pattern: Pattern
    positive: Node
    window: Window | None
    variables: dict[str, tuple[str, ...] | None]
    filters: dict[str, E.Expr | None]
    joins: tuple[E.Expr, ...]
    key: tuple[str, ...]
    constants: tuple[E.Expr, ...]
    negations: tuple[Negated, ...]
    closures: tuple[Closure, ...] = ()
    groups: tuple[Group, ...] = ()
    kleene_order: tuple[str, ...] = ()

    @property
    def closure_vars(self) -> tuple[str, ...]:
        return tuple(c.var for c in self.closures)


def logical_plan(pattern: Pattern, in_conj: tuple[str, ...] = ()) -> LogicalPlan:
    """Analyse ``pattern`` (see the module docstring); raises UnsupportedPatternError for what the
    compiled engine does not evaluate.  ``in_conj``: negated variables ranged as with an AND ancestor
    although ``pattern`` has none, as an alternative of a larger pattern records them
    (:attr:`jitcep.pattern.nonempty.Alternative.in_conj`).

    A conjunct spanning two branches of an OR is refused rather than given a
    meaning here; ``[attr]`` keys the negated events and the closure's members
    too, and ``[attr = v]`` is also a filter on every variable.

    Three steps, each a concept of its own: the structure (:func:`~.conjunct_classes.pattern_structure`),
    the conjuncts sorted into their classes against it (:func:`~.conjunct_classes.classify`), and the
    records of the negations, closures and groups made from both.
    """
    s = pattern_structure(pattern.body)
    cs = classify(pattern.where, s)
    if cs.joins and isinstance(s.body, EventVar):
        raise UnsupportedPatternError("multi-variable predicate on a one-variable pattern")
    return LogicalPlan(pattern, s.body, pattern.window, {v: n.types for v, n in s.var_nodes.items()},
                       {v: E.conjoin(cs.filters[v]) for v in s.var_nodes}, tuple(cs.joins), tuple(cs.key),
                       tuple(cs.constants), _negations(s, cs, in_conj), _closures(s, cs), _groups(s, cs), s.order)


def _negations(s: PatternStructure, cs: Classes, in_conj: tuple[str, ...]) -> tuple[Negated, ...]:
    """Each negated variable's record (section 7): its range from its context, its conjuncts from ``cs``,
    and an ``anchor`` where its nearest SEQ neighbours and its conditions alone decide its range."""
    out = []
    for n, nc in s.contexts.items():
        conds = tuple(cs.conds[n])
        anchor = None
        if not s.closures and not s.groups and nc.top and n not in in_conj and nc.near_before and nc.near_after:
            anchor = frozenset((*nc.near_before, *nc.near_after, *(v for c in conds for v in E.variables(c) if v != n)))
        out.append(Negated(n, nc.var.types, E.conjoin(cs.filters[n]), conds, nc.before, nc.after,
                           nc.in_conj or n in in_conj, anchor, tuple(cs.list_conds[n]), tuple(cs.each_conds[n])))
    return tuple(out)


def _closures(s: PatternStructure, cs: Classes) -> tuple[Closure, ...]:
    """Each array variable's record (section 6), in pattern order.  A closure ordered before an anchored
    one ends before its first member, the anchor, until its list is made (its collection drops the
    anchor); an anchored closure's list holds at least its anchor."""
    anchors = s.anchors
    return tuple(Closure(kv, knode.body.types, E.conjoin(cs.filters[kv]), tuple(cs.kleene[kv]["member"]),
                         tuple(cs.kleene[kv]["list"]), tuple(cs.kleene[kv]["prev"]), before,
                         after + tuple(anchors[v] for v in after if v in anchors),
                         max(knode.min, 1) if kv in anchors else knode.min, knode.max,
                         scope, tuple(cs.kleene[kv]["cross"]), anchors.get(kv), tuple(cs.kleene[kv]["each"]), near)
                 for kv, (knode, before, after, scope, near) in zip(s.kvs, s.closures))


def _groups(s: PatternStructure, cs: Classes) -> tuple[Group, ...]:
    """Each Kleene group's record (section 6), in pattern order: as :func:`_closures`, with one anchor per
    variable where its first iteration is anchored."""
    anchors = s.anchors
    return tuple(Group(g.body, tuple(v.name for v in g.body.items), tuple(v.types for v in g.body.items),
                       tuple(E.conjoin(cs.filters[v.name]) for v in g.body.items),
                       *(tuple(cs.grouped[i][k]) for k in ("joins", "member", "prev", "lists")),
                       before, after + tuple(anchors[v] for v in after if v in anchors), g.min, g.max, scope,
                       tuple(anchors.get(v.name) for v in g.body.items) if g.body.items[0].name in anchors else (),
                       tuple(cs.grouped[i]["each"]), tuple(cs.grouped[i]["cross"]), near)
                 for i, (g, before, after, scope, near) in enumerate(s.groups))
