"""One attribute by position: :class:`Column`, and the lazy coding of a string column.

A column holds numpy values (float64 / int64 / bool, or int32 codes into a
sorted ``dictionary`` for strings) and a validity mask, in the event table's
position order.  A String / Categorical / Enum input column is kept as its
series until first read (:meth:`Column.deferred`); :meth:`Column.labels` and
:meth:`Column.codes_at` group it without building the dictionary
(:mod:`jitcep.events.coding` builds it).

Why:

- A string attribute is coded when first read (Column.deferred): the
  compiled engine partitions by a Categorical key's category ids (no pass:
  ~9 ms at 10^7), by a String key's codes from one pass without sorting the
  dictionary (Column.labels), or codes a String key only at the events of the
  types its leaves read when those are few (Column.codes_at: 10^7 events, 3
  of 32 types read, ~25 ms for the whole column -> ~9-13 ms for its 10^6 rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from ..kernels import encode as _enc
from ..pattern.kinds import INT64_MAX, INT64_MIN
from .coding import _dict_encode, _view_chunks


def fits_int64(s: pl.Series) -> bool:
    """Whether an integer column's values all fit int64, so that it is read as int64 (semantics §4:
    a UInt64, Int128 or UInt128 column holding a value past int64 is read as float64 instead)."""
    if s.dtype not in (pl.UInt64, pl.Int128, pl.UInt128):
        return True
    low, high = s.min(), s.max()
    return low is None or (low >= INT64_MIN and high <= INT64_MAX)


@dataclass(frozen=True, eq=False)
class Column:
    """One attribute, by position."""

    kind: Literal["int", "float", "bool", "str"]
    values: np.ndarray              # int64 / float64 / bool_ / int32 codes (str); arbitrary where null
    valid: np.ndarray | None        # bool mask, None when the column has no nulls
    dictionary: tuple[str, ...] = ()  # for kind == "str": code -> string
    # for a temporal attribute (kind "int"): "datetime" (Date or naive Datetime), "datetime_tz" (a Datetime
    # with a time zone: an instant), "duration" or "time" (of day); None otherwise (semantics §4)
    temporal: str | None = None

    # A string column's codes may be computed when first read
    # (:meth:`deferred`), so the compiled engine can group by a key column without its dictionary:
    # a Categorical by its category ids, a String by codes of one pass without a sort (:meth:`labels`)
    # or coded on only the rows of the types its leaves read (:meth:`codes_at`).
    @classmethod
    def deferred(cls, s: pl.Series, perm: np.ndarray | None) -> "Column":
        """The String / Categorical / Enum series ``s`` (input order) as a ``str`` column by position
        (``perm``: input row of each position, None for sorted input); ``values`` and
        ``dictionary`` are computed when first read."""
        valid = s.is_not_null().to_numpy() if s.null_count() else None
        if valid is not None and perm is not None:
            valid = valid[perm]
        self = object.__new__(cls)
        for name, value in (("kind", "str"), ("valid", valid), ("_strings", (s, perm))):
            object.__setattr__(self, name, value)
        return self

    def __getattr__(self, name):
        # reached only for the codes of a deferred column not read yet: code and keep them
        if name in ("values", "dictionary") and "_strings" in self.__dict__:
            s, perm = self.__dict__["_strings"]
            codes, dictionary, valid = _dict_encode(s)
            if valid is not None:
                codes[~valid] = 0  # arbitrary where null; 0 keeps codes usable as indices
            object.__setattr__(self, "values", codes if perm is None else codes[perm])
            object.__setattr__(self, "dictionary", dictionary)
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def coded(self) -> bool:
        """False while a deferred column's codes are not computed (reading ``values`` computes them)."""
        return "values" in self.__dict__

    @property
    def string_input(self) -> bool:
        """A deferred String column (not Categorical / Enum) whose codes are not computed yet: grouping
        by it takes a coding pass (:meth:`labels`) or a coding of part of it (:meth:`codes_at`)."""
        return not self.coded and self.__dict__["_strings"][0].dtype == pl.String

    def labels(self) -> tuple[np.ndarray, int] | None:
        """(labels by position, k) of a deferred column: equal values get equal labels, in 0..k-1,
        not in dictionary order; found without building the dictionary.

        A Categorical's / Enum's category ids (no pass; zero-copy for sorted
        input without nulls), a String's codes in first-occurrence order of
        its short strings (one pass, no sort: :func:`jitcep.kernels.encode.view_codes`).
        None for a coded column, long strings, or category ids spanning more
        than a few per row (arrays of k entries would outweigh the column).
        """
        if self.coded:
            return None
        if "_labels" not in self.__dict__:
            s, perm = self.__dict__["_strings"]
            got = None
            if s.dtype == pl.String:
                chunks = self._view_chunks()
                valid = s.is_not_null().to_numpy() if self.valid is not None else None
                coded = None if chunks is None else _enc.view_codes(chunks, valid, len(s))
                if coded is not None:
                    got = (coded[0], len(coded[1]))
            else:
                phys = s.to_physical()
                top = phys.max()
                size = max(len(s.dtype.categories) if isinstance(s.dtype, pl.Enum) else 0 if top is None
                           else int(top) + 1, 1)  # at least 1: a null's id (0) is in range too
                if size <= max(len(s) // 8, 1 << 16):
                    got = ((phys if self.valid is None else phys.fill_null(0)).to_numpy(), size)
            if got is not None and perm is not None:
                got = (got[0][perm], got[1])
            object.__setattr__(self, "_labels", got)
        return self.__dict__["_labels"]

    def codes_at(self, positions: np.ndarray) -> tuple[np.ndarray, int]:
        """(codes, k) of the values at ``positions`` (non-null ones): equal values get equal codes,
        in 0..k-1 (not in dictionary order, and not every code need be used).

        For grouping part of a column: a deferred String column of short
        strings codes only these rows, from their Arrow views
        (:func:`jitcep.kernels.encode.view_codes_at`); otherwise these are
        its :meth:`labels` or dictionary codes.
        """
        if self.string_input and "_labels" not in self.__dict__:
            perm = self.__dict__["_strings"][1]
            words = self._view_words()
            if words is not None:
                got = _enc.view_codes_at(words, positions if perm is None else perm[positions])
                if got is not None:
                    return got
        labels = self.labels()
        if labels is not None:
            return labels[0][positions], labels[1]
        return self.values[positions], len(self.dictionary)

    def views(self) -> tuple[np.ndarray, np.ndarray | None] | None:
        """(words, perm) of a deferred String column: its strings' Arrow views as uint64 pairs in input
        order (:meth:`_view_words`) and the input row of each position (None: sorted input), for coding
        it at a few positions in compiled code (the planner's sample,
        :func:`jitcep.kernels.sampling.sample_with_views`); None when it is not a deferred String column
        or holds no views."""
        if not self.string_input:
            return None
        words = self._view_words()
        return None if words is None else (words, self.__dict__["_strings"][1])

    def __getstate__(self):
        # the views are the input series' own buffers, made again when read: not pickled beside it
        return {k: v for k, v in self.__dict__.items() if k not in ("_chunks", "_words")}

    def _view_chunks(self) -> list | None:
        """The input series' Arrow string views (:func:`~jitcep.events.coding._view_chunks`), converted once
        per column: a run's planner samples the key at a few positions and its leaves then code it
        (:meth:`codes_at`, :meth:`labels`)."""
        if "_chunks" not in self.__dict__:
            object.__setattr__(self, "_chunks", _view_chunks(self.__dict__["_strings"][0]))
        return self.__dict__["_chunks"]

    def _view_words(self) -> np.ndarray | None:
        """The views of :meth:`_view_chunks` as one array of uint64 pairs (input order), made once per column:
        :meth:`codes_at` gathers them at any rows."""
        if "_words" not in self.__dict__:
            chunks = self._view_chunks()
            words = None
            if chunks is not None:
                parts = [w[2 * off:2 * (off + length)] for w, off, length in chunks]
                words = parts[0] if len(parts) == 1 else np.concatenate(parts or [np.zeros(0, np.uint64)])
            object.__setattr__(self, "_words", words)
        return self.__dict__["_words"]

    def strings_at(self, positions: np.ndarray) -> pl.Series:
        """The values of a ``str`` column at ``positions`` as a String series (null where null); a
        deferred column gathers them from its input series without coding it."""
        if not self.coded:
            s, perm = self.__dict__["_strings"]
            return s[positions if perm is None else perm[positions]].cast(pl.String)  # indexing: no Polars query
        codes = self.values[positions].astype(np.int64)
        if self.valid is not None:  # null: the None appended after the dictionary
            codes = np.where(self.valid[positions], codes, len(self.dictionary))
        return pl.Series([*self.dictionary, None], dtype=pl.String).gather(codes)

    def python_value(self, p: int):
        """The value at position p as a Python scalar (None for null)."""
        if self.valid is not None and not self.valid[p]:
            return None
        v = self.values[p]
        if self.kind == "str":
            return self.dictionary[int(v)]
        return v.item()


# ``dictionary``'s default stays in ``__init__`` but leaves the class, so that reading the field of a
# deferred column reaches ``__getattr__`` instead of finding the class attribute ``()``.
del Column.dictionary
