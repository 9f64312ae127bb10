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
each bind an event (:func:`needs_alternatives`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.expr import map_expr
from ..pattern.ast import Disj, EventVar, Node, Pattern, Seq, Window
from ..pattern.printer import expr_to_text
from ..pattern.structure import lca, negation_contexts, walk_nodes
from ..pattern.validate import check_structure
from .kleene_contexts import kleene_contexts
from .kleene_refs import (anchor_var, display_expr, each_ref, kleene_ref_kind, member_ref, member_var, prev_ref,
                          prev_var)
from .positive_structure import anchor_vars, array_var, flatten, lead_var, needs_alternatives, positive

# what the plan's readers import from here: its records, the structure it is read from, and the names its
# conjuncts read Kleene members by
__all__ = ["LogicalPlan", "Negated", "Closure", "Group", "logical_plan", "anchor_var", "display_expr", "flatten",
           "map_expr", "member_var", "needs_alternatives", "positive", "prev_var"]


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
    over ``v`` (member i) and :func:`prev_var` ``(v)`` (member i - 1).
    ``cross``: member-wise conjuncts over ``v`` and a closure or group
    collected before it (``b.x < v.x``), holding for every pair of members (section 4).
    ``anchor``: the single variable binding its first member, where no
    single variable would bind an event (:func:`anchor_vars`); the other
    members then lie after it.  ``each``: conjuncts reading a member (and
    maybe its predecessor) together with the whole list (``v[i].x >
    avg(v.x)``, ``v[i].x > v[i-1].x + v[1].x``), held by a list when they
    hold for every member i (section 4), with ``v[i]`` read as
    :func:`member_var` ``(v)`` and ``v[i-1]`` as :func:`prev_var` ``(v)``.
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
    consecutive iterations (:func:`prev_var` of a group variable reads the
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


# --- conjuncts ----------------------------------------------------------------


def _check_expr_supported(e: E.Expr) -> None:
    for n in E.walk(e):
        if isinstance(n, E.Agg) or (isinstance(n, E.Attr) and n.index is not None):
            raise UnsupportedPatternError("the compiled engine does not evaluate Kleene references yet")
        if isinstance(n, E.Equiv):
            raise UnsupportedPatternError("an equivalence test [attr] is allowed only as a top-level conjunct")


def _check_list_refs(c: E.Expr, kvs: set[str]) -> None:
    """Refuse aggregates over, and indexes into, anything but the closures ``kvs``; ``[attr]`` inside."""
    for n in E.walk(c):
        if isinstance(n, E.Agg) and n.var not in kvs or isinstance(n, E.Equiv) or \
                isinstance(n, E.Attr) and n.var not in kvs and n.index is not None:
            raise UnsupportedPatternError(f"unsupported conjunct {expr_to_text(c)}")


def _kleene_class(c: E.Expr, kv: str) -> str:
    """The class of a conjunct on closure ``kv`` and no negated variable: "prev", "list", "each" (a member
    and the whole list), "filter" or "member" (or raise)."""
    for n in E.walk(c):
        if isinstance(n, E.Agg) and n.var != kv or isinstance(n, E.Equiv):
            raise UnsupportedPatternError(f"unsupported conjunct {c}")
    kind = kleene_ref_kind(c, kv)
    if kind == "prev":
        if any(isinstance(n, E.Agg) or isinstance(n, E.Attr) and n.var == kv
               and n.index not in (None, "i", "i-1") for n in E.walk(c)):
            return "each"
        return "prev"
    if kind == "mixed":
        return "each"
    if kind == "list":
        return "list"
    return "filter" if E.variables(c) == {kv} else "member"


def _negation_kleene_class(c: E.Expr, kvs: list[str], negated, full: Node, group: bool) -> tuple[str, str]:
    """(negated variable, "member", "list" or "each") of a negation condition reading the Kleene variables
    ``kvs`` of one closure, or of a group or several constructs (``group``) (or raise).  A group's
    member-wise condition is "each": its variables share the iteration (section 4), which a member per
    list variable would not; so is one over several constructs (every combination of their members)."""
    negs = E.variables(c) & negated
    if len(negs) > 1:
        raise UnsupportedPatternError(f"a predicate mentions two negated variables {sorted(negs)}")
    if isinstance(lca(full, frozenset(E.variables(c))), Disj):
        raise UnsupportedPatternError(f"predicate over variables of different OR branches: "
                                      f"{sorted(E.variables(c))}")
    _check_list_refs(c, set(kvs))
    kinds = {kleene_ref_kind(c, kv) for kv in kvs}
    if kinds == {"list"}:
        return next(iter(negs)), "list"
    return next(iter(negs)), "member" if kinds == {"member"} and not group else "each"


def _kleene_multi_class(c: E.Expr, leads: list[str], construct: dict) -> tuple[str, str, E.Expr]:
    """(the construct that tests it, class, conjunct as it reads it) of a conjunct over several Kleene
    constructs (closures, groups; ``leads`` in collection order, ``construct[lead]``: its Kleene
    variables), tested by the last one collected, when every other list is made: "list" on whole lists;
    "cross" member-wise over two and nothing else, for every pair of members (a group's: iterations;
    section 4); else "each", with the constructs it reads member-wise (maybe ``v[i-1]``) read for every
    combination of their members, the others (and maybe those too) as whole lists
    (:attr:`Closure.each`).  (A negation condition reading several is :attr:`Negated.each`.)"""
    vs = E.variables(c)
    _check_list_refs(c, {v for lead in leads for v in construct[lead]})
    kinds = {lead: {kleene_ref_kind(c, v) for v in construct[lead] if v in vs} for lead in leads}
    read = [lead for lead in leads if kinds[lead] != {"list"}]
    if not read:
        return leads[-1], "list", c
    if len(leads) == 2 and all(kinds[lead] == {"member"} for lead in leads):
        for v in (*construct[leads[0]], *construct[leads[1]]):
            c = member_ref(c, v)
        return leads[-1], "cross", c
    for v in (v for lead in read for v in construct[lead]):
        c = each_ref(c, v)
    return leads[-1], "each", c


def _group_class(c: E.Expr, gs: set[int], group_of: dict[str, int], full: Node):
    """(group index, class, conjunct as the group reads it) of a conjunct on one Kleene group's variables
    and single variables (section 4: plain / ``[i]`` references to one group share the iteration):
    "filter" (one variable, member-wise), "joins" (member-wise over group variables only:
    iteration-local), "member" (also
    single variables outside), "prev" (``v[i-1]``, between consecutive iterations), "lists", "each" (an
    iteration, maybe the one before, with whole lists: :attr:`Group.each`); or raise."""
    vs = E.variables(c)
    (gi,) = gs
    gvars = sorted(v for v in vs if v in group_of)
    _check_list_refs(c, set(gvars))
    if isinstance(lca(full, frozenset(vs)), Disj):
        raise UnsupportedPatternError(f"predicate over variables of different OR branches: {sorted(vs)}")
    kinds = {kleene_ref_kind(c, v) for v in gvars}
    if kinds == {"list"}:
        return gi, "lists", c
    if any(isinstance(n, E.Agg) or isinstance(n, E.Attr) and n.var in group_of and n.index not in (None, "i", "i-1")
           for n in E.walk(c)):  # an iteration (maybe the one before) with whole lists
        for v in gvars:
            c = each_ref(c, v)
        return gi, "each", c
    if "prev" in kinds:
        for v in gvars:
            c = prev_ref(c, v)
        return gi, "prev", c
    for v in gvars:
        c = member_ref(c, v)
    if vs - set(gvars):
        return gi, "member", c
    return gi, "filter" if len(vs) == 1 else "joins", c


# --- the plan, built ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Structure:
    """What classifying a conjunct reads of the pattern's structure (:func:`_structure`).

    ``full``: the normal form (:func:`flatten`); ``body``: its positive structure (:func:`positive`,
    anchors included); ``contexts``: each negated variable's (section 7); ``anchors``:
    :func:`anchor_vars`; ``closures`` / ``groups``: each array variable's / Kleene group's (Kleene node,
    before, after, scope, near) (:func:`~jitcep.plan.kleene_contexts.kleene_contexts`); ``var_nodes``: the
    positive variables; ``kvs``: the array variables; ``group_of``: a group's variable -> the group's
    index; ``order``: each construct's lead in pattern order (the order the lists are collected in);
    ``construct``: a lead -> its Kleene variables; ``lead_of``: a Kleene variable -> its construct's lead.
    """

    full: Node
    body: Node
    contexts: dict
    anchors: dict[str, str]
    closures: list
    groups: list
    var_nodes: dict[str, EventVar]
    kvs: tuple[str, ...]
    group_of: dict[str, int]
    order: tuple[str, ...]
    construct: dict[str, tuple[str, ...]]
    lead_of: dict[str, str]


def _structure(body: Node) -> _Structure:
    """The structure of pattern body ``body`` as :func:`logical_plan` reads it (raises
    UnsupportedPatternError for a structure the compiled engine does not evaluate)."""
    check_structure(body)  # where negations and closures may stand (section 7), as validate checks
    full = flatten(body)
    contexts = negation_contexts(full)
    anchors = anchor_vars(full)
    every = kleene_contexts(full, anchors)
    positive_body = positive(full)
    groups = [g for g in every if array_var(g[0]) is None]
    closures = [k for k in every if array_var(k[0]) is not None]
    kvs = tuple(k.body.name for k, *_ in closures)
    construct = {**{kv: (kv,) for kv in kvs}, **{g.body.items[0].name: tuple(v.name for v in g.body.items)
                                                 for g, *_ in groups}}
    return _Structure(full, positive_body, contexts, anchors, closures, groups,
                      {v.name: v for v in walk_nodes(positive_body) if isinstance(v, EventVar)}, kvs,
                      {v.name: i for i, (g, *_) in enumerate(groups) for v in g.body.items},
                      tuple(lead_var(k) for k, *_ in every), construct,
                      {v: lead for lead, vs in construct.items() for v in vs})


@dataclass(slots=True)
class _Classes:
    """The WHERE conjuncts in their classes (ZStream 4.1; semantics section 4), each class in WHERE order,
    as :func:`_classify` sorts them: the fields of :class:`LogicalPlan` (``key``, ``filters`` per
    variable, ``joins``, ``constants``), of each :class:`Negated` by its variable (``conds``,
    ``list_conds``, ``each_conds``), of each :class:`Closure` by its variable (``kleene``) and of each
    :class:`Group` by its index (``grouped``)."""

    key: list[str]
    filters: dict[str, list[E.Expr]]
    joins: list[E.Expr]
    constants: list[E.Expr]
    conds: dict[str, list[E.Expr]]
    list_conds: dict[str, list[E.Expr]]
    each_conds: dict[str, list[E.Expr]]
    kleene: dict[str, dict[str, list[E.Expr]]]
    grouped: list[dict[str, list[E.Expr]]]

    @classmethod
    def empty(cls, s: _Structure) -> "_Classes":
        """Every class empty; a filter for every variable but the anchors, which take their construct's
        once every conjunct is sorted (:func:`_anchor_conjuncts`)."""
        return cls([], {v: [] for v in (*s.var_nodes, *s.contexts, *s.kvs, *s.group_of)
                        if v not in s.anchors.values()}, [], [],
                   {v: [] for v in s.contexts}, {v: [] for v in s.contexts}, {v: [] for v in s.contexts},
                   {kv: {"member": [], "list": [], "prev": [], "cross": [], "each": []} for kv in s.kvs},
                   [{"joins": [], "member": [], "prev": [], "lists": [], "each": [], "cross": []}
                    for _ in s.groups])


def logical_plan(pattern: Pattern, in_conj: tuple[str, ...] = ()) -> LogicalPlan:
    """Analyse ``pattern`` (see the module docstring); raises UnsupportedPatternError for what the
    compiled engine does not evaluate.  ``in_conj``: negated variables ranged as with an AND ancestor
    although ``pattern`` has none, as an alternative of a larger pattern records them
    (:attr:`jitcep.pattern.nonempty.Alternative.in_conj`).

    A conjunct spanning two branches of an OR is refused rather than given a
    meaning here; ``[attr]`` keys the negated events and the closure's members
    too, and ``[attr = v]`` is also a filter on every variable.

    Three steps, each a concept of its own: the structure (:func:`_structure`), the conjuncts sorted into
    their classes against it (:func:`_classify`; an anchor then takes its construct's first member's,
    :func:`_anchor_conjuncts`), and the records of the negations, closures and groups made from both.
    """
    s = _structure(pattern.body)
    cs = _Classes.empty(s)
    for c in E.conjuncts(pattern.where):
        _classify(c, s, cs)
    _anchor_conjuncts(s, cs)
    if cs.joins and isinstance(s.body, EventVar):
        raise UnsupportedPatternError("multi-variable predicate on a one-variable pattern")
    return LogicalPlan(pattern, s.body, pattern.window, {v: n.types for v, n in s.var_nodes.items()},
                       {v: E.conjoin(cs.filters[v]) for v in s.var_nodes}, tuple(cs.joins), tuple(cs.key),
                       tuple(cs.constants), _negations(s, cs, in_conj), _closures(s, cs), _groups(s, cs), s.order)


def _classify(c: E.Expr, s: _Structure, cs: _Classes) -> None:
    """Put WHERE conjunct ``c`` in its class in ``cs`` (or raise), by what it reads: an equivalence test,
    a negated variable with Kleene constructs, several constructs, one group, one closure, or single
    events only.  Each reading has its own classes (the records' fields) and its own refusals."""
    if isinstance(c, E.Equiv):
        _classify_equivalence(c, cs)
        return
    vs = E.variables(c)
    leads = sorted({s.lead_of[v] for v in vs if v in s.lead_of}, key=s.order.index)
    gs = {s.group_of[v] for v in vs if v in s.group_of}
    if leads and vs & s.contexts.keys():
        _classify_negation_on_lists(c, s, cs, several=bool(gs) or len(leads) > 1)
    elif len(leads) > 1:
        # tested once every list it reads is made: by the last one's collection
        last, cls, e = _kleene_multi_class(c, leads, s.construct)
        if last in cs.kleene:
            cs.kleene[last][cls].append(e)
        else:
            cs.grouped[s.group_of[last]]["lists" if cls == "list" else cls].append(e)
    elif gs:
        gi, cls, e = _group_class(c, gs, s.group_of, s.full)
        (cs.filters[next(iter(E.variables(e)))] if cls == "filter" else cs.grouped[gi][cls]).append(e)
    elif leads:
        _classify_on_closure(c, leads[0], cs)
    else:
        _classify_on_events(c, s, cs)


def _classify_equivalence(c: E.Equiv, cs: _Classes) -> None:
    """``[attr]``: a key attribute (ZStream 5.4 partitions by it); ``[attr = v]`` also a filter on every
    variable, negated and Kleene ones too (SASE section 2)."""
    if c.attr not in cs.key:
        cs.key.append(c.attr)
    if c.value is not None:
        for v in cs.filters:
            cs.filters[v].append(E.Cmp("=", E.Attr(v, c.attr), c.value))


def _classify_negation_on_lists(c: E.Expr, s: _Structure, cs: _Classes, several: bool) -> None:
    """A negation condition reading Kleene constructs: on their whole lists, member-wise on one closure,
    or for every member (``several``: of a group, or of each construct it reads member-wise, every
    combination; section 4)."""
    lvars = sorted(v for v in E.variables(c) if v in s.lead_of)
    n, cls = _negation_kleene_class(c, lvars, s.contexts.keys(), s.full, group=several)
    if cls == "list":
        cs.list_conds[n].append(c)
    elif cls == "each":
        for v in lvars:
            c = each_ref(c, v)
        cs.each_conds[n].append(c)
    else:  # one closure's member, read as a single event
        cs.conds[n].append(member_ref(c, lvars[0]))


def _classify_on_closure(c: E.Expr, kv: str, cs: _Classes) -> None:
    """A conjunct on closure ``kv`` and single variables (:func:`_kleene_class`): a filter on its members
    alone, member-wise with other variables, iterative, on its whole list, or a member with its list."""
    cls = _kleene_class(c, kv)
    if cls == "prev":
        cs.kleene[kv]["prev"].append(prev_ref(c, kv))
    elif cls == "list":
        cs.kleene[kv]["list"].append(c)
    elif cls == "each":
        cs.kleene[kv]["each"].append(each_ref(c, kv))
    else:
        (cs.filters[kv] if cls == "filter" else cs.kleene[kv]["member"]).append(member_ref(c, kv))


def _classify_on_events(c: E.Expr, s: _Structure, cs: _Classes) -> None:
    """A conjunct reading single events only (ZStream 4.1): a constant, a variable's filter, a join
    predicate, or a negated variable's filter or condition (section 7); two negated variables in one
    conjunct, or variables of two OR branches, are refused."""
    _check_expr_supported(c)
    vs = E.variables(c)
    negs = vs & s.contexts.keys()
    if len(negs) > 1:
        raise UnsupportedPatternError(f"a predicate mentions two negated variables {sorted(negs)}")
    if negs:
        (n,) = negs
        if vs == negs:
            cs.filters[n].append(c)
            return
        if isinstance(lca(s.full, frozenset(vs)), Disj):
            raise UnsupportedPatternError(f"predicate over variables of different OR branches: {sorted(vs)}")
        cs.conds[n].append(c)
    elif not vs:
        cs.constants.append(c)
    elif len(vs) == 1:
        cs.filters[next(iter(vs))].append(c)
    else:
        if isinstance(lca(s.body, frozenset(vs)), Disj):
            raise UnsupportedPatternError(f"predicate over variables of different OR branches: {sorted(vs)}")
        cs.joins.append(c)


def _anchor_conjuncts(s: _Structure, cs: _Classes) -> None:
    """The conjuncts of each anchor (:func:`anchor_vars`): the anchor is its construct's first member, so
    it passes what every member passes, as a filter or (member-wise with other variables; a group's
    first iteration's iteration-local conjuncts too) a join predicate."""
    for kv, anchor in s.anchors.items():
        cs.filters[anchor] = list(cs.filters[kv])
        if kv in s.group_of:  # a group's first iteration: its iteration-local and member-wise conjuncts
            if kv == s.groups[s.group_of[kv]][0].body.items[0].name:
                g = cs.grouped[s.group_of[kv]]
                cs.joins += [map_expr(c, lambda x: E.Attr(s.anchors[x.var], x.attr) if isinstance(x, E.Attr)
                                      and x.var in s.group_of else None) for c in g["joins"] + g["member"]]
            continue
        cs.joins += [map_expr(c, lambda x: E.Attr(anchor, x.attr) if isinstance(x, E.Attr) and x.var == kv
                              else None) for c in cs.kleene[kv]["member"]]


def _negations(s: _Structure, cs: _Classes, in_conj: tuple[str, ...]) -> tuple[Negated, ...]:
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


def _closures(s: _Structure, cs: _Classes) -> tuple[Closure, ...]:
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


def _groups(s: _Structure, cs: _Classes) -> tuple[Group, ...]:
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
