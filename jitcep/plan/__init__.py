"""Plans: trees of leaves and SEQ / AND / OR joins (ZStream section 4.1)."""

from .nodes import Join, Leaf, NegLeaf, Plan, all_shapes, build_plan, default_shape, flatten, positive

__all__ = ["Join", "Leaf", "NegLeaf", "Plan", "all_shapes", "build_plan", "default_shape", "flatten", "positive"]
