"""Pattern validation: reject, with a named error, every pattern whose meaning is undefined.

The rules follow where the papers define their operators: negation only of a
single variable inside SEQ / AND (SASE section 2; not inside OR or a Kleene
group, where "between" has no meaning); Kleene closures over a variable or a
SEQ / AND group with bounds ``min <= max``, ``max >= 1`` (SASE+ section 2,
ZStream section 3 KSEQ); array references ``b[i]``, ``b[i-1]``, ``b[1]``,
``b[b.LEN]`` and aggregates only on Kleene variables (SASE+ section 2);
equivalence tests ``[attr]`` only as top-level conjuncts of WHERE (SASE
section 2); no conjunct across two OR branches (docs/semantics.md section 4);
and a window, or an explicit ``WITHIN UNBOUNDED`` (DESIGN.md section 2).
The kinds of values (docs/semantics.md section 4) are checked by
:mod:`jitcep.pattern.kinds`, here as far as the literals show them.  Every
message names the element at fault, in pattern text.

Size comes first: a pattern nests at most ``config.MAX_NESTING`` levels deep
(every later pass recurses once per level), binds at most
``config.MAX_VARIABLES`` variables (plans and searches recurse once per
variable) and its integers fit int64 (what event attributes, counts and
positions hold), checked without recursion before anything else reads the
pattern.
"""

from __future__ import annotations

import math
import sys

from ..config import MAX_NESTING, MAX_VARIABLES
from ..errors import (DuplicateVariableError, InvalidKleeneError, InvalidNegationError, InvalidWindowError,
                      MissingWindowError, PatternValidationError, UnknownVariableError,
                      UnsupportedPatternError)
from .combinations import check_combination
from .kinds import INT64_MAX, INT64_MIN, check_pattern
from .ast import (UNIT_NS, Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem, Seq,
                  TimeWindow, Unbounded, event_vars, kleene_vars, levels, negated_vars, walk)
from .expr import (AGG_FUNCS, ARITH_OPS, CMP_OPS, Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit,
                   Not, Unary, conjuncts, variables)

__all__ = ["validate"]

_RESERVED_COLUMNS = ("match_id", "pattern")


def _show_node(node) -> str:
    from .printer import node_to_text
    try:
        return node_to_text(node)
    except Exception:  # a malformed node has no text form; its repr still names it
        return repr(node)


def _show_expr(expr) -> str:
    from .printer import expr_to_text
    try:
        return expr_to_text(expr)
    except Exception:
        return repr(expr)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --- size -------------------------------------------------------------------



def _int_text(v: int) -> str:
    """An integer as text; a very long one by its length (Python refuses to print past 4300 digits)."""
    if v.bit_length() <= 256:
        return str(v)
    return f"{'-' if v < 0 else ''}<an integer of about {int(v.bit_length() * math.log10(2)) + 1} digits>"


def _out_of_int64(v) -> bool:
    return _is_int(v) and not INT64_MIN <= v <= INT64_MAX


def _check_size(pattern: Pattern) -> None:
    """Nesting within MAX_NESTING, variables within MAX_VARIABLES and integers within int64, before any
    recursive pass or message."""
    if not isinstance(pattern.returns, tuple) or not all(isinstance(r, ReturnItem) for r in pattern.returns):
        raise PatternValidationError(f"RETURN must be a tuple of ReturnItem, got {pattern.returns!r}")
    if isinstance(pattern.window, CountWindow) and _out_of_int64(pattern.window.n):
        raise InvalidWindowError(
            f"WITHIN {_int_text(pattern.window.n)} EVENTS is beyond the 64-bit integer range; "
            "write WITHIN UNBOUNDED for no window")
    parts = [("the pattern's structure", pattern.body), ("WHERE", pattern.where)]
    parts += [("a RETURN item", r.expr) for r in pattern.returns]
    variables = sum(isinstance(node, EventVar) for node, _ in levels(pattern.body))
    if variables > MAX_VARIABLES:
        raise PatternValidationError(
            f"the pattern binds {variables} variables; at most {MAX_VARIABLES} are allowed (docs/language.md, "
            "Limits); a Kleene closure (T+ v[]) binds any number of events with one variable")
    for what, tree in parts:
        for node, depth in levels(tree) if tree is not None else ():
            if depth > MAX_NESTING:
                raise PatternValidationError(
                    f"{what} nests more than {MAX_NESTING} levels deep (docs/language.md): nest less, or "
                    "group a long chain such as a + b + c + d as (a + b) + (c + d)")
            if isinstance(node, Lit) and _out_of_int64(node.value):
                raise PatternValidationError(
                    f"the integer literal {_int_text(node.value)} is outside the 64-bit integer range "
                    f"({INT64_MIN} to {INT64_MAX}) that event attributes hold; write it as a float "
                    "(such as 1e30) if an approximate value is meant")
            if isinstance(node, Attr) and _out_of_int64(node.index):
                raise InvalidKleeneError(
                    f"the member index {_int_text(node.index)} of {node.var!r} is beyond the 64-bit "
                    "integer range")
            if isinstance(node, Kleene):
                for name, bound in (("minimum", node.min), ("maximum", node.max)):
                    if _out_of_int64(bound):
                        raise InvalidKleeneError(
                            f"the Kleene {name} count {_int_text(bound)} is beyond the 64-bit integer range"
                            + ("; leave the maximum out (T{n,} v[]) for no upper bound"
                               if name == "maximum" else ""))


