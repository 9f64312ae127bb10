"""``Query.run(progress=)``: the stage names the CLI shows, on stderr, for notebook and script users."""

from __future__ import annotations

import io
import re

import polars as pl
import pytest

import jitcep
from jitcep import progress as P

EVENTS = pl.DataFrame({"kind": ["A", "B", "A", "B"], "ts": [1, 2, 3, 5], "x": [5, 1, 2, 7]})
QUERY = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10")


def test_progress_true_names_every_stage_in_order(capsys):
    out = QUERY.run(EVENTS, type="kind", progress=True)
    assert out.height == 2
    r = capsys.readouterr()
    assert r.out == ""
    lines = r.err.splitlines()
    assert [re.fullmatch(r"jitcep: (.+) \(\d+\.\ds\)", ln).group(1) for ln in lines[:-1]] == [
        "reading", "building the event table", "matching", "building the output"]
    assert re.fullmatch(r"jitcep: done in \d+\.\ds", lines[-1])


@pytest.mark.parametrize("setting", [None, False])
def test_progress_default_and_false_print_nothing_off_a_terminal(capsys, setting):
    QUERY.run(EVENTS, type="kind", progress=setting)
    assert capsys.readouterr().err == ""


def test_progress_after_an_error_names_the_stage_reached_and_not_done(capsys):
    with pytest.raises(jitcep.MissingColumnError):
        QUERY.run(EVENTS, type="kind", time="when", progress=True)
    assert capsys.readouterr().err == "jitcep: reading (0.0s)\n"


def test_progress_must_be_a_bool_or_none():
    with pytest.raises(jitcep.OptionError, match="progress="):
        QUERY.run(EVENTS, type="kind", progress="yes")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_default_display_is_a_delayed_bar_on_a_terminal_only():
    tty = P.display(None, jitcep.Query.STAGES, _Terminal())
    assert isinstance(tty, P.Progress) and tty.tty and tty.delay == P.DELAY
    tty.close(done=False)
    assert isinstance(P.display(None, jitcep.Query.STAGES, io.StringIO()), P.NoProgress)
    forced = P.display(True, jitcep.Query.STAGES, io.StringIO())
    assert isinstance(forced, P.Progress) and forced.delay == 0.0 and not forced.tty


def test_run_parses_a_csv_time_column_with_time_format(tmp_path):
    path = tmp_path / "events.csv"
    EVENTS.with_columns(pl.format("{}/01/2013", pl.col("ts")).alias("ts")).write_csv(path)
    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 3 days")
    out = q.run(path, type="kind", time_format="%d/%m/%Y")
    assert out["b"].struct.field("ts").dtype == pl.Date
    assert sorted(zip(out["a"].struct.field("row"), out["b"].struct.field("row"))) == [(2, 3)]
    with pytest.raises(jitcep.TimestampError, match="time_format='%Y-%m-%d'"):
        q.run(path, type="kind", time_format="%Y-%m-%d")
