"""Rule: a semi-join reduction (:class:`~jitcep.plan.operators.SemiJoinReduce`) over the joins of a SEQ.

Yannakakis' full reducer for the path query a SEQ is, with the window as a
band condition (:mod:`jitcep.kernels.reduction`): the scans keep only events
on a chain, and each join binding a run of the chain short of the whole keeps
only the partial records that extend to one.  With it, every partial record a
join holds extends to a chain of the types, key and window, so without
multi-variable predicates the joins hold at most as many records per level as
the output has matches: time grows with input plus output, not with the
partial matches of every prefix (CORE's workload, perf/notes/reduction.md).

Planned wherever it is sound (the operator's docstring says where): a
SEQ of :data:`jitcep.config.REDUCE_MIN_VARS` single variables or more, under
skip-till-any-match, without closures or groups, any negations, with a
window whose measure ascends along the order.  On the planner's statistics
it is left out where the joins are estimated to save fewer pairs than the
leaves hold events (:func:`_worth_it`): its passes would cost more than the
records it removes (the share of records on a chain estimated from the rates
and the window; perf/notes/reduction.md has its cost where it removes none).
Without statistics, on a table counted in pattern order (a small one), it is
left out where the partial matches it could remove are bounded below its cost
(:func:`left_out`).
Runs last, so the negations and constraints over whole matches stay above it.
"""

from __future__ import annotations

import dataclasses

from ... import config
from ...pattern.ast import CountWindow, EventVar, Seq
from ..operators import AndJoin, Join, NegationFilter, Scan, SemiJoinReduce, SeqJoin, _Unary, remake_joins
from ..planner.chain_shares import ChainShares
from ..planner.statistics import DEFAULT_RATE


def add(plan, planning):
    chain = reduced_chain(planning.logical, planning.options)
    if chain is None or not _reducible(plan.root, set(chain)):
        return plan
    if planning.statistics is None and planning.counts is not None:
        why = left_out(planning.counts)
        if why is not None:
            return dataclasses.replace(plan, notes=plan.notes + (why,))
    elif not _worth_it(plan, planning, chain):
        return plan
    return dataclasses.replace(plan, root=_over_joins(plan.root, chain))


def counted_choice(counts) -> bool:
    """What this rule decides from a table's counts (:attr:`~jitcep.plan.rules.Planning.counts`): whether
    :func:`left_out` keeps the reduction (its reason's numbers are a note, not a choice)."""
    return counts is None or _short_and_leaves(counts)[2]


def _short_and_leaves(counts) -> tuple[int, int, bool]:
    """:func:`left_out`'s bound on the partial matches short of the chain, the leaves' events, and whether
    the reduction is kept."""
    sizes, factors = counts
    leaves, short, prefix = sum(sizes), 0, factors[0]
    for f in factors[1:-1]:
        prefix *= f
        short += prefix
    return short, leaves, short > 2 * leaves + config.REDUCE_FIXED_MATCHES


def left_out(counts) -> str | None:
    """Why the reduction is left out of a plan made without statistics on a table counted by
    :func:`jitcep.runtime.pattern_order_counts` (``counts``: the events of each variable's types, and
    ``(n0, w1, ..., wk)``), as ``explain`` shows it; None where it is planned (or nothing is counted).

    Such a plan is left-deep in pattern order, whose join ``j`` builds the partial matches of ``v0..vj``,
    at most ``p_j = n0 * w1 * ... * wj`` of them (types, not predicates or keys: both only lower the
    real counts).  What the reduction can save is the joins' work on the records it removes: the
    partial matches short of the whole chain, ``p_1 + ... + p_(k-1)`` at most, each the pairs it forms
    at the next join (themselves counted in the next ``p``; at the final join a record not on a chain
    forms none), and a probe per leaf event removed.  What it costs is its passes, which read every leaf
    about twice (a pass per chain variable each way, :mod:`jitcep.kernels.reduction`), and a fixed
    ~0.1 ms of Python a run (two passes' calls, a ``Buffer.keep`` per leaf, the chain bounds of the
    ``extends`` joins), as much as a join takes to build :data:`jitcep.config.REDUCE_FIXED_MATCHES`
    partial matches.  Where the bound is no more than twice the leaves' events plus that, the reduction
    cannot save more than it costs, and it is left out: :func:`_worth_it`'s test on estimates (the
    joins' saved pairs against the leaves' events), here on bounds counted for free of the table,
    with the fixed cost that a large table hides.  Measured where every partial match short of the
    chain is removed (perf/notes/opencep.md "The reduction without statistics"): the crossover at
    1,000 / 3,000 / 8,000 leaf events lay between 8.5k and 16.5k / 13.5k and 25.5k / 20k and 36k of
    them (this rule's 10.2k / 14.2k / 24.2k)."""
    if counts is None:
        return None
    short, leaves, kept = _short_and_leaves(counts)
    if kept:
        return None
    factors = counts[1]
    return (f"semi-join reduction left out: at most {short} partial matches short of the whole chain in "
            f"pattern order (events of the first variable's types, then the most of each next variable's "
            f"types in one window: {' x '.join(map(str, factors))}, summed over the prefixes but the last), "
            f"no more than twice the {leaves} events of the leaves its passes read plus "
            f"{config.REDUCE_FIXED_MATCHES} (config.REDUCE_FIXED_MATCHES, its fixed cost): it cannot save "
            "more than it costs")


