"""The ``max_memory`` cap: bytes of intermediate state the compiled engine holds at once (semantics §12).

``max_partials`` counts pairs, which says little about memory: a pair of a
24-variable SEQ costs ten times one of a 2-variable SEQ, and a Kleene closure
collects (record, member) pairs by the million before any list is formed.  So
every structure that grows with the data — a join's candidate pairs and output
buffer, a closure's members, its member-pair table, its lists — is sized
against the bytes left under ``max_memory`` *before* it is allocated, with the
inputs it is built from still alive; a kernel that fills a growing array gets
the record count that fits as its cap and stops there.  The input columns and
the output frame are not intermediate state: ``max_matches`` bounds the output.
"""

from __future__ import annotations

import numpy as np

from .errors import ExplosionError
from .kernels.alloc import counted_sizes


def nbytes(*things) -> int:
    """Bytes of the arrays in ``things`` (arrays, tuples/lists of them, objects with array fields),
    each array counted once however often it is shared.

    A join asks this of its two input buffers every run, so the walk tests each item's class once (a
    field holding a name or a dict is passed over without a call) and reads the run's pool once:
    a walk calling per item would be ~15% of a small run's Python calls (perf/notes/opencep.md)."""
    pooled = counted_sizes()
    seen: set[int] = set()
    total = 0
    stack = list(things)
    while stack:
        x = stack.pop()
        cls = x.__class__
        if cls is tuple or cls is list:
            stack.extend(x)
        elif cls is np.ndarray or isinstance(x, np.ndarray):
            base = x.base
            while isinstance(base, np.ndarray):  # a view costs what its array costs, once
                x, base = base, base.base
            key = id(x)
            if key not in seen:
                seen.add(key)
                # a block of the run's pool: as a new one for its array (kernels.alloc.counted_sizes)
                got = pooled.get(key) if pooled else None
                total += x.nbytes if got is None else got
        elif cls not in _LEAVES:
            if isinstance(x, (tuple, list)):
                stack.extend(x)
                continue
            names = _FIELDS.get(cls)
            if names is None:
                names = _FIELDS[cls] = tuple(getattr(cls, "__dataclass_fields__", ()))
            stack.extend([getattr(x, f) for f in names])
    return total


_LEAVES = frozenset((str, int, float, bool, dict, type(None)))  # classes that hold no array
_FIELDS: dict[type, tuple[str, ...]] = {}  # a class's dataclass fields (none: not a dataclass)


class MemoryBudget:
    """``limit`` bytes for what one run builds beside its live inputs."""

    def __init__(self, limit: int):
        self.limit = int(limit)

    def records(self, per_record: int, *live) -> int:
        """How many records of ``per_record`` bytes fit beside ``live`` (0 when none does)."""
        return max(0, (self.limit - nbytes(*live)) // max(1, per_record))

    def check(self, need: int, what: str, *live) -> None:
        """Raise ExplosionError unless ``need`` more bytes fit beside ``live``."""
        have = nbytes(*live)
        if have + need > self.limit:
            raise self.error(what, have + need)

    def error(self, what: str, need: int | None = None) -> ExplosionError:
        size = f" (about {need / 2**20:.0f} MiB)" if need is not None else ""
        return ExplosionError(
            f"{what} would hold more intermediate results than max_memory={self.limit} bytes "
            f"({self.limit / 2**20:.0f} MiB) allows{size}; narrow the window or the predicates, "
            f"or raise the cap with jitcep.compile(..., max_memory=N)")
