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


# --- PerObjectAndKey: per object (by identity), then per a second key (by value) --------------------


def test_per_object_and_key_makes_once_per_object_and_key():
    from jitcep._memo import PerObjectAndKey

    made = []
    memo = PerObjectAndKey(size=2)
    a, b = [1.0], [1.0]  # equal as values, distinct objects
    for obj, key in ((a, "x"), (a, "x"), (a, 1), (a, 1.0), (b, "x")):  # 1 == 1.0 as a key: one entry
        memo(obj, key, lambda obj=obj, key=key: made.append((id(obj), key)) or len(made))
    assert made == [(id(a), "x"), (id(a), 1), (id(b), "x")]
    assert memo.get(a, "x") == 1 and memo.get(a, 1) == 2 and memo.get(b, "x") == 3
    assert memo.get(a, "y") is None and memo.get(a, "y", "no") == "no"
    assert memo.kept(a) == {"x": 1, 1: 2}


def test_per_object_and_key_a_changed_second_key_makes_a_new_value_and_keeps_the_old():
    from jitcep._memo import PerObjectAndKey

    memo = PerObjectAndKey(keep=2)
    obj = object()
    assert memo(obj, ("schema", 1), lambda: "first") == "first"
    assert memo(obj, ("schema", 2), lambda: "second") == "second"  # the key changed: made anew
    assert memo(obj, ("schema", 1), lambda: "again") == "first"  # the old key's value is still kept
    # a third key: the oldest stored (schema 1, though read last) leaves, not the other
    assert memo(obj, ("schema", 3), lambda: "third") == "third"
    assert list(memo.kept(obj)) == [("schema", 2), ("schema", 3)]
    assert memo(obj, ("schema", 1), lambda: "again") == "again"
    # put replaces a key's value without evicting another
    memo.put(obj, ("schema", 1), "replaced")
    assert memo.kept(obj) == {("schema", 3): "third", ("schema", 1): "replaced"}


def test_per_object_and_key_objects_leave_as_per_object_s_do_and_exceptions_are_not_kept():
    from jitcep._memo import PerObjectAndKey

    memo = PerObjectAndKey(size=1)
    a, b = object(), object()
    memo(a, 0, lambda: "a")
    memo(b, 0, lambda: "b")  # evicts a with every key under it
    assert list(memo.per_object.entries) == [id(b)] and memo.get(b, 0) == "b"

    def fail():
        raise ValueError("no")

    for _ in range(2):
        try:
            memo(b, 1, fail)
        except ValueError:
            pass
    assert memo.kept(b) == {0: "b"}


def test_per_object_and_key_identifies_a_tuple_of_objects_by_their_ids():
    from jitcep._memo import PerObjectAndKey

    memo = PerObjectAndKey(ident=lambda objs: tuple(map(id, objs)))
    p, q = [1], [1]
    assert memo((p, q), "k", lambda: 1) == 1
    assert memo((p, q), "k", lambda: 2) == 1  # a new tuple of the same objects: found
    assert memo((q, p), "k", lambda: 3) == 3  # other objects in that order: not
    assert memo(([1], q), "k", lambda: 4) == 4  # an equal list, not the same object: not


def test_per_object_and_key_refuses_a_keep_below_one():
    import pytest

    from jitcep._memo import PerObjectAndKey

    with pytest.raises(ValueError):
        PerObjectAndKey(keep=0)


def test_per_object_and_key_two_threads_evicting_at_once_keep_what_each_stored():
    """Two threads both past ``keep`` store at once: each evicts and stores under the lock, so neither loses
    the key it stored to the other's eviction, nor reads the dictionary changing under it."""
    import threading

    from jitcep._memo import PerObjectAndKey

    memo = PerObjectAndKey(keep=2)
    obj = object()
    memo.put(obj, "old1", 1)
    memo.put(obj, "old2", 2)
    kept = memo.kept(obj)
    inside, go = threading.Event(), threading.Event()

    class Slow(dict):
        """Pauses the first eviction with the lock held (a thread switch between its look and its pop)."""

        def pop(self, key, default=None):
            if not inside.is_set():
                inside.set()
                go.wait(0.5)
            return super().pop(key, default)

    memo.per_object.entries[id(obj)] = (obj, Slow(kept))
    errors = []

    def store(key):
        try:
            memo.put(obj, key, key)
        except Exception as e:  # RuntimeError (changed size during iteration), KeyError, StopIteration
            errors.append(e)

    first = threading.Thread(target=store, args=("new1",))
    second = threading.Thread(target=store, args=("new2",))
    first.start()
    inside.wait(5)
    second.start()  # waits for the lock the first holds, then evicts for itself
    go.set()
    first.join(5)
    second.join(5)
    assert not errors
    assert memo.kept(obj) == {"new1": "new1", "new2": "new2"}


def test_per_object_and_key_many_threads_storing_and_evicting_stay_within_keep():
    import threading

    from jitcep._memo import PerObjectAndKey

    memo = PerObjectAndKey(keep=4)
    obj = object()
    errors = []

    def work(t):
        try:
            for i in range(2000):
                assert memo(obj, (t, i % 7), lambda: (t, i % 7)) == (t, i % 7)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors and len(memo.kept(obj)) <= 4
