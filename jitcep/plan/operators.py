"""Physical plan operators: frozen nodes, each run by one executor (:mod:`jitcep.execute`).

ZStream section 4.1: "leaf buffers store primitive events ... internal node
buffers store intermediate results".  Every operator produces a buffer of
records sorted by (key partition, end position); its fields are the choices
the planning rules (:mod:`jitcep.plan.rules`) made, so the executor takes
none.

- :class:`Scan`: a leaf buffer, the events a variable may bind after its
  type test and single-variable filter.
- :class:`SeqJoin` (ZStream Algorithm 1), :class:`AndJoin` (Algorithm 3),
  :class:`Union` (OR, section 4.4.4): binary operators over runs of
  the pattern's items, carrying the predicates they are the lowest to cover.
- :class:`NegationFilter`: ZStream's NSEQ (4.4.2), the records of its input
  that no event of the negated variable kills (docs/semantics.md section 7),
  placed on the lowest join that fixes the negation's range or on whole matches.
- :class:`KleeneCollect`: ZStream's KSEQ (4.4.5), the lists of the closure's
  members for each record of its input (semantics section 6).
- :class:`DisjunctUnion`: a pattern with an OR planned in DNF (Kolchinsky &
  Schuster 4, nested patterns), one subplan per alternative, their records united.
- :class:`GroupCollect`: the same for a Kleene group, whose iterations are
  the records of the group body's own join tree.
- :class:`Contiguity`: OpenCEP's ``contiguous`` constraint, whole matches
  whose listed variables occupy consecutive positions (semantics section 9);
  ``freeze`` is a field of the frozen variable's :class:`Scan`.
- :class:`NfaRuns`: the NFA^b runs of a linear pattern under a selection
  strategy other than skip-till-any-match (SASE+ sections 2-3; semantics
  section 8), in place of the join tree.

An output policy (SASE+ section 2) is another operator over whole matches
(:class:`OutputPolicy`: the root);
:class:`PhysicalPlan` holds the root and what applies to the whole pattern.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Union as TypingUnion

from .._typing import SelectionStrategy
from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.ast import Pattern, Window
from .logical import Closure, Group, Negated, prev_var

Driver = Literal["right", "left", "smaller"]
KleeneMode = Literal["all", "maximal"]


@dataclass(frozen=True, slots=True)
class Scan:
    """The events variable ``var`` may bind: of ``types`` (None: any) and passing ``filter``.

    ``frozen``: ``var`` is named by ``freeze=`` (semantics section 9), so of
    those events only the active candidates (a scan in position order with the
    window, :func:`jitcep.kernels.policies.freeze_active`).
    """

    var: str
    types: tuple[str, ...] | None
    filter: E.Expr | None = None
    frozen: bool = False

    @property
    def vars(self) -> tuple[str, ...]:
        return (self.var,)

    @property
    def children(self) -> tuple:
        return ()


@dataclass(frozen=True, slots=True)
class _Binary:
    left: "Operator"
    right: "Operator"
    predicates: tuple[E.Expr, ...] = ()
    # record columns: left's variables, then right's
    vars: tuple[str, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "vars", self.left.vars + self.right.vars)
        overlap = set(self.left.vars) & set(self.right.vars)
        if overlap:
            raise UnsupportedPatternError(f"plan joins variable(s) {sorted(overlap)} with themselves")
        for p in self.predicates:
            missing = E.variables(p) - set(self.vars)
            if missing:
                raise UnsupportedPatternError(f"predicate on {sorted(missing)} placed on a node without them")

    @property
    def children(self) -> tuple:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class SeqJoin(_Binary):
    """Pairs (l, r), every event of l before every event of r, within the window (ZStream Algorithm 1).

    ``driver``: which input the kernel loops over.  "right": the right
    records in end order, each searching its left range; "smaller": the same
    unless the right input (a leaf) is many times larger than the left one,
    then the left records drive, a binary search into the leaf each
    (:data:`jitcep.config.JOIN_BY_LEFT`).  ``overlap``: some left and right
    variable may bind events of one type, so the kernel checks that a pair's
    records share no event (distinct variables bind distinct events, semantics
    section 3); a SEQ join needs that only under ``nondecreasing_ts``, where a
    tie lets one event stand on both sides.  "left": the left records drive
    whatever the sizes (a plan chosen on statistics, right input a leaf).
    ``costs``: each driver priced on the statistics, (driver, cost) pairs
    (empty: chosen by rule).
    """

    driver: Driver = "right"
    overlap: bool = True
    costs: tuple[tuple[str, float], ...] = dataclasses.field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class AndJoin(_Binary):
    """Pairs of records within the window, in either order (ZStream Algorithm 3).

    ``overlap``: some left and right variable may bind events of one type, so
    the kernel checks that a pair's records share no event (semantics section 3).

    ``sequence``: pairs of variables (x, y), one on each side, whose events
    must be in order, x's before y's (docs/semantics.md section 1), where
    both are bound: a SEQ whose items the plan joins out of their order
    (Kolchinsky & Schuster section 4: SEQ as a conjunction with ordering
    predicates).
    """

    overlap: bool = True
    sequence: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Union(_Binary):
    """OR (ZStream 4.4.4): the records of both inputs, the other side's variables unbound.

    It tests no predicate: one between two branches is refused by the logical plan (semantics 4).
    """

    def __post_init__(self):
        _Binary.__post_init__(self)
        if self.predicates:
            raise UnsupportedPatternError("an OR union tests no predicate: it would span two branches")


@dataclass(frozen=True, slots=True)
class DisjunctUnion:
    """The matches of a pattern in DNF: the union of one subplan per alternative (Kolchinsky & Schuster 4).

    ``inputs``: each alternative's plan (:func:`jitcep.pattern.dnf.alternatives`: an OR-free pattern,
    planned on its own); ``vars``: the pattern's variables in pattern order, each record binding those
    of its alternative and leaving the others unbound (semantics section 5).  ``inputs`` may share
    variables (every alternative binds the variables outside the ORs), unlike a :class:`Union`'s sides;
    it tests no predicate (each alternative tests its own).
    """

    inputs: tuple["Operator", ...]
    vars: tuple[str, ...]

    def __post_init__(self):
        if len(self.inputs) < 2:
            raise UnsupportedPatternError("a DNF union needs two alternatives or more")
        for alt in self.inputs:
            missing = set(alt.vars) - set(self.vars)
            if missing:
                raise UnsupportedPatternError(f"DNF alternative binds {sorted(missing)}, not the pattern's")

    @property
    def children(self) -> tuple:
        return self.inputs


@dataclass(frozen=True, slots=True)
class _Unary:
    input: "Operator"

    @property
    def vars(self) -> tuple[str, ...]:
        return self.input.vars

    @property
    def children(self) -> tuple:
        return (self.input,)


@dataclass(frozen=True, slots=True)
class NegationFilter(_Unary):
    """Records of ``input`` that no event of the negated variable kills (NSEQ, ZStream 4.4.2; section 7).

    ``neg``: the negated variable, its leaf (types, filter), the conditions
    tested on (record, event) pairs and what bounds its range
    (:class:`jitcep.plan.logical.Negated`); ``placement``: "pushed" when the
    rule put it on the lowest join fixing its range, "matches" on whole matches;
    ``costs``: the whole plan priced under each placement, (placement, cost)
    pairs (empty: placed by rule).
    """

    neg: Negated = None
    placement: Literal["pushed", "matches"] = "matches"
    costs: tuple[tuple[str, float], ...] = dataclasses.field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class KleeneCollect(_Unary):
    """The lists of a closure for each record of ``input`` (KSEQ, ZStream 4.4.5; semantics section 6).

    ``closure`` (:class:`jitcep.plan.logical.Closure`): members are the
    events of its types passing its filter in the record's range (between
    its neighbours, an open side bounded by the window) that pass its
    member-wise conjuncts; ``mode`` "maximal" takes them all (6.2;
    ``{min,max}`` as sliding runs), "all" every subsequence the bounds allow
    whose consecutive members pass the iterative conjuncts (6.1); list
    conjuncts are then tested once per list.  ``span_check``: ties may
    stretch a list past the window (under ``nondecreasing_ts``), so each
    list's span is checked.
    """

    closure: Closure = None
    mode: KleeneMode = "all"
    span_check: bool = False

    @property
    def vars(self) -> tuple[str, ...]:
        # an anchor (the closure's first member, bound by the joins) is a member of the list from here on
        return tuple(v for v in self.input.vars if v != self.closure.anchor)


@dataclass(frozen=True, slots=True)
class GroupCollect(_Unary):
    """The lists of a Kleene group for each record of ``input`` (KSEQ over a group, ZStream 4.4.5;
    semantics section 6.1).

    ``body``: the join tree of the group's body (scans of its variables,
    joins carrying its iteration-local conjuncts): its records are the
    iterations.  ``group`` (:class:`jitcep.plan.logical.Group`): an
    iteration joins a record when it lies in the record's range (between its
    neighbours), shares none of its events and passes the member-wise
    conjuncts with it; a list chains iterations as the group's kind says,
    consecutive ones passing the iterative conjuncts, the whole list its
    list conjuncts.  ``per_iteration`` (``kleene_window="iteration"``,
    section 2): each iteration fits the window with the record's events
    outside every group, iterations need not fit it together.
    """

    body: "Operator" = None
    group: Group = None
    per_iteration: bool = False

    @property
    def vars(self) -> tuple[str, ...]:
        # an anchor (the first iteration, bound by the joins) is an iteration of the lists from here on
        return tuple(v for v in self.input.vars if v not in self.group.anchor)

    @property
    def children(self) -> tuple:
        return (self.input, self.body)


@dataclass(frozen=True, slots=True)
class Contiguity(_Unary):
    """Records of ``input`` whose variables of each group of ``groups`` that are all bound occupy
    consecutive positions of their stream, in the listed order (``contiguous=``, semantics section 9).
    Placed under the negations over whole matches: section 9 applies it before negation (both
    filter single matches, so only the cost depends on the order)."""

    groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class OutputPolicy(_Unary):
    """The matches ``policy`` keeps among the records of ``input``, scanned in canonical order
    (``output=``: SASE+ section 2 non-overlapping, OpenCEP's match_single / match_next; semantics
    section 9).  ``consume_types``: the types whose events a match consumes (None: all)."""

    policy: Literal["non_overlapping", "match_single", "match_next"] = "non_overlapping"
    consume_types: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class NfaRuns:
    """The accepted runs of a linear pattern's NFA^b automaton under ``strategy`` (SASE+ 3.1-3.2; section 8).

    ``states``: one leaf per singleton state, in SEQ order (type test and
    single-variable filters: the begin edge's one-event part); ``edges``:
    per state, the conjuncts whose last identifier is that state's variable
    (SASE+ 3.2 step 2), tested on the run's events and the new one.  Every
    begin edge also keeps the run in its ``[attr]`` partition, within the
    window from its first event, and (``strict_ts``) later than its last
    event.  ``stream``: under partition contiguity, every event of the key
    partition, whose next event a run must take (the ignore edge skips only
    other partitions); None otherwise.  ``closure``: the Kleene state's array
    variable (its leaf is the state of ``closure.var``, its edge the take
    edge: member-wise and iterative conjuncts; the list conjuncts reading the
    whole list its proceed edge), None without one.  ``first``: the list
    conjuncts reading only ``b[1]``, written over the new member: the take
    edge tests them on a run's first take (section 8).  ``list_edges``: per state
    after the Kleene state, the conjuncts of its begin edge that read the
    Kleene list too (SASE+ 3.2 step 2: their last identifier is the state's),
    each of the kind :func:`list_edge_kind` names; empty without a closure.
    """

    states: tuple[Scan, ...]
    edges: tuple[tuple[E.Expr, ...], ...]
    strategy: SelectionStrategy
    stream: Scan | None = None
    closure: Closure | None = None
    first: tuple[E.Expr, ...] = ()
    list_edges: tuple[tuple[E.Expr, ...], ...] = ()

    def __post_init__(self):
        if len(self.edges) != len(self.states):
            raise UnsupportedPatternError(f"{len(self.edges)} edges for {len(self.states)} NFA^b states")
        if self.list_edges and (self.closure is None or len(self.list_edges) != len(self.states)):
            raise UnsupportedPatternError(f"{len(self.list_edges)} list edges for {len(self.states)} NFA^b states "
                                          f"{'without' if self.closure is None else 'with'} a Kleene state")
        names = [s.var for s in self.states]
        # the take edge's v[i-1]: a member already taken
        taken = {prev_var(self.closure.var)} if self.closure is not None else set()
        for s, preds in enumerate(self.edges):
            preds = preds + (self.list_edges[s] if self.list_edges else ())
            later = set().union(*(E.variables(p) for p in preds)) - set(names[:s + 1]) - taken
            if later:
                raise UnsupportedPatternError(f"predicate on {sorted(later)} placed on the begin edge of "
                                              f"{names[s]!r}, before them")
            if self.list_edges and self.list_edges[s] and s <= names.index(self.closure.var):
                raise UnsupportedPatternError(f"a conjunct on the list {self.closure.var}[] placed on the begin "
                                              f"edge of {names[s]!r}, not after the Kleene state")

    @property
    def vars(self) -> tuple[str, ...]:
        """The singleton states' variables (the Kleene state's members are a list, not a column)."""
        kv = self.closure.var if self.closure is not None else None
        return tuple(s.var for s in self.states if s.var != kv)

    @property
    def children(self) -> tuple:
        return self.states + ((self.stream,) if self.stream is not None else ())


def list_edge_kind(p: E.Expr, kv: str) -> Literal["member", "prev", "list"]:
    """How a conjunct of :attr:`NfaRuns.list_edges` reads the Kleene list ``kv``: "member" (``kv.x`` for every
    member), "prev" (``kv.x`` and ``prev_var(kv).x`` for every two consecutive members; none at the first,
    semantics section 4) or "list" (aggregates, ``kv[k]``, ``kv[kv.LEN]``: once on the whole list)."""
    if prev_var(kv) in E.variables(p):
        return "prev"
    whole = any(isinstance(n, E.Agg) and n.var == kv or isinstance(n, E.Attr) and n.var == kv
                and n.index is not None for n in E.walk(p))
    return "list" if whole else "member"


def rebuild_joins(node, fn):
    """``node`` with every binary operator replaced, bottom up, by ``fn(operator with its inputs
    rebuilt)``; scans and NFA^b runs (no join under them) as they are, an operator over one input
    with its input rebuilt."""
    if isinstance(node, (Scan, NfaRuns)):
        return node
    if isinstance(node, _Unary):
        return dataclasses.replace(node, input=rebuild_joins(node.input, fn))
    if isinstance(node, DisjunctUnion):
        return dataclasses.replace(node, inputs=tuple(rebuild_joins(i, fn) for i in node.inputs))
    return fn(dataclasses.replace(node, left=rebuild_joins(node.left, fn), right=rebuild_joins(node.right, fn)))


Operator = TypingUnion[Scan, SeqJoin, AndJoin, Union, DisjunctUnion, NegationFilter, KleeneCollect, GroupCollect,
                       Contiguity, OutputPolicy, NfaRuns]
Join = (SeqJoin, AndJoin)
KeyCoding = Literal["none", "records", "labels", "values", "types", "dense"]


@dataclass(frozen=True)
class PhysicalPlan:
    """A physical plan for one pattern.

    ``key``: attributes of the pattern-wide equivalence test (``[a1, a2]``);
    records only ever join within one key partition (ZStream 5.4 hash
    partitioning).  ``key_coding``: how the partition codes are made
    (:mod:`jitcep.plan.rules.key_coding`; None until a table is known).
    ``constants``: conjuncts without variables, evaluated once.
    ``variables``: the single-event variables in pattern order (the match
    table's, whatever order the join tree binds them in); ``list_vars``:
    the array variables and the Kleene groups' variables.
    """

    pattern: Pattern
    root: Operator
    variables: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    constants: tuple[E.Expr, ...] = ()
    window: Window | None = None
    key_coding: KeyCoding | None = None
    statistics: object = None  # what the planner chose the join order on (None: "trivial", no statistics)
    span: float | None = None  # the window's extent in its measure, as the planner counted it
    notes: tuple[str, ...] = ()  # what the planner's search says of its plan (an exact search past its budget)
    form: Literal["unit", "dnf"] | None = None  # an OR planned as one unit or in DNF (None: not priced)
    form_costs: tuple[tuple[str, float], ...] = ()  # (form, cost) of each form priced (rules/disjuncts.py)

    def __post_init__(self):
        if self.root is None:  # being built by the rules
            return
        if not self.variables:
            object.__setattr__(self, "variables", self.root.vars)
        elif sorted(self.variables) != sorted(self.root.vars):
            raise UnsupportedPatternError(f"plan variables {list(self.variables)} are not its operators' "
                                          f"{list(self.root.vars)}")

    @property
    def list_vars(self) -> tuple[str, ...]:
        # dict.fromkeys: the alternatives of a plan in DNF may each collect the same closure or group
        return tuple(dict.fromkeys(v for n in self.nodes() for v in (
            n.group.vars if isinstance(n, GroupCollect) else (n.closure.var,)
            if isinstance(n, (KleeneCollect, NfaRuns)) and n.closure is not None else ())))

    def nodes(self) -> list:
        """Every operator, post-order (children before parents)."""
        out = []

        def rec(n):
            for c in n.children:
                rec(c)
            out.append(n)
        rec(self.root)
        return out

    def leaves(self) -> list:
        """What reads events of a type (:class:`Scan`, :class:`Negated`, :class:`Closure`), in build order."""
        return [n if isinstance(n, Scan) else n.neg if isinstance(n, NegationFilter) else n.closure
                for n in self.nodes() if isinstance(n, (Scan, NegationFilter, KleeneCollect))]

    def predicates(self) -> list[E.Expr]:
        """Every conjunct the plan evaluates with the generated predicate function."""
        out = list(self.constants)
        for n in self.nodes():
            if isinstance(n, Scan):
                out += [n.filter] if n.filter is not None else []
            elif isinstance(n, Join):
                out += n.predicates
            elif isinstance(n, NegationFilter):
                out += ([n.neg.filter] if n.neg.filter is not None else []) + list(n.neg.conds)
            elif isinstance(n, KleeneCollect):
                out += [p for p in (n.closure.filter, *n.closure.member, *n.closure.prev, *n.closure.cross)
                        if p is not None]
            elif isinstance(n, GroupCollect):  # its body's scans and joins are nodes of their own
                out += [*n.group.member, *n.group.prev, *n.group.cross]
            elif isinstance(n, NfaRuns):
                out += [p for edge in n.edges for p in edge] + list(n.first)
                out += [p for edge in n.list_edges for p in edge if list_edge_kind(p, n.closure.var) != "list"]
        return out
