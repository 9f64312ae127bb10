"""A physical plan as data and as text: what ``Query.explain`` returns.

:func:`describe` turns a plan into nested dicts, one per operator, with the
keys ``op``, ``vars`` (the variables its records bind), ``children``,
``predicates`` (pattern text), ``window`` and the choices the rules made
(``driver``, ``placement``, ``mode`` ...); a plan chosen on statistics adds
``est_rows`` (the records the operator is expected to produce) and ``cost``
(Kolchinsky & Schuster's Cost_tree of its subtree: the partial matches its
operators hold), ``choice_costs`` where a rule priced its alternatives (a SEQ
join's drivers, a negation's or a closure's placements: ZStream's Formula 1), and the
pattern node the statistics with their sources, ``form`` and ``form_costs``
for a pattern with an OR (planned as one unit or in DNF, one subplan per
alternative under a ``DNF union``, and each form's cost,
:mod:`jitcep.plan.rules.disjuncts`), and ``planner_notes`` when the
search did not finish (an exact algorithm that fell back to greedy past its
budget) or the DNF form was not tried; with
a run's measurements each node also has ``rows`` (records it produced) and
``time_s`` (seconds in the operator itself, its inputs excluded).  :func:`to_text` indents that tree
like Polars' ``LazyFrame.explain``.
"""

from __future__ import annotations

from ..pattern import expr as E
from ..pattern.printer import expr_to_text, to_text as pattern_text, window_to_text
from .kleene_refs import display_expr
from .planner.cardinality import estimate_rows
from .planner.statistics import PARTITIONS, SKEW
from .operators import (AndJoin, Contiguity, DisjunctUnion, GroupCollect, KleeneCollect, ListFilter, NegationFilter,
                        NfaRuns, OutputPolicy, PhysicalPlan, Scan, SemiJoinReduce, SeqJoin, Union)


def window_text(window) -> str | None:
    """A window as WITHIN writes it, without the keyword ("10 minutes", "5 EVENTS", "UNBOUNDED")."""
    return None if window is None else window_to_text(window).removeprefix("WITHIN ")


def one_line(pattern) -> str:
    """The pattern's canonical text on one line."""
    return " ".join(pattern_text(pattern).splitlines())


def _text(e: E.Expr, closure: str | None = None) -> str:
    return expr_to_text(display_expr(e, closure))


def _types(types) -> str | None:
    return None if types is None else list(types)


def _priced(node) -> dict:
    """``choice_costs``: each alternative a rule priced for this node (driver or placement -> cost), when
    the plan was chosen on statistics."""
    return {"choice_costs": dict(node.costs)} if node.costs else {}


def _extends(node) -> dict:
    """``extends``: a join under a semi-join reduction keeping only the partial records that extend to a chain."""
    return {"extends": True} if node.extends else {}


