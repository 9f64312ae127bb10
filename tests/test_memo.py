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


def test_per_object_survives_an_eviction_by_another_thread_between_lookup_and_use():
    """Thread A finds its entry; thread B then evicts it before A moves it to the end (KeyError unlocked)."""
    import threading

    memo = PerObject(len, size=1)
    a, b = [1], [1, 2]
    memo(a)
    found, evicted = threading.Event(), threading.Event()

    class Entries(type(memo.entries)):
        def get(self, key, default=None):
            hit = super().get(key, default)
            if key == id(a) and not found.is_set():
                found.set()  # B starts now; a locked memo makes it wait until A is done
                evicted.wait(0.5)
            return hit

    memo.entries = Entries(memo.entries)
    other = threading.Thread(target=lambda: (memo(b), evicted.set()))
    found_a = []
    first = threading.Thread(target=lambda: found_a.append(memo(a)))
    first.start()
    found.wait(5)
    other.start()
    first.join(5)
    other.join(5)
    assert found_a == [1] and evicted.is_set() and list(memo.entries) == [id(b)]
