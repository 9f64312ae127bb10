"""Cost models over join trees (Kolchinsky & Schuster 2018, sections 3 and 5; ZStream section 5.1).

A cost model is a function ``(problem, tree) -> float`` (lower is better);
:data:`COST_MODELS` names them for ``jitcep.compile(..., cost_model=NAME)``:

- ``"intermediate"``: Kolchinsky & Schuster's Cost_tree (section 3.2), the
  partial matches held in every node, ``sum(PM(node) for node in tree)``.
- ``"order"``: their Cost_ord (section 3.1) of an order-based plan p_1..p_n,
  ``sum over k of PM(p_1..p_k)``: :func:`order`.  It prices left-deep trees
  only (the plans of the order-based algorithms and of ``auto`` under it);
  on such a tree it is Cost_tree less the cards of p_2..p_n, since an NFA
  holds a single event as a partial match only at its first state, where a
  join tree holds every leaf's events.  The two rank orders alike but for
  which of the first two units comes first.
- ``"zstream"``: ZStream's operator costs (section 5.1, Formula 1 and
  Table 2), summed over the tree's operators: :func:`zstream`.
- ``"latency"``: the throughput-latency trade-off of Kolchinsky 5.1,
  ``(1 - alpha) * Cost_tree + alpha * Cost_lat`` with alpha
  :data:`DEFAULT_ALPHA` = 0.5: :func:`latency` makes it for another alpha.
- ``"skip_till_next_match"``, ``"strict_contiguity"``,
  ``"partition_contiguity"``: Cost_tree adjusted for those selection
  strategies (Kolchinsky 5.2): :func:`strategy_cost` makes them (with the
  events per window a contiguity model needs).  Under those strategies the
  engine runs NFA^b runs in pattern order (no join order to choose); these
  models price join trees for ``cost_model=`` under skip-till-any-match, and
  :func:`jitcep.plan.planner.next_match.next_match_partials` prices the
  runs themselves (``explain``'s ``est_rows``).

The Table 2 formulas of the operators the join trees do not hold (AND, the
KSEQ and the NSEQ placements) are here beside SEQ's; the physical rules price
whole physical plans with the same Formula 1 (:func:`plan_cost`, over
:func:`jitcep.plan.planner.cardinality.estimate_work`'s ``C_i`` and ``C_o`` per
operator: negation placement) and a SEQ join's loop under each driver
(:func:`seq_driver_cost`).  Parameters are bound by small factories (:func:`latency`,
:func:`strategy_cost`), so every model keeps the one signature.  ZStream's
input cost needs the ordering factor apart from the predicates' selectivity;
a problem from :func:`jitcep.plan.planner.cardinality.join_problem` keeps
it (``order``, ``predicates``), for any other problem it is taken as 1 (no
order) and ``n`` as 0.
"""

from __future__ import annotations

import math
from typing import Callable

from ...errors import OptionError
from ..operators import Join, KleeneCollect, ListFilter, NegationFilter
from .problem import JoinProblem, Tree, leaves, left_deep

CostModel = Callable[[JoinProblem, Tree], float]

K_PREDICATE = 0.25
"""ZStream's k (Formula 1): the cost of one predicate per input combination, relative to accessing it."""
P_OUTPUT = 1.0
"""ZStream's p (Formula 1): the weight of the output cost."""
DEFAULT_ALPHA = 0.5
"""The latency weight of the ``"latency"`` model (Kolchinsky 6.3 ran alpha = 0, 0.5, 1)."""


def intermediate(problem: JoinProblem, tree: Tree) -> float:
    """Cost_tree (section 3.2): the expected partial matches of every node, leaves included."""
    if isinstance(tree, int):
        return problem.pm((tree,))
    return intermediate(problem, tree[0]) + intermediate(problem, tree[1]) + problem.pm(leaves(tree))


def order(problem: JoinProblem, tree: Tree) -> float:
    """Cost_ord (section 3.1) of the order-based plan ``tree`` (a left-deep tree over p_1..p_n):
    ``sum over k of PM(p_1..p_k)``, the partial matches of every length an NFA in that order holds.

    A tree that is not left-deep is no order: a ``ValueError`` (the options refuse a tree-based
    planner under this model before any planning, :data:`ORDER_ONLY`)."""
    units = leaves(tree)
    if tree != left_deep(units):
        raise ValueError(f"Cost_ord prices order-based (left-deep) plans, not the tree {tree!r}")
    return sum(problem.pm(units[:k]) for k in range(1, len(units) + 1))


