"""Every combination of one member per Kleene construct (semantics §4), made in bounded chunks (§12).

`jitcep.execute.lists.member_combinations` feeds every conjunct a closure's
members are quantified over; its combinations are compared with a product
enumerated here in plain Python, and its chunks with their bound.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from jitcep.execute.lists import member_combinations
from jitcep.plan.kleene_refs import member_var, prev_var


@st.composite
def _cases(draw):
    n_lists = draw(st.integers(1, 5))
    constructs, lists = [], {}
    for c in range(draw(st.integers(0, 3))):
        lengths = draw(st.lists(st.integers(0, 4), min_size=n_lists, max_size=n_lists))
        off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        names = tuple(f"k{c}_{j}" for j in range(draw(st.integers(1, 2))))  # a group's variables share off
        for j, v in enumerate(names):
            lists[v] = (off, np.arange(off[-1], dtype=np.int64) * 10 + 1000 * c + j)
        constructs.append((names, draw(st.integers(0, 1))))
    which = np.array(draw(st.lists(st.integers(0, n_lists - 1), max_size=6)), np.int64)
    return constructs, lists, which, draw(st.integers(1, 20))


def _expected(constructs, lists, which):
    """(item, {variable: position}) per combination, items in order, the last construct fastest."""
    out = []
    for j, w in enumerate(which):
        ranges = []
        for names, first in constructs:
            off = lists[names[0]][0]
            ranges.append(range(off[w] + first, off[w + 1]))
        for at in itertools.product(*ranges):
            got = {}
            for (names, first), a in zip(constructs, at):
                for v in names:
                    got[member_var(v)] = int(lists[v][1][a])
                    if first:
                        got[prev_var(v)] = int(lists[v][1][a - 1])
            out.append((j, got))
    return out


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_the_chunks_hold_every_combination_once_in_order(case):
    constructs, lists, which, chunk = case
    asked = []
    got = []
    for item, members in member_combinations(constructs, lists, which, asked.append, chunk):
        assert asked[-1] == len(item) > 0  # checked before it was made, with its size
        # a chunk is consecutive items of at most `chunk` combinations, or a single item
        assert len(item) <= chunk or len(set(item.tolist())) == 1
        assert np.all(np.diff(item) >= 0)
        got += [(int(i), {v: int(p[t]) for v, p in members.items()}) for t, i in enumerate(item)]
    assert got == _expected(constructs, lists, which)


def test_an_item_past_the_chunk_is_its_own_chunk_and_checked_before_it_is_made():
    off = np.array([0, 3, 7], np.int64)  # list 0: 3 members, list 1: 4
    lists = {"b": (off, np.arange(7, dtype=np.int64)), "d": (off, np.arange(7, dtype=np.int64))}
    asked = []

    def check(k):
        asked.append(k)
        if k > 9:
            raise MemoryError(k)

    gen = member_combinations(((("b",), 0), (("d",), 0)), lists, np.array([0, 1]), check, chunk=9)
    item, members = next(gen)  # list 0 alone: 3 x 3 combinations
    assert item.tolist() == [0] * 9 and members[member_var("d")].tolist() == [0, 1, 2] * 3
    with pytest.raises(MemoryError):  # list 1: 4 x 4, past the chunk and the check
        next(gen)
    assert asked == [9, 16]


def test_products_past_int64_are_refused_not_wrapped():
    n = 1 << 22  # four constructs of 2^22 members: 2^88 combinations
    off = np.array([0, n], np.int64)
    lists = {f"k{c}": (off, np.zeros(n, np.int64)) for c in range(4)}
    constructs = [((f"k{c}",), 0) for c in range(4)]
    seen = []

    def check(k):
        seen.append(k)
        raise MemoryError

    with pytest.raises(MemoryError):
        next(member_combinations(constructs, lists, np.array([0]), check))
    assert seen == [1 << 62]
