"""Hypothesis strategies for pattern ASTs and predicate expressions (shipped for users, as Polars does).

>>> from hypothesis import given
>>> from jitcep.pattern import parse, to_text, validate
>>> @given(patterns())
... def test_round_trip(p):
...     assert parse(to_text(validate(p))) == p

Every pattern drawn from :func:`patterns` passes :func:`jitcep.pattern.validate`:
negations only as elements of SEQ / AND outside OR and Kleene groups, unique
variable names, array references and aggregates only on Kleene variables, at
most one negated variable per conjunct, no conjunct across two OR branches,
``[attr]`` only as top-level conjuncts, positive windows.  Names and literals
deliberately include the awkward cases of the text form (keywords, spaces,
back-quotes, hyphenated types, quotes in strings, negative numbers).
"""

from __future__ import annotations

from hypothesis import strategies as st

from ..pattern.ast import (UNIT_NS, Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem,
                           Seq, TimeWindow, Unbounded, walk)
from ..pattern.expr import (AGG_FUNCS, Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary,
                            conjoin)

__all__ = ["patterns", "exprs", "values", "literals", "windows", "TYPE_NAMES", "VAR_NAMES", "ATTR_NAMES"]

TYPE_NAMES = ("A", "B", "Stock", "SHELF-READING", "C-1x", "has space", "SEQ", "and", "it's", "Ünï")
VAR_NAMES = ("a", "b", "c", "x", "in", "my var", "len", "é", "q`q", "i")
ATTR_NAMES = ("x", "price", "ts", "Opening Price", "len", "AND", "ß")


def literals(strings: bool = True) -> st.SearchStrategy[Lit]:
    """Literal numbers (ints, finite floats, negatives), strings, booleans and NULL."""
    options = [
        st.integers(min_value=-10**12, max_value=10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
        st.none(),
    ]
    if strings:
        options.append(st.text(max_size=6))
    return st.one_of(*options).map(Lit)


def _numbers() -> st.SearchStrategy[Lit]:
    return st.one_of(st.integers(min_value=-10**6, max_value=10**6),
                     st.floats(allow_nan=False, allow_infinity=False)).map(Lit)


def values(variables=("a", "b"), kleene=("c",), *, attrs=ATTR_NAMES, indexed=True) -> st.SearchStrategy[Expr]:
    """Numeric-valued expressions over ``variables`` (single events) and ``kleene`` (array variables).

    ``indexed=False`` leaves out ``c[i-1]``-style member indexes and a whole list ``c.x`` (RETURN allows
    fixed members in expressions, and a list only as an item of its own).
    """
    attr = st.sampled_from(attrs)
    leaves = [_numbers()]
    if variables:
        leaves.append(st.builds(Attr, st.sampled_from(variables), attr))
    if kleene:
        kinds = [None, 1, 2, "len", "i", "i-1"] if indexed else [1, 2, "len"]
        leaves.append(st.builds(Attr, st.sampled_from(kleene), attr, st.sampled_from(kinds)))
        leaves.append(st.builds(Agg, st.just("count"), st.sampled_from(kleene)))
        leaves.append(st.builds(Agg, st.sampled_from([f for f in AGG_FUNCS if f != "count"]),
                                st.sampled_from(kleene), attr))
    return st.recursive(
        st.one_of(*leaves),
        lambda inner: st.one_of(
            st.builds(Arith, st.sampled_from(["+", "-", "*", "/"]), inner, inner),
            st.builds(Unary, st.sampled_from(["neg", "abs"]), inner),
        ),
        max_leaves=4,
    )


def _unknown_kind(variables, kleene, attrs) -> st.SearchStrategy[Expr] | None:
    """Values whose kind only the event table tells (semantics §4): attributes, and min / max of one."""
    attr = st.sampled_from(attrs)
    leaves = []
    if variables:
        leaves.append(st.builds(Attr, st.sampled_from(variables), attr))
    if kleene:
        leaves.append(st.builds(Agg, st.sampled_from(["min", "max"]), st.sampled_from(kleene), attr))
    return st.one_of(*leaves) if leaves else None


def exprs(variables=("a", "b"), kleene=("c",), *, attrs=ATTR_NAMES) -> st.SearchStrategy[Expr]:
    """Condition expressions (valid WHERE conjuncts) over the given variables; no ``[attr]`` tests.

    Kinds agree as far as a pattern shows them (semantics §4, :mod:`jitcep.pattern.kinds`): a number
    is compared with numbers or NULL; a literal of any kind (a string, a boolean) with an attribute,
    whose kind only the table tells.
    """
    ops = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
    val = values(variables, kleene, attrs=attrs)
    numeric = st.one_of(val, _numbers(), st.just(Lit(None)))
    numeric_list = st.lists(st.one_of(_numbers(), st.just(Lit(None))), min_size=1, max_size=3).map(tuple)
    atom_options = [
        st.builds(Cmp, ops, val, numeric),
        st.builds(In, val, numeric_list, st.booleans()),
        st.builds(IsNull, val, st.booleans()),
        st.booleans().map(Lit),
    ]
    unknown = _unknown_kind(variables, kleene, attrs)
    if unknown is not None:
        atom_options += [
            st.builds(Cmp, ops, unknown, literals()),
            st.builds(In, unknown, st.lists(literals(), min_size=1, max_size=3).map(tuple), st.booleans()),
        ]
    atoms = st.one_of(*atom_options)
    return st.recursive(
        atoms,
        lambda inner: st.one_of(
            st.builds(Not, inner),
            st.builds(BoolOp, st.sampled_from(["and", "or"]),
                      st.lists(inner, min_size=2, max_size=3).map(tuple)),
        ),
        max_leaves=5,
    )


def windows() -> st.SearchStrategy:
    """Valid windows: time (with or without a unit), count, unbounded."""
    amount = st.one_of(st.integers(min_value=1, max_value=10**9),
                       st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False))
    return st.one_of(
        st.builds(TimeWindow, amount, st.sampled_from([None, *UNIT_NS])),
        st.builds(CountWindow, st.integers(min_value=1, max_value=10**6)),
        st.just(Unbounded()),
    )


