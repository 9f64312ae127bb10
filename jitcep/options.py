"""Query options: one frozen record, validated once at ``jitcep.compile`` time.

Every engine reads the same :class:`Options`; an unknown option or an option
value of the wrong type or outside its allowed set is an
:class:`~jitcep.errors.OptionError`.  One table, :data:`_CHECKS`, holds the
check of every field (and :func:`check_run_arguments` the checks of
``Query.run``'s keywords), each returning the value in its one stored form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from numbers import Integral, Real

import numpy as np

from . import config
from ._typing import (CostModel, Engine, KleeneMode, KleeneWindow, Order, OutputPolicy, Planner, SelectionStrategy,
                      Shape, TimeUnit, allowed)
from .errors import OptionError
from .threads import available


def check_choice(name: str, value, alias) -> None:
    """Raise OptionError unless ``value`` is one of the Literal ``alias``'s values (strings)."""
    # the isinstance test first: `value in (...)` compares with ==, which an array answers elementwise
    if not isinstance(value, str) or value not in allowed(alias):
        raise OptionError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed(alias)))}")


def _choice(alias):
    def check(name: str, value):
        check_choice(name, value, alias)
        return value
    return check


def _cap(name: str, value) -> int:
    """A positive integer (a NumPy integer is stored as a Python int); bool and float are refused."""
    if not isinstance(value, Integral) or isinstance(value, (bool, np.bool_)) or value <= 0:
        raise OptionError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _seed(name: str, value) -> int:
    """A non-negative integer (a NumPy integer is stored as a Python int)."""
    if not isinstance(value, Integral) or isinstance(value, (bool, np.bool_)) or value < 0:
        raise OptionError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _unit_interval(name: str, value) -> float:
    """A real number in [0, 1] (a bool, NaN or a string is not one)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real) or not 0.0 <= value <= 1.0:
        raise OptionError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _names(name: str, value, what: str, *, ordered: bool = False) -> tuple[str, ...]:
    """A collection of names as a tuple (a set sorted, unless ``ordered`` refuses sets).

    A bare string is refused rather than read as one name: Python would iterate it character by
    character (``"AB"`` -> ``("A", "B")``), and guessing that ``"AB"`` means the one name ``"AB"``
    would be wrong for the user who meant two; either misreading changes the matches silently.  A
    one-name tuple (``("AB",)``) says it unambiguously, so the error costs one edit.
    """
    if isinstance(value, str):
        raise OptionError(f"{name} takes a list or tuple of {what}, got the string {value!r}; write one name "
                          f"as a one-element tuple, {name}=({value!r},)")
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise OptionError(f"{name} takes a list or tuple of {what}, got {value!r}")
    if isinstance(value, (set, frozenset)):
        if ordered:
            raise OptionError(f"{name}: {value!r} is a set, but the order of the {what} matters; "
                              "pass a list or tuple")
        value = sorted(value, key=str)
    out = tuple(str(v) if isinstance(v, np.str_) else v for v in value)
    bad = [v for v in out if not isinstance(v, str) or not v]
    if bad:
        raise OptionError(f"{name} takes {what} (non-empty strings), got {bad[0]!r} in {value!r}")
    return out


def _consume_types(name: str, value) -> tuple[str, ...] | None:
    return None if value is None else _names(name, value, "type names")


def _freeze(name: str, value) -> tuple[str, ...]:
    return _names(name, value, "variable names")


def _contiguous(name: str, value) -> tuple[tuple[str, ...], ...]:
    """Groups of variable names, each in order: ``(("a", "b", "c"),)``.  A flat ``("a", "b")`` is refused:
    read as groups it would be two groups of one character each."""
    if isinstance(value, (str, bytes)) or isinstance(value, (set, frozenset, Mapping)) \
            or not isinstance(value, Iterable):
        raise OptionError(f"{name} takes a list or tuple of groups of variable names, such as "
                          f"(('a', 'b', 'c'),), got {value!r}")
    groups = tuple(value)
    out = []
    for group in groups:
        if isinstance(group, str):
            raise OptionError(f"{name} takes groups of variable names, got the string {group!r} as a group; "
                              f"write {name}=({groups!r},) for one group of those names")
        names = _names(name, group, "variable names", ordered=True)
        if not names:
            raise OptionError(f"{name}: an empty group names no variable")
        out.append(names)
    return tuple(out)


# The check of every Options field: (name, value) -> the value as stored, or OptionError.
_CHECKS = {
    "order": _choice(Order),
    "strategy": _choice(SelectionStrategy),
    "output": _choice(OutputPolicy),
    "kleene": _choice(KleeneMode),
    "kleene_window": _choice(KleeneWindow),
    "consume_types": _consume_types,
    "contiguous": _contiguous,
    "freeze": _freeze,
    "max_matches": _cap,
    "max_kleene": _cap,
    "max_partials": _cap,
    "max_memory": _cap,
    "planner": _choice(Planner),
    "cost_model": _choice(CostModel),
    "latency_alpha": _unit_interval,
    "planner_seed": _seed,
}


@dataclass(frozen=True)
class Options:
    """Evaluation options (semantics in docs/semantics.md).

    order, strategy, output, kleene: see ``jitcep._typing``.
    kleene_window: what the window bounds around a Kleene group (semantics §2):
        "match" (default) every positive event of the match; "iteration" each
        iteration of a group together with the events outside every group, but
        not two iterations together (OpenCEP's KL node).
    consume_types: restrict ``match_single`` / ``match_next`` to events of these
        types (OpenCEP's "single types"), a list, tuple or set of type names;
        None = every event.
    contiguous: groups of variables whose events must be consecutive input
        positions (OpenCEP's contiguous policy), a list or tuple of groups, each
        a list or tuple of variable names in order: ``(("a", "b", "c"),)``.
    freeze: variables whose binding freezes later starts (OpenCEP's freeze
        policy), a list, tuple or set of variable names.
    max_matches, max_kleene, max_partials: caps, positive integers; passing one
        raises ExplosionError.
    max_memory: bytes of intermediate results (partial matches, candidate pairs,
        Kleene members and lists) the compiled engine may hold at once, a positive
        integer; passing it raises ExplosionError (docs/semantics.md section 12).
    planner: how the compiled engine orders its joins (never the matches):
        "auto" (default: the exact bushy search while its priced joins fit its
        budget, counted steps, never time: 0.01 per event from 10,000 to 50,000,
        about 10 to 50 ms; ZStream's search over the best order beyond), "trivial" (left-deep in pattern
        order) or another of Kolchinsky & Schuster's algorithms and ZStream's
        DP, chosen on statistics estimated from the events
        (jitcep/plan/planner/, docs/planning.md).  "auto" keeps the pattern
        order on a table under 4,096 events (runtime.SMALL_TABLE), and on one
        under 32,768 where a SEQ's pattern order builds under 2^18 partial
        matches (runtime.small_work, shown by explain), unless statistics are given.
    cost_model: what the planner minimises: "zstream" (default: ZStream's
        operator costs, SEQ and AND joins priced apart; the model whose plans ran
        fastest in perf/bench_plans.py), "intermediate" (partial matches held
        in every node of a tree, Kolchinsky & Schuster's Cost_tree, section 3.2),
        "order" (their Cost_ord, section 3.1: the partial matches of an
        order-based plan; only with the order-based planners and "auto",
        which then runs dp_left_deep within its budget and greedy beyond),
        "latency" (Kolchinsky & Schuster 5.1),
        "skip_till_next_match", "strict_contiguity", "partition_contiguity"
        (the partial matches under those selection strategies, section 5.2;
        under the strategies themselves the engine runs NFA^b runs in pattern
        order and searches no join order, docs/planning.md).
    latency_alpha: the weight of the latency term under cost_model="latency",
        a number in [0, 1]: the model is (1 - alpha) * intermediate + alpha *
        latency (0: partial matches alone, 1: the latency of the last event's
        matches alone); default 0.5.
    planner_seed: the seed of the randomised planners (``ii_random``), a
        non-negative integer: a plan is deterministic for a seed.

    Where names are expected, a bare string is an OptionError, not one name:
    ``consume_types="AB"`` could mean the type ``AB`` or the types ``A`` and ``B``,
    and reading it either way would change the matches without a word (Python's
    own reading splits it into characters).  Write ``("AB",)`` or ``("A", "B")``.
    Every value is checked here, with a message naming the option, so a
    wrong type never surfaces later as a TypeError from an engine.
    """

    order: Order = "position"
    strategy: SelectionStrategy = "skip_till_any_match"
    output: OutputPolicy = "all"
    kleene: KleeneMode = "all"
    kleene_window: KleeneWindow = "match"
    consume_types: tuple[str, ...] | None = None
    contiguous: tuple[tuple[str, ...], ...] = ()
    freeze: tuple[str, ...] = ()
    max_matches: int = config.DEFAULT_MAX_MATCHES
    max_kleene: int = config.DEFAULT_MAX_KLEENE
    max_partials: int = config.DEFAULT_MAX_PARTIALS
    max_memory: int = config.DEFAULT_MAX_MEMORY
    planner: Planner = "auto"
    cost_model: CostModel = "zstream"
    latency_alpha: float = 0.5
    planner_seed: int = 0

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, _CHECKS[f.name](f.name, getattr(self, f.name)))
        from .plan.planner.algorithms import LEFT_DEEP  # the planner package imports this module's users
        from .plan.planner.cost import ORDER_ONLY
        if self.cost_model in ORDER_ONLY and self.planner not in (*LEFT_DEEP, "auto"):
            raise OptionError(
                f'cost_model="{self.cost_model}" prices order-based plans (Kolchinsky & Schuster 3.1, left-deep '
                f'trees) and planner="{self.planner}" builds trees: use one of {", ".join(LEFT_DEEP)} or "auto", '
                f'or cost_model="intermediate" (Cost_tree, 3.2)')

    @classmethod
    def from_kwargs(cls, **kwargs) -> "Options":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise OptionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**kwargs)


# --- Query.run's keywords -------------------------------------------------------


def _column(name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise OptionError(f"{name}= takes a column name (a non-empty str), got {value!r}")
    return value


def _optional_column(name: str, value) -> str | None:
    return None if value is None else _column(name, value)


def _time_format(name: str, value) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise OptionError(f"{name}= takes a strftime format string such as '%Y-%m-%d %H:%M', got {value!r}")
    return value


def _columns(name: str, value) -> str | tuple[str, ...] | None:
    if value is None or isinstance(value, str):
        return None if value is None else _column(name, value)
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise OptionError(f"{name}= takes a column name or a list or tuple of them, got {value!r}")
    return _names(name, value, "column names")


def _threads(name: str, value) -> int:
    """A positive integer; None: every core the process may run on (:func:`jitcep.threads.available`)."""
    if value is None:
        return available()
    return _cap(name, value)


def _optional_choice(alias):
    check = _choice(alias)
    return lambda name, value: None if value is None else check(name, value)


_RUN_CHECKS = {
    "time": _column,
    "type": _optional_column,
    "time_unit": _optional_choice(TimeUnit),
    "partition_by": _columns,
    "engine": _choice(Engine),
    "shape": _choice(Shape),
    "time_format": _time_format,
    "threads": _threads,
}


def check_run_arguments(**arguments) -> dict:
    """``Query.run``'s keyword arguments checked (OptionError naming the argument) and in stored form:
    ``partition_by`` a column name or a tuple of them, ``threads`` a count (None: every core)."""
    return {name: _RUN_CHECKS[name](name, value) for name, value in arguments.items()}
