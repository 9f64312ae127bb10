"""Kleene closure of an array variable over whole matches (ZStream section 4.4.5 KSEQ; SASE+ section 2).

``kleene="maximal"`` (docs/semantics.md section 6.2): for each match of the
other variables the closure takes the qualifying events of its range.  The
range is found like a negation's (:func:`jitcep.kernels.negation.negation_ranges`);
the qualifying members of every match form a CSR list (``offsets`` into
``members``).  This module turns those lists into the closure's lists:

- unbounded ``+`` / ``*`` / ``{n,}``: the one list, if long enough;
- ``{n}`` / ``{n,m}``: ZStream's closure count (Figure 6), every run of k
  consecutive qualifying events, n <= k <= m, plus the empty list when n = 0;

``kleene="all"`` (section 6.1, SASE+'s closure under skip-till-any-match):
every subsequence of the qualifying events whose length the bounds allow
(:func:`subsequences`).

and computes SASE+ aggregates (count, sum, avg, min, max over non-null
values) per list, or per run of members (``kleene="maximal"``'s lists are
runs, so their list conjuncts are tested before any list is gathered, int
sums from prefix sums: :func:`run_aggregates`).  Everything here is generic:
no per-pattern code.

Every CSR ``offsets`` a kernel reads members through is checked by its wrapper
(ascending, inside the members), and so are member positions used to read
times (:mod:`jitcep.kernels.checks`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NUMBA_FLAGS
from .alloc import empty
from .checks import check_index, check_lengths, check_offsets, fail
from .window import exceeds, window_bound

AGG_CODE = {"sum": 0, "min": 1, "max": 2, "avg": 3}


@njit(**NUMBA_FLAGS)
def _count_runs(offsets, nmin, nmax):
    n = 0
    for r in range(len(offsets) - 1):
        q = offsets[r + 1] - offsets[r]
        if nmax < 0:
            if q >= nmin:
                n += 1
        else:  # no run is longer than the record's members: a bound past them is not looped to
            for k in range(max(nmin, 1), min(nmax, q) + 1):
                n += q - k + 1
            if nmin == 0:
                n += 1
    return n


@njit(**NUMBA_FLAGS)
def _runs(offsets, nmin, nmax, src, start, length):
    t = 0
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        if nmax < 0:
            if q >= nmin:
                src[t] = r
                start[t] = o
                length[t] = q
                t += 1
        else:
            # semantics section 11's order: the empty list, then by first member, a run before its extensions
            if nmin == 0:
                src[t] = r
                start[t] = o
                length[t] = 0
                t += 1
            for s in range(q):
                for k in range(max(nmin, 1), min(nmax, q - s) + 1):
                    src[t] = r
                    start[t] = o + s
                    length[t] = k
                    t += 1


def _bounds(kernel: str, nmin: int, nmax: int | None) -> tuple[int, int]:
    """(nmin, nmax or -1 for no maximum) after checking 0 <= nmin <= nmax."""
    lo, hi = int(nmin), -1 if nmax is None else int(nmax)
    if lo < 0 or (hi >= 0 and hi < lo) or hi < -1:
        raise fail(kernel, f"list bounds {{{nmin},{nmax}}}")
    return lo, hi


def closure_runs(offsets: np.ndarray, nmin: int, nmax: int | None):
    """(src record, start index into members, length) of every list the bounds allow (section 6.2), each
    record's in semantics section 11's order (the empty list, then by first member, shorter first).

    Invariant: ``offsets`` ascend (checked here), so the runs stay inside
    each record's members.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    check_offsets("closure_runs", "offsets", offsets, offsets[-1] if len(offsets) else 0)
    nmin, hi = _bounds("closure_runs", nmin, nmax)
    n = _count_runs(offsets, nmin, hi)
    src = np.empty(n, np.int64)
    start = np.empty(n, np.int64)
    length = np.empty(n, np.int64)
    _runs(offsets, nmin, hi, src, start, length)
    return src, start, length


@njit(**NUMBA_FLAGS)
def _reach(members, wt, W, o, q, reach):
    """reach[i]: one past the last of the record's members within the window of member i (every two
    members of a list must fit it, semantics section 2); members ascend in ``wt``, so two pointers."""
    k = 0
    for i in range(q):
        if k < i:
            k = i
        while k < q and not exceeds(wt[members[o + i]], wt[members[o + k]], W):
            k += 1
        reach[i] = k


