"""Text -> pattern AST: a hand-written recursive-descent parser.

Tokens come from :mod:`.lexer`, WHERE and RETURN expressions from :mod:`.expr_parser`.

The language is SASE's ``EVENT SEQ(...) WHERE ... WITHIN ...`` (SASE section 2)
with SASE+'s Kleene closures and array variables ``b[i]``, ``b[i-1]``,
``b[b.LEN]`` (SASE+ section 2) and ZStream-style ``KL(...)`` groups; the full
grammar is in docs/language.md.  Why hand-written and not lark: no runtime
dependency, error messages that say exactly what was expected at a line and
column, and context rules that a generic grammar expresses badly (type names
with ``-`` glued from adjacent tokens, ``[a, b]`` spliced into an AND chain,
``-5`` folded into one literal).

Nesting is bounded (``config.MAX_NESTING``, docs/language.md): the parser
checks the depth of every tree it builds, and, before building it, the levels
it is inside of and the parentheses open around it (a text nests its
parentheses no deeper than its tree, so the printer's text of any valid
pattern parses back).  It stops with a :class:`PatternSyntaxError` at the
token where a pattern gets too deep, so neither the parser (at most two stack
frames per level) nor any later recursive pass exhausts Python's stack.

>>> parse("PATTERN SEQ(Stock a, Stock b) WHERE a.price < b.price WITHIN 10 s").window
TimeWindow(amount=10, unit='s')
"""

from __future__ import annotations

from ..errors import PatternError
from .ast import (Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem, Seq,
                  TimeWindow, Unbounded, Window)
from .expr import Expr
from .expr_parser import ExprParser
from .lexer import KEYWORDS, syntax_error, tokenize

__all__ = ["parse", "parse_many", "parse_expr", "KEYWORDS", "UNIT_ALIASES"]

# Every spelling of a time unit accepted after WITHIN, mapped to the canonical unit of ast.UNIT_NS.
UNIT_ALIASES = {
    "ns": "ns", "nanosecond": "ns", "nanoseconds": "ns",
    "us": "us", "microsecond": "us", "microseconds": "us",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
}

_STRUCT_OPS = {"SEQ": Seq, "AND": Conj, "OR": Disj}


