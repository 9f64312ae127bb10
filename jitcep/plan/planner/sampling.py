"""Statistics estimated from the event table (:class:`~jitcep.plan.planner.statistics.Statistics`).

How :func:`estimate` reads the table (never all of it, but for a pattern's rare type):

- Type counts: exact, read from the run's grouping of the events by type
  when one is given that holds every type the pattern reads (``groups``, as
  :func:`jitcep.runtime.prepare` passes it: the events with a non-null key;
  its offsets are the counts, and a rare type's positions for its own
  sample come from there too; no uniform draw is then made but the key's,
  below, and no type code read at them).  Without one, from :data:`TYPE_SAMPLE`
  uniformly drawn events (the whole table when it is smaller), ``n * drawn
  / draws``; a type drawn fewer than :data:`MIN_CANDIDATES` times (under
  0.8% of the events) is counted exactly, every type in one compiled pass
  over ``type_code`` (0.3-0.8 ms at 10^6 events): rare types are what a
  sample misses and what event-frequency ordering needs most.  That pass
  for every pattern was a third of the estimate.  (Exact counts keep plans
  as fast as sampled ones only because the cost model prices a right-deep
  root's rows, ``cost.final_join_cost``: perf/notes/plan_quality.md.)
- Filters, and tuples for selectivities, come from ``sample`` positions in
  blocks of :data:`BLOCK` consecutive events at random places (the whole table
  when it is smaller): a block holds every event of its stretch, so candidate
  tuples within the window and sharing a key are found inside it without an
  index.  Tuples are joined variable by variable inside each block (same
  block, same key, span within the window, distinct events, in the order
  the structure puts them in: two positive variables a SEQ orders, a
  negated or closure variable after / before the variables its range
  follows / precedes, consecutive members of an iterative conjunct), and
  at most :data:`TUPLES` of them are evaluated.  The conjuncts over one set
  of variables are evaluated on one draw of tuples (made for the first of
  them, from its stream): each is still its passing share of a uniform draw
  of those variables' tuples, as on a draw of its own (docs/planning.md,
  "One draw of tuples per set of variables"); a draw per conjunct would draw
  one pair's tuples once per conjunct (~0.2 ms of a 6 ms run for three).  Pairs
  farther apart than a block are not seen: a predicate whose truth depends
  on the distance (on ``ts``) is estimated on near pairs.
- A selectivity is ``(passed + 0.5) / (tuples + 1)``: never 0 (a predicate no
  sampled tuple passed gets ``0.5 / (tuples + 1)``), never 1, and it moves to
  :data:`DEFAULT_SELECTIVITY` (source "default") when no tuple could be
  formed, e.g. when a variable's events are too rare to meet in a block.
  A list conjunct (aggregates, ``v[k]``) is not sampled: its selectivity is
  the default unless given (docs/planning.md, "List conjuncts are not
  sampled", says where it is used and why).
- A rate is ``count * kept / (extent * partitions)``: ``count`` the events of
  its types (above), ``kept`` the share of its sampled candidates passing the
  filter with a non-null key (at least 64 candidates: a type too rare for the
  blocks is sampled from its own positions, one vectorised pass), ``extent``
  the table's time range (at least the window: a table shorter than a window
  is one window), or its positions per stream for a count window.
- Partitions and skew come from :data:`KEY_SAMPLE` uniformly drawn events (the
  first of the type draws, or the only ones; in the blocks the key is read at
  the events of the pattern's types alone, the others being no variable's
  candidate):
  ``sum(s_p^2)`` is estimated without bias by the share of equal pairs; the
  largest share by the largest sampled count less two standard deviations
  (so uniform keys read as ~1, not as the noise of the sample's maximum).

Predicates are evaluated with the generated predicate function
(:class:`jitcep.codegen.PredicateSet`, as :mod:`jitcep.execute.state` does),
over positions of the whole table: one set per pattern, compiled once and
kept in memory and on disk like the run's own.

Measured (perf/bench_statistics.py, perf/notes/statistics.md "Planner statistics"; 2 cores, warm), 10^6 events
of perf/bench_seq.py's data, SEQ of 3 or 6 with a key, a filter and join predicates, a negation and a
closure: 0.7-0.8 ms per estimate once the type counts were sampled, tuples bounded by the window and
the sample halved (1.6-2.1 ms before); 0.55-0.65 ms with the draws, the candidates and each step of a
conjunct's tuples compiled; about 20% less again with the blocks, a one-attribute key and its pair
counts compiled (:mod:`jitcep.kernels.sampling`; fastest calls 0.46-0.49 ms of CPU time under load):
~3.5% of the cheapest selective runs (12-13 ms), 0.1% of a run producing 1.6 * 10^6 matches.
"""

