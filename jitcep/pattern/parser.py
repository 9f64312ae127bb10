"""Text -> pattern AST: a hand-written lexer and recursive-descent parser.

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

import re
from dataclasses import dataclass

from ..config import MAX_NESTING
from ..errors import PatternError, PatternSyntaxError
from .ast import (Conj, CountWindow, Disj, EventVar, Kleene, Neg, Node, Pattern, ReturnItem, Seq,
                  TimeWindow, Unbounded, Window)
from .expr import AGG_FUNCS, Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary

__all__ = ["parse", "parse_many", "parse_expr", "KEYWORDS", "UNIT_ALIASES"]

KEYWORDS = frozenset({
    "PATTERN", "EVENT", "SEQ", "AND", "OR", "ANY", "KL", "NOT", "WHERE", "WITHIN", "EVENTS",
    "UNBOUNDED", "RETURN", "AS", "IN", "IS", "NULL", "TRUE", "FALSE",
})

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
_CMP_TOKENS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FUNCS = (*AGG_FUNCS, "abs")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}

# Binding strength of each expression form (higher binds tighter), loosest first; the printer's levels.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _NEG, _PRIMARY = range(1, 9)

# The longest integer literal: every number is a 64-bit integer or float, and every integer of at
# most 308 digits is a finite float64 (the largest is about 1.8e308), so no later conversion to float
# overflows.  It also keeps int() far from Python's int-to-string conversion limit, which would
# otherwise raise a ValueError mid-lexing.
_MAX_INT_DIGITS = 308

# --- lexer ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    kind: str      # WORD, QWORD (back-quoted), STRING, NUMBER, OP, EOF
    value: object  # decoded value (str / int / float); the operator text for OP
    raw: str
    start: int     # character offsets into the text
    end: int


_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>(?:--|\#)[^\n]*)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[^\W\d]\w*)
  | (?P<qword>`(?:[^`\n]|``)*`)
  | (?P<string>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<op>==|!=|<>|<=|>=|[<>=()\[\]{},;.+\-*/!~])
""", re.VERBOSE)


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _error(text: str, offset: int, message: str, expected: str | None = None) -> PatternSyntaxError:
    line, column = _position(text, offset)
    return PatternSyntaxError(message, line=line, column=column, expected=expected, text=text)


def _decode_string(text: str, tok_start: int, raw: str) -> str:
    out: list[str] = []
    i = 1
    while i < len(raw) - 1:
        ch = raw[i]
        if ch == "\\":
            esc = raw[i + 1]
            if esc not in _ESCAPES:
                raise _error(text, tok_start + i, f"unknown escape '\\{esc}' in string",
                             "one of \\n \\t \\r \\\\ \\' \\\"")
            out.append(_ESCAPES[esc])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize(text: str) -> list[Token]:
    """Split text into tokens (comments and white space dropped), ending with an EOF token."""
    tokens: list[Token] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "'\"`":
                raise _error(text, pos, f"unterminated quoted text starting with {ch}",
                             f"a closing {ch} on the same line")
            raise _error(text, pos, f"unexpected character {ch!r}")
        kind = m.lastgroup
        raw = m.group()
        if kind == "number":
            is_float = "." in raw or "e" in raw or "E" in raw
            if not is_float and len(raw) > _MAX_INT_DIGITS:
                raise _error(text, pos, f"an integer literal of {len(raw)} digits is too long",
                             f"at most {_MAX_INT_DIGITS} digits (no 64-bit number has more); "
                             "write an approximate value as a float, such as 1e30")
            value = float(raw) if is_float else int(raw)
            tokens.append(Token("NUMBER", value, raw, pos, m.end()))
        elif kind == "word":
            tokens.append(Token("WORD", raw, raw, pos, m.end()))
        elif kind == "qword":
            tokens.append(Token("QWORD", raw[1:-1].replace("``", "`"), raw, pos, m.end()))
        elif kind == "string":
            tokens.append(Token("STRING", _decode_string(text, pos, raw), raw, pos, m.end()))
        elif kind == "op":
            tokens.append(Token("OP", raw, raw, pos, m.end()))
        pos = m.end()
    tokens.append(Token("EOF", None, "", n, n))
    return tokens


