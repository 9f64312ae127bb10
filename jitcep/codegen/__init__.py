"""Code generation: predicate expression trees -> small cached Numba functions."""

from .predicates import ColumnSpec, PredicateSet, column_specs, generate_source

__all__ = ["ColumnSpec", "PredicateSet", "column_specs", "generate_source"]
