"""Cost models over join trees (Kolchinsky & Schuster 2018, section 3; ZStream section 5).

A cost model is a function ``(problem, tree) -> float`` (lower is better);
:data:`COST_MODELS` names them for ``jitcep.compile(..., cost_model=NAME)``.

- ``"intermediate"``: Kolchinsky & Schuster's Cost_tree (section 3.2), the
  partial matches held in every node, ``sum(PM(node) for node in tree)``;
  for a left-deep tree it is their Cost_ord (section 3.1).
"""

from __future__ import annotations

from .problem import JoinProblem, Tree, leaves


def intermediate(problem: JoinProblem, tree: Tree) -> float:
    """Cost_tree (section 3.2): the expected partial matches of every node, leaves included."""
    if isinstance(tree, int):
        return problem.pm((tree,))
    return intermediate(problem, tree[0]) + intermediate(problem, tree[1]) + problem.pm(leaves(tree))


COST_MODELS = {"intermediate": intermediate}
