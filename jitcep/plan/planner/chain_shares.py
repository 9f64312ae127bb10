"""The share of a SEQ's partial matches that extend to a whole chain: what a semi-join reduction keeps.

A :class:`~jitcep.plan.operators.SemiJoinReduce` keeps the events that lie on a
chain of the SEQ's types in order within the window and key, reading only the
types (docs/planning.md "Output-sensitive SEQs: the semi-join reduction").  With independent arrival
processes (the model of Kolchinsky & Schuster 2018, section 3: ``card = W r``
records per window, the SEQ's order the share ``1/|S|!`` of a set's tuples,
:mod:`.order_share`), a record of some of the chain's variables lies on a
Poisson number of whole chains; :func:`on_a_chain` is the chance it lies on
one, and :class:`ChainShares` gives it for the many variable sets of one plan
(the rule's pricing).  :func:`run_shares` averages that chance over the
records' spans instead, for every run of the chain at once (the join-order
search's pricing, docs/planning.md "The reduction in the join order").
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .finite import MAX_ESTIMATE
from .order_share import FACTORIALS, MAX_SIZE


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


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(24)
_EDGE = 4.0  # the survival exp(-(v / a)^m) is within e^-e^-4 of 1 below a e^(-4/m) and under e^-e^4 above a e^(4/m)


def run_shares(wr) -> tuple[tuple[float, ...], ...]:
    """``kept[a, b]``: the share of the records of the run ``v_a .. v_b`` of a chain (``wr``: each variable's
    ``W r_v`` in chain order) that extend to a whole chain, averaged over the records' spans: what a join
    binding that run keeps under a semi-join reduction (``extending records only``), and, for ``a == b``, what
    the reduction keeps of a leaf.  1 for the whole chain.

    :func:`on_a_chain` takes a record to lie on the mean number of chains, ``x = chains(all) / chains(S)``;
    but that number varies with the record's span ``s``: the other ``m = n - j`` variables (a prefix before
    it, a suffix after it) must fit in the slack ``W - s``, and the expected extensions of a record are
    ``X v^m``, ``v = (W - s) / W``, ``X = prod(W r_u, u outside the run) / m!`` (the prefix and suffix
    chains whose spans sum to at most ``W - s``: a volume ``(W - s)^m / m!``).  With the run's ``j - 1``
    gaps and the slack a flat Dirichlet (:mod:`.ranges`: records of independent arrivals are spread
    uniformly over their gap vectors), ``v ~ Beta(1, j - 1)`` (``v = 1`` for a leaf), and the share kept
    is ``E[1 - exp(-X v^m)]``, below ``1 - exp(-E[x])`` (Jensen; ``E[X v^m]`` is :func:`on_a_chain`'s x),
    as a negation's survival is the mean of ``exp(-r len)`` over its ranges (:mod:`.negation_range`).  A
    long chain's short runs then keep only the records of small span: a record spread over most of the
    window leaves no room for the rest of the chain.

    The mean is a Gauss-Legendre quadrature in three pieces around the slack ``a = X^(-1/m)`` where
    ``X v^m`` crosses 1 (the survival falls from 1 to 0 over a factor ``e^(8/m)`` of ``v`` there); on a
    chain of three or fewer every run is a leaf or a pair beside one variable, whose means have closed forms
    (:func:`_short_chain`).  A rate of 0 gives no chain (share 0); a ``W r`` past :data:`~.finite.MAX_ESTIMATE`
    is read as that bound.  Kept per ``wr``: a plan's search and its estimate ask for the same chain."""
    return _run_shares(tuple(float(x) for x in wr))


_NO_EVENTS = -1e6
"""The log of a rate of 0's ``W r``: finite, so that a run's own logs cancel out of its ``X`` exactly as
the others' do (``log 0 = -inf`` would leave ``inf - inf``), while ``X`` of any run beside it is 0."""


@functools.lru_cache(maxsize=256)
def _run_shares(wr: tuple[float, ...]) -> tuple[tuple[float, ...], ...]:
    n = len(wr)
    logs = [math.log(min(x, MAX_ESTIMATE)) if x > 0 else _NO_EVENTS for x in wr]
    if n <= 3:
        return _short_chain(logs)
    kept = np.ones((n, n))
    prefix = np.concatenate(([0.0], np.cumsum(logs)))
    a_idx, b_idx = np.triu_indices(n)
    j = b_idx - a_idx + 1
    m = n - j
    inner = m > 0
    a_idx, b_idx, j, m = a_idx[inner], b_idx[inner], j[inner], m[inner]
    log_x = prefix[n] - (prefix[b_idx + 1] - prefix[a_idx]) - _LOG_FACTORIALS[m]
    kept[a_idx, b_idx] = _extends(log_x, j, m)
    return tuple(map(tuple, kept.tolist()))


def _short_chain(logs: list[float]) -> tuple[tuple[float, ...], ...]:
    """:func:`run_shares` of a chain of at most three (``logs``: each ``log W r``) in closed form: a leaf's
    share ``1 - e^-X``; a pair's slack ``v`` is uniform (``Beta(1, 1)``) and the one variable beside it is
    expected ``X v`` times, so ``E[1 - e^(-X v)] = 1 - (1 - e^-X) / X`` (``X/2 - X^2/6`` where ``X`` is
    small enough for that difference to cancel)."""
    n = len(logs)
    kept = [[1.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(a, n - 1 if a == 0 else n):
            m = n - (b - a + 1)
            x = math.exp(min(sum(logs) - sum(logs[a:b + 1]) - math.lgamma(m + 1.0), 700.0))
            if a == b:
                kept[a][b] = -math.expm1(-x)
            else:
                kept[a][b] = x / 2 - x * x / 6 if x < 1e-5 else 1.0 + math.expm1(-x) / x
    return tuple(map(tuple, kept))


_LOG_FACTORIALS = np.array([math.lgamma(k + 1.0) for k in range(MAX_SIZE + 1)])


def _extends(log_x: np.ndarray, j: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``E[1 - exp(-X v^m)]``, ``v ~ Beta(1, j - 1)`` (``v = 1`` at ``j = 1``), ``X = e^log_x``, per element."""
    jf, mf = j[:, None].astype(np.float64), m[:, None].astype(np.float64)
    lx = np.minimum(log_x, 700.0)[:, None]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        crossing = -lx / mf  # log of the slack a where X v^m = 1 (past 1 for a rare chain: one piece)
        cuts = np.minimum(1.0, np.exp(crossing + np.array([-_EDGE, _EDGE]) / mf))
        edges = np.concatenate((np.zeros_like(lx), cuts, np.ones_like(lx)), axis=1)
        lo, hi = edges[:, :-1, None], edges[:, 1:, None]
        v = 0.5 * (hi - lo) * _NODES + 0.5 * (hi + lo)  # (runs, piece, node)
        density = (jf[:, :, None] - 1.0) * (1.0 - v) ** (jf[:, :, None] - 2.0)
        # the chance of at least one extension, not 1 - the survival: a share far below 1e-16 keeps its digits
        hit = -np.expm1(-np.exp(np.minimum(lx[:, :, None] + mf[:, :, None] * np.log(v), 700.0)))
        total = (0.5 * (hi - lo)[..., 0] * ((density * hit) @ _WEIGHTS)).sum(axis=1)
    leaf = -np.expm1(-np.exp(lx[:, 0]))
    return np.clip(np.where(j == 1, leaf, total), 0.0, 1.0)