@njit(**NUMBA_FLAGS)
def _subsequences(offsets, members, ts, strict, follows, foff, nmin, nmax, cap, total_cap, wt, W, anchored,
                  src, off, lpos, fill):
    """Enumerate every allowed subsequence of each record's members, depth first (lexicographic).

    ``wt`` not empty: every member of a list lies within window ``W`` of its
    first (:func:`_reach`).  ``anchored``: every list starts with the
    record's first member.  Under strict_ts a member must be later in time
    than the one before it (semantics section 6, iteration order); with
    iterative conjuncts (``follows`` not empty) the pair (previous, next)
    must pass them: ``follows[foff[r] + prev * q + j]``.  ``fill`` False:
    count only.  Returns (lists, elements, over): ``over`` is the first
    record with more than ``cap`` lists, -2 past ``total_cap`` lists in
    all, else -1 (counting stops there: the caller raises).

    One loop, no call per step: the list's indexes in ``stack`` and its
    positions in ``cur`` (a list is one copy of it); at depth d the next
    index is the first from ``j`` on that may follow ``stack[d - 1]`` and
    leaves room for ``nmin`` before the end of the window of the list's first
    member (the record's members for the first).  Found in place, not by a
    helper: passing the arrays to a compiled helper per step cost 2.7x on
    MinMax_2 at x100's 657,800 lists, and one writing a list as much again
    (perf/notes/kleene.md).
    """
    check = strict or len(follows) > 0
    t = 0
    e = 0
    width = 1
    for r in range(len(offsets) - 1):
        width = max(width, offsets[r + 1] - offsets[r])
    stack = np.empty(width, np.int64)
    cur = np.empty(width, np.int64)
    reach = np.empty(width, np.int64)
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        kmax = q if nmax < 0 else min(nmax, q)
        n_r = 0
        if nmin == 0:  # the empty list (T* v[], {0,m})
            if fill:
                src[t] = r
                off[t + 1] = e
            t += 1
            n_r += 1
        if kmax == 0 or nmin > kmax:
            if n_r > cap:
                return t, e, r
            continue
        if len(wt):
            _reach(members, wt, W, o, q, reach)
        else:
            reach[:q] = q
        po = foff[r] if len(follows) else 0
        d = 0
        j = 0  # (anchored: the first member, which the limit of depth 0 always admits here, as q >= nmin)
        last = q - max(nmin, 1)  # the last index depth d may take
        R = q  # one past the last member within the window of the list's first
        while True:
            if d > 0 and check:
                p = stack[d - 1]
                tp = ts[members[o + p]]
                while j <= last and ((strict and ts[members[o + j]] <= tp) or
                                     (len(follows) > 0 and not follows[po + p * q + j])):
                    j += 1
            if j > last or (d == 0 and anchored and j > 0):
                # none at this depth (an anchored list keeps its first member): advance the one before, but
                # never the anchor
                d -= 1
                if d < 0 or (d == 0 and anchored):
                    break
                j = stack[d] + 1
                last = (q if d == 0 else R) - max(nmin - d, 1)
                continue
            stack[d] = j
            cur[d] = members[o + j]
            if d == 0:
                R = reach[j]
            if d + 1 >= nmin:
                if fill:
                    src[t] = r
                    for x in range(d + 1):
                        lpos[e + x] = cur[x]
                    off[t + 1] = e + d + 1
                t += 1
                e += d + 1
                n_r += 1
                if n_r > cap:
                    return t, e, r
                if t > total_cap:
                    return t, e, -2
            j += 1
            if d + 1 < kmax:  # extend before advancing (a list before its extensions)
                d += 1
                last = R - max(nmin - d, 1)
    return t, e, -1


_COUNTED = 40
"""Records of at most this many members are counted in closed form (:func:`_subsequence_counts`): a
record's lists (at most 40 * 2^39) and their members (at most 40 * 40 * 2^39) fit in an int64."""


@njit(**NUMBA_FLAGS)
def _subsequence_counts(offsets, members, nmin, nmax, cap, total_cap, wt, W, anchored):
    """The counting pass of :func:`_subsequences` in closed form, where any members may follow each other
    (no iterative conjuncts, no strict_ts): (lists, elements, over) as that pass returns them, or
    (0, 0, -5) at a record of more than :data:`_COUNTED` members (the caller then enumerates).

    The lists starting at member i are the subsets of the m members after it
    and within the window of it (``_reach``) of sizes nmin - 1 .. kmax - 1, so
    they number sum_j C(m, j) and hold sum_j (j + 1) C(m, j) members: as the
    enumeration, which emits the empty list (nmin = 0) first, then checks
    each further list against ``cap`` (per record) before ``total_cap``.
    """
    width = 0
    for r in range(len(offsets) - 1):
        width = max(width, offsets[r + 1] - offsets[r])
    if width > _COUNTED:
        return 0, 0, -5
    C = np.zeros((width + 1, width + 1), np.int64)  # Pascal's triangle: additions only, no overflow
    for a in range(width + 1):
        C[a, 0] = 1
        for b in range(1, a + 1):
            C[a, b] = C[a - 1, b - 1] + C[a - 1, b]
    reach = np.empty(max(width, 1), np.int64)
    t = 0
    e = 0
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        kmax = q if nmax < 0 else min(nmax, q)
        empty_list = 1 if nmin == 0 else 0
        lists = 0  # the non-empty ones
        elems = 0
        if kmax >= 1 and nmin <= kmax:
            if len(wt):
                _reach(members, wt, W, o, q, reach)
            else:
                reach[:q] = q
            for i in range(1 if anchored else q):
                m = reach[i] - i - 1
                for j in range(max(nmin, 1) - 1, min(kmax - 1, m) + 1):
                    lists += C[m, j]
                    elems += (j + 1) * C[m, j]
                if lists > cap or t + empty_list + lists > total_cap:
                    break  # past a cap: the totals do not matter
        if kmax == 0 or nmin > kmax:
            if empty_list > cap:  # the enumeration checks a record without other lists against cap only
                return t, e, r
        elif lists:
            # the l-th non-empty list is checked with n_r = empty_list + l, t = t0 + empty_list + l
            at_cap = cap - empty_list + 1
            at_total = max(1, total_cap - t - empty_list + 1)
            if at_cap <= lists or at_total <= lists:
                return t, e, r if at_cap <= at_total else -2
        t += empty_list + lists
        e += elems
    return t, e, -1


