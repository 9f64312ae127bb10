"""Query options: one frozen record, validated once at ``jitcep.compile`` time.

Every engine reads the same :class:`Options`; an unknown option or an option
value outside its allowed set is an :class:`~jitcep.errors.OptionError`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import config
from ._typing import KleeneMode, KleeneWindow, Order, OutputPolicy, SelectionStrategy, allowed
from .errors import OptionError


def check_choice(name: str, value, alias) -> None:
    """Raise OptionError unless ``value`` is one of the Literal ``alias``'s values."""
    if value not in allowed(alias):
        raise OptionError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed(alias)))}")


@dataclass(frozen=True)
class Options:
    """Evaluation options (semantics in docs/semantics.md).

    order, strategy, output, kleene: see ``jitcep._typing``.
    kleene_window: what the window bounds around a Kleene group (semantics §2):
        "match" (default) every positive event of the match; "iteration" each
        iteration of a group together with the events outside every group, but
        not two iterations together (OpenCEP's KL node).
    consume_types: restrict ``match_single`` / ``match_next`` to events of these
        types (OpenCEP's "single types"); None = every event.
    contiguous: groups of variables whose events must be consecutive input
        positions (OpenCEP's contiguous policy).
    freeze: variables whose binding freezes later starts (OpenCEP's freeze policy).
    max_matches, max_kleene, max_partials: caps; passing one raises ExplosionError.
    max_memory: bytes of intermediate results (partial matches, candidate pairs,
        Kleene members and lists) the compiled engine may hold at once; passing
        it raises ExplosionError (docs/semantics.md section 12).
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

    def __post_init__(self):
        for name, alias in (("order", Order), ("strategy", SelectionStrategy),
                            ("output", OutputPolicy), ("kleene", KleeneMode),
                            ("kleene_window", KleeneWindow)):
            check_choice(name, getattr(self, name), alias)
        for name in ("max_matches", "max_kleene", "max_partials", "max_memory"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise OptionError(f"{name} must be a positive integer, got {value!r}")

    @classmethod
    def from_kwargs(cls, **kwargs) -> "Options":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise OptionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        norm = dict(kwargs)
        if norm.get("consume_types") is not None:
            norm["consume_types"] = tuple(norm["consume_types"])
        if "contiguous" in norm:
            norm["contiguous"] = tuple(tuple(g) for g in norm["contiguous"])
        if "freeze" in norm:
            norm["freeze"] = tuple(norm["freeze"])
        return cls(**norm)
