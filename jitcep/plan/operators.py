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
- :class:`SemiJoinReduce`: over the joins of a SEQ, the leaves reduced first to
  the events that can belong to a match (Yannakakis' semi-join full reducer).
- :class:`NegationFilter`: ZStream's NSEQ (4.4.2), the records of its input
  that no event of the negated variable kills (docs/semantics.md section 7),
  placed on the lowest join that fixes the negation's range or on whole matches.
- :class:`KleeneCollect`: ZStream's KSEQ (4.4.5), the lists of the closure's
  members for each record of its input (semantics section 6).
- :class:`ListFilter`: a closure's conjuncts that read a variable joined after
  its collection, tested on the lists the joins carried up.
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
import functools
from dataclasses import dataclass
from typing import Literal, NamedTuple, Union as TypingUnion

from .._typing import SelectionStrategy
from ..errors import UnsupportedPatternError
from ..pattern import expr as E
from ..pattern.ast import Pattern, Window
from ..pattern.expr import map_expr
from .kleene_refs import member_var, prev_var
from .logical import Closure, Group, Negated

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
    (empty: chosen by rule).  ``extends``: the join lies under a
    :class:`SemiJoinReduce` and binds a run of its chain short of the whole,
    so its candidate pairs are kept only where they extend to a chain.
    ``rows``: as the final join with nothing left to test on its pairs, right
    records driving and a leaf input, it may write the match table's rows
    itself (:func:`jitcep.kernels.final_join.seq_join_rows`, passes over
    arrays of one entry per table position); False: it makes its pairs and
    puts them in canonical order instead (a plan chosen on statistics, where
    that is estimated cheaper: few matches in a large table,
    :func:`jitcep.plan.planner.cost.final_join_cost`).
    """

    driver: Driver = "right"
    overlap: bool = True
    costs: tuple[tuple[str, float], ...] = dataclasses.field(default=(), compare=False)
    extends: bool = False
    rows: bool = True


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
    extends: bool = False


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
    it tests no predicate (each alternative tests its own).  ``empty`` (one entry per input, or none):
    the list variables that alternative binds to the empty list (:mod:`jitcep.pattern.nonempty`: a
    closure it takes with no member), rather than leaving them unbound; ``constants`` (likewise): the
    conjuncts over no variable that hold only for that alternative's matches (a closure's conjunct read
    on its empty list), each evaluated once: unless all are TRUE the input does not run.
    """

    inputs: tuple["Operator", ...]
    vars: tuple[str, ...]
    empty: tuple[tuple[str, ...], ...] = ()
    constants: tuple[tuple[E.Expr, ...], ...] = ()

    def __post_init__(self):
        if len(self.inputs) < 2:
            raise UnsupportedPatternError("a DNF union needs two alternatives or more")
        if len(self.empty) not in (0, len(self.inputs)) or len(self.constants) not in (0, len(self.inputs)):
            raise UnsupportedPatternError("a DNF union's empty lists and constants are one entry per alternative")
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
class SemiJoinReduce(_Unary):
    """The joins of ``input`` over only the leaf events that lie on a chain of the SEQ ``chain``
    (Yannakakis' full reducer, the window as a band; :mod:`jitcep.kernels.reduction`).

    ``chain``: the pattern's variables in SEQ order, each read by one :class:`Scan` of ``input``.  An
    event of v_i lies on a chain when events of v_1 .. v_k of the leaves (type test, filter, ``freeze``),
    in one key partition, are each before the next with ``e_i`` among them and the whole within the
    window.  Every event of a match lies on a chain, so the scans give the joins only those; the joins
    marked ``extends`` keep only the partial records that extend to a chain.  Multi-variable
    predicates are not used: the pass is exact for "extends to a match of the types, key and window",
    a superset of the matches' events, so no match is lost.

    Sound, so planned (:mod:`jitcep.plan.rules.semijoin_reduction`), only where a chain is what every
    match contains: a SEQ of single variables (negations anywhere: they only remove matches; no
    closure, Kleene group, OR or AND; a DNF alternative that is such a SEQ), under skip-till-any-match
    (the other strategies run NFA^b runs instead of joins), with a window whose measure ascends along
    before() (not a count window under ``nondecreasing_ts``).  Output policies, ``contiguous`` and
    negations over whole matches lie above it and see the same matches; ``freeze`` acts in the scans,
    before it.
    """

    chain: tuple[str, ...] = ()


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
    stretch a list past a count window (under ``nondecreasing_ts``; or with a
    Kleene group in the plan), so each list's span is checked.  ``runs``: every list conjunct reads the closure
    only through aggregates and its lists are runs of the members
    (``mode`` "maximal"), so the conjuncts are tested on the runs, int sums
    from prefix sums, and only the lists that pass are gathered.
    ``bound``: the closures the SEQ orders after this one that every match
    of a record holds a member of (``min`` >= 1, the same OR branch) and
    that are collected later: a record with no candidate of one in range
    has no match, and this closure's members lie before the last one.
    ``prune``: negations over whole matches that kill every list holding a
    member they kill alone (an AND span they read grows with the list, and
    no positive event can be one of their candidates): under ``mode``
    "all" a member whose single-member list such a negation kills is no
    member, so no list is made that the negation would drop (the negation
    still filters the matches).
    ``placement``: "top" over the whole join tree, "lower" on a join fixing
    its range (Kolchinsky & Schuster 4: ``T'`` placed early), the joins
    above carrying each record's lists
    (:mod:`jitcep.plan.rules.kleene_collection`); ``costs``: the whole plan
    priced under each placement, (placement, cost) pairs (empty: placed by
    rule, or by the join-order search: ``searched``, the closure having been
    a unit of its problem).
    """

    closure: Closure = None
    mode: KleeneMode = "all"
    span_check: bool = False
    runs: bool = False
    bound: tuple[Closure, ...] = ()
    placement: Literal["top", "lower"] = "top"
    prune: tuple[Negated, ...] = ()
    costs: tuple[tuple[str, float], ...] = dataclasses.field(default=(), compare=False)
    searched: bool = dataclasses.field(default=False, compare=False)

    @property
    def vars(self) -> tuple[str, ...]:
        # an anchor (the closure's first member, bound by the joins) is a member of the list from here on;
        # below the root its column stays for the joins above (the SEQ's order, its member-wise conjuncts)
        return tuple(v for v in self.input.vars if v != self.closure.anchor or self.placement == "lower")


@dataclass(frozen=True, slots=True)
class ListFilter(_Unary):
    """The records of ``input`` whose list of closure ``var`` passes conjuncts that also read a variable
    joined after the closure was collected (Kolchinsky & Schuster 4: ``T'`` is joined early and its
    predicates with a later unit are tested where that unit joins; semantics sections 4, 6).

    Split off the closure's :class:`KleeneCollect`, which went below the join binding that variable
    (:mod:`jitcep.plan.rules.kleene_split`), and placed on the lowest join above it that binds every
    variable they read; the joins between carried each record's list.  In the forms of
    :class:`~jitcep.plan.logical.Closure`: ``member``, member-wise (every member passes, ``var`` read as
    the member); ``prev``, iterative (every member from the second on with the one before it, as
    :func:`~jitcep.plan.kleene_refs.prev_var`); ``lists``, read on the whole list once; ``each``, a member
    together with the whole list, for every member.  ``group``: the variables of a Kleene group that
    ``var`` leads (empty for a closure), whose lists are aligned by iteration: a member is then an
    iteration, each conjunct reading its events by the group's variables (:class:`~jitcep.plan.logical.Group`).
    """

    var: str = ""
    member: tuple[E.Expr, ...] = ()
    prev: tuple[E.Expr, ...] = ()
    lists: tuple[E.Expr, ...] = ()
    each: tuple[E.Expr, ...] = ()
    group: tuple[str, ...] = ()

    @property
    def conjuncts(self) -> tuple[E.Expr, ...]:
        return self.member + self.prev + self.lists + self.each

    @property
    def kleene_vars(self) -> tuple[str, ...]:
        """The Kleene variables whose carried lists it reads: the closure's, or the group's."""
        return self.group or (self.var,)


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
    ``placement``: "top" over the whole join tree, "lower" on a join fixing
    its range, where the join-order search put the group's ``T'``
    (``searched``; :mod:`jitcep.plan.rules.kleene_units`).
    """

    body: "Operator" = None
    group: Group = None
    per_iteration: bool = False
    placement: Literal["top", "lower"] = "top"
    searched: bool = dataclasses.field(default=False, compare=False)

    @property
    def vars(self) -> tuple[str, ...]:
        # an anchor (the first iteration, bound by the joins) is an iteration of the lists from here on;
        # below the root its columns stay for the joins above (the SEQ's order, its member-wise conjuncts)
        return tuple(v for v in self.input.vars if v not in self.group.anchor or self.placement == "lower")

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

    ``states``: one leaf per state, in SEQ order (type test and the
    one-event filters: the begin / take edge's one-event part); a state whose
    variable is one of ``closures`` (the array variables, in state order) is
    a Kleene state, the others singleton states.  Per state (SASE+ 3.2 step
    2: each conjunct on the edge of its last identifier): ``edges``, the
    conjuncts of its begin / take edge over single events (earlier states'
    variables, the new event as the state's variable and, at a Kleene state,
    :func:`~jitcep.plan.kleene_refs.prev_var` as the run's last member);
    ``list_edges``, those of the begin / take edge that read a list (written
    in :func:`nfa_form`: tested on the run's lists with the new event, a
    take edge's own closure only on its new member); ``proceeds``, a Kleene
    state's proceed-edge conjuncts (aggregates, ``b[k]``, ``b[b.LEN]`` of its
    own list, in :func:`nfa_form`), tested on the completed lists.  Every
    begin edge also keeps the run in its ``[attr]`` partition, within the
    window from its first event, and (``strict_ts``) later than its last
    event.  ``stream``: under partition contiguity, every event of the key
    partition, whose next event a run must take (the ignore edge skips only
    other partitions); None otherwise.
    """

    states: tuple[Scan, ...]
    edges: tuple[tuple[E.Expr, ...], ...]
    strategy: SelectionStrategy
    stream: Scan | None = None
    closures: tuple[Closure, ...] = ()
    list_edges: tuple[tuple[E.Expr, ...], ...] = ()
    proceeds: tuple[tuple[E.Expr, ...], ...] = ()

    def __post_init__(self):
        S = len(self.states)
        if len(self.edges) != S or len(self.list_edges) not in (0, S) or len(self.proceeds) not in (0, S):
            raise UnsupportedPatternError(f"edges {len(self.edges)}, {len(self.list_edges)}, {len(self.proceeds)} "
                                          f"for {S} NFA^b states")
        names = [s.var for s in self.states]
        kvs = {K.var for K in self.closures}
        if not kvs <= set(names):
            raise UnsupportedPatternError(f"Kleene states {sorted(kvs - set(names))} are no NFA^b states")
        for s, preds in enumerate(self.edges):
            # the take edge's v[i-1]: a member already taken
            known = set(names[:s + 1]) | ({prev_var(names[s])} if names[s] in kvs else set())
            later = set().union(*(E.variables(p) for p in preds)) - known
            if later:
                raise UnsupportedPatternError(f"predicate on {sorted(later)} placed on the begin edge of "
                                              f"{names[s]!r}, before them")

    @property
    def vars(self) -> tuple[str, ...]:
        """The singleton states' variables (a Kleene state's members are a list, not a column)."""
        kvs = {K.var for K in self.closures}
        return tuple(s.var for s in self.states if s.var not in kvs)

    @property
    def children(self) -> tuple:
        return self.states + ((self.stream,) if self.stream is not None else ())


def nfa_form(e: E.Expr, kvs) -> E.Expr:
    """Conjunct ``e`` as :class:`NfaRuns` tests it on lists: a member-wise reference to closure ``kv`` of
    ``kvs`` (``kv[i].x``, plain ``kv.x``) as :func:`~jitcep.plan.kleene_refs.member_var` ``(kv).x``, ``kv[i-1].x``
    as :func:`~jitcep.plan.kleene_refs.prev_var` ``(kv).x`` (quantified over every member, semantics section 4);
    aggregates, ``kv[k]`` and ``kv[kv.LEN]`` as written (read on the list)."""
    names = {None: member_var, "i": member_var, "i-1": prev_var}
    return map_expr(e, lambda x: E.Attr(names[x.index](x.var), x.attr)
                    if isinstance(x, E.Attr) and x.var in kvs and x.index in names else None)


def rebuild_joins(node, fn):
    """``node`` with every binary operator replaced, bottom up, by ``fn(operator with its inputs
    rebuilt)``; scans and NFA^b runs (no join under them) as they are, an operator over one input
    with its input rebuilt.  An operator whose inputs come back unchanged (the same objects) is kept,
    not copied: a plan's rules rebuild its tree several times, and the copies were a sixth of a first
    plan's rules (``dataclasses.replace``, perf/notes/planning_time.md "The planning share under 5%")."""
    def join(op, left, right):
        if left is not op.left or right is not op.right:
            op = dataclasses.replace(op, left=left, right=right)
        return fn(op)
    return _rebuilt(node, join)


def remake_joins(node, changes):
    """:func:`rebuild_joins` where the rule says what to change rather than making the operator:
    ``changes(operator)`` gives the fields to set (a dict, read on the operator as it was, whose
    inputs' variables the rebuilt ones keep; empty: none), and each operator is copied at most once,
    with its new inputs and those fields together (:func:`rebuild_joins` copies one whose input changed,
    then its rule copies it again: nine copies for the five joins of a SEQ of 6)."""
    def join(op, left, right):
        fields = changes(op)
        if left is not op.left or right is not op.right:
            fields = {**fields, "left": left, "right": right}
        return dataclasses.replace(op, **fields) if fields else op
    return _rebuilt(node, join)


def _rebuilt(node, join):
    """``node`` rebuilt bottom up: each binary operator by ``join(operator, its rebuilt left, right)``, the
    other operators over changed inputs copied, unchanged ones kept."""
    if isinstance(node, (Scan, NfaRuns)):
        return node
    if isinstance(node, _Unary):
        got = _rebuilt(node.input, join)
        return node if got is node.input else dataclasses.replace(node, input=got)
    if isinstance(node, DisjunctUnion):
        got = tuple(_rebuilt(i, join) for i in node.inputs)
        return node if all(a is b for a, b in zip(got, node.inputs)) else dataclasses.replace(node, inputs=got)
    return join(node, _rebuilt(node.left, join), _rebuilt(node.right, join))


Operator = TypingUnion[Scan, SeqJoin, AndJoin, Union, DisjunctUnion, SemiJoinReduce, NegationFilter, KleeneCollect,
                       ListFilter, GroupCollect, Contiguity, OutputPolicy, NfaRuns]
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
    # where the join-order search put each closure it planned as a unit (rules/join_order.py): (closure
    # variable, the variables of its sibling in the searched tree); rules/kleene_collection.py collects it there
    kleene_places: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # every operator, post-order: one walk of the tree per plan, which its checks and readers share (the rules
    # copy a plan with dataclasses.replace several times: one walk per copy, not one per check)
    _nodes: tuple = dataclasses.field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.root is None:  # being built by the rules
            return
        every = tuple(nodes(self.root))
        object.__setattr__(self, "_nodes", every)
        # the anchors of closures and groups collected below the root stay in the operators' records (for
        # the joins above), not in the match table
        kept = kept_anchors(every)
        bound = tuple(v for v in self.root.vars if v not in kept)
        if not self.variables:
            object.__setattr__(self, "variables", bound)
        elif sorted(self.variables) != sorted(bound):
            raise UnsupportedPatternError(f"plan variables {list(self.variables)} are not its operators' "
                                          f"{list(bound)}")

    @functools.cached_property
    def list_vars(self) -> tuple[str, ...]:
        """The variables whose lists the plan makes (kept: the executor's operators ask on every run)."""
        return _list_vars(self._nodes)

    @functools.cached_property
    def predicates_read(self) -> tuple[tuple[E.Expr, ...], frozenset[str]]:
        """(:meth:`predicates`, the attributes they read but ``ts``), kept: the executor asks on every run,
        and each answer walks the tree and the conjuncts."""
        preds = tuple(self.predicates())
        return preds, E.columns_read(preds)

    @functools.cached_property
    def reads(self) -> "LeafReads":
        """What the plan's leaves read (:class:`LeafReads`), kept: a table context asks on every run (walking
        the tree each time would be a fifth of its calls)."""
        types: dict[str, None] = {}
        typed = untyped = False
        for n in self.leaves():
            if n.types is None:
                untyped = True
            else:
                typed = True
                types.update(dict.fromkeys(n.types))
        reduced = frozenset(t for n in self._nodes if isinstance(n, SemiJoinReduce)
                            for s in _chain_scans(n.input, set(n.chain)) for t in (s.types or ()))
        return LeafReads(tuple(types) if typed else None, untyped, reduced)

    def nodes(self) -> list:
        """Every operator, post-order (children before parents)."""
        return list(self._nodes)

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
            elif isinstance(n, ListFilter):  # its list conjuncts are compiled where they are tested
                out += [*n.member, *n.prev]
            elif isinstance(n, DisjunctUnion):
                out += [c for cs in n.constants for c in cs]
            elif isinstance(n, GroupCollect):  # its body's scans and joins are nodes of their own
                out += [*n.group.member, *n.group.prev, *n.group.cross]
            elif isinstance(n, NfaRuns):
                out += [p for edge in n.edges for p in edge]  # the list edges are compiled where they are tested
        return out


class LeafReads(NamedTuple):
    """What a plan's leaves read (:attr:`PhysicalPlan.reads`).

    ``types``: the types its leaves ask for, in the order it builds them (None without a typed leaf);
    ``untyped``: whether some leaf is untyped; ``reduced``: the types of the leaves a semi-join
    reduction reads before any join.
    """

    types: tuple[str, ...] | None
    untyped: bool
    reduced: frozenset[str]


def _chain_scans(node, chain: set):
    """The scans of the variables ``chain`` under ``node`` (a semi-join reduction's input)."""
    if isinstance(node, Scan) and node.var in chain:
        yield node
    for c in node.children:
        yield from _chain_scans(c, chain)


def nodes(root) -> list:
    """Every operator under ``root`` (itself included), post-order (children before parents)."""
    out = []

    def rec(n):
        for c in n.children:
            rec(c)
        out.append(n)
    rec(root)
    return out


def kept_anchors(every) -> set[str]:
    """The anchors (:attr:`~jitcep.plan.logical.Closure.anchor`, :attr:`~jitcep.plan.logical.Group.anchor`) of
    the closures and groups collected below the root among the operators ``every`` (a plan's,
    :meth:`PhysicalPlan.nodes`), whose columns the records above keep."""
    return {a for n in every if isinstance(n, (KleeneCollect, GroupCollect)) and n.placement == "lower"
            for a in ((n.closure.anchor,) if isinstance(n, KleeneCollect) else n.group.anchor) if a}


def list_vars(root) -> tuple[str, ...]:
    """The array variables and Kleene groups' variables whose lists the operators under ``root`` make."""
    return _list_vars(nodes(root))


def _list_vars(every) -> tuple[str, ...]:
    """:func:`list_vars` of the operators ``every`` (post-order)."""
    # dict.fromkeys: the alternatives of a plan in DNF may each collect the same closure or group
    return tuple(dict.fromkeys(v for n in every for v in (
        n.group.vars if isinstance(n, GroupCollect) else (n.closure.var,)
        if isinstance(n, KleeneCollect) else tuple(K.var for K in n.closures) if isinstance(n, NfaRuns)
        else ())))
