"""Event-table building kernels (jitcep.kernels.encode) against their naive twins (tests/naive.py)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep import config
from jitcep.errors import KernelInputError
from jitcep.events import coding
from jitcep.kernels import encode as enc

I64 = np.iinfo(np.int64)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40) | st.lists(st.integers(I64.min, I64.max), max_size=40))
def test_is_sorted(xs):
    a = np.array(xs, dtype=np.int64)
    assert enc.is_sorted(a) == (xs == sorted(xs))


@settings(max_examples=60, deadline=None)
@given(st.integers(config.ARGSORT_SMALL, 3 * config.ARGSORT_SMALL), st.sampled_from([3, 5000, 2**40, 2**63]), st.integers(0, 2**31))
def test_stable_argsort_radix_matches_naive(n, span, seed):
    # n >= ARGSORT_SMALL takes the radix path; spans up to 2**63 (past int64 differences) take 1..6 digits
    rng = np.random.default_rng(seed)
    lo = int(rng.integers(I64.min, I64.max - min(span, I64.max) + 1)) if span < 2**63 else I64.min
    keys = (lo + rng.integers(0, min(span, I64.max), n, dtype=np.int64)).astype(np.int64)
    if span == 2**63:
        keys[0], keys[-1] = I64.min, I64.max
    got = enc.stable_argsort(keys)
    assert got.dtype == np.int64
    assert got.tolist() == naive.stable_argsort(keys.tolist())


@settings(max_examples=30, deadline=None)
@given(st.integers(config.ARGSORT_SMALL, 2 * config.ARGSORT_SMALL), st.integers(0, 2**31))
def test_stable_argsort_skips_a_digit_every_key_shares(n, seed):
    # two clusters 2**40 apart with few distinct values: the digits between them are constant
    rng = np.random.default_rng(seed)
    keys = rng.choice(np.array([0, 2**40], dtype=np.int64), n) + rng.integers(0, 5, n)
    assert enc.stable_argsort(keys).tolist() == naive.stable_argsort(keys.tolist())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=30))
def test_stable_argsort_small_matches_naive(xs):
    assert enc.stable_argsort(np.array(xs, dtype=np.int64)).tolist() == naive.stable_argsort(xs)


values_lists = st.one_of(
    st.lists(st.integers(-4, 4), max_size=40),                       # range table
    st.lists(st.sampled_from([I64.min, -7, 0, 2**40, I64.max]), max_size=40),  # hash table
    st.lists(st.integers(I64.min, I64.max), max_size=40))


@settings(max_examples=300, deadline=None)
@given(values_lists, st.data())
def test_dense_codes_matches_naive(xs, data):
    valid = None
    if data.draw(st.booleans()):
        valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(xs), max_size=len(xs))), dtype=np.bool_)
    codes, k = enc.dense_codes(np.array(xs, dtype=np.int64), valid)
    assert codes.dtype == np.int64
    assert (codes.tolist(), k) == naive.dense_codes(xs, valid)


def test_dense_codes_hash_table_grows():
    rng = np.random.default_rng(1)
    xs = rng.integers(I64.min, I64.max, 5000, dtype=np.int64)
    xs = np.concatenate([xs, xs[::-1]])  # every value twice
    codes, k = enc.dense_codes(xs)
    assert (codes.tolist(), k) == naive.dense_codes(xs.tolist())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=4), st.sampled_from(["", "a", "ab", "é", "\x00"])),
                max_size=40))
def test_string_codes_match_naive(xs):
    s = pl.Series(xs, dtype=pl.String)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    offsets, data = coding._string_buffers(s)
    codes, first = enc.string_codes(offsets, data, valid)
    exp_codes, exp_first = naive.first_occurrence_codes(xs, valid)
    assert codes.dtype == np.int32 and codes.tolist() == exp_codes and first.tolist() == exp_first
    hcodes, hfirst = enc.hashed_codes(s.hash().to_numpy(), valid)
    assert hcodes.tolist() == exp_codes and hfirst.tolist() == exp_first


def test_string_table_grows_with_many_distinct_values():
    xs = [f"v{i % 3000}" for i in range(9000)]
    s = pl.Series(xs)
    offsets, data = coding._string_buffers(s)
    codes, first = enc.string_codes(offsets, data, None)
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs)


def test_hash_collisions_fall_back_to_exact_codes(monkeypatch):
    # every string hashed to 0: the table merges them, the row check sees it, the exact kernel recodes
    real = enc.HashCoder.feed
    monkeypatch.setattr(enc.HashCoder, "feed", lambda self, lo, h, valid: real(self, lo, np.zeros_like(h), valid))
    xs = ["b", "a", None, "b", "c", "a"]
    codes, names, valid = coding._dict_encode(pl.Series(xs))
    assert names == ("a", "b", "c")
    assert codes.tolist() == [1, 0, -1, 1, 2, 0]
    assert valid.tolist() == [x is not None for x in xs]


@pytest.mark.parametrize("dtype", [pl.String, pl.Categorical, pl.Int64, pl.UInt64])
def test_dict_encode_sorted_dictionary(dtype):
    raw = ["10", "9", None, "10", "0", "9"]
    s = pl.Series(raw).cast(dtype)
    codes, names, valid = coding._dict_encode(s)
    exp = sorted({x for x in raw if x is not None})
    assert names == tuple(exp)
    assert [names[c] if c >= 0 else None for c in codes.tolist()] == raw


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-2, 2), max_size=30), st.integers(0, 5))
def test_rank_inplace_and_first_rows(xs, extra):
    codes, k = naive.dense_codes(xs)
    first = enc.first_rows(np.array(codes, dtype=np.int64), k)
    assert first.tolist() == [codes.index(c) for c in range(k)]
    rank = np.arange(k)[::-1].copy()
    got = enc.rank_inplace(np.array(codes + [-1] * extra, dtype=np.int32), rank)
    assert got.tolist() == [k - 1 - c for c in codes] + [-1] * extra


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 2000)), max_size=60), st.integers(1, 7))
def test_hash_coder_fed_in_chunks_matches_naive(xs, chunk):
    # many distinct values in small chunks: the table grows between and inside chunks
    valid = np.array([x is not None for x in xs], dtype=np.bool_)
    h = np.array([0 if x is None else x * 0x9E3779B97F4A7C15 % 2**64 for x in xs], dtype=np.uint64)
    coder = enc.HashCoder(len(xs))
    for lo in range(0, len(xs), chunk):
        coder.feed(lo, h[lo:lo + chunk], valid[lo:lo + chunk])
    codes, first = coder.result()
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs, valid)


def test_dict_encode_long_column_crosses_hash_chunks(monkeypatch):
    monkeypatch.setattr(config, "STRING_VERIFY_CHUNK", 7)
    xs = [None if i % 11 == 0 else f"s{(i * 7) % 40}" for i in range(300)]
    codes, names, _ = coding._dict_encode(pl.Series(xs, dtype=pl.String))
    assert names == tuple(sorted({x for x in xs if x is not None}))
    assert [names[c] if c >= 0 else None for c in codes.tolist()] == xs


@pytest.mark.parametrize("exact_max, codes_max, hashed", [(0, 256, True), (0, 1 << 12, False), (1 << 14, 256, False)])
def test_dict_encode_strings_past_12_bytes_by_hash_or_exact_pass(monkeypatch, exact_max, codes_max, hashed):
    # strings past 12 bytes leave the short-view path: under config.STRING_EXACT_MAX rows, or with at most
    # config.LONG_VIEW_CODES_MAX distinct strings, the exact view kernel codes them, else Polars' hashes with
    # their check; every path gives the sorted dictionary's codes
    monkeypatch.setattr(config, "STRING_EXACT_MAX", exact_max)
    monkeypatch.setattr(config, "LONG_VIEW_CODES_MAX", codes_max)
    calls = []
    hash_path = coding._hash_string_codes
    monkeypatch.setattr(coding, "_hash_string_codes", lambda *a: calls.append(1) or hash_path(*a))
    xs = [None if i % 13 == 0 else f"{'Accelerometer' if i % 3 else 'x'}_{(i * 7) % 400}" for i in range(1000)]
    assert len(set(xs)) > 256
    codes, names, valid = coding._dict_encode(pl.Series(xs, dtype=pl.String))
    assert bool(calls) == hashed
    assert names == tuple(sorted({x for x in xs if x is not None}))
    assert [names[c] if valid is None or valid[i] else None for i, c in enumerate(codes.tolist())] == xs


# --- fused build passes -----------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 5, config.SORTED_CHECK_BLOCK, config.SORTED_CHECK_BLOCK + 1, 3 * config.SORTED_CHECK_BLOCK + 7])
def test_identity_rows(n):
    row = enc.identity_rows(n)
    assert row.dtype == np.int64 and row.tolist() == list(range(n))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 3 * config.SORTED_CHECK_BLOCK + 3), st.data())
def test_is_sorted_one_descent_anywhere(n, data):
    # the check counts descents block by block: a single one at any offset (block edges included)
    a = np.arange(n, dtype=np.int64) // 3
    assert enc.is_sorted(a)
    i = data.draw(st.sampled_from(sorted({1, n - 1, *(b for b in (config.SORTED_CHECK_BLOCK, config.SORTED_CHECK_BLOCK + 1,
                                                              2 * config.SORTED_CHECK_BLOCK) if b < n)})
                                  ) | st.integers(1, n - 1))
    a[i] = a[i - 1] - 1
    assert not enc.is_sorted(a)


def _naive_group(xs, valid, null_group):
    """Twin of range_group: value-ordered dense codes, null last (or -1), stable groups."""
    ok = [valid is None or bool(valid[i]) for i in range(len(xs))]
    vals = sorted({x for x, o in zip(xs, ok) if o})
    code = {v: c for c, v in enumerate(vals)}
    null_code = len(vals) if null_group and not all(ok) else -1
    key = [code[x] if o else null_code for x, o in zip(xs, ok)]
    k = len(vals) + (null_code >= 0)
    order = [i for c in range(k) for i in range(len(xs)) if key[i] == c]
    sizes = [key.count(c) for c in range(k)]
    return key, order, [sum(sizes[:g]) for g in range(k + 1)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=40), st.sampled_from([np.int64, np.int32, np.int8]),
       st.booleans(), st.data())
def test_range_group_matches_naive(xs, dtype, null_group, data):
    valid = None
    if data.draw(st.booleans()):
        valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(xs), max_size=len(xs))), np.bool_)
    values = np.array(xs, dtype=dtype)
    key, order, offsets = enc.range_group(values, valid, null_group=null_group)
    assert key.dtype == order.dtype == offsets.dtype == np.int64
    assert (key.tolist(), order.tolist(), offsets.tolist()) == _naive_group(xs, valid, null_group)
    # without the scatter: same codes and offsets, and counting_sort of the codes gives the order
    key2, none, offsets2 = enc.range_group(values, valid, null_group=null_group, with_order=False)
    assert key2.tolist() == key.tolist() and offsets2.tolist() == offsets.tolist() and len(none) == 0
    assert naive.counting_sort(key2.tolist(), len(offsets2) - 1)[0] == order.tolist()
    # dense_codes is the same coding
    if not null_group:
        assert (key.tolist(), len(offsets) - 1) == naive.dense_codes(xs, valid)


def test_range_group_known_bounds_and_wide_range():
    codes = np.array([2, 0, 2, 1], np.int32)
    key, order, offsets = enc.range_group(codes, bounds=(0, 2))
    assert key.tolist() == [2, 0, 2, 1] and order.tolist() == [1, 3, 0, 2] and offsets.tolist() == [0, 1, 2, 4]
    assert enc.range_group(np.array([0, 2**40], np.int64)) is None  # the caller hashes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.data())
def test_present_codes_and_apply_table(xs, data):
    valid = None
    if data.draw(st.booleans()):
        valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(xs), max_size=len(xs))), np.bool_)
    ids = np.array(xs, dtype=np.uint32)
    ok = [valid is None or bool(valid[i]) for i in range(len(xs))]
    assert enc.present_codes(ids, valid, 10).tolist() == sorted({x for x, o in zip(xs, ok) if o})
    table = np.arange(10, dtype=np.int32)[::-1] * 3
    got = enc.apply_table(ids, valid, table)
    assert got.dtype == np.int32 and got.tolist() == [int(table[x]) if o else -1 for x, o in zip(xs, ok)]


short_or_long = st.one_of(st.none(), st.text(max_size=13),
                          st.sampled_from(["", "a", "\x00", "a\x00", "abcdefghijkl", "abcdefghijklm", "é" * 6]))


@settings(max_examples=300, deadline=None)
@given(st.lists(short_or_long, max_size=40), st.integers(1, 5), st.integers(0, 3))
def test_view_codes_match_naive(xs, n_chunks, cut):
    # chunked and sliced series: views are read at each chunk's offset
    size = max(1, len(xs) // n_chunks)
    parts = [pl.Series(xs[i:i + size], dtype=pl.String) for i in range(0, len(xs), size)] or [pl.Series([], dtype=pl.String)]
    s = parts[0]
    for p in parts[1:]:
        s = s.append(p)
    s = pl.concat([pl.Series(["pad"] * cut, dtype=pl.String), s], rechunk=False).slice(cut)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    got = enc.view_codes(coding._view_chunks(s), valid, len(s))
    if any(x is not None and len(x.encode()) > 12 for x in xs):
        assert got is None  # a long string: the hash path codes the column
    else:
        codes, first = got
        assert codes.dtype == np.int32
        assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs, valid)


any_length = st.one_of(short_or_long, st.text(min_size=12, max_size=30),
                       st.sampled_from(["abcdefghijklm", "abcdefghijklmn", "abcdXfghijklm", "abcdefghijklX",
                                        "abcdefghijkl\x00", "é" * 7, "x" * 40, "x" * 39 + "y"]))


def _chunked(xs, n_chunks, cut):
    """``xs`` as a String series of ``n_chunks`` chunks, its first chunk sliced ``cut`` rows in."""
    size = max(1, len(xs) // n_chunks)
    parts = [pl.Series(xs[i:i + size], dtype=pl.String) for i in range(0, len(xs), size)] or [pl.Series([], dtype=pl.String)]
    s = parts[0]
    for p in parts[1:]:
        s = s.append(p)
    return pl.concat([pl.Series(["pad-a-long-string"] * cut, dtype=pl.String), s], rechunk=False).slice(cut)


@settings(max_examples=300, deadline=None)
@given(st.lists(any_length, max_size=50), st.integers(1, 5), st.integers(0, 3))
def test_long_view_codes_match_naive(xs, n_chunks, cut):
    # short strings by their views, long ones (same length and prefix, differing late) by their bytes,
    # across chunks with their own data buffers and a sliced first chunk
    s = _chunked(xs, n_chunks, cut)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    chunks, data = coding._long_view_chunks(coding._view_arrays(s))
    codes, first = enc.long_view_codes(chunks, data, valid, len(s))
    assert codes.dtype == np.int32
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs, valid)


def test_long_view_codes_table_grows_and_tells_apart_shared_prefixes():
    # 5,000 long strings of one length and prefix (one first word): told apart by their bytes, past
    # several growths of the table, beside short ones
    rng = np.random.default_rng(3)
    xs = [f"sensor-{int(i):08d}" if i % 3 else f"s{int(i)}" for i in rng.integers(0, 5000, 30000)]
    s = pl.Series(xs)
    codes, first = enc.long_view_codes(*coding._long_view_chunks(coding._view_arrays(s)), None, len(xs))
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs)


@pytest.mark.parametrize("distinct, late, got", [(255, False, True), (255, True, False), (1000, False, False)])
def test_long_view_codes_stop_past_max_codes(distinct, late, got):
    # max_codes 256 (the first table's quarter): codes while at most that many strings (``distinct`` long
    # ones and "short"), None past it, however late the next string comes
    xs = [x for i in range(3 * distinct) for x in (f"long-string-{i % distinct:05d}", "short")[:1 + (i % 5 == 0)]]
    xs += ["long-string-late"] if late else []
    assert len(set(xs)) == distinct + 1 + late
    s = pl.Series(xs)
    out = enc.long_view_codes(*coding._long_view_chunks(coding._view_arrays(s)), None, len(xs), max_codes=256)
    if got:
        assert (out[0].tolist(), out[1].tolist()) == naive.first_occurrence_codes(xs)
    else:
        assert out is None


def test_long_view_codes_refuse_a_view_past_its_buffer():
    s = pl.Series(["abcdefghijklmnop", "abcdefghijklmnop"])
    (words, off, length, starts, ends), = coding._long_view_chunks(coding._view_arrays(s))[0]
    data = coding._long_view_chunks(coding._view_arrays(s))[1]
    bad = words.copy()
    bad[2 * off + 3] += np.uint64(1 << 32)  # the second view's offset one past its string
    with pytest.raises(KernelInputError, match="outside its data buffer"):
        enc.long_view_codes([(bad, off, length, starts, ends)], data[:ends[-1]], None, 2)
    with pytest.raises(KernelInputError, match="outside the"):
        enc.long_view_codes([(words, off, length, starts, ends + len(data))], data, None, 2)


def test_dict_encode_codes_long_type_names_by_their_views():
    # a small column with a name past 12 bytes: the sorted dictionary's codes, as the reference order says
    xs = ["PressTemp", "Accelerometer", None, "Magnetometer", "Accelerometer", "Accelerometer2", "PressTemp"]
    codes, names, valid = coding._dict_encode(pl.Series(xs))
    assert names == ("Accelerometer", "Accelerometer2", "Magnetometer", "PressTemp")
    assert [names[c] if v else None for c, v in zip(codes, valid)] == xs


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([None, "b", "a", "ab", "c", "", "zz", "é"]), max_size=40), st.integers(0, 45),
       st.integers(1, 8))
def test_view_codes_recode_the_first_rows_in_sorted_order(xs, at, max_k):
    # ``order`` recodes the strings of the first ``at`` rows by rank (when at most ``max_k``); strings
    # first met later get the next codes in first-occurrence order; and the dictionary codes the
    # table builds from them are the sorted-dictionary codes either way
    s = pl.Series(xs, dtype=pl.String)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    exp_codes, exp_first = naive.first_occurrence_codes(xs, valid)
    with mock.patch.object(config, "VIEW_RELABEL_AT", at), mock.patch.object(config, "VIEW_RELABEL_MAX", max_k):
        codes, first = enc.view_codes(coding._view_chunks(s), valid, len(s),
                                      order=lambda f: coding._sorted_names(s.gather(f))[1])
        dict_codes, names, _ = coding._dict_encode(s)
    cut = min(at, len(xs))
    k0 = len(set(exp_codes[:cut]) - {-1})
    # the same partition of rows into codes, each code's first row listed
    assert sorted(first.tolist()) == sorted(exp_first)
    assert [codes[f] for f in first] == list(range(len(first)))
    assert all((c1 == c2) == (e1 == e2) for c1, e1 in zip(codes, exp_codes) for c2, e2 in zip(codes, exp_codes))
    prefix = [xs[f] for f in first[:k0]]
    if k0 <= max_k:  # recoded (after min(at, n) rows)
        assert prefix == sorted(prefix)
    else:
        assert first.tolist() == exp_first
    assert names == tuple(sorted({x for x in xs if x is not None}))
    assert [names[c] if x is not None else None for c, x in zip(dict_codes, xs)] == xs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12), max_size=60), st.integers(0, 2**32))
def test_view_codes_ignore_bytes_past_the_length(xs, seed):
    # Arrow does not promise zeros after a short string's bytes: fill them with noise
    rng = np.random.default_rng(seed)
    views = rng.integers(0, 256, (len(xs), 16), dtype=np.uint8)
    for i, x in enumerate(xs):
        views[i, :4] = np.frombuffer(np.uint32(len(x)).tobytes(), np.uint8)
        views[i, 4:4 + len(x)] = np.frombuffer(x, np.uint8)
    codes, first = enc.view_codes([(views.reshape(-1).view(np.uint64), 0, len(xs))], None, len(xs))
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs)


def test_view_codes_tell_apart_strings_sharing_their_first_word():
    # same length and first four bytes: the views differ only in their second word, and with many
    # of them one's home slot is often held by another (a probe must compare both words)
    rng = np.random.default_rng(5)
    xs = [f"abcd{int(i):07d}" for i in rng.integers(0, 3000, 20000)] + ["abcd", "abc", "abcd0000000"]
    codes, first = enc.view_codes(coding._view_chunks(pl.Series(xs)), None, len(xs))
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs)


def test_view_codes_table_grows():
    xs = [f"v{(i * 7919) % 5000}" for i in range(20000)]
    codes, first = enc.view_codes(coding._view_chunks(pl.Series(xs)), None, len(xs))
    assert (codes.tolist(), first.tolist()) == naive.first_occurrence_codes(xs)


@settings(max_examples=200, deadline=None)
@given(st.lists(short_or_long, max_size=60), st.data(), st.booleans())
def test_view_codes_at_match_naive(xs, data, strided):
    # codes of the strings at some rows (any order, repeats allowed), numbered by first occurrence
    # over those rows; a chunk smaller than the rows exercises the gather steps
    s = pl.Series(xs, dtype=pl.String)
    at = data.draw(st.lists(st.integers(0, max(len(xs) - 1, 0)), max_size=50)) if xs else []
    at = [i for i in at if xs[i] is not None]  # the caller passes rows with a value
    (words, off, length), = coding._view_chunks(s) or [(np.zeros(0, np.uint64), 0, 0)]
    rows = np.array(at, dtype=np.int64)
    if strided:  # a column of records, as the type grouping passes it
        rows = np.stack([rows, rows * 0 - 7], axis=1)[:, 0]
    with mock.patch.object(config, "VIEW_GATHER_CHUNK", 4):
        got = enc.view_codes_at(words[2 * off:2 * (off + length)], rows)
    if any(len(xs[i].encode()) > 12 for i in at):
        assert got is None
    else:
        codes, k = got
        exp, first = naive.first_occurrence_codes([xs[i] for i in at])
        assert codes.dtype == np.int32 and codes.tolist() == exp and k == len(first)


def test_view_codes_at_grows_its_table():
    xs = [f"v{(i * 7919) % 5000}" for i in range(20000)]
    (words, off, length), = coding._view_chunks(pl.Series(xs))
    at = np.arange(0, 20000, 3)
    codes, k = enc.view_codes_at(words[2 * off:2 * (off + length)], at)
    exp, first = naive.first_occurrence_codes([xs[i] for i in at])
    assert codes.tolist() == exp and k == len(first)


@pytest.mark.parametrize("dtype", ["cat", "enum", "enum_sorted"])
def test_category_codes_remap_to_sorted_present_values(dtype):
    raw = ["q", "b", None, "zz", "b", "a"]
    if dtype == "cat":
        pl.Series(["zz", "q", "m"]).cast(pl.Categorical)  # global ids not in string order
        s = pl.Series(raw).cast(pl.Categorical)
    elif dtype == "enum":
        s = pl.Series(raw).cast(pl.Enum(["zz", "unused", "q", "b", "a"]))
    else:
        s = pl.Series(raw).cast(pl.Enum(["a", "b", "c", "q", "zz"]))
    codes, names, valid = coding._dict_encode(s)
    assert names == ("a", "b", "q", "zz")  # only the values present
    assert codes.dtype == np.int32
    assert [names[c] if c >= 0 else None for c in codes.tolist()] == raw


def test_category_codes_zero_copy_when_physical_codes_are_the_ranks():
    cats = [f"c{i:06d}" for i in range(70_000)]  # > 65536 categories: 32-bit physical codes
    s = pl.Series(cats[::-1]).cast(pl.Enum(cats))
    codes, names, valid = coding._dict_encode(s)
    assert names == tuple(cats) and valid is None
    assert codes.dtype == np.int32 and codes.tolist() == list(range(70_000))[::-1]
    assert s.to_physical().dtype == pl.UInt32
    assert np.shares_memory(codes, s.to_physical().to_numpy())
    # with a null the codes need a -1: a remapped copy
    codes, _, valid = coding._dict_encode(pl.Series([cats[1], None, cats[0]]).cast(pl.Enum(cats)))
    assert codes.tolist() == [1, -1, 0] and valid.tolist() == [True, False, True]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**40, 2**40), st.booleans()), max_size=40), st.integers(1, 3))
def test_value_range_equals_min_max_of_the_valid_values(rows, threads):
    # split into up to ``threads`` ranges even for these few rows (jitcep/threads.py)
    values = np.array([v for v, _ in rows], dtype=np.int64)
    valid = np.array([ok for _, ok in rows], dtype=np.bool_)
    picked = [v for v, ok in rows if ok]
    with mock.patch.object(config, "THREAD_MIN_RECORDS", 0):
        assert enc.value_range(values, valid, threads) == ((min(picked), max(picked)) if picked else None)
        assert enc.value_range(values, None, threads) == ((min(values.tolist()), max(values.tolist()))
                                                          if rows else None)


@settings(max_examples=300, deadline=None)
@given(st.lists(any_length, max_size=50), st.lists(short_or_long.filter(lambda x: x is not None), max_size=8),
       st.integers(1, 5), st.integers(0, 3), st.data())
def test_run_view_codes_match_naive(xs, extra, n_chunks, cut, data):
    # names drawn from the column and beside it (lengths 0-13, names sharing a view's first word), the
    # column in chunks with a sliced first one, nulls, long strings that are never a name
    present = [x for x in xs if x is not None and len(x.encode()) <= 12]
    names = list(dict.fromkeys(data.draw(st.lists(st.sampled_from(present), max_size=4)) if present else []))
    names = list(dict.fromkeys(names + [x for x in extra if len(x.encode()) <= 12]))[:8]
    s = _chunked(xs, n_chunks, cut)
    valid = s.is_not_null().to_numpy() if s.null_count() else None
    keys = enc.wanted_view_keys(names)
    codes = enc.run_view_codes(coding._view_chunks(s), keys, valid, len(s))
    assert codes.dtype == np.int8
    assert codes.tolist() == naive.run_view_codes(xs, names, valid)


short_text = st.text(max_size=12).filter(lambda x: len(x.encode()) <= 12)


@settings(max_examples=200, deadline=None)
@given(st.lists(short_text, max_size=60), st.lists(short_text, max_size=6), st.integers(0, 2**32))
def test_run_view_codes_ignore_bytes_past_the_length(xs, extra, seed):
    # Arrow does not promise zeros after a short string's bytes: fill them with noise, and give some rows a
    # long string's length (its view holds a prefix and a buffer reference, never one of the names)
    rng = np.random.default_rng(seed)
    views = rng.integers(0, 256, (len(xs), 16), dtype=np.uint8)
    long_rows = rng.random(len(xs)) < 0.2
    for i, x in enumerate(xs):
        raw = x.encode()
        views[i, :4] = np.frombuffer(np.uint32(13 + len(raw) if long_rows[i] else len(raw)).tobytes(), np.uint8)
        views[i, 4:4 + len(raw)] = np.frombuffer(raw, np.uint8)
    names = list(dict.fromkeys(xs[:3] + extra))[:8]
    codes = enc.run_view_codes([(views.reshape(-1).view(np.uint64), 0, len(xs))], enc.wanted_view_keys(names),
                               None, len(xs))
    assert codes.tolist() == naive.run_view_codes([None if long_rows[i] else x for i, x in enumerate(xs)], names)


def test_wanted_view_keys_refuse_names_past_12_bytes():
    assert enc.wanted_view_keys(["abcdefghijkl", "é" * 6]) is not None
    assert enc.wanted_view_keys(["abcdefghijkl", "abcdefghijklm"]) is None
    assert enc.wanted_view_keys(["é" * 7]) is None  # 14 bytes
    assert enc.wanted_view_keys([]) == ()


def test_run_view_codes_refuse_chunks_past_their_views_or_rows():
    s = pl.Series(["a", "b", "a"])
    (words, off, length), = coding._view_chunks(s)
    keys = enc.wanted_view_keys(["a"])
    assert enc.run_view_codes([(words, off, length)], keys, None, 3).tolist() == [0, -1, 0]
    with pytest.raises(KernelInputError):
        enc.run_view_codes([(words, off, length)], keys, None, 4)  # the chunks hold 3 rows
    with pytest.raises(KernelInputError):
        enc.run_view_codes([(words, off, length)], keys, None, 2)
    with pytest.raises(KernelInputError):
        enc.run_view_codes([(words[:4], off, length)], keys, None, 3)  # 2 views for 3 rows
    with pytest.raises(KernelInputError):
        enc.run_view_codes([(words, off, length)], keys, np.ones(2, np.bool_), 3)