ORDER_ONLY = ("order",)
"""The cost models defined on order-based plans only (left-deep trees)."""


# --- ZStream (section 5.1, Table 2) -------------------------------------------------------


def operator_cost(inputs: float, output: float, predicates: int = 0) -> float:
    """ZStream's Formula 1: ``C = C_i + (n k) C_i + p C_o`` (n predicates, k = :data:`K_PREDICATE`,
    p = :data:`P_OUTPUT`)."""
    return inputs + predicates * K_PREDICATE * inputs + P_OUTPUT * output


def seq_cost(card_a: float, card_b: float, pt: float = 0.5, p_ab: float = 1.0, predicates: int = 0) -> float:
    """Sequence ``A; B`` (Table 2): ``C_i = CARD_A * CARD_B * Pt_AB``, ``C_o = C_i * P_AB``."""
    ci = card_a * card_b * pt
    return operator_cost(ci, ci * p_ab, predicates)


def and_cost(card_a: float, card_b: float, p_ab: float = 1.0, predicates: int = 0) -> float:
    """Conjunction ``A & B`` (Table 2): ``C_i = CARD_A * CARD_B``, ``C_o = C_i * P_AB``."""
    ci = card_a * card_b
    return operator_cost(ci, ci * p_ab, predicates)


def or_cost(card_a: float, card_b: float) -> float:
    """Disjunction ``A | B`` (Table 2): ``C_i = C_o = CARD_A + CARD_B`` (no predicates apply)."""
    return operator_cost(card_a + card_b, card_a + card_b)


def kseq_cost(card_a: float, card_b: float | None, card_c: float, *, pt_ab: float = 0.5, pt_bc: float = 0.5,
              pt_ac: float = 0.5, p_ab: float = 1.0, p_bc: float = 1.0, p_ac: float = 1.0,
              cnt: int | None = None, predicates: int = 0) -> float:
    """Kleene closure ``A; B^cnt; C`` (Table 2): ``N = CARD_B * Pt_AB * Pt_BC (* cnt)`` (1 without B),
    ``C_i = CARD_A * CARD_C * Pt_AC * N``, ``C_o = C_i * P_AC * P_AB * P_BC``; a missing A or C is 1."""
    n = 1.0 if card_b is None else card_b * pt_ab * pt_bc * (cnt if cnt is not None else 1)
    ci = card_a * card_c * pt_ac * n
    return operator_cost(ci, ci * p_ac * p_ab * p_bc, predicates)


def nseq_top_cost(card_a: float, card_c: float, *, pt_ab: float = 0.5, pt_bc: float = 0.5, pt_ac: float = 0.5,
                  p_ac: float = 1.0, predicates: int = 0) -> float:
    """Negation on top ``NEG(SEQ(A, C), !B)`` (Table 2): the SEQ's cost, then
    ``C_i = C_iSeq + CARD_SEQ``, ``C_o = CARD_SEQ + CARD_SEQ * (1 - Pt_AB * Pt_BC) * P_AC``."""
    ci_seq = card_a * card_c * pt_ac
    card_seq = ci_seq * p_ac
    return operator_cost(ci_seq + card_seq, card_seq + card_seq * (1 - pt_ab * pt_bc) * p_ac, predicates)


def nseq_pushed_cost(card_a: float, card_c: float, *, pt_ac: float = 0.5, pt_bc: float = 0.5,
                     predicates: int = 0) -> float:
    """Negation pushed down ``SEQ(A, NSEQ(B, C))`` (Table 2): ``C_i = CARD_C + CARD_A * CARD_C * Pt_AC``,
    ``C_o = CARD_C + CARD_A * CARD_C * Pt_AC * (1 - Pt_AC * Pt_BC)``."""
    ci = card_c + card_a * card_c * pt_ac
    return operator_cost(ci, card_c + card_a * card_c * pt_ac * (1 - pt_ac * pt_bc), predicates)


