"""Results derived from a pattern object, kept per object (planning and output specs are pure Python).

An analyst reruns one query: planning a SEQ of 24 cost ~1.5 ms and its output
spec ~0.2 ms per run, a seventh of a whole run at 10^6 events (issue 3).
Entries are keyed by the object's id and hold the object, so the id is not
reused while the entry lives; not by equality, because patterns equal as
values may differ in literal types (``1`` and ``1.0``).  What depends on a
second value as well (the options, the input's schema, a table's statistics)
is kept per object and, under it, per that value (:class:`PerObjectAndKey`).
"""

from __future__ import annotations

import collections
import threading
from typing import Callable, Generic, Hashable, TypeVar

K = TypeVar("K")
Q = TypeVar("Q", bound=Hashable)
V = TypeVar("V")
_MISSING = object()


class PerObject(Generic[K, V]):
    """``compute(obj)``, kept for the last ``size`` objects (least recently used leave).

    ``ident``: what identifies an object, ``id`` (a tuple of objects: the tuple of their ids, as
    ``lambda objs: tuple(map(id, objs))``); the entry holds the object, so no id is reused while it lives.
    """

    def __init__(self, compute: Callable[[K], V], size: int = 64, ident: Callable[[K], Hashable] = id):
        self.compute, self.size, self.ident = compute, size, ident
        self.entries: collections.OrderedDict[int, tuple[K, V]] = collections.OrderedDict()
        # queries may be planned from several threads: another thread may evict an entry between its
        # lookup and its move to the end.  compute runs outside the lock (it is pure; two threads may
        # both compute one object, and the later result is kept)
        self.lock = threading.Lock()

    def __call__(self, obj: K) -> V:
        ident = self.ident(obj)
        with self.lock:
            hit = self.entries.get(ident)
            if hit is not None:
                self.entries.move_to_end(ident)
                return hit[1]
        value = self.compute(obj)  # an exception is not kept: the next call raises it again
        with self.lock:
            self.entries[ident] = (obj, value)
            if len(self.entries) > self.size:
                self.entries.popitem(last=False)
        return value


class PerObjectAndKey(Generic[K, Q, V]):
    """Values kept per object (by identity, as :class:`PerObject`: the last ``size`` objects) and, under
    each, per a second key (by value: options, a schema, statistics); past ``keep`` keys of one object the
    oldest stored leaves (None: no limit, for keys of a small fixed set).

    Thread-safe as :class:`PerObject` is: a value is made outside the lock (it is a pure function of the
    object and key; two threads may both make one, and the later is kept); with ``keep``, a store and
    its eviction take the lock, so two threads evicting at once never remove a key the other just
    stored, nor iterate a dictionary changing under them (without it a store is one atomic assignment).
    """

    def __init__(self, size: int = 64, keep: int | None = None, ident: Callable[[K], Hashable] = id):
        if keep is not None and keep < 1:
            raise ValueError(f"keep must be at least 1 or None, not {keep}")
        self.per_object: PerObject[K, dict] = PerObject(lambda obj: {}, size, ident)
        self.keep = keep
        self.lock = threading.Lock()

    def __call__(self, obj: K, key: Q, make: Callable[[], V]) -> V:
        """The value kept for (``obj``, ``key``), else ``make()`` kept (an exception is not kept)."""
        kept = self.kept(obj)
        got = kept.get(key, _MISSING)
        return self._store(kept, key, make()) if got is _MISSING else got

    def get(self, obj: K, key: Q, default=None):
        """The value kept for (``obj``, ``key``), else ``default``."""
        return self.kept(obj).get(key, default)

    def put(self, obj: K, key: Q, value: V) -> V:
        """Keep ``value`` for (``obj``, ``key``) (replacing what was kept for them); returns it."""
        return self._store(self.kept(obj), key, value)

    def _store(self, kept: dict, key: Q, value: V) -> V:
        if self.keep is None:  # nothing to evict: one store, atomic as it is
            kept[key] = value
            return value
        with self.lock:
            if key not in kept:
                while len(kept) >= self.keep:
                    kept.pop(next(iter(kept)), None)
            kept[key] = value
        return value

    def kept(self, obj: K) -> dict:
        """The values kept for ``obj`` by key, to read many keys in one look-up (store with :meth:`put`)."""
        return self.per_object(obj)
