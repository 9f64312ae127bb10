"""The command line: demo, run with each output format, errors (exit 2, one line, nothing written)."""

from __future__ import annotations

import ctypes
import os
import re
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import jitcep
from jitcep import cli
from jitcep.progress import Progress

ROOT = Path(__file__).resolve().parents[1]

# rows: 0 A@1 x=5, 1 B@2 x=1, 2 A@3 x=2, 3 B@5 x=7, 4 C@6 x=0
EVENTS = pl.DataFrame({"kind": ["A", "B", "A", "B", "C"], "t": [1, 2, 3, 5, 6], "x": [5, 1, 2, 7, 0]})
PATTERN = "-- a rises to b\nPATTERN SEQ(A a, B b)\nWHERE a.x < b.x\nWITHIN 10\n"
EXPECTED = {(0, 3), (2, 3)}


@pytest.fixture
def files(tmp_path):
    pat = tmp_path / "p.cep"
    pat.write_text(PATTERN)
    data = tmp_path / "events.parquet"
    EVENTS.write_parquet(data)
    return tmp_path, pat, data


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jitcep.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def test_demo_prints_a_non_trivial_number_of_matches(capsys):
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"^(\d+) matches", out, re.M)
    assert m, out
    assert int(m.group(1)) >= 50
    assert "PATTERN SEQ(AAPL a, !AMZN n, GOOG g)" in out


def test_demo_matches_follow_the_pattern():
    """Every demo match: a rising AAPL bar, then a rising GOOG bar within 3 minutes, no falling AMZN bar between."""
    pattern_file, data = cli.demo_files()
    df = pl.read_parquet(data)
    out = jitcep.compile(pattern_file.read_text()).run(data, type="ticker")
    assert out.height >= 50
    falling_amzn = df.with_row_index("r").filter(pl.col("ticker") == "AMZN", pl.col("close") < pl.col("open"))
    amzn = falling_amzn["r"].to_list()
    for a, g in zip(out["a"].to_list(), out["g"].to_list()):
        assert df["ticker"][a["row"]] == "AAPL" and df["ticker"][g["row"]] == "GOOG"
        assert a["close"] > a["open"] and g["close"] > g["open"]
        assert a["row"] < g["row"] and (g["ts"] - a["ts"]).total_seconds() <= 180
        assert not any(a["row"] < r < g["row"] for r in amzn)


def test_run_prints(files):
    _, pat, data = files
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^2 matches$", r.stdout, re.M)


@pytest.mark.parametrize("ext", ["parquet", "csv", "ndjson"])
def test_run_writes_by_extension(files, ext):
    tmp, pat, data = files
    out = tmp / f"m.{ext}"
    assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out)]) == 0
    if ext == "parquet":
        got = pl.read_parquet(out)
        assert got.equals(jitcep.compile(PATTERN).run(EVENTS, time="t", type="kind"))
        rows = set(zip(got["a"].struct.field("row"), got["b"].struct.field("row")))
    elif ext == "csv":
        got = pl.read_csv(out)
        assert got.columns == ["match_id", "a.row", "a.ts", "a.x", "b.row", "b.ts", "b.x"]
        rows = set(zip(got["a.row"], got["b.row"]))
    else:
        got = pl.read_ndjson(out)
        rows = set(zip(got["a"].struct.field("row"), got["b"].struct.field("row")))
    assert rows == EXPECTED
    assert sorted(os.listdir(tmp)) == sorted(["p.cep", "events.parquet", f"m.{ext}"])


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_input_name_is_literal_not_a_glob(tmp_path, ext):
    pat = tmp_path / "p.cep"
    pat.write_text(PATTERN)
    write = pl.DataFrame.write_parquet if ext == "parquet" else pl.DataFrame.write_csv
    write(EVENTS, tmp_path / f"data[1].{ext}")
    write(EVENTS.with_columns(pl.col("x") * 0), tmp_path / f"data1.{ext}")  # what the glob matches: no match
    out = tmp_path / "m.parquet"
    r = run_cli("run", pat, tmp_path / f"data[1].{ext}", "--time", "t", "--type", "kind", "-o", out)
    assert r.returncode == 0, r.stderr
    got = pl.read_parquet(out)
    assert set(zip(got["a"].struct.field("row"), got["b"].struct.field("row"))) == EXPECTED


