"""Pattern text -> tokens, and the cursor the parsers walk them with.

The lexer splits a text into words, back-quoted names, strings, numbers and
operators (comments and white space dropped); a :class:`TokenCursor` walks the
token list, reports a :class:`PatternSyntaxError` at a token's line and column,
and bounds the nesting of what is built from it (``config.MAX_NESTING``,
docs/language.md).  The grammar itself is in :mod:`.expr_parser` (WHERE and
RETURN expressions) and :mod:`.parser` (patterns).

>>> [t.raw for t in tokenize("SEQ(A a, B+ b[]) -- two")]
['SEQ', '(', 'A', 'a', ',', 'B', '+', 'b', '[', ']', ')', '']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import MAX_NESTING
from ..errors import PatternSyntaxError

__all__ = ["KEYWORDS", "Token", "TokenCursor", "syntax_error", "tokenize"]

KEYWORDS = frozenset({
    "PATTERN", "EVENT", "SEQ", "AND", "OR", "ANY", "KL", "NOT", "WHERE", "WITHIN", "EVENTS",
    "UNBOUNDED", "RETURN", "AS", "IN", "IS", "NULL", "TRUE", "FALSE",
})

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}

# The longest integer literal: every number is a 64-bit integer or float, and every integer of at
# most 308 digits is a finite float64 (the largest is about 1.8e308), so no later conversion to float
# overflows.  It also keeps int() far from Python's int-to-string conversion limit, which would
# otherwise raise a ValueError mid-lexing.
_MAX_INT_DIGITS = 308


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


def syntax_error(text: str, offset: int, message: str, expected: str | None = None) -> PatternSyntaxError:
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
                raise syntax_error(text, tok_start + i, f"unknown escape '\\{esc}' in string",
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
                raise syntax_error(text, pos, f"unterminated quoted text starting with {ch}",
                                   f"a closing {ch} on the same line")
            raise syntax_error(text, pos, f"unexpected character {ch!r}")
        kind = m.lastgroup
        raw = m.group()
        if kind == "number":
            is_float = "." in raw or "e" in raw or "E" in raw
            if not is_float and len(raw) > _MAX_INT_DIGITS:
                raise syntax_error(text, pos, f"an integer literal of {len(raw)} digits is too long",
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


def describe(tok: Token) -> str:
    if tok.kind == "EOF":
        return "end of text"
    return repr(tok.raw)


class TokenCursor:
    """A position in one text's token list, with the nesting counted so far."""

    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        # Nesting: the tree levels and the parentheses open at the current token, and the depth of
        # every composite node built (by id; the node is kept alive beside its depth, so no later node
        # can reuse the id).
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
        raise syntax_error(self.text, tok.start, message or f"unexpected {describe(tok)}", expected)

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
