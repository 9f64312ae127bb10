"""jitcep.kernels.kleene against its naive twins (tests/naive.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from jitcep.errors import KernelInputError
from jitcep.kernels.kleene import (anchored_members, closure_runs, every_passes, gather_lists, iteration_lists,
                                  lists_within, member_pairs, outside_lists, run_aggregates, segment_aggregate,
                                  subsequence_counts, subsequences)

lengths = st.lists(st.integers(0, 6), min_size=0, max_size=8)
bounds = st.sampled_from([(1, None), (0, None), (3, None), (2, 2), (1, 3), (0, 2), (0, 0)])


def _offsets(lens):
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    return off


@settings(max_examples=200, deadline=None)
@given(lengths, bounds)
def test_closure_runs_equals_twin(lens, b):
    off = _offsets(lens)
    src, start, length = closure_runs(off, *b)
    assert list(zip(src.tolist(), start.tolist(), length.tolist())) == naive.closure_runs(off, *b)  # in order


@settings(max_examples=200, deadline=None)
@given(lengths, st.sampled_from(["sum", "min", "max", "avg"]), st.booleans(), st.data())
def test_segment_aggregate_equals_twin(lens, func, ints, data):
    off = _offsets(lens)
    n = int(off[-1])
    elems = st.integers(-5, 5) if ints else st.floats(-5, 5, allow_nan=False)
    vals = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), dtype=np.int64 if ints else np.float64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    out, ok = segment_aggregate(off, vals, valid, func)
    got = [out[j].item() if ok[j] else None for j in range(len(lens))]
    want = naive.segment_aggregate(off, vals, valid, func)
    assert got == pytest.approx(want) if any(w is not None for w in want) else got == want
    if ints and func != "avg":
        assert out.dtype == np.int64  # exact integer sums


_int64 = st.one_of(st.integers(-5, 5), st.integers(-(1 << 63), (1 << 63) - 1), st.sampled_from([-(1 << 63), (1 << 63) - 1]))


@settings(max_examples=150, deadline=None)
@given(lengths, bounds, st.sampled_from(["sum", "min", "max", "avg"]), st.booleans(), st.data())
def test_run_aggregates_equals_twin(lens, b, func, ints, data):
    # the runs of closure_runs (sliding, overlapping), values near the int64 edges included: the int sums
    # come from prefix sums and must still equal Python's exact ones, NULL only when the total leaves int64
    off = _offsets(lens)
    n = int(off[-1])
    start, length = closure_runs(off, *b)[1:]
    elems = _int64 if ints else st.floats(allow_nan=True, allow_infinity=True)
    vals = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), dtype=np.int64 if ints else np.float64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    out, ok = run_aggregates(start, length, vals, valid, func)
    got = [out[j].item() if ok[j] else None for j in range(len(start))]
    want = naive.run_aggregates(start, length, vals, valid, func)
    assert [repr(g) for g in got] == [repr(w) for w in want]  # exact, NaN and -0.0 included
    assert out.dtype == (np.float64 if func == "avg" or not ints else np.int64)


def test_run_aggregates_hand_enumerated():
    big = (1 << 63) - 1
    vals = np.array([big, 1, -2, 5, 7], np.int64)
    valid = np.array([True, True, True, False, True])
    start, length = np.array([0, 0, 1, 3, 2]), np.array([2, 3, 2, 1, 3])
    out, ok = run_aggregates(start, length, vals, valid, "sum")
    # big + 1 leaves int64 (NULL); big + 1 - 2 returns into it (the final sum decides); 5 is null
    assert ok.tolist() == [False, True, True, False, True]
    assert out[ok].tolist() == [big - 1, -1, 5]
    out, ok = run_aggregates(start[2:], length[2:], vals, valid, "avg")
    assert ok.tolist() == [True, False, True] and out[ok].tolist() == [-0.5, 2.5]
    out, ok = run_aggregates(np.array([0]), np.array([3]), np.array([2.0, np.nan, 1.0]), np.ones(3, bool), "min")
    assert out.tolist() == [1.0]  # NaN compares false: the first value stays until a smaller one, as min()


def test_gather_lists():
    members = np.array([10, 11, 12, 13, 14], dtype=np.int64)
    off, pos = gather_lists(members, np.array([1, 0, 3]), np.array([2, 0, 2]))
    assert off.tolist() == [0, 2, 2, 4] and pos.tolist() == [11, 12, 13, 14]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12), st.data())
def test_gather_lists_equals_twin(n, data):
    # runs anywhere inside the members (an empty one's start anywhere: it is not read), overlapping or not
    members = np.arange(n, dtype=np.int64) * 3 + 1
    runs = data.draw(st.lists(st.integers(0, n).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(0, n - s)) if s < n else st.tuples(st.integers(-5, 20),
                                                                                         st.just(0))), max_size=8))
    start = np.array([s for s, _ in runs], dtype=np.int64)
    length = np.array([k for _, k in runs], dtype=np.int64)
    off, pos = gather_lists(members, start, length)
    assert (off.tolist(), pos.tolist()) == naive.gather_lists(members, start, length)


@pytest.mark.parametrize("start, length", [([2], [2]), ([-1], [1]), ([0], [-1]), ([0, 3], [1, 1])])
def test_gather_lists_refuses_runs_outside(start, length):
    with pytest.raises(KernelInputError):
        gather_lists(np.arange(3, dtype=np.int64), np.array(start), np.array(length))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), st.data())
def test_anchored_members_equals_twin(m, data):
    # each record's members ascend and may include positions at or before its anchor (ties put them in
    # range), records without an anchor (-1) keep all of theirs
    first = np.array(data.draw(st.lists(st.integers(-1, 12), min_size=m, max_size=m)), dtype=np.int64)
    per = [sorted(data.draw(st.lists(st.integers(0, 15), max_size=4))) for _ in range(m)]
    rec = np.array([r for r, ps in enumerate(per) for _ in ps], dtype=np.int64)
    members = np.array([p for ps in per for p in ps], dtype=np.int64)
    offs, pos = anchored_members(rec, members, first)
    assert (offs.tolist(), pos.tolist()) == naive.anchored_members(rec, members, first)


@pytest.mark.parametrize("rec, members", [([1, 0], [1, 2]), ([0, 0], [3, 2]), ([0, 5], [1, 2])])
def test_anchored_members_refuses_pairs_out_of_order(rec, members):
    with pytest.raises(KernelInputError):
        anchored_members(np.array(rec), np.array(members), np.array([0, -1]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12), st.integers(0, 5), st.integers(0, 30), st.data())
def test_lists_within_equals_twin(n, m, W, data):
    # records spanning [rstart, rend], lists ascending anywhere among the n events, ties in the measure
    wt = np.cumsum(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))).astype(np.int64)
    spans = [sorted(data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2))) for _ in range(m)]
    rstart = np.array([a for a, _ in spans], dtype=np.int64)
    rend = np.array([b for _, b in spans], dtype=np.int64)
    k = data.draw(st.integers(0, 8)) if m else 0
    src = np.array(data.draw(st.lists(st.integers(0, m - 1), min_size=k, max_size=k)) if m else [], dtype=np.int64)
    lists = [sorted(data.draw(st.lists(st.integers(0, n - 1), max_size=4))) for _ in range(k)]
    off = _offsets([len(x) for x in lists])
    lpos = np.array([p for x in lists for p in x], dtype=np.int64)
    got = lists_within(src, off, lpos, rstart, rend, wt, W)
    assert got.tolist() == naive.lists_within(src, off, lpos, rstart, rend, wt, W)


def test_lists_within_refuses_reads_outside():
    wt, one = np.arange(3, dtype=np.int64), np.array([0, 1], dtype=np.int64)
    with pytest.raises(KernelInputError):  # a record past the records
        lists_within(np.array([1]), np.array([0, 0]), np.zeros(0, np.int64), np.array([0]), np.array([1]), wt, 5)
    with pytest.raises(KernelInputError):  # a member past the events
        lists_within(np.array([0]), one, np.array([3]), np.array([0]), np.array([1]), wt, 5)
    with pytest.raises(KernelInputError):  # offsets past the members
        lists_within(np.array([0]), np.array([0, 2]), np.array([1]), np.array([0]), np.array([1]), wt, 5)


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100))
def test_subsequences_equals_twin(lens, b, strict, steps):
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2  # positions, ascending inside each record
    ts = np.cumsum(steps).astype(np.int64)  # ties (step 0) matter under strict_ts
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6)
    assert over == -1
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert got == sorted(naive.subsequences(off, members, ts, strict, *b))  # in order: lexicographic per record


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100),
       st.integers(0, 6))
def test_subsequences_within_a_window_equals_twin(lens, b, strict, steps, W):
    # every two members of a list within the window (a closure with two open sides, inside AND)
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    wt = ts + np.int64(-2**63 + 300) if W % 2 else ts  # near int64's minimum too: compared exactly (kernels.window)
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6, wt=wt, W=W)
    assert over == -1
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert got == sorted(naive.subsequences(off, members, ts, strict, *b, wt=wt, W=W))


@settings(max_examples=400, deadline=None)
@given(lengths, bounds, st.lists(st.integers(0, 3), min_size=100, max_size=100), st.one_of(st.none(), st.integers(0, 6)),
       st.booleans(), st.integers(1, 40), st.integers(1, 120))
def test_subsequence_counts_equal_twin(lens, b, steps, W, anchored, cap, total_cap):
    # the counting pass in closed form: the lists' and members' counts, or the cap status at the same record
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    wt = np.cumsum(steps).astype(np.int64)
    if anchored and b[0] == 0:
        b = (1, b[1] if b[1] is None else max(b[1], 1))
    got = subsequence_counts(off, members, *b, cap, total_cap, None if W is None else wt, W, anchored)
    want = naive.subsequence_counts(off, members, *b, cap, total_cap, None if W is None else wt, W, anchored)
    assert got[2] == want[2]
    if want[2] == -1:
        assert got == want
        # and the enumeration, which sizes its output with them, agrees
        src, loff, lpos, over = subsequences(off, members, wt, False, *b, cap=cap, total_cap=total_cap,
                                             wt=None if W is None else wt, W=W, anchored=anchored)
        assert over == -1 and (len(src), len(lpos)) == got[:2]


@settings(max_examples=300, deadline=None)
@given(lengths, bounds.filter(lambda b: b[0] >= 1), st.booleans(),
       st.lists(st.integers(0, 3), min_size=100, max_size=100), st.integers(0, 6), st.randoms())
def test_anchored_subsequences_equal_twin(lens, b, strict, steps, W, rnd):
    # a closure whose first member the joins bind: every list starts with it (with the window and
    # iterative pairs, which then relate it to the second member)
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    rec, first, second, slot, size = member_pairs(off, members)
    verdict = np.array([rnd.random() < 0.7 for _ in range(len(rec))], dtype=np.bool_)
    follows = np.zeros(size, np.bool_)
    follows[slot] = verdict
    allowed = {(int(r), int((f // 2) - off[r]), int((s // 2) - off[r]))
               for r, f, s, v in zip(rec, first, second, verdict) if v}
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6,
                                         follows=follows, wt=ts, W=W, anchored=True)
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert got == sorted(naive.subsequences(off, members, ts, strict, *b, follows=allowed, wt=ts, W=W,
                                            anchored=True))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=6, unique=True).map(sorted), min_size=1, max_size=6),
       st.data())
def test_outside_lists_equals_twin(lists, data):
    off = _offsets([len(x) for x in lists])
    lpos = np.array([p for x in lists for p in x], dtype=np.int64)
    n = data.draw(st.integers(0, 20))
    rec = np.array(data.draw(st.lists(st.integers(0, len(lists) - 1), min_size=n, max_size=n)), dtype=np.int64)
    ev = np.array(data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)), dtype=np.int64)
    assert outside_lists(rec, ev, off, lpos).tolist() == naive.outside_lists(rec, ev, off, lpos)


@settings(max_examples=200, deadline=None)
@given(lengths, st.integers(0, 2), st.data())
def test_every_passes_equals_twin(lens, first, data):
    off = _offsets(lens)
    n = int(off[-1])
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    assert every_passes(off, ok, first).tolist() == naive.every_passes(off, ok, first)


def test_every_passes_by_hand():
    # lists (T, F), (), (F), (F, T, T): all pass / vacuous / fail / fail; from the second member on the
    # one-member list is vacuous and the first list's F at its second member still fails it
    off = np.array([0, 2, 2, 3, 6])
    ok = np.array([True, False, False, False, True, True])
    assert every_passes(off, ok).tolist() == [False, True, False, False]
    assert every_passes(off, ok, 1).tolist() == [False, True, True, True]


def test_subsequences_stop_at_the_caps():
    off = _offsets([2, 5, 1])  # record 1 has 31 non-empty subsequences
    members = np.arange(8, dtype=np.int64)
    ts = np.arange(8, dtype=np.int64)
    assert subsequences(off, members, ts, False, 1, None, cap=30, total_cap=10**6)[3] == 1
    assert subsequences(off, members, ts, False, 1, None, cap=31, total_cap=10**6)[3] == -1
    assert subsequences(off, members, ts, False, 1, None, cap=31, total_cap=33)[3] == -2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 44), min_size=1, max_size=3), st.sampled_from([(0, 2), (1, 2), (2, 3), (3, 3)]),
       st.booleans(), st.integers(1, 20000), st.integers(1, 30000), st.integers(0, 6))
def test_subsequences_of_records_past_the_closed_form_count_equal_twin(lens, b, anchored, cap, total_cap, W):
    # a record of more than 40 members is counted by enumerating (no closed form): the lists in order,
    # or the cap status at the same record, as the twin's
    lens = [*lens, 41 + lens[0] % 4]
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    wt = np.arange(2 * off[-1], dtype=np.int64) // 5  # per position, ties in it
    if anchored and b[0] == 0:
        b = (1, b[1])
    src, loff, lpos, over = subsequences(off, members, wt, False, *b, cap=cap, total_cap=total_cap, wt=wt, W=W,
                                         anchored=anchored)
    assert over == naive.subsequence_counts(off, members, *b, cap, total_cap, wt, W, anchored)[2]
    if over == -1:
        got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
        assert got == sorted(naive.subsequences(off, members, wt, False, *b, wt=wt, W=W, anchored=anchored))


@settings(max_examples=300, deadline=None)
@given(lengths, bounds, st.booleans(), st.lists(st.integers(0, 3), min_size=100, max_size=100), st.randoms())
def test_subsequences_with_iterative_pairs_equals_twin(lens, b, strict, steps, rnd):
    off = _offsets(lens)
    members = np.arange(off[-1], dtype=np.int64) * 2
    ts = np.cumsum(steps).astype(np.int64)
    rec, first, second, slot, size = member_pairs(off, members)
    # the pairs are every (i < j) of each record, once, in slots of that record's block
    expect = sorted((r, int(members[off[r] + i]), int(members[off[r] + j]))
                    for r in range(len(lens)) for i in range(lens[r]) for j in range(i + 1, lens[r]))
    assert sorted(zip(rec.tolist(), first.tolist(), second.tolist())) == expect
    verdict = np.array([rnd.random() < 0.6 for _ in range(len(rec))], dtype=np.bool_)
    follows = np.zeros(size, np.bool_)
    follows[slot] = verdict
    allowed = {(int(r), int((f // 2) - off[r]), int((s // 2) - off[r]))
               for r, f, s, v in zip(rec, first, second, verdict) if v}
    src, loff, lpos, over = subsequences(off, members, ts, strict, *b, cap=10**6, total_cap=10**6,
                                         follows=follows)
    got = [(int(src[j]), tuple(lpos[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert sorted(got) == sorted(naive.subsequences(off, members, ts, strict, *b, follows=allowed))


@st.composite
def _iterations(draw):
    """Records with candidate iterations: per candidate a (start, end) span of positions (times and window
    measures read at them, ties included), a record span per record, iterative verdicts per pair."""
    lens = draw(st.lists(st.integers(0, 5), min_size=0, max_size=6))
    off = _offsets(lens)
    n = int(off[-1])
    ts = np.cumsum(draw(st.lists(st.integers(0, 2), min_size=40, max_size=40))).astype(np.int64)
    spans = [sorted(draw(st.lists(st.integers(0, 39), min_size=2, max_size=2))) for _ in range(n)]
    # each record's candidates in canonical order (by end, then start), as the executor sorts them
    for r in range(len(lens)):
        spans[off[r]:off[r + 1]] = sorted(spans[off[r]:off[r + 1]], key=lambda s: (s[1], s[0]))
    istart = np.array([s[0] for s in spans], np.int64)
    iend = np.array([s[1] for s in spans], np.int64)
    rspan = [sorted(draw(st.lists(st.integers(0, 39), min_size=2, max_size=2))) for _ in lens]
    rst = np.array([s[0] for s in rspan], np.int64)
    ren = np.array([s[1] for s in rspan], np.int64)
    return off, ts, istart, iend, rst, ren


@settings(max_examples=300, deadline=None)
@given(_iterations(), bounds, st.booleans(), st.booleans(), st.one_of(st.none(), st.integers(0, 8)),
       st.booleans(), st.randoms())
def test_iteration_lists_equal_twin(its, b, seq, strict, W, iterative, rnd):
    # a Kleene group's lists: SEQ chains or AND sets of candidate iterations, with the window over the
    # record and the list, iterative verdicts between consecutive iterations and a first-iteration test
    off, ts, istart, iend, rst, ren = its
    n = len(istart)
    follows = first_ok = allowed = None
    if iterative:
        rec, first, second, slot, size = member_pairs(off, np.arange(n, dtype=np.int64))
        verdict = np.array([rnd.random() < 0.7 for _ in range(len(rec))], dtype=np.bool_)
        follows = np.zeros(size, np.bool_)
        follows[slot] = verdict
        allowed = {(int(r), int(f - off[r]), int(s - off[r])) for r, f, s, v in zip(rec, first, second, verdict) if v}
        first_ok = np.array([rnd.random() < 0.7 for _ in range(n)], dtype=np.bool_)
    args = (off, istart, iend, ts[istart], ts[iend], ts[istart], ts[iend], ts[rst], ts[ren], seq, strict, W)
    src, loff, lidx, over = iteration_lists(*args, *b, cap=10**6, total_cap=10**6, step_cap=10**7,
                                           follows=follows, first_ok=first_ok)
    assert over == -1
    got = [(int(src[j]), tuple(lidx[loff[j]:loff[j + 1]].tolist())) for j in range(len(src))]
    assert got == sorted(got)  # records in order, each record's lists lexicographic
    assert got == sorted(naive.iteration_lists(*args, *b, follows=allowed, first_ok=first_ok))


def test_iteration_lists_caps():
    # one record, three candidates that may all follow each other: 7 non-empty lists
    off = np.array([0, 3], np.int64)
    z = np.array([0, 1, 2], np.int64)
    r = np.zeros(1, np.int64)
    args = (off, z, z, z, z, z, z, r, r, False, False, None, 1, None)
    assert iteration_lists(*args, cap=6, total_cap=100, step_cap=100)[-1] == 0  # record 0 past max_kleene
    assert iteration_lists(*args, cap=100, total_cap=6, step_cap=100)[-1] == -2  # past max_matches
    assert iteration_lists(*args, cap=100, total_cap=100, step_cap=5)[-1] == -4  # past max_partials
    assert iteration_lists(*args, cap=7, total_cap=7, step_cap=100)[-1] == -1
