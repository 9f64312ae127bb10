"""The compiled engine: walk a plan bottom-up over an event table, calling the Numba kernels.

``evaluate(patterns, table, options, plan=None) -> list[MatchTable]`` has the
signature and result of :func:`jitcep.reference.evaluate` (one canonical match
table per pattern).  What it covers (:func:`check_supported`): SEQ / AND / OR
of positive variables, nested; negations (docs/semantics.md section 7) as
elements of SEQ / AND; one Kleene array variable as an item of the top-level
SEQ under ``kleene="all"`` or ``"maximal"`` (sections 6.1, 6.2), with
member-wise, iterative (``v[i-1]``, under ``"all"``) and list conjuncts
(aggregates, ``v[k]``, ``v[v.LEN]``), also next to negations whose
conditions do not mention it (not under ``nondecreasing_ts``);
every other predicate kind of section 4; ``[attr]`` keys; time, count and
unbounded windows; the three orders; ``strategy="skip_till_any_match"``,
``output="all"``, no contiguity / freeze / consume policies.  Anything else
raises :class:`~jitcep.errors.UnsupportedPatternError` *before* any work, so
the caller can fall back to the reference evaluator; this engine never
returns an answer for a pattern it does not cover.

Execution follows ZStream section 4: leaf buffers hold the events of each
variable sorted by (key partition, position); every join consumes two buffers
sorted by end and produces one (:mod:`jitcep.kernels.join`); value predicates
are applied to the kernel's candidate pairs by the pattern's generated
predicate function (:mod:`jitcep.codegen`).

Negation follows ZStream 4.4.2 (NSEQ, negation pushed down): a negated variable
is a leaf of its type and filters; a record of a join is dropped when some
event of that leaf lies in the record's section 7 range (two binary searches
per record, :mod:`jitcep.kernels.negation`) and passes every condition that
mentions it (generated predicates over (record, event) pairs).  A negation
whose range only its SEQ neighbours fix is applied right after the lowest join
covering them and its conditions' variables, so killed partial matches never
reach the joins above; one bounded by the window or an AND span, or under
``nondecreasing_ts`` (where a positive event outside the node may tie into
the range), is applied to whole matches.

A Kleene array variable follows ZStream 4.4.5 (KSEQ): the plan of the other
variables runs first, then each match collects the qualifying events of the
closure's leaf in its range (found like a negation's range); under
``kleene="maximal"`` they are its list, cut by the bounds, under ``"all"``
every subsequence of them the bounds allow is a list (:meth:`_PatternRun.kleene`),
whose consecutive members pass the iterative conjuncts (each ordered pair of
a match's members tested once, :meth:`_PatternRun.follows`).  With a closure,
negations run last, on whole (match, list) records, since a list's first or
last member may bound their range (:meth:`_PatternRun.killed_lists`).

Leaves are built in a few linear passes (issue 3: this is where time goes):
one grouping of the positions of the types some leaf reads, carrying each
position's key code and timestamp (shared by every leaf), filters evaluated
only over the events of the leaf's types, and one counting pass by key over
only the surviving events.  A key that is ``type`` uses the type codes as
partition codes, a string column its labels (a Categorical's category ids; a
String coded in one pass without its dictionary, or only at the events of the
leaves' types when they are few: :meth:`_TableContext._key_at_records`), a
narrow-range integer key its values (no partition pass).  A SEQ / AND join whose left input is empty
does not build its right subtree.  Every buffer carries its records' start
and end times, so the joins read times in record order instead of at
scattered positions (a cache miss per record at 10^7 events).  The kernels'
large outputs are allocated by NumPy, which advises them for huge pages, and
the grouping loops are branch-free (:mod:`jitcep.kernels.alloc`,
:mod:`jitcep.kernels.grouping`).

A ``partition_by=`` table (independent streams, docs/semantics.md section 13)
runs in the same single call: partitions are (stream, ``[attr]`` key) pairs,
so joins never mix streams, and a count window measures positions inside the
stream.  Results equal :func:`jitcep.events.evaluate_per_partition` over this
engine, without a Python call per stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import warmup
from ._memo import PerObject
from .budget import MemoryBudget, nbytes
from .codegen import PredicateSet
from .codegen.predicates import ColumnSpec
from .errors import AttributeTypeError, ExplosionError, MissingColumnError, MissingWindowError, UnsupportedPatternError
from .events import Column, EventTable, build_partition, check_types, window_span
from .kernels import and_join, group_with_keys, leaf_by_key, seq_join, stream_positions
from .kernels.grouping import record_fields
from .kernels.encode import dense_codes, value_range
from .kernels.kleene import closure_runs, gather_lists, member_pairs, segment_aggregate, subsequences
from .kernels.negation import candidate_pairs, killed_unconditionally, negation_ranges
from .kernels.window import MAX_SPAN, spans_within
from .matches import MatchTable
from .options import Options
from .pattern import expr as E
from .pattern.ast import CountWindow, Pattern, Unbounded
from .plan.nodes import Join, KleeneLeaf, Leaf, NegLeaf, Plan, build_plan, map_expr, prev_var

_NEG_PAIR_BUDGET = 1 << 20  # (record, negated event) pairs tested per chunk: bounds memory, not work
_TYPE_BATCH = 8  # types grouped per pass over the events (_TableContext.type_groups)
# A String key is coded at the records of the leaves' types alone when those are at most this share of
# the events (estimated from every _SAMPLE_STEP-th event): a record costs more than a row of the full
# pass (its view is gathered), and all those types are grouped at once, also ones no leaf may get to
# read.  Measured (perf/bench_seq.py str data, 10^7 events): 3 / 12 of 32 types read end to end
# 83 -> 71 / 86-89 -> 80 ms, 24 of 32: 82-93 -> 107-117 ms had it applied.
_KEY_AT_RECORDS = 0.5
_SAMPLE_STEP = 64


@dataclass
class Buffer:
    """A node buffer (ZStream 4.2): records sorted by (partition, end), with their start and end times."""

    vars: tuple[str, ...]
    pos: np.ndarray      # (m, k) int64 event positions, -1 = unbound (OR branch not taken)
    start: np.ndarray    # (m,) first position of each record
    end: np.ndarray      # (m,) last position of each record
    goff: np.ndarray     # (G + 1,) partition offsets
    tstart: np.ndarray   # (m,) ts[start]: the joins read times in record order, not at scattered positions
    tend: np.ndarray     # (m,) ts[end]
    wstart: np.ndarray   # (m,) wt[start] (the window measure; the tstart array itself for a time window)
    wend: np.ndarray     # (m,) wt[end]

    def as_tuple(self):
        return (self.pos, self.start, self.end, self.goff)

    def timed(self):
        """The 8-tuple the join kernels take (:mod:`jitcep.kernels.join`)."""
        return (self.pos, self.start, self.end, self.goff, self.tstart, self.tend, self.wstart, self.wend)

    def take(self, idx: np.ndarray, goff: np.ndarray) -> "Buffer":
        """Records ``idx`` (in order) with partition offsets ``goff``."""
        wstart = self.tstart is self.wstart
        tstart, tend = self.tstart[idx], self.tend[idx]
        return Buffer(self.vars, self.pos[idx], self.start[idx], self.end[idx], goff, tstart, tend,
                      tstart if wstart else self.wstart[idx], tend if wstart else self.wend[idx])


_default_plan = PerObject(build_plan)  # an analyst reruns one query (jitcep._memo)


def check_supported(pattern: Pattern, options: Options) -> Plan:
    """Raise UnsupportedPatternError if this engine does not cover ``pattern`` under ``options``.

    Returns the pattern's default plan (building it is part of the check).
    """
    if options.strategy != "skip_till_any_match":
        raise UnsupportedPatternError(f"the compiled engine does not implement strategy={options.strategy!r} yet")
    if options.output != "all":
        raise UnsupportedPatternError(f"the compiled engine does not implement output={options.output!r} yet")
    if options.contiguous or options.freeze or options.consume_types is not None:
        raise UnsupportedPatternError("the compiled engine does not implement contiguous/freeze/consume policies yet")
    if pattern.window is None:
        raise MissingWindowError("the pattern has no WITHIN; write WITHIN UNBOUNDED to ask for no window")
    # raises for Kleene groups, Kleene references it cannot place, cross-branch predicates
    plan = _default_plan(pattern)
    if plan.kleene is not None and plan.negations and options.order == "nondecreasing_ts":
        # ties let a list's middle members into a negation's range: they are no candidates (section 3),
        # but the records hold only the bounding members
        raise UnsupportedPatternError("the compiled engine does not combine a Kleene closure and a negation "
                                      "under order=\"nondecreasing_ts\" yet")
    if plan.kleene is not None and plan.kleene.prev and options.kleene == "maximal":
        raise UnsupportedPatternError("kleene=\"maximal\" takes every qualifying event, so an iterative predicate "
                                      "(v[i-1]) cannot hold between them (semantics section 6.2)")
    return plan


def evaluate(patterns, table: EventTable, options: Options, plan=None) -> list[MatchTable]:
    """Matches of each pattern over ``table``, canonical order (same contract as the reference).

    ``plan``: None (default plan per pattern), or for each pattern a
    :class:`~jitcep.plan.Plan` or a plan shape (nested pairs of variable names),
    as one item for a single pattern or a list with one entry per pattern.

    Raises UnsupportedPatternError (before any work) for what the engine does
    not cover, ExplosionError past ``options.max_partials`` candidate pairs in
    one join or ``options.max_matches`` matches in total.
    """
    if isinstance(patterns, Pattern):
        patterns = [patterns]
    patterns = list(patterns)
    if plan is None or isinstance(plan, (Plan, str, tuple)):
        plans_in = [plan] * len(patterns) if len(patterns) == 1 or plan is None else None
        if plans_in is None:
            raise UnsupportedPatternError("give one plan per pattern (a list) when running several patterns")
    else:
        plans_in = list(plan)
        if len(plans_in) != len(patterns):
            raise UnsupportedPatternError(f"{len(plans_in)} plans for {len(patterns)} patterns")
    plans = []
    for pat, p in zip(patterns, plans_in):
        default = check_supported(pat, options)
        plans.append(p if isinstance(p, Plan) else default if p is None else build_plan(pat, p))
    check_types(patterns, table)  # every pattern's kinds (semantics section 4), before any work
    warmup.notice()  # the kernels' first compilation takes seconds: say so on a terminal
    ctx = _TableContext(table)
    for pl_ in plans:  # the types leaves read, in the order the plans build them (type_groups batches them)
        for n in (*pl_.nodes(), *pl_.negations, *((pl_.kleene,) if pl_.kleene is not None else ())):
            if isinstance(n, (Leaf, NegLeaf, KleeneLeaf)):
                if n.types is None:
                    ctx.untyped.add(pl_.key)
                else:
                    ctx.leaf_types.setdefault(pl_.key, {}).update(dict.fromkeys(n.types))
    out, total = [], 0
    for pat, pl_ in zip(patterns, plans):
        mt = _PatternRun(pat, pl_, ctx, options).run()
        total += mt.n
        if total > options.max_matches:
            raise ExplosionError(f"more than max_matches={options.max_matches} matches; raise the cap "
                                 f"or narrow the pattern")
        out.append(mt)
    warmup.mark_cached()
    return out


class _TableContext:
    """Per-table work shared by every pattern of one run: the type grouping and key partitions.

    A ``partition_by=`` table (``Partition.independent``, semantics section 13)
    is evaluated in one call over all its streams: every plan partitions by the
    stream *and* its own ``[attr]`` key, so records of different streams never
    meet in a join, and a count window measures positions inside the stream.
    """

    def __init__(self, table: EventTable):
        self.table = table
        part = table.partition
        self.streams = part if part is not None and part.independent else None
        self._types: dict[tuple[str, ...], list[tuple[frozenset[int], np.ndarray, np.ndarray]]] = {}
        self._keys: dict[tuple[str, ...], tuple[np.ndarray | None, int]] = {}
        self._stream_pos = None
        self._code = {t: i for i, t in enumerate(table.type_names)}
        self.leaf_types: dict[tuple[str, ...], dict[str, None]] = {}  # per key: the types leaves ask for, in order
        self.untyped: set[tuple[str, ...]] = set()  # keys of plans with an untyped leaf (it reads every event)
        self._at_records: set[tuple[str, ...]] = set()  # keys coded at their leaves' records (_key_at_records)

    def type_groups(self, key: tuple[str, ...], codes: frozenset[int]):
        """(recs, offsets): positions grouped by type code (``codes`` among them), with key code and timestamp.

        :func:`~jitcep.kernels.grouping.group_with_keys` records: one
        sequential pass over type codes, key codes and timestamps serves the
        leaves of up to :data:`_TYPE_BATCH` types, of every pattern with this
        key; a leaf then reads its candidates, their keys and times
        contiguously instead of gathering them at scattered positions.
        Events whose key is null are left out here (they join nothing).
        Types are grouped in batches, in the order the plans build their
        leaves, when a leaf first needs one: a pass costs about the same for
        one type or eight, and a long SEQ whose partial matches die out (its
        joins then skip their right inputs) never groups the types of the
        leaves it does not build.
        """
        batches = self._types.setdefault(key, [])
        for have, recs, off in batches:
            if codes <= have:
                return recs, off
        if key in self._at_records:  # cannot happen: its batch holds every type a leaf of this key reads
            raise RuntimeError(f"internal: key {key} was coded for the leaves' types only; a leaf asks for others")
        names = self.table.type_names
        wanted = self.leaf_types.get(key)
        if wanted is None:  # no plan said which types: all of them
            batch = set(range(len(names)))
        else:
            done = set().union(*(have for have, _, _ in batches))
            batch = set(codes)
            for t in wanted:
                c = self._code.get(t)
                if len(batch) >= _TYPE_BATCH:
                    break
                if c is not None and c not in done:
                    batch.add(c)
        keep = np.zeros(len(names), dtype=np.bool_)
        keep[sorted(batch)] = True
        kc, _, valid, base = self.key_codes(key)
        recs, off = group_with_keys(self.table.type_code, len(names), kc, self.table.ts, keep, valid, base)
        batches.append((frozenset(batch), recs, off))
        return recs, off

    def all_events(self, key: tuple[str, ...]) -> np.ndarray:
        """Records (as :meth:`type_groups`) of every event with a non-null key, in position order."""
        kc, _, valid, base = self.key_codes(key)
        return group_with_keys(np.zeros(self.table.n, np.int8), 1, kc, self.table.ts, None, valid, base)[0]

    def key_codes(self, key: tuple[str, ...]) -> tuple[np.ndarray | None, int, np.ndarray | None, int]:
        """(codes, G, valid, base): partition codes of a plan with equivalence key ``key``.

        The partition of event i is ``codes[i] - base``; ``codes`` None, G 1:
        one partition.  A null key joins nothing: its code is -1, or ``valid``
        (when not None) is False there.  A key that is one ``str`` column, the
        ``type`` pseudo-attribute or a narrow-range integer column uses the
        column as it is (:meth:`_column_codes`): no coding pass over the
        events, no full-length copy.  With ``partition_by=`` streams the code
        combines the stream and the key.
        """
        if key not in self._keys and self._key_at_records(key):
            return self._keys[key]
        if key not in self._keys:
            codes, G, valid, base = None, 1, None, 0
            direct = self._column_codes(key) if self.streams is None else None
            if direct is not None:
                codes, G, valid, base = direct
            elif key:
                part = self.table.partition
                if part is None or part.independent or tuple(part.key) != key:
                    part = build_partition(self.table, key)
                codes, G = part.key_code, len(part.offsets) - 1
            if self.streams is not None:
                s = self.streams.key_code
                S = len(self.streams.offsets) - 1
                if codes is None:
                    codes, G = s, S
                else:
                    null = codes < 0
                    codes, G = dense_codes(s * max(G, 1) + codes, ~null if null.any() else None)
            self._keys[key] = (codes, G, valid, base)
        return self._keys[key]

    def _key_at_records(self, key: tuple[str, ...]) -> bool:
        """Code a String key only on the events of the types the leaves read, when they are few.

        A String key column not coded yet (:attr:`jitcep.events.Column.string_input`)
        would cost a coding pass over every event; when the leaves' types are at
        most :data:`_KEY_AT_RECORDS` of the events (estimated from a sample), all
        those types are grouped in one pass instead, as the batch every leaf then
        reads, and the key is coded at their records only
        (:meth:`~jitcep.events.Column.codes_at`).  Returns whether it did.
        """
        table = self.table
        col = table.columns.get(key[0]) if len(key) == 1 and self.streams is None else None
        types = self.leaf_types.get(key)
        if (col is None or col.kind != "str" or not col.string_input or key in self.untyped or types is None
                or not table.type_names):
            return False
        keep = np.zeros(len(table.type_names) + 1, dtype=np.bool_)  # by type code + 1 (a null type is -1)
        codes = frozenset(self._code[t] for t in types if t in self._code)
        keep[[c + 1 for c in codes]] = True
        sample = table.type_code[::_SAMPLE_STEP]
        if len(sample) and keep[sample + 1].mean() > _KEY_AT_RECORDS:
            return False
        G = 0

        def key_of(positions):
            nonlocal G
            kc, G = col.codes_at(positions)
            return kc

        recs, off = group_with_keys(table.type_code, len(table.type_names), None, table.ts, keep[1:], col.valid,
                                    key_of=key_of)
        self._types[key] = [(codes, recs, off)]
        self._keys[key] = (None, G, col.valid, 0)
        self._at_records.add(key)
        return True

    def _column_codes(self, key: tuple[str, ...]):
        """(codes, G, valid, base) of a key whose column values serve as codes; None for other keys.

        One ``str`` column: its labels (:meth:`~jitcep.events.Column.labels`) or dictionary codes; ``type``:
        the type codes (base 0).  One
        integer column whose values span a narrow range: the values
        themselves, less the minimum (``base``, subtracted by the grouping),
        one partition per value of the range — a min/max pass instead of
        coding every event.
        """
        if len(key) != 1:
            return None
        table, attr = self.table, key[0]
        col = table.columns.get(attr)
        if col is not None:
            if col.kind == "str":  # not coded yet: labels, no dictionary (a Categorical: no pass at all)
                codes, G = col.labels() or (col.values, len(col.dictionary))
                return codes, G, col.valid, 0
            if col.kind == "int":
                bounds = value_range(col.values, col.valid)
                if bounds is None:  # every key is null: nothing joins
                    return col.values, 1, col.valid, 0
                lo, hi = bounds
                if hi - lo < max(table.n // 8, 1 << 16):  # goff arrays (G + 1) stay small next to n
                    return col.values, hi - lo + 1, col.valid, lo
            return None
        if attr == "type":  # a null type is code -1 already
            return table.type_code, len(table.type_names), None, 0
        return None

    def stream_positions(self) -> np.ndarray:
        """Each event's position inside its ``partition_by`` stream (the count-window measure)."""
        if self._stream_pos is None:
            self._stream_pos = stream_positions(self.streams.order, self.streams.offsets, self.table.n)
        return self._stream_pos


