"""Pattern language: AST, predicate expressions, parser, printer, builder, validation.

Text and builder produce the same :class:`~jitcep.pattern.ast.Pattern`; see docs/language.md.
"""

from .ast import Pattern
# the builder's `expr(text)` stays in jitcep.pattern.builder: re-exporting it here would shadow the
# submodule jitcep.pattern.expr
from . import expr  # noqa: F401  (the predicate-expression module)
from .builder import E, Builder, and_, col, conj, count, disj, equiv, kleene, lit, neg, or_, seq, var
from .parser import parse, parse_expr, parse_many
from .printer import expr_to_text, to_text
from .validate import validate

__all__ = [
    "Pattern", "parse", "parse_many", "parse_expr", "to_text", "expr_to_text", "validate",
    "E", "Builder", "var", "neg", "kleene", "seq", "and_", "or_", "conj", "disj", "col", "lit",
    "count", "equiv",
]
