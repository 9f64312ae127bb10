"""Plan trees: leaves are positive pattern variables, internal nodes are binary joins.

ZStream section 4.1: "leaf buffers store primitive events ... internal node
buffers store intermediate results"; single-class predicates are pushed to the
leaves, multi-class predicates sit on the internal node that first covers their
classes, and equality predicates become hash partitions.  Here:

- :class:`Leaf` ``(var, types, filter)``: the events a variable may bind, after
  its type test and its single-variable predicates.
- :class:`Join` ``(kind, left, right, predicates, window)``: SEQ (every event of
  ``left`` before every event of ``right``), AND (both, any order) or OR (union
  of the two inputs, ZStream 4.4.4).  ``predicates`` are the WHERE conjuncts
  whose variables this node is the lowest to cover.
- :class:`Plan`: the root, the pattern-wide partition key (from ``[attr]``
  equivalence tests), constant conjuncts and the negations.
- :class:`NegLeaf`: a negated variable (docs/semantics.md section 7) as ZStream
  4.4.2 treats it: a leaf of its type and single-variable filters whose events
  *remove* records of the positive plan (NSEQ) instead of joining them.  It
  records what fixes its range in a match (the positive variables the SEQ
  structure orders before / after it, whether it has an AND ancestor) and the
  conjuncts that mention it.
- :class:`KleeneLeaf`: the one array variable ``T+ v[]`` of a top-level SEQ
  (ZStream 4.4.5 KSEQ), evaluated over whole matches of the other variables.

Any binary tree whose SEQ nodes join *adjacent* runs of a SEQ's items, left
before right, is valid (ZStream's left-deep, right-deep and bushy plans); the
executor gives identical results for all of them.  A tree is written as a
*shape*: nested pairs of variable names, e.g. ``(("a", "b"), "c")``.
:func:`build_plan` turns a shape (or the default, left-deep in pattern order)
into a :class:`Plan`; :func:`all_shapes` enumerates the valid shapes of a
small pattern so tests can run every one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import product
from typing import Literal, Union

from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.ast import Conj, Disj, EventVar, Kleene, Neg, Node, Pattern, Seq, Window
from ..pattern.normalize import normalize
from ..pattern.printer import expr_to_text

JoinKind = Literal["SEQ", "AND", "OR"]
Shape = Union[str, tuple]


@dataclass(frozen=True, slots=True)
class Leaf:
    """A positive variable: its accepted types (None: any) and its single-variable filter."""

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None = None

    @property
    def vars(self) -> tuple[str, ...]:
        return (self.var,)


@dataclass(frozen=True, slots=True)
class Join:
    """A binary SEQ / AND / OR join carrying the predicates it is the lowest node to cover."""

    kind: JoinKind
    left: "PlanNode"
    right: "PlanNode"
    predicates: tuple[E.Expr, ...] = ()
    window: Window | None = None
    # variables in record column order: left's, then right's (kept: plans are walked per join)
    vars: tuple[str, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.kind not in ("SEQ", "AND", "OR"):
            raise ValueError(f"unknown join kind {self.kind!r}")
        object.__setattr__(self, "vars", self.left.vars + self.right.vars)
        overlap = set(self.left.vars) & set(self.right.vars)
        if overlap:
            raise UnsupportedPatternError(f"plan joins variable(s) {sorted(overlap)} with themselves")
        for p in self.predicates:
            missing = E.variables(p) - set(self.vars)
            if missing:
                raise UnsupportedPatternError(f"predicate on {sorted(missing)} placed on a node without them")


PlanNode = Union[Leaf, Join]


@dataclass(frozen=True, slots=True)
class Plan:
    """A whole plan for one pattern.

    ``key``: attributes of the pattern-wide equivalence test (``[a1, a2]``); every
    variable must agree on them, so records only ever join within one key
    partition (ZStream 5.4 hash partitioning).  ``constant``: conjuncts without
    variables, evaluated once.
    """

    root: PlanNode
    key: tuple[str, ...] = ()
    constant: tuple[E.Expr, ...] = ()
    window: Window | None = None
    negations: tuple[NegLeaf, ...] = ()
    kleene: "KleeneLeaf | None" = None

    def nodes(self):
        """Post-order (children before parents)."""
        out = []

        def rec(n):
            if isinstance(n, Join):
                rec(n.left)
                rec(n.right)
            out.append(n)
        rec(self.root)
        return out

    def shape(self) -> Shape:
        def rec(n):
            return n.var if isinstance(n, Leaf) else (rec(n.left), rec(n.right))
        return rec(self.root)


# --- pattern normalisation ----------------------------------------------------


def flatten(node: Node) -> Node:
    """The normal form (:func:`~jitcep.pattern.normalize.normalize`, semantics section 5), checked for
    what the compiled engine evaluates.

    Merging same-kind operators never changes matches; it makes every binary
    split of a run of items a valid join.  Negations stay in place
    (:func:`positive` removes them once their ranges are known).
    """
    node = normalize(node)
    for n in _walk_nodes(node):
        if isinstance(n, Neg) and not isinstance(n.var, EventVar):
            raise UnsupportedPatternError("a negation must be of a single variable")
        if isinstance(n, Kleene) and not isinstance(n.body, EventVar):
            raise UnsupportedPatternError("the compiled engine does not evaluate Kleene groups KL(SEQ/AND ..) yet")
        if not isinstance(n, (Seq, Conj, Disj, Neg, Kleene, EventVar)):
            raise UnsupportedPatternError(f"unknown structure node {type(n).__name__}")
    return node


_KIND = {Seq: "SEQ", Conj: "AND", Disj: "OR"}


def positive(body: Node) -> Node:
    """The flattened structure without its negations (the tree the positive plan joins).

    Dropping an item of a SEQ / AND never changes the relation of the other
    items (SEQ orders every pair of items, AND none), so the positive matches
    are those of this structure; the negations then filter them (section 7).
    """
    body = flatten(body)

    def rec(n):
        if isinstance(n, (EventVar, Neg, Kleene)):
            return n
        items = tuple(rec(c) for c in n.items if not isinstance(c, (Neg, Kleene)))
        if not items:
            raise UnsupportedPatternError(f"a {_KIND[type(n)]} of negations only binds no positive event")
        return flatten(type(n)(items))
    if isinstance(body, (Neg, Kleene)):
        raise UnsupportedPatternError("the compiled engine needs a positive variable outside negations and "
                                      "Kleene closures")
    return rec(body)


@dataclass(frozen=True, slots=True)
class NegLeaf:
    """A negated variable: the events that kill a match (docs/semantics.md section 7, ZStream NSEQ).

    ``before`` / ``after``: the positive variables (and a Kleene array
    variable, by its last / first member) the SEQ structure orders before /
    after it (its range is between the last bound one of ``before`` and the
    first bound one of ``after``); ``in_conj``: it has an AND ancestor
    (an empty side is then bounded by the match's span, else by the window).
    ``conds``: the conjuncts mentioning it and a positive variable.
    ``anchor``: the variables of its nearest positive SEQ neighbours and of
    ``conds`` when those alone decide its range (every ancestor a SEQ, a
    neighbour on both sides): then any join covering ``anchor`` may apply it
    (ZStream pushes negation down); None: it applies to whole matches only.
    """

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None
    conds: tuple[E.Expr, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    in_conj: bool
    anchor: frozenset[str] | None = None

    @property
    def vars(self) -> tuple[str, ...]:
        return (self.var,)


@dataclass(frozen=True, slots=True)
class KleeneLeaf:
    """An array variable ``T+ v[]`` that is an item of the pattern's top-level SEQ (semantics section 6).

    ZStream's KSEQ (section 4.4.5): the closure is evaluated over whole matches
    of the other variables, its members taken from a leaf of its type between
    the nearest SEQ neighbours (``before`` / ``after``; an open side is bounded
    by the window, like a negation's range, section 7).  ``filter``: conjuncts
    on the members alone (``v[i].x`` / plain ``v.x`` read as a single event);
    ``member``: member-wise conjuncts that also mention other variables;
    ``lists``: conjuncts read on the whole list (aggregates, ``v[k]``,
    ``v[v.LEN]``), evaluated once per (binding, list).  ``prev``: iterative
    conjuncts (``v[i].x > v[i-1].x``, SASE+ section 2) over ``v`` (member i)
    and :func:`prev_var` ``(v)`` (member i - 1), tested on consecutive members.
    """

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None
    member: tuple[E.Expr, ...]
    lists: tuple[E.Expr, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]
    min: int
    max: int | None
    prev: tuple[E.Expr, ...] = ()

    @property
    def vars(self) -> tuple[str, ...]:
        return (self.var,)


def prev_var(kv: str) -> str:
    """The name an iterative conjunct's ``kv[i-1]`` reads as (not a pattern identifier: no clash)."""
    return f"{kv}[i-1]"


def map_expr(e: E.Expr, fn) -> E.Expr:
    """``e`` with every node ``x`` for which ``fn(x)`` is not None replaced by that (bottom-up rebuild)."""
    r = fn(e)
    if r is not None:
        return r
    if not e.children():
        return e
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, E.Expr):
            changes[f.name] = map_expr(v, fn)
        elif isinstance(v, tuple) and v and all(isinstance(x, E.Expr) for x in v):
            changes[f.name] = tuple(map_expr(x, fn) for x in v)
    return dataclasses.replace(e, **changes)


def _prev_ref(e: E.Expr, kv: str) -> E.Expr:
    """``e`` with ``kv[i-1].x`` as ``prev_var(kv).x`` and ``kv[i].x`` / plain ``kv.x`` as ``kv.x``."""
    return map_expr(e, lambda x: E.Attr(prev_var(kv) if x.index == "i-1" else kv, x.attr)
                    if isinstance(x, E.Attr) and x.var == kv else None)


def _member_ref(e: E.Expr, kv: str) -> E.Expr:
    """``e`` with ``kv[i].x`` / plain ``kv.x`` as a single-event reference ``kv.x``."""
    return map_expr(e, lambda x: E.Attr(x.var, x.attr) if isinstance(x, E.Attr) and x.var == kv else None)


def kleene_ref_kind(e: E.Expr, kv: str) -> str:
    """How conjunct ``e`` reads Kleene variable ``kv``: "member", "list", "prev" or "mixed"."""
    kinds = set()
    for n in E.walk(e):
        if isinstance(n, E.Agg) and n.var == kv:
            kinds.add("list")
        elif isinstance(n, E.Attr) and n.var == kv:
            kinds.add({None: "member", "i": "member", "i-1": "prev"}.get(n.index, "list"))
    if "prev" in kinds:
        return "prev"
    return "mixed" if len(kinds) > 1 else kinds.pop()


def _positive_vars(node: Node) -> tuple[str, ...]:
    if isinstance(node, EventVar):
        return (node.name,)
    if isinstance(node, (Neg, Kleene)):
        return ()
    return tuple(v for c in node.children() for v in _positive_vars(c))


def _neg_contexts(body: Node) -> dict[str, tuple]:
    """Per negated variable: (node, before vars, after vars, in_conj, nearest left vars, nearest right vars, top).

    ``top``: every ancestor is a SEQ (after flattening: an item of the root SEQ).
    """
    out: dict[str, tuple] = {}

    def rec(node, before, after, in_conj, top):
        if isinstance(node, Neg):
            # a Kleene array variable bounds the range like a single one (by its last / first member)
            b = tuple(v for n in before for v in _bound_vars(n))
            a = tuple(v for n in after for v in _bound_vars(n))
            near_l = next((_positive_vars(n) for n in reversed(before) if _positive_vars(n)), ())
            near_r = next((_positive_vars(n) for n in after if _positive_vars(n)), ())
            out[node.var.name] = (node.var, b, a, in_conj, near_l, near_r, top)
            return
        if isinstance(node, Seq):
            for i, item in enumerate(node.items):
                rec(item, before + node.items[:i], node.items[i + 1:] + after, in_conj, top)
            return
        for c in node.children():
            rec(c, before, after, in_conj or isinstance(node, Conj), False)

    rec(body, (), (), False, True)
    return out


def _bound_vars(node: Node) -> tuple[str, ...]:
    """The positive variables of ``node`` and its Kleene array variables (not those inside a group)."""
    if isinstance(node, Kleene):
        return (node.body.name,) if isinstance(node.body, EventVar) else ()
    if isinstance(node, (EventVar, Neg)):
        return _positive_vars(node)
    return tuple(v for c in node.children() for v in _bound_vars(c))


def _vars_of(node: Node) -> frozenset[str]:
    if isinstance(node, EventVar):
        return frozenset((node.name,))
    return frozenset().union(*(_vars_of(c) for c in node.children()))


def _check_expr_supported(e: E.Expr) -> None:
    for n in E.walk(e):
        if isinstance(n, E.Agg) or (isinstance(n, E.Attr) and n.index is not None):
            raise UnsupportedPatternError("the compiled engine does not evaluate Kleene references yet")
        if isinstance(n, E.Equiv):
            raise UnsupportedPatternError("an equivalence test [attr] is allowed only as a top-level conjunct")


# --- shapes -------------------------------------------------------------------


def default_shape(body: Node) -> Shape:
    """Left-deep in pattern order, recursively (the TRIVIAL plan of Kolchinsky & Schuster 2018, 4.1)."""
    body = positive(body)

    def rec(n):
        if isinstance(n, EventVar):
            return n.name
        acc = rec(n.items[0])
        for c in n.items[1:]:
            acc = (acc, rec(c))
        return acc
    return rec(body)


def _brackets(parts: list) -> list:
    """Every binary bracketing of an ordered run of sub-shapes (Catalan many)."""
    if len(parts) == 1:
        return [parts[0]]
    out = []
    for i in range(1, len(parts)):
        for left in _brackets(parts[:i]):
            for right in _brackets(parts[i:]):
                out.append((left, right))
    return out


def _set_trees(parts: list) -> list:
    """Every binary tree over an unordered set of sub-shapes, both orientations of each split."""
    if len(parts) == 1:
        return [parts[0]]
    out = []
    n = len(parts)
    for mask in range(1, (1 << n) - 1):
        left = [parts[i] for i in range(n) if mask >> i & 1]
        right = [parts[i] for i in range(n) if not mask >> i & 1]
        for lt in _set_trees(left):
            for rt in _set_trees(right):
                out.append((lt, rt))
    return out


def all_shapes(body: Node, limit: int = 10_000) -> list[Shape]:
    """All valid plan shapes of a (small) pattern: every bracketing of SEQ runs, every tree over AND/OR items."""
    body = positive(body)

    def rec(n) -> list:
        if isinstance(n, EventVar):
            return [n.name]
        out = []
        for choice in product(*(rec(c) for c in n.items)):
            trees = _brackets(list(choice)) if isinstance(n, Seq) else _set_trees(list(choice))
            out.extend(trees)
            if len(out) > limit:
                raise UnsupportedPatternError(f"more than {limit} plan shapes")
        return out
    return rec(body)


def _shape_vars(shape: Shape) -> tuple[str, ...]:
    if isinstance(shape, str):
        return (shape,)
    if not (isinstance(shape, tuple) and len(shape) == 2):
        raise UnsupportedPatternError(f"a plan shape is a variable name or a pair of shapes, got {shape!r}")
    return _shape_vars(shape[0]) + _shape_vars(shape[1])


# --- building a plan ----------------------------------------------------------


def _lca(body: Node, vs: frozenset[str]) -> Node:
    """The lowest structure node whose variables include ``vs``."""
    node = body
    while not isinstance(node, EventVar):
        for c in node.children():
            if vs <= _vars_of(c):
                node = c
                break
        else:
            return node
    return node


def _join_kind(body: Node, left: frozenset[str], right: frozenset[str]) -> JoinKind:
    """Check that joining ``left`` and ``right`` is valid for the pattern and return the join kind."""
    op = _lca(body, left | right)
    child_sets = [_vars_of(c) for c in op.children()]
    sides = []
    for side in (left, right):
        idx = [i for i, cs in enumerate(child_sets) if cs & side]
        if any(not cs <= side for cs in (child_sets[i] for i in idx)):
            raise UnsupportedPatternError(
                f"plan node {sorted(side)} splits an item of {_KIND[type(op)]}; join whole items only")
        sides.append(idx)
    if isinstance(op, Seq):
        li, ri = sides
        run = sorted(li + ri)
        if run != list(range(run[0], run[-1] + 1)) or max(li) >= min(ri) \
                or li != list(range(li[0], li[-1] + 1)):
            raise UnsupportedPatternError(
                f"SEQ plan node must join adjacent runs, left before right: {sorted(left)} then {sorted(right)}")
    return _KIND[type(op)]


def build_plan(pattern: Pattern, shape: Shape | None = None) -> Plan:
    """Plan for ``pattern``: predicate placement and partition key; ``shape`` defaults to left-deep.

    Conjuncts of WHERE are placed as ZStream 4.1 describes: an ``[attr]``
    equivalence test becomes the partition key (``[attr = v]`` also a filter on
    every variable); a conjunct over one variable is that leaf's filter; over
    several, it goes on the lowest join covering them.  A conjunct spanning two
    branches of an OR is rejected (UnsupportedPatternError) rather than given a
    meaning here.  A conjunct mentioning a negated variable is that negation's
    filter (with no other variable) or condition (section 7); ``[attr]`` keys
    the negated events too.
    """
    full = flatten(pattern.body)
    contexts = _neg_contexts(full)
    kl = _kleene_context(full)
    body = positive(full)
    var_nodes = {v.name: v for v in _walk_vars(body)}
    if shape is None:
        shape = default_shape(body)
    names = _shape_vars(shape)
    if sorted(names) != sorted(var_nodes):
        raise UnsupportedPatternError(
            f"plan shape names {sorted(names)}, the pattern's positive variables are {sorted(var_nodes)}")

    key: list[str] = []
    filters: dict[str, list[E.Expr]] = {v: [] for v in (*var_nodes, *contexts)}
    conds: dict[str, list[E.Expr]] = {v: [] for v in contexts}
    multi: list[E.Expr] = []
    constant: list[E.Expr] = []
    kv = kl[0].body.name if kl is not None else None
    kmember: list[E.Expr] = []
    klists: list[E.Expr] = []
    kprev: list[E.Expr] = []
    if kv is not None:
        filters[kv] = []
    for c in E.conjuncts(pattern.where):
        if isinstance(c, E.Equiv):
            if c.attr not in key:
                key.append(c.attr)
            if c.value is not None:
                for v in filters:
                    filters[v].append(E.Cmp("=", E.Attr(v, c.attr), c.value))
            continue
        if kv is not None and kv in E.variables(c):
            if E.variables(c) & contexts.keys():
                raise UnsupportedPatternError(
                    f"the compiled engine does not evaluate a negation condition on a Kleene variable "
                    f"({expr_to_text(c)}) yet")
            kind = kleene_ref_kind(c, kv)
            for n in E.walk(c):
                if isinstance(n, E.Agg) and n.var != kv or isinstance(n, E.Equiv):
                    raise UnsupportedPatternError(f"unsupported conjunct {c}")
            if kind == "prev":
                if any(isinstance(n, E.Agg) or isinstance(n, E.Attr) and n.var == kv
                       and n.index not in (None, "i", "i-1") for n in E.walk(c)):
                    raise UnsupportedPatternError(
                        f"the compiled engine does not evaluate v[i-1] with list references ({expr_to_text(c)}) yet")
                kprev.append(_prev_ref(c, kv))
            elif kind == "mixed":
                raise UnsupportedPatternError(
                    f"the compiled engine does not evaluate mixed Kleene references ({c}) yet")
            elif kind == "list":
                klists.append(c)
            elif E.variables(c) == {kv}:
                filters[kv].append(_member_ref(c, kv))
            else:
                kmember.append(_member_ref(c, kv))
            continue
        _check_expr_supported(c)
        vs = E.variables(c)
        negs = vs & contexts.keys()
        if len(negs) > 1:
            raise UnsupportedPatternError(f"a predicate mentions two negated variables {sorted(negs)}")
        if negs:
            (n,) = negs
            others = vs - negs
            if not others:
                filters[n].append(c)
                continue
            if isinstance(_lca(full, frozenset(vs)), Disj):
                raise UnsupportedPatternError(
                    f"predicate over variables of different OR branches: {sorted(vs)}")
            conds[n].append(c)
            continue
        if not vs:
            constant.append(c)
        elif len(vs) == 1:
            (v,) = vs
            filters[v].append(c)
        else:
            multi.append(c)

    def build(s) -> PlanNode:
        if isinstance(s, str):
            node = var_nodes[s]
            return Leaf(s, node.types, E.conjoin(filters[s]))
        left, right = build(s[0]), build(s[1])
        kind = _join_kind(body, frozenset(left.vars), frozenset(right.vars))
        return Join(kind, left, right, (), pattern.window)

    root = build(shape)
    root = _place(root, multi)
    negations = []
    for n, (node, before, after, in_conj, near_l, near_r, top) in contexts.items():
        cs = tuple(conds[n])
        anchor = None
        if kl is None and top and near_l and near_r:
            anchor = frozenset(near_l) | frozenset(near_r) | frozenset(v for c in cs for v in E.variables(c) if v != n)
        negations.append(NegLeaf(n, node.types, E.conjoin(filters[n]), cs, before, after, in_conj, anchor))
    kleene = None
    if kl is not None:
        knode, before, after = kl
        kleene = KleeneLeaf(kv, knode.body.types, E.conjoin(filters[kv]), tuple(kmember), tuple(klists),
                            before, after, knode.min, knode.max, tuple(kprev))
    return Plan(root, tuple(key), tuple(constant), pattern.window, tuple(negations), kleene)


def _kleene_context(full: Node):
    """(Kleene node, vars before, vars after) of the one array variable in the top-level SEQ, or None.

    Anything else with a Kleene closure (a group, a closure inside AND / OR, two
    closures) raises UnsupportedPatternError.
    """
    ks = [n for n in _walk_nodes(full) if isinstance(n, Kleene)]
    if not ks:
        return None
    if len(ks) > 1 or not isinstance(full, Seq) or ks[0] not in full.items:
        raise UnsupportedPatternError("the compiled engine evaluates one Kleene array variable as an item of "
                                      "the top-level SEQ only")
    i = next(k for k, it in enumerate(full.items) if it is ks[0])
    before = tuple(v for it in full.items[:i] for v in _positive_vars(it))
    after = tuple(v for it in full.items[i + 1:] for v in _positive_vars(it))
    return ks[0], before, after


def _walk_nodes(n: Node):
    yield n
    for c in n.children():
        yield from _walk_nodes(c)


def _walk_vars(body: Node):
    if isinstance(body, EventVar):
        yield body
    else:
        for c in body.children():
            yield from _walk_vars(c)


def _place(root: PlanNode, preds: list[E.Expr]) -> PlanNode:
    """Put each multi-variable predicate on the lowest join covering its variables."""

    def rec(n: PlanNode, todo: list[E.Expr]) -> PlanNode:
        if isinstance(n, Leaf):
            return n
        lv, rv = set(n.left.vars), set(n.right.vars)
        to_left = [p for p in todo if E.variables(p) <= lv]
        to_right = [p for p in todo if E.variables(p) <= rv]
        here = [p for p in todo if p not in to_left and p not in to_right]
        if here and n.kind == "OR":
            raise UnsupportedPatternError(
                f"predicate over variables of different OR branches: {sorted(E.variables(here[0]))}")
        return Join(n.kind, rec(n.left, to_left), rec(n.right, to_right), tuple(here), n.window)

    if preds and isinstance(root, Leaf):
        raise UnsupportedPatternError("multi-variable predicate on a one-variable pattern")
    return rec(root, preds)
