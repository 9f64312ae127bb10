"""What the reference evaluator needs to know about one pattern, computed once.

Classifies WHERE conjuncts (docs/semantics.md §4, §7), Kleene constructs
(§6), negation ranges (§7) and rejects what the semantics leave undefined
with a named error.  Nothing here depends on the event data except the
window span (§2).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import (DuplicateVariableError, InvalidKleeneError, InvalidNegationError, InvalidWindowError,
                      MissingWindowError, UnknownVariableError, UnsupportedPatternError)
from ..events import window_span
from ..pattern.ast import CountWindow, EventVar, Kleene, Neg, Pattern, TimeWindow, Unbounded
from ..pattern.expr import Agg, Attr, Equiv, Lit, conjuncts, walk as walk_expr
from ..pattern.normalize import normalize
from ..pattern.structure import disjunction_branches, negation_contexts, variables, walk_nodes
from ..pattern.validate import check_structure
from .exprs import compile_expr


@dataclass
class KleeneInfo:
    """One Kleene construct (§6): an array variable or a group; ``vars`` bind aligned lists."""

    kid: int
    node: Kleene
    vars: tuple[str, ...]
    min: int
    max: int | None

    @property
    def is_array(self) -> bool:
        return isinstance(self.node.body, EventVar)


@dataclass
class Conjunct:
    """One top-level WHERE conjunct and how its references quantify (§4)."""

    expr: object
    fn: object
    vars: frozenset[str]
    quant: tuple[int, ...]          # Kleene constructs quantified "for every i" (b[i], b[i-1], plain b)
    prev: frozenset[int]            # constructs referenced through b[i-1]
    whole_list: frozenset[int]      # constructs read as a whole: b[k>=2], b[LEN], aggregates
    first: frozenset[int]           # constructs read through b[1]
    negated: str | None = None      # the negated variable it mentions, if any

    def member_wise(self, kid: int) -> bool:
        """Can instances be checked one iteration of ``kid`` at a time as it grows (§6.1)?"""
        return kid not in self.whole_list


@dataclass
class NegInfo:
    """A negated variable and its range (§7)."""

    var: EventVar
    before: tuple[str, ...]   # positive variables the SEQ structure orders before it
    after: tuple[str, ...]
    in_conj: bool             # has an AND ancestor
    conjs: list[Conjunct] = field(default_factory=list)


@dataclass
class PatternInfo:
    pattern: Pattern
    events: dict[str, EventVar]          # every variable
    positive: tuple[str, ...]            # positive variables, structure order
    single: tuple[str, ...]              # positive single-event variables
    lists: tuple[str, ...]               # list variables
    kleene: list[KleeneInfo]
    kid: dict[str, int]                  # list variable -> construct
    kleene_of_node: dict[int, KleeneInfo]  # id(Kleene node) -> info
    conjs: list[Conjunct]                # positive conjuncts (no negated variable) over some variable
    constants: list[Conjunct]            # conjuncts that mention no variable: they apply to every match (§4)
    negs: list[NegInfo]
    equiv_attrs: tuple[str, ...]         # [attr] tests without a value
    equiv_values: tuple[tuple[str, object], ...]  # [attr = v]
    span: int | None                     # time window in ts units
    count: int | None                    # count window
    disj_branches: list[list[frozenset[str]]]


def analyze(pattern: Pattern, table) -> PatternInfo:
    """Validate ``pattern`` for evaluation and precompute its conjuncts, Kleene constructs and negations.

    The structure is checked as written, then evaluated in its normal form (§5):
    ``info.pattern`` is ``pattern`` with the normalised body.
    """
    check_structure(pattern.body)
    body = normalize(pattern.body)
    pattern = replace(pattern, body=body)

    events: dict[str, EventVar] = {}
    for n in (x for x in walk_nodes(body) if isinstance(x, EventVar)):
        if n.name in events:
            raise DuplicateVariableError(f"variable {n.name!r} is bound twice")
        events[n.name] = n
    negated = {n.var.name for n in walk_nodes(body) if isinstance(n, Neg)}
    positive = tuple(v for v in variables(body) if v not in negated)
    if not positive:
        raise InvalidNegationError("a pattern needs at least one positive variable")

    kleene: list[KleeneInfo] = []
    kid: dict[str, int] = {}
    by_node: dict[int, KleeneInfo] = {}
    for n in walk_nodes(body):
        if isinstance(n, Kleene):
            info = KleeneInfo(len(kleene), n, variables(n.body), n.min, n.max)
            kleene.append(info)
            by_node[id(n)] = info
            for v in info.vars:
                kid[v] = info.kid
    list_vars = frozenset(kid)
    single = tuple(v for v in positive if v not in list_vars)

    # window (§2)
    w = pattern.window
    if w is None:
        raise MissingWindowError("the pattern has no WITHIN; write WITHIN UNBOUNDED to ask for no window")
    span = count = None
    if isinstance(w, TimeWindow):
        span = window_span(w, table)
    elif isinstance(w, CountWindow):
        if isinstance(w.n, bool) or not isinstance(w.n, int) or w.n <= 0:
            raise InvalidWindowError(f"WITHIN n EVENTS needs a positive integer, got {w.n!r}")
        count = w.n
    elif not isinstance(w, Unbounded):
        raise InvalidWindowError(f"unknown window {w!r}")

    branches = disjunction_branches(body)

    equiv_attrs: list[str] = []
    equiv_values: list[tuple[str, object]] = []
    conjs: list[Conjunct] = []
    constants: list[Conjunct] = []
    neg_conjs: dict[str, list[Conjunct]] = {v: [] for v in negated}
    for c in conjuncts(pattern.where):
        if isinstance(c, Equiv):
            if c.value is None:
                equiv_attrs.append(c.attr)
            else:
                equiv_values.append((c.attr, c.value.value))
            continue
        if any(isinstance(n, Equiv) for n in walk_expr(c)):
            raise UnsupportedPatternError("an equivalence test [attr] is allowed only as a top-level conjunct")
        conj = _conjunct(c, events, kid, list_vars)
        for bs in branches:
            if sum(1 for b in bs if conj.vars & b) > 1:
                raise UnsupportedPatternError(f"a predicate mentions variables of two OR branches: {c}")
        if not conj.vars:
            constants.append(conj)
            continue
        negs = conj.vars & negated
        if len(negs) > 1:
            raise UnsupportedPatternError(f"a predicate mentions two negated variables {sorted(negs)} (§7)")
        if negs:
            conj.negated = next(iter(negs))
            neg_conjs[conj.negated].append(conj)
        else:
            conjs.append(conj)

    ctx = negation_contexts(body)
    negs = [NegInfo(events[v], ctx[v].before, ctx[v].after, ctx[v].in_conj, conjs=neg_conjs[v])
            for v in variables(body) if v in negated]

    return PatternInfo(pattern, events, positive, single, tuple(v for v in positive if v in list_vars),
                       kleene, kid, by_node, conjs, constants, negs, tuple(dict.fromkeys(equiv_attrs)),
                       tuple(equiv_values), span, count, branches)


def _conjunct(expr, events, kid, list_vars) -> Conjunct:
    quant: set[int] = set()
    prev: set[int] = set()
    whole: set[int] = set()
    first: set[int] = set()
    vars_: set[str] = set()
    for n in walk_expr(expr):
        if isinstance(n, (Attr, Agg)):
            if n.var not in events:
                raise UnknownVariableError(f"predicate {expr} names unknown variable {n.var!r}")
            vars_.add(n.var)
        if isinstance(n, Agg):
            if n.var not in kid:
                raise InvalidKleeneError(f"aggregate {n.func}({n.var}) over a variable that is not a Kleene variable")
            whole.add(kid[n.var])
        elif isinstance(n, Attr):
            if n.var in kid:
                k = kid[n.var]
                if n.index in (None, "i"):
                    quant.add(k)
                elif n.index == "i-1":
                    quant.add(k)
                    prev.add(k)
                elif n.index == 1:
                    first.add(k)
                else:
                    whole.add(k)
            elif n.index is not None:
                raise InvalidKleeneError(f"indexed reference {n.var}[{n.index}] on a variable that is not a "
                                         f"Kleene variable")
        elif isinstance(n, Lit):
            pass
    fn = compile_expr(expr, list_vars)
    return Conjunct(expr, fn, frozenset(vars_), tuple(sorted(quant)), frozenset(prev), frozenset(whole),
                    frozenset(first))
