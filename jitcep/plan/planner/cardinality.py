"""Cardinality estimation: statistics -> a join-order problem, and estimated rows per physical operator.

:func:`join_problem` is Kolchinsky & Schuster's reduction of CEP plan
generation to join ordering (2018, sections 3-4): each unit a relation of
``card = W * r`` records (W: the window ``span``, r: the unit's rate in one
key partition), each pair the product of the selectivities between them, a
SEQ's order counted as a predicate of selectivity 1/2 per ordered pair
(section 4, "sequence patterns"; ZStream's ``Pt`` default, Table 1) in
``sel``, while a set's PM takes the order as the share of its tuples in
order, ``e(S) / |S|!`` (:mod:`.order_share`; :attr:`EstimatedProblem.masks`;
docs/planning.md "The order's selectivity").  An OR
is one unit (its items are united before anything outside joins them): its
card is the sum of its items' records, in the DNF sense of section 4
("nested patterns"): every choice of one branch per OR inside it is an
*alternative*, whose records are the PM of its variables.

A closure that may be collected below the root (the Kleene rule says which)
is one more unit, section 4's ``T'`` ("Kleene closure patterns"): its card
the lists per record of the join fixing its range (below, ``KleeneCollect``),
its selectivity 1 with every unit (its order against its neighbours and its
conjuncts are in that card), admitted only beside a plan covering what fixes
its range (:class:`~jitcep.plan.planner.problem.ClosureUnit`).  A conjunct
reading it with a unit joined later, which its collection leaves to a
:class:`~jitcep.plan.operators.ListFilter`, is a predicate between ``T'``
and that unit instead, of selectivity the share of the lists passing it
(:func:`~.kleene_lists.split_shares`), as the paper's ``T'`` keeps its predicates.

A conjunct over k > 2 variables is split evenly in log space over its
C(k, 2) pairs: each pair gets ``sel ** (1 / C(k, 2))``, so the PM of a set
holding all k variables has exactly ``sel``, and one holding some of them
a share of it (Kolchinsky's model is pairwise; they note it generalises).
A negation that can filter partial matches (its ``anchor``: the variables
fixing its range, :mod:`jitcep.plan.rules.negation_placement`) is such a
conjunct over its anchor, of selectivity the chance that no negated event
falls in the range (below): Kolchinsky section 4 checks a negation "at the
earliest point possible", so the partial matches holding its anchor are the
ones it thinned, and an order joining the anchor early is priced as such.

:func:`estimate_rows` estimates each physical operator's records over the
whole table.  Records of an alternative S of k variables: ``P * (T / W) * k
* PM(S)`` (P partitions, T the table's extent in the window measure): the
number of k-tuples of independent arrival processes whose span fits the
window in a stream of length T is ``T * k * W^(k-1) * prod(r)``, and
``PM(S) = W^k * prod(r) * sels``.  So a Scan holds ``r * T * P`` records
(its events), and a join of inputs of ``Ra`` and ``Rb`` records holds
``Ra * Rb * cross * k / (ka * kb * P * T / W)`` with ``cross`` its own
predicates' selectivities and the share of its pairs in order (SeqJoin:
``1 / C(ka + kb, ka)``; AndJoin: ``share(S) / (share(L) share(R))`` over
the order its joins test, :class:`~.plan_order.PlanOrder`): ZStream's Table 2 output
cardinality ``CARD_A * CARD_B * Pt * P_AB`` scaled from one window to the
table.  A Union's records are the sum of its inputs' (Table 2, Disjunction), and so are a
DisjunctUnion's (the alternatives of a pattern in DNF, Kolchinsky section 4).

A NegationFilter keeps a record when no negated event falls in its range:
with the negated events a Poisson process of rate ``r_n * sel(conds)``
(Kolchinsky section 4, "negation patterns": the test is a filter on the
positive matches; ZStream 4.4.2 / Table 2 prices it from ``Pt``), over a
range whose length varies over the records as a closure's does
(:mod:`~jitcep.plan.planner.ranges`: the gaps between its neighbours, an
open side adding the window's slack, an AND-bounded side ending at the
record's first / last event, docs/semantics.md section 7), so the chance is
the mean of ``exp(-r_n * sel(conds) * len)`` over the records
(:func:`~.negation_range.none_in_range`).

Under a selection strategy other than skip-till-any-match the plan is the
NFA^b runs (:class:`~jitcep.plan.operators.NfaRuns`); Kolchinsky section 5.2
prices them: :func:`~.next_match.next_match_partials` gives ``m[k]`` per window, the runs'
matches are ``m[n]`` scaled to the table (``P * T / W``) and their work
(``C_i``) is ``sum(m[k])`` scaled so (``Cost_next_ord``).  The contiguity
factor takes the states' own events per window as the events a neighbour
must be next among (a lower bound: the statistics hold no rate of the other
types), as :func:`jitcep.plan.planner.cost.strategy_cost` does by default.

A KleeneCollect turns each record into its lists (ZStream 4.4.5 / Table 2
KSEQ; Kolchinsky section 4 "Kleene closure": 2^N subsets of N events): its
N members in the range are Poisson of mean ``r_c * sel(member) * len``, and
``len`` varies over the records as a Beta share of the window
(:mod:`~jitcep.plan.planner.ranges`: ``E[f(len)]``, not ``f(E[len])``);
``kleene="all"`` gives ``sum(L) E[C(N, L)] p^(L-1)`` lists, p the iterative
conjuncts' selectivity (subsets whose consecutive members pass them;
``e^m - 1`` at p = 1 and a fixed length; plus the empty list for ``*``, the
sum over the bounds for ``{n,m}``); ``"maximal"`` gives one list when a
member is there (``1 - E[exp(-m)]``; every run of n..m consecutive members
under bounds); list conjuncts multiply in, and one reading a member with the
list (``each``) of selectivity q passes a list of L members with ``q^L``
(:func:`~.kleene_lists.lists_per_record`).  A closure or group right
after another (adjacent) counts only the pairs of lists whose members lie
after the other's last member, over one range (:func:`~.adjacent_lists.adjacent_share`), and
a collection bounded by the closure after it keeps only the lists a
candidate of that one follows (:func:`~.adjacent_lists.kept_share`); one in an OR branch
only on the records through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import NamedTuple

from ...pattern import expr as E
from ...pattern.ast import Disj, EventVar, Node, Seq
from ...pattern.printer import expr_to_text
from ..._memo import PerObject
from ...pattern.structure import relation
from ..kleene_refs import display_expr
from ..logical import Group, LogicalPlan
from ..operators import (AndJoin, Contiguity, DisjunctUnion, GroupCollect, KleeneCollect, ListFilter, NegationFilter,
                         NfaRuns, OutputPolicy, PhysicalPlan, Scan, SemiJoinReduce, SeqJoin, Union)
from ..shapes import default_shape
from .adjacent_lists import adjacent_share, bounds, kept_share
from .chain_shares import run_shares
from .finite import saturated
from .kleene_lists import (branch_split_shares, construct_lists, construct_split_shares, group_lists,
                           lists_per_record)
from .negation_range import none_in_range
from .next_match import next_match_partials
from .order_share import ORDER_FACTOR, series_blocks, share
from .plan_order import PlanOrder
from .problem import ClosureUnit, JoinProblem
from .statistics import DEFAULT_RATE, DEFAULT_SELECTIVITY, Statistics


@dataclass(frozen=True)
class EstimatedProblem(JoinProblem):
    """A :class:`JoinProblem` built from statistics, keeping what ZStream's operator costs separate
    from ``sel``: ``order[i][j]``, the ordering factor folded into ``sel[i][j]`` (``Pt``; 1 for
    AND), ``predicates[i][j]``, the number of conjuncts between the two units (``n`` of
    ZStream's Formula 1), and ``before[i][j]``: every event of unit i precedes every event of
    unit j (a join of two sets of units ordered so is a SEQ join; any other is an AND join,
    testing the order on the pairs it examines); ``extends[a][b]`` (empty: none), where the units are a
    chain a semi-join reduction may be planned over, the share of the records of the run of units
    ``a..b`` that extend to a whole chain (:func:`~.chain_shares.run_shares`)."""

    order: tuple[tuple[float, ...], ...] = ()
    predicates: tuple[tuple[int, ...], ...] = ()
    before: tuple[tuple[bool, ...], ...] = ()
    extends: tuple[tuple[float, ...], ...] = ()

    @cached_property
    def masks(self):
        """Memoised set functions over bitmasks of units (bit i: unit i), so
        :func:`jitcep.plan.planner.cost.zstream_node` prices a join in O(1) as the searches need
        (``algorithms._common``); None when the units' order is no series-parallel order of whole units
        (an OR unit mixing ordered and unordered alternatives: its ordering factors are not
        :data:`ORDER_FACTOR` or 1; :func:`~.order_share.series_blocks`), where the order stays a pairwise
        factor.  ``share(S)``: the fraction of S's tuples in the pattern's order
        (:func:`~.order_share.share`, docs/planning.md "The order's selectivity"); ``conjuncts(S)``:
        conjuncts within S; ``all_after(S)``: the units every unit of S precedes; ``blocks``: the order's
        series nodes; ``sel``: the pairwise selectivities without the order (``sel / order``);
        ``extends(S)``: the share of S's records a semi-join reduction keeps (:func:`extended`; 1 without
        ``extends``), by which PM(S) is multiplied."""
        n = self.n
        if len(self.order) != n or len(self.before) != n:
            return None
        below = [0] * n
        for i in range(n):
            for j in range(n):
                f = self.order[i][j]
                if i == j or f == 1.0:
                    continue
                if f != ORDER_FACTOR or not (self.before[j][i] or self.before[i][j]):
                    return None
                if self.before[j][i]:
                    below[i] |= 1 << j
        blocks = series_blocks(below)
        if blocks is None:
            return None
        after = [sum(1 << j for j in range(n) if self.before[i][j]) for i in range(n)]
        counts = self.predicates

        def memo(step, empty):
            table = {0: empty}

            def f(mask: int):
                out = table.get(mask)
                if out is None:
                    i = mask.bit_length() - 1
                    rest = mask ^ (1 << i)
                    out = table[mask] = step(f(rest), i, rest)
                return out
            return f

        def conjuncts_with(i, rest):
            return sum(c for j, c in enumerate(counts[i]) if rest >> j & 1)
        shares: dict[int, float] = {}

        def share_of(mask: int) -> float:
            out = shares.get(mask)
            if out is None:
                out = shares[mask] = share(blocks, mask)
            return out
        sel = tuple(tuple(s / o for s, o in zip(row, orow)) for row, orow in zip(self.sel, self.order))
        table = self.extends
        return _Masks(share_of, memo(lambda acc, i, rest: acc + conjuncts_with(i, rest), 0),
                      memo(lambda acc, i, rest: acc & after[i], (1 << n) - 1), blocks, sel,
                      (lambda mask: extended(table, mask)) if table else _whole)

    def pm(self, members) -> float:
        """PM(S) (section 3) with the order as the set function ``share(S)`` (:attr:`masks`) where there is
        one: ``prod(card) * prod(sel / order) * share(S)``, multiplied in the order of
        ``algorithms._common.Costing.pm``; else pairwise (:meth:`JoinProblem.pm`)."""
        masks = self.masks
        if masks is None:
            return super().pm(members)
        ms = sorted(members)
        out = 1.0
        for a, i in enumerate(ms):
            out *= self.card[i]
            row = masks.sel[i]
            for j in ms[:a]:
                out *= row[j]
        mask = sum(1 << i for i in ms)
        return out * masks.share(mask) * masks.extends(mask)


class _Masks(NamedTuple):
    share: object
    conjuncts: object
    all_after: object
    blocks: tuple
    sel: tuple
    extends: object


def _whole(mask: int) -> float:
    return 1.0


def extended(table, mask: int) -> float:
    """The share of the records of the units in ``mask`` that a semi-join reduction keeps at the join
    binding them, ``table[a][b]`` the share of a run ``a..b`` of the chain (:func:`~.chain_shares.run_shares`;
    what :func:`jitcep.kernels.join_search._extends` computes too): a join binding a run of two or more
    units short of the whole keeps only its records that extend to a chain (docs/planning.md "The reduction
    in the join order"); a single unit, the whole chain or a set that is no run is not tested so at its
    join: 1.  (Every tree reads the same reduced leaves; a product of the leaves' shares would price a set
    that is no run below the runs of the same events, the Poisson shares of one chain's events being far
    from independent.)"""
    low = mask & -mask
    if mask & (mask - 1) and not (mask + low) & mask:  # one run of two or more consecutive units
        return table[low.bit_length() - 1][mask.bit_length() - 1]
    return 1.0


def _units(node: Node) -> list[Node]:
    if isinstance(node, (EventVar, Disj)):
        return [node]
    return [u for c in node.items for u in _units(c)]


def _alternatives(node: Node) -> list[frozenset[str]]:
    """The variable sets of node's DNF alternatives: one branch chosen in every OR (section 4)."""
    if isinstance(node, EventVar):
        return [frozenset((node.name,))]
    if isinstance(node, Disj):
        return [a for c in node.items for a in _alternatives(c)]
    out = [frozenset()]
    for c in node.items:
        out = [a | b for a, b in product(out, _alternatives(c))]
    return out


class _Pairs:
    """The pairwise factors of one pattern: predicates split over variable pairs, SEQ order, and the
    negations that can filter partial matches (module docstring)."""

    def __init__(self, logical: LogicalPlan, stats: Statistics, span: float):
        self.orders = _layout(logical).orders
        self.pred: dict[frozenset, float] = {}
        for j in logical.joins:
            s = stats.selectivities.get(expr_to_text(j), DEFAULT_SELECTIVITY)
            self.spread(sorted(E.variables(j)), s)
        for neg in logical.negations:
            if neg.anchor is None or len(neg.anchor) < 2:  # filters whole matches only: no partial match thins
                continue
            conds = math.prod(stats.selectivities.get(expr_to_text(c), DEFAULT_SELECTIVITY) for c in neg.conds)
            kept = none_in_range(stats.rates.get(neg.var, DEFAULT_RATE) * conds, neg.before, neg.after, neg.in_conj,
                                 neg.anchor, max(float(span), 1.0))
            self.spread(sorted(neg.anchor), kept)

    def spread(self, vs, s: float) -> None:
        """A factor ``s`` over the variables ``vs``, split evenly in log space over their pairs."""
        exponent = 1.0 / math.comb(len(vs), 2)
        for a, x in enumerate(vs):
            for y in vs[a + 1:]:
                key = frozenset((x, y))
                self.pred[key] = self.pred.get(key, 1.0) * s ** exponent

    def order(self, x: str, y: str) -> float:
        return self.orders.get((x, y), 1.0)

    def factor(self, x: str, y: str) -> float:
        return self.pred.get(frozenset((x, y)), 1.0) * self.orders.get((x, y), 1.0)


class _Layout(NamedTuple):
    """What :func:`join_problem` reads of the pattern's structure alone, whatever the statistics: its
    units (what each stands for, and its variables), their DNF alternatives, the conjuncts between two units
    (Formula 1's n), whether every event of one precedes every event of the other, the latency unit,
    and :data:`ORDER_FACTOR` for each ordered pair of variables (``(x, y)``, both ways).  ``single``: each
    unit's variable when it is one (not an OR), by which ``index`` finds it; ``single_order``: the ordering
    factor between two such units (1 on the diagonal and beside an OR unit); ``mixed``: the pairs ``(i, j)``,
    i < j, with an OR unit, whose factors are averaged over its alternatives on the statistics."""

    units: tuple
    unit_vars: list
    alts: list
    count: list
    before: tuple
    latency: int | None
    orders: dict
    single: list
    index: dict
    single_order: tuple
    mixed: tuple


def _make_layout(logical: LogicalPlan) -> _Layout:
    body = logical.positive
    nodes = _units(body)
    units = tuple(n.name if isinstance(n, EventVar) else default_shape(n) for n in nodes)
    alts = [_alternatives(node) for node in nodes]
    names = sorted(frozenset().union(*(a for al in alts for a in al)))
    relations = {(x, y): relation(body, x, y) for x in names for y in names if x != y}
    orders = {pair: ORDER_FACTOR for pair, r in relations.items() if r in ("before", "after")}
    counted: dict[frozenset, int] = {}
    for j in logical.joins:
        vs = sorted(E.variables(j))
        for a, x in enumerate(vs):
            for y in vs[a + 1:]:
                key = frozenset((x, y))
                counted[key] = counted.get(key, 0) + 1
    n = len(nodes)
    units_of = [frozenset().union(*a) for a in alts]
    count = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            vi, vj = units_of[i], units_of[j]
            count[i][j] = count[j][i] = sum(c for k, c in counted.items() if k & vi and k & vj and k <= vi | vj)
    before = tuple(tuple(i != j and all(relations[(x, y)] == "before" for a in alts[i] for b in alts[j]
                                        for x in a for y in b) for j in range(n)) for i in range(n))
    latency = None
    if isinstance(body, Seq) and isinstance(body.items[-1], (EventVar, Disj)):
        latency = next(i for i, node in enumerate(nodes) if node is body.items[-1])
    # a unit of one variable (no OR) has one alternative of weight 1: the factors between two are its variables'
    single = [next(iter(al[0])) if len(al) == 1 and len(al[0]) == 1 else None for al in alts]
    index = {v: i for i, v in enumerate(single) if v is not None}
    single_order = tuple(tuple(orders.get((single[i], single[j]), 1.0) if i != j and single[i] is not None
                               and single[j] is not None else 1.0 for j in range(n)) for i in range(n))
    mixed = tuple((i, j) for i in range(n) for j in range(i + 1, n) if single[i] is None or single[j] is None)
    return _Layout(units, units_of, alts, count, before, latency, orders, single, index, single_order, mixed)


_layout = PerObject(_make_layout)  # logical plan -> _Layout: an analyst reruns one query (jitcep._memo)


def join_problem(logical: LogicalPlan, stats: Statistics, span: float, closures=(), chain=None) -> EstimatedProblem:
    """The join-order problem of ``logical`` under ``stats`` (module docstring): units in pattern order,
    an OR as one unit (its :func:`~jitcep.plan.shapes.default_shape`), ``card = span * rate`` (the sum
    over an OR's alternatives of their PM), ``sel`` the pairwise predicate selectivities times 1/2 per
    SEQ-ordered pair (averaged over an OR's alternatives, weighted by their records), ``latency`` the
    unit of the top-level SEQ's last item (None for AND / OR at the top, or when that item is an AND).

    ``closures``: ``(closure, need, mode, split)`` for each closure to plan as a unit (Kolchinsky &
    Schuster 4's ``T'``; which ones, ``need``, the variables its sibling must bind, and ``split``, the
    conjuncts its collection there leaves to be tested on its lists higher up, by form, are the Kleene
    rules': :func:`jitcep.plan.rules.kleene_units.closure_units`), after the others: its card the lists
    per record of the join binding ``need`` (:func:`_lists` under ``kleene=mode``), its selectivity 1
    with every unit, so ``PM(S + T') = PM(S) * lists`` for S covering ``need`` (docs/planning.md
    "Kleene placement"), but with the units a ``split`` conjunct reads: the share of lists passing
    it (:func:`~.kleene_lists.split_shares`), spread over those pairs, so a set holding T' and all of them has the
    lists the collection would have made with the conjunct.

    ``chain``: the SEQ's variables in order where a semi-join reduction may be planned over the joins
    (:func:`jitcep.plan.rules.semijoin_reduction.reduced_chain`): each set's PM then counts only the records the
    reduction keeps (``extends``, :func:`extended`), so that a search sees that a join binding a run of
    the chain holds only its records that extend to a chain, where a join of the chain's two ends does not
    (docs/planning.md "The reduction in the join order")."""
    span = float(span)
    pairs = _Pairs(logical, stats, span)
    layout = _layout(logical)
    weights, card = _unit_cards(layout, pairs, stats.rates, span)
    sel, order = _unit_factors(layout, pairs, weights)
    T = _closure_units(closures, logical, stats, layout, weights, max(span, 1.0))
    units, card = layout.units + T.names, card + T.cards
    m, n = len(card), len(layout.units)
    count, before = layout.count, layout.before
    sel = [row + [1.0] * (m - n) for row in sel] + [[1.0] * m for _ in range(m - n)]
    order = [row + [1.0] * (m - n) for row in order] + [[1.0] * m for _ in range(m - n)]
    count = [row + [0] * (m - n) for row in count] + [[0] * m for _ in range(m - n)]
    for k, read, passing in T.later:  # split evenly in log space over the pairs (T', unit)
        for i in read:
            sel[k][i] = sel[i][k] = sel[k][i] * passing ** (1.0 / len(read))
            count[k][i] = count[i][k] = count[k][i] + 1
    # a closure unit is neutral to whether a join is a SEQ join (its lists lie between its neighbours):
    # "before" and "after" every other unit, so ((a, c) + T', d) is priced as the SEQ join ((a, c), d)
    before = (tuple(row + (True,) * (m - n) for row in before)
              + tuple(tuple(i != j for j in range(m)) for i in range(n, m)))
    return EstimatedProblem(units, tuple(card), tuple(map(tuple, sel)), layout.latency, T.found,
                            order=tuple(map(tuple, order)), predicates=tuple(map(tuple, count)), before=before,
                            extends=_chain_extends(layout, chain, card) if m == n else ())


def _chain_extends(layout: _Layout, chain, card) -> tuple:
    """:attr:`EstimatedProblem.extends` for a ``chain`` (None: no reduction) whose variables are the units in
    index order; ``card[i]`` is unit i's ``W r``."""
    if chain is None or tuple(layout.single) != tuple(chain):
        return ()
    return run_shares(card)


def _unit_cards(layout: _Layout, pairs: _Pairs, rate: dict, span: float) -> tuple[list, list]:
    """(weights, card) per unit of ``layout``: an OR's card is the sum of its alternatives' PM (Kolchinsky
    & Schuster 3.2, each alternative's records with its pairwise factors), its weights their shares of
    it (even where all are 0); a unit of one variable has ``span * rate`` records and one weight of 1."""

    def records(S) -> float:
        out = math.prod(span * rate.get(v, DEFAULT_RATE) for v in S)
        vs = sorted(S)
        for a, x in enumerate(vs):
            for y in vs[a + 1:]:
                out *= pairs.factor(x, y)
        return out

    weights, card = [], []
    for al, v in zip(layout.alts, layout.single):
        if v is not None:  # records(frozenset((v,))) without the walk
            total = span * rate.get(v, DEFAULT_RATE)
            weights.append([1.0])  # its one alternative
            card.append(total)
            continue
        rs = [records(a) for a in al]
        total = sum(rs)
        weights.append([r / total for r in rs] if total > 0 else [1.0 / len(al)] * len(al))
        card.append(total)
    return weights, card


def _unit_factors(layout: _Layout, pairs: _Pairs, weights: list) -> tuple[list, list]:
    """(sel, order) between every two units of ``layout``: the predicates' factor times the SEQ order's,
    and the order's alone, each averaged over an OR unit's alternatives weighted by their records."""
    alts = layout.alts

    def mixed(i, j, f) -> float:
        out = 0.0
        for a, wa in zip(alts[i], weights[i]):
            for b, wb in zip(alts[j], weights[j]):
                out += wa * wb * math.prod(f(x, y) for x in a for y in b)
        return out

    # between two units of one variable mixed() is f(x, y) itself: the pattern's order (the layout's), times the
    # predicates' factor where there is one
    sel = [list(row) for row in layout.single_order]
    order = [list(row) for row in layout.single_order]
    index = layout.index
    for key, p in pairs.pred.items():
        x, y = key
        i, j = index.get(x), index.get(y)
        if i is not None and j is not None:
            sel[i][j] = sel[j][i] = p * order[i][j]
    for i, j in layout.mixed:
        sel[i][j] = sel[j][i] = mixed(i, j, pairs.factor)
        order[i][j] = order[j][i] = mixed(i, j, pairs.order)
    return sel, order


class _TUnits(NamedTuple):
    """The closures planned as units (Kolchinsky & Schuster 4's ``T'``), after the pattern's units:
    ``names``, ``cards``, their :class:`ClosureUnit` records (``found``), and per conjunct split off a
    collection (``later``) its unit's index, the units it reads, and the share of lists passing it."""

    names: tuple
    cards: list
    found: tuple
    later: list


def _closure_units(closures, logical: LogicalPlan, stats: Statistics, layout: _Layout, weights: list,
                   W: float) -> _TUnits:
    """The units ``T'`` of :func:`join_problem`'s ``closures`` (its docstring): each one's card the lists
    per record of the join binding ``need``, its :class:`ClosureUnit`, and the shares of its split
    conjuncts; ``W`` the window's span, at least 1."""
    rate = stats.rates
    units_of, alts, n = layout.unit_vars, layout.alts, len(layout.units)
    kv = logical.closure_vars

    def conjunct(e: E.Expr) -> float:
        return stats.selectivities.get(expr_to_text(display_expr(e, kv)), DEFAULT_SELECTIVITY)

    names, cards, found, later, index = (), [], [], [], {}
    singles = frozenset().union(*units_of)

    def rate_of(v: str) -> float:
        return rate.get(v, DEFAULT_RATE)
    for K, need, mode, split in closures:
        # the record a collection reads binds the single variables of need (an earlier closure's list
        # bounds the range by its last member, not as an event of the record)
        name = K.vars[0] if isinstance(K, Group) else K.var  # a group by its first variable (kleene_order)
        lists = _unit_lists(K, mode, frozenset(need) & singles, W, rate_of, conjunct, units_of, alts, weights)
        # the closures (groups) right before it (kleene_units), each needing the one before
        prior = [L for L, *_ in closures if (L.vars[0] if isinstance(L, Group) else L.var) in need]
        lists *= _unit_adjacency(K, mode, prior, closures, frozenset(need) & singles, W, rate_of, conjunct)
        # capped so that no PM of an admitted plan overflows to inf (the searches must tell it from a
        # refused join); a closure with that many lists per record is priced out of every place anyway
        cards.append(min(lists, CLOSURE_CARD_CAP))
        names += (name,)
        index[name] = n + len(found)
        mask = sum(1 << i for i, vs in enumerate(units_of) if vs & set(need))
        mask |= sum(1 << index[v] for v in need if v in index)  # a closure right before it (kleene_units)
        found.append(ClosureUnit(n + len(found), mask, len(K.member) + len(K.prev) + len(K.lists) + len(K.each)))
        # a conjunct split off the collection: a predicate between T' and the units it reads
        conds = [e for f in ("member", "prev", "lists", "each") for e in split.get(f, ())]
        s = frozenset(need) & singles
        if conds and K.scope:  # in an OR branch: over the records through it, those of another one kept
            took, s = _branch(K, s, units_of, alts, weights)
            shares = branch_split_shares(construct_split_shares(K, mode, split, s, W, rate_of, conjunct),
                                         construct_lists(K, mode, s, W, rate_of, conjunct), took)
        else:
            shares = construct_split_shares(K, mode, split, s, W, rate_of, conjunct) if conds else ()
        for e, passing in zip(conds, shares):
            read = [i for i, vs in enumerate(units_of) if vs & E.variables(e)]
            later.append((n + len(found) - 1, read, passing))
    return _TUnits(names, cards, tuple(found), later)


def _unit_adjacency(K, mode: str, prior: list, closures, s: frozenset, W: float, rate, sel) -> float:
    """The factor on ``T'``'s card for closure or group ``K`` (:func:`join_problem`) from its adjacent
    constructs: its lists lie after the last member of the nearest one before it, ``prior[-1]``
    (:func:`adjacent_share`), and where an adjacent closure after it bounds its collection, only its lists
    that one can follow are kept (:func:`kept_share`), as :func:`estimate_work` prices the collections."""
    out = adjacent_share(prior[-1], K, mode, s, W, rate, sel, bounds(prior[-1], K)) if prior else 1.0
    later = next((L for L, need, *_ in closures if _name(K) in need and bounds(K, L)), None)
    return out * (kept_share(K, later, mode, s, W, rate, sel) if later is not None else 1.0)


def _unit_lists(K, mode: str, s: frozenset, W: float, rate, sel, units_of, alts, weights) -> float:
    """``T'``'s card for closure or group ``K`` over records of the variables ``s`` (:func:`join_problem`): its lists
    per record, or in an OR branch (its ``scope``, inside one OR unit) the mean over that unit's records,
    those that took another branch keeping one (unbound) list: ``took * lists + (1 - took)``, ``took``
    the share of the unit's records that are alternatives through the branch."""
    if not K.scope:
        return construct_lists(K, mode, s, W, rate, sel)
    took, through = _branch(K, s, units_of, alts, weights)
    return took * construct_lists(K, mode, through, W, rate, sel) + (1.0 - took)


def _branch(K, s: frozenset, units_of, alts, weights) -> tuple[float, frozenset]:
    """(the share of its OR unit's records that take the branch of closure or group ``K``, the variables of
    ``s`` a record through that branch binds: its range lies among them)."""
    scope = frozenset(K.scope)
    i = next(i for i, vs in enumerate(units_of) if vs & scope)
    return sum(w for a, w in zip(alts[i], weights[i]) if a & scope), s - (units_of[i] - scope)


CLOSURE_CARD_CAP = 1e30
"""The largest card a closure unit gets (:func:`join_problem`)."""


# --- rows per physical operator -------------------------------------------------------


def estimate_rows(plan: PhysicalPlan, stats: Statistics, span: float) -> dict[int, float]:
    """Estimated records of every operator of ``plan`` over the whole table, keyed by ``id(operator)``
    (module docstring: Kolchinsky's PM scaled to the table; ZStream's Table 2 output cardinalities)."""
    return {k: rows for k, (_, rows) in estimate_work(plan, stats, span).items()}


def estimate_work(plan: PhysicalPlan, stats: Statistics, span: float) -> dict[int, tuple[float, float]]:
    """``id(operator) -> (inputs, rows)`` for every operator of ``plan`` over the whole table: ``rows``
    as :func:`estimate_rows`, ``inputs`` ZStream's input cost ``C_i`` (Table 2): what the operator
    examines -- a scan its events, a SEQ join the pairs of its inputs in order within the window, an
    AND join every pair within the window (it tests the order of its ``sequence`` pairs like its
    predicates), a union its inputs' records, a negation or Kleene operator its input
    records (each looks up its range once: ZStream's NEG and NSEQ read ``CARD_SEQ`` / ``CARD_C``, not
    the negated events)."""
    work = _Work(plan, stats, span)
    work(plan.root)
    return work.out


class _Work:
    """:func:`estimate_work`'s walk over a plan: per operator, by its kind, the alternatives it outputs
    (the variables each binds, with its records: one per OR alternative below) and what it examines;
    ``out`` the answer, ``collected`` each closure's (group's) collection and the variables it collected
    over, for a :class:`ListFilter` above it.  ``W``: the window's span (a window shorter than one ts
    unit spans 0, only simultaneous events: counted as one unit); ``T`` the table's extent, ``P`` its
    partitions, ``scale`` the windows in the table."""

    def __init__(self, plan: PhysicalPlan, stats: Statistics, span: float):
        self.W = max(float(span), 1.0)
        self.T = float(stats.extent) if stats.extent is not None else self.W
        self.P = float(max(stats.partitions, 1))
        self.scale = self.P * self.T / self.W
        self.stats, self.kv = stats, plan.list_vars
        self.order = PlanOrder(plan)
        self.out: dict[int, tuple[float, float]] = {}
        # closure variable -> (its KleeneCollect, the variables it collected over)
        self.collected: dict[str, tuple] = {}
        # under a SemiJoinReduce: each chain variable's index, and the kept share of every run (run_shares)
        self.chain: dict[str, int] = {}
        self.kept = None

    def sel(self, e: E.Expr) -> float:
        return self.stats.selectivities.get(expr_to_text(display_expr(e, self.kv)), DEFAULT_SELECTIVITY)

    def rate(self, v: str) -> float:
        return self.stats.rates.get(v, DEFAULT_RATE)

    def __call__(self, node) -> list[tuple[frozenset, float]]:
        for kinds, walk in _Work.WALKS:
            if isinstance(node, kinds):
                alts, inputs = walk(self, node)
                break
        else:
            raise TypeError(f"unknown operator {type(node).__name__}")
        self.out[id(node)] = (saturated(inputs), saturated(sum(r for _, r in alts)))
        return alts

    def scan(self, node: Scan):
        r = self.rate(node.var)
        events = saturated(r * self.T * self.P, r, self.T, self.P)
        alts = [(frozenset((node.var,)), events * self._on_chain(frozenset((node.var,))))]
        return alts, events

    def _on_chain(self, s: frozenset) -> float:
        """The share of the records of the variables ``s`` a semi-join reduction above keeps: a leaf's events on
        a chain, a run's records that extend to one (:func:`extended`); 1 with no reduction."""
        if self.kept is None or not s <= self.chain.keys():
            return 1.0
        if len(s) == 1:
            i = self.chain[next(iter(s))]
            return self.kept[i][i]
        return extended(self.kept, sum(1 << self.chain[v] for v in s))

    def union(self, node):
        alts = [a for c in node.children for a in self(c)]
        return alts, sum(r for _, r in alts)

    def join(self, node):
        """The pairs of its inputs' alternatives within the window (ZStream Table 2's ``C_i``), each kept
        as its predicates (and an AND join's sequence pairs' order) pass it."""
        alts, inputs = [], 0.0
        for (sa, ra), (sb, rb) in product(self(node.left), self(node.right)):
            s = sa | sb
            pairs = ra * rb * len(s) / (len(sa) * len(sb) * self.scale)
            if isinstance(node, SeqJoin):  # it reads only the pairs in order: every left event first
                pairs /= math.comb(len(sa) + len(sb), len(sa))
                tested = 1.0
            else:  # it reads every pair within the window, and tests its sequence pairs' order
                tested = self.order.across(s, sa, sb, node.sequence)
            pairs = saturated(pairs, ra, rb)
            inputs += pairs
            tested *= math.prod(self.sel(p) for p in node.predicates if E.variables(p) <= s)
            if node.extends or len(s) == len(self.chain) > 0:
                # it keeps the records extending to a chain (the whole chain's pairs are chains): inputs that
                # extended are not independent of it, so it keeps the run's share, not the product's
                tested *= self._on_chain(s) / max(self._on_chain(sa) * self._on_chain(sb), _TINY_SHARE)
            alts.append((s, saturated(pairs * tested, pairs, tested)))
        return alts, inputs

    def negation(self, node: NegationFilter):
        neg = node.neg
        alts = []
        given = self(node.input)
        for s, r in given:
            conds = math.prod(self.sel(c) for c in neg.conds if E.variables(c) - {neg.var} <= s)
            none = none_in_range(self.rate(neg.var) * conds, neg.before, neg.after, neg.in_conj, s, self.W)
            alts.append((s, saturated(r * none, r, none)))
        return alts, sum(r for _, r in given)

    def kleene(self, node: KleeneCollect):
        W, rate, sel, collected = self.W, self.rate, self.sel, self.collected
        given = self(node.input)
        # a closure in an OR branch makes lists for the records through its branch; the others keep one
        alts = [(s, _times(r, _lists(node, s, W, rate, sel), _after_lists(node.closure, s, W, rate, sel, collected),
                           _kept(node, s, W, rate, sel))
                 if not node.closure.scope or s & set(node.closure.scope) else r) for s, r in given]
        collected[node.closure.var] = (node, given[0][0])
        return alts, sum(r for _, r in given)

    def list_filter(self, node: ListFilter):
        """The share of the carried lists passing what their collection left."""
        given = self(node.input)
        kc, over = self.collected[node.var]
        split = {"member": node.member, "prev": node.prev, "lists": node.lists, "each": node.each}
        K = kc.closure if isinstance(kc, KleeneCollect) else kc.group
        passing = math.prod(construct_split_shares(K, getattr(kc, "mode", "all"), split, over, self.W, self.rate,
                                                   self.sel))
        scope = set(K.scope)  # in an OR branch: the records through it only
        alts = [(s, saturated(r * passing, r, passing) if not scope or s & scope else r) for s, r in given]
        return alts, sum(r for _, r in given)

    def group(self, node: GroupCollect):
        W, rate, sel = self.W, self.rate, self.sel
        self(node.body)  # its iterations, priced as joins
        given = self(node.input)
        g = node.group
        alts = [(s, _times(r, group_lists(g, s, W, rate, sel), _after_lists(g, s, W, rate, sel, self.collected))
                 if not g.scope or s & set(g.scope) else r) for s, r in given]
        self.collected[g.vars[0]] = (node, given[0][0])  # for a ListFilter above (its conjuncts split off)
        return alts, sum(r for _, r in given)

    def bounded_above(self, node):
        """A semi-join reduction (what it keeps is priced at the scans and ``extends`` joins below it:
        :func:`extended` of :func:`~.chain_shares.run_shares`), a contiguity or output policy (no statistics
        describe them, semantics 9): their input's rows, an upper bound."""
        if isinstance(node, SemiJoinReduce):
            self.chain = {v: i for i, v in enumerate(node.chain)}
            self.kept = run_shares([self.W * self.rate(v) for v in node.chain])
        alts = self(node.input)
        return alts, sum(r for _, r in alts)

    def nfa_runs(self, node: NfaRuns):
        """Kolchinsky 5.2's m[k] over the states in pattern order."""
        for c in node.children:
            self(c)
        cards = [self.W * self.rate(s.var) for s in node.states]
        sels = [math.prod(self.sel(p) for p in (*edge, *lists))
                for edge, lists in zip(node.edges, node.list_edges or [()] * len(node.edges))]
        contiguity = None
        if node.strategy in ("strict_contiguity", "partition_contiguity"):
            contiguity = min(1.0, 1.0 / sum(cards)) if sum(cards) > 0 else 1.0
        m = next_match_partials(cards, sels, contiguity)
        scale = self.scale
        alts = [(frozenset(node.vars), saturated(m[-1] * scale, m[-1], scale))]
        return alts, saturated(sum(m) * scale, sum(m), scale)

    WALKS = ((Scan, scan), ((Union, DisjunctUnion), union), ((SeqJoin, AndJoin), join), (NegationFilter, negation),
             (KleeneCollect, kleene), (ListFilter, list_filter), (GroupCollect, group),
             ((SemiJoinReduce, Contiguity, OutputPolicy), bounded_above), (NfaRuns, nfa_runs))


_TINY_SHARE = 1e-300  # inputs kept at a share that underflows: their records are 0, so is the ratio's use


def _times(r: float, *factors: float) -> float:
    """``r * (f1 * f2 * ...)`` (a record count times its lists' factors), :func:`.finite.saturated`."""
    return saturated(r * math.prod(factors), r, *factors)


def _after_lists(K, s: frozenset, W: float, rate, sel, collected: dict) -> float:
    """:func:`adjacent_share` of closure or group ``K`` after a closure or group ``collected`` already
    (variable, a group's first -> (its KleeneCollect / GroupCollect, ...)) when that one is the nearest bound
    variable before it in a record of the single variables ``s`` (adjacent: ``K``'s range starts after its
    last member), else 1."""
    near = next((v for v in reversed(K.before) if v in s or v in collected), None)
    if near is None or near not in collected:
        return 1.0
    node = collected[near][0]  # a closure's KleeneCollect, or a group's GroupCollect (by its first variable)
    if isinstance(node, KleeneCollect):
        earlier, mode, kept = node.closure, node.mode, any(L.var == _name(K) for L in node.bound)
    else:
        earlier, mode, kept = node.group, "all", False
    return adjacent_share(earlier, K, mode, s, W, rate, sel, kept)


def _name(K) -> str:
    """A closure's variable, a group's first (as :func:`join_problem` names its unit)."""
    return K.vars[0] if isinstance(K, Group) else K.var


def _kept(node: KleeneCollect, s: frozenset, W: float, rate, sel) -> float:
    """:func:`kept_share` of a KleeneCollect's closure by the adjacent closure of its ``bound``, if any."""
    later = next((L for L in node.bound if bounds(node.closure, L)), None)
    return 1.0 if later is None else kept_share(node.closure, later, node.mode, s, W, rate, sel)


def _lists(node: KleeneCollect, s: frozenset, W: float, rate, sel) -> float:
    """Expected lists per input record of a KleeneCollect (module docstring)."""
    return lists_per_record(node.closure, node.mode, s, W, rate, sel)