def subsequence_counts(offsets: np.ndarray, members: np.ndarray, nmin: int, nmax: int | None, cap: int,
                       total_cap: int, wt: np.ndarray | None = None, W=None, anchored: bool = False):
    """(lists, elements, over) of :func:`subsequences` without iterative conjuncts or strict_ts, counted in
    closed form: ``over`` is the first record past ``cap`` lists, -2 past ``total_cap`` lists in all, -1
    neither (the counts then are the lists' and their members'), -5 when a record has more than
    :data:`_COUNTED` members (not counted).  Invariants as :func:`subsequences`' (checked here)."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    members = np.ascontiguousarray(members, dtype=np.int64)
    check_offsets("subsequence_counts", "offsets", offsets, len(members))
    nmin, hi = _bounds("subsequence_counts", nmin, nmax)
    if wt is None:
        wt, Wb = np.zeros(0, np.int64), window_bound(0)
    else:
        check_index("subsequence_counts", "members", members, len(wt))
        wt, Wb = np.ascontiguousarray(wt, dtype=np.int64), window_bound(W)
    t, e, over = _subsequence_counts(offsets, members, nmin, hi, int(cap), int(total_cap), wt, Wb, bool(anchored))
    return int(t), int(e), int(over)


def subsequences(offsets: np.ndarray, members: np.ndarray, ts: np.ndarray, strict: bool, nmin: int,
                 nmax: int | None, cap: int, total_cap: int, follows: np.ndarray | None = None,
                 room: int | None = None, wt: np.ndarray | None = None, W=None, anchored: bool = False):
    """Every subsequence of each record's members with nmin <= length <= nmax (semantics section 6.1).

    ``offsets`` / ``members``: each record's qualifying events in position
    order (CSR).  ``strict``: consecutive members need strictly increasing
    ``ts`` (order="strict_ts").  ``follows`` (bool, from :func:`member_pairs`):
    whether member j may follow member i in a list of record r (the iterative
    conjuncts, SASE+ ``v[i-1]``).  ``wt`` / ``W`` (the window measure, one
    entry per event, ascending along each record's members, and the bound):
    every two members of a list within the window; None: no such test (the
    range already ensures it).  ``anchored``: only the lists starting with
    the record's first member (a closure's anchor, bound by the joins; then
    ``nmin >= 1``).  Returns ``(src, off, lpos, over)``: the
    record of each list, the lists in CSR form, and -1; or, when some record
    has more than ``cap`` lists (``max_kleene``), that record as ``over`` (-2
    past ``total_cap`` lists in all, ``max_matches``; -3 when the lists would take
    more than ``room`` bytes, ``max_memory``, checked between the counting pass
    and the allocation) and nothing else.
    Lists of a record come out in lexicographic order of their member indexes.

    Invariants, checked here: ``offsets`` ascend inside ``members``, members
    are positions of ``ts`` (one pass), ``follows`` holds one q x q block per
    record, 0 <= nmin <= nmax.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    members = np.ascontiguousarray(members, dtype=np.int64)
    check_offsets("subsequences", "offsets", offsets, len(members))
    check_index("subsequences", "members", members, len(ts))
    nmin, hi = _bounds("subsequences", nmin, nmax)
    if anchored and nmin == 0:
        raise fail("subsequences", "an anchored list has its first member: nmin >= 1")
    none = np.zeros(0, np.int64)
    if follows is None:
        follows, foff = np.zeros(0, np.bool_), none
    else:
        foff = _square_offsets(offsets)
        check_lengths("subsequences", int(foff[-1]), follows=follows)
    if wt is None:
        wt, Wb = np.zeros(0, np.int64), window_bound(0)
    else:
        check_lengths("subsequences", len(ts), wt=wt)
        wt, Wb = np.ascontiguousarray(wt, dtype=np.int64), window_bound(W)
    args = (offsets, members, ts, bool(strict), follows, foff, nmin, hi, int(cap), int(total_cap), wt, Wb,
            bool(anchored))
    if strict or len(follows):
        return _count_then_fill(_subsequences, args, room)
    # any members may follow each other: the counting pass in closed form (half the enumeration's time)
    counted = _subsequence_counts(offsets, members, nmin, hi, int(cap), int(total_cap), wt, Wb, bool(anchored))
    return _count_then_fill(_subsequences, args, room, None if counted[2] == -5 else counted)


