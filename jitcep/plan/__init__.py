"""Plans: the logical plan of a pattern, physical operator trees built from it by rules, shapes.

Data flows one way: pattern AST -> :func:`~.logical.logical_plan` ->
:func:`~.rules.physical_plan` (operators of :mod:`.operators`) -> the executor
(:mod:`jitcep.execute`); :mod:`.explain` prints a plan.
"""

from .logical import LogicalPlan, logical_plan
from .operators import AndJoin, DisjunctUnion, KleeneCollect, NegationFilter, PhysicalPlan, Scan, SeqJoin, Union
from .positive_structure import flatten, positive
from .rules import physical_plan
from .shapes import all_shapes, all_trees, default_shape


def build_plan(pattern, shape=None, options=None) -> PhysicalPlan:
    """The physical plan of ``pattern`` with join ``shape`` (default: left-deep) under ``options``."""
    from ..options import Options

    return physical_plan(logical_plan(pattern), options or Options(), shape)


__all__ = ["AndJoin", "DisjunctUnion", "KleeneCollect", "LogicalPlan", "NegationFilter", "PhysicalPlan", "Scan", "SeqJoin",
           "Union", "all_shapes", "all_trees", "build_plan", "default_shape", "flatten", "logical_plan", "physical_plan",
           "positive"]