def _across(problem: JoinProblem, left, right) -> tuple[float, float, int]:
    """(Pt, P, n) between two sets of units: the ordering factor, the predicates' selectivity, their count."""
    order = getattr(problem, "order", ()) or None
    count = getattr(problem, "predicates", ()) or None
    pt = p = 1.0
    n = 0
    for i in left:
        for j in right:
            o = order[i][j] if order is not None else 1.0
            pt *= o
            p *= problem.sel[i][j] / o if o else 1.0
            n += count[i][j] if count is not None else 0
    return pt, p, n


def zstream(problem: JoinProblem, tree: Tree) -> float:
    """ZStream's plan cost (section 5.1): the sum of its operators' Formula 1 costs (Table 2).

    An internal node joins its children's outputs (``CARD`` = their PM, as
    ZStream generalises Table 2 to operator inputs): a Sequence where every
    unit of one side precedes every unit of the other (``Pt`` the share of the
    pairs in order, ``share(L | R) / (share(L) share(R))`` where the problem has
    the order's set function, else the product of the pairwise ordering factors;
    ``P_AB`` the predicates' selectivity, ``n`` their count), a Conjunction otherwise, which examines every pair within the
    window and tests any order between them like a predicate (``C_i =
    CARD_A * CARD_B``, ``C_o = C_i * Pt * P_AB``: a tree joining a SEQ out of
    its order pays for it).  A leaf costs
    nothing, except an OR unit: its Disjunction reads and writes its
    records (``or_cost`` of its total, 2 x card; the joins inside its
    branches are the same for every tree and left out).  The join of a
    closure unit (``T'``) with a plan is the closure's operator over that
    plan's records: :func:`closure_join_cost`.
    """
    if isinstance(tree, int):
        return or_cost(problem.card[tree], 0.0) if isinstance(problem.units[tree], tuple) else 0.0
    left, right = leaves(tree[0]), leaves(tree[1])
    if getattr(problem, "masks", None) is not None:  # Pt the order's set function (zstream_node)
        here = zstream_node(problem, lambda m: problem.pm(tuple(_bits(m))), sum(1 << i for i in left),
                            sum(1 << i for i in right))
        return zstream(problem, tree[0]) + zstream(problem, tree[1]) + here
    pt, p, n = _across(problem, left, right)
    closure = _closure_side(problem, left, right)
    if closure is not None:
        rest = right if closure.unit in left else left
        here = closure_join_cost(problem.pm(rest), problem.pm(left + right), closure.tests)
    elif _in_order(problem, left, right):
        here = seq_cost(problem.pm(left), problem.pm(right), pt, p, n)
    else:  # an AND join: it examines every pair and tests the order like a predicate
        here = and_cost(problem.pm(left), problem.pm(right), pt * p, n)
    return zstream(problem, tree[0]) + zstream(problem, tree[1]) + here


def closure_join_cost(records: float, output: float, tests: int) -> float:
    """ZStream's KSEQ (Table 2) as jitcep runs it, a closure's operator over a plan's ``records``: each
    record looks its range up once (``C_i = records``) and becomes its lists (``C_o = output``, the
    records times the lists per record), testing the closure's ``tests`` conjuncts (Formula 1's n)."""
    return operator_cost(records, output, tests)


def _closure_side(problem: JoinProblem, left, right):
    """The :class:`~.problem.ClosureUnit` when one side of a join (unit indices) is a lone closure unit."""
    for side in (left, right):
        if len(side) == 1 and (c := problem.closure_unit(side[0])) is not None:
            return c
    return None


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def zstream_node(problem: JoinProblem, pm, left: int, right: int) -> float:
    """The Table 2 cost :func:`zstream` adds for the join of the units in bitmasks ``left`` and ``right``
    (``pm(mask)``: memoised PM), so the searches price a join without walking the tree
    (``algorithms._common``).  Pt, n and the order come from the problem's memoised set functions
    when it has them (:attr:`jitcep.plan.planner.cardinality.EstimatedProblem.masks`: O(1) per
    join; Pt is ``share(L | R) / (share(L) share(R))``, the fraction of the pairs of records in order,
    docs/planning.md "The order's selectivity"), else from its units pair by pair; the predicates'
    selectivity is ``PM(L | R) / (PM(L) PM(R)) / Pt``."""
    if problem.closures:
        for one, other in ((left, right), (right, left)):
            if not one & (one - 1) and (c := problem.closure_unit(one.bit_length() - 1)) is not None:
                return closure_join_cost(pm(other), pm(left | right), c.tests)
    a, b = pm(left), pm(right)
    if a == 0.0 or b == 0.0:
        return 0.0
    masks = getattr(problem, "masks", None)
    if masks is None:
        L, R = tuple(_bits(left)), tuple(_bits(right))
        pt, p, n = _across(problem, L, R)
        ordered = _in_order(problem, L, R)
    else:
        both = left | right
        pt = masks.share(both) / (masks.share(left) * masks.share(right))
        n = masks.conjuncts(both) - masks.conjuncts(left) - masks.conjuncts(right)
        ordered = right & ~masks.all_after(left) == 0 or left & ~masks.all_after(right) == 0
        if a * b == 0.0 or pt == 0.0:  # underflow (tiny cards, or Pt past 2^-1074): nothing to divide by
            return 0.0
        p = pm(both) / (a * b) / pt
    return seq_cost(a, b, pt, p, n) if ordered else and_cost(a, b, pt * p, n)


