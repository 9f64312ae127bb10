"""Per-table work shared by every pattern of one run: the type grouping and the key partition codes.

Leaves are built in a few linear passes (building them is where a cheap run's time goes):
one grouping of the positions of the types some leaf reads, carrying each
position's key code and timestamp (shared by every leaf), then per leaf its
filter over only those events and one counting pass by key over the
survivors (:mod:`jitcep.execute.scan`).

A ``partition_by=`` table (``Partition.independent``, semantics section 13)
is evaluated in one call over all its streams: every plan partitions by the
stream *and* its own ``[attr]`` key, so records of different streams never
meet in a join, and a count window measures positions inside the stream.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..events import EventTable, build_partition
from ..kernels import group_with_key_runs, group_with_keys, stream_positions
from ..kernels.encode import dense_codes
from ..plan.operators import PhysicalPlan
from ..plan.rules import key_coding


class TableContext:
    """The event table of a run and what its plans share: type groups, key codes, stream positions.

    Built from every plan of the run, so the types each key's leaves read are
    known before the first leaf is built, and each key's coding is chosen
    once (the rule :func:`jitcep.plan.rules.key_coding.choose`; the runtime
    copies it into each plan for explain).
    """

    def __init__(self, table: EventTable, plans: list[PhysicalPlan], threads: int = 1):
        self.table = table
        self.threads = threads  # the passes over the events split over this many (jitcep/threads.py)
        part = table.partition
        self.streams = part if part is not None and part.independent else None
        # per key: batches of (type codes, records, offsets, key runs: code -> its key offsets, or None)
        self._types: dict[tuple[str, ...], list[tuple[frozenset[int], np.ndarray, np.ndarray, dict | None]]] = {}
        self._keys: dict[tuple[str, ...], tuple[np.ndarray | None, int, np.ndarray | None, int]] = {}
        self._stream_pos = None
        # per key: the types leaves ask for, in order; the keys of plans with an untyped leaf (it reads every event)
        self.leaf_types, untyped = _leaves_read(plans)
        # the type numbering of the run: the table's, or the plans' own types alone (run_types); before the
        # key codings, which may read the table's codes
        self._run_types = run_types(table, self.leaf_types, untyped, plans)
        self._code = {t: i for i, t in enumerate(self.type_names)}
        self._reduced = {key: {self._code[t] for t in types if t in self._code}
                         for key, types in _reduced_types(plans).items()}
        self._read = _reads(plans)
        self._sampled = None
        self.coding: dict[tuple[str, ...], tuple] = {}
        typed = self.sampled_table()  # the rule reads type codes: the run's, so the table's stay unmade
        for plan in plans:
            if plan.key not in self.coding:
                self.coding[plan.key] = key_coding.choose(typed, plan.key, self.leaf_types.get(plan.key),
                                                          plan.key in untyped, self.streams is not None, threads)

    @property
    def type_names(self) -> tuple[str, ...]:
        """The names the run's type codes index: the table's, or the plans' types (:func:`run_types`)."""
        return self.table.type_names if self._run_types is None else self._run_types[0]

    @property
    def type_code(self) -> np.ndarray:
        """Each event's type code into :attr:`type_names` (-1: the null type, or a type no leaf reads)."""
        return self.table.type_code if self._run_types is None else self._run_types[1]

    def sampled_table(self) -> EventTable:
        """The table as the run's estimate reads it: its types numbered as this context numbers them, so
        that the codes it gives :meth:`grouped` are this context's (:meth:`EventTable.with_types`)."""
        if self._run_types is None:
            return self.table
        if self._sampled is None:
            self._sampled = self.table.with_types(*self._run_types)
        return self._sampled

    def serves(self, plans: list[PhysicalPlan]) -> bool:
        """Whether ``plans`` read the same types under the same keys as the plans this context was made
        for: then it codes their keys and groups their types alike (:func:`jitcep.runtime.prepare` makes
        one from the plans before the planner chose their joins, and reuses it)."""
        return _reads(plans) == self._read

    def adopt(self, plans: list[PhysicalPlan]) -> bool:
        """Serve ``plans`` (:meth:`serves`) from now on, their leaves batched in their order and their
        semi-join reductions' types grouped together; False (nothing changed) if it cannot."""
        if not self.serves(plans):
            return False
        self.leaf_types = _leaves_read(plans)[0]
        self._reduced = {key: {self._code[t] for t in types if t in self._code}
                         for key, types in _reduced_types(plans).items()}
        return True

    def first_batch_fixed(self) -> bool:
        """Whether every key's first grouping (:meth:`prefetch`) holds all its leaves' types, so that it is
        the same whichever joins and reduction the planner chooses: at most
        :data:`~jitcep.config.TYPE_BATCH` types per key (or every type, for an untyped leaf or a key coded at
        the leaves' records).  With more, a reduction of the default plans would group every type of its
        chain at once, a plan without one only as its joins reach them."""
        return all(self.coding[key][0] == "records" or len(self.leaf_types.get(key, ())) <= config.TYPE_BATCH
                   for key in self.coding)

    def prefetch(self) -> None:
        """Code each key and group the first batch of its leaves' types, as the first scans would:
        :func:`jitcep.runtime.prepare` runs this before the planner, which reads a rare type's count and
        positions from the grouping (:meth:`grouped`)."""
        for key in self.coding:
            self.key_codes(key)
            first = next((self._code[t] for t in self.leaf_types.get(key, ()) if t in self._code), None)
            if first is not None:
                self.type_groups(key, frozenset([first]))

    def grouped(self, key: tuple[str, ...], codes: frozenset[int]):
        """(recs, offsets) of a batch of :meth:`type_groups` already made for ``key`` that holds every type
        code of ``codes``, else None (nothing is grouped here): the planner reads a rare type's exact count
        and positions from the grouping the run makes anyway (:func:`jitcep.runtime.prepare`)."""
        for have, recs, off, _ in self._types.get(key, ()):
            if codes <= have:
                return recs, off
        return None

    def type_groups(self, key: tuple[str, ...], codes: frozenset[int]):
        """(recs, offsets, runs): positions grouped by type code (``codes`` among them), with key code and
        timestamp; ``runs`` None, or per type code its key offsets: its records are then grouped by key
        too (:func:`~jitcep.kernels.grouping.group_with_key_runs`), so that a leaf of one type without a
        filter is its records split, not grouped by key again.

        :func:`~jitcep.kernels.grouping.group_with_keys` records: one
        sequential pass over type codes, key codes and timestamps serves the
        leaves of up to :data:`jitcep.config.TYPE_BATCH` types, of every
        pattern with this key; a leaf then reads its candidates, their keys
        and times contiguously instead of gathering them at scattered
        positions.  Events whose key is null are left out here (they join
        nothing).  Types are grouped in batches, in the order the plans build
        their leaves, when a leaf first needs one: a long SEQ whose partial
        matches die out (its joins then skip their right inputs) never groups
        the types of the leaves it does not build.  The leaves a semi-join
        reduction reads all come first, so their types are one batch, whatever
        their number (seq_len24: one pass over the events for its 24 types
        took 5.6 ms, three batches of eight 10.3 ms).
        """
        if key not in self._keys:
            self.key_codes(key)  # a key coded at records groups its leaves' types as it codes them
        batches = self._types.setdefault(key, [])
        for have, recs, off, runs in batches:
            if codes <= have:
                return recs, off, runs
        if self.coding[key][0] == "records":  # its batch holds every type a leaf of this key reads
            raise RuntimeError(f"internal: key {key} was coded for the leaves' types only; a leaf asks for others")
        names = self.type_names
        wanted = self.leaf_types.get(key)
        if wanted is None:  # no plan said which types: all of them
            batch = set(range(len(names)))
        else:
            done = set().union(*(have for have, _, _, _ in batches))
            batch = set(codes)
            reduced = self._reduced.get(key, set())
            if batch & reduced:
                batch |= reduced - done
            for t in wanted:
                c = self._code.get(t)
                if len(batch) >= config.TYPE_BATCH:
                    break
                if c is not None and c not in done:
                    batch.add(c)
        keep = np.zeros(len(names), dtype=np.bool_)
        keep[sorted(batch)] = True
        kc, G, valid, base = self.key_codes(key)
        order = sorted(batch)
        if kc is None:  # one partition: each type's records are its one key's
            recs, off = group_with_keys(self.type_code, len(names), None, self.table.ts, keep, valid, base,
                                        threads=self.threads)
            runs = {c: off[c:c + 2] for c in order}
        else:
            recs, off, koff = group_with_key_runs(self.type_code, len(names), kc, G, self.table.ts, keep,
                                                  valid, base, threads=self.threads)
            runs = None if koff is None else dict(zip(order, koff))
        batches.append((frozenset(batch), recs, off, runs))
        return recs, off, runs

    def all_events(self, key: tuple[str, ...]) -> np.ndarray:
        """Records (as :meth:`type_groups`) of every event with a non-null key, in position order."""
        kc, _, valid, base = self.key_codes(key)
        return group_with_keys(np.zeros(self.table.n, np.int8), 1, kc, self.table.ts, None, valid, base,
                               threads=self.threads)[0]

    def key_codes(self, key: tuple[str, ...]) -> tuple[np.ndarray | None, int, np.ndarray | None, int]:
        """(codes, G, valid, base): partition codes of a plan with equivalence key ``key``, made as its
        coding says (:mod:`jitcep.plan.rules.key_coding`).

        The partition of event i is ``codes[i] - base``; ``codes`` None, G 1:
        one partition.  A null key joins nothing: its code is -1, or ``valid``
        (when not None) is False there.  With ``partition_by=`` streams the
        code combines the stream and the key.
        """
        got = self._keys.get(key)
        if got is None:
            got = self._keys[key] = self._make_codes(key)
        return got

    def _make_codes(self, key):
        table = self.table
        coding, bounds = self.coding[key]
        col = table.columns.get(key[0]) if key else None
        codes, G, valid, base = None, 1, None, 0
        if coding == "records":
            return self._code_at_records(key, col)
        if coding == "labels":  # not coded yet: labels, no dictionary (a Categorical: no pass at all)
            codes, G = col.labels() or (col.values, len(col.dictionary))
            valid = col.valid
        elif coding == "types":  # a null type is code -1 already (and a type no leaf reads, numbered by the run)
            codes, G = self.type_code, len(self.type_names)
        elif coding == "values":
            codes, valid = col.values, col.valid
            if bounds is not None:
                G, base = bounds[1] - bounds[0] + 1, bounds[0]
        elif coding == "dense":
            part = table.partition
            if part is None or part.independent or tuple(part.key) != key:
                part = build_partition(table, key)
            codes, G = part.key_code, len(part.offsets) - 1
        if self.streams is not None:
            s, S = self.streams.key_code, len(self.streams.offsets) - 1
            if codes is None:
                codes, G = s, S
            else:
                null = codes < 0
                codes, G = dense_codes(s * max(G, 1) + codes, ~null if null.any() else None)
        return codes, G, valid, base

    def _code_at_records(self, key, col):
        """Code a String key only on the events of the types the leaves read: those types are grouped
        in one pass, as the batch every leaf then reads (:meth:`~jitcep.events.Column.codes_at`)."""
        table = self.table
        keep = np.zeros(len(self.type_names), dtype=np.bool_)
        codes = frozenset(self._code[t] for t in self.leaf_types[key] if t in self._code)
        keep[sorted(codes)] = True
        G = 0

        def key_of(positions):
            nonlocal G
            kc, G = col.codes_at(positions)
            return kc

        recs, off = group_with_keys(self.type_code, len(self.type_names), None, table.ts, keep, col.valid,
                                    key_of=key_of, threads=self.threads)
        self._types[key] = [(codes, recs, off, None)]
        return None, G, col.valid, 0

    def stream_positions(self) -> np.ndarray:
        """Each event's position inside its ``partition_by`` stream (the count-window measure)."""
        if self._stream_pos is None:
            self._stream_pos = stream_positions(self.streams.order, self.streams.offsets, self.table.n)
        return self._stream_pos