def _operator(node, window: str) -> dict:
    """The dict of one operator, without its children and statistics."""
    if isinstance(node, Scan):
        return {"op": "scan", "vars": [node.var], "types": _types(node.types),
                "predicates": [] if node.filter is None else [_text(node.filter)], "window": None,
                "frozen": node.frozen}
    if isinstance(node, SeqJoin):
        return {"op": "SEQ join", "vars": list(node.vars), "predicates": [_text(p) for p in node.predicates],
                "window": window, "driver": node.driver, "overlap": node.overlap, **_priced(node), **_extends(node),
                **({"writes_rows": False} if not node.rows else {})}
    if isinstance(node, AndJoin):
        return {"op": "AND join", "vars": list(node.vars), "predicates": [_text(p) for p in node.predicates],
                "window": window, "overlap": node.overlap, **_extends(node)}
    if isinstance(node, Union):
        return {"op": "OR union", "vars": list(node.vars), "predicates": [], "window": None}
    if isinstance(node, DisjunctUnion):
        # an alternative's lists bound empty and its own constants (pattern/nonempty.py), where any
        extra = {"empty": [list(e) for e in node.empty]} if any(node.empty) else {}
        if any(node.constants):
            extra["constants"] = [[_text(c) for c in cs] for cs in node.constants]
        return {"op": "DNF union", "vars": list(node.vars), "predicates": [], "window": None, **extra}
    if isinstance(node, SemiJoinReduce):
        return {"op": "semi-join reduction", "vars": list(node.vars), "chain": list(node.chain), "predicates": [],
                "window": window}
    if isinstance(node, NegationFilter):
        neg = node.neg
        preds = ([] if neg.filter is None else [_text(neg.filter)]) + [_text(c) for c in neg.conds + neg.list_conds] \
            + [_text(c, {u.rsplit("[", 1)[0] for u in E.variables(c) if u.endswith(("[i]", "[i-1]"))})
               for c in neg.each]  # b[i], b[i-1] as written
        return {"op": "negation", "vars": list(node.vars), "negated": neg.var, "types": _types(neg.types),
                "predicates": preds, "window": window, "placement": node.placement,
                "after": list(neg.before), "before": list(neg.after), "in_and": neg.in_conj, **_priced(node)}
    if isinstance(node, KleeneCollect):
        K = node.closure
        preds = ([] if K.filter is None else [_text(K.filter)]) + [_text(c) for c in K.member + K.cross] \
            + [_text(c, K.var) for c in K.prev + K.each] + [_text(c) for c in K.lists]
        return {"op": "kleene", "vars": list(node.vars), "closure": K.var, "types": _types(K.types),
                "predicates": preds, "window": window, "mode": node.mode, "min": K.min, "max": K.max,
                # an anchored closure's other members lie after its anchor (its first member)
                "after": list(K.before) + ([K.anchor] if K.anchor else []), "before": list(K.after),
                "span_check": node.span_check,
                "runs": node.runs, "bound": [L.var for L in node.bound],
                "prune": [n.var for n in node.prune], "placement": node.placement,
                **_priced(node), **({"searched": True} if node.searched else {})}
    if isinstance(node, ListFilter):
        preds = [_text(c) for c in node.member] + [_text(c, node.group or node.var) for c in node.prev + node.each] \
            + [_text(c) for c in node.lists]
        return {"op": "list filter", "vars": list(node.vars), "closure": node.var, "predicates": preds,
                "window": None, **({"group": list(node.group)} if node.group else {})}
    if isinstance(node, GroupCollect):
        g = node.group
        preds = [_text(c) for c in g.member + g.cross] + [_text(c, g.vars) for c in g.prev + g.each] \
            + [_text(c) for c in g.lists]
        return {"op": "kleene group", "vars": list(node.vars), "group": list(g.vars),
                "body": "SEQ" if g.seq else "AND", "predicates": preds, "window": window, "min": g.min,
                "max": g.max, "after": list(g.before), "before": list(g.after),
                "per_iteration": node.per_iteration, "placement": node.placement,
                **({"searched": True} if node.searched else {})}
    if isinstance(node, Contiguity):
        return {"op": "contiguous", "vars": list(node.vars), "predicates": [], "window": None,
                "groups": [list(g) for g in node.groups]}
    if isinstance(node, OutputPolicy):
        return {"op": "output policy", "vars": list(node.vars), "predicates": [], "window": None,
                "policy": node.policy,
                "consume_types": None if node.consume_types is None else list(node.consume_types)}
    if isinstance(node, NfaRuns):
        kvs = [K.var for K in node.closures]  # the edges' kv[i-1] and kv[i] as written
        preds = [_text(p, kvs) for edges in (node.edges, node.list_edges, node.proceeds) for edge in edges
                 for p in edge]
        return {"op": "NFA^b runs", "vars": list(node.vars), "strategy": node.strategy, "predicates": preds,
                "window": window}
    raise TypeError(f"unknown operator {type(node).__name__}")