class PatternParser(ExprParser):
    """Recursive descent over patterns (elements, windows, RETURN); one instance per text."""

    # -- statements

    def patterns(self) -> list[Pattern]:
        out: list[Pattern] = []
        while self.tok.kind != "EOF":
            if self.is_op(";"):
                self.advance()
                continue
            out.append(self.pattern())
            if not (self.is_op(";") or self.tok.kind == "EOF"):
                self.fail(expected="WHERE, WITHIN, RETURN, ';' or end of text")
        return out

    def pattern(self) -> Pattern:
        if not (self.is_kw("PATTERN") or self.is_kw("EVENT")):
            self.fail(expected="PATTERN or EVENT")
        self.advance()
        body = self.element(in_kleene=False)
        where = window = None
        returns: tuple[ReturnItem, ...] = ()
        if self.is_kw("WHERE"):
            self.advance()
            where = self.expr()
        if self.is_kw("WITHIN"):
            self.advance()
            window = self.window()
        if self.is_kw("RETURN"):
            self.advance()
            returns = self.return_items()
        return Pattern(body, where, window, returns)

    # -- structure

    def element(self, in_kleene: bool) -> Node:
        self.descend()
        node = self._element(in_kleene)
        self.depth -= 1
        return node

    def _element(self, in_kleene: bool) -> Node:
        tok = self.tok
        if self.is_op("!") or self.is_op("~"):
            self.advance()
            if self.is_op("("):  # SASE writes !(COUNTER-READING y), SASE+ ~(Register b)
                self.advance()
                inner = self.element(in_kleene)
                self.expect_op(")")
                return self.made(Neg(inner), tok)
            return self.made(Neg(self.element(in_kleene)), tok)
        if tok.kind == "WORD" and self.is_op("(", self.peek()):
            kw = tok.value.upper()
            if kw in _STRUCT_OPS:
                self.advance()
                self.advance()
                items = [self.element(in_kleene)]
                while self.is_op(","):
                    self.advance()
                    items.append(self.element(in_kleene))
                self.expect_op(")", "',' or ')'")
                return self.made(_STRUCT_OPS[kw](tuple(items)), tok)
            if kw == "NOT":
                self.advance()
                self.advance()
                inner = self.element(in_kleene)
                self.expect_op(")")
                return self.made(Neg(inner), tok)
            if kw == "KL":
                self.advance()
                self.advance()
                body = self.element(in_kleene=True)
                self.expect_op(")")
                lo, hi = self.kleene_suffix(default=(1, None))
                return self.made(Kleene(body, lo, hi), tok)
        types = self.typespec()
        lo_hi = self.kleene_suffix(default=None)
        name = self.name("a variable name")
        # The brackets are optional after a closure (T+ v and T+ v[] are the same) and inside KL(...).
        if self.is_op("[") and self.is_op("]", self.peek()):
            bracket = self.tok
            self.advance()
            self.advance()
            if lo_hi is None and not in_kleene:
                self.fail(f"'{name}[]' marks an array variable, but no Kleene closure is given",
                          expected="a closure on the type (T+ v[], T* v[], T{n,m} v[]) or KL(T v)",
                          tok=bracket)
        var = EventVar(name, types)
        return var if lo_hi is None else self.made(Kleene(var, *lo_hi), tok)

    def typespec(self) -> tuple[str, ...] | None:
        tok = self.tok
        if self.is_op("*"):
            self.advance()
            return None
        if self.is_kw("ANY") and self.is_op("(", self.peek()):
            self.advance()
            self.advance()
            types = [self.type_name()]
            while self.is_op(","):
                self.advance()
                types.append(self.type_name())
            self.expect_op(")", "',' or ')'")
            return tuple(types)
        if tok.kind in ("WORD", "QWORD", "STRING"):
            return (self.type_name(),)
        self.fail(expected="a pattern element: a type name, '*', ANY(...), SEQ(...), AND(...), OR(...), "
                           "KL(...), NOT(...), '!' or '~'")

    def type_name(self) -> str:
        """A type: quoted, back-quoted, or words glued by '-' with no space (SHELF-READING)."""
        tok = self.tok
        if tok.kind in ("STRING", "QWORD"):
            self.advance()
            return tok.value
        if tok.kind != "WORD":
            self.fail(expected="a type name")
        parts = [self.advance().raw]
        end = tok.end
        while self.tok.start == end and (self.is_op("-") or self.tok.kind in ("WORD", "NUMBER")):
            part = self.advance()
            parts.append(part.raw)
            end = part.end
        return "".join(parts)

    def kleene_suffix(self, default):
        """``+`` (1, inf), ``*`` (0, inf), ``{n}``, ``{n,}``, ``{n,m}``; ``default`` when absent."""
        if self.is_op("+"):
            self.advance()
            return (1, None)
        if self.is_op("*"):
            self.advance()
            return (0, None)
        if self.is_op("{"):
            self.advance()
            lo = self.integer("a minimum count (an integer)")
            hi: int | None = lo
            if self.is_op(","):
                self.advance()
                hi = None if self.is_op("}") else self.integer("a maximum count (an integer) or '}'")
            self.expect_op("}", "',' or '}'" if hi == lo else "'}'")
            return (lo, hi)
        return default

    # -- window

    def window(self) -> Window:
        if self.is_kw("UNBOUNDED"):
            self.advance()
            return Unbounded()
        sign = 1
        if self.is_op("-"):
            self.advance()
            sign = -1
        tok = self.tok
        if tok.kind != "NUMBER":
            self.fail(expected="a window size (a number), or UNBOUNDED")
        self.advance()
        amount = sign * tok.value
        if self.is_kw("EVENTS"):
            self.advance()
            return CountWindow(amount)
        if self.tok.kind == "WORD" and self.tok.value.upper() not in KEYWORDS:
            unit_tok = self.advance()
            unit = UNIT_ALIASES.get(unit_tok.value.lower())
            if unit is None:
                self.fail(f"unknown time unit {unit_tok.value!r}",
                          expected="EVENTS or a unit: " + ", ".join(sorted(set(UNIT_ALIASES.values()))),
                          tok=unit_tok)
            return TimeWindow(amount, unit)
        return TimeWindow(amount, None)

    # -- RETURN

    def return_items(self) -> tuple[ReturnItem, ...]:
        items = [self.return_item()]
        while self.is_op(","):
            self.advance()
            items.append(self.return_item())
        return tuple(items)

    def return_item(self) -> ReturnItem:
        self.in_return = True
        try:
            expr = self.expr()
        finally:
            self.in_return = False
        alias = None
        if self.is_kw("AS"):
            self.advance()
            alias = self.name("an alias name")
        return ReturnItem(expr, alias)


# --- public -----------------------------------------------------------------


def parse_many(text: str) -> list[Pattern]:
    """Parse ``;``-separated patterns (an empty statement between ``;`` is skipped)."""
    if not isinstance(text, str):
        raise PatternError(f"pattern text must be a str, got {type(text).__name__}; jitcep.compile also takes "
                           "a Pattern or a builder")
    parser = PatternParser(text)
    out = parser.patterns()
    if not out:
        raise syntax_error(text, len(text), "no pattern in the text", "PATTERN or EVENT")
    return out


def parse(text: str) -> Pattern:
    """Parse exactly one pattern (a trailing ``;`` is allowed).

    >>> parse("PATTERN Stock+ c[] WHERE c[i].price > c[i-1].price WITHIN 5 EVENTS").body
    Kleene(body=EventVar(name='c', types=('Stock',)), min=1, max=None)
    """
    out = parse_many(text)
    if len(out) > 1:
        first_separator = next(t for t in tokenize(text) if t.kind == "OP" and t.value == ";")
        raise syntax_error(text, first_separator.start, f"the text holds {len(out)} patterns; use parse_many",
                           "a single pattern")
    return out[0]


def parse_expr(text: str) -> Expr:
    """Parse one WHERE-style expression (used by the builder's ``expr()`` and ``col()``)."""
    if not isinstance(text, str):
        raise PatternError(f"expression text must be a str, got {type(text).__name__}")
    parser = ExprParser(text)
    out = parser.expr()
    if parser.tok.kind != "EOF":
        parser.fail(expected="an operator or end of expression")
    return out
