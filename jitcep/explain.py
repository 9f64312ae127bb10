"""``Query.explain``: the plan of each pattern, and with ``analyze=True`` what each operator produced.

Plans come from the compiled engine's planner (:mod:`jitcep.runtime`); with an
event table the key coding (the rule that needs the table) is chosen too,
and with ``analyze`` the patterns run with a :class:`~jitcep.execute.Profile`,
so every operator carries its measured records and time, warm: a process's
first run loads (or compiles) the Numba kernels and a query's first run
generates and compiles its predicate function (core_seq3's final join: ~41 ms
cold against 6-12 ms warm, docs/planning.md), so a run during which Numba
loaded or compiled anything (:func:`_cold_work`) is run again and the second
reported.  A pattern the compiled engine does not cover is shown as a
reference-evaluator node saying why (``Query.run`` would run it there too).
"""

from __future__ import annotations

import contextlib

import numba.core.event as numba_event

from . import reference, runtime
from .errors import UnsupportedPatternError
from .execute import Profile
from .plan.explain import describe, one_line, to_text, window_text


def _refused(patterns, options) -> dict[int, str]:
    out = {}
    for i, p in enumerate(patterns):
        try:
            runtime.check_supported(p, options)
        except UnsupportedPatternError as e:
            out[i] = str(e)
    return out


def _reference_node(pattern, i: int, reason: str) -> dict:
    return {"op": "pattern", "pattern": i, "text": one_line(pattern), "vars": [], "lists": [],
            "predicates": [], "window": window_text(pattern.window),
            "key": [], "key_coding": None, "engine": "reference", "reason": reason, "children": []}


def explain_tree(patterns, options, table=None, analyze: bool = False, statistics=None, threads: int = 1) -> dict:
    """The explain tree (:func:`jitcep.plan.explain.describe`) of ``patterns``: one pattern's node, or
    several under an ``op="patterns"`` root.  ``statistics``: the user's, as ``Query.run`` takes them;
    ``threads``: the compiled engine's for ``analyze`` (each compiled pattern's node says how many)."""
    patterns = list(patterns)
    user = runtime.check_statistics(statistics, patterns)
    refused = _refused(patterns, options)
    covered = [i for i in range(len(patterns)) if i not in refused]
    sub = [patterns[i] for i in covered]
    nodes: dict[int, dict] = {}
    if analyze:
        profile = Profile()
        if sub:
            given = [user[i] for i in covered]
            with _cold_work() as cold:
                runtime.evaluate(sub, table, options, profile=profile, statistics=given, threads=threads)
            if cold:  # its times count loading or compiling: the same run again, warm now
                profile = Profile()
                runtime.evaluate(sub, table, options, profile=profile, statistics=given, threads=threads)
        for i, plan in zip(covered, profile.plans):
            nodes[i] = describe(plan, profile.stats, i)
            nodes[i]["threads"] = threads
        if refused:
            order = sorted(refused)
            for i, mt in zip(order, reference.evaluate([patterns[i] for i in order], table, options)):
                nodes[i] = _reference_node(patterns[i], i, refused[i])
                nodes[i]["rows"], nodes[i]["time_s"] = mt.n, 0.0
    else:
        if table is not None and sub:
            plans = runtime.prepare(sub, table, options, statistics=[user[i] for i in covered])[1]
        elif options.planner != "trivial":  # no events: planned on the user's numbers and defaults
            plans = [runtime.costed(patterns[i], options, None, user[i]) for i in covered]
        else:
            plans = runtime.plans_for(sub, options)
        nodes.update({i: describe(plan, None, i) for i, plan in zip(covered, plans)})
        nodes.update({i: _reference_node(patterns[i], i, why) for i, why in refused.items()})
    if len(patterns) == 1:
        return nodes[0]
    root = {"op": "patterns", "vars": [], "predicates": [], "window": None,
            "children": [nodes[i] for i in range(len(patterns))]}
    if analyze:
        root["rows"], root["time_s"] = sum(n["rows"] for n in root["children"]), 0.0
    return root


@contextlib.contextmanager
def _cold_work():
    """A list that is non-empty after the block when Numba took its compiler lock in it (on any thread):
    it does so to load a kernel's specialisation from its disk cache or to compile one (a predicate
    function's first call), never on a call whose specialisation is loaded, so a block that leaves the
    list empty ran warm.  Whether a run will be warm cannot be told before it: which kernels it calls,
    with which argument types, depends on its data."""
    seen: list[str] = []
    listener = _Seen(seen)
    numba_event.register("numba:compiler_lock", listener)
    try:
        yield seen
    finally:
        numba_event.unregister("numba:compiler_lock", listener)


class _Seen(numba_event.Listener):
    def __init__(self, seen: list):
        self.seen = seen

    def on_start(self, event):
        self.seen.append(event.kind)

    def on_end(self, event):
        pass


def render(tree: dict, format: str):
    """``tree`` as ``format`` asks: "text" (indented lines) or "dict" (the tree itself)."""
    return to_text(tree) if format == "text" else tree
