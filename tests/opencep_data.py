"""Loaders for OpenCEP's test data (../shared/opencep) and its expected-match files.

Three things live here:

- :func:`load_events` reads OpenCEP's two input formats into Polars:
  Metastock ``.txt`` lines ``Ticker,YYYYMMDDhhmm,Open,Peak,Low,Close,Volume``
  and sensor ``.dat`` lines ``SensorType,MM/DD/YYYY HH:MM:SS,Amplitude,...``.
- :func:`parse_expected` reads an ``expected/<name>Matches.txt`` file: blocks
  separated by blank lines, one Python-dict line per event, an ``N: `` prefix on
  the first line of a block when several patterns ran.
- :class:`RowIndex` maps a printed event back to input rows.

Timestamps become ``pl.Datetime("ms")``.  The catalog states windows in
seconds, so a Datetime column lets a pattern say ``WITHIN 300 s`` directly and
keeps the sensor files' one-second resolution; integer minutes would fit the
Metastock files only and would need ``time_unit`` declared on every run.

Identical input lines.  A printed event carries every field of its input line
and nothing else, so two identical lines (custom2.txt and
NASDAQ_FREQUENCY_TAILORED.txt have some) cannot be told apart in an expected
file.  Every row is therefore mapped to the *representative* of its class of
identical lines (the class's first row), on both sides of the comparison:
jitcep's matches (exact rows) and the expected matches (printed content) are
compared as multisets of representative-row tuples.  Two matches that differ
only by swapping identical lines compare equal, which is exactly the
resolution the expected files allow; every other difference is still seen,
including how many times a match occurs.
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

METASTOCK_ATTRS = ("OpeningPrice", "PeakPrice", "LowestPrice", "ClosePrice", "Volume")
# printed dict keys of a Metastock event, in file order
METASTOCK_KEYS = ("Stock Ticker", "Date", "Opening Price", "Peak Price", "Lowest Price",
                  "Close Price", "Volume")
# per sensor type, the names of the fields after Amplitude (as the expected files print them)
SENSOR_FIELDS = {
    "Accelerometer": ("AccX", "AccY", "AccZ"),
    "Magnetometer": ("MagX", "MagY", "MagZ"),
    "PressTemp": ("Pressure", "Temperature"),
}
SENSOR_ATTRS = ("Amplitude",) + tuple(f for fs in SENSOR_FIELDS.values() for f in fs)


def opencep_dir() -> Path | None:
    """Where OpenCEP's suite lives: $JITCEP_OPENCEP_DIR, else the copy in tests/data/opencep
    (what a clean clone has), else ../shared/opencep next to the repo."""
    env = os.environ.get("JITCEP_OPENCEP_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parent / "data" / "opencep")
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "opencep")
    for c in candidates:
        if (c / "catalog.json").is_file():
            return c
    return None


# --- input files ------------------------------------------------------------


def _lines(path: Path) -> list[str]:
    # files may lack a final newline; blank lines carry no event
    return [ln.strip() for ln in Path(path).read_text().splitlines() if ln.strip()]


def _metastock_key(fields: list[str]) -> tuple:
    return (fields[0], int(fields[1])) + tuple(float(x) for x in fields[2:7])


def _sensor_key(fields: list[str]) -> tuple:
    return (fields[0], fields[1]) + tuple(float(x) for x in fields[2:])


def event_keys(path: str | Path) -> list[tuple]:
    """The content of each input line as a hashable key, in input order.

    The key holds exactly what an expected file prints of the event (type,
    timestamp as printed, every value), so printed events and input rows meet
    on it.
    """
    path = Path(path)
    split = [ln.split(",") for ln in _lines(path)]
    if path.suffix == ".dat":
        return [_sensor_key(f) for f in split]
    return [_metastock_key(f) for f in split]


def load_metastock(path: str | Path) -> pl.DataFrame:
    """Metastock lines -> columns type, ts (Datetime ms), OpeningPrice .. ClosePrice (f64), Volume (i64)."""
    rows = [ln.split(",") for ln in _lines(path)]
    return pl.DataFrame(
        {
            "type": [r[0] for r in rows],
            "ts": [datetime.strptime(r[1], "%Y%m%d%H%M") for r in rows],
            "OpeningPrice": [float(r[2]) for r in rows],
            "PeakPrice": [float(r[3]) for r in rows],
            "LowestPrice": [float(r[4]) for r in rows],
            "ClosePrice": [float(r[5]) for r in rows],
            "Volume": [int(float(r[6])) for r in rows],
        },
        schema={"type": pl.String, "ts": pl.Datetime("ms"), "OpeningPrice": pl.Float64,
                "PeakPrice": pl.Float64, "LowestPrice": pl.Float64, "ClosePrice": pl.Float64,
                "Volume": pl.Int64},
    )


def load_sensors(path: str | Path) -> pl.DataFrame:
    """Sensor lines -> columns type, ts (Datetime ms), Amplitude and every type's fields (null elsewhere)."""
    rows = [ln.split(",") for ln in _lines(path)]
    cols: dict[str, list] = {"type": [], "ts": []}
    cols.update({a: [] for a in SENSOR_ATTRS})
    for r in rows:
        names = SENSOR_FIELDS.get(r[0])
        if names is None or len(r) != 3 + len(names):
            raise ValueError(f"{path}: unexpected sensor line {','.join(r)!r}")
        cols["type"].append(r[0])
        cols["ts"].append(datetime.strptime(r[1], "%m/%d/%Y %H:%M:%S"))
        cols["Amplitude"].append(float(r[2]))
        values = dict(zip(names, (float(x) for x in r[3:])))
        for a in SENSOR_ATTRS[1:]:
            cols[a].append(values.get(a))
    schema = {"type": pl.String, "ts": pl.Datetime("ms")} | {a: pl.Float64 for a in SENSOR_ATTRS}
    return pl.DataFrame(cols, schema=schema)