def _in_order(problem: JoinProblem, left, right) -> bool:
    """Whether every unit of one side precedes every unit of the other (a SEQ join); without the
    problem's ``before`` relation, whether any pair is ordered (ZStream's trees keep the pattern order)."""
    before = getattr(problem, "before", ()) or None
    if before is None:
        order = getattr(problem, "order", ()) or None
        return order is None or any(order[i][j] != 1.0 for i in left for j in right)
    return all(before[i][j] for i in left for j in right) or all(before[j][i] for i in left for j in right)


# --- physical plans (the rules' choices) ---------------------------------------------------


def _own_predicates(node) -> int:
    """n of Formula 1 for a physical operator: the conjuncts it tests itself."""
    if isinstance(node, Join):
        return len(node.predicates)
    if isinstance(node, NegationFilter):
        return len(node.neg.conds)
    if isinstance(node, KleeneCollect):
        c = node.closure
        return len(c.member) + len(c.prev) + len(c.lists) + len(c.each)
    if isinstance(node, ListFilter):
        return len(node.conjuncts)
    return 0


def plan_cost(plan, work: dict) -> float:
    """ZStream's plan cost (section 5.1) of a physical plan: the sum over its operators of Formula 1,
    ``C_i`` and ``C_o`` from ``work`` (``id(operator) -> (inputs, rows)``,
    :func:`jitcep.plan.planner.cardinality.estimate_work`), ``n`` the conjuncts the operator tests.
    With a negation on top, NEG reads ``CARD_SEQ`` records; pushed down, NSEQ reads the records of
    the join it sits on and the joins above read fewer (Table 2's two negation rows)."""
    total = 0.0
    for node in plan.nodes():
        inputs, rows = work[id(node)]
        total += operator_cost(inputs, rows, _own_predicates(node))
    return total


def seq_driver_cost(driver: str, left: float, right: float, pairs: float, partitions: float = 1.0) -> float:
    """The work of a SEQ join's loop over whole-table record counts (``left``, ``right`` inputs,
    ``pairs`` in-window ordered pairs examined, ``partitions`` key partitions).

    "right" (ZStream Algorithm 1): in each partition holding left records
    (``min(1, left / partitions)`` of them), every right record binary-searches
    its left range and the EAT pointer passes each left record once:
    ``left + right * min(1, left / P) * log2(left / P + 2) + pairs``.  "left"
    (the mirror, right input a leaf): every left record binary-searches the
    leaf, and the pairs are sorted back into the right's end order:
    ``left * log2(right / P + 2) + pairs * log2(pairs + 2)``.
    """
    P = max(float(partitions), 1.0)
    if driver == "right":
        return left + right * min(1.0, left / P) * math.log2(left / P + 2) + pairs
    if driver == "left":
        return left * math.log2(right / P + 2) + pairs * math.log2(pairs + 2)
    raise ValueError(f"unknown SEQ join driver {driver!r}")