def describe(plan: PhysicalPlan, stats: dict | None = None, index: int = 0) -> dict:
    """``plan`` as nested dicts (see the module docstring); ``stats``: ``id(operator) -> (rows, seconds
    with inputs)`` of a run (:class:`jitcep.execute.Profile`), or None.  An operator a run skipped (the
    right input of a join whose left input was empty) has 0 rows and 0 seconds."""
    window = window_text(plan.window)
    est = estimate_rows(plan, plan.statistics, plan.span) if plan.statistics is not None else None

    def rec(node) -> dict:
        d = _operator(node, window)
        d["children"] = [rec(c) for c in node.children]
        if est is not None:
            d["est_rows"] = est.get(id(node))
            # Kolchinsky & Schuster's Cost_tree of the subtree: the partial matches its nodes hold
            d["cost"] = (d["est_rows"] or 0.0) + sum(c["cost"] for c in d["children"])
        if stats is not None:
            rows, seconds = stats.get(id(node), (0, 0.0))
            inner = sum(stats.get(id(c), (0, 0.0))[1] for c in node.children)
            d["rows"], d["time_s"] = rows, max(seconds - inner, 0.0)
        return d

    root = rec(plan.root)
    out = {"op": "pattern", "pattern": index, "text": one_line(plan.pattern), "vars": list(plan.variables),
           "lists": list(plan.list_vars), "predicates": [_text(c) for c in plan.constants], "window": window,
           "key": list(plan.key), "key_coding": plan.key_coding, "engine": "compiled", "children": [root]}
    if plan.statistics is not None:
        st = plan.statistics
        out["statistics"] = {"rates": dict(st.rates), "selectivities": dict(st.selectivities),
                             "partitions": st.partitions, "skew": st.skew, "sources": dict(st.sources)}
    if plan.form is not None:
        out["form"], out["form_costs"] = plan.form, dict(plan.form_costs)
    if plan.notes:
        out["planner_notes"] = list(plan.notes)
    if stats is not None:
        out["rows"], out["time_s"] = root["rows"], 0.0
    return out


def _fields(d: dict) -> str:
    """The details of one node on its line: what it reads, its predicates and the rules' choices."""
    parts = []
    if d.get("types") is not None:
        parts.append("types " + ", ".join(d["types"]))
    if d["op"] == "negation":
        parts.append(f"range after {_names(d['after'])} before {_names(d['before'])}"
                     + (" (in AND)" if d["in_and"] else ""))
        parts.append(f"placement={d['placement']}" + _alternatives(d))
    if d["op"] == "kleene":
        hi = "" if d["max"] is None else d["max"]
        parts.append(f"mode={d['mode']} {{{d['min']},{hi}}} range after {_names(d['after'])} "
                     f"before {_names(d['before'])}")
        if d["runs"]:
            parts.append("aggregates over runs (prefix sums)")
        if d["bound"]:
            parts.append(f"members before the last candidate of {_names(d['bound'])}")
        if d["prune"]:
            parts.append(f"members no negation kills alone: {_names(['!' + v for v in d['prune']])}")
        if d["placement"] == "lower" or "choice_costs" in d or d.get("searched"):  # the rule's default goes unsaid
            parts.append(f"placement={d['placement']}" + _alternatives(d)
                         + (" (the join-order search's)" if d.get("searched") else ""))
    if d["op"] == "kleene group" and (d["placement"] == "lower" or d.get("searched")):
        parts.append(f"placement={d['placement']}" + (" (the join-order search's)" if d.get("searched") else ""))
    if d.get("frozen"):
        parts.append("frozen (active candidates only)")
    if d["op"] == "contiguous":
        parts.append("groups " + " ".join(_names(g) for g in d["groups"]))
    if d["op"] == "output policy":
        parts.append(d["policy"] + ("" if d["consume_types"] is None
                                    else " consuming types " + ", ".join(d["consume_types"])))
    if d["op"] == "semi-join reduction":
        parts.append("chain " + _names(d["chain"]) + f" within {d['window']}")
    if d.get("extends"):
        parts.append("extending records only")
    for field, shown in (("empty", _names), ("constants", " AND ".join)):
        if d.get(field):
            parts.append(f"{field}: " + "; ".join(f"alternative {i} {shown(x)}" for i, x in enumerate(d[field]) if x))
    if d.get("driver") is not None:
        parts.append(f"driver={d['driver']}" + _alternatives(d))
    if d.get("writes_rows") is False and d.get("driver") == "right":
        parts.append("matches from its pairs (no row-writing pass)")
    if d.get("strategy") is not None:
        parts.append(f"strategy={d['strategy']}")
    if d["op"] == "pattern":
        if d["key"]:
            parts.append(f"key [{', '.join(d['key'])}]" + (f" coded by {d['key_coding']}" if d["key_coding"] else ""))
        if d.get("form") is not None:
            parts.append(f"form={d['form']} (cost " + ", ".join(f"{k} {v:.3g}" for k, v in d["form_costs"].items())
                         + ")")
        if d["engine"] != "compiled":
            parts.append(f"engine={d['engine']} ({d['reason']})")
    if d.get("window") is not None and d["op"] in ("SEQ join", "AND join", "NFA^b runs"):
        parts.append(f"within {d['window']}")
    if d["predicates"]:
        parts.append("where " + " AND ".join(d["predicates"]))
    if d.get("est_rows") is not None:
        parts.append(f"est_rows={d['est_rows']:.3g} cost={d['cost']:.3g}")
    if "rows" in d:
        parts.append(f"rows={d['rows']}" + (f" time={d['time_s'] * 1e3:.3f} ms" if d["op"] != "pattern" else ""))
    if "threads" in d:
        parts.append(f"threads={d['threads']}")
    return "  ".join(parts)