from __future__ import annotations

import math

import numpy as np

from ..._memo import PerObject, PerObjectAndKey
from ...codegen.predicates import KeptPredicateSets, column_specs
from ...errors import JitcepError, StatisticsError
from ...kernels.grouping import count_codes
from ...kernels.sampling import (SEED_MAX, below_share, block_sample, candidates, choose, draw_sample, extend_tuples,
                                key_codes, pair_counts, sample_with_key, sample_with_views, window_ranges)
from ...pattern import expr as E
from ...pattern.structure import relation
from ..kleene_refs import prev_var
from ..logical import LogicalPlan
from .statistics import (DEFAULT_SELECTIVITY, PARTITIONS, SKEW, Conjunct, Leaf, Statistics, WindowMeasure,
                         conjunct_texts, leaves)

SAMPLE = 4096
"""Default number of positions :func:`estimate` reads (in blocks of :data:`BLOCK`): 8,192 chose the same plans
on the perf workloads at ~0.05-0.3 ms more per estimate, 2,048 doubled the filters' and selectivities'
errors (docs/planning.md, "How large the sample is")."""
BLOCK = 1024
"""Consecutive positions per sampled block."""
TUPLES = 1024
"""Candidate tuples evaluated per conjunct at most."""
KEY_SAMPLE = 2048
"""Uniformly drawn positions for the key partitions and skew (the first of the type draws): relative error
about ``1 / sqrt(C(KEY_SAMPLE, 2) / partitions)``, 6.9% at 10,000 equal partitions."""
TYPE_SAMPLE = 8192
"""Uniformly drawn positions for the type counts."""
MIN_CANDIDATES = 64
"""Fewer sampled candidates than this: the variable's own positions are sampled instead; fewer uniform
draws of its types: the types are counted exactly."""
_INTERMEDIATE = 8 * TUPLES  # partial tuples held while joining a conjunct's variables inside the blocks
_FIRST = 2 * TUPLES  # candidates of a conjunct's first variable its tuples start from



def estimate(logical: LogicalPlan, table, *, window_measure: WindowMeasure, span: float, sample: int = SAMPLE,
             seed: int = 0, groups=None) -> Statistics:
    """Statistics of ``logical`` estimated from ``table`` (see the module docstring for how).

    ``window_measure`` / ``span``: as :func:`window_extent` gives them
    ("time" with the window in ts units, or "count" with the window's n).
    ``sample``: positions read; ``seed``: the random draw (the same
    arguments give the same statistics).  ``groups``: None, or a function
    giving for a set of type codes the run's own grouping of the table by
    type under this pattern's key (``(recs, offsets)`` of
    :func:`~jitcep.kernels.grouping.group_with_keys`, events with a null key
    left out) when one holds them all, else None: a rare type's count and
    positions are then read from it instead of passing over the type column
    (:func:`_grouped`).
    """
    if window_measure not in ("time", "count"):
        raise StatisticsError(f"window_measure must be 'time' or 'count', got {window_measure!r}")
    span = float(span)
    if not span > 0 or not math.isfinite(span):
        raise StatisticsError(f"span must be a positive finite number, got {span!r}")
    shape = _shape(logical)
    lv, conj, _ = shape
    n = table.n
    if n == 0:
        return Statistics({v: 0.0 for v in lv}, {t: DEFAULT_SELECTIVITY for t in conj}, 1, 1.0,
                          {**{v: "sampled" for v in lv}, **{t: "default" for t in conj},
                           PARTITIONS: "default", SKEW: "default"}, 1.0, 0.0)
    part = table.partition
    streams = part.independent if part is not None else False
    type_codes, allowed = type_layout(logical, table.type_names)
    grouped = _grouped(groups, type_codes)
    smp = _read(table, logical.key, streams, grouped, allowed, sample, seed)
    sources: dict[str, str] = {}
    if bool(logical.key) or streams:
        partitions, skew = _partitions(smp.key_draws, n, smp.pairs)
        sources[PARTITIONS] = sources[SKEW] = "sampled"
    else:
        partitions, skew = 1, 1.0
        sources[PARTITIONS] = sources[SKEW] = "default"
    if window_measure == "time":
        extent = max(float(int(table.ts[-1]) - int(table.ts[0])), span)
    else:
        extent = max(n / (len(part.offsets) - 1 if streams else 1), span)
    preds = _Predicates(logical, shape, table)
    rng = _Draws(seed)
    rates, cands = _rates(logical, table, streams, type_codes, grouped, smp, preds, rng, extent * partitions,
                          sources)
    sels = _selectivities(shape, smp, cands, preds, window_measure, span, rng, sources)
    return Statistics(rates, sels, partitions, skew, sources, extent, float(n))