ROW_WRITE = 3.0
"""The work of one match row the final join writes itself (:func:`final_join_cost`), in the record
steps of :func:`seq_driver_cost`: calibrated on ``sase_equiv`` at 10^6 events (590,000 matches at
100 keys; perf/notes/plan_quality.md, "The final join's rows priced")."""
ROW_COUNT = 1.0
"""The part of :data:`ROW_WRITE` a right leaf's rows do not pay (:func:`final_join_cost`): their pairs are
counted by two pointers as the partitions are checked, with no counting pass over the records
(:func:`jitcep.kernels.final_join._fits_by_position`).  That pass measured 0.9-2.5 record steps a row
(core_seq3, output_synthetic, output_nasdaq_1m at 10^6 events; perf/notes/plan_quality.md, "The final
join's counting pass"); the lowest, rounded."""
POSITION_PASS = 0.4
"""The work per table position of one pass of the row-writing final join over its per-position arrays
(:func:`final_join_cost`), in record steps: zeroing and prefix-summing 8 bytes a position, calibrated
as :data:`ROW_WRITE` (0.9-1.3 ms a pass at 10^6 positions, ~3.7 ns a record step)."""


def final_join_cost(path: str, left: float, right: float, pairs: float, positions: float,
                    partitions: float = 1.0, leaf: str = "right") -> float:
    """The work of the final SEQ join (the one whose pairs are the matches, nothing left to test on them)
    along each way the executor can make the match table, over whole-table counts as
    :func:`seq_driver_cost` (``pairs`` its matches, ``positions`` the table's events, ``leaf`` the input
    that is one event per record).

    "right" and "left": the driver's loop (:func:`seq_driver_cost`), then the pairs put in canonical
    order; the right driver's pairs come in end order within each partition, merged across them
    (``pairs * log2(pairs / P + 2)``), the left driver's sort is already in its loop.  "right+rows"
    (:func:`jitcep.kernels.final_join.seq_join_rows`): the right driver's loop, counting and then
    writing each row in its place (``ROW_WRITE`` a row; a right leaf's pairs are counted by two pointers,
    without the counting pass: ``ROW_WRITE - ROW_COUNT``), through an array of one entry per table
    position zeroed and prefix-summed (``POSITION_PASS`` a position), with a right leaf a second one (the
    left records put in order of their first position by a counting sort over the positions).  Its passes do
    not depend on the matches, so with few matches in a large table the pairs are cheaper: on
    ``sase_equiv_v1000`` (10^6 events, 5,908 matches) the row-writing root took 2.1 ms over a left leaf
    and 4.5 ms over a right one, the pairs 0.8-0.9 ms; at 590,000 matches the rows took 16-17 ms, the
    pairs 34-36 ms (right) and 50 ms (left).
    """
    P = max(float(partitions), 1.0)
    if path == "left":
        return seq_driver_cost("left", left, right, pairs, partitions)
    loop = seq_driver_cost("right", left, right, 0.0, partitions)
    if path == "right":
        return loop + pairs + pairs * math.log2(pairs / P + 2)
    if path == "right+rows":
        if leaf == "right":
            return loop + (ROW_WRITE - ROW_COUNT) * pairs + POSITION_PASS * positions * 2
        return loop + ROW_WRITE * pairs + POSITION_PASS * positions
    raise ValueError(f"unknown final join path {path!r}")


# --- latency (Kolchinsky 5.1) ------------------------------------------------------------


def latency_cost(problem: JoinProblem, tree: Tree) -> float:
    """Cost_lat_tree (section 5.1): ``sum(PM(sibling(N)) for N in Anc(Tn))``, the partial matches on
    the siblings of the nodes from the last unit's leaf (``problem.latency``) up to the root (the
    root excluded: it has no sibling); 0 when the problem has no last unit (AND / OR at the top)."""
    target = problem.latency
    if target is None or isinstance(tree, int):
        return 0.0
    total = 0.0
    node = tree
    while not isinstance(node, int):
        left, right = node
        if target in leaves(left):
            total += problem.pm(leaves(right))
            node = left
        else:
            total += problem.pm(leaves(left))
            node = right
    return total


