"""WHERE and RETURN expressions: tokens -> :mod:`.expr` trees, by precedence climbing.

OR < AND < NOT < comparison < ``+ -`` < ``* /`` < unary minus < primary, as in
docs/language.md; SASE's equivalence tests ``[attr]``, ``[a1, a2]`` (SASE
section 2) and SASE+'s array references ``c[i].x``, ``c[i-1].x``,
``c[c.LEN].x`` and aggregates ``sum(c[].x)`` (SASE+ section 2) are primaries.
"""

from __future__ import annotations

from ..config import MAX_NESTING
from .expr import AGG_FUNCS, Agg, Arith, Attr, BoolOp, Cmp, Equiv, Expr, In, IsNull, Lit, Not, Unary
from .lexer import KEYWORDS, Token, TokenCursor

__all__ = ["ExprParser"]

_CMP_TOKENS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FUNCS = (*AGG_FUNCS, "abs")

# Binding strength of each expression form (higher binds tighter), loosest first; the printer's levels.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _NEG, _PRIMARY = range(1, 9)


class ExprParser(TokenCursor):
    """Recursive descent over expressions; :class:`.parser.PatternParser` adds the pattern statements."""

    def __init__(self, text: str):
        super().__init__(text)
        self.in_return = False  # a bare variable name is a whole event only in RETURN
        # BoolOps built from one ``[a1, a2]`` bracket, by id: spliced into an enclosing AND chain.
        # The values keep the groups alive, so no later node can reuse an id.
        self._equiv_groups: dict[int, BoolOp] = {}

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
