"""Pattern language: AST, predicate expressions, parser, printer, builder, validation."""
