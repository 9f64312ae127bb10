"""Where each Kleene construct lies: what bounds its members' range (semantics section 6; ZStream 4.4.5 KSEQ).

A closure's or group's members lie between what every enclosing SEQ orders
before and after it (as a negation's range, section 7), inside the
innermost OR branch holding it; its nearest SEQ neighbours that bind a
single variable (``near``) fix that range on any record binding them, which
is where :mod:`jitcep.plan.rules.kleene_collection` may collect it.
"""

from __future__ import annotations

from ..errors import UnsupportedPatternError
from ..pattern.ast import Disj, EventVar, Kleene, Neg, Node, Seq
from ..pattern.printer import node_to_text
from ..pattern.structure import bound_vars, single_vars, walk_nodes
from .positive_structure import array_var, lead_var


def _seq_ends(full: Node) -> dict[int, tuple[str, str]]:
    """``id`` of a Kleene construct that is the last (first) positive item of the top-level SEQ ``full``
    -> ("last" ("first"), the single variable that is its first (last) positive item).

    Every event of a match then lies after (before) that variable, so it is the match's first (last)
    event: the construct's open side, bounded by the window measured from it (semantics section 6), is
    fixed on any record binding it and the construct's nearest neighbour (:attr:`~jitcep.plan.logical.Closure.near`)."""
    if not isinstance(full, Seq):
        return {}
    items = [n for n in full.items if not isinstance(n, Neg)]
    out: dict[int, tuple[str, str]] = {}
    if len(items) >= 2 and isinstance(items[-1], Kleene) and isinstance(items[0], EventVar):
        out[id(items[-1])] = ("last", items[0].name)
    if len(items) >= 2 and isinstance(items[0], Kleene) and isinstance(items[-1], EventVar):
        out[id(items[0])] = ("first", items[-1].name)
    return out


def kleene_contexts(full: Node, anchors: dict[str, str]) -> list[tuple[Kleene, tuple[str, ...], tuple[str, ...],
                                                                        tuple[str, ...], tuple[str, ...]]]:
    """(Kleene node, bound variables before, after, scope, near) of every array variable, in pattern order.

    ``before`` / ``after`` are what every enclosing SEQ orders before / after
    it (as for a negation, section 7); ``scope`` the single variables of the
    innermost OR branch holding it; ``near`` those of its nearest SEQ
    neighbours binding one, when there is one on each side
    (:attr:`~jitcep.plan.logical.Closure.near`; an anchored closure's first
    member, its anchor, is the one before the others).  A closure whose OR
    branch binds no single variable is refused: the positive plan would have
    no record for it.
    """
    out = []
    ends = _seq_ends(full)

    def rec(node, before, after, scope):
        if isinstance(node, Kleene):
            b = tuple(v for n in before for v in bound_vars(n))
            a = tuple(v for n in after for v in bound_vars(n))
            if scope is not None and not scope:
                raise UnsupportedPatternError(
                    f"the compiled engine needs a single variable beside the Kleene closure "
                    f"{node_to_text(node)!r} in its OR branch")
            near_b = next((single_vars(n) for n in reversed(before) if single_vars(n)), ())
            near_a = next((single_vars(n) for n in after if single_vars(n)), ())
            if array_var(node) is not None and lead_var(node) in anchors:  # its first member bounds the others
                near_b = (anchors[lead_var(node)],)
            elif lead_var(node) in anchors and isinstance(node.body, Seq):  # so does a SEQ group's first iteration
                near_b = tuple(anchors[v.name] for v in node.body.items)
            near = near_b + near_a if near_b and near_a else ()
            if not near and id(node) in ends and scope is None and lead_var(node) not in anchors:
                side, other = ends[id(node)]  # its open side ends a window from the match's other end
                near = tuple(dict.fromkeys(near_b + (other,) if side == "last" else (other,) + near_a))
                near = near if (near_b if side == "last" else near_a) else ()
            out.append((node, b, a, scope or (), near))
        elif isinstance(node, Seq):
            for i, item in enumerate(node.items):
                rec(item, before + node.items[:i], node.items[i + 1:] + after, scope)
        elif isinstance(node, Disj):
            for item in node.items:
                lent = tuple(anchors[v.name] for k in walk_nodes(item) if isinstance(k, Kleene)
                             and lead_var(k) in anchors for v in walk_nodes(k.body) if isinstance(v, EventVar))
                rec(item, before, after, single_vars(item) + lent)
        else:
            for c in node.children():
                rec(c, before, after, scope)

    rec(full, (), (), None)
    return out
