"""Combinations of a pattern and options that the semantics leave undefined (docs/semantics.md §6.2, §8).

Checked once, at ``jitcep.compile`` (through :func:`jitcep.pattern.validate`)
and again by the reference evaluator, which may be handed a pattern directly:
a pattern that compiles has a meaning, so no engine discovers a refusal at run
time.  Every rule reads the normal form (§5), and every message quotes the
pattern text at fault.
"""

from __future__ import annotations

from ..errors import UnsupportedPatternError
from .ast import EventVar, Kleene, Neg, Pattern, Seq
from .expr import Attr, Equiv, conjuncts, walk
from .normalize import normalize
from .structure import single_vars


def _text(node) -> str:
    from .printer import node_to_text
    return node_to_text(node)


def _expr_text(expr) -> str:
    from .printer import expr_to_text
    return expr_to_text(expr)


def check_combination(pattern: Pattern, options) -> None:
    """Raise UnsupportedPatternError if ``options`` give ``pattern`` no meaning."""
    body = normalize(pattern.body)
    items = body.items if isinstance(body, Seq) else (body,)
    has_kleene = any(isinstance(n, Kleene) for n in _walk(body))
    if options.kleene == "maximal" and has_kleene:
        _check_maximal(pattern, body, items, options)
    if options.strategy != "skip_till_any_match":
        _check_linear(pattern, body, items, options)
    _check_constraint_vars(body, options)


def _check_constraint_vars(body, options) -> None:
    """§9: ``contiguous`` and ``freeze`` relate positions of single events, so they name single positive
    variables (a Kleene variable binds a list; validation has already refused unknown and negated names)."""
    single = set(single_vars(body))
    for option, names in (("contiguous", [v for group in options.contiguous for v in group]),
                          ("freeze", list(options.freeze))):
        for v in names:
            if v not in single:
                raise UnsupportedPatternError(
                    f"{option}={getattr(options, option)!r} names {v!r}, which is not a single positive "
                    f"variable of the pattern (semantics §9)")


def _check_maximal(pattern: Pattern, body, items, options) -> None:
    """§6.2: ZStream's KSEQ takes one list of every qualifying event between two neighbours."""
    if options.strategy != "skip_till_any_match":
        raise UnsupportedPatternError(
            f"kleene=\"maximal\" is defined only under skip_till_any_match; strategy={options.strategy!r} "
            f"defines Kleene lists through NFA^b runs (semantics §8)")
    top = {id(it) for it in items}
    for k in (n for n in _walk(body) if isinstance(n, Kleene)):
        if id(k) not in top or not isinstance(k.body, EventVar):
            raise UnsupportedPatternError(
                f"kleene=\"maximal\" needs each Kleene closure to be an array variable (T+ v[]) that is an "
                f"element of a SEQ outside any AND/OR (ZStream KSEQ, semantics §6.2); {_text(k)!r} in "
                f"{_text(pattern.body)!r} is not")
        var = k.body.name
        for c in conjuncts(pattern.where):
            if any(isinstance(n, Attr) and n.var == var and n.index == "i-1" for n in walk(c)):
                raise UnsupportedPatternError(
                    f"kleene=\"maximal\" takes every qualifying event, so the iterative predicate "
                    f"{_expr_text(c)!r} ({var}[i-1]) is undefined there (semantics §6.2); use kleene=\"all\"")
    positive = [it for it in items if not isinstance(it, Neg)]
    if all(isinstance(it, Kleene) for it in positive):
        raise UnsupportedPatternError(f"kleene=\"maximal\" needs a positive non-Kleene element next to the "
                                      f"closure in {_text(pattern.body)!r} (semantics §6.2)")
    for a, b in zip(positive, positive[1:]):
        if isinstance(a, Kleene) and isinstance(b, Kleene):
            raise UnsupportedPatternError(f"kleene=\"maximal\": the adjacent closures {_text(a)!r} and "
                                          f"{_text(b)!r} have no boundary between them (semantics §6.2)")
    if isinstance(positive[0], Kleene) and isinstance(positive[-1], Kleene):
        raise UnsupportedPatternError(f"kleene=\"maximal\": closures at both ends of {_text(pattern.body)!r} "
                                      f"would bound each end by the window separately (semantics §6.2)")


def _check_linear(pattern: Pattern, body, items, options) -> None:
    """§8: the NFA^b strategies run over a SEQ of variables, array variables and negations."""
    for it in items:
        if isinstance(it, (EventVar, Neg)) or (isinstance(it, Kleene) and isinstance(it.body, EventVar)):
            continue
        where = (f"{_text(it)!r} is nested in {_text(pattern.body)!r}" if it is not body
                 else f"{_text(it)!r} is not a SEQ")
        raise UnsupportedPatternError(
            f"strategy={options.strategy!r} is defined through NFA^b runs over a linear SEQ of variables, "
            f"array variables and negations; {where} (semantics §8)")
    if options.strategy == "partition_contiguity" and not any(isinstance(c, Equiv)
                                                               for c in conjuncts(pattern.where)):
        raise UnsupportedPatternError(
            "strategy=\"partition_contiguity\" needs an equivalence test [attr] to define partitions "
            "(SASE+ section 2; semantics §8)")


def _walk(node):
    yield node
    for c in node.children():
        yield from _walk(c)