def _column_specs(table: EventTable, preds) -> dict[str, ColumnSpec]:
    """Specs of the columns ``preds`` read (``type`` is the type name unless the input has such a column)."""
    used = {n.attr for p in preds for n in E.walk(p) if isinstance(n, E.Attr)}
    specs = {}
    for name in used:
        col = table.columns.get(name)
        if col is not None:
            specs[name] = ColumnSpec(name, col.temporal or col.kind, col.valid is not None)
        elif name == "type":
            specs[name] = ColumnSpec(name, "str", True)
    return specs


def _types_overlap(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> bool:
    return a is None or b is None or bool(set(a) & set(b))


class _PatternRun:
    def __init__(self, pattern: Pattern, plan: Plan, ctx: _TableContext, options: Options):
        self.pattern, self.plan, self.ctx, self.options = pattern, plan, ctx, options
        table = ctx.table
        self.table = table
        nodes = plan.nodes()
        self.leaf_types = {n.var: n.types for n in nodes if isinstance(n, Leaf)}
        preds = list(plan.constant)
        preds += [n.filter for n in nodes if isinstance(n, Leaf) and n.filter is not None]
        preds += [p for n in nodes if isinstance(n, Join) for p in n.predicates]
        preds += [n.filter for n in plan.negations if n.filter is not None]
        preds += [p for n in plan.negations for p in n.conds]
        if plan.kleene is not None:
            preds += [p for p in (plan.kleene.filter, *plan.kleene.member, *plan.kleene.prev) if p is not None]
        self.pid = {id(p): i for i, p in enumerate(preds)}
        self.preds = PredicateSet(preds, _column_specs(table, preds))
        needs_type = "type" in self.preds.column_names and "type" not in table.columns
        self.bound = self.preds.bind(_TypeView(table) if needs_type else table) if preds else ()
        # window: wt is the measure, W the inclusive bound (docs/semantics.md section 2)
        window = plan.window
        if isinstance(window, CountWindow):
            # positions count inside the stream (semantics section 13); within one stream
            # the order of global positions is the stream's order, so only the measure changes
            wt = ctx.stream_positions() if ctx.streams is not None else np.arange(table.n, dtype=np.int64)
            self.wt, self.W = wt, int(window.n) - 1
        elif isinstance(window, Unbounded):
            self.wt, self.W = table.ts, MAX_SPAN  # no pair of int64 times is farther apart
        else:
            self.wt, self.W = table.ts, window_span(window, table)
        self.G = ctx.key_codes(plan.key)[1]
        # negations applied on the lowest join covering their anchor (pushed down, ZStream 4.4.2)
        # when the order cannot put a positive event inside their range; the rest on whole matches
        pushable = options.order != "nondecreasing_ts"
        self.pending = [n for n in plan.negations if pushable and n.anchor is not None]
        self.at_root = [n for n in plan.negations if not (pushable and n.anchor is not None)]
        self.unfiltered: dict[tuple[str, ...] | None, tuple] = {}  # leaf arrays by types (no filter)
        self.memory = MemoryBudget(options.max_memory)

    def mask(self, pred: E.Expr, P: np.ndarray) -> np.ndarray:
        return self.preds.mask(self.pid[id(pred)], P, self.bound)

    def mask_where_bound(self, pred: E.Expr, P: np.ndarray) -> np.ndarray:
        """:meth:`mask` over the columns of ``P`` whose variables are all bound, True elsewhere.

        A conjunct with an unbound variable (an OR branch not taken) does not
        apply (semantics section 4).
        """
        bound = (P >= 0).all(axis=0)
        if bound.all():
            return self.mask(pred, P)
        keep = np.ones(P.shape[1], dtype=np.bool_)
        if bound.any():
            keep[bound] = self.mask(pred, P[:, bound])
        return keep

    def pairs_pass(self, buf: Buffer, conds, rec: np.ndarray, extra: dict[str, np.ndarray]) -> np.ndarray:
        """Which records ``rec[i]`` of ``buf``, each with the events ``extra[v][i]`` bound to the
        variables ``v`` of ``extra``, pass every conjunct.

        Each conjunct is tested only on the candidates still passing.
        """
        ok = np.ones(len(rec), dtype=np.bool_)
        for c in conds:
            idx = np.flatnonzero(ok)
            if not len(idx):
                break
            vs = sorted(E.variables(c))
            P = np.empty((len(vs), len(idx)), dtype=np.int64)
            for k, v in enumerate(vs):
                P[k] = extra[v][idx] if v in extra else buf.pos[rec[idx], buf.vars.index(v)]
            ok[idx] = self.mask_where_bound(c, P)
        return ok

    def run(self) -> MatchTable:
        table, plan = self.table, self.plan
        names = [v for v in _var_order(plan.root)]
        # a conjunct that mentions no variable applies to every match (section 4); a negative
        # window admits no match; either way the result still has every variable's column
        no_match = MatchTable.from_bindings([], names, () if plan.kleene is None else (plan.kleene.var,))
        for c in plan.constant:
            if not self.mask(c, np.zeros((0, 1), np.int64))[0]:
                return no_match
        if self.W < 0:
            return no_match
        buf = self.node(plan.root)
        # pending: anchored on a single-leaf root; with a closure the rest waits for the lists
        for neg in self.pending + (self.at_root if plan.kleene is None else []):
            buf = self.negate(buf, neg)
        single = {v: np.ascontiguousarray(buf.pos[:, buf.vars.index(v)]) for v in names}
        if plan.kleene is not None:
            return self.kleene(buf, single, plan.kleene).canonical()
        return MatchTable(len(buf.start), single, {}).canonical()

    def kleene(self, buf: Buffer, single: dict, K: KleeneLeaf) -> MatchTable:
        """The closure's lists for every match of the other variables (ZStream KSEQ 4.4.5, semantics 6).

        The members are the qualifying events of the Kleene leaf in the
        match's range (found as a negation's range, two binary searches per
        match); member-wise conjuncts that mention other variables are tested
        on (match, event) pairs by the generated predicates.  The bounds then
        make the lists: under ``kleene="maximal"`` (6.2) the one list, or
        ZStream's sliding runs for ``{n,m}``; under ``kleene="all"`` (6.1) every
        subsequence of the members whose length they allow, at most
        ``max_kleene`` per match.  List conjuncts (aggregates, ``v[k]``,
        ``v[v.LEN]``) are evaluated once per list over per-list columns.
        """
        m = len(buf.start)
        leaf = self.leaf(K)
        cand, cgoff = leaf.start, leaf.goff
        bcols = [buf.vars.index(v) for v in K.before]
        acols = [buf.vars.index(v) for v in K.after]
        lo, hi = negation_ranges(buf.as_tuple(), (cand, cgoff), self.table.ts, self.wt, self.W,
                                 self.options.order, bcols, acols, False)
        skip = np.zeros(m, dtype=np.bool_)
        recs, evs = [], []
        kept = 0
        r = 0
        while r < m:  # pairs in (match, position) order: each match's members come out in position order
            rec, ev, r = candidate_pairs(buf.pos, lo, hi, cand, skip, r, _NEG_PAIR_BUDGET)
            ok = self.pairs_pass(buf, K.member, rec, {K.var: ev})
            recs.append(rec[ok])
            evs.append(ev[ok])
            kept += len(recs[-1])
            # each kept (match, member) pair is 16 bytes, and is copied once more when the chunks join
            self.memory.check(32 * kept, f"the members of Kleene variable {K.var!r}", buf, leaf)
        rec = np.concatenate(recs) if recs else np.zeros(0, np.int64)
        members = np.concatenate(evs) if evs else np.zeros(0, np.int64)
        offsets = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(np.bincount(rec, minlength=m), out=offsets[1:])
        if self.options.kleene == "maximal":
            src, start, length = closure_runs(offsets, K.min, K.max)
            self.memory.check(8 * (int(length.sum()) + 2 * len(src)), f"the lists of Kleene variable {K.var!r}",
                              buf, members, src, start, length)
            off, lpos = gather_lists(members, start, length)
        else:
            follows = self.follows(buf, K, offsets, members) if K.prev else None
            room = self.memory.limit - nbytes(buf, members, offsets, follows)
            src, off, lpos, over = subsequences(offsets, members, self.table.ts, self.options.order == "strict_ts",
                                                K.min, K.max, self.options.max_kleene, self.options.max_matches,
                                                follows, room=room)
            if over == -3:
                raise self.memory.error(f"the lists of Kleene variable {K.var!r}")
            if over == -2:
                raise ExplosionError(f"more than max_matches={self.options.max_matches} matches; raise the cap "
                                     f"or narrow the pattern")
            if over >= 0:
                raise ExplosionError(
                    f"Kleene variable {K.var!r} has more than max_kleene={self.options.max_kleene} lists for one "
                    f"binding of the other variables; raise the cap with jitcep.compile(..., max_kleene=N), "
                    f"bound the closure ({{n,m}}), or use kleene=\"maximal\"")
        if self.options.order == "nondecreasing_ts" and len(src):
            # members tied in time with a neighbour may lie on its other side by position, so a
            # list can stretch the match past the window although each member fits alone (section 2);
            # a maximal list that does is no match: no smaller list is tried (section 6.2)
            _, _, start, end = _list_span(buf, src, off, lpos)
            keep = np.flatnonzero(spans_within(self.wt[start], self.wt[end], self.W))
            src, off, lpos = _keep_lists(keep, src, off, lpos)
        if K.lists and len(src):
            keep = np.flatnonzero(self.list_mask(K, {v: c[src] for v, c in single.items()}, off, lpos))
            src, off, lpos = _keep_lists(keep, src, off, lpos)
        if self.at_root and len(src):  # negations with the closure as a neighbour: over whole (match, list)s
            keep = np.flatnonzero(~self.killed_lists(buf, K, src, off, lpos))
            src, off, lpos = _keep_lists(keep, src, off, lpos)
        return MatchTable(len(src), {v: c[src] for v, c in single.items()}, {K.var: (off, lpos)})

    def killed_lists(self, buf: Buffer, K: KleeneLeaf, src: np.ndarray, off: np.ndarray,
                     lpos: np.ndarray) -> np.ndarray:
        """Which (match ``src[j]`` of ``buf``, list j) records some negation kills (semantics section 7).

        A negation next to the closure is bounded by the list: by its last
        member when the closure is before it, its first when after (an empty
        list bounds nothing: the next variable does); the record's span covers
        its members.  Each negation then runs as on any buffer, on records
        whose closure column holds that bounding member.
        """
        first, last, start, end = _list_span(buf, src, off, lpos)
        g = np.repeat(np.arange(self.G), np.diff(buf.goff))[src]
        ts, wt = self.table.ts, self.wt
        killed = np.zeros(len(src), dtype=np.bool_)
        for neg in self.at_root:
            bound = last if K.var in neg.before else first if K.var in neg.after else np.full(len(src), -1)
            recs = Buffer(buf.vars + (K.var,), np.column_stack([buf.pos[src], bound]), start, end, self.goff(g),
                          ts[start], ts[end], wt[start], wt[end])
            killed |= self.killed(recs, neg)
        return killed

    def follows(self, buf: Buffer, K: KleeneLeaf, offsets: np.ndarray, members: np.ndarray) -> np.ndarray:
        """Which member may follow which in a list (SASE+ iterative predicates, ``v[i].x > v[i-1].x``).

        Every ordered pair of a match's members is tested once with the
        generated predicates (``v[i-1]`` bound to the earlier member, ``v[i]``
        to the later), in chunks; the verdicts fill one q x q block per match
        (:func:`~jitcep.kernels.kleene.member_pairs`), which the enumeration reads.
        """
        q = np.diff(offsets)
        pairs = int((q * (q - 1) // 2).sum())
        if pairs > self.options.max_partials:
            raise ExplosionError(f"more than max_partials={self.options.max_partials} pairs of Kleene members to "
                                 f"test against the iterative predicates; raise the cap or narrow the pattern")
        # four indexes per pair and the q x q verdict table
        self.memory.check(32 * pairs + int((q * q).sum()), f"the member pairs of Kleene variable {K.var!r}",
                          buf, offsets, members)
        rec, first, second, slot, size = member_pairs(offsets, members)
        table = np.zeros(size, dtype=np.bool_)
        for lo in range(0, len(rec), _NEG_PAIR_BUDGET):
            part = slice(lo, lo + _NEG_PAIR_BUDGET)
            table[slot[part]] = self.pairs_pass(buf, K.prev, rec[part],
                                                {prev_var(K.var): first[part], K.var: second[part]})
        return table

    def list_mask(self, K: KleeneLeaf, single: dict, off: np.ndarray, lpos: np.ndarray) -> np.ndarray:
        """Which lists satisfy every list conjunct (section 4: aggregates, ``v[k]``, ``v[v.LEN]``).

        Each conjunct is rewritten over one virtual variable whose "event" is
        the (binding, list) and whose columns are the aggregates and the
        gathered attributes, then compiled like any predicate.
        """
        n = len(off) - 1
        lens = np.diff(off)
        src = _TypeView(self.table) if "type" not in self.table.columns else self.table
        cols: dict = {}

        def gather(attr: str, p: np.ndarray):
            if attr in src.columns:
                col = src.columns[attr]
            elif attr == "ts":
                col = Column("int", self.table.ts, None)
            else:
                raise MissingColumnError(f"attribute {attr!r} is not in the events")
            q = np.maximum(p, 0)
            valid = p >= 0
            if col.valid is not None:
                valid &= col.valid[q]
            return Column(col.kind, col.values[q], None if valid.all() else valid, col.dictionary, col.temporal)

        def virt(x):
            if isinstance(x, E.Agg):
                name = f"{x.func}({x.attr})"
                if name not in cols:
                    if x.func == "count":
                        cols[name] = Column("int", lens.astype(np.int64), None)
                    else:
                        c = gather(x.attr, lpos)
                        if c.kind not in ("int", "float"):
                            raise UnsupportedPatternError(f"{x.func} over a {c.kind} attribute {x.attr!r}")
                        if c.temporal is not None and x.func in ("sum", "avg"):  # semantics section 4
                            raise AttributeTypeError(f"{x.func} over the {c.temporal} attribute {x.attr!r}")
                        valid = np.ones(len(lpos), np.bool_) if c.valid is None else c.valid
                        vals, ok = segment_aggregate(off, c.values, valid, x.func)
                        kind = "float" if x.func == "avg" else c.kind
                        cols[name] = Column(kind, vals, None if ok.all() else ok, (), c.temporal)
                return E.Attr("_m", name)
            if isinstance(x, E.Attr):
                if x.var == K.var:
                    name = f"[{x.index}].{x.attr}"
                    if name not in cols:
                        if x.index == "len":
                            p = np.where(lens > 0, lpos[np.maximum(off[1:] - 1, 0)] if len(lpos) else -1, -1)
                        else:
                            k = int(x.index)
                            at = np.minimum(off[:-1] + k - 1, max(len(lpos) - 1, 0))
                            p = np.where(lens >= k, lpos[at] if len(lpos) else -1, -1)
                        cols[name] = gather(x.attr, p)
                else:
                    name = f"{x.var}.{x.attr}"
                    if name not in cols:
                        cols[name] = gather(x.attr, single[x.var])
                return E.Attr("_m", name)
            return None

        conds = [map_expr(c, virt) for c in K.lists]
        specs = {name: ColumnSpec(name, c.temporal or c.kind, c.valid is not None) for name, c in cols.items()}
        ps = PredicateSet(conds, specs)
        bound = ps.bind(_VirtualTable(np.zeros(n, np.int64), cols))
        P = np.arange(n, dtype=np.int64)[None, :]
        keep = np.ones(n, dtype=np.bool_)
        for i, c in enumerate(K.lists):
            others = [v for v in E.variables(c) if v != K.var]
            app = np.ones(n, dtype=np.bool_)
            for v in others:
                app &= single[v] >= 0  # a conjunct on an OR branch not taken does not apply
            if app.any():
                keep[app] &= ps.mask(i, P[:, app], bound)
        return keep

    def node(self, n) -> Buffer:
        if isinstance(n, Leaf):
            return self.leaf(n)
        L = self.node(n.left)
        if n.kind != "OR" and not len(L.start):
            # a SEQ / AND join with an empty input is empty: the right subtree's leaves are never
            # built (a long SEQ whose partial matches die out early costs what its live prefix costs)
            return self.settle(_empty_buffer(L.vars + tuple(_var_order(n.right)), self.G))
        R = self.node(n.right)
        if n.kind == "OR":
            return _union(L, R)
        distinct = any(_types_overlap(self.leaf_types[a], self.leaf_types[b]) for a in L.vars for b in R.vars)
        # a pair costs its three indexes (in arrays grown by doubling) and then its output record, built
        # with about as many temporaries: the join stops at the pairs that fit beside its inputs
        fit = self.memory.records(8 * (6 + 2 * (len(L.vars) + len(R.vars) + 6)), L, R)
        cap = min(self.options.max_partials, fit)
        ts = self.table.ts
        try:
            if n.kind == "SEQ":
                order = self.options.order
                li, ri, g = seq_join(L.timed(), R.timed(), ts, self.wt, self.W, order,
                                     distinct and order == "nondecreasing_ts", cap)
            else:
                li, ri, g = and_join(L.timed(), R.timed(), ts, self.wt, self.W, distinct, cap)
        except ExplosionError:
            if fit < self.options.max_partials:
                raise self.memory.error(f"the {n.kind} join of {', '.join(L.vars)} with {', '.join(R.vars)}")
            raise
        for pred in n.predicates:
            if not len(li):
                break
            vs = sorted(E.variables(pred))
            P = np.empty((len(vs), len(li)), dtype=np.int64)
            for k, v in enumerate(vs):
                P[k] = L.pos[li, L.vars.index(v)] if v in L.vars else R.pos[ri, R.vars.index(v)]
            keep = self.mask_where_bound(pred, P)
            li, ri, g = li[keep], ri[keep], g[keep]
        pos = np.concatenate([L.pos[li], R.pos[ri]], axis=1)
        # ts and wt grow with the position inside a partition: the earlier position has the earlier times
        first = L.start[li] <= R.start[ri]
        last = L.end[li] >= R.end[ri]
        start = np.where(first, L.start[li], R.start[ri])
        end = np.where(last, L.end[li], R.end[ri])
        tstart = np.where(first, L.tstart[li], R.tstart[ri])
        tend = np.where(last, L.tend[li], R.tend[ri])
        same = L.wstart is L.tstart and R.wstart is R.tstart
        wstart = tstart if same else np.where(first, L.wstart[li], R.wstart[ri])
        wend = tend if same else np.where(last, L.wend[li], R.wend[ri])
        buf = Buffer(L.vars + R.vars, pos, start, end, self.goff(g), tstart, tend, wstart, wend)
        if len(end) > 1 and n.kind == "SEQ" and self.options.order == "nondecreasing_ts":
            # with ties the left record may end after the right one: restore (partition, end) order
            if not bool(np.all((g[1:] > g[:-1]) | ((g[1:] == g[:-1]) & (end[1:] >= end[:-1])))):
                buf = buf.take(np.lexsort((end, g)), buf.goff)
        return self.settle(buf)

    def settle(self, buf: Buffer) -> Buffer:
        """Apply the pending negations anchored on ``buf``'s variables (pushed down, ZStream 4.4.2)."""
        here = [neg for neg in self.pending if neg.anchor <= set(buf.vars)]
        for neg in here:
            self.pending.remove(neg)
            buf = self.negate(buf, neg)
        return buf

    def negate(self, buf: Buffer, neg: NegLeaf) -> Buffer:
        """Drop the records some event of ``neg`` kills (docs/semantics.md section 7; ZStream NSEQ)."""
        if not len(buf.start):
            return buf
        killed = self.killed(buf, neg)
        if not killed.any():
            return buf
        keep = np.flatnonzero(~killed)
        g = np.repeat(np.arange(self.G), np.diff(buf.goff))[keep]
        return buf.take(keep, self.goff(g))

    def killed(self, buf: Buffer, neg: NegLeaf) -> np.ndarray:
        """Which records of ``buf`` (not empty) some event of ``neg`` kills.

        The negated leaf is searched for each record's range by the kernel; a
        negation without conditions is decided there, otherwise the pairs
        (record, candidate) are tested with the generated predicates, a chunk
        at a time, and a record dies with its first pair passing every
        condition that applies (a condition whose other variables are unbound,
        an OR branch not taken, does not apply: section 4).
        """
        m = len(buf.start)
        leaf = self.leaf(neg)
        cand, cgoff = leaf.start, leaf.goff
        bcols = [buf.vars.index(v) for v in neg.before if v in buf.vars]
        acols = [buf.vars.index(v) for v in neg.after if v in buf.vars]
        lo, hi = negation_ranges(buf.as_tuple(), (cand, cgoff), self.table.ts, self.wt, self.W,
                                 self.options.order, bcols, acols, neg.in_conj)
        if not neg.conds:
            return killed_unconditionally(buf.pos, lo, hi, cand)
        killed = np.zeros(m, dtype=np.bool_)
        r = 0
        while r < m:
            rec, ev, r = candidate_pairs(buf.pos, lo, hi, cand, killed, r, _NEG_PAIR_BUDGET)
            killed[rec[self.pairs_pass(buf, neg.conds, rec, {neg.var: ev})]] = True
        return killed

    def goff(self, g: np.ndarray) -> np.ndarray:
        """Partition offsets (G + 1) of records whose partitions ``g`` are ascending."""
        goff = np.zeros(self.G + 1, dtype=np.int64)
        np.cumsum(np.bincount(g, minlength=self.G), out=goff[1:])
        return goff

    def leaf(self, leaf: Leaf | NegLeaf) -> Buffer:
        """A leaf buffer: the variable's events after type test and filter, in (key, position) order.

        Candidates come from the shared type grouping (only the leaf's types
        are read), the filter runs on those candidates only, and one counting
        pass groups the survivors by key (issue 3: build leaves from type codes
        computed once, sort only what survives).
        """
        shared = leaf.filter is None  # SEQ(A a, A b): one grouping serves both unfiltered leaves
        arrays = self.unfiltered.get(leaf.types) if shared else None
        if arrays is None:
            arrays = self.leaf_arrays(leaf)
            if shared:
                self.unfiltered[leaf.types] = arrays
        cand, goff, t, w = arrays
        return Buffer((leaf.var,), cand.reshape(-1, 1), cand, cand, goff, t, t, w, w)

    def leaf_arrays(self, leaf: Leaf | NegLeaf) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:func:`~jitcep.kernels.grouping.leaf_by_key` of the leaf's candidates: positions, key offsets, times."""
        table, key = self.table, self.plan.key
        if leaf.types is None:  # every event: one group, in position order
            recs = self.ctx.all_events(key)
        else:
            wanted = set(leaf.types)
            codes = frozenset(i for i, t in enumerate(table.type_names) if t in wanted)
            recs, off = self.ctx.type_groups(key, codes)
            runs = [recs[off[i]:off[i + 1]] for i in sorted(codes)]
            if len(runs) == 1:
                recs = runs[0]
            else:  # ANY(T1, T2) (or no type present): merge the types' runs back into position order
                recs = np.concatenate(runs or [recs[:0]])
                recs = recs[np.argsort(record_fields(recs)[0])]
        keep = None
        if leaf.filter is not None and len(recs):
            keep = self.mask(leaf.filter, record_fields(recs)[0][None, :])
        return leaf_by_key(recs, self.G, keep, None if self.wt is table.ts else self.wt)


class _TypeView:
    """The table as PredicateSet.bind sees it: ``type`` added as a string column when absent."""

    def __init__(self, table: EventTable):
        self.ts = table.ts
        self.columns = dict(table.columns)
        if "type" not in self.columns:
            tc = table.type_code
            valid = tc >= 0
            self.columns["type"] = Column("str", np.where(valid, tc, 0).astype(np.int64),
                                          None if valid.all() else valid, tuple(table.type_names))


class _VirtualTable:
    """Per-list columns (one "event" per (binding, list)) as PredicateSet.bind sees a table."""

    def __init__(self, ts: np.ndarray, columns: dict):
        self.ts, self.columns = ts, columns


def _var_order(node) -> list[str]:
    if isinstance(node, Leaf):
        return [node.var]
    return _var_order(node.left) + _var_order(node.right)


def _keep_lists(keep: np.ndarray, src: np.ndarray, off: np.ndarray, lpos: np.ndarray):
    """The (match, list) records ``keep`` (indexes, ascending) of ``src`` and the CSR lists."""
    return (src[keep], *gather_lists(lpos, off[:-1][keep], np.diff(off)[keep]))


def _list_span(buf: Buffer, src: np.ndarray, off: np.ndarray, lpos: np.ndarray):
    """(first member, last member, first event, last event) positions of each (match ``src[j]``, list j);
    -1 for the members of an empty list."""
    nonempty = off[1:] > off[:-1]
    first = np.where(nonempty, lpos[np.minimum(off[:-1], max(len(lpos) - 1, 0))] if len(lpos) else -1, -1)
    last = np.where(nonempty, lpos[np.maximum(off[1:] - 1, 0)] if len(lpos) else -1, -1)
    start = np.where(nonempty, np.minimum(buf.start[src], first), buf.start[src])
    return first, last, start, np.maximum(buf.end[src], last)


def _empty_buffer(vars_: tuple[str, ...], G: int) -> Buffer:
    none = np.zeros(0, dtype=np.int64)
    return Buffer(vars_, np.zeros((0, len(vars_)), dtype=np.int64), none, none, np.zeros(G + 1, dtype=np.int64),
                  none, none, none, none)


def _union(L: Buffer, R: Buffer) -> Buffer:
    """OR (ZStream 4.4.4): merge both inputs by (partition, end); the other side's variables unbound."""
    kl, kr = len(L.vars), len(R.vars)
    pos = np.full((len(L.start) + len(R.start), kl + kr), -1, dtype=np.int64)
    pos[:len(L.start), :kl] = L.pos
    pos[len(L.start):, kl:] = R.pos
    G = len(L.goff) - 1
    g = np.concatenate([np.repeat(np.arange(G), np.diff(L.goff)), np.repeat(np.arange(G), np.diff(R.goff))])
    end = np.concatenate([L.end, R.end])
    o = np.lexsort((end, g))
    same = L.wstart is L.tstart and R.wstart is R.tstart
    tstart, tend = np.concatenate([L.tstart, R.tstart])[o], np.concatenate([L.tend, R.tend])[o]
    return Buffer(L.vars + R.vars, pos[o], np.concatenate([L.start, R.start])[o], end[o], L.goff + R.goff,
                  tstart, tend, tstart if same else np.concatenate([L.wstart, R.wstart])[o],
                  tend if same else np.concatenate([L.wend, R.wend])[o])
