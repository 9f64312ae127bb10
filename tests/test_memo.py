"""jitcep._memo.PerObject: results kept per object, by identity, least recently used leave."""

from __future__ import annotations

from jitcep._memo import PerObject


def test_per_object_computes_once_per_object_and_evicts_the_least_recently_used():
    calls = []
    memo = PerObject(lambda x: calls.append(x) or len(calls), size=2)
    a, b, c = [1.0], [1.0], [2.0]  # a == b as values, distinct objects
    assert memo(a) == 1 and memo(a) == 1 and memo(b) == 2
    assert memo(a) == 1          # a used last: b is the least recently used
    assert memo(c) == 3          # evicts b
    assert memo(a) == 1 and memo(b) == 4
    assert len(memo.entries) == 2


def test_per_object_does_not_keep_exceptions():
    n = []

    def fail(x):
        n.append(x)
        raise ValueError("no")

    memo = PerObject(fail)
    obj = object()
    for _ in range(2):
        try:
            memo(obj)
        except ValueError:
            pass
    assert len(n) == 2 and not memo.entries