def _describe(tok: Token) -> str:
    if tok.kind == "EOF":
        return "end of text"
    return repr(tok.raw)


# --- parser -----------------------------------------------------------------


class _Parser:
    """Recursive descent over the token list; one instance per text."""

    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.in_return = False
        # BoolOps built from one ``[a1, a2]`` bracket, by id: spliced into an enclosing AND chain.
        # The values keep the groups alive, so no later node can reuse an id.
        self._equiv_groups: dict[int, BoolOp] = {}
        # Nesting: the tree levels and the parentheses open at the current token, and the depth of
        # every composite node built (by id; the node is kept alive beside its depth, as above).
        self.depth = 0
        self.parens = 0
        self._depths: dict[int, tuple[object, int]] = {}

    # -- token helpers

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def fail(self, message: str | None = None, expected: str | None = None, tok: Token | None = None):
        tok = tok or self.tok
        raise _error(self.text, tok.start, message or f"unexpected {_describe(tok)}", expected)

    def is_op(self, op: str, tok: Token | None = None) -> bool:
        tok = tok or self.tok
        return tok.kind == "OP" and tok.value == op

    def is_kw(self, kw: str, tok: Token | None = None) -> bool:
        tok = tok or self.tok
        return tok.kind == "WORD" and tok.value.upper() == kw

    def expect_op(self, op: str, what: str | None = None) -> Token:
        if not self.is_op(op):
            self.fail(expected=what or repr(op))
        return self.advance()

    def expect_kw(self, kw: str) -> Token:
        if not self.is_kw(kw):
            self.fail(expected=kw)
        return self.advance()

    def name(self, what: str) -> str:
        """A variable or alias name: a non-keyword word or a back-quoted name."""
        tok = self.tok
        if tok.kind == "QWORD":
            self.advance()
            return tok.value
        if tok.kind == "WORD":
            if tok.value.upper() in KEYWORDS:
                self.fail(f"{tok.value!r} is a keyword and cannot be used as {what} "
                          f"(back-quote it: `{tok.value}`)", expected=what)
            self.advance()
            return tok.value
        self.fail(expected=what)

    # -- nesting

    def _too_deep(self, tok: Token, what: str = "levels"):
        self.fail(f"the pattern nests more than {MAX_NESTING} {what} deep",
                  expected=f"at most {MAX_NESTING} levels of elements and operators (each SEQ/AND/OR/KL/"
                           "negation, variable, operator, comparison, function, NOT, unary minus, reference "
                           f"and literal is one; a chain such as a + b + c + d is one per operator: group it "
                           f"as (a + b) + (c + d)) and at most {MAX_NESTING} levels of parentheses",
                  tok=tok)

    def descend(self) -> None:
        """Enter one tree level (an element or an operand); leave it with ``self.depth -= 1``."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            self._too_deep(self.tok)

    def made(self, node, tok: Token):
        """``node``, just built at ``tok``, once the tree under it is known to be MAX_NESTING deep at most."""
        depths = self._depths
        depth = 1 + max((depths[id(c)][1] if id(c) in depths else 1 for c in node.children()), default=0)
        if depth > MAX_NESTING:
            self._too_deep(tok)
        depths[id(node)] = (node, depth)
        return node

    def integer(self, what: str) -> int:
        tok = self.tok
        if tok.kind != "NUMBER" or not isinstance(tok.value, int):
            self.fail(expected=what)
        self.advance()
        return tok.value

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

    # -- expressions: OR < AND < NOT < comparison < + - < * / < unary - < primary
    #
    # Precedence climbing: one call per operand instead of one function per level, so a
    # parenthesis costs four stack frames, not nine (nesting, config.MAX_NESTING).

    def expr(self) -> Expr:
        return self.binary(_OR)

    def binary(self, lowest: int, paren: bool = False) -> Expr:
        """The longest expression starting here whose operators bind at level ``lowest`` or tighter.

        It is one tree level below the caller, or (``paren``) inside one more parenthesis.
        """
        if paren:
            self.parens += 1
            if self.parens > MAX_NESTING:
                self._too_deep(self.tok, "levels of parentheses")
        else:
            self.descend()
        left, level = self.prefix(lowest)
        while True:
            tok = self.tok
            op_level = self.operator_level()
            if op_level is None or op_level < lowest:
                break
            # AND, OR (n-ary: a chain is one node) and comparisons (they do not chain) take a
            # tighter left operand; + - * / associate to the left
            if level < (op_level + 1 if op_level in (_OR, _AND, _CMP) else op_level):
                break
            if op_level == _OR:
                left = self.chain("OR", left, _AND, tok)
            elif op_level == _AND:
                left = self.chain("AND", left, _NOT, tok)
            elif op_level == _CMP:
                left = self.comparison(left)
            else:
                self.advance()
                left = self.made(Arith(tok.value, left, self.binary(op_level + 1)), tok)
            level = op_level
        if paren:
            self.parens -= 1
        else:
            self.depth -= 1
        return left

    def operator_level(self) -> int | None:
        """The level of the binary (or postfix comparison) operator at the current token, if it is one."""
        tok = self.tok
        if tok.kind == "OP":
            if tok.value in _CMP_TOKENS:
                return _CMP
            return {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL}.get(tok.value)
        if self.is_kw("OR"):
            return _OR
        if self.is_kw("AND"):
            return _AND
        if self.is_kw("IN") or self.is_kw("IS") or (self.is_kw("NOT") and self.is_kw("IN", self.peek())):
            return _CMP
        return None

    def chain(self, kw: str, first: Expr, operand_level: int, tok: Token) -> Expr:
        """``first kw x kw y ...`` as one n-ary BoolOp; ``[a1, a2]`` groups splice into an AND chain."""
        items: list[Expr] = []

        def add(e: Expr):
            if kw == "AND" and id(e) in self._equiv_groups:  # [a1, a2] AND x  ==  [a1] AND [a2] AND x
                items.extend(e.items)
            else:
                items.append(e)

        add(first)
        while self.is_kw(kw):
            self.advance()
            add(self.binary(operand_level))
        return self.made(BoolOp(kw.lower(), tuple(items)), tok)

    def prefix(self, lowest: int) -> tuple[Expr, int]:
        """An operand: ``NOT x`` (where a condition may stand), ``-x``, ``(x)``, ``abs(x)`` or a primary;
        and its level.  The forms that nest are parsed here, each one call from :meth:`binary`."""
        tok = self.tok
        if lowest <= _NOT and self.is_kw("NOT"):
            self.advance()
            return self.made(Not(self.binary(_NOT)), tok), _NOT
        if self.is_op("("):
            self.advance()
            inner = self.binary(_OR, paren=True)
            self.expect_op(")")
            self._equiv_groups.pop(id(inner), None)  # ([a1, a2]) AND x: the parentheses keep the group whole
            return inner, _PRIMARY
        if tok.kind == "WORD" and tok.value.lower() == "abs" and self.is_op("(", self.peek()):
            self.advance()
            self.advance()
            inner = self.binary(_OR)
            self.expect_op(")")
            return self.made(Unary("abs", inner), tok), _PRIMARY
        if self.is_op("-"):
            if self.peek().kind == "NUMBER":  # -5 is one literal; -(5) is a negation
                self.advance()
                return Lit(-self.advance().value), _PRIMARY
            self.advance()
            self.descend()
            operand, _ = self.prefix(_NEG)
            self.depth -= 1
            return self.made(Unary("neg", operand), tok), _NEG
        return self.primary(), _PRIMARY

    def comparison(self, left: Expr) -> Expr:
        """``left`` followed by ``op right``, ``[NOT] IN (...)`` or ``IS [NOT] NULL``."""
        tok = self.tok
        if tok.kind == "OP":
            self.advance()
            return self.made(Cmp(_CMP_TOKENS[tok.value], left, self.binary(_ADD)), tok)
        if self.is_kw("NOT"):
            self.advance()
            self.advance()
            return self.made(In(left, self.literal_list(), True), tok)
        if self.is_kw("IN"):
            self.advance()
            return self.made(In(left, self.literal_list(), False), tok)
        self.advance()  # IS
        negated = False
        if self.is_kw("NOT"):
            self.advance()
            negated = True
        self.expect_kw("NULL")
        return self.made(IsNull(left, negated), tok)

    def literal_list(self) -> tuple[Lit, ...]:
        self.expect_op("(", "'(' starting a list of literals")
        values = [self.literal()]
        while self.is_op(","):
            self.advance()
            values.append(self.literal())
        self.expect_op(")", "',' or ')'")
        return tuple(values)

    def literal(self) -> Lit:
        tok = self.tok
        if self.is_op("-") and self.peek().kind == "NUMBER":
            self.advance()
            return Lit(-self.advance().value)
        if tok.kind in ("NUMBER", "STRING"):
            self.advance()
            return Lit(tok.value)
        for kw, value in (("TRUE", True), ("FALSE", False), ("NULL", None)):
            if self.is_kw(kw):
                self.advance()
                return Lit(value)
        self.fail(expected="a literal (number, 'string', TRUE, FALSE or NULL)")

    def primary(self) -> Expr:
        tok = self.tok
        if tok.kind in ("NUMBER", "STRING"):
            self.advance()
            return Lit(tok.value)
        if self.is_op("["):
            return self.equiv()
        if tok.kind == "WORD":
            upper = tok.value.upper()
            if upper in ("TRUE", "FALSE", "NULL"):
                self.advance()
                return Lit({"TRUE": True, "FALSE": False, "NULL": None}[upper])
            if upper in KEYWORDS:
                self.fail(expected="an expression (a.attr, a literal, a function, '(' or '[')")
            if self.is_op("(", self.peek()):
                return self.call()
        if tok.kind in ("WORD", "QWORD"):
            return self.reference()
        self.fail(expected="an expression (a.attr, a literal, a function, '(' or '[')")

    def call(self) -> Expr:
        fn_tok = self.advance()
        fn = fn_tok.value.lower()
        if fn not in _FUNCS:
            self.fail(f"unknown function {fn_tok.value!r}", expected="one of " + ", ".join(_FUNCS),
                      tok=fn_tok)
        self.advance()  # '('
        var = self.name("a Kleene variable name")
        if self.is_op("["):
            self.advance()
            self.expect_op("]", "']' (aggregates take all members: c[].x)")
        attr = None
        if fn == "count":
            if self.is_op("."):
                self.fail("count takes a variable, not an attribute", expected=f"count({var})")
        else:
            self.expect_op(".", f"'.' and an attribute: {fn}({var}.x)")
            attr = self.attr_name(allow_len=False)
        self.expect_op(")")
        return Agg(fn, var, attr)

    def attr_name(self, allow_len: bool) -> str | None:
        """The name after '.'; None for an unquoted LEN (count) when allow_len."""
        tok = self.tok
        if tok.kind == "QWORD":
            self.advance()
            return tok.value
        if tok.kind == "WORD":
            if tok.value.upper() == "LEN":
                if not allow_len:
                    self.fail("LEN is the member count, not an attribute here "
                              "(back-quote an attribute named len: `len`)", expected="an attribute name")
                self.advance()
                return None
            self.advance()
            return tok.value
        self.fail(expected="an attribute name")

    def reference(self) -> Expr:
        """``a.x``, ``a.LEN``, ``c[i].x``, ``c[i-1].x``, ``c[2].x``, ``c[c.LEN].x``, ``c[].x``, bare ``a``."""
        var_tok = self.tok
        var = self.name("a variable name")
        index = None
        if self.is_op("["):
            self.advance()
            index = self.kleene_index(var)
            self.expect_op("]")
            self.expect_op(".", "'.' and an attribute name")
            attr = self.attr_name(allow_len=False)
            return Attr(var, attr, None if index == "" else index)
        if self.is_op("."):
            self.advance()
            attr = self.attr_name(allow_len=True)
            if attr is None:
                return Agg("count", var)
            return Attr(var, attr)
        if self.in_return:
            return Attr(var, "*")
        self.fail(f"variable {var!r} needs an attribute here", expected=f"'.' and an attribute: {var}.x",
                  tok=self.tok if self.tok.start > var_tok.start else var_tok)

    def kleene_index(self, var: str):
        """Inside ``var[...]``: i, i-1, a 1-based integer, LEN / var.LEN, or nothing (all members -> "")."""
        tok = self.tok
        if self.is_op("]"):
            return ""
        if tok.kind == "NUMBER" and isinstance(tok.value, int):
            self.advance()
            return tok.value
        if tok.kind in ("WORD", "QWORD") and self.is_op(".", self.peek()):
            other = self.name("a variable name")
            self.advance()
            if not self.is_kw("LEN"):
                self.fail(expected=f"LEN ({var}[{var}.LEN] is the last member)")
            if other != var:
                self.fail(f"{var}[{other}.LEN] indexes {var!r} by the length of {other!r}",
                          expected=f"{var}.LEN", tok=tok)
            self.advance()
            return "len"
        if tok.kind == "WORD" and tok.value == "i":
            self.advance()
            if self.is_op("-"):
                self.advance()
                one = self.tok
                if not (one.kind == "NUMBER" and one.value == 1 and isinstance(one.value, int)):
                    self.fail("only the previous member (i-1) can be referenced", expected="1")
                self.advance()
                return "i-1"
            return "i"
        if tok.kind == "WORD" and tok.value.upper() == "LEN":
            self.advance()
            return "len"
        self.fail(expected=f"a member index: i, i-1, a number from 1, or {var}.LEN")

    def equiv(self) -> Expr:
        """``[attr]``, ``[attr = 'v']``, ``[a1, a2]`` (SASE section 2 equivalence tests)."""
        bracket = self.advance()  # '['
        items = [self.equiv_item()]
        while self.is_op(","):
            self.advance()
            items.append(self.equiv_item())
        self.expect_op("]", "',' or ']'")
        if len(items) == 1:
            return items[0]
        group = self.made(BoolOp("and", tuple(items)), bracket)
        self._equiv_groups[id(group)] = group
        return group

    def equiv_item(self) -> Equiv:
        tok = self.tok
        if tok.kind == "QWORD" or (tok.kind == "WORD" and tok.value.upper() not in KEYWORDS):
            self.advance()
        else:
            self.fail(expected="an attribute name")
        if self.is_op("=") or self.is_op("=="):
            self.advance()
            return self.made(Equiv(tok.value, self.literal()), tok)
        return Equiv(tok.value, None)


# --- public -----------------------------------------------------------------


def parse_many(text: str) -> list[Pattern]:
    """Parse ``;``-separated patterns (an empty statement between ``;`` is skipped)."""
    if not isinstance(text, str):
        raise PatternError(f"pattern text must be a str, got {type(text).__name__}; jitcep.compile also takes "
                           "a Pattern or a builder")
    parser = _Parser(text)
    out = parser.patterns()
    if not out:
        raise _error(text, len(text), "no pattern in the text", "PATTERN or EVENT")
    return out


def parse(text: str) -> Pattern:
    """Parse exactly one pattern (a trailing ``;`` is allowed).

    >>> parse("PATTERN Stock+ c[] WHERE c[i].price > c[i-1].price WITHIN 5 EVENTS").body
    Kleene(body=EventVar(name='c', types=('Stock',)), min=1, max=None)
    """
    out = parse_many(text)
    if len(out) > 1:
        first_separator = next(t for t in tokenize(text) if t.kind == "OP" and t.value == ";")
        raise _error(text, first_separator.start, f"the text holds {len(out)} patterns; use parse_many",
                     "a single pattern")
    return out[0]


def parse_expr(text: str) -> Expr:
    """Parse one WHERE-style expression (used by the builder's ``expr()`` and ``col()``)."""
    if not isinstance(text, str):
        raise PatternError(f"expression text must be a str, got {type(text).__name__}")
    parser = _Parser(text)
    out = parser.expr()
    if parser.tok.kind != "EOF":
        parser.fail(expected="an operator or end of expression")
    return out