def _alternatives(d: dict) -> str:
    """The priced alternatives of a rule's choice, as " (cost pushed 12, matches 30)"."""
    if "choice_costs" not in d:
        return ""
    return " (cost " + ", ".join(f"{k} {v:.3g}" for k, v in d["choice_costs"].items()) + ")"


def _names(vs) -> str:
    return "(" + ", ".join(vs) + ")" if vs else "-"


def _head(d: dict) -> str:
    if d["op"] == "patterns":
        return f"{len(d['children'])} patterns"
    if d["op"] == "pattern":
        return f"pattern {d['pattern']}: {d['text']}"
    if d["op"] == "negation":
        return f"negation !{d['negated']} over ({', '.join(d['vars'])})"
    if d["op"] == "kleene":
        return f"kleene {d['closure']}[] over ({', '.join(d['vars'])})"
    if d["op"] == "list filter":  # a closure's conjuncts with later variables, on the lists carried up
        what = f"group ({', '.join(d['group'])})" if d.get("group") else f"{d['closure']}[]"
        return f"list filter {what} over ({', '.join(d['vars'])})"
    return f"{d['op']} ({', '.join(d['vars'])})"


def _statistics(st: dict) -> str:
    """The numbers a plan was chosen on, each with its source."""
    src = st["sources"]
    rates = ", ".join(f"{v}={r:.3g} ({src.get(v, '?')})" for v, r in st["rates"].items())
    sels = ", ".join(f"{t}: {x:.3g} ({src.get(t, '?')})" for t, x in st["selectivities"].items())
    return f"statistics: rates {rates}" + (f"; selectivities {sels}" if sels else "") + \
        f"; partitions {st['partitions']} ({src.get(PARTITIONS, '?')}), skew {st['skew']:.3g} ({src.get(SKEW, '?')})"


def to_text(tree: dict) -> str:
    """The tree of :func:`describe` (or several under an ``op="patterns"`` root) as indented lines."""
    lines = []

    def rec(d, depth):
        details = _fields(d) if d["op"] != "patterns" else ""
        lines.append("  " * depth + _head(d) + (("  " + details) if details else ""))
        if "statistics" in d:
            lines.append("  " * (depth + 1) + _statistics(d["statistics"]))
        for text in d.get("planner_notes", ()):
            lines.append("  " * (depth + 1) + "planner: " + text)
        for c in d["children"]:
            rec(c, depth + 1)
    rec(tree, 0)
    return "\n".join(lines)
