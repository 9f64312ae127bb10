"""The share of a SEQ's partial matches that extend to a whole chain: what a semi-join reduction keeps.

A :class:`~jitcep.plan.operators.SemiJoinReduce` keeps the events that lie on a
chain of the SEQ's types in order within the window and key, reading only the
types (docs/planning.md "Output-sensitive SEQs: the semi-join reduction").  With independent arrival
processes (the model of Kolchinsky & Schuster 2018, section 3: ``card = W r``
records per window, the SEQ's order the share ``1/|S|!`` of a set's tuples,
:mod:`.order_share`), a record of some of the chain's variables lies on a
Poisson number of whole chains; :func:`on_a_chain` is the chance it lies on
one, and :class:`ChainShares` gives it for the many variable sets of one plan.
"""

from __future__ import annotations

import math

from .order_share import FACTORIALS


def on_a_chain(wr: dict, chain, vs) -> float:
    """The share of the records of the variables ``vs`` (a record: their events in the SEQ ``chain``'s
    order, in one key partition and window) that extend to a whole chain, ``wr[v]`` the events of v in
    one window of a partition (``W r_v``): what a semi-join reduction keeps
    (:class:`~jitcep.plan.operators.SemiJoinReduce`, which reads only the types, key and window).

    In one window, ``chains(S) = |S| * prod(W r_v, v in S) / |S|!`` (the PM of S with only the SEQ's
    order, the share ``1/|S|!`` of its tuples in order, times the ``|S|`` places its first event can take, so
    that the records of every S scale from a window to the table alike, as in :func:`~.cardinality.estimate_work`), so
    a record of ``vs`` lies on ``x = chains(chain) / chains(vs)`` chains on average, and on at least one
    with chance ``1 - exp(-x)`` (Poisson); a record of every variable in order is a chain (1).
    :class:`ChainShares` gives it for many sets of one chain."""
    return ChainShares(wr, chain)(len(vs), math.prod(wr[v] for v in vs))


def _chains(k: int, product: float) -> float:
    """``chains(S)`` of :func:`on_a_chain` for a set of ``k`` variables whose ``W r_v`` multiply to ``product``."""
    return k * product / FACTORIALS[k] if k < len(FACTORIALS) else 0.0


class ChainShares:
    """:func:`on_a_chain` for the variable sets of one chain (``wr``, ``chain`` as there), each given by its
    size and the product of its ``W r_v`` (a join's: its inputs' sizes summed, their products multiplied),
    and ``chains(chain)`` counted once: a plan's joins are then priced in time linear in the chain (counting
    each join's variables is quadratic in it)."""

    def __init__(self, wr: dict, chain):
        self.n = len(chain)
        whole = _chains(self.n, math.prod(wr[v] for v in chain))
        self.whole = 0.0 if math.isnan(whole) else whole  # NaN is 0 x inf: a rate of 0, so no chain

    def __call__(self, k: int, product: float) -> float:
        """The share of the records of a set of ``k`` of the chain's variables, their ``W r_v`` multiplying
        to ``product``, that extend to a whole chain: 0 with no chain or no record (a rate of 0), 1 where
        both counts overflow (inf / inf: nothing is known to be saved, so a reduction is not priced in)."""
        if k >= self.n:
            return 1.0
        per = _chains(k, product)
        if not per > 0 or self.whole == 0:
            return 0.0
        x = self.whole / per
        return 1.0 if math.isnan(x) else -math.expm1(-x)
