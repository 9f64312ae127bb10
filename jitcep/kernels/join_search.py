"""The join-order searches' inner loops, compiled (:mod:`jitcep.plan.planner.algorithms`).

The plan-generation algorithms price one join per step: DP-B 3^n of them
(Kolchinsky & Schuster 2018, 6.1), DP-LD n 2^(n-1), ZStream's program
(n^3 - n) / 6 (Mei & Madden 2009, 5.2.3, Algorithm 5) and GREEDY n^2 / 2.
In Python a step under ZStream's Table 2 node term took 1.5-4 us (memoised
set functions in dicts, a dozen calls), so at 24 units the program over
GREEDY's order alone cost ~8 ms per run, 13% of seq_len24's run at 10^6 events
(perf/notes/planning_time.md "Planning time at 10^6 events").  Here a step is a few
arithmetic operations on arrays.

The problem comes as arrays (:class:`SearchArrays`): per unit its card
``card[i]``, the leaf's cost ``leaf[i]`` under the model, bitmasks
``after[i]`` (the units every event of i precedes), per pair ``sel[i, j]``
(without the pattern's order) and ``count[i, j]`` (the conjuncts between
them: Formula 1's n), and the order as ``blocks``, the series nodes of its
series-parallel decomposition (a row of block bitmasks each, zero-padded;
none: no order) and ``fact[k]`` = k! (as a float, ``0..n``), whose share of a set S (:func:`_share`,
:func:`jitcep.plan.planner.order_share.share`) multiplies S's PM and gives
ZStream's Pt of a join, ``share(L | R) / (share(L) share(R))``, and, where a
semi-join reduction may be planned over the joins, ``ext[a, b]``: the share of
the records of the run of units ``a..b`` that extend to a chain (:func:`_extends`
multiplies a set's PM by it; empty: none).  ``model``
picks the node term:

- :data:`COST_TREE`: Cost_tree (section 3.2), PM(L | R);
- :data:`COST_ORD`: Cost_ord (section 3.1), PM(L | R) - PM(R), R one unit;
- :data:`ZSTREAM`: ZStream's Table 2 (:func:`jitcep.plan.planner.cost.zstream_node`).

Every number is computed in the order the Python node terms compute it
(:class:`jitcep.plan.planner.algorithms._common.Costing`: PM(S) is the product
over S's units ascending of ``card[i]`` and then ``sel[i, j]`` for S's units j
below i, which is what its memo builds one top unit at a time, times the share, then
:func:`_extends`), and ties go
where the Python searches send them, so a search here returns the same tree
as there; the Python searches are these kernels' twins (tests/naive.py names
them, tests/test_kernels_join_search.py compares).  A NaN cost anywhere
(user statistics whose products overflow) sets the returned flag: the caller
then runs the Python search, whose comparisons with NaN this does not copy.
"""

from __future__ import annotations


import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .checks import fail

COST_TREE = 0
COST_ORD = 1
ZSTREAM = 2

MAX_UNITS = 62
"""Units of a problem the kernels take (bitmasks in int64)."""

MAX_TABLE_UNITS = 20
"""Units up to which DP-B and DP-LD keep a table over every subset (2^n entries of each set function)."""


@njit(**NUMBA_FLAGS)
def _popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(**NUMBA_FLAGS)
def _pm(card, sel, s):
    """The pairwise product of PM of the units in bitmask ``s``, multiplied in the order of ``Costing.pm``'s
    memo (the callers multiply it by the order's share)."""
    out = 1.0
    n = card.shape[0]
    for i in range(n):
        if s >> i & 1:
            out *= card[i]
            for j in range(i):
                if s >> j & 1:
                    out *= sel[i, j]
    return out


@njit(**NUMBA_FLAGS)
def _share(blocks, fact, s):
    """The order's share of the units in ``s`` (:func:`jitcep.plan.planner.order_share.share`, in its order
    of operations): per series node, the factorials of ``s``'s units in each block over that of their sum."""
    out = 1.0
    for r in range(blocks.shape[0]):
        num = 1.0
        total = 0
        for k in range(blocks.shape[1]):
            b = blocks[r, k]
            if b == 0:
                break
            c = _popcount(s & b)
            num *= fact[c]
            total += c
        out *= num / fact[total]
    return out