def load_events(path: str | Path) -> pl.DataFrame:
    """Either format, by suffix (``.dat`` = sensors, anything else = Metastock)."""
    path = Path(path)
    return load_sensors(path) if path.suffix == ".dat" else load_metastock(path)


# --- expected files ---------------------------------------------------------


def _printed_key(d: dict) -> tuple:
    """The key (as :func:`event_keys`) of one printed event dict."""
    if "Stock Ticker" in d:
        return ((d["Stock Ticker"], int(d["Date"]))
                + tuple(float(d[k]) for k in METASTOCK_KEYS[2:]))
    if "SensorType" in d:
        values = [d["Amplitude"]] + [d[f] for f in SENSOR_FIELDS[d["SensorType"]]]
        return (d["SensorType"], d["TimeStamp"]) + tuple(float(v) for v in values)
    raise ValueError(f"unknown printed event {d!r}")


@dataclass(frozen=True)
class ExpectedMatch:
    """One block of an expected file: pattern number (1-based; None for single-pattern files)
    and the printed events in printed order, as keys."""

    pattern: int | None
    events: tuple[tuple, ...]


def parse_expected(path: str | Path) -> list[ExpectedMatch]:
    """Blocks of dict lines separated by blank lines; ``N: `` prefixes the block's first line."""
    text = Path(path).read_text()
    out: list[ExpectedMatch] = []
    for block in text.split("\n\n"):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        pattern = None
        head, sep, rest = lines[0].partition(": ")
        if sep and head.isdigit():
            pattern, lines[0] = int(head), rest
        events = []
        for ln in lines:
            d = ast.literal_eval(ln)
            if not isinstance(d, dict):
                raise ValueError(f"{path}: not an event dict: {ln!r}")
            events.append(_printed_key(d))
        out.append(ExpectedMatch(pattern, tuple(events)))
    return out


class RowIndex:
    """Input rows <-> printed events, with identical lines collapsed to a representative.

    ``rep[r]`` is the first row whose line equals row ``r``'s; ``rows_of[key]``
    lists every row holding ``key``.
    """

    def __init__(self, keys: list[tuple]):
        self.keys = keys
        self.rows_of: dict[tuple, list[int]] = {}
        for r, k in enumerate(keys):
            self.rows_of.setdefault(k, []).append(r)
        self.rep = [self.rows_of[k][0] for k in keys]

    @classmethod
    def of_file(cls, path: str | Path) -> "RowIndex":
        return cls(event_keys(path))

    def row_of(self, key: tuple) -> int:
        """Representative row of a printed event; KeyError names the event if no input line has it."""
        try:
            return self.rows_of[key][0]
        except KeyError:
            raise KeyError(f"printed event {key!r} is not in the input file") from None

    def duplicates(self) -> dict[int, list[int]]:
        """Representative row -> all rows, for the classes with more than one row."""
        return {rows[0]: rows for rows in self.rows_of.values() if len(rows) > 1}


def expected_rows(path: str | Path, index: RowIndex) -> list[tuple[int | None, tuple[int, ...]]]:
    """Each expected match as (pattern number or None, representative rows in printed order)."""
    return [(m.pattern, tuple(index.row_of(k) for k in m.events)) for m in parse_expected(path)]


def multiset(matches) -> Counter:
    """A Counter over hashable match keys (the comparison form)."""
    return Counter(matches)