class _Sample:
    """What :func:`_read` read of a table: the blocks' positions ``pos`` (ascending), each one's block
    index ``blk``, type code ``tc``, ``ts`` and key code ``key`` (None: no key and no streams, one
    partition; -1: a null key); the uniform draws' number ``drawn``, per type code how many of them hold
    it (``hits``, a list; all 0 where the run's grouping counts the types), their key codes
    ``key_draws`` and those codes' :func:`~jitcep.kernels.sampling.pair_counts` (``pairs``, None: count
    them); every variable's candidates among the blocks' events (``idx``, ``offsets``, ``in_type`` of
    :func:`~jitcep.kernels.sampling.candidates`, lists but ``idx``)."""

    __slots__ = ("pos", "blk", "tc", "ts", "key", "drawn", "hits", "key_draws", "pairs", "idx", "offsets",
                 "in_type")


def _read(table, key: tuple[str, ...], streams: bool, grouped, allowed: np.ndarray, sample: int,
          seed: int) -> _Sample:
    """The estimate's sample of ``table`` (module docstring): blocks of consecutive positions, uniform
    draws for the type counts and the key statistics, and the candidates, in one compiled call for the
    usual tables (:func:`~jitcep.kernels.sampling.sample_with_key`, or
    :func:`~jitcep.kernels.sampling.sample_with_views` for a String key not coded yet), else step by step."""
    n, n_types = table.n, len(table.type_names)
    keyed = bool(key) or streams
    L = min(BLOCK, n)
    n_blocks = n // L
    k_blocks = min(max(1, int(sample) // L), n_blocks)
    whole = n <= TYPE_SAMPLE
    # uniform draws for the type counts, unless the run's grouping counts every type; then for the key
    # statistics alone, the first KEY_SAMPLE of the same stream (the same draws), or none without a key,
    # and no type code read at them: each is a read at a random place of columns the run's passes have
    # just pushed out of cache
    m_draws = TYPE_SAMPLE if grouped is None else KEY_SAMPLE if keyed else 0
    m_key, typed = min(KEY_SAMPLE, m_draws), grouped is None
    col = table.column(key[0]) if len(key) == 1 and not streams and not whole else None
    got = None
    if not whole and (not keyed or col is not None and col.kind not in ("float", "str")):
        # the usual table (one integer key, or none): draws, blocks, key codes, candidates and the key's pair
        # counts in one compiled call
        got = sample_with_key(table.type_code, table.ts, n_types, n_blocks, k_blocks, m_draws, seed, L,
                              k_blocks == n_blocks, None if col is None else col.values,
                              None if col is None else col.valid, m_key, allowed, typed)
    elif not whole and col is not None and col.kind == "str" and col.string_input:
        # a String key not coded yet (the run codes it at its leaves' types only, if at all): the same call,
        # coding the strings' views at the sampled positions alone
        views = col.views()
        if views is not None:
            got = sample_with_views(table.type_code, table.ts, n_types, n_blocks, k_blocks, m_draws, seed, L,
                                    k_blocks == n_blocks, *views, col.valid, m_key, allowed, typed)
    s = _Sample()
    s.key = s.key_draws = None  # without a key or streams: one partition
    if got is not None:
        (_, draws, hits), (s.pos, s.blk, s.tc, s.ts), (codes, key_span), cands, s.pairs = got
        if key_span >= 1 << 31:  # codes too wide for _tuples' group codes: made as _key_codes makes them
            codes, s.pairs = _key_codes(table, key, np.concatenate([s.pos, draws[:KEY_SAMPLE]]), streams), None
    else:
        # the blocks, the uniform draws and the type of each draw in one compiled call
        starts, draws, hits = draw_sample(table.type_code, n_types, n_blocks, k_blocks, 0 if whole else m_draws,
                                          seed, typed)
        if whole:
            draws, hits = np.arange(n), count_codes(table.type_code, n_types)
        # the blocks' positions, block numbers, type codes and ts in one compiled pass (the whole table, its
        # tail included, when every block is drawn)
        s.pos, s.blk, s.tc, s.ts = block_sample(table.type_code, table.ts,
                                                None if k_blocks == n_blocks else starts, L)
        codes = _key_codes(table, key, np.concatenate([s.pos, draws[:KEY_SAMPLE]]), streams) if keyed else None
        s.pairs = cands = None
    if keyed:
        s.key, s.key_draws = codes[:len(s.pos)], codes[len(s.pos):]
    # every variable's candidates in one compiled pass over the sample, unless the one call made them
    idx, offsets, in_type = cands or candidates(s.tc, allowed, None if s.key is None else s.key >= 0)
    s.idx, s.offsets, s.in_type = idx, offsets.tolist(), in_type.tolist()  # read per variable
    s.drawn, s.hits = len(draws), hits.tolist()
    return s


class _Predicates:
    """Every leaf filter and every sampled conjunct of a logical plan in one generated function
    (:func:`_predicate_set`), bound to a table; ``usable`` False when the table cannot evaluate them
    (the run will say why; nothing is sampled)."""

    __slots__ = ("pset", "bound", "pid")

    def __init__(self, logical: LogicalPlan, shape: tuple, table):
        preds, self.pid = _numbered(shape)
        try:
            self.pset = _predicate_set(logical, preds, table)
            self.bound = self.pset.bind(table) if preds else ()
        except JitcepError:
            self.pset, self.bound = None, ()

    @property
    def usable(self) -> bool:
        return self.pset is not None

    def passes(self, pred, P: np.ndarray) -> np.ndarray:
        """Whether ``pred`` holds for each column of positions ``P`` (one row per variable)."""
        return self.pset.mask(self.pid[id(pred)], P, self.bound)


def _rates(logical, table, streams: bool, type_codes: list, grouped, smp: _Sample, preds: _Predicates,
           rng: "_Draws", per: float, sources: dict) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Per variable its rate ``count * kept / per`` (``per``: the extent times the partitions; module
    docstring) and its candidates that pass its filter (indices into the sample), its source in
    ``sources``."""
    lv = _shape(logical)[0]
    keyed = bool(logical.key) or streams
    exact = []  # every type's count, taken when one of the pattern's is rare
    rates: dict[str, float] = {}
    cands: dict[str, np.ndarray] = {}
    for i, (v, lf) in enumerate(lv.items()):
        cs = type_codes[i]
        idx, n_cand = smp.idx[smp.offsets[i]:smp.offsets[i + 1]], smp.in_type[i]
        count, counted, keyed_count = _count(table, cs, grouped, smp, exact)
        if keyed_count:
            n_cand = len(idx)
        passed = len(idx)
        if lf.filter is not None and preds.usable and len(idx):
            idx = idx[preds.passes(lf.filter, smp.pos[idx][None, :])]
            passed = len(idx)
        cands[v] = idx
        shared = False  # kept is a sampled share
        if count == 0:
            kept = 0.0
        elif lf.filter is None and not keyed:
            kept = 1.0
        elif lf.filter is not None and not preds.usable:
            kept, sources[v] = DEFAULT_SELECTIVITY, "default"
        else:
            shared = True
            if n_cand < MIN_CANDIDATES and count > n_cand:  # too rare for the blocks: sample its own positions
                if lf.filter is None and (keyed_count or _never_null(table, logical.key, streams)):
                    passed = n_cand = 1  # each of its events has a key: kept is 1, nothing to sample
                    shared = False
                elif not keyed_count:
                    passed, n_cand = _own_sample(table, lf, _positions(table, cs), logical.key, streams, preds,
                                                 rng, i)
                else:  # its positions with a key, from the run's grouping
                    passed, n_cand = _own_sample(table, lf, _group_positions(grouped, cs), (), False, preds, rng, i)
            kept = passed / n_cand if passed else 0.5 / (n_cand + 1)
        rates[v] = count * kept / per
        sources.setdefault(v, "counted" if counted and not shared else "sampled")
    return rates, cands


def _count(table, cs: list[int] | None, grouped, smp: _Sample, exact: list) -> tuple[float, bool, bool]:
    """(count, counted, keyed_count) of the events of type codes ``cs`` (None: any type): exact (``counted``)
    from the run's grouping, over the events with a key (``keyed_count``), or scaled from the uniform
    draws, or, for a type the draws hardly hold, from one pass over every type's count (kept in
    ``exact`` for the next variable)."""
    n = table.n
    if cs is None:
        return float(n), True, False
    if grouped is not None:  # exact, from the run's grouping: its offsets, read for free
        got = grouped[1]
        return float(sum(int(got[c + 1] - got[c]) for c in cs)), True, True
    drawn = sum(smp.hits[c] for c in cs)
    if drawn >= MIN_CANDIDATES or smp.drawn == n:
        return drawn * n / smp.drawn, smp.drawn == n, False
    if not exact:  # rare: count it exactly
        exact.append(count_codes(table.type_code, len(table.type_names)))
    return float(exact[0][cs].sum()), True, False


def _selectivities(shape: tuple, smp: _Sample, cands: dict, preds: _Predicates, window_measure: str,
                   span: float, rng: "_Draws", sources: dict) -> dict[str, float]:
    """Per conjunct the share of its sampled tuples (:func:`_tuples`) that pass it, ``(passed + 0.5) /
    (tuples + 1)``, or the default when it is not sampled or no tuple could be formed; its source in
    ``sources``.  The conjuncts over one set of variables are tested on one draw of tuples, the first
    one's (module docstring)."""
    wt = smp.ts if window_measure == "time" else smp.pos
    limit = span if window_measure == "time" else span - 1
    sels: dict[str, float] = {}
    group = None  # (block, key) codes of the sample, made for the first sampled conjunct
    drawn: dict[tuple[str, ...], np.ndarray | None] = {}  # per variable set: its one draw of tuples
    for j, (text, c) in enumerate(shape[1].items()):
        tuples = None
        if c.kind not in ("list", "each") and preds.usable:
            if group is None:
                group = _groups(smp.blk, smp.key, len(wt))
            if c.vars not in drawn:  # the first conjunct over these variables draws (its stream, j)
                drawn[c.vars] = _tuples(_layout(shape, text), cands, group, wt, smp.pos, limit, rng, j)
            tuples = drawn[c.vars]
        if tuples is None or not tuples.shape[1]:
            sels[text], sources[text] = DEFAULT_SELECTIVITY, "default"
            continue
        passed = int(preds.passes(c.expr, smp.pos[tuples]).sum())
        sels[text] = (passed + 0.5) / (tuples.shape[1] + 1)
        sources[text] = "sampled"
    return sels


class _Draws:
    """The estimate's random subsets, each from its own splitmix64 stream named by the seed and what it is
    for (:func:`~jitcep.kernels.sampling.choose`, :func:`~jitcep.kernels.sampling.below_share`): one
    compiled call each, where NumPy's ``default_rng`` cost ~80 us to make in a run and each ``choice``
    ~50 us; and a subset drawn or not for one variable leaves every other one as it is."""

    def __init__(self, seed: int):
        self.seed = seed

    def _stream(self, purpose: tuple[int, ...]) -> int:
        s = self.seed
        for p in purpose:  # splitmix64's finaliser over the seed and each part: unrelated streams
            s = (s ^ (p + 1) * 0x9E3779B97F4A7C15) & _MASK64
            s = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
            s = ((s ^ (s >> 27)) * 0x94D049BB133111EB) & _MASK64
            s ^= s >> 31
        return s & SEED_MAX

    def subset(self, a: np.ndarray, size: int, *purpose: int) -> np.ndarray:
        """``size`` distinct entries of ``a`` drawn uniformly, in ``a``'s order."""
        return a[choose(len(a), size, self._stream(purpose))]

    def indices(self, n: int, size: int, *purpose: int) -> np.ndarray:
        """``size`` distinct numbers of ``0..n-1`` drawn uniformly, ascending."""
        return choose(n, size, self._stream(purpose))

    def below(self, m: int, p: float, *purpose: int) -> np.ndarray:
        """``m`` flags, each True with chance ``p``."""
        return below_share(m, p, self._stream(purpose))


_MASK64 = (1 << 64) - 1
_OWN, _FIRSTS, _SHARE, _KEPT = range(4)  # what a stream is for (_Draws)


def _shape_of(logical: LogicalPlan) -> tuple[dict[str, Leaf], dict[str, Conjunct], "_Order"]:
    return leaves(logical), conjunct_texts(logical), _Order(logical)


_shape = PerObject(_shape_of)  # a rerun query estimates on the same logical plan: printing its conjuncts
# and asking the structure for the order of its variables took a fifth of the estimate


# one set per logical plan (whose leaves and conjuncts give the same predicates every call, _shape), by
# identity as the run's are, and columns; keyed by the plan, not by the predicates' values, as hashing the
# expression trees on every call cost ~7% of the estimate (cProfile)
_PREDICATE_SETS = KeptPredicateSets()
_USED = PerObject(lambda logical: sorted(E.columns_read(_predicates(logical))))  # the columns they read


def _predicates(logical: LogicalPlan) -> list:
    """The leaf filters, then the sampled conjuncts, of ``logical`` (the order ``estimate`` numbers them in)."""
    return _numbered(_shape(logical))[0]


def _numbered_of(shape: tuple) -> tuple[list, dict[int, int]]:
    """:func:`_predicates` of a :func:`_shape` answer, and each one's number by ``id``."""
    lv, conj, _ = shape
    preds = [lf.filter for lf in lv.values() if lf.filter is not None] + \
        [c.expr for c in conj.values() if c.kind not in ("list", "each")]
    return preds, {id(p): i for i, p in enumerate(preds)}


# (predicates, the number of each by id) per _shape answer, whose objects they are: kept by that answer,
# not by the logical plan, so that a shape made again (evicted from _shape) is numbered again
_numbered = PerObject(_numbered_of)


# per logical plan: type names -> type_layout's answer, for tables of a few schemas
_TYPE_LAYOUTS = PerObjectAndKey(keep=8)


def type_layout(logical: LogicalPlan, type_names: tuple[str, ...]) -> tuple[list, np.ndarray]:
    """(type_codes, allowed): per variable of ``logical`` (:func:`~.statistics.leaves`' order: the positive
    ones first, in pattern order) its types' codes among ``type_names`` (None: any type), and per
    variable a row of flags per type code and a last one for the null type and any other code (an
    untyped variable: all set), as :func:`~jitcep.kernels.sampling.candidates` and
    :func:`~jitcep.kernels.window.most_per_window` take them; kept per logical plan and type names,
    which tables of one schema share (made on every estimate, they would be a tenth of its Python steps).
    Read only."""
    return _TYPE_LAYOUTS(logical, type_names, lambda: _type_layout_of(_shape(logical)[0], type_names))


def _type_layout_of(lv: dict[str, Leaf], type_names: tuple[str, ...]) -> tuple[list, np.ndarray]:
    code_of = {t: i for i, t in enumerate(type_names)}
    type_codes = [None if lf.types is None else [code_of[t] for t in lf.types if t in code_of]
                  for lf in lv.values()]
    allowed = np.zeros((len(lv), len(type_names) + 1), np.bool_)
    for row, cs in zip(allowed, type_codes):
        row[slice(None) if cs is None else cs] = True
    return type_codes, allowed


def _predicate_set(logical, preds, table):
    """The predicate set of ``preds`` (:func:`_predicates` of ``logical``) over ``table``'s columns."""
    return _PREDICATE_SETS((logical,), preds, column_specs(table, _USED(logical)))


def _key_codes(table, key: tuple[str, ...], positions: np.ndarray, streams: bool) -> np.ndarray:
    """A code per position, equal for equal keys (and streams), -1 for a null key (no partition)."""
    if not streams and len(key) == 1 and table.column(key[0]).kind != "float":
        # one integer (or coded) attribute, the usual key: gathered and shifted in one compiled pass
        col = table.column(key[0])
        if col.kind == "str":
            got = key_codes(col.codes_at(positions)[0], None if col.valid is None else col.valid[positions], None)
        else:
            got = key_codes(col.values, col.valid, positions)
        if got[1] < 1 << 31:
            return got[0]
    parts = []
    null = np.zeros(len(positions), np.bool_)
    if streams:
        parts.append(np.asarray(table.partition.key_code)[positions].astype(np.int64))
    for attr in key:
        col = table.column(attr)
        if col.valid is not None:
            null |= ~col.valid[positions]
        if col.kind == "str":
            vals = col.codes_at(positions)[0].astype(np.int64)
        elif col.kind == "float":
            vals = np.unique(col.values[positions], return_inverse=True)[1].reshape(-1).astype(np.int64)
        else:
            vals = col.values[positions].astype(np.int64)
        parts.append(vals)
    if not parts:
        return np.zeros(len(positions), np.int64)
    if len(parts) == 1:
        out = parts[0]
        if len(out):  # small codes: block * codes + code must not overflow in _tuples
            lo, hi = int(out.min()), int(out.max())
            out = out - lo if hi - lo < 1 << 31 else np.unique(out, return_inverse=True)[1].reshape(-1)
    else:
        out = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.where(null, -1, out)


def _partitions(codes: np.ndarray, n: int, counted: tuple[int, int, int] | None = None) -> tuple[int, float]:
    """(effective partitions, skew) from key codes of uniformly drawn events (module docstring);
    ``counted``: their :func:`~jitcep.kernels.sampling.pair_counts` when made already."""
    drawn = len(codes)
    got = counted or pair_counts(codes)  # counted in an array of the codes' range, in one compiled pass
    if got is None:  # codes spread wide: counted by sorting
        codes = codes[codes >= 0]
        counts = np.unique(codes, return_counts=True)[1].astype(np.float64)
        got = len(codes), float(counts @ counts), counts.max()
    m, squares, top = got
    if m < 2:
        return 1, 1.0
    pairs = float(squares) - m  # sum of c * (c - 1)
    eff = m * (m - 1) / pairs if pairs else float(m) * (m - 1)
    partitions = int(max(1, min(round(eff), round(n * m / drawn))))
    share = max(top - 2 * math.sqrt(top), 1.0) / m
    return partitions, float(max(1.0, share * partitions))


def _grouped(groups, type_codes: list) -> tuple | None:
    """(recs, offsets) of the run's grouping holding every type the variables read (``groups``,
    :func:`estimate`), or None: no grouping given, none holds them all, or a variable of any type (its
    count is the table's size)."""
    if groups is None or any(cs is None for cs in type_codes):
        return None
    return groups(frozenset(c for cs in type_codes for c in cs))


def _group_positions(groups: tuple, codes: list[int]) -> np.ndarray:
    """The positions of the types ``codes`` in the run's grouping (:func:`_grouped`), ascending."""
    recs, offsets = groups
    got = [recs[offsets[c]:offsets[c + 1], 0] & _LOW for c in codes]
    out = got[0] if len(got) == 1 else np.sort(np.concatenate(got)) if got else np.zeros(0, np.int64)
    return np.ascontiguousarray(out)


_LOW = np.int64(0xFFFFFFFF)  # a record's index (jitcep.kernels.grouping.record_fields)


def _never_null(table, key: tuple[str, ...], streams: bool) -> bool:
    """Whether every event has ``key`` (no column of it has a null; no ``partition_by`` streams)."""
    return not streams and all(table.column(a).valid is None for a in key)


def _positions(table, codes: list[int]) -> np.ndarray:
    """Every position whose type code is in ``codes`` (one pass over ``type_code``)."""
    if not codes:
        return np.zeros(0, np.int64)
    tc = table.type_code
    return np.flatnonzero(tc == codes[0] if len(codes) == 1 else np.isin(tc, np.asarray(codes, dtype=tc.dtype)))


def _own_sample(table, lf: Leaf, mine: np.ndarray, key, streams, preds: "_Predicates", rng: _Draws,
                i: int) -> tuple[int, int]:
    """(passed, sampled) for variable ``i`` whose type the blocks hardly hold: up to TUPLES of its positions
    ``mine``."""
    if len(mine) > TUPLES:
        mine = rng.subset(mine, TUPLES, _OWN, i)
    ok = _key_codes(table, key, mine, streams) >= 0
    if lf.filter is not None and preds.usable and ok.any():
        ok[ok] = preds.passes(lf.filter, mine[ok][None, :])
    return int(ok.sum()), len(mine)


class _Order:
    """``(x, y) in order``: x's event is before y's in every match (positive variables a SEQ orders; a
    negated or closure variable and the variables its range lies after / before; an iterative
    conjunct's member and the one after it); asked only for the pairs of sampled conjuncts."""

    def __init__(self, logical: LogicalPlan):
        self.logical = logical
        self.known: dict[tuple[str, str], bool] = {}
        ranged = [(n.var, n.before, n.after) for n in logical.negations]
        for c in logical.closures:
            self.known[(prev_var(c.var), c.var)] = True
            ranged.append((c.var, c.before, c.after))
        for v, before, after in ranged:
            self.known.update({(b, v): True for b in before})
            self.known.update({(v, a): True for a in after})

    def __contains__(self, pair: tuple[str, str]) -> bool:
        got = self.known.get(pair)
        if got is None:
            x, y = pair
            vs = self.logical.variables
            got = x in vs and y in vs and relation(self.logical.positive, x, y) == "before"
            self.known[pair] = got
        return got


def _groups(blk: np.ndarray, key: np.ndarray | None, m: int) -> tuple[np.ndarray, bool]:
    """(group, by_group): a code per sampled event equal for the same block and key (candidates have key
    >= 0; ``key`` None: no key, the block alone), small enough that ``group * (m + 1) + index`` stays
    within int64; ``by_group`` whether the codes need sorting (with a key), or ascend with the index
    already (the block alone)."""
    if key is None:
        return blk, False
    G = int(key.max()) + 2 if len(key) else 1
    group = blk * G + key
    if (int(blk[-1]) + 1) * G * (m + 1) >= 1 << 62:  # dense group codes
        group = np.unique(group, return_inverse=True)[1].reshape(-1)
    return group, G > 2


def _layout(shape: tuple, text: str) -> tuple | None:
    """(bases, rels) of conjunct ``text`` of a :func:`_shape` answer: per variable the leaf whose candidates
    it takes (an iterative reference to the member before: its closure's), and per variable k > 0 how it
    lies against each one before it (``rel`` of :func:`~jitcep.kernels.sampling.extend_tuples`); None if a
    variable has no leaf.  Kept per shape: the same for every estimate of a logical plan."""
    return _LAYOUTS(shape, text, lambda: _layout_of(shape, text))


def _layout_of(shape: tuple, text: str) -> tuple | None:
    lv, conj, order = shape
    vs = conj[text].vars
    bases = [v if v in lv else next((k for k in lv if prev_var(k) == v), None) for v in vs]
    rels = [np.array([1 if (vs[i], vs[k]) in order else -1 if (vs[k], vs[i]) in order else 0 for i in range(k)],
                     dtype=np.int64) for k in range(1, len(vs))]
    return None if None in bases else (bases, rels)


_LAYOUTS = PerObjectAndKey()  # per shape: conjunct text -> its layout


def _tuples(layout: tuple | None, cands, groups, wt, pos, limit, rng: _Draws, j: int) -> np.ndarray | None:
    """Up to TUPLES candidate tuples for the ``j``-th conjunct, laid out as :func:`_layout` says (rows: its
    sorted variables; values: indices into the sample), formed inside the sampled blocks (module
    docstring), ``groups`` :func:`_groups`'; None if a variable has no leaf."""
    if layout is None:
        return None
    bases, rels = layout
    idx = [cands[b] for b in bases]
    group, by_group = groups
    # A member must lie within the window of the partial tuple's span: wt ascends with the index into
    # the sample, so ordering members by (group, index) bounds each tuple's members by two searches.
    # (Bounding by the group alone paired every event of a block: the window's few were a tiny share, and
    # the sample's partial tuples came from a few dozen first events.)
    reach = int(math.ceil(limit))
    first = idx[0]
    if len(first) > _FIRST:
        first = rng.subset(first, _FIRST, _FIRSTS, j)
    T = first[None, :]
    lo = hi = wt[first]
    for k in range(1, len(idx)):
        # the candidates in (group, index) order and each partial tuple's range among them, in one
        # compiled call (jitcep.kernels.sampling.window_ranges); one key (code 0, as without a key): the
        # group is the block, ascending with the index already
        w, s, cnt = window_ranges(T[0], lo, hi, idx[k], group, wt, reach, by_group)
        total = int(cnt.sum())
        if total > _INTERMEDIATE:  # keep a random share of the partial tuples
            pick = rng.below(T.shape[1], _INTERMEDIATE / total, _SHARE, j, k)
            T, lo, hi, s, cnt = T[:, pick], lo[pick], hi[pick], s[pick], cnt[pick]
        # each partial tuple with each candidate in its range, kept within the window, distinct and in the
        # structure's order, in one compiled pass (jitcep.kernels.sampling.extend_tuples)
        T, lo, hi = extend_tuples(T, lo, hi, s, cnt, w, wt, pos, limit, rels[k - 1])
        if not T.shape[1]:
            break
    if T.shape[1] > TUPLES:
        T = T[:, rng.indices(T.shape[1], TUPLES, _KEPT, j)]
    return T