@njit(**NUMBA_FLAGS)
def _extends(ext, s):
    """The share of the records of the units in ``s`` a semi-join reduction keeps at their join
    (:func:`jitcep.plan.planner.cardinality.extended`): ``ext[a, b]`` where ``s`` is the run ``a..b`` of two
    or more units, else 1 (and where ``ext`` is empty: no reduction)."""
    n = ext.shape[0]
    if n == 0 or s & (s - 1) == 0:
        return 1.0
    low = s & -s
    if (s + low) & s != 0:
        return 1.0
    a = 0
    while not s >> a & 1:
        a += 1
    b = a
    while b + 1 < n and s >> (b + 1) & 1:
        b += 1
    return ext[a, b]


@njit(**NUMBA_FLAGS)
def _conjuncts(count, s):
    """Conjuncts between the units of ``s``."""
    total = 0
    n = count.shape[0]
    for i in range(n):
        if s >> i & 1:
            for j in range(i):
                if s >> j & 1:
                    total += count[i, j]
    return total


@njit(**NUMBA_FLAGS)
def _all_after(after, s, full):
    """The units every unit of ``s`` precedes."""
    out = full
    for i in range(after.shape[0]):
        if s >> i & 1:
            out &= after[i]
    return out


@njit(**NUMBA_FLAGS)
def _node(model, left, right, a, b, both, sh_l, sh_r, sh_b, cj_l, cj_r, cj_b, af_l, af_r, k_predicate, p_output):
    """The cost the root of the join ``(left, right)`` adds (``a``, ``b``, ``both``: PM of left, right,
    left | right; ``sh_*``, ``cj_*``, ``af_*``: their order's shares, conjuncts and units all after)."""
    if model == COST_TREE:
        return both
    if model == COST_ORD:
        return both - b
    if a == 0.0 or b == 0.0:
        return 0.0
    pt = sh_b / (sh_l * sh_r)
    if a * b == 0.0 or pt == 0.0:
        return 0.0
    n = cj_b - cj_l - cj_r
    p = both / (a * b) / pt
    if (right & ~af_l) == 0 or (left & ~af_r) == 0:  # a Sequence
        ci = a * b * pt
        out = ci * p
    else:  # a Conjunction, testing the order like a predicate
        ci = a * b
        out = ci * (pt * p)
    return ci + n * k_predicate * ci + p_output * out


@njit(**NUMBA_FLAGS)
def _tables(card, sel, blocks, fact, count, after, ext):
    """PM, the order's share, conjuncts and all-after of every subset of the n units, by bitmask."""
    n = card.shape[0]
    size = np.int64(1) << n
    full = size - 1
    raw = np.empty(size, np.float64)
    pm = np.empty(size, np.float64)
    sh = np.empty(size, np.float64)
    cj = np.zeros(size, np.int64)
    af = np.empty(size, np.int64)
    raw[0] = 1.0
    pm[0] = 1.0
    sh[0] = 1.0
    af[0] = full
    for s in range(1, size):
        top = 0
        while s >> (top + 1):
            top += 1
        rest = s ^ (np.int64(1) << top)
        out = raw[rest] * card[top]
        c = 0
        for j in range(top):
            if rest >> j & 1:
                out *= sel[top, j]
                c += count[top, j]
        raw[s] = out
        sh[s] = _share(blocks, fact, s)
        pm[s] = out * sh[s] * _extends(ext, s)
        cj[s] = cj[rest] + c
        af[s] = af[rest] & after[top]
    return pm, sh, cj, af


@njit(**NUMBA_FLAGS)
def _dp_bushy(card, sel, blocks, fact, count, after, ext, leaf, model, k_predicate, p_output):
    n = card.shape[0]
    pm, sh, cj, af = _tables(card, sel, blocks, fact, count, after, ext)
    size = np.int64(1) << n
    cost = np.empty(size, np.float64)
    split = np.zeros(size, np.int64)
    for i in range(n):
        cost[np.int64(1) << i] = leaf[i]
    nan = False
    for s in range(1, size):
        if s & (s - 1) == 0:
            continue
        found = np.int64(0)
        found_cost = 0.0
        left = np.int64(0)
        while True:  # proper non-empty submasks, ascending: ties go to the lowest left bitmask
            left = (left - s) & s
            if left == s:
                break
            right = s ^ left
            c = (cost[left] + cost[right]) + _node(model, left, right, pm[left], pm[right], pm[s], sh[left],
                                                   sh[right], sh[s], cj[left], cj[right], cj[s], af[left],
                                                   af[right], k_predicate, p_output)
            if c != c:
                nan = True
            if found == 0 or c < found_cost:
                found, found_cost = left, c
        cost[s] = found_cost
        split[s] = found
    return split, cost[size - 1], nan


