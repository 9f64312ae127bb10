"""Plans: trees of leaves and SEQ / AND / OR joins (ZStream section 4.1)."""

from .nodes import Join, Leaf, Plan, all_shapes, build_plan, default_shape, flatten

__all__ = ["Join", "Leaf", "Plan", "all_shapes", "build_plan", "default_shape", "flatten"]