# --- structure --------------------------------------------------------------


def check_structure(body: Node) -> dict[str, EventVar]:
    """Check where negations and closures stand and that every variable is bound once (named errors);
    returns the variables by name.  Both :func:`validate` and the reference evaluator call it."""
    structure = _Structure()
    structure.visit(body, None, False, False)
    return structure.bound


class _Structure:
    """One walk over the structure collecting variables and checking placement."""

    def __init__(self):
        self.bound: dict[str, EventVar] = {}

    def visit(self, node: Node, parent: Node | None, in_disj: bool, in_kleene: bool) -> None:
        if isinstance(node, EventVar):
            self.event_var(node)
        elif isinstance(node, Neg):
            self.neg(node, parent, in_disj, in_kleene)
        elif isinstance(node, Kleene):
            self.kleene(node, in_disj, in_kleene)
        elif isinstance(node, (Seq, Conj, Disj)):
            kw = {Seq: "SEQ", Conj: "AND", Disj: "OR"}[type(node)]
            if not isinstance(node.items, tuple) or not node.items:
                raise PatternValidationError(f"{kw}() has no elements; give it at least one")
            if all(isinstance(i, Neg) for i in node.items):
                raise InvalidNegationError(
                    f"{_show_node(node)} has no positive element: a negation needs a positive event "
                    "to be placed against")
            for item in node.items:
                self.visit(item, node, in_disj or isinstance(node, Disj), in_kleene)
        else:
            raise PatternValidationError(f"not a pattern element: {node!r}")

    def event_var(self, var: EventVar) -> None:
        if not isinstance(var.name, str) or not var.name:
            raise PatternValidationError(f"variable name must be a non-empty string, got {var.name!r}")
        if var.name == "*":
            raise PatternValidationError("'*' cannot be a variable name")
        if var.types is not None:
            if (not isinstance(var.types, tuple) or not var.types
                    or not all(isinstance(t, str) and t for t in var.types)):
                raise PatternValidationError(
                    f"variable {var.name!r}: types must be None (any type) or a non-empty tuple of "
                    f"non-empty type names, got {var.types!r}")
        if var.name in _RESERVED_COLUMNS:
            raise PatternValidationError(
                f"variable {var.name!r}: {' and '.join(_RESERVED_COLUMNS)} are the output's own column names "
                "(semantics §3); rename the variable")
        if var.name in self.bound:
            raise DuplicateVariableError(
                f"variable {var.name!r} is bound twice: by {_show_node(self.bound[var.name])!r} and by "
                f"{_show_node(var)!r}; every element needs its own name")
        self.bound[var.name] = var

    def neg(self, node: Neg, parent, in_disj: bool, in_kleene: bool) -> None:
        shown = _show_node(node)
        if not isinstance(node.var, EventVar):
            raise InvalidNegationError(
                f"{shown} negates a group or Kleene closure; only a single variable can be negated "
                "(e.g. !T v)")
        if parent is None:
            raise InvalidNegationError(
                f"the pattern {shown} has no positive element: a negation needs a positive event "
                "to be placed against")
        if in_kleene:
            raise InvalidNegationError(
                f"{shown} is inside a Kleene group; a Kleene group containing a negation is not defined")
        if isinstance(parent, Disj):
            raise InvalidNegationError(
                f"{shown} is directly under OR; negation is defined only as an element of SEQ or AND")
        if in_disj:
            raise InvalidNegationError(
                f"{shown} is inside an OR branch; negation inside OR is not defined")
        self.event_var(node.var)

    def kleene(self, node: Kleene, in_disj: bool, in_kleene: bool) -> None:
        shown = _show_node(node)
        lo, hi = node.min, node.max
        if not _is_int(lo) or lo < 0:
            raise InvalidKleeneError(f"{shown}: the minimum count must be an integer >= 0, got {lo!r}")
        if hi is not None:
            if not _is_int(hi):
                raise InvalidKleeneError(f"{shown}: the maximum count must be an integer or None, got {hi!r}")
            if hi == 0:
                raise InvalidKleeneError(f"{shown}: a maximum count of 0 never binds an event")
            if lo > hi:
                raise InvalidKleeneError(f"{shown}: the minimum count {lo} is greater than the maximum {hi}")
        if in_kleene:
            raise InvalidKleeneError(f"{shown} is nested inside another Kleene closure; nested closures "
                                     "(lists of lists) are not supported")
        body = node.body
        if isinstance(body, Neg):
            raise InvalidNegationError(f"{shown} repeats a negation; a Kleene closure of a negation is "
                                       "not defined")
        if isinstance(body, Kleene):
            raise InvalidKleeneError(f"{shown} is a closure of a closure; nested closures are not supported")
        if not isinstance(body, (EventVar, Seq, Conj)):
            raise InvalidKleeneError(f"{shown}: a Kleene closure takes a variable, SEQ(...) or AND(...), "
                                     f"not {_show_node(body)}")
        if isinstance(body, (Seq, Conj)) and not all(isinstance(i, (EventVar, Neg, Kleene)) for i in body.items):
            # each iteration binds one event per variable, so its lists stay aligned (section 6); negations and
            # closures inside are refused below with their own messages
            raise InvalidKleeneError(f"{shown}: a Kleene group is a SEQ(...) or AND(...) of plain variables")
        self.visit(body, node, in_disj, True)