def _count_then_fill(kernel, args: tuple, room: int | None, counted=None):
    """Run a list kernel twice: a counting pass that sizes the outputs (allocated by NumPy,
    :mod:`jitcep.kernels.alloc`), then the pass that fills them.  Returns ``(src, off, elems, -1)``,
    or ``(None, None, None, status)``: the kernel's cap status, or -3 when the lists would not fit ``room``
    bytes.  ``counted``: the counting pass's result, found another way (None: run it)."""
    none = np.zeros(0, np.int64)
    n, n_elems, over = kernel(*args, none, np.zeros(1, np.int64), none, False) if counted is None else counted
    if over != -1:
        return None, None, None, int(over)
    if room is not None and 8 * (2 * n + 1 + n_elems) > room:
        return None, None, None, -3
    src = empty(n, np.int64)
    off = empty(n + 1, np.int64)
    off[0] = 0
    elems = empty(n_elems, np.int64)
    kernel(*args, src, off, elems, True)
    return src, off, elems, -1


def _square_offsets(offsets: np.ndarray) -> np.ndarray:
    """Start of each record's q x q block in a :func:`member_pairs` table (q = its member count)."""
    q = np.diff(offsets)
    foff = np.zeros(len(q) + 1, dtype=np.int64)
    np.cumsum(q * q, out=foff[1:])
    return foff


@njit(**NUMBA_FLAGS)
def _member_pairs(offsets, members, foff, rec, first, second, slot):
    t = 0
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        for i in range(q):
            for j in range(i + 1, q):
                rec[t] = r
                first[t] = members[o + i]
                second[t] = members[o + j]
                slot[t] = foff[r] + i * q + j
                t += 1


