"""The join order under a semi-join reduction: the searches price a run of the SEQ's chain at the records that
extend to a chain (docs/planning.md "The reduction in the join order").

A long SEQ whose chains fill its window (two types alternating, one event per ts unit, 48 variables
``WITHIN 49``) holds few partial matches in any tree of runs, each join keeping only the records that extend
to a chain, and a combinatorial number in a tree joining the SEQ's two ends first (an AND join, no
extension test: every choice of the middle events in the window).  Priced on whole leaves, the predicate
``v0.x <= v47.x`` makes that join look cheapest, and greedy (and dp_bushy / dp_left_deep past their budgets,
which fall back to greedy's plan) would end in an ExplosionError where zstream's plan returns the matches.

The expected matches are enumerated by hand (the reference evaluator takes minutes on these chains)."""

from __future__ import annotations

import polars as pl
import pytest

import jitcep

K_LONG = 48


def _table(n: int) -> pl.DataFrame:
    return pl.DataFrame({"type": ["AB"[i % 2] for i in range(n)], "ts": list(range(n)),
                         "x": [i % 7 for i in range(n)]})


def _pattern(k: int) -> str:
    items = ", ".join(f"{'AB'[i % 2]} v{i}" for i in range(k))
    return f"PATTERN SEQ({items}) WHERE v0.x <= v{k - 1}.x AND v3.x != v7.x WITHIN {k + 1}"


def _chains_by_hand(n: int, k: int) -> set[tuple[int, ...]]:
    """The ts of each variable in every match of :func:`_pattern` over :func:`_table`: events of the
    variables' types (A at even ts, B at odd) in strictly increasing ts, the last within ``k + 1`` of the
    first, ``x = ts % 7``, the two conjuncts tested on the whole tuple."""
    out = set()

    def extend(chain):
        j = len(chain)
        if j == k:
            if chain[0] % 7 <= chain[-1] % 7 and chain[3] % 7 != chain[7] % 7:
                out.add(tuple(chain))
            return
        start = chain[0] if chain else None
        for t in range(chain[-1] + 1 if chain else 0, n):
            if t % 2 != j % 2:
                continue
            # the k - j - 1 variables after this one need as many later ts units, all within the window
            if start is not None and t + (k - j - 1) > start + k + 1:
                break
            extend(chain + [t])

    extend([])
    return out


def _ts_tuples(frame: pl.DataFrame, k: int) -> set[tuple[int, ...]]:
    cols = [frame[f"v{i}"].struct.field("ts").to_list() for i in range(k)]
    return set(zip(*cols))


@pytest.mark.parametrize("planner", ["greedy", "dp_bushy", "dp_left_deep", "zstream", "zstream_ord", "ii_greedy",
                                     "efreq"])
def test_every_algorithm_runs_a_long_chain_within_the_caps(planner):
    n = 60
    want = _chains_by_hand(n, K_LONG)
    assert len(want) > 100  # a table on which the chains are many and the failing plan exploded
    got = jitcep.compile(_pattern(K_LONG), planner=planner).run(_table(n), type="type")
    assert got.height == len(want)
    assert _ts_tuples(got, K_LONG) == want


def _joins(node, out):
    if "join" in node["op"].lower():
        out.append((tuple(node["vars"]), node["est_rows"], node["rows"]))
    for child in node.get("children", ()):
        _joins(child, out)
    return out


@pytest.mark.parametrize("planner", ["greedy", "zstream", "dp_left_deep"])
def test_the_joins_are_estimated_at_the_records_they_hold(planner):
    """Every join's estimate within 10x of the records it held (priced on whole leaves the first join of
    greedy's plan and zstream's runs were 28x and 377x over), and the first join binds a run of the chain."""
    k, n = 20, 200
    q = jitcep.compile(_pattern(k), planner=planner)
    tree = q.explain(_table(n), type="type", analyze=True, format="dict")
    joins = _joins(tree, [])
    assert tree["rows"] == len(_chains_by_hand(n, k))
    for names, est, rows in joins:
        assert rows / 10 <= est <= 10 * rows, (names, est, rows)
    first = min(joins, key=lambda j: len(j[0]))[0]
    idx = sorted(int(v[1:]) for v in first)
    assert idx == list(range(idx[0], idx[0] + len(idx))), first


def test_run_shares_by_hand():
    """``run_shares`` on a chain of three, ``W r`` = 2, 3, 5, against closed forms: a leaf lies on
    ``X = prod(W r, others) / 2!`` chains (Poisson, its span 0); a pair's slack ``v`` is uniform and one
    variable outside it is expected ``X v`` times, so ``E[1 - exp(-X v)] = 1 - (1 - e^-X) / X``."""
    import math

    from jitcep.plan.planner.chain_shares import run_shares

    kept = run_shares([2.0, 3.0, 5.0])
    assert kept[0][0] == pytest.approx(1 - math.exp(-3 * 5 / 2))
    assert kept[1][1] == pytest.approx(1 - math.exp(-2 * 5 / 2))
    assert kept[0][1] == pytest.approx(1 - (1 - math.exp(-5)) / 5, rel=1e-6)
    assert kept[1][2] == pytest.approx(1 - (1 - math.exp(-2)) / 2, rel=1e-6)
    assert kept[0][2] == 1.0
    assert run_shares([2.0, 0.0, 5.0])[0][0] == 0.0  # a rate of 0: no chain


def test_run_shares_at_the_extremes():
    """A share far below 1e-16 keeps its digits (a run's pair beside ten rare variables: ``X / 2`` to
    first order, not 0, which would price the run as free); a rate of 0 is no chain without a NumPy
    warning; a ``W r`` past a float is read as the estimates' bound, not as no chain.  The quadrature (12
    variables) and the closed forms (3) alike."""
    import math
    import warnings

    from jitcep.plan.planner.chain_shares import run_shares

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        long_rare = run_shares([0.01] * 12)
        x = 0.01 ** 10 / math.factorial(10)
        assert long_rare[0][0] == pytest.approx(x, rel=1e-6)  # a leaf: 1 - e^-X
        assert 0 < long_rare[0][1] < x  # a pair's slack below the window
        short_rare = run_shares([1e-12, 1e-12, 1e-12])
        assert short_rare[0][1] == pytest.approx(1e-12 / 2, rel=1e-6)  # 1 - (1 - e^-X) / X ~ X / 2
        assert run_shares([2.0, 0.0, 5.0, 1.0])[2][3] == 0.0
        assert run_shares([1e308, 2.0, 3.0, 4.0])[1][2] == 1.0  # X past any count: every record extends