# --- window -----------------------------------------------------------------


def _check_window(window) -> None:
    if window is None:
        raise MissingWindowError(
            "the pattern has no WITHIN clause; give a window (WITHIN 10 minutes, WITHIN 300, "
            "WITHIN 100 EVENTS) or write WITHIN UNBOUNDED to ask for an unbounded window")
    if isinstance(window, TimeWindow):
        a = window.amount
        # compared before any conversion: math.isfinite(int) overflows past the largest float
        if not _is_number(a) or not -sys.float_info.max <= a <= sys.float_info.max or a <= 0:
            raise InvalidWindowError(f"WITHIN {_int_text(a) if _is_int(a) else repr(a)}: a time window must be "
                                     "a finite number > 0 (at most about 1.8e308); write WITHIN UNBOUNDED for no "
                                     "window")
        if window.unit is not None and window.unit not in UNIT_NS:
            raise InvalidWindowError(
                f"WITHIN {a} {window.unit}: unknown time unit {window.unit!r}; "
                f"use one of {', '.join(UNIT_NS)}")
    elif isinstance(window, CountWindow):
        if not _is_int(window.n) or window.n <= 0:
            raise InvalidWindowError(
                f"WITHIN {window.n!r} EVENTS: a count window must be a positive integer")
    elif not isinstance(window, Unbounded):
        raise InvalidWindowError(f"not a window: {window!r}")


# --- expressions ------------------------------------------------------------