def _worth_it(plan, planning, chain) -> bool:
    """Whether to plan the reduction: False where the planner's statistics say it does not pay.

    Its passes read each leaf about twice; what it saves is the joins' work on the records it removes.
    A record of the variables S lies on about ``x_S = chains(all) / chains(S)`` chains (below), so
    the share of them the reduction keeps is ``kept(S) = 1 - exp(-x_S)`` (Poisson), and a join examines
    the pairs of its kept inputs, at least those that extend to a chain themselves: it saves
    ``C_i * (1 - max(kept(left) kept(right), kept(left + right)))`` of the pairs it examines
    (:func:`~jitcep.plan.planner.cardinality.estimate_work`'s ``C_i``): nothing at the final join,
    whose pairs in order within the window are chains.  The reduction is planned where
    the joins save more pairs than the leaves hold events.  Where the chains are sparse
    (``x`` small) that is the old test, the joins examining more pairs than the leaves hold events
    (seq_win, seq_len3: its passes 0.8-1.7 ms of 8-10 ms of CPU where they would not be); where every
    event and partial record lies on many chains it removes nearly nothing, and output-heavy
    workloads (sase_equiv at 100 keys: 95% of the leaves' events kept) no longer pay its passes.

    The chains are those of the types, key and window alone (the reduction reads no other predicate):
    :func:`~jitcep.plan.planner.chain_shares.on_a_chain`, each operator's set of variables counted from its
    inputs' (:class:`~jitcep.plan.planner.chain_shares.ChainShares`).  On ``sase_equiv_v1000`` it keeps 9%
    of the leaves' events and 17% of (v0, v1)'s records, measured 8.6% and 20%; at 100 keys 100% and 85%,
    measured 95% and 80%.
    ``plan`` is :func:`_reducible`: every scan it holds is a chain variable's, whose ``W r_v`` it reads.
    Without statistics it is not called: a table counted in pattern order is priced on its counts
    (:func:`left_out`); with nothing counted (no table, ``planner="trivial"``) it is planned.
    """
    stats, span = planning.statistics, planning.span
    if stats is None or span is None:
        return True
    work = planning.work(plan)
    nodes = plan.nodes()
    leaves = sum(work[id(n)][0] for n in nodes if isinstance(n, Scan))
    wr = {v: float(span) * stats.rates.get(v, DEFAULT_RATE) for v in chain}
    share = ChainShares(wr, chain)
    # per operator, post-order: (its variables, the product of their W r_v, the share of its records kept)
    sets: dict[int, tuple[int, float, float]] = {}
    saved = 0.0
    for n in nodes:
        if isinstance(n, Scan):
            sets[id(n)] = (1, wr[n.var], share(1, wr[n.var]))
        elif isinstance(n, (SeqJoin, AndJoin)):
            (kl, pl, left), (kr, pr, right) = sets[id(n.left)], sets[id(n.right)]
            k, product = kl + kr, pl * pr
            sets[id(n)] = (k, product, share(k, product))
            saved += work[id(n)][0] * (1.0 - max(left * right, sets[id(n)][2]))
        elif isinstance(n, _Unary):  # a pushed negation: its input's variables
            sets[id(n)] = sets[id(n.input)]
    return saved > leaves


def reads_counts(logical, options) -> bool:
    """Whether the rule may read a table's counts (:func:`left_out`) for ``logical`` under ``options``:
    where the reduction is sound for the pattern, so that a small table is counted only then."""
    return reduced_chain(logical, options) is not None


def reduced_chain(logical, options) -> tuple[str, ...] | None:
    """The SEQ's variables in order when the reduction is sound for the pattern (module docstring): the
    join-order search then prices each set's records as the reduction keeps them
    (:func:`jitcep.plan.planner.cardinality.join_problem`'s ``chain``)."""
    body = logical.positive
    if not isinstance(body, Seq) or not all(isinstance(i, EventVar) for i in body.items):
        return None
    if len(body.items) < config.REDUCE_MIN_VARS or logical.closures or logical.groups:
        return None
    if options.strategy != "skip_till_any_match" or logical.window is None:
        return None
    if isinstance(logical.window, CountWindow) and options.order == "nondecreasing_ts":
        return None  # tied events ordered both ways: positions need not ascend along a chain
    return tuple(i.name for i in body.items)


def _reducible(node, chain: set) -> bool:
    """Is the topmost join of ``node`` (under its unary operators) a tree of joins and pushed negations over
    scans of the ``chain`` variables alone (:func:`_joins_only`), where :func:`_over_joins` puts the reduction?"""
    while isinstance(node, _Unary):
        node = node.input
    return isinstance(node, Join) and _joins_only(node, chain)


def _over_joins(node, chain):
    """``node`` with the reduction put over its topmost join (below whatever filters whole matches), which
    is :func:`_reducible`."""
    if isinstance(node, Join):
        run = {v: i for i, v in enumerate(chain)}

        def mark(n):
            idx = sorted(run[v] for v in n.vars)
            contiguous = idx[-1] - idx[0] + 1 == len(idx) < len(chain)
            return {"extends": contiguous} if isinstance(n, Join) else {}
        return SemiJoinReduce(remake_joins(node, mark), chain)
    return dataclasses.replace(node, input=_over_joins(node.input, chain))


def _joins_only(node, chain: set) -> bool:
    """Is ``node`` a tree of SEQ / AND joins and pushed negations over one scan per chain variable?"""
    if isinstance(node, Scan):
        return node.var in chain
    if isinstance(node, NegationFilter):
        return _joins_only(node.input, chain)
    if isinstance(node, (SeqJoin, AndJoin)):
        return _joins_only(node.left, chain) and _joins_only(node.right, chain)
    return False