RUN_TYPES_MAX = 8
"""The most types a run numbers on its own (:func:`run_types`): one pass compares each event's view with
every name (0.74 ms for 3 names, 0.97 for 8 at 10^6 events, against 1.0-1.1 ms to code every name, which
a hash probe does at any number; perf/notes/fixed_costs.md, "Type codes only where read")."""


def run_types(table: EventTable, leaf_types: dict, untyped: set, plans: list[PhysicalPlan]):
    """(names, codes): the types the plans' leaves read (sorted, so that the contexts of one run share
    the pass) and each event's code among them (-1 for the others and the null type), when the table's
    type codes are not read yet and these can be read from its type column's views
    (:meth:`EventTable.run_type_codes`); else None, and the run uses the table's codes.  A plan with an
    untyped leaf, or one that says nothing of its types, reads every type: None then too."""
    if untyped or not plans or any(p.key not in leaf_types for p in plans):
        return None
    names = tuple(sorted({t for types in leaf_types.values() for t in types}))
    if len(names) > RUN_TYPES_MAX:
        return None
    codes = table.run_type_codes(names)
    return None if codes is None else (names, codes)


def _leaves_read(plans: list[PhysicalPlan]) -> tuple[dict[tuple[str, ...], dict[str, None]], set[tuple[str, ...]]]:
    """(per key: the types the plans' leaves ask for, in the order the plans build them (type_groups
    batches them so), the keys of plans with an untyped leaf)."""
    leaf_types: dict[tuple[str, ...], dict[str, None]] = {}
    untyped: set[tuple[str, ...]] = set()
    for plan in plans:
        types, any_untyped, _ = plan.reads
        if any_untyped:
            untyped.add(plan.key)
        if types is not None:
            leaf_types.setdefault(plan.key, {}).update(dict.fromkeys(types))
    return leaf_types, untyped


def _reduced_types(plans: list[PhysicalPlan]) -> dict[tuple[str, ...], set[str]]:
    """Per key: the types of the leaves a semi-join reduction of some plan reads before any join."""
    out: dict[tuple[str, ...], set[str]] = {}
    for plan in plans:
        reduced = plan.reads.reduced
        if reduced:
            out.setdefault(plan.key, set()).update(reduced)
    return out


def _reads(plans: list[PhysicalPlan]) -> tuple:
    """What a context's key codings and type groups depend on in ``plans``: their keys, the types each
    key's leaves read (as a set: the order only batches them) and the keys with an untyped leaf."""
    leaf_types, untyped = _leaves_read(plans)
    return {p.key for p in plans}, {k: set(v) for k, v in leaf_types.items()}, untyped