class _Exprs:
    """Checks of WHERE and RETURN expressions against the bound variables (their kinds: :mod:`.kinds`)."""

    def __init__(self, bound, kleene, negated):
        self.bound = bound
        self.kleene = kleene
        self.negated = negated

    def unknown(self, var: str, expr: Expr, clause: str):
        known = ", ".join(self.bound) or "none"
        return UnknownVariableError(
            f"{clause} names variable {var!r} in {_show_expr(expr)!r}, but the pattern does not bind it "
            f"(bound: {known})")

    def check(self, e: Expr, clause: str, *, top_conjunct: bool = False, whole_item: bool = False) -> None:
        """Check ``e`` recursively: known operators, bound variables, Kleene references, literals."""
        if isinstance(e, Lit):
            v = e.value
            if not (v is None or isinstance(v, (bool, int, float, str))):
                raise PatternValidationError(f"unsupported literal {v!r} of type {type(v).__name__}")
            if isinstance(v, float) and not math.isfinite(v):
                raise PatternValidationError(f"the literal {v!r} is not a finite number")
            return
        if isinstance(e, Attr):
            self.attr(e, clause, whole_item)
            return
        if isinstance(e, Agg):
            self.agg(e, clause)
            return
        if isinstance(e, Equiv):
            if clause != "WHERE" or not top_conjunct:
                raise PatternValidationError(
                    f"the equivalence test {_show_expr(e)} is allowed only as a top-level conjunct of "
                    "WHERE (WHERE [attr] AND ...), not under OR / NOT, inside a comparison or in RETURN")
            if not isinstance(e.attr, str) or not e.attr:
                raise PatternValidationError(f"equivalence test attribute must be a non-empty string: {e!r}")
            if e.value is not None:
                if not isinstance(e.value, Lit):
                    raise PatternValidationError(f"[{e.attr} = ...] takes a literal, got {e.value!r}")
                self.check(e.value, clause)
            return
        if isinstance(e, Arith):
            if e.op not in ARITH_OPS:
                raise PatternValidationError(f"unknown arithmetic operator {e.op!r}")
            self.check(e.left, clause)
            self.check(e.right, clause)
            return
        if isinstance(e, Unary):
            if e.op not in ("neg", "abs"):
                raise PatternValidationError(f"unknown unary operator {e.op!r}")
            self.check(e.operand, clause)
            return
        if isinstance(e, Cmp):
            if e.op not in CMP_OPS:
                raise PatternValidationError(f"unknown comparison {e.op!r}")
            self.check(e.left, clause)
            self.check(e.right, clause)
            return
        if isinstance(e, In):
            if not isinstance(e.values, tuple) or not e.values:
                raise PatternValidationError(f"{_show_expr(e.operand)} IN (...) needs at least one value")
            for v in e.values:
                if not isinstance(v, Lit):
                    raise PatternValidationError(f"IN lists take literals only, got {v!r}")
                self.check(v, clause)
            self.check(e.operand, clause)
            return
        if isinstance(e, (IsNull, Not)):
            self.check(e.operand, clause)
            return
        if isinstance(e, BoolOp):
            if e.op not in ("and", "or"):
                raise PatternValidationError(f"unknown boolean operator {e.op!r}")
            if not isinstance(e.items, tuple) or len(e.items) < 2:
                raise PatternValidationError(f"{e.op.upper()} needs at least two operands: {e!r}")
            for item in e.items:
                self.check(item, clause, top_conjunct=top_conjunct and e.op == "and")
            return
        raise PatternValidationError(f"not an expression: {e!r}")

    def attr(self, e: Attr, clause: str, whole_item: bool) -> None:
        if e.var not in self.bound:
            raise self.unknown(e.var, e, clause)
        if not isinstance(e.attr, str) or not e.attr:
            raise PatternValidationError(f"attribute name must be a non-empty string: {e!r}")
        if e.attr == "*" and not (clause == "RETURN" and whole_item and e.index is None):
            raise PatternValidationError(
                f"the whole event {e.var!r} can only be a RETURN item of its own; "
                f"name an attribute ({e.var}.x) in {clause}")
        if clause == "RETURN" and e.var in self.negated:
            raise InvalidNegationError(
                f"RETURN names {_show_expr(e)!r}, but {e.var!r} is negated and binds no event")
        if clause == "RETURN" and e.index is None and e.var in self.kleene and not whole_item:
            # b.x as a RETURN item is the list of its members' values; an operation on that list
            # (-b.x, b.x + 1, b.x IS NULL) has no defined meaning
            raise PatternValidationError(
                f"RETURN {_show_expr(e)!r} inside an expression: {e.var} is a Kleene variable, so "
                f"{e.var}.{e.attr} is the list of its members' values; use it as a RETURN item of its own, "
                f"an aggregate (avg({e.var}.{e.attr})) or a fixed member ({e.var}[1].{e.attr})")
        if e.index is None:
            return
        if not (e.index in ("i", "i-1", "len") or (_is_int(e.index) and e.index >= 1)):
            raise InvalidKleeneError(
                f"{e!r}: a member index is i, i-1, {e.var}.LEN or an integer from 1, got {e.index!r}")
        if e.var not in self.kleene:
            raise InvalidKleeneError(
                f"{_show_expr(e)!r} indexes {e.var!r}, which is not a Kleene variable "
                f"(write {e.var}.{e.attr})")
        if clause == "RETURN" and e.index in ("i", "i-1"):
            raise PatternValidationError(
                f"{_show_expr(e)!r}: [i] and [i-1] relate consecutive members inside WHERE; in RETURN "
                f"write {e.var}.{e.attr} for every member or a fixed index")

    def agg(self, e: Agg, clause: str) -> None:
        if e.func not in AGG_FUNCS:
            raise PatternValidationError(f"unknown aggregate {e.func!r}; use one of {', '.join(AGG_FUNCS)}")
        if e.var not in self.bound:
            raise self.unknown(e.var, e, clause)
        if e.var not in self.kleene:
            raise InvalidKleeneError(
                f"{_show_expr(e)!r} aggregates {e.var!r}, which is not a Kleene variable "
                "(aggregates and LEN apply to array variables such as T+ v[])")
        if e.attr is None and e.func != "count":
            raise PatternValidationError(f"{e.func}({e.var}) needs an attribute: {e.func}({e.var}.x)")
        if e.attr is not None and (not isinstance(e.attr, str) or not e.attr or e.attr == "*"):
            raise PatternValidationError(f"aggregate attribute must be an attribute name: {e!r}")