@njit(**NUMBA_FLAGS)
def _dp_left_deep(card, sel, blocks, fact, count, after, ext, leaf, model, k_predicate, p_output):
    n = card.shape[0]
    pm, sh, cj, af = _tables(card, sel, blocks, fact, count, after, ext)
    size = np.int64(1) << n
    cost = np.empty(size, np.float64)
    last = np.full(size, -1, np.int64)
    for i in range(n):
        cost[np.int64(1) << i] = leaf[i]
        last[np.int64(1) << i] = i
    nan = False
    for s in range(1, size):
        if s & (s - 1) == 0:
            continue
        found = -1
        found_cost = 0.0
        for i in range(n):  # members ascending; <=: among equal costs the highest index joins last
            if not s >> i & 1:
                continue
            low = np.int64(1) << i
            rest = s ^ low
            c = (cost[rest] + leaf[i]) + _node(model, rest, low, pm[rest], pm[low], pm[s], sh[rest], sh[low],
                                               sh[s], cj[rest], cj[low], cj[s], af[rest], af[low],
                                               k_predicate, p_output)
            if c != c:
                nan = True
            if found < 0 or c <= found_cost:
                found, found_cost = i, c
        cost[s] = found_cost
        last[s] = found
    order = np.empty(n, np.int64)
    s = size - 1
    for k in range(n - 1, -1, -1):
        order[k] = last[s]
        s ^= np.int64(1) << last[s]
    return order, cost[size - 1], nan


@njit(**NUMBA_FLAGS)
def _greedy(card, sel, blocks, fact, count, after, ext, leaf, model, first, k_predicate, p_output):
    n = card.shape[0]
    full = (np.int64(1) << n) - 1
    order = np.empty(n, np.int64)
    order[0] = first
    plan = np.int64(1) << first
    plan_cost = leaf[first]
    nan = False
    none = np.int64(0)  # a lone unit's conjuncts (a variable: no Literal specialisation)
    for k in range(1, n):
        sh_l = _share(blocks, fact, plan)
        a, cj_l, af_l = (_pm(card, sel, plan) * sh_l * _extends(ext, plan), _conjuncts(count, plan),
                         _all_after(after, plan, full))
        best = -1
        best_cost = 0.0
        for i in range(n):  # candidates ascending: ties go to the lower index
            low = np.int64(1) << i
            if plan & low:
                continue
            both = plan | low
            sh_i, sh_b = _share(blocks, fact, low), _share(blocks, fact, both)
            c = (plan_cost + leaf[i]) + _node(model, plan, low, a, _pm(card, sel, low) * sh_i * _extends(ext, low),
                                              _pm(card, sel, both) * sh_b * _extends(ext, both), sh_l, sh_i, sh_b,
                                              cj_l, none,
                                              _conjuncts(count, both), af_l, after[i] & full, k_predicate, p_output)
            if c != c:
                nan = True
            if best < 0 or c < best_cost:
                best, best_cost = i, c
        order[k] = best
        plan |= np.int64(1) << best
        plan_cost = best_cost
    return order, plan_cost, nan


@njit(**NUMBA_FLAGS)
def _zstream(card, sel, blocks, fact, count, after, ext, leaf, model, units, k_predicate, p_output):
    n = units.shape[0]
    full = (np.int64(1) << card.shape[0]) - 1
    # the runs units[i:j] of the order, 0 <= i < j <= n: their masks and set functions
    mask = np.zeros((n + 1, n + 1), np.int64)
    pm = np.zeros((n + 1, n + 1), np.float64)
    sh = np.ones((n + 1, n + 1), np.float64)
    cj = np.zeros((n + 1, n + 1), np.int64)
    af = np.zeros((n + 1, n + 1), np.int64)
    cost = np.zeros((n + 1, n + 1), np.float64)
    root = np.zeros((n + 1, n + 1), np.int64)
    for i in range(n):
        m = np.int64(0)
        for j in range(i + 1, n + 1):
            m |= np.int64(1) << units[j - 1]
            mask[i, j] = m
            sh[i, j] = _share(blocks, fact, m)
            pm[i, j] = _pm(card, sel, m) * sh[i, j] * _extends(ext, m)
            cj[i, j] = _conjuncts(count, m)
            af[i, j] = _all_after(after, m, full)
        cost[i, i + 1] = leaf[units[i]]
    nan = False
    for s in range(2, n + 1):
        for i in range(n - s + 1):
            j = i + s
            found = -1
            found_cost = 0.0
            for r in range(i + 1, j):  # ties: the leftmost root
                c = (cost[i, r] + cost[r, j]) + _node(model, mask[i, r], mask[r, j], pm[i, r], pm[r, j], pm[i, j],
                                                      sh[i, r], sh[r, j], sh[i, j], cj[i, r], cj[r, j], cj[i, j],
                                                      af[i, r], af[r, j], k_predicate, p_output)
                if c != c:
                    nan = True
                if found < 0 or c < found_cost:
                    found, found_cost = r, c
            cost[i, j] = found_cost
            root[i, j] = found
    return root, cost[0, n], nan


