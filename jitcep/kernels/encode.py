"""Event-table building kernels: sortedness, stable radix argsort, dense codes, string dictionaries.

These replace Polars joins and comparison sorts in :func:`jitcep.events.build_event_table`
(issue 3: building the table, not joining, is where the time went).  Every
function is one or a few linear passes; none allocates more than its output
plus tables of the size of the distinct values (or the value range, when that
is at most a few times ``n``).

Two rules keep the passes near memory speed (issue 3, measured at 10^7 events):

- Outputs of length n are allocated by NumPy in the Python wrappers
  (:func:`jitcep.kernels.alloc.empty`) and filled by the kernels.  NumPy advises large arrays for transparent huge
  pages, Numba's allocator does not, so a kernel that allocates its own
  40 MB output pays a 4 KB page fault every 1024 int32 (20 ms instead of 6).
  Tables of the size of the distinct values stay inside the kernels.
- Hot loops avoid data-dependent branches: the sortedness check counts a
  block's descents and exits between blocks (it vectorises), short strings
  are masked by a table indexed by their length, and a column without nulls
  compiles a specialisation without the mask test (``valid`` None).

- :func:`is_sorted` — nondecreasing check without temporaries.
- :func:`identity_rows` — ``arange(n)``, the row numbers of sorted input.
- :func:`stable_argsort` — LSD radix sort of (key, index) words (stable: ties
  keep index order), O(n) per digit (at most 11 bits) of the key range.
- :func:`dense_codes` — dense codes 0..k-1 *in value order* for integer
  values: a direct table over the value range when it is small, else an
  open-addressing hash table and a sort of the k distinct values only.
- :func:`range_group` — dense codes plus their stable counting sort in two passes.
- :func:`string_codes` — dictionary codes of an Arrow (large_)string array by
  hashing its bytes (FNV-1a) in one pass; exact (bytes are compared on every
  hash hit), codes in first-occurrence order plus the first row of each value,
  so the caller sorts only the k distinct strings.
- :func:`view_codes` — the same for strings of at most 12 bytes from their
  16-byte Arrow views (length and inline bytes compared whole: exact);
  :func:`view_codes_at` codes only the views at some rows.
- :func:`present_codes`, :func:`apply_table` — categorical ids present, and
  ids -> ranks of the sorted present categories.

Indexes into tables: a kernel whose table is sized from the values it
indexes with (:func:`dense_codes`, :func:`stable_argsort`, the hash tables)
cannot leave it; one that takes its table size or codes from the caller
checks each value against the table as it reads it and reports a status, so a
bad input raises :class:`~jitcep.errors.KernelInputError` instead of writing
outside the table (:mod:`jitcep.kernels.checks`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import config
from ..config import NUMBA_FLAGS
from ..threads import even_ranges, run_ranges
from . import alloc as _alloc
from .checks import check_lengths, check_offsets, fail
from .extent import min_max


@njit(**NUMBA_FLAGS)
def _is_sorted(a, block):
    # An early exit at every element keeps the loop scalar (7 ms at 10^7); counting the descents of a
    # block without a branch lets it vectorise (3 ms, memory bound), and the exit moves between blocks.
    for lo in range(0, len(a) - 1, block):
        x = a[lo:lo + block + 1]
        bad = 0
        for i in range(len(x) - 1):
            bad += x[i + 1] < x[i]
        if bad:
            return False
    return True


def is_sorted(a: np.ndarray) -> bool:
    """True when ``a`` is nondecreasing."""
    return len(a) < 2 or bool(_is_sorted(a, config.SORTED_CHECK_BLOCK))


@njit(**NUMBA_FLAGS)
def _identity(row):
    for i in range(len(row)):
        row[i] = i


def identity_rows(n: int) -> np.ndarray:
    """``arange(n)`` as int64 (a Numba fill of a NumPy array: faster than ``np.arange``)."""
    row = _alloc.empty(n, np.int64)
    _identity(row)
    return row


@njit(**NUMBA_FLAGS)
def _pack(keys, lo, ibits, w):
    for i in range(len(keys)):
        w[i] = (np.uint64(keys[i] - lo) << np.uint64(ibits)) | np.uint64(i)


@njit(**NUMBA_FLAGS)
def _radix_sort_packed(w, tmp, shift0, passes, dbits):
    """LSD radix sort of ``w`` by bits [shift0, shift0 + passes * dbits); returns the sorted array
    (``w`` or ``tmp``).  A pass whose digit is the same for every word is skipped."""
    n = len(w)
    nb = 1 << dbits
    mask = np.uint64(nb - 1)
    cnt = np.empty(nb, np.int64)
    for p in range(passes):
        sh = np.uint64(shift0 + p * dbits)
        cnt[:] = 0
        for i in range(n):
            cnt[np.int64((w[i] >> sh) & mask)] += 1
        if cnt.max() == n:
            continue
        pos = 0
        for b in range(nb):
            c = cnt[b]
            cnt[b] = pos
            pos += c
        for i in range(n):
            x = w[i]
            b = np.int64((x >> sh) & mask)
            tmp[cnt[b]] = x
            cnt[b] += 1
        w, tmp = tmp, w
    return w


@njit(**NUMBA_FLAGS)
def _unpack(w, ibits, out):
    m = (np.uint64(1) << np.uint64(ibits)) - np.uint64(1)
    for i in range(len(w)):
        out[i] = np.int64(w[i] & m)


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """int64 permutation sorting int64 ``keys``, ties in index order.

    LSD radix sort of one word per element, ``(key - min) << b | index``
    (b bits hold an index): every pass reads its input in order and the
    index rides along, where sorting indices by a key array read at them
    costs a cache miss per element and pass (10^7 jittered timestamps:
    396 -> 92 ms).  Stable by construction (ties compare their indices).
    Keys whose range and index do not fit 64 bits take NumPy's stable sort.
    """
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    n = len(keys)
    if n < config.ARGSORT_SMALL:  # numpy's sorts win over kernel call overhead
        return np.argsort(keys, kind="stable").astype(np.int64)
    lo, hi = int(keys.min()), int(keys.max())
    kbits = max(1, (hi - lo).bit_length())
    ibits = (n - 1).bit_length()
    if kbits + ibits > 64:
        return np.argsort(keys, kind="stable").astype(np.int64)
    passes = (kbits + config.ARGSORT_RADIX_BITS - 1) // config.ARGSORT_RADIX_BITS
    dbits = (kbits + passes - 1) // passes  # equal digits: 24 bits sort in three 8-bit passes
    w = _alloc.empty(n, np.uint64)
    _pack(keys, np.int64(lo), ibits, w)
    w = _radix_sort_packed(w, _alloc.empty(n, np.uint64), ibits, passes, dbits)
    out = w.view(np.int64)
    _unpack(w, ibits, out)  # in place: each word becomes its index
    return out


# --- dense integer codes ------------------------------------------------------------------


@njit(**NUMBA_FLAGS)
def _range_codes(values, valid, lo, table, out):
    """Codes into ``out`` by a direct table over [lo, lo + len(table)) (zeroed on entry): present values
    ranked in value order; returns k."""
    n = len(values)
    span = len(table) - 1
    for i in range(n):
        if valid is None or valid[i]:
            table[values[i] - lo] = 1
    k = 0
    for v in range(span + 1):
        if table[v]:
            table[v] = k
            k += 1
    for i in range(n):
        out[i] = table[values[i] - lo] if valid is None or valid[i] else -1
    return k


@njit(**NUMBA_FLAGS)
def _mix(x):
    # splitmix64 finaliser: spreads clustered integers over the table
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(**NUMBA_FLAGS)
def _hash_fill(values, valid, i, slots, keys, uniq, k, out):
    """Code rows from ``i`` on until the table is half full; returns (next row, k).

    No array is reassigned in here (that would cost reference counting in the
    hot loop): the caller grows the table and calls again.
    """
    n = len(values)
    mask = np.uint64(len(slots) - 1)
    limit = min(len(slots) // 2, len(uniq))
    while i < n:
        if valid is not None and not valid[i]:
            out[i] = -1
            i += 1
            continue
        x = values[i]
        j = _mix(np.uint64(x)) & mask
        while True:
            c = slots[j]
            if c < 0:
                if k >= limit:
                    return i, k
                slots[j] = k
                keys[j] = x
                uniq[k] = x
                out[i] = k
                k += 1
                break
            if keys[j] == x:
                out[i] = c
                break
            j = (j + np.uint64(1)) & mask
        i += 1
    return i, k


@njit(**NUMBA_FLAGS)
def _rehash(cap, uniq, k):
    """A table of ``cap`` slots holding the k distinct values ``uniq[:k]`` (and room for cap // 2)."""
    slots = np.full(cap, -1, np.int64)
    keys = np.empty(cap, np.int64)
    u2 = np.empty(cap // 2, np.int64)
    for q in range(k):  # not u2[:k] = uniq[:k]: Numba compiles a slice's shape-mismatch message
        u2[q] = uniq[q]
    mask = np.uint64(cap - 1)
    for q in range(k):
        j = _mix(np.uint64(u2[q])) & mask
        while slots[j] >= 0:
            j = (j + np.uint64(1)) & mask
        slots[j] = q
        keys[j] = u2[q]
    return slots, keys, u2


@njit(**NUMBA_FLAGS)
def _hash_feed(values, valid, slots, keys, uniq, k, out):
    """Code all of ``values`` into ``out`` on top of a table holding k values; returns the (grown) table and k."""
    i, k = _hash_fill(values, valid, 0, slots, keys, uniq, k, out)
    while i < len(values):  # half full: double, rehash the k distinct values, go on
        slots, keys, uniq = _rehash(2 * len(slots), uniq, k)
        i, k = _hash_fill(values, valid, i, slots, keys, uniq, k, out)
    return slots, keys, uniq, k


@njit(**NUMBA_FLAGS)
def _hash_codes(values, valid, out):
    """First-occurrence codes of int64 values into ``out`` through an open-addressing table (-1: invalid)."""
    slots, keys, uniq = _rehash(1024, np.empty(0, np.int64), 0)
    slots, keys, uniq, k = _hash_feed(values, valid, slots, keys, uniq, 0, out)
    return out, uniq[:k]


class HashCoder:
    """First-occurrence int32 codes of 64-bit hashes fed chunk by chunk (state kept between chunks).

    Lets a caller hash a long column a slice at a time, so no full-length
    hash array is ever held (issue 3: no full-size temporaries).
    """

    def __init__(self, n: int):
        self.codes = _alloc.empty(n, np.int32)
        self.slots, self.keys, self.uniq = _rehash(1024, np.empty(0, np.int64), 0)
        self.k = 0

    def feed(self, lo: int, hashes: np.ndarray, valid: np.ndarray | None) -> None:
        """Code rows ``lo .. lo + len(hashes)`` from their hashes (``valid``: their mask or None);
        the rows must lie in the coder's ``n`` (checked)."""
        h = np.ascontiguousarray(hashes).view(np.int64)
        v = _alloc.optional_mask(valid)
        if not 0 <= lo <= len(self.codes) - len(h):
            raise fail("HashCoder.feed", f"rows {lo}..{lo + len(h)} of {len(self.codes)}")
        check_lengths("HashCoder.feed", len(h), valid=v)
        self.slots, self.keys, self.uniq, self.k = _hash_feed(
            h, v, self.slots, self.keys, self.uniq, self.k, self.codes[lo:lo + len(h)])

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(codes, first row of each code)."""
        return self.codes, _first_rows(self.codes, self.k)


@njit(**NUMBA_FLAGS)
def _remap(codes, rank):
    """``codes[i] = rank[codes[i]]`` in place (-1 kept)."""
    for i in range(len(codes)):
        c = codes[i]
        codes[i] = rank[c] if c >= 0 else -1


def dense_codes(values: np.ndarray, valid: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Dense int64 codes 0..k-1 of integer ``values`` in value order; -1 where ``valid`` is False.

    The value range decides the method: up to ``max(4 n, 2**16)`` a direct
    table (two passes, no hashing), beyond that a hash table over the values
    and a sort of the k distinct values.
    """
    values = np.ascontiguousarray(values, dtype=np.int64)
    n = len(values)
    v = _alloc.optional_mask(valid)
    if n == 0:
        return np.zeros(0, np.int64), 0
    if valid is None:
        lo, hi = int(values.min()), int(values.max())
    else:
        if not valid.any():
            return np.full(n, -1, np.int64), 0
        picked = values[valid]
        lo, hi = int(picked.min()), int(picked.max())
    if hi - lo <= max(4 * n, 1 << 16):
        out = _alloc.empty(n, np.int64)
        k = _range_codes(values, v, np.int64(lo), np.zeros(hi - lo + 1, np.int64), out)
        return out, int(k)
    codes, uniq = _hash_codes(values, v, _alloc.empty(n, np.int64))
    order = np.argsort(uniq, kind="stable")
    rank = np.empty(len(uniq), np.int64)
    rank[order] = np.arange(len(uniq), dtype=np.int64)
    _remap(codes, rank)
    return codes, len(uniq)


# --- strings --------------------------------------------------------------------------------


@njit(**NUMBA_FLAGS)
def _fnv(data, a, b):
    h = np.uint64(0xCBF29CE484222325)
    for q in range(a, b):
        h = (h ^ np.uint64(data[q])) * np.uint64(0x100000001B3)
    return h


@njit(**NUMBA_FLAGS)
def _same(data, a0, b0, a1, b1):
    if b0 - a0 != b1 - a1:
        return False
    for q in range(b0 - a0):
        if data[a0 + q] != data[a1 + q]:
            return False
    return True


@njit(**NUMBA_FLAGS)
def _string_fill(offsets, data, valid, i, slots, hashes, first, k, out):
    n = len(offsets) - 1
    mask = np.uint64(len(slots) - 1)
    limit = min(len(slots) // 2, len(first))
    while i < n:
        if valid is not None and not valid[i]:
            out[i] = -1
            i += 1
            continue
        a, b = offsets[i], offsets[i + 1]
        h = _fnv(data, a, b)
        j = h & mask
        while True:
            c = slots[j]
            if c < 0:
                if k >= limit:
                    return i, k
                slots[j] = k
                hashes[j] = h
                first[k] = i
                out[i] = k
                k += 1
                break
            if hashes[j] == h:
                f = first[c]
                if _same(data, a, b, offsets[f], offsets[f + 1]):
                    out[i] = c
                    break
            j = (j + np.uint64(1)) & mask
        i += 1
    return i, k


@njit(**NUMBA_FLAGS)
def _string_codes(offsets, data, valid, out):
    n = len(offsets) - 1
    cap = 1024
    slots = np.full(cap, -1, np.int64)
    hashes = np.empty(cap, np.uint64)
    first = np.empty(cap // 2, np.int64)
    i, k = _string_fill(offsets, data, valid, 0, slots, hashes, first, 0, out)
    while i < n:
        cap *= 2
        slots = np.full(cap, -1, np.int64)
        hashes = np.empty(cap, np.uint64)
        f2 = np.empty(cap // 2, np.int64)
        for q in range(k):  # not f2[:k] = first[:k]: Numba compiles a slice's shape-mismatch message
            f2[q] = first[q]
        first = f2
        mask = np.uint64(cap - 1)
        for q in range(k):
            f = first[q]
            h = _fnv(data, offsets[f], offsets[f + 1])
            j = h & mask
            while slots[j] >= 0:
                j = (j + np.uint64(1)) & mask
            slots[j] = q
            hashes[j] = h
        i, k = _string_fill(offsets, data, valid, i, slots, hashes, first, k, out)
    return out, first[:k]


def string_codes(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None):
    """(int32 codes in first-occurrence order, -1 where invalid; first row of each code).

    ``offsets`` (n + 1, int64) and ``data`` (uint8) are an Arrow large_string
    array's buffers (offset already applied); equal byte strings get equal codes.
    Invariant: ``offsets`` ascend inside ``data`` (Arrow's own; checked here,
    one pass: this path serves only columns of long strings).
    """
    v = _alloc.optional_mask(valid)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    check_offsets("string_codes", "offsets", offsets, len(data))
    check_lengths("string_codes", len(offsets) - 1, valid=v)
    return _string_codes(offsets, data, v, _alloc.empty(len(offsets) - 1, np.int32))


@njit(**NUMBA_FLAGS)
def _rank_inplace(codes, rank):
    # False at the first code past ``rank`` (codes before it are already replaced)
    k = len(rank)
    for i in range(len(codes)):
        c = codes[i]
        if c >= k:
            return False
        if c >= 0:
            codes[i] = rank[c]
    return True


def rank_inplace(codes: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``codes[i] = rank[codes[i]]`` in place (-1 kept): first-occurrence codes -> sorted-dictionary codes.

    Invariant: ``codes < len(rank)``, checked as they are read (KernelInputError).
    """
    if not _rank_inplace(codes, np.ascontiguousarray(rank, dtype=codes.dtype)):
        raise fail("rank_inplace", f"a code is not below the {len(rank)} ranks")
    return codes


@njit(**NUMBA_FLAGS)
def _first_rows(codes, k):
    # None at the first code past k
    first = np.full(k, -1, np.int64)
    found = 0
    for i in range(len(codes)):
        c = codes[i]
        if c >= k:
            return None
        if c >= 0 and first[c] < 0:
            first[c] = i
            found += 1
            if found == k:
                break
    return first


def first_rows(codes: np.ndarray, k: int) -> np.ndarray:
    """The first index of each code 0..k-1 (every code must occur).

    Invariant: ``codes < k``, checked as they are read (KernelInputError).
    """
    first = _first_rows(np.ascontiguousarray(codes), int(k))
    if first is None:
        raise fail("first_rows", f"a code is not below k = {k}")
    return first


def hashed_codes(hashes: np.ndarray, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(int32 codes in first-occurrence order of the hash values, -1 where invalid; first row per code).

    Equal values must have equal hashes; different values *may* share one (the
    caller checks every row against its code's first row, see
    :func:`jitcep.events.coding._hash_string_codes`).  One chunk of :class:`HashCoder`.
    """
    coder = HashCoder(len(hashes))
    coder.feed(0, hashes, valid)
    return coder.result()


# --- fused build passes (issue 3: the build, not the join, dominated at 10^7 events) ----------


@njit(**NUMBA_FLAGS)
def _range_group(values, valid, lo, null_group, cnt, code, key_code, order):
    """Dense codes in value order and the stable counting sort by them, in two passes over n.

    Pass one counts every value of [lo, lo + span] (slot span + 1: the invalid
    rows, when ``null_group`` makes them a group of their own, after the others);
    the counts give each present value its code and its group's start; pass two
    writes the codes and scatters the row numbers.  ``cnt`` (zeroed) and ``code``
    are tables over the value range; ``key_code`` and ``order`` (empty: no
    scatter) are filled; returns the offsets, or None at the first value outside
    [lo, lo + span] (the caller's ``bounds`` were wrong) before anything is written.
    """
    n = len(values)
    span = len(cnt) - 2
    with_order = len(order) > 0
    for i in range(n):
        if valid is None or valid[i]:
            v = np.int64(values[i]) - lo
            if v < 0 or v > span:
                return None
            cnt[v] += 1
        elif null_group:
            cnt[span + 1] += 1
    k = 0
    for v in range(span + 2):
        if cnt[v]:
            k += 1
    offsets = np.empty(k + 1, np.int64)
    g = 0
    pos = 0
    for v in range(span + 2):
        c = cnt[v]
        if c:
            offsets[g] = pos
            code[v] = g
            cnt[v] = pos  # from here on: the next slot of value v in ``order``
            pos += c
            g += 1
    offsets[k] = pos
    for i in range(n):
        if valid is None or valid[i]:
            v = np.int64(values[i]) - lo
        elif null_group:
            v = span + 1
        else:
            key_code[i] = -1
            continue
        key_code[i] = code[v]
        if with_order:
            order[cnt[v]] = i
            cnt[v] += 1
    return offsets


def value_range(values: np.ndarray, valid: np.ndarray | None = None, threads: int = 1) -> tuple[int, int] | None:
    """(min, max) of integer ``values`` over the valid rows, in one pass; None when no row is valid.
    ``threads``: the rows are cut into up to that many equal ranges scanned side by side
    (:func:`jitcep.threads.even_ranges`), their bounds combined."""
    if not len(values):
        return None
    values, v = np.ascontiguousarray(values), _alloc.optional_mask(valid)
    check_lengths("value_range", len(values), valid=v)
    got = [(int(lo), int(hi)) for lo, hi, found in run_ranges(  # ranges of at least one row each
        lambda i0, i1: min_max(values[i0:i1], None if v is None else v[i0:i1]), even_ranges(len(values), threads))
           if found]
    return (min(lo for lo, _ in got), max(hi for _, hi in got)) if got else None


def range_group(values: np.ndarray, valid: np.ndarray | None = None, *, null_group: bool = False,
                bounds: tuple[int, int] | None = None, with_order: bool = True):
    """(key_code int64, order int64, offsets int64) of integer ``values``, or None when the range is wide.

    ``key_code`` are the dense codes of :func:`dense_codes` (-1 where invalid;
    with ``null_group`` invalid rows get code k instead, one group after the
    others); ``order`` lists the rows grouped by code, each group in row order,
    and group g is ``order[offsets[g]:offsets[g + 1]]`` — :func:`dense_codes`
    plus a counting sort in two passes instead of four, with no int64 copy of
    narrower inputs.  ``bounds`` (lo, hi) skips the min/max pass when known
    (dictionary codes: 0, k - 1).  Without ``with_order`` the scatter is
    skipped and ``order`` is empty (one full-length array less to allocate and
    fill; :func:`jitcep.kernels.grouping.counting_sort` of the codes gives it
    later).  None when hi - lo exceeds ``max(4 n, 2**16)``: the caller then hashes.
    Invariant: with ``bounds``, every valid value lies in them, checked by the
    counting pass (KernelInputError).
    """
    n = len(values)
    v = _alloc.optional_mask(valid)
    values = np.ascontiguousarray(values)
    if bounds is None:
        if n == 0:
            lo = hi = 0
        else:
            lo, hi, found = min_max(values, v)
            lo, hi = (int(lo), int(hi)) if found else (0, 0)
    else:
        lo, hi = bounds
    if hi - lo > max(4 * n, 1 << 16):
        return None
    # NumPy allocates every table and output (Numba's allocator does not advise huge pages: issue 3);
    # ``order`` has one slot per valid row (plus the invalid ones when they form a group)
    key_code = _alloc.empty(n, np.int64)
    n_grouped = n if valid is None or null_group else int(np.count_nonzero(valid))
    order = _alloc.empty(n_grouped if with_order else 0, np.int64)
    check_lengths("range_group", n, valid=v)
    offsets = _range_group(values, v, np.int64(lo), bool(null_group), np.zeros(hi - lo + 2, np.int64),
                           np.empty(hi - lo + 2, np.int64), key_code, order)
    if offsets is None:
        raise fail("range_group", f"a value lies outside the bounds [{lo}, {hi}]")
    return key_code, order, offsets


@njit(**NUMBA_FLAGS)
def _present(values, valid, size):
    # None at the first valid value outside [0, size)
    seen = np.zeros(size, np.bool_)
    for i in range(len(values)):
        if valid is None or valid[i]:
            x = values[i]
            if x < 0 or x >= size:
                return None
            seen[x] = True
    return seen


def present_codes(values: np.ndarray, valid: np.ndarray | None, size: int) -> np.ndarray:
    """The distinct values of non-negative integer ``values`` (< ``size``) among valid rows, ascending.

    Invariant: valid values lie in [0, size), checked as they are read (KernelInputError).
    """
    v = _alloc.optional_mask(valid)
    check_lengths("present_codes", len(values), valid=v)
    seen = _present(np.ascontiguousarray(values), v, int(size))
    if seen is None:
        raise fail("present_codes", f"a value lies outside [0, {size})")
    return np.flatnonzero(seen)


@njit(**NUMBA_FLAGS)
def _apply_table(values, valid, table, out):
    # ``valid`` None (no nulls) compiles a specialisation without the mask test; False at the
    # first valid value outside the table
    k = len(table)
    for i in range(len(values)):
        if valid is None or valid[i]:
            x = np.int64(values[i])
            if x < 0 or x >= k:
                return False
            out[i] = table[x]
        else:
            out[i] = -1
    return True


def apply_table(values: np.ndarray, valid: np.ndarray | None, table: np.ndarray) -> np.ndarray:
    """int32 ``table[values[i]]`` (-1 where invalid): physical category codes -> dictionary ranks.

    Invariant: valid values index ``table``, checked as they are read (KernelInputError).
    """
    out = _alloc.empty(len(values), np.int32)
    v = _alloc.optional_mask(valid)
    check_lengths("apply_table", len(values), valid=v)
    if not _apply_table(np.ascontiguousarray(values), v, np.ascontiguousarray(table, dtype=np.int32), out):
        raise fail("apply_table", f"a value lies outside the table of {len(table)}")
    return out


# Bits of the inline bytes to keep, by string length 0..12 (little-endian views: the length in the low
# word, then the bytes); bytes past the length are not guaranteed zero.  A table lookup instead of
# branches on the length, which mispredict when lengths vary ("S7", "S42", "S123").
_VIEW_MASK_A = np.array([(1 << (32 + 8 * ln)) - 1 if ln < 4 else (1 << 64) - 1 for ln in range(13)],
                        np.uint64)
_VIEW_MASK_B = np.array([0 if ln < 4 else (1 << (8 * (ln - 4))) - 1 for ln in range(13)], np.uint64)
# Set in every stored first word (a length <= 12 never has it): an all-zero row is an empty slot.
_VIEW_USED = np.uint64(1 << 63 | 1 << 31)
_VIEW_ROW = 4  # table row: masked first word | _VIEW_USED, masked second word (a long string: its start), code,
# and (a long string's table only) its hash


@njit(**NUMBA_FLAGS)
def view_slot(a, b, shift):
    # multiplicative (Fibonacci) hashing: the top bits of one product mix every input bit below
    # them, at a fraction of a full finaliser's cost.  One product, of a + 2b: scrambling b by a
    # product of its own first made the coding pass 1.13x as long (1.15 against 1.01 ms at 10^6
    # 3-byte types), and a sum that collides only makes a probe longer (rows are compared whole)
    return ((a + (b << np.uint64(1))) * np.uint64(0x9E3779B97F4A7C15)) >> shift


@njit(**NUMBA_FLAGS)
def _view_key(a, b, mask_a, mask_b):
    """(first word, second word, inline): a view's words as a table stores them -- the bytes past the
    length masked off (:data:`_VIEW_MASK_A` / :data:`_VIEW_MASK_B`), :data:`_VIEW_USED` set in the first --
    and whether the string is inline (at most 12 bytes; a longer one's view is not the string)."""
    ln = a & np.uint64(0xFFFFFFFF)
    if ln > 12:
        return a, b, False
    return (a & mask_a[ln]) | _VIEW_USED, b & mask_b[ln], True


@njit(**NUMBA_FLAGS)
def _view_fill(w, valid, base, tab, shift, mask_a, mask_b, first, k, out):
    """Code short strings by their 16-byte Arrow views (length + inline bytes, masked past the length).

    ``tab`` holds rows of :data:`_VIEW_ROW` words (one cache line serves a
    probe); returns (next row, k, ok); ok is False at the first string longer
    than 12 bytes (its bytes live in a data buffer: the caller takes the hash
    path), and the row is < n when the table is a quarter full (the caller grows it).
    ``valid`` None (no nulls) compiles a specialisation without the mask test.
    """
    n = len(w) // 2
    slots = len(tab) // _VIEW_ROW
    mask = np.uint64(slots - 1)
    limit = min(slots // 4, len(first))  # at most a quarter full: short probe chains
    for i in range(n):
        if valid is not None and not valid[i]:
            out[i] = -1
            continue
        a = np.uint64(w[2 * i])
        b = np.uint64(w[2 * i + 1])
        # Fast path: the view as it is, in its home slot.  Writers zero the bytes past a short
        # string's length (Arrow does not promise it), so a string met before is found here, with
        # no length test or masking (a third fewer instructions per value).  Exact: a stored row is
        # a short string's masked view, equal to this unmasked one only when the lengths, the bytes
        # and the zero padding all agree; a long string's length never matches a stored one.
        au = a | _VIEW_USED
        q = _VIEW_ROW * view_slot(au, b, shift)
        if ((tab[q] ^ au) | (tab[q + 1] ^ b)) == 0:  # both words equal: one test
            out[i] = np.int64(tab[q + 2])
            continue
        a, b, inline = _view_key(a, b, mask_a, mask_b)
        if not inline:
            return i, k, False
        j = view_slot(a, b, shift)
        while True:
            q = _VIEW_ROW * j
            if tab[q] == a and tab[q + 1] == b:  # the common case first
                out[i] = np.int64(tab[q + 2])
                break
            if tab[q] == 0:
                if k >= limit:
                    return i, k, True
                tab[q] = a
                tab[q + 1] = b
                tab[q + 2] = k
                first[k] = base + i
                out[i] = k
                k += 1
                break
            j = (j + np.uint64(1)) & mask
    return n, k, True


@njit(**NUMBA_FLAGS)
def _view_rehash(tab, shift, hashed):
    """The rows of ``tab`` in a table twice as large (and its shift); a row's slot hashes its first word and
    word ``hashed`` (1, the second word of an inline view; 3, a long string's hash: :func:`_long_view_fill`)."""
    new = np.zeros(2 * len(tab), np.uint64)
    shift -= np.uint64(1)
    mask = np.uint64(len(new) // _VIEW_ROW - 1)
    for q0 in range(0, len(tab), _VIEW_ROW):
        if tab[q0] != 0:
            j = view_slot(tab[q0], tab[q0 + hashed], shift)
            while new[_VIEW_ROW * j] != 0:
                j = (j + np.uint64(1)) & mask
            for c in range(_VIEW_ROW):  # not a slice assignment: Numba compiles its shape-mismatch message
                new[_VIEW_ROW * j + c] = tab[q0 + c]
    return new, shift


@njit(**NUMBA_FLAGS)
def _view_relabel(tab, rank):
    """Give every stored string its new code ``rank[code]``."""
    for q in range(0, len(tab), _VIEW_ROW):
        if tab[q] != 0:
            tab[q + 2] = rank[tab[q + 2]]


class _ViewCoder:
    """One growing hash table of short strings' views: codes in first-occurrence order across calls."""

    def __init__(self):
        bits = 12
        self.tab = np.zeros(_VIEW_ROW << bits, np.uint64)
        self.shift = np.uint64(64 - bits)
        self.first = np.empty(len(self.tab) // _VIEW_ROW // 4, np.int64)  # k stays under a quarter of the slots
        self.k = 0

    def fill(self, w, valid, out, base: int) -> bool:
        """Code the views ``w`` into ``out`` (:func:`_view_fill`, row i is ``base + i`` in ``first``);
        False at a string longer than 12 bytes.  ``w`` holds two words per row of ``out`` (checked)."""
        if len(w) != 2 * len(out):
            raise fail("view_codes", f"{len(w)} view words for {len(out)} rows")
        check_lengths("view_codes", len(out), valid=valid)
        done = 0
        while done < len(out):
            i, self.k, ok = _view_fill(w[2 * done:], None if valid is None else valid[done:], base + done,
                                       self.tab, self.shift, _VIEW_MASK_A, _VIEW_MASK_B, self.first, self.k,
                                       out[done:])
            if not ok:
                return False
            done += i
            if done < len(out):  # a quarter full: twice the slots
                self.tab, self.shift = _view_rehash(self.tab, self.shift, np.int64(1))
                self.first = np.concatenate([self.first[:self.k], np.empty(2 * len(self.first) - self.k, np.int64)])
        return True

    def relabel(self, rank: np.ndarray) -> None:
        """Code ``c`` becomes ``rank[c]`` for the strings stored so far (the caller recodes its output);
        ``rank`` has one entry per code (checked)."""
        check_lengths("view_codes", self.k, rank=rank)
        _view_relabel(self.tab, rank)
        self.first[rank] = self.first[:self.k].copy()


@njit(**NUMBA_FLAGS)
def _word(data, q):
    # the eight bytes at q as one little-endian word; q unsigned, so that no load tests for a negative
    # index and LLVM makes the eight loads one (hash and compare 2-3.4x faster than byte by byte)
    return (np.uint64(data[q]) | np.uint64(data[q + np.uint64(1)]) << np.uint64(8)
            | np.uint64(data[q + np.uint64(2)]) << np.uint64(16) | np.uint64(data[q + np.uint64(3)]) << np.uint64(24)
            | np.uint64(data[q + np.uint64(4)]) << np.uint64(32) | np.uint64(data[q + np.uint64(5)]) << np.uint64(40)
            | np.uint64(data[q + np.uint64(6)]) << np.uint64(48) | np.uint64(data[q + np.uint64(7)]) << np.uint64(56))


@njit(**NUMBA_FLAGS)
def _bytes_hash(data, p, ln):
    # a word a round: a 13-byte string takes two products where a byte-serial hash (_fnv) chains thirteen
    h = np.uint64(ln) * np.uint64(0x9E3779B97F4A7C15)
    q, end = np.uint64(p), np.uint64(p + ln)
    while q + np.uint64(8) <= end:
        h = (h ^ _word(data, q)) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        q += np.uint64(8)
    x = np.uint64(0)
    sh = np.uint64(0)
    while q < end:
        x |= np.uint64(data[q]) << sh
        sh += np.uint64(8)
        q += np.uint64(1)
    h = (h ^ x) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(29))


@njit(**NUMBA_FLAGS)
def _same_bytes(data, p, r, ln):
    # data[p:p + ln] == data[r:r + ln], a word at a time
    p, r, ln = np.uint64(p), np.uint64(r), np.uint64(ln)
    t = np.uint64(0)
    while t + np.uint64(8) <= ln:
        if _word(data, p + t) != _word(data, r + t):
            return False
        t += np.uint64(8)
    while t < ln:
        if data[p + t] != data[r + t]:
            return False
        t += np.uint64(1)
    return True


@njit(**NUMBA_FLAGS)
def _long_view_fill(w, data, starts, ends, valid, base, tab, shift, mask_a, mask_b, first, k, out):
    """Code strings of any length by their 16-byte Arrow views: a short one (at most 12 bytes) by its
    masked view as :func:`_view_fill` stores it; a longer one by its first word (length and 4-byte
    prefix) and its bytes, read in the data buffers (``data``; buffer j of this chunk is
    ``data[starts[j]:ends[j]]``), compared with the bytes of its code's first string.

    Table rows of :data:`_VIEW_ROW` words: first word, second word (a short string's masked bytes, a long
    one's first string's start in ``data``), code, and the word the slot is hashed from with the first
    (the second word, or the long string's :func:`_bytes_hash`).  A short row's first word has
    :data:`_VIEW_USED` set, a long one's never (its length is below 2^31): the two never compare equal.
    Returns (next row, k, ok): ok False at a view naming bytes outside its buffer (row < n: that row);
    the row is < n with ok when the table is a quarter full (the caller grows it).

    Its probe loop is :func:`_view_fill`'s written again, not called: Numba counts references to a probe
    function's array arguments on every row, which made long strings 2.5-3x slower (perf/notes/fixed_costs.md,
    "Per stage again; the glue is cold, and the cuts tried do not pay")."""
    n = len(w) // 2
    slots = len(tab) // _VIEW_ROW
    mask = np.uint64(slots - 1)
    limit = min(slots // 4, len(first))
    for i in range(n):
        if valid is not None and not valid[i]:
            out[i] = -1
            continue
        a = np.uint64(w[2 * i])
        b = np.uint64(w[2 * i + 1])
        ln = np.int64(a & np.uint64(0xFFFFFFFF))
        p = np.int64(-1)  # a long string's start in data
        if ln <= 12:
            a, b, _ = _view_key(a, b, mask_a, mask_b)
            h = b
        else:
            j = np.int64(b & np.uint64(0xFFFFFFFF))
            off = np.int64(b >> np.uint64(32))
            if j >= len(starts) or off + ln > ends[j] - starts[j]:
                return i, k, False
            p = starts[j] + off
            h = _bytes_hash(data, p, ln)
        s = view_slot(a, h, shift)
        while True:
            q = _VIEW_ROW * s
            if tab[q] == a and (tab[q + 1] == b if p < 0 else
                                tab[q + 3] == h and _same_bytes(data, p, tab[q + 1], ln)):
                out[i] = np.int64(tab[q + 2])
                break
            if tab[q] == 0:
                if k >= limit:
                    return i, k, True
                tab[q] = a
                tab[q + 1] = b if p < 0 else np.uint64(p)
                tab[q + 2] = k
                tab[q + 3] = h
                first[k] = base + i
                out[i] = k
                k += 1
                break
            s = (s + np.uint64(1)) & mask
    return n, k, True


def long_view_codes(chunks, data: np.ndarray, valid: np.ndarray | None, n: int, max_codes: int | None = None):
    """(int32 codes in first-occurrence order, -1 where invalid; first row of each code) of a string
    column of any lengths given as Arrow string-view chunks ``(views as uint64 pairs, offset, length,
    starts, ends)``: a chunk's data buffer j is ``data[starts[j]:ends[j]]`` (uint8).  Exact: a short
    string compared as its view, a long one by its bytes (:func:`_long_view_fill`).

    With ``max_codes``: None as soon as the table would grow past holding that many strings (rounded up
    to the next power of two, at least 256): a table of many strings waits on memory at every row, where
    hashing them all first does not (the caller's other path).

    For a column with a string past 12 bytes, which :func:`view_codes` declines: no copy of the
    strings into one large-string buffer (:func:`string_codes`' input), and the short ones coded by
    their views.  Invariant: every long view's bytes lie inside its buffer (Arrow's own; checked as
    they are read, KernelInputError)."""
    codes = _alloc.empty(n, np.int32)
    bits = 10
    tab = np.zeros(_VIEW_ROW << bits, np.uint64)
    shift = np.uint64(64 - bits)
    first = np.empty(len(tab) // _VIEW_ROW // 4, np.int64)
    k = lo = 0
    for words, off, length, starts, ends in chunks:
        w = words[2 * off:2 * (off + length)]
        if len(w) != 2 * length or lo + length > n:
            raise fail("long_view_codes", f"{len(w)} view words for {length} rows at row {lo} of {n}")
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        check_lengths("long_view_codes", len(starts), ends=ends)
        if len(starts) and (starts.min() < 0 or ends.max() > len(data) or (ends < starts).any()):
            raise fail("long_view_codes", f"a data buffer lies outside the {len(data)} bytes")
        v = _alloc.optional_mask(None if valid is None else valid[lo:lo + length])
        check_lengths("long_view_codes", length, valid=v)
        done = 0
        while done < length:
            i, k, ok = _long_view_fill(w[2 * done:], data, starts, ends, None if v is None else v[done:],
                                       lo + done, tab, shift, _VIEW_MASK_A, _VIEW_MASK_B, first, k,
                                       codes[lo + done:lo + length])
            if not ok:
                raise fail("long_view_codes", f"the string at row {lo + done + i} lies outside its data buffer")
            done += i
            if done < length:  # a quarter full: twice the slots
                if max_codes is not None and k >= max_codes:
                    return None
                tab, shift = _view_rehash(tab, shift, np.int64(3))
                first = np.concatenate([first[:k], np.empty(2 * len(first) - k, np.int64)])
        lo += length
    if lo != n:
        raise fail("long_view_codes", f"{lo} view rows for {n} rows")
    return codes, first[:k].copy()


def view_codes(chunks, valid: np.ndarray | None, n: int, order=None):
    """(int32 codes, first row of each code) of a string column given as Arrow string-view chunks
    ``(views uint8 buffer as uint64 pairs, offset, length)``; None as soon as one string is longer
    than 12 bytes.  Exact: short strings are compared as their whole 16-byte view.

    Codes are given in first-occurrence order.  With ``order`` (first rows of
    the codes so far -> each code's rank among their strings), the strings
    met in the first :data:`jitcep.config.VIEW_RELABEL_AT` rows are recoded in sorted order
    there and later rows get those codes directly: when no new string comes
    later (the common case) the codes are already the sorted-dictionary
    codes and the caller's remapping pass over all n codes is not needed.
    """
    codes = _alloc.empty(n, np.int32)
    coder = _ViewCoder()
    lo = 0
    relabel_at = min(n, config.VIEW_RELABEL_AT) if order is not None else -1
    for words, off, length in chunks:
        w = words[2 * off:2 * (off + length)]
        v = _alloc.optional_mask(None if valid is None else valid[lo:lo + length])
        out = codes[lo:lo + length]
        cut = relabel_at - lo if lo < relabel_at < lo + length else length
        for a, b in ((0, cut), (cut, length)) if cut < length else ((0, length),):
            if not coder.fill(w[2 * a:2 * b], None if v is None else v[a:b], out[a:b], lo + a):
                return None
            if lo + b == relabel_at and coder.k <= config.VIEW_RELABEL_MAX:
                rank = np.ascontiguousarray(order(coder.first[:coder.k]), dtype=np.int64)
                coder.relabel(rank)
                rank_inplace(codes[:relabel_at], rank.astype(np.int32))
        lo += length
    return codes, coder.first[:coder.k].copy()


@njit(**NUMBA_FLAGS)
def _gather_views(w, at, out):
    # False at the first row past the views
    rows = len(w) // 2
    for i in range(len(at)):
        a = at[i]
        if a < 0 or a >= rows:
            return False
        out[2 * i] = w[2 * a]
        out[2 * i + 1] = w[2 * a + 1]
    return True


def view_codes_at(words: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(int32 codes, k): codes of the strings at view rows ``at`` (``words``: the views as uint64
    pairs), numbered 0..k-1 in first-occurrence order over ``at``; None as soon as one is longer than
    12 bytes.  Equal strings, equal codes: for grouping a part of a column without coding the rest.

    The views are gathered a chunk at a time and coded from there: coding them
    in place, at scattered rows, waited on memory 3x as long (10^6 of 10^7 rows).
    Invariant: ``at`` holds view rows, checked as the gather reads them.
    """
    at = np.asarray(at, dtype=np.int64)  # may be strided (a column of records)
    out = _alloc.empty(len(at), np.int32)
    chunk = config.VIEW_GATHER_CHUNK
    buf = np.empty(2 * chunk, np.uint64)
    coder = _ViewCoder()
    for lo in range(0, len(at), chunk):
        part = at[lo:lo + chunk]
        if not _gather_views(words, part, buf):
            raise fail("view_codes_at", f"a row lies outside the {len(words) // 2} views")
        if not coder.fill(buf[:2 * len(part)], None, out[lo:lo + len(part)], lo):
            return None
    return out, coder.k


@njit(**NUMBA_FLAGS)
def sized_view_codes(words, perm, valid, at, mask_a, mask_b):
    """(codes, k, state): a code per position of ``at`` equal for equal strings, 0..k-1 in first-occurrence
    order (-1 where ``valid``, by position, is False; empty: no nulls), from the strings' 16-byte Arrow
    views ``words`` (input order; ``perm``: the input row of each position, empty: the same), as
    :func:`view_codes_at` codes them (:func:`_view_key`, :func:`view_slot`), for the planner's sample
    (:func:`jitcep.kernels.sampling.sample_with_views`); state 1 at a position or row past its array, 2 at a
    string longer than 12 bytes (not inline: not coded here).

    Its own table, sized once for the positions (at most half full, no fast path): :class:`_ViewCoder`'s
    rows of four words kept a quarter full would be four times the memory to clear for ~12,000 strings,
    and a table grown inside the loop (its arrays reassigned there) made every lookup 4-5x as slow,
    growing or not."""
    m = len(at)
    rows = len(words) // 2
    permuted, nullable = len(perm) > 0, len(valid) > 0  # empty: none (one compiled signature, not four)
    out = np.empty(m, np.int64)
    # the rows, then their views, gathered in loops of loads alone: at scattered rows of an unsorted
    # input each is a miss, and a loop that also hashes keeps few in flight
    row = np.empty(m, np.int64)
    for i in range(m):
        p = at[i]
        if not 0 <= p < (len(perm) if permuted else rows) or nullable and not p < len(valid):
            return out, 0, 1
        row[i] = perm[p] if permuted else p
    for i in range(m):
        if not 0 <= row[i] < rows:
            return out, 0, 1
    first = np.empty(m, np.uint64)
    second_of = np.empty(m, np.uint64)
    for i in range(m):
        first[i] = words[2 * row[i]]
        second_of[i] = words[2 * row[i] + 1]
    bits = 1
    while (1 << bits) < 2 * m:
        bits += 1
    size = 1 << bits
    shift = np.uint64(64 - bits)
    used = np.zeros(size, np.uint64)  # a stored view's first word (_view_key: never 0; 0 is an empty slot)
    second = np.empty(size, np.uint64)
    code = np.empty(size, np.int64)
    k = 0
    for i in range(m):
        if nullable and not valid[at[i]]:
            out[i] = -1
            continue
        a, b, inline = _view_key(first[i], second_of[i], mask_a, mask_b)
        if not inline:
            return out, k, 2
        j = np.int64(view_slot(a, b, shift))
        while used[j] != 0 and (used[j] != a or second[j] != b):
            j = (j + 1) & (size - 1)
        if used[j] == 0:
            used[j], second[j], code[j] = a, b, k
            k += 1
        out[i] = code[j]
    return out, k, 0


def wanted_view_keys(names) -> tuple | None:
    """Per name, its 16-byte Arrow view as :func:`run_view_codes` compares rows with it -- (first word,
    second word, mask of the first, mask of the second): the length word and the name's bytes, nothing past
    them -- as a tuple of such 4-tuples of uint64; None when a name is longer than 12 bytes (not inline).
    Masked to the *name's* length, a row's view equals it exactly when the row is the name: the masks keep
    the row's length word, so a row of another length (a long string's too) never matches."""
    keys = []
    for name in names:
        raw = name.encode()
        if len(raw) > 12:
            return None
        view = np.frombuffer(np.uint32(len(raw)).tobytes() + raw + bytes(12 - len(raw)), np.uint64)
        keys.append((view[0], view[1], _VIEW_MASK_A[len(raw)], _VIEW_MASK_B[len(raw)]))
    return tuple(keys)


@njit(**NUMBA_FLAGS)
def _run_view_codes(w, keys, valid, out):
    # One pass over the views: j + 1 summed where row i is name j (at most one is), so every row costs
    # the same few instructions and the loop vectorises; ``keys`` is a tuple, so its length is a
    # compile-time constant and its words stay in registers (a runtime loop over arrays of keys took 1.6x
    # as long).  ``valid`` None compiles a specialisation without the mask (a null's view is not read as
    # a name).
    for i in range(len(out)):
        a = w[2 * i]
        b = w[2 * i + 1]
        r = 0
        for j in range(len(keys)):
            ka, kb, ma, mb = keys[j]
            r += (((a & ma) == ka) & ((b & mb) == kb)) * (j + 1)
        if valid is not None:
            r *= valid[i]
        out[i] = r - 1


def run_view_codes(chunks, keys: tuple, valid: np.ndarray | None, n: int) -> np.ndarray:
    """int8 codes of a string column given as Arrow string-view chunks (as :func:`view_codes` takes them)
    against a few names: ``j`` where the string is the j-th name of ``keys`` (:func:`wanted_view_keys`),
    -1 for any other string and for a null (``valid`` False).  One pass, no table: the codes a run numbers
    its pattern's types with (:class:`~jitcep.execute.tables.TableContext`), without coding every name
    (1.0-1.1 ms at 10^6 rows of 20 names) when the run reads three (0.72-0.74 ms inside a run; into int32
    1.06-1.15: the pass waits on its writes).  ``keys`` holds at most 127 distinct names of at most 12
    bytes; the chunks' rows add up to ``n`` (checked)."""
    if len(keys) > 127:
        raise fail("run_view_codes", f"{len(keys)} names do not fit int8 codes")
    out = _alloc.empty(n, np.int8)
    lo = 0
    for words, off, length in chunks:
        if len(words) < 2 * (off + length) or off < 0 or lo + length > n:
            raise fail("run_view_codes", f"a chunk of {length} views at {off} past its {len(words) // 2} views "
                                         f"or past {n} rows")
        v = _alloc.optional_mask(None if valid is None else valid[lo:lo + length])
        check_lengths("run_view_codes", length, valid=v)
        if keys:
            _run_view_codes(words[2 * off:2 * (off + length)], keys, v, out[lo:lo + length])
        else:
            out[lo:lo + length] = -1
        lo += length
    if lo != n:
        raise fail("run_view_codes", f"{lo} view rows for {n} rows")
    return out