def test_csv_output_flattens_lists(tmp_path):
    out = tmp_path / "k.csv"
    pat = tmp_path / "k.cep"
    pat.write_text("PATTERN SEQ(A a, B+ b[]) WITHIN 10")
    data = tmp_path / "e.csv"
    EVENTS.write_csv(data)
    assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out)]) == 0
    got = pl.read_csv(out)
    assert got["b"].str.starts_with("[{").all()


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_csv_output_writes_values_csv_has_no_type_for_as_text(tmp_path, shape):
    # durations, bytes, arrays and lists read by RETURN a / c (every input column): CSV has no such types
    # (Polars' ComputeError, or a panic for bytes inside JSON); they are written as ISO 8601, base64 and JSON
    import datetime as dt
    data, pat, out = tmp_path / "e.parquet", tmp_path / "p.cep", tmp_path / "o.csv"
    pl.DataFrame({"kind": ["A", "B"], "t": [1, 2], "d": [dt.timedelta(seconds=90), None], "b": [b"xy", b"z"],
                  "arr": pl.Series([[1, 2], [3, 4]], dtype=pl.Array(pl.Int64, 2)), "l": [["p", None], []]}
                 ).write_parquet(data)
    pat.write_text("PATTERN SEQ(A a, B+ c[]) WITHIN 10 RETURN a, c")
    assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out),
                     "--shape", shape]) == 0
    got = pl.read_csv(out, infer_schema=False)
    if shape == "wide":
        assert got.row(0, named=True) == {
            "match_id": "0", "a.row": "0", "a.ts": "1", "a.d": "PT1M30S", "a.b": "eHk=", "a.arr": "[1,2]",
            "a.l": '["p",null]',
            "c": '[{"row":1,"ts":2,"d":null,"b":"eg==","arr":[3,4],"l":[]}]'}
    else:
        assert got.select("variable", "d", "b", "arr", "l").rows() == [("a", "PT1M30S", "eHk=", "[1,2]", '["p",null]'),
                                                                       ("c", None, "eg==", "[3,4]", "[]")]


def test_options_and_long_shape(files):
    tmp, pat, data = files
    out = tmp / "long.parquet"
    rc = cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out),
                   "--shape", "long", "--option", "strategy=skip_till_any_match", "--option", "max_matches=100"])
    assert rc == 0
    got = pl.read_parquet(out)
    assert got.columns[:4] == ["match_id", "variable", "index", "row"]
    assert got.height == 4


def _one_line_error(r: subprocess.CompletedProcess, name: str):
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"jitcep: error: {name}:"), lines[0]


def test_syntax_error_exits_2_with_the_source_line_and_caret(files):
    tmp, _, data = files
    bad = tmp / "bad.cep"
    bad.write_text("PATTERN SEQ(A a, B b\nWITHIN 10")
    r = run_cli("run", bad, data, "--time", "t", "--type", "kind", "-o", tmp / "out.parquet")
    assert r.returncode == 2 and r.stdout == ""
    first, source, caret = r.stderr.splitlines()  # the message, then the line and the caret under column 1
    assert first.startswith("jitcep: error: PatternSyntaxError: ") and "line 2, column 1" in first
    assert source == "  WITHIN 10"
    assert caret == "  ^"
    assert not (tmp / "out.parquet").exists()


