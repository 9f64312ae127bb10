"""Partitions: rows grouped by a key in CSR form (:class:`Partition`, :func:`build_partition`).

Two kinds (semantics §13): from the equivalence key ``[attr]`` an index (a
null key is in no group), from ``partition_by=`` a split into independent
streams (a null key is a group of its own).  Keys are coded densely in value
order (:func:`_dense_codes`); one-attribute keys in two passes over their
value range (:func:`_single_key_group`).

Why: the equivalence-key partition is not built up front (Partition.deferred):
the compiled engine takes a string or type key's codes straight from the
column's dictionary codes, so for it the partition costs nothing; the
reference evaluator and the Spark adapter read ``table.partition`` and get it
built on first read. Then a one-attribute key (integer, string, type) is coded
and grouped in two passes over a table of its value range (a hash table when
the range is wide), and ``order`` waits for its own first read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from ..errors import MissingColumnError
from ..kernels import encode as _enc
from ..kernels.grouping import counting_sort
from .reading import _missing

if TYPE_CHECKING:  # annotations only: the table module imports this one
    from .column import Column
    from .table import EventTable


@dataclass(frozen=True, eq=False)
class Partition:
    """Equivalence-key partitions in CSR form (DESIGN.md section 1)."""

    key: tuple[str, ...]       # attribute names forming the key
    key_code: np.ndarray       # int64 per position: dense code of the key value (-1: null key)
    order: np.ndarray          # int64 positions sorted by (key_code, ts, position)
    offsets: np.ndarray        # int64, len = n_keys + 1; group g is order[offsets[g]:offsets[g+1]]
    # True for a partition_by= split (semantics §13): groups are separate streams,
    # and a null key value is a group of its own (never code -1).
    independent: bool = False

    # The arrays may be left to first use.  The compiled engine
    # reads only key_code and offsets (and takes a string key's codes from its dictionary codes when
    # it can), so a partition built for it skips the scatter of n positions (a full-length int64
    # array) unless someone asks for ``order``, and a deferred one costs nothing until read.
    @classmethod
    def lazy(cls, key: tuple[str, ...], key_code: np.ndarray, offsets: np.ndarray,
             independent: bool = False) -> "Partition":
        """A partition whose ``order`` is computed from ``key_code`` (one counting sort) when first read."""
        return cls._unset(key, independent, key_code=key_code, offsets=offsets)

    @classmethod
    def deferred(cls, key: tuple[str, ...], build: Callable[[], "Partition"],
                 independent: bool = False) -> "Partition":
        """A partition whose arrays are ``build()``'s, computed when one of them is first read."""
        return cls._unset(key, independent, _build=build)

    @classmethod
    def _unset(cls, key, independent, **given) -> "Partition":
        self = object.__new__(cls)
        for name, value in (("key", key), ("independent", independent), *given.items()):
            object.__setattr__(self, name, value)
        return self

    def __getattr__(self, name):
        # reached only for an array not set yet (a lazy or deferred partition): build and keep it
        if name in ("key_code", "offsets", "order") and "_build" in self.__dict__:
            built = self.__dict__["_build"]()
            for field in ("key_code", "offsets", "order"):
                if field in built.__dict__:  # a lazy ``built`` leaves ``order`` to the branch below
                    object.__setattr__(self, field, built.__dict__[field])
            object.__delattr__(self, "_build")
            return getattr(self, name)
        if name == "order" and "key_code" in self.__dict__:
            order, _ = counting_sort(self.key_code, len(self.offsets) - 1)
            object.__setattr__(self, "order", order)
            return order
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _dense_codes(values: np.ndarray, valid: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Dense int64 codes 0..k-1 in value order; -1 where invalid."""
    if values.dtype.kind in "iub":
        return _enc.dense_codes(values.astype(np.int64, copy=False), valid)
    out = np.full(len(values), -1, dtype=np.int64)
    sel = slice(None) if valid is None else valid
    uniq, inv = np.unique(values[sel], return_inverse=True)  # floats: exact value order incl. -0.0 == 0.0
    out[sel] = inv.reshape(-1)
    return out, len(uniq)


def _single_key_group(col: "Column", independent: bool):
    """(key_code, order, offsets) of a one-attribute key's column in two passes (:func:`_enc.range_group`),
    or None (float keys, wide integer ranges: the general path codes them)."""
    values, valid, bounds = col.values, col.valid, None
    if col.kind == "float":
        return None
    if col.kind == "str":  # codes into the sorted distinct values (type codes: into type_names)
        bounds = (0, max(len(col.dictionary) - 1, 0))
    elif col.kind == "bool":
        values = values.view(np.uint8)
    return _enc.range_group(values, valid, null_group=independent, bounds=bounds, with_order=False)


def _key_column(table: "EventTable", attr: str):
    """The key attribute's column (:meth:`EventTable.column`: ``ts`` and ``type`` are virtual ones)."""
    try:
        return table.column(attr)
    except MissingColumnError:
        raise _missing(attr, "partition attribute", list(table.columns)) from None


def build_partition(table: "EventTable", key: Sequence[str], *, independent: bool = False,
                    exact: Mapping[str, "Column"] | None = None) -> Partition:
    """CSR partitions of ``table`` by the key attributes (SASE section 4.2.1 PAIS, ZStream section 5.2.2).

    ``key_code[p]`` is the dense code of the key of position ``p`` (codes in
    key-value order; -1 when any key attribute is null: null equals nothing,
    so such events join no group).  With ``independent`` (a ``partition_by=``
    split, semantics §13) null is a value instead, ordered after every other
    value of its attribute, so every event is in exactly one group.  ``order`` lists the non-null-key
    positions by (key_code, ts, position) and group g is
    ``order[offsets[g]:offsets[g + 1]]``.  A one-attribute integer, string or
    type key is coded and grouped in two passes over a table of its value
    range (:func:`jitcep.kernels.encode.range_group`); otherwise a code per
    column, the columns combined pairwise and re-densified, one counting sort.
    ``exact``: codes that stand for an attribute's column (a ``partition_by``
    column whose float64 attribute merges distinct values, events/table.py).
    """
    key = tuple(key)
    if not key:
        raise ValueError("a partition key needs at least one attribute")

    def column(attr: str):
        return exact[attr] if exact and attr in exact else _key_column(table, attr)

    if len(key) == 1:
        got = _single_key_group(column(key[0]), independent)
        if got is not None:
            key_code, _, offsets = got
            return Partition.lazy(key, key_code, offsets, independent)
    combined: np.ndarray | None = None
    for attr in key:
        col = column(attr)
        if col.kind == "str":  # codes into the sorted distinct values: already dense
            codes = col.values.astype(np.int64)
            if col.valid is not None:
                codes[~col.valid] = -1
            k = len(col.dictionary)
        else:
            valid = col.valid
            if col.kind == "float" and not independent:
                # [attr] is equality, and NaN equals nothing: a NaN key joins no group, as a null
                # does (semantics section 4); partition_by treats NaN as one value, as group_by does
                nan = np.isnan(col.values)
                if nan.any():
                    valid = ~nan if valid is None else valid & ~nan
            codes, k = _dense_codes(col.values, valid)
        if independent and (codes < 0).any():  # null: one more value, after the others (group_by)
            codes = np.where(codes < 0, k, codes)
            k += 1
        if combined is None:
            combined = codes
        else:  # previous codes < n and k <= n: the product fits int64 for any realistic n
            null = (combined < 0) | (codes < 0)
            mixed = combined * max(k, 1) + codes
            mixed[null] = -1
            combined, _ = _dense_codes(mixed, ~null)
    key_code = combined
    n_keys = k if len(key) == 1 else (int(key_code.max()) + 1 if len(key_code) else 0)
    # one stable counting sort: positions grouped by key, in position (= ts) order inside a group;
    # null keys (code -1) are dropped
    order, offsets = counting_sort(key_code, max(n_keys, 0))
    return Partition(key, key_code, order, offsets, independent)
