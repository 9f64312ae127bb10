"""The WHERE conjuncts sorted into their classes against the pattern's structure (ZStream 4.1; semantics 4).

As ZStream section 4.1 places them: an ``[attr]`` equivalence test is the
partition key, a conjunct over one variable that variable's filter, over
several a join predicate, over none a constant; conjuncts on a closure are
member-wise, iterative (``v[i-1]``) or read the whole list, or read a member
with its list; conjuncts on a Kleene group share its iteration; conjuncts
over several closures and groups are tested by the last one collected;
conjuncts on a negated variable are its filter or its conditions (section 7).
Each reading has its own classes and its own refusals
(:class:`~jitcep.errors.UnsupportedPatternError`: a conjunct spanning two OR
branches, two negated variables in one conjunct, ``[attr]`` not at the top).

:func:`pattern_structure` reads what the classes are decided against;
:func:`classify` sorts every conjunct; the logical plan
(:mod:`jitcep.plan.logical`) makes its records from both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.expr import map_expr
from ..pattern.ast import Disj, EventVar, Node
from ..pattern.printer import expr_to_text
from ..pattern.structure import lca, negation_contexts, walk_nodes
from ..pattern.validate import check_structure
from .kleene_contexts import kleene_contexts
from .kleene_refs import each_ref, kleene_ref_kind, member_ref, prev_ref
from .positive_structure import anchor_vars, array_var, flatten, lead_var, positive


@dataclass(frozen=True, slots=True)
class PatternStructure:
    """What classifying a conjunct reads of the pattern's structure (:func:`pattern_structure`).

    ``full``: the normal form (:func:`flatten`); ``body``: its positive structure (:func:`positive`,
    anchors included); ``contexts``: each negated variable's (section 7); ``anchors``:
    :func:`anchor_vars`; ``closures`` / ``groups``: each array variable's / Kleene group's (Kleene node,
    before, after, scope, near) (:func:`kleene_contexts`); ``var_nodes``: the
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


def pattern_structure(body: Node) -> PatternStructure:
    """The structure of pattern body ``body`` as :func:`~jitcep.plan.logical.logical_plan` reads it (raises
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
    return PatternStructure(full, positive_body, contexts, anchors, closures, groups,
                            {v.name: v for v in walk_nodes(positive_body) if isinstance(v, EventVar)}, kvs,
                            {v.name: i for i, (g, *_) in enumerate(groups) for v in g.body.items},
                            tuple(lead_var(k) for k, *_ in every), construct,
                            {v: lead for lead, vs in construct.items() for v in vs})


@dataclass(slots=True)
class Classes:
    """The WHERE conjuncts in their classes (ZStream 4.1; semantics section 4), each class in WHERE order,
    as :func:`_classify` sorts them: the fields of :class:`~.logical.LogicalPlan` (``key``, ``filters`` per
    variable, ``joins``, ``constants``), of each :class:`~.logical.Negated` by its variable (``conds``,
    ``list_conds``, ``each_conds``), of each :class:`~.logical.Closure` by its variable (``kleene``) and of each
    :class:`~.logical.Group` by its index (``grouped``)."""

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
    def empty(cls, s: PatternStructure) -> "Classes":
        """Every class empty; a filter for every variable but the anchors, which take their construct's
        once every conjunct is sorted (:func:`_anchor_conjuncts`)."""
        return cls([], {v: [] for v in (*s.var_nodes, *s.contexts, *s.kvs, *s.group_of)
                        if v not in s.anchors.values()}, [], [],
                   {v: [] for v in s.contexts}, {v: [] for v in s.contexts}, {v: [] for v in s.contexts},
                   {kv: {"member": [], "list": [], "prev": [], "cross": [], "each": []} for kv in s.kvs},
                   [{"joins": [], "member": [], "prev": [], "lists": [], "each": [], "cross": []}
                    for _ in s.groups])


def classify(where: E.Expr | None, s: PatternStructure) -> Classes:
    """The conjuncts of ``where`` in their classes against structure ``s`` (or raise), each class in WHERE
    order; an anchor then takes its construct's first member's (:func:`_anchor_conjuncts`)."""
    cs = Classes.empty(s)
    for c in E.conjuncts(where):
        _classify(c, s, cs)
    _anchor_conjuncts(s, cs)
    return cs


def _classify(c: E.Expr, s: PatternStructure, cs: Classes) -> None:
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


def _classify_equivalence(c: E.Equiv, cs: Classes) -> None:
    """``[attr]``: a key attribute (ZStream 5.4 partitions by it); ``[attr = v]`` also a filter on every
    variable, negated and Kleene ones too (SASE section 2)."""
    if c.attr not in cs.key:
        cs.key.append(c.attr)
    if c.value is not None:
        for v in cs.filters:
            cs.filters[v].append(E.Cmp("=", E.Attr(v, c.attr), c.value))


def _classify_negation_on_lists(c: E.Expr, s: PatternStructure, cs: Classes, several: bool) -> None:
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


def _classify_on_closure(c: E.Expr, kv: str, cs: Classes) -> None:
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


def _classify_on_events(c: E.Expr, s: PatternStructure, cs: Classes) -> None:
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


def _anchor_conjuncts(s: PatternStructure, cs: Classes) -> None:
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
    (:attr:`~.logical.Closure.each`).  (A negation condition reading several is :attr:`~.logical.Negated.each`.)"""
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
    iteration, maybe the one before, with whole lists: :attr:`~.logical.Group.each`); or raise."""
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