def _check_options(pattern: Pattern, options, bound) -> None:
    positive = [n for n in bound if n not in set(negated_vars(pattern.body))]
    named = [("contiguous", v) for group in options.contiguous for v in group]
    named += [("freeze", v) for v in options.freeze]
    for option, var in named:
        if var not in bound:
            raise UnknownVariableError(
                f"option {option} names variable {var!r}, but the pattern does not bind it "
                f"(bound: {', '.join(positive)})")
        if var not in positive:
            raise InvalidNegationError(f"option {option} names {var!r}, which is negated and binds no event")


# --- public -----------------------------------------------------------------


def validate(pattern: Pattern, options=None) -> Pattern:
    """Check a pattern (and, given ``options``, the variables they name); return it unchanged.

    Raises the named errors of :mod:`jitcep.errors`: UnknownVariableError,
    DuplicateVariableError, InvalidNegationError, InvalidKleeneError,
    InvalidWindowError, MissingWindowError, PatternValidationError.

    >>> from jitcep.pattern.parser import parse
    >>> validate(parse("PATTERN SEQ(A a, B b) WHERE c.x > 0 WITHIN 5"))
    Traceback (most recent call last):
    ...
    jitcep.errors.UnknownVariableError: WHERE names variable 'c' in 'c.x', but the pattern does not bind it (bound: a, b)
    """
    if not isinstance(pattern, Pattern):
        raise PatternValidationError(f"expected a Pattern, got {type(pattern).__name__}")
    _check_size(pattern)
    bound = check_structure(pattern.body)
    _check_window(pattern.window)

    negated = frozenset(negated_vars(pattern.body))
    checker = _Exprs(bound, frozenset(kleene_vars(pattern.body)), negated)
    if pattern.where is not None:
        checker.check(pattern.where, "WHERE", top_conjunct=True)
        branches = [tuple(frozenset(v.name for v in event_vars(b)) for b in n.items)
                    for n in walk(pattern.body) if isinstance(n, Disj)]
        for c in conjuncts(pattern.where):
            mentioned = variables(c)
            for sets in branches:
                hit = [i for i, names in enumerate(sets) if names & mentioned]
                if len(hit) > 1:
                    raise UnsupportedPatternError(
                        f"the predicate {_show_expr(c)!r} mentions variables of different OR branches "
                        f"({', '.join(sorted(mentioned & (sets[hit[0]] | sets[hit[1]])))}); "
                        "a match takes only one branch, so it can never hold")
            negs = sorted(mentioned & negated)
            if len(negs) > 1:
                raise InvalidNegationError(
                    f"the predicate {_show_expr(c)!r} mentions the negated variables {', '.join(negs)}; "
                    "a predicate may mention at most one negated variable")

    aliases: set[str] = set()
    for item in pattern.returns:
        checker.check(item.expr, "RETURN", whole_item=isinstance(item.expr, Attr))
        if item.alias is not None:
            if not isinstance(item.alias, str) or not item.alias:
                raise PatternValidationError(f"RETURN alias must be a non-empty string, got {item.alias!r}")
            if isinstance(item.expr, Attr) and item.expr.attr == "*":
                raise PatternValidationError(
                    f"RETURN {item.expr.var} AS {item.alias}: a whole variable is output as the column named after "
                    f"it; alias one of its attributes ({item.expr.var}.x AS {item.alias}) or rename the variable")
            if item.alias in aliases:
                raise PatternValidationError(f"RETURN alias {item.alias!r} is used twice")
            if item.alias in bound or item.alias in _RESERVED_COLUMNS:
                raise PatternValidationError(
                    f"RETURN alias {item.alias!r} clashes with a variable or output column of that name")
            aliases.add(item.alias)

    # Kinds (semantics §4) from the literals alone: no attribute's kind is known before the table is read,
    # so what fails here fails on every table; the rest is events.check_types' (the same rules) at run time.
    check_pattern(pattern, lambda var, attr: None, error=PatternValidationError)

    if options is not None:
        _check_options(pattern, options, bound)
        check_combination(pattern, options)
    return pattern