def test_syntax_error_caret_points_at_the_column(files, capsys):
    tmp, _, data = files
    bad = tmp / "bad.cep"
    bad.write_text("PATTERN SEQ(A a, B b) WHERE a.x >> 1 WITHIN 10")
    assert cli.main(["run", str(bad), str(data), "--time", "t", "--type", "kind"]) == 2
    lines = capsys.readouterr().err.splitlines()
    column = int(re.search(r"column (\d+)", lines[0]).group(1))
    assert lines[1] == "  " + bad.read_text()
    assert lines[2] == "  " + " " * (column - 1) + "^"


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    r = run_cli("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"jitcep {version('jitcep')}\n"


# rows in time order: A (x=5), B (x=1), A (x=2), B (x=7): the pattern matches (A x=5 -> B x=7), (A x=2 -> B x=7)
CSV_TIMES = {
    "iso_datetime": (["2013-01-01 05:00:00", "2013-01-01T05:01:00", "2013-01-01 05:02:00", "2013-01-01 05:04:00"],
                     None),
    "iso_date": (["2013-01-01", "2013-01-02", "2013-01-03", "2013-01-05"], None),
    "custom": (["01/01/2013 05:00", "01/01/2013 05:01", "01/01/2013 05:02", "01/01/2013 05:04"], "%d/%m/%Y %H:%M"),
    "custom_date": (["1.1.2013", "2.1.2013", "3.1.2013", "5.1.2013"], "%d.%m.%Y"),
}


@pytest.mark.parametrize("case", sorted(CSV_TIMES))
def test_csv_time_column_is_parsed(tmp_path, case):
    times, fmt = CSV_TIMES[case]
    data = tmp_path / "events.csv"
    pl.DataFrame({"kind": ["A", "B", "A", "B"], "t": times, "x": [5, 1, 2, 7]}).write_csv(data)
    pat = tmp_path / "p.cep"
    pat.write_text("PATTERN SEQ(A a, B b) WHERE a.x < b.x WITHIN 10 days")
    out = tmp_path / "m.parquet"
    extra = ["--time-format", fmt] if fmt else []
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", *extra, "-o", out)
    assert r.returncode == 0, r.stderr
    got = pl.read_parquet(out)
    assert {(a["row"], b["row"]) for a, b in zip(got["a"].to_list(), got["b"].to_list())} == {(0, 3), (2, 3)}
    ts = got["b"].struct.field("ts")
    assert ts.dtype == (pl.Date if case in ("iso_date", "custom_date") else pl.Datetime("us"))


@pytest.mark.parametrize("times, fmt", [
    (["2013-01-01 05:00", "soon", "2013-01-01 05:02", "2013-01-01 05:04"], None),
    (["2013-01-01 05:00", "2013-01-01 05:01", "2013-01-01 05:02", "2013-01-01 05:04"], "%d/%m/%Y %H:%M"),
])
def test_csv_time_that_does_not_parse_is_a_timestamp_error(tmp_path, times, fmt):
    data = tmp_path / "events.csv"
    pl.DataFrame({"kind": ["A", "B", "A", "B"], "t": times, "x": [5, 1, 2, 7]}).write_csv(data)
    pat = tmp_path / "p.cep"
    pat.write_text("PATTERN SEQ(A a, B b) WITHIN 10 days")
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", *(["--time-format", fmt] if fmt else []))
    _one_line_error(r, "TimestampError")
    bad = "'soon' at input row 1" if fmt is None else "'2013-01-01 05:00' at input row 0"
    assert bad in r.stderr and "--time-format" in r.stderr


@pytest.mark.parametrize("args, name", [
    (["--time", "when", "--type", "kind"], "MissingColumnError"),
    (["--time", "t", "--type", "kind", "--option", "strategy=fastest"], "OptionError"),
    (["--time", "t", "--type", "kind", "--option", "novalue"], "CliError"),
])
def test_named_errors_leave_nothing_behind(files, args, name):
    tmp, pat, data = files
    out = tmp / "out.parquet"
    r = run_cli("run", pat, data, *args, "-o", out)
    _one_line_error(r, name)
    assert sorted(os.listdir(tmp)) == ["events.parquet", "p.cep"]


def test_unknown_output_extension_is_refused_before_running(files):
    tmp, pat, data = files
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", "-o", tmp / "out.xlsx")
    _one_line_error(r, "CliError")
    assert sorted(os.listdir(tmp)) == ["events.parquet", "p.cep"]


def test_missing_pattern_file(files):
    tmp, _, data = files
    r = run_cli("run", tmp / "nope.cep", data)
    _one_line_error(r, "CliError")


def test_failed_write_keeps_the_old_file_and_no_temp(files, monkeypatch, capsys):
    tmp, pat, data = files
    out = tmp / "m.parquet"
    out.write_bytes(b"old")

    def broken(self, path, *a, **k):
        Path(path).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", broken)
    assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"jitcep: error: CliError: cannot write {str(out)!r}: No space left on device"]
    assert out.read_bytes() == b"old"
    assert sorted(os.listdir(tmp)) == ["events.parquet", "m.parquet", "p.cep"]