def member_pairs(offsets: np.ndarray, members: np.ndarray):
    """Every ordered pair (i < j) of each record's members: ``(rec, first, second, slot, size)``.

    ``first`` / ``second`` are the two members' positions; ``slot`` is where
    the pair's verdict goes in a bool table of ``size`` entries (one q x q
    block per record), the ``follows`` argument of :func:`subsequences`.
    Invariant: ``offsets`` ascend inside ``members`` (checked here).
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    check_offsets("member_pairs", "offsets", offsets, len(members))
    q = np.diff(offsets)
    m = int((q * (q - 1) // 2).sum())
    foff = _square_offsets(offsets)
    rec, first, second, slot = (empty(m, np.int64) for _ in range(4))
    _member_pairs(offsets, np.ascontiguousarray(members, dtype=np.int64), foff, rec, first, second, slot)
    return rec, first, second, slot, int(foff[-1])


@njit(**NUMBA_FLAGS)
def _outside_lists(rec, ev, off, lpos, out):
    for i in range(len(rec)):
        lo, hi = off[rec[i]], off[rec[i] + 1]
        while lo < hi:  # each list ascends: a binary search
            mid = (lo + hi) >> 1
            if lpos[mid] < ev[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i] = not (lo < off[rec[i] + 1] and lpos[lo] == ev[i])


def outside_lists(rec: np.ndarray, ev: np.ndarray, off: np.ndarray, lpos: np.ndarray) -> np.ndarray:
    """Whether event ``ev[i]`` is in no member of record ``rec[i]``'s list (CSR ``off`` / ``lpos``, each
    list ascending): distinct variables bind distinct events (semantics section 3), so a closure's
    candidates leave out another closure's members.

    Invariants, checked here: ``rec`` and ``ev`` have one entry per pair, ``rec`` indexes the lists,
    ``off`` ascends inside ``lpos``.
    """
    rec = np.ascontiguousarray(rec, dtype=np.int64)
    ev = np.ascontiguousarray(ev, dtype=np.int64)
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_lengths("outside_lists", len(rec), ev=ev)
    check_offsets("outside_lists", "off", off, len(lpos))
    check_index("outside_lists", "rec", rec, len(off) - 1)
    out = empty(len(rec), np.bool_)
    _outside_lists(rec, ev, off, np.ascontiguousarray(lpos, dtype=np.int64), out)
    return out


@njit(**NUMBA_FLAGS)
def _every_passes(off, ok, first, out):
    for j in range(len(off) - 1):
        good = True
        for k in range(off[j] + first, off[j + 1]):
            if not ok[k]:
                good = False
                break
        out[j] = good


def every_passes(off: np.ndarray, ok: np.ndarray, first: int = 0) -> np.ndarray:
    """Whether every member of each list (CSR ``off`` over the members) from its ``first``-th on (0-based)
    passed, ``ok`` holding one verdict per member: a conjunct quantified over the members (semantics
    section 4: ``b[i]``, and from i = 2 on ``b[i-1]``, ``first`` 1), tested on a closure's lists the joins
    carried above its collection (:mod:`jitcep.execute.list_filter`).  A list with no member from
    ``first`` on passes (vacuously).

    Invariants, checked here: ``off`` ascends inside ``ok``; ``first`` >= 0.
    """
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("every_passes", "off", off, len(ok))
    if first < 0:
        raise fail("every_passes", f"first is {first}, below 0")
    out = empty(len(off) - 1, np.bool_)
    _every_passes(off, np.ascontiguousarray(ok, dtype=np.bool_), int(first), out)
    return out


@njit(**NUMBA_FLAGS)
def _run_offsets(start, length, n, off):
    """off[j + 1] = off[j] + length[j] from off[0] = 0; the first j whose run leaves [0, n), else -1."""
    off[0] = 0
    for j in range(len(length)):
        s, k = start[j], length[j]
        if k < 0 or (k > 0 and (s < 0 or s > n - k)):
            return j
        off[j + 1] = off[j] + k
    return -1


@njit(**NUMBA_FLAGS)
def _gather_runs(members, start, length, off, out):
    for j in range(len(length)):
        d, s = off[j], start[j]
        for i in range(length[j]):
            out[d + i] = members[s + i]


def gather_lists(members: np.ndarray, start: np.ndarray, length: np.ndarray):
    """CSR (offsets, positions) of the lists ``members[start[j] : start[j] + length[j]]`` (an empty list's
    start is not read).  Both arrays from :func:`~jitcep.kernels.alloc.empty`, so a run's pool serves
    them: NumPy's repeat-and-arange index built two more arrays of every member (MinMax_2 at x100: 3
    million, ~900 fresh pages a run).  KernelInputError unless every run lies inside ``members`` (checked
    in the offsets' pass)."""
    start = np.ascontiguousarray(start, dtype=np.int64)
    length = np.ascontiguousarray(length, dtype=np.int64)
    check_lengths("gather_lists", len(length), start=start)
    off = empty(len(length) + 1, np.int64)
    bad = _run_offsets(start, length, len(members), off)
    if bad >= 0:
        raise fail("gather_lists", f"run {bad} ({start[bad]}, length {length[bad]}) is outside "
                                   f"{len(members)} members")
    out = empty(int(off[-1]), np.int64)
    _gather_runs(np.ascontiguousarray(members, dtype=np.int64), start, length, off, out)
    return off, out


@njit(**NUMBA_FLAGS)
def _anchored_members(rec, members, first, offs, out):
    """The merge of :func:`anchored_members`; the index of the first pair out of (record, position)
    order or naming no record, else ``len(rec)``."""
    offs[0] = 0
    i = d = 0
    for r in range(len(first)):
        a = first[r]
        if a >= 0:
            out[d] = a
            d += 1
        prev = -1
        while i < len(rec) and rec[i] == r:
            p = members[i]
            if p < prev:
                return i
            prev = p
            if p > a:
                out[d] = p
                d += 1
            i += 1
        offs[r + 1] = d
    return i


def anchored_members(rec: np.ndarray, members: np.ndarray, first: np.ndarray):
    """(offsets (m + 1), positions): each record r's anchor ``first[r]`` (none where -1: another OR branch
    was taken) and then its members after it (``members[i]`` of the pairs ``rec[i] == r``, all of them
    where no anchor), in position order (semantics section 6: the anchor is the first iteration).

    The pairs come in (record, position) order, so one merge replaces two concatenations, a lexsort
    and the gathers by its order over every member (MinMax_2 at x100: ~2,000 fresh pages a run).
    KernelInputError unless they do (checked in the merge's pass) and every record is one of
    ``first``'s."""
    rec = np.ascontiguousarray(rec, dtype=np.int64)
    check_lengths("anchored_members", len(rec), members=members)
    offs = empty(len(first) + 1, np.int64)
    out = empty(len(first) + len(rec), np.int64)
    at = _anchored_members(rec, np.ascontiguousarray(members, dtype=np.int64),
                           np.ascontiguousarray(first, dtype=np.int64), offs, out)
    if at < len(rec):
        raise fail("anchored_members", f"pair {at} (record {rec[at]}) is out of (record, position) order "
                                       f"or past the {len(first)} records")
    return offs, out[:offs[-1]]


@njit(**NUMBA_FLAGS)
def _lists_within(src, off, lpos, rstart, rend, wt, W, ok):
    n = len(wt)
    for j in range(len(src)):
        r = src[j]
        if r < 0 or r >= len(rstart):
            return j
        s, e = rstart[r], rend[r]
        if off[j + 1] > off[j]:
            s = min(s, lpos[off[j]])
            e = max(e, lpos[off[j + 1] - 1])
        if s < 0 or e >= n:
            return j
        ok[j] = not exceeds(wt[s], wt[e], W)
    return -1


def lists_within(src: np.ndarray, off: np.ndarray, lpos: np.ndarray, rstart: np.ndarray, rend: np.ndarray,
                 wt: np.ndarray, W) -> np.ndarray:
    """Whether each (record ``src[j]``, list j) fits the window ``W`` (semantics section 2): from the
    earlier of the record's first event (``rstart``) and the list's first member to the later of its last
    event (``rend``) and the list's last member (a closure's list ascends), on the window measure ``wt``.

    One pass instead of the first and last members, the spans and their two measures as NumPy arrays of
    every list (MinMax_2 at x100: ~740 fresh pages a run).  Invariants: ``off`` ascends inside ``lpos``
    (checked here); every record index and every position read lies inside its array (checked in the
    pass)."""
    src = np.ascontiguousarray(src, dtype=np.int64)
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_lengths("lists_within", len(src) + 1, off=off)
    check_offsets("lists_within", "off", off, len(lpos))
    check_lengths("lists_within", len(rstart), rend=rend)
    ok = empty(len(src), np.bool_)
    bad = _lists_within(src, off, np.ascontiguousarray(lpos, dtype=np.int64),
                        np.ascontiguousarray(rstart, dtype=np.int64), np.ascontiguousarray(rend, dtype=np.int64),
                        np.ascontiguousarray(wt, dtype=np.int64), window_bound(W), ok)
    if bad >= 0:
        raise fail("lists_within", f"list {bad} reads a record or position outside its array")
    return ok


def segment_aggregate(off: np.ndarray, vals: np.ndarray, valid: np.ndarray, func: str):
    """Per list (CSR ``off`` over ``vals``): sum / min / max / avg of the valid values and whether any exists,
    as :func:`run_aggregates` (each list is the run ``off[j]..off[j + 1]``).  Invariant: ``off`` ascends
    inside ``vals``, which ``valid`` matches (checked here)."""
    off = np.ascontiguousarray(off, dtype=np.int64)
    check_offsets("segment_aggregate", "off", off, len(vals))
    return run_aggregates(off[:-1], np.diff(off), vals, valid, func)


_HALF = np.int64(1 << 32)
_HALF_MASK = np.int64((1 << 32) - 1)
_AVG_EXACT = 1 << 53
"""Integers up to this magnitude are exact float64s, and so is every float64 sum of them that stays there."""


@njit(**NUMBA_FLAGS)
def _run_sums(start, length, vals, valid, avg, out, ok):
    """Sum (``avg``: over the count) of the valid int64 ``vals[start[j] : start[j] + length[j]]`` into
    ``out[j]``; ``ok[j]`` False without a valid value or for a sum outside int64.

    From prefix sums of each value's high and low 32 bits (``v = hi * 2**32
    + lo``, 0 <= lo < 2**32), which do not overflow below 2**31 values, so a
    run's sum is exact in O(1) however its partial sums wander: the final
    sum decides NULL, as the reference's Python integers do (semantics
    section 4).
    """
    n = len(vals)
    hi = np.zeros(n + 1, np.int64)
    lo = np.zeros(n + 1, np.int64)
    cnt = np.zeros(n + 1, np.int64)
    for i in range(n):
        v = vals[i] if valid[i] else 0
        hi[i + 1] = hi[i] + (v >> 32)
        lo[i + 1] = lo[i] + (v & _HALF_MASK)
        cnt[i + 1] = cnt[i] + (1 if valid[i] else 0)
    for j in range(len(start)):
        a = start[j]
        b = a + length[j]
        k = cnt[b] - cnt[a]
        h = hi[b] - hi[a]
        low = lo[b] - lo[a]
        h += low >> 32
        low &= _HALF_MASK
        fits = -_HALF // 2 <= h < _HALF // 2  # h * 2**32 + low inside int64
        ok[j] = k > 0 and fits
        total = h * _HALF + low if fits else 0
        if avg:  # two statements, not one expression: an int sum never passes through a float
            out[j] = total / max(k, 1)
        else:
            out[j] = total


@njit(**NUMBA_FLAGS)
def _run_aggregates(start, length, vals, valid, code, out, ok):
    """Aggregate ``code`` of each run read in list order, as the reference does: floats added one by one
    from 0.0 (``float_sum``), the first of equal extremes kept (a NaN first stays, as with ``min()``).
    ``out`` has ``vals``' dtype (avg: float64, and so are ``vals``) and holds zeros."""
    for j in range(len(start)):
        acc = out[j]
        k = 0
        for i in range(start[j], start[j] + length[j]):
            if not valid[i]:
                continue
            v = vals[i]
            if code == 0 or code == 3:
                acc += v
            elif k == 0 or (v < acc if code == 1 else v > acc):
                acc = v
            k += 1
        ok[j] = k > 0
        if code == 3:
            out[j] = acc / max(k, 1)
        else:
            out[j] = acc


def run_aggregates(start: np.ndarray, length: np.ndarray, vals: np.ndarray, valid: np.ndarray, func: str):
    """Per run (the values ``vals[start[j] : start[j] + length[j]]``, a closure's list under
    ``kleene="maximal"``, semantics section 6.2): sum / min / max / avg of its valid values, and whether
    it has a value, without gathering the lists (:func:`closure_runs` gives the runs).

    The results equal the reference evaluator's (semantics section 4): an
    int sum is exact and NULL only when the final sum leaves int64 (from
    prefix sums, :func:`_run_sums`); an int avg is that sum over the
    count when no run can pass 2**53 in magnitude (then every float64
    partial sum of the reference is exact; otherwise, and for floats, each
    run is added in list order); min / max keep the first extreme.
    Invariants, checked here: every run lies inside ``vals``, which
    ``valid`` matches, and there are fewer than 2**31 values.
    """
    start = np.ascontiguousarray(start, dtype=np.int64)
    length = np.ascontiguousarray(length, dtype=np.int64)
    check_lengths("run_aggregates", len(start), length=length)
    check_lengths("run_aggregates", len(vals), valid=valid)
    if func not in AGG_CODE:
        raise fail("run_aggregates", f"unknown aggregate {func!r}")
    if len(vals) >= 1 << 31:
        raise fail("run_aggregates", f"{len(vals)} values: the prefix sums hold fewer than 2**31")
    if len(start) and (start.min() < 0 or length.min() < 0 or int((start + length).max()) > len(vals)):
        raise fail("run_aggregates", f"a run lies outside the {len(vals)} values")
    ints = np.issubdtype(vals.dtype, np.integer)
    prefix = ints and func == "sum"
    if ints and func == "avg" and len(vals) and len(start):
        prefix = max(-int(vals.min()), int(vals.max())) * int(length.max()) <= _AVG_EXACT
    # out has the dtype the loop adds in: an avg read in list order adds float64s, as float_sum
    dtype = np.int64 if ints and (prefix or func in ("min", "max")) else np.float64
    vals = np.ascontiguousarray(vals, dtype=dtype)
    valid = np.ascontiguousarray(valid, dtype=np.bool_)
    out = np.zeros(len(start), dtype=np.float64 if func == "avg" else dtype)
    ok = np.zeros(len(start), dtype=np.bool_)
    if len(start) and prefix:
        _run_sums(start, length, vals, valid, func == "avg", out, ok)
    elif len(start):
        _run_aggregates(start, length, vals, valid, AGG_CODE[func], out, ok)
    return out, ok


@njit(**NUMBA_FLAGS)
def _iteration_lists(offsets, istart, iend, itstart, itend, iwst, iwen, rwst, rwen, seq, strict, windowed, W,
                     follows, foff, first_ok, nmin, nmax, cap, total_cap, step_cap, src, off, lidx, fill):
    """Enumerate each record's lists of candidate iterations, depth first (lexicographic in their indexes).

    Candidate ``j`` of record r (index ``offsets[r] + j``) is an iteration
    spanning positions ``istart[j]..iend[j]`` (times ``itstart`` / ``itend``,
    window measures ``iwst`` / ``iwen``).  A candidate may follow the one
    before it in a list when it has a larger index and: ``seq``, it starts
    after that one ends (strict_ts: also later in time); ``follows`` not
    empty, ``follows[foff[r] + prev * q + j]``; a list's first candidate,
    when ``first_ok`` is not empty, ``first_ok[j]``; ``windowed``, the record
    (``rwst[r]``, ``rwen[r]``) with every iteration of the list so far and
    this one fits ``W``.  Returns (lists, elements, over): ``over`` is the
    first record with more than ``cap`` lists, -2 past ``total_cap`` lists in
    all, -4 past ``step_cap`` candidates tried, else -1.
    """
    t = 0
    e = 0
    steps = 0
    width = 1
    for r in range(len(offsets) - 1):
        width = max(width, offsets[r + 1] - offsets[r])
    stack = np.empty(width, np.int64)
    lo = np.empty(width, np.int64)  # the list's window extent so far, record included
    hi = np.empty(width, np.int64)
    for r in range(len(offsets) - 1):
        o = offsets[r]
        q = offsets[r + 1] - o
        kmax = q if nmax < 0 else min(nmax, q)
        n_r = 0
        if nmin == 0:  # the empty list ({0,m})
            if fill:
                src[t] = r
                off[t + 1] = e
            t += 1
            n_r += 1
        po = foff[r] if len(follows) else 0
        d = -1
        j = 0
        while True:
            found = -1
            if d + 1 < kmax:
                while j < q:
                    steps += 1
                    if steps > step_cap:
                        return t, e, -4
                    ok = True
                    c = o + j
                    if d >= 0:
                        p = o + stack[d]
                        if seq and (istart[c] <= iend[p] or (strict and itstart[c] <= itend[p])):
                            ok = False
                        elif len(follows) and not follows[po + stack[d] * q + j]:
                            ok = False
                    elif len(first_ok) and not first_ok[c]:
                        ok = False
                    if ok and windowed:
                        a = rwst[r] if d < 0 else lo[d]
                        b = rwen[r] if d < 0 else hi[d]
                        if exceeds(min(a, iwst[c]), max(b, iwen[c]), W):
                            ok = False
                    if ok:
                        found = j
                        break
                    j += 1
            if found < 0:
                if d < 0:
                    break
                j = stack[d] + 1
                d -= 1
                continue
            d += 1
            stack[d] = found
            c = o + found
            lo[d] = min(rwst[r] if d == 0 else lo[d - 1], iwst[c])
            hi[d] = max(rwen[r] if d == 0 else hi[d - 1], iwen[c])
            j = found + 1
            if d + 1 >= nmin:
                if fill:
                    src[t] = r
                    for x in range(d + 1):
                        lidx[e + x] = o + stack[x]
                    off[t + 1] = e + d + 1
                t += 1
                e += d + 1
                n_r += 1
                if n_r > cap:
                    return t, e, r
                if t > total_cap:
                    return t, e, -2
    return t, e, -1


def iteration_lists(offsets: np.ndarray, istart: np.ndarray, iend: np.ndarray, itstart: np.ndarray,
                    itend: np.ndarray, iwst: np.ndarray, iwen: np.ndarray, rwst: np.ndarray, rwen: np.ndarray,
                    seq: bool, strict: bool, W, nmin: int, nmax: int | None, cap: int, total_cap: int,
                    step_cap: int, follows: np.ndarray | None = None, first_ok: np.ndarray | None = None,
                    room: int | None = None):
    """The lists of a Kleene group (semantics section 6.1): per record, every choice of ``nmin..nmax``
    of its candidate iterations (CSR ``offsets`` over per-candidate arrays, each record's candidates in
    canonical order) that may follow each other (see :func:`_iteration_lists`).

    ``seq``: a SEQ group (each iteration after the one before); an AND group
    lists any set.  ``W`` None: the iterations need not fit the window
    together (``kleene_window="iteration"``: each fits with the record's
    other events already); else the record's window measures ``rwst`` /
    ``rwen`` and every iteration of a list fit ``W``.  ``follows``: as
    :func:`subsequences`' (the iterative conjuncts), over candidates;
    ``first_ok`` (bool per candidate): which may start a list (those that
    follow a record's anchored first iteration, which the caller prepends).
    Returns ``(src, off, lidx, over)``: the record of each list, the lists
    as CSR offsets over candidate indexes, and -1; or ``over`` as
    :func:`subsequences`' (-4: more than ``step_cap`` candidates tried,
    ``max_partials``) and nothing else.

    Invariants, checked here: ``offsets`` ascend inside the candidates, which
    every per-candidate array matches (``first_ok`` too); one window measure per record;
    ``follows`` holds one q x q block per record; 0 <= nmin <= nmax.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(istart)
    check_offsets("iteration_lists", "offsets", offsets, n)
    check_lengths("iteration_lists", n, iend=iend, itstart=itstart, itend=itend, iwst=iwst, iwen=iwen)
    check_lengths("iteration_lists", len(offsets) - 1, rwst=rwst, rwen=rwen)
    nmin, hi = _bounds("iteration_lists", nmin, nmax)
    if follows is None:
        follows, foff = np.zeros(0, np.bool_), np.zeros(0, np.int64)
    else:
        foff = _square_offsets(offsets)
        check_lengths("iteration_lists", int(foff[-1]), follows=follows)
    if first_ok is None:
        first_ok = np.zeros(0, np.bool_)
    else:
        check_lengths("iteration_lists", n, first_ok=first_ok)
    arrays = tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (istart, iend, itstart, itend, iwst, iwen,
                                                                    rwst, rwen))
    args = (offsets, *arrays, bool(seq), bool(strict), W is not None, window_bound(0 if W is None else W),
            follows, foff, np.ascontiguousarray(first_ok, dtype=np.bool_), nmin, hi, int(cap), int(total_cap),
            int(step_cap))
    return _count_then_fill(_iteration_lists, args, room)
