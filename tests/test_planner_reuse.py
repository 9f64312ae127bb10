"""What a plan's rules keep and share rather than redo: the rules kept per (logical plan, join tree)
(``rules/_per_tree.py``), the estimates made once per plan tree (``Planning.work`` and ``carry_work``),
and operators copied once when a rule changes their fields (``operators.remake_joins``).

Each kept result is compared with the one made from scratch: plans made with the kept results of other
tables, shapes and patterns equal the plans made with nothing kept.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from jitcep.options import Options
from jitcep.pattern.parser import parse
from jitcep.plan.logical import logical_plan
from jitcep.plan.operators import AndJoin, Scan, SeqJoin, rebuild_joins, remake_joins
from jitcep.plan.planner.cardinality import estimate_work
from jitcep.plan.planner.statistics import Statistics
from jitcep.plan.rules import Planning, _per_tree, join_driver, physical_plan

T, W = 1000.0, 10.0  # the table's extent and the window, in ts units

PATTERNS = (
    # two patterns alike but for where their predicates go: a tree kept for one is not the other's
    "PATTERN SEQ(A a, B b, C c, D d) WHERE a.x > b.x WITHIN 10",
    "PATTERN SEQ(A a, B b, C c, D d) WHERE c.x > d.x WITHIN 10",
    # types shared across variables: the overlap flags differ from the pattern above
    "PATTERN SEQ(A a, A b, C c, D d) WHERE a.x > b.x WITHIN 10",
    "PATTERN AND(A a, B b, SEQ(C c, D d)) WITHIN 10",
    "PATTERN SEQ(A a, !B n, C c, D d) WHERE [k] WITHIN 10",
    "PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 10",
    "PATTERN SEQ(A a, B+ b[], C c, D d) WHERE b[i].x > a.x WITHIN 10",
)

# rates under which the search picks different trees (a rare unit first, or last)
RATES = ({"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.01, "n": 0.1},
         {"a": 0.01, "b": 1.0, "c": 1.0, "d": 1.0, "n": 0.1},
         {"a": 1.0, "b": 0.01, "c": 0.5, "d": 1.0, "n": 2.0})


def _stats(rates: dict) -> Statistics:
    return Statistics(dict(rates), {}, 1, 1.0, {v: "user" for v in rates}, T)


def _plan(lp, rates, shape=None):
    return physical_plan(lp, Options(planner="dp_bushy"), shape, _stats(rates), W)


def test_plans_made_with_kept_trees_equal_plans_made_afresh():
    logicals = [logical_plan(parse(t)) for t in PATTERNS]
    cases = list(itertools.product(range(len(logicals)), range(len(RATES))))
    fresh = {}
    for i, j in cases:  # each plan with nothing kept from any other
        _per_tree._KEPT.per_object.entries.clear()
        fresh[i, j] = _plan(logicals[i], RATES[j])
    _per_tree._KEPT.per_object.entries.clear()
    # every pattern's tables in turn, then again the other way round: the later plans read kept trees
    for i, j in cases + cases[::-1]:
        assert _plan(logicals[i], RATES[j]) == fresh[i, j], (PATTERNS[i], RATES[j])
    # and the trees differ where they should: some pattern got two trees over the tables
    assert any(len({repr(fresh[i, j].root) for j in range(len(RATES))}) > 1 for i in range(len(logicals)))


def test_a_given_shape_is_kept_by_value_per_logical_plan():
    text = "PATTERN SEQ(A a, B b, C c, D d) WHERE a.x > b.x AND c.x > d.x WITHIN 10"
    lp = logical_plan(parse(text))
    shapes = [(("a", "b"), ("c", "d")), ((("a", "b"), "c"), "d"), ("a", ("b", ("c", "d")))]
    _per_tree._KEPT.per_object.entries.clear()
    fresh = []
    for shape in shapes:
        _per_tree._KEPT.per_object.entries.clear()
        fresh.append(physical_plan(lp, Options(planner="dp_bushy"), shape, None, None))
    _per_tree._KEPT.per_object.entries.clear()
    # shapes equal as values but not the same objects: the kept tree is found, and is the fresh one
    got = [physical_plan(lp, Options(planner="dp_bushy"), tuple(s), None, None) for s in shapes]
    made = len(_per_tree._KEPT.kept(lp))
    got += [physical_plan(lp, Options(planner="dp_bushy"), tuple(s), None, None) for s in shapes]
    assert got == fresh + fresh
    assert len(_per_tree._KEPT.kept(lp)) == made  # the second time round every tree was kept, none made
    # the predicates went to the joins over their variables, each shape its own
    placed = {frozenset((e, frozenset(j.vars)) for j in p.nodes() if isinstance(j, (SeqJoin, AndJoin))
                        for e in j.predicates) for p in got[:3]}
    assert len(placed) == 3


def test_per_tree_drops_its_oldest_past_its_size():
    lp = logical_plan(parse("PATTERN SEQ(A a, B b) WITHIN 10"))
    _per_tree._KEPT.per_object.entries.clear()
    for i in range(_per_tree.KEEP):
        assert _per_tree.per_tree("r", lp, ("x", i), lambda i=i: i, by_value=True) == i
    # the next one makes room: the oldest leaves, so asking for the first computes again (and the
    # second oldest leaves for it); the third is still kept
    assert _per_tree.per_tree("r", lp, ("x", -1), lambda: -1, by_value=True) == -1
    assert _per_tree.per_tree("r", lp, ("x", 0), lambda: "again", by_value=True) == "again"
    assert _per_tree.per_tree("r", lp, ("x", 2), lambda: "kept?", by_value=True) == 2
    assert _per_tree.per_tree("r", lp, ("x", 1), lambda: "gone", by_value=True) == "gone"
    assert _per_tree.per_tree("r", lp, ("x", _per_tree.KEEP - 1), lambda: "kept?", by_value=True) \
        == _per_tree.KEEP - 1


@pytest.mark.parametrize("text", [t for t in PATTERNS if "+" not in t])
@pytest.mark.parametrize("rates", RATES)
def test_the_estimates_carried_past_the_drivers_equal_the_estimates_made_afresh(text, rates):
    lp = logical_plan(parse(text))
    stats = _stats(rates)
    plan = physical_plan(lp, Options(planner="dp_bushy"), None, stats, W)
    # the plan the driver rule was given: the same plan with the drivers of no statistics
    planning = Planning(lp, Options(planner="dp_bushy"), None, stats, W)
    given = dataclasses.replace(plan, root=remake_joins(plan.root, lambda n: (
        {"driver": "right", "costs": (), "rows": True} if isinstance(n, SeqJoin) else {})))
    planning.work(given)
    out = join_driver.choose(given, planning)
    carried = planning.work(out)
    made = estimate_work(out, stats, W)
    assert [carried[id(n)] for n in out.nodes()] == [made[id(n)] for n in out.nodes()]
    # a plan whose operators are not the old one's, one for one, is refused
    other = physical_plan(logical_plan(parse("PATTERN SEQ(A a, B b) WITHIN 10")), Options(planner="dp_bushy"),
                          None, _stats({"a": 1.0, "b": 1.0}), W)
    with pytest.raises(AssertionError):
        planning.carry_work(given, other)


def test_work_is_made_once_per_tree_and_again_for_another():
    lp = logical_plan(parse(PATTERNS[0]))
    stats = _stats(RATES[0])
    plan = physical_plan(lp, Options(planner="dp_bushy"), None, stats, W)
    planning = Planning(lp, Options(planner="dp_bushy"), None, stats, W)
    first = planning.work(plan)
    assert planning.work(plan) is first
    copy = dataclasses.replace(plan, root=dataclasses.replace(plan.root))  # an equal tree, another root
    second = planning.work(copy)
    assert second is not first and id(copy.root) in second and id(copy.root) not in first
    assert [second[id(n)] for n in copy.nodes()] == [first[id(n)] for n in plan.nodes()]


def _seq(names):
    node = Scan(names[0], (names[0].upper(),))
    for v in names[1:]:
        node = SeqJoin(node, Scan(v, (v.upper(),)))
    return node


def test_remake_joins_copies_each_operator_once_as_rebuild_joins_makes_it(monkeypatch):
    import jitcep.plan.operators as ops
    root = _seq("abcdef")
    copies = []
    real = dataclasses.replace

    def counted(obj, **kw):
        copies.append(obj)
        return real(obj, **kw)
    for pick in (lambda n: True, lambda n: n.right.var in "bd", lambda n: n.right.var == "f", lambda n: False):
        copies.clear()
        monkeypatch.setattr(ops.dataclasses, "replace", counted)
        got = remake_joins(root, lambda n: {"driver": "left", "costs": (("left", 1.0),)} if pick(n) else {})
        monkeypatch.undo()
        want = rebuild_joins(root, lambda n: real(n, driver="left", costs=(("left", 1.0),)) if pick(n) else n)
        assert got == want
        assert [n.costs for n in _joins(got)] == [n.costs for n in _joins(want)]  # costs: compare=False
        # one copy per join changed or above a changed one (a left-deep chain); none changed: the same tree
        changed = [len(n.vars) for n in _joins(root) if pick(n)]
        assert len(copies) == sum(1 for n in _joins(root) if changed and len(n.vars) >= min(changed))
        if not changed:
            assert got is root


def _joins(root):
    out = []
    n = root
    while isinstance(n, SeqJoin):
        out.append(n)
        n = n.left
    return out[::-1]


def test_remake_joins_reads_the_changes_on_the_operators_as_they_were():
    root = _seq("abcd")
    seen = []
    remake_joins(root, lambda n: seen.append(n) or {"driver": "left"})
    assert [id(n) for n in seen] == [id(n) for n in _joins(root)]
    assert all(a is b for a, b in itertools.zip_longest(seen, _joins(root)))