def test_ci_runs_the_readme_commands_verbatim():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.+?)\n```", quick, re.S)
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    for c in commands:
        assert c.strip() in ci.splitlines()


# --- progress and warnings on stderr ------------------------------------------------


def test_progress_forced_names_every_stage_on_stderr_and_keeps_stdout_clean(files):
    tmp, pat, data = files
    plain = run_cli("run", pat, data, "--time", "t", "--type", "kind")
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", "--progress")
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout  # the result only, byte for byte
    assert plain.stderr == ""  # not a terminal, not forced: no bar
    lines = r.stderr.splitlines()
    stages = [ln.split(" (")[0].removeprefix("jitcep: ") for ln in lines[:-1]]
    assert stages == list(cli.STAGES)
    assert re.fullmatch(r"jitcep: done in \d+\.\ds", lines[-1])


def test_progress_with_output_file(files, capsys):
    tmp, pat, data = files
    out = tmp / "m.parquet"
    assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "--progress", "-o", str(out)]) == 0
    r = capsys.readouterr()
    assert r.out == f"2 matches written to {out}\n"
    assert "jitcep: writing" in r.err and "jitcep: done" in r.err


def test_progress_after_an_error_is_not_done(files, capsys):
    tmp, pat, data = files
    assert cli.main(["run", str(pat), str(data), "--time", "when", "--type", "kind", "--progress"]) == 2
    r = capsys.readouterr()
    assert r.out == "" and "done" not in r.err
    assert r.err.splitlines()[-1].startswith("jitcep: error: MissingColumnError:")


def test_terminal_bar_redraws_in_place_and_hides_quick_runs():
    import io
    import time

    stream = io.StringIO()
    bar = Progress(stream, cli.STAGES, delay=0.0, tty=True)
    bar.stage("reading")
    bar.stage("matching")
    time.sleep(0.25)  # the ticker redraws
    bar.close()
    text = stream.getvalue()
    assert text.count("\r\x1b[K") >= 3 and "\n" not in text.rstrip("\n")
    assert "1/5 reading" in text and "3/5 matching" in text and "[########" in text
    assert text.endswith("s\n") and "jitcep: done in" in text

    quick = io.StringIO()
    bar = Progress(quick, cli.STAGES, delay=60.0, tty=True)  # a run shorter than the delay prints nothing
    bar.stage("reading")
    bar.close()
    assert quick.getvalue() == ""


def test_fallback_is_one_warning_line_and_the_same_result(files):
    tmp, _, data = files
    pat = tmp / "stnm.cep"
    # 18 closures that may all be empty: 18 alternatives, past DNF_MAX_ALTERNATIVES, so the pattern falls
    # back (every pattern falls back only past such a limit; no event has a type Z*, so the lists are short)
    zs = ", ".join(f"Z{i}* z{i}[]" for i in range(16))
    pat.write_text(f"PATTERN SEQ({zs}, B* b[], C* c[]) WHERE avg(c.x) < avg(b.x) WITHIN 10")
    opt = ["--option", "strategy=skip_till_next_match"]
    out_c, out_r = tmp / "c.parquet", tmp / "r.parquet"
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", "-o", out_c, *opt)
    assert r.returncode == 0
    [line] = r.stderr.splitlines()
    assert line.startswith("jitcep: warning: FallbackWarning: the compiled engine needs a single variable")
    assert line.endswith("but not under 18 alternatives (DNF_MAX_ALTERNATIVES=16); it runs on the reference "
                         "evaluator (same result, slower)")
    for engine in ("reference", "auto"):
        args = ["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out_r), "--engine", engine,
                *opt]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cli.main(args) == 0
        assert pl.read_parquet(out_r).equals(pl.read_parquet(out_c))


# --- paths the CLI cannot use: one line, status 2, nothing written ------------------------


def test_pattern_file_not_utf8(files):
    tmp, _, data = files
    bad = tmp / "latin1.cep"
    bad.write_bytes(PATTERN.replace("rises", "st\xe9igt").encode("latin-1"))
    r = run_cli("run", bad, data, "--time", "t", "--type", "kind", "-o", tmp / "out.parquet")
    _one_line_error(r, "CliError")
    assert "is not UTF-8 text (byte 0xe9 at offset 7)" in r.stderr
    assert sorted(os.listdir(tmp)) == ["events.parquet", "latin1.cep", "p.cep"]


def test_pattern_file_with_a_byte_order_mark(files):
    tmp, _, data = files
    pat = tmp / "bom.cep"
    pat.write_bytes(b"\xef\xbb\xbf" + PATTERN.encode())
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^2 matches$", r.stdout, re.M)


def test_output_naming_a_directory(files):
    tmp, pat, data = files
    (tmp / "out.parquet").mkdir()
    r = run_cli("run", pat, data, "--time", "t", "--type", "kind", "-o", tmp / "out.parquet")
    _one_line_error(r, "CliError")
    assert "it is a directory" in r.stderr
    assert sorted(os.listdir(tmp)) == ["events.parquet", "out.parquet", "p.cep"]
    assert os.listdir(tmp / "out.parquet") == []


@pytest.mark.parametrize("where", ["missing/out.parquet", "events.parquet/out.parquet"])
def test_output_directory_is_checked_before_the_run(files, where):
    tmp, pat, _ = files
    # the input is missing too: the output's error comes first, so nothing was read or matched
    r = run_cli("run", pat, tmp / "no-such-input.parquet", "-o", tmp / where)
    _one_line_error(r, "CliError")
    assert ("does not exist" if where.startswith("missing") else "is not a directory") in r.stderr


@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_output_mode_follows_the_umask(files, mask):
    tmp, pat, data = files
    old = os.umask(mask)
    try:
        for ext in ("parquet", "csv", "ndjson"):
            out = tmp / f"m.{ext}"
            assert cli.main(["run", str(pat), str(data), "--time", "t", "--type", "kind", "-o", str(out)]) == 0
            assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~mask, ext
    finally:
        os.umask(old)


def _modes_apply():
    """``subprocess`` keywords for a child bound by file modes: as root (which passes every mode check),
    drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set before the exec (Linux)."""
    if os.geteuid() != 0:
        return {}
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def drop():
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if prctl(24, cap, 0, 0, 0):  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return {"preexec_fn": drop}


def run_cli_bound_by_modes(*args) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-m", "jitcep.cli", *map(str, args)], capture_output=True,
                              text=True, timeout=600, **_modes_apply())
    except subprocess.SubprocessError as e:  # the capability could not be dropped
        pytest.skip(f"cannot make file modes apply to a child process: {e}")


def test_unwritable_output_directory(files):
    tmp, pat, data = files
    (tmp / "ro").mkdir(mode=0o555)
    r = run_cli_bound_by_modes("run", pat, data, "--time", "t", "--type", "kind", "-o", tmp / "ro" / "out.parquet")
    _one_line_error(r, "CliError")
    assert "Permission denied" in r.stderr
    assert os.listdir(tmp / "ro") == []


def test_unreadable_subdirectory_of_an_input_directory(files):
    tmp, pat, _ = files
    (tmp / "parts" / "hidden").mkdir(parents=True)
    EVENTS.write_parquet(tmp / "parts" / "a.parquet")
    EVENTS.write_parquet(tmp / "parts" / "hidden" / "b.parquet")
    (tmp / "parts" / "hidden").chmod(0o000)
    try:
        r = run_cli_bound_by_modes("run", pat, tmp / "parts", "--time", "t", "--type", "kind")
    finally:
        (tmp / "parts" / "hidden").chmod(0o755)
    _one_line_error(r, "InputFormatError")  # not the matches of the readable part only
    assert "Permission denied" in r.stderr