# --- wrappers: check the arrays, run, hand back the search's choices ------------------------------------


class SearchArrays:
    """A join problem as the kernels read it (module docstring); built by ``Costing.arrays``."""

    __slots__ = ("card", "sel", "blocks", "fact", "count", "after", "leaf", "model", "k_predicate", "p_output",
                 "ext")

    def __init__(self, card, sel, blocks, fact, count, after, leaf, model, k_predicate, p_output, ext=()):
        n = len(card)
        if not 1 <= n <= MAX_UNITS:
            raise fail("join_search", f"{n} units, expected 1..{MAX_UNITS}")
        self.card = np.ascontiguousarray(card, np.float64)
        self.sel = np.ascontiguousarray(sel, np.float64)
        width = max((len(node) for node in blocks), default=1)
        self.blocks = np.zeros((len(blocks), width), np.int64)
        for r, node in enumerate(blocks):
            self.blocks[r, :len(node)] = node
        self.fact = np.ascontiguousarray(fact, np.float64)  # k! at k: the order_share module's floats
        self.count = np.ascontiguousarray(count, np.int64)
        self.after = np.ascontiguousarray(after, np.int64)
        self.leaf = np.ascontiguousarray(leaf, np.float64)
        # the reduction's kept shares of the runs (n x n), or none (0 x 0): every set keeps all its records
        self.ext = np.ascontiguousarray(ext, np.float64).reshape((n, n) if len(ext) else (0, 0))
        if (self.sel.shape != (n, n) or self.count.shape != (n, n) or self.after.shape != (n,)
                or self.leaf.shape != (n,) or self.fact.shape != (n + 1,)):
            raise fail("join_search", "every unit needs a card, a leaf cost, a mask and a row of each matrix")
        if self.blocks.size and (self.blocks.min() < 0 or int(np.bitwise_or.reduce(self.blocks, axis=None)) >> n):
            raise fail("join_search", f"the order's blocks must be masks of the {n} units")
        if model not in (COST_TREE, COST_ORD, ZSTREAM):
            raise fail("join_search", f"unknown node term {model}")
        self.model = model
        self.k_predicate, self.p_output = float(k_predicate), float(p_output)

    @property
    def n(self) -> int:
        return len(self.card)

    def _args(self):
        return (self.card, self.sel, self.blocks, self.fact, self.count, self.after, self.ext, self.leaf, self.model)

    def _constants(self):
        return (self.k_predicate, self.p_output)


def dp_bushy(a: SearchArrays):
    """DP-B's best split of every set (``split[mask]``: the left part), the optimum's cost, and whether a
    cost was NaN; None past :data:`MAX_TABLE_UNITS`, and under Cost_ord, which prices order-based plans
    only (the Python node term refuses a join whose right input is not one unit)."""
    if a.n > MAX_TABLE_UNITS or a.model == COST_ORD:
        return None
    return _dp_bushy(*a._args(), *a._constants())


def dp_left_deep(a: SearchArrays):
    """DP-LD's best order, its cost, and whether a cost was NaN; None past :data:`MAX_TABLE_UNITS`."""
    if a.n > MAX_TABLE_UNITS:
        return None
    return _dp_left_deep(*a._args(), *a._constants())


def greedy(a: SearchArrays, first: int):
    """GREEDY's order from the unit ``first``, the plan's cost, and whether a cost was NaN."""
    if not 0 <= first < a.n:
        raise fail("greedy", f"first unit {first} outside [0, {a.n})")
    return _greedy(*a._args(), np.int64(first), *a._constants())


def zstream(a: SearchArrays, units):
    """ZStream's program over the order ``units`` (a permutation of the units): ``root[i, j]`` of every
    run, the best tree's cost, and whether a cost was NaN; None under Cost_ord (as :func:`dp_bushy`)."""
    if a.model == COST_ORD:
        return None
    units = np.ascontiguousarray(units, np.int64)
    if len(units) != a.n or not np.array_equal(np.sort(units), np.arange(a.n)):
        raise fail("zstream", "the order must hold every unit once")
    return _zstream(*a._args(), units, *a._constants())