def latency(alpha: float = DEFAULT_ALPHA, base: CostModel = intermediate) -> CostModel:
    """The latency-aware model of section 5.1: ``(1 - alpha) * base + alpha * Cost_lat``.

    The paper writes ``Cost_trpt + alpha * Cost_lat``; for alpha < 1 this is
    the same ranking with the paper's alpha = alpha / (1 - alpha), and alpha
    stays in [0, 1]: 0 is ``base`` alone, 1 latency alone.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
        raise OptionError(f"latency alpha must be a number in [0, 1], got {alpha!r}")
    alpha = float(alpha)

    def cost(problem: JoinProblem, tree: Tree) -> float:
        return (1.0 - alpha) * base(problem, tree) + alpha * latency_cost(problem, tree)
    cost.__name__ = f"latency_{alpha:g}"
    cost.__doc__ = f"(1 - {alpha:g}) * {getattr(base, '__name__', 'base')} + {alpha:g} * Cost_lat (section 5.1)"
    return cost


# --- selection strategies (Kolchinsky 5.2) --------------------------------------------------


def _pm_next(problem: JoinProblem, members, contiguity: float | None) -> float:
    """The partial matches of a set of units under the strategies of section 5.2 (as
    :func:`jitcep.plan.planner.next_match.next_match_partials` over an order): skip-till-next-match,
    the paper's ``min(card) * prod(sel)`` (each partial match extended by at most one event); contiguity,
    ``PM(S)`` times ``contiguity`` per pair of units adjacent in pattern order (each unit's event the
    next one after its neighbour's, or no match)."""
    if contiguity is not None:
        return problem.pm(members) * contiguity ** sum(1 for i in members if i + 1 in members)
    ms = sorted(members)
    out = min(problem.card[i] for i in ms)
    for a, i in enumerate(ms):
        for j in ms[a + 1:]:
            out *= problem.sel[i][j]
    return out


def _next_tree(problem: JoinProblem, tree: Tree, contiguity: float | None) -> float:
    if isinstance(tree, int):
        return _pm_next(problem, (tree,), contiguity)
    return (_next_tree(problem, tree[0], contiguity) + _next_tree(problem, tree[1], contiguity)
            + _pm_next(problem, frozenset(leaves(tree)), contiguity))


def skip_till_next_match(problem: JoinProblem, tree: Tree) -> float:
    """Cost_next (section 5.2) over a tree: the sum over nodes of ``min(card_i) * prod(sel_ij)`` (the
    paper's ``W * m[k]`` multiplies every term by one W: no plan changes, left out)."""
    return _next_tree(problem, tree, None)


def strategy_cost(strategy: str, *, window_events: float | None = None, base: CostModel = intermediate) -> CostModel:
    """The cost model for a selection strategy (Kolchinsky 5.2).

    ``"skip_till_any_match"``: ``base`` (every combination is a partial
    match).  ``"skip_till_next_match"``: :func:`skip_till_next_match`.
    ``"strict_contiguity"`` / ``"partition_contiguity"``: the paper's
    contiguity condition on every two units adjacent in the pattern, of
    selectivity ``1 / window_events`` (one of the events of a window
    immediately follows a given one), on the partial matches (:func:`_pm_next`:
    a run extended by the next event or not at all, so no ``min``): pass the events of any type in
    one window, in the whole stream for strict contiguity, in one partition
    for partition contiguity; by default the pattern's own events per window
    (``sum(card)``, a lower bound: a weaker condition).
    """
    if strategy == "skip_till_any_match":
        return base
    if strategy == "skip_till_next_match":
        return skip_till_next_match
    if strategy not in ("strict_contiguity", "partition_contiguity"):
        raise OptionError(f"unknown selection strategy {strategy!r}; expected skip_till_any_match, "
                          f"skip_till_next_match, strict_contiguity or partition_contiguity")
    if window_events is not None and (not isinstance(window_events, (int, float)) or not window_events > 0
                                      or not math.isfinite(window_events)):
        raise OptionError(f"window_events must be a positive number, got {window_events!r}")

    def cost(problem: JoinProblem, tree: Tree) -> float:
        events = window_events if window_events is not None else sum(problem.card)
        return _next_tree(problem, tree, min(1.0, 1.0 / events) if events > 0 else 1.0)
    cost.__name__ = strategy
    cost.__doc__ = f"Cost_next with contiguity between adjacent units ({strategy}, section 5.2)"
    return cost


def cost_model(options) -> CostModel:
    """The model ``options`` select: ``options.cost_model``, with ``options.latency_alpha`` for "latency"."""
    if options.cost_model == "latency":
        return latency(options.latency_alpha)
    return COST_MODELS[options.cost_model]


COST_MODELS: dict[str, CostModel] = {
    "intermediate": intermediate,
    "order": order,
    "zstream": zstream,
    "latency": latency(DEFAULT_ALPHA),
    "skip_till_next_match": skip_till_next_match,
    "strict_contiguity": strategy_cost("strict_contiguity"),
    "partition_contiguity": strategy_cost("partition_contiguity"),
}
