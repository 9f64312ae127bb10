"""Code generation: predicate expression trees -> small cached Numba functions."""

from .predicates import ColumnSpec, PredicateSet, generate_source

__all__ = ["ColumnSpec", "PredicateSet", "generate_source"]