# --- structures -------------------------------------------------------------


class _Names:
    """Unique variable names drawn from VAR_NAMES, numbered on reuse."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, draw) -> str:
        base = draw(st.sampled_from(VAR_NAMES))
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}{k}"
        self.used.add(name)
        return name


def _var(draw, names: _Names) -> EventVar:
    types = draw(st.one_of(st.none(), st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=3,
                                               unique=True).map(tuple)))
    return EventVar(names.fresh(draw), types)


def _bounds(draw) -> tuple[int, int | None]:
    lo = draw(st.integers(min_value=0, max_value=3))
    hi = draw(st.one_of(st.none(), st.integers(min_value=max(lo, 1), max_value=lo + 3)))
    return lo, hi


def _element(draw, names: _Names, depth: int, in_disj: bool) -> Node:
    kinds = ["var", "kleene"]
    if depth > 0:
        kinds += ["seq", "conj", "disj"]
    kind = draw(st.sampled_from(kinds))
    if kind == "var":
        return _var(draw, names)
    if kind == "kleene":
        if depth > 0 and draw(st.booleans()):
            group = draw(st.sampled_from([Seq, Conj]))
            n = draw(st.integers(min_value=1, max_value=3))
            # a group is a SEQ / AND of variables (docs/semantics.md section 6)
            body = group(tuple(_var(draw, names) for _ in range(n)))
        else:
            body = _var(draw, names)
        return Kleene(body, *_bounds(draw))
    op = {"seq": Seq, "conj": Conj, "disj": Disj}[kind]
    n = draw(st.integers(min_value=1, max_value=3))
    items = [_element(draw, names, depth - 1, in_disj or op is Disj) for _ in range(n)]
    if op is not Disj and not in_disj:
        for _ in range(draw(st.integers(min_value=0, max_value=2))):  # negations go between positives
            items.insert(draw(st.integers(min_value=0, max_value=len(items))), Neg(_var(draw, names)))
    return op(tuple(items))


def _scopes(body: Node) -> dict[str, tuple]:
    """Per variable: its (OR node id, branch index) choices, to keep a conjunct inside one branch."""
    out: dict[str, tuple] = {}

    def visit(node, path):
        if isinstance(node, EventVar):
            out[node.name] = path
        elif isinstance(node, Disj):
            for i, item in enumerate(node.items):
                visit(item, path + ((id(node), i),))
        else:
            for c in node.children():
                visit(c, path)

    visit(body, ())
    return out


def _compatible(p: tuple, q: tuple) -> bool:
    pd, qd = dict(p), dict(q)
    return all(pd[k] == qd[k] for k in pd.keys() & qd.keys())


@st.composite
def _conjunct(draw, body: Node, kleene: frozenset, negated: frozenset, attrs) -> Expr:
    scopes = _scopes(body)
    order = draw(st.permutations(sorted(scopes)))
    chosen: list[str] = []
    for v in order[:draw(st.integers(min_value=1, max_value=3))]:
        if v in negated and any(c in negated for c in chosen):
            continue
        if all(_compatible(scopes[v], scopes[c]) for c in chosen):
            chosen.append(v)
    singles = tuple(v for v in chosen if v not in kleene)
    arrays = tuple(v for v in chosen if v in kleene)
    return draw(exprs(singles, arrays, attrs=attrs))


@st.composite
def patterns(draw, *, max_depth: int = 3, attrs=ATTR_NAMES, where: bool = True,
             returns: bool = True) -> Pattern:
    """Valid pattern ASTs over every node kind (SEQ, AND, OR, ANY, NOT, Kleene over variables and groups)."""
    names = _Names()
    body = _element(draw, names, draw(st.integers(min_value=0, max_value=max_depth)), False)
    kleene = frozenset(v.name for k in walk(body) if isinstance(k, Kleene) for v in walk(k.body)
                       if isinstance(v, EventVar))
    negated = frozenset(n.var.name for n in walk(body) if isinstance(n, Neg))
    positive = [v.name for v in walk(body) if isinstance(v, EventVar) and v.name not in negated]

    condition = None
    if where and draw(st.booleans()):
        items = draw(st.lists(_conjunct(body, kleene, negated, attrs), min_size=0, max_size=3))
        equivs = draw(st.lists(st.builds(Equiv, st.sampled_from(attrs),
                                         st.one_of(st.none(), literals())), max_size=2))
        items = equivs + items
        condition = conjoin(items) if items else draw(st.booleans().map(Lit))

    items_out: list[ReturnItem] = []
    if returns and draw(st.booleans()):
        singles = tuple(v for v in positive if v not in kleene)
        arrays = tuple(v for v in positive if v in kleene)
        used = set(names.used) | {"match_id", "pattern"}
        for k in range(draw(st.integers(min_value=1, max_value=3))):
            if draw(st.booleans()):
                items_out.append(ReturnItem(Attr(draw(st.sampled_from(positive)), "*")))
            else:
                alias = draw(st.one_of(st.none(), st.sampled_from(["v", "avg_c", "AS", "two words"])))
                if alias is not None:
                    alias = f"{alias}{k}" if alias in used else alias
                    used.add(alias)
                whole_list = st.builds(Attr, st.sampled_from(arrays), st.sampled_from(attrs)) if arrays else None
                item = values(singles, arrays, attrs=attrs, indexed=False)
                if whole_list is not None:
                    item = st.one_of(item, whole_list)
                items_out.append(ReturnItem(draw(item), alias))
    return Pattern(body, condition, draw(windows()), tuple(items_out))
