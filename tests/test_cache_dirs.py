"""Compile caches are trusted code: only private directories hold them (jitcep/cachedirs.py).

A directory others could write -- group-writable, owned by another uid, or
inside a parent others can write -- is bypassed with an UntrustedCacheWarning
and the code is compiled in memory, with the same results.  Directories
jitcep creates are 0700.  Changing another uid's ownership needs root; those
tests are skipped otherwise.
"""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
import warnings

import numpy as np
import polars as pl
import pytest

import jitcep
from jitcep import cachedirs
from jitcep.codegen import cache as codegen_cache
from jitcep.errors import UntrustedCacheWarning

OTHER_UID = 12345
EVENTS = pl.DataFrame({"type": ["A", "B", "A", "B", "B"], "ts": [1, 2, 3, 4, 5], "x": [5, 1, 2, 7, 3]})
EXPECTED = [(0, 3), (2, 3), (2, 4)]  # (a row, b row) with a.x < b.x, by hand


def pairs(df: pl.DataFrame) -> list:
    return sorted(zip(df["a"].struct.field("row").to_list(), df["b"].struct.field("row").to_list()))


def root_only():
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another uid needs root")


def group_writable(d):
    d.mkdir()
    d.chmod(0o770)
    return d


def other_owned(d):
    root_only()
    d.mkdir(mode=0o700)
    os.chown(d, OTHER_UID, OTHER_UID)
    return d


def files_under(d) -> list:
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, _, names in os.walk(d) for n in names)


# --- the check ---------------------------------------------------------------------------------------


def test_a_private_directory_is_trusted(tmp_path):
    d = tmp_path / "mine"
    d.mkdir(mode=0o700)
    assert cachedirs.untrusted(d) is None
    d.chmod(0o755)  # others may read, not write
    assert cachedirs.untrusted(d) is None


def test_others_write_bits_and_owner_are_refused(tmp_path):
    assert "writable by group (mode 0770)" in cachedirs.untrusted(group_writable(tmp_path / "g"))
    (tmp_path / "o").mkdir()
    (tmp_path / "o").chmod(0o757)
    assert "writable by others" in cachedirs.untrusted(tmp_path / "o")
    assert f"owned by uid {OTHER_UID}" in cachedirs.untrusted(other_owned(tmp_path / "u"))


def test_a_parent_others_could_rename_it_out_of_is_refused(tmp_path):
    shared = group_writable(tmp_path / "shared")
    (shared / "mine").mkdir(mode=0o700)
    assert "is inside" in cachedirs.untrusted(shared / "mine") and "writable by group" in \
        cachedirs.untrusted(shared / "mine")
    sticky = tmp_path / "sticky"  # like /tmp: others may write it, but not rename what they do not own
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "mine").mkdir(mode=0o700)
    assert cachedirs.untrusted(sticky / "mine") is None
    link = tmp_path / "link"  # a private-looking path through a symbolic link into the shared directory
    link.symlink_to(shared)
    assert "writable by group" in cachedirs.untrusted(link / "mine")


def test_created_directories_are_exactly_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o277)  # mkdir(0o700) alone would give 0o500
    try:
        got = cachedirs.private_dir(tmp_path / "a" / "b" / "c", "test cache")
    finally:
        os.umask(old)
    assert got == tmp_path / "a" / "b" / "c"
    for d in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE(os.stat(tmp_path / d).st_mode) == 0o700, d


def test_nothing_is_created_under_an_untrusted_parent(tmp_path):
    shared = group_writable(tmp_path / "shared")
    with pytest.warns(UntrustedCacheWarning, match="writable by group"):
        assert cachedirs.private_dir(shared / "cache", "test cache") is None
    assert os.listdir(shared) == []


# --- jitcep's generated code ---------------------------------------------------------------------------


def _fresh_query(tag: float):
    # a literal of its own: source never loaded in this process, so the loader decides afresh
    return jitcep.compile(f"PATTERN SEQ(A a, B b) WHERE a.x < b.x AND a.x > -{tag} WITHIN 10")


@pytest.mark.parametrize("make", [group_writable, other_owned], ids=["group_writable", "other_uid"])
def test_untrusted_codegen_dir_is_bypassed_and_results_are_right(tmp_path, monkeypatch, make):
    d = make(tmp_path / "gen")
    monkeypatch.setenv("JITCEP_CACHE_DIR", str(d))
    with pytest.warns(UntrustedCacheWarning, match="JITCEP_CACHE_DIR"):
        got = _fresh_query(1000 + np.random.default_rng().random()).run(EVENTS, type="type")
    assert pairs(got) == EXPECTED
    assert files_under(d) == []


def test_default_codegen_dir_is_created_0700(tmp_path, monkeypatch):
    monkeypatch.delenv("JITCEP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UntrustedCacheWarning)
        assert pairs(_fresh_query(2000 + np.random.default_rng().random()).run(EVENTS, type="type")) == EXPECTED
    for d in ("xdg", "xdg/jitcep", "xdg/jitcep/codegen"):
        assert stat.S_IMODE(os.stat(tmp_path / d).st_mode) == 0o700, d
    assert any(f.endswith(".py") for f in files_under(tmp_path / "xdg/jitcep/codegen"))
    assert codegen_cache.cache_dir() == tmp_path / "xdg" / "jitcep" / "codegen"


# --- Numba's cache (kernels and generated code): decided when jitcep is imported --------------------------


def test_untrusted_numba_cache_dir_turns_disk_caching_off(tmp_path, monkeypatch):
    from numba.core import config as numba_config

    kernels = tmp_path / "kernels"
    monkeypatch.setattr(numba_config, "CACHE_DIR", str(other_owned(tmp_path / "numba")))
    with pytest.warns(UntrustedCacheWarning, match=f"NUMBA_CACHE_DIR .* owned by uid {OTHER_UID}"):
        assert cachedirs.numba_cache_trusted(kernels) is False
    monkeypatch.setattr(numba_config, "CACHE_DIR", str(tmp_path / "private"))
    assert cachedirs.numba_cache_trusted(kernels) is True


def test_numbas_per_user_directory_is_checked_when_the_package_dir_is_read_only(tmp_path, monkeypatch):
    from numba.core import config as numba_config

    monkeypatch.setattr(numba_config, "CACHE_DIR", "")
    (tmp_path / "kernels").write_text("")  # a file: no __pycache__ can be made under it, even by root
    readonly_kernels = tmp_path / "kernels" / "sub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(group_writable(tmp_path / "xdg")))
    with pytest.warns(UntrustedCacheWarning, match="Numba's per-user cache directory"):
        assert cachedirs.numba_cache_trusted(readonly_kernels) is False
    (tmp_path / "xdg").chmod(0o700)
    assert cachedirs.numba_cache_trusted(readonly_kernels) is True
    assert stat.S_IMODE(os.stat(tmp_path / "xdg" / "numba").st_mode) == 0o700


RUN = (
    "import polars as pl, jitcep\n"
    "df = pl.DataFrame({'type': ['A', 'B', 'A', 'B', 'B'], 'ts': [1, 2, 3, 4, 5], 'x': [5, 1, 2, 7, 3]})\n"
    "q = jitcep.compile('PATTERN SEQ(A a, B b) WHERE a.x < b.x AND a.x > -31337 WITHIN 10')\n"
    "out = q.run(df, type='type')\n"
    "print(sorted(zip(out['a'].struct.field('row'), out['b'].struct.field('row'))))\n"
)


def test_kernels_bypass_a_numba_cache_dir_of_another_uid(tmp_path):
    numba_dir = other_owned(tmp_path / "numba")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_dir), JITCEP_CACHE_DIR=str(tmp_path / "gen"))
    r = subprocess.run([sys.executable, "-c", RUN], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(EXPECTED)
    assert f"UntrustedCacheWarning: NUMBA_CACHE_DIR {str(numba_dir)!r} is owned by uid {OTHER_UID}" in r.stderr
    assert files_under(numba_dir) == []
    # the generated module ran from memory too: its Numba index would have gone to NUMBA_CACHE_DIR
    assert files_under(tmp_path / "gen") == []


# --- Spark workers -------------------------------------------------------------------------------------------


def test_spark_worker_env_names_no_shared_default(monkeypatch):
    pytest.importorskip("pyspark")
    from spark_adapter.driver import worker_env

    for key in ("NUMBA_CACHE_DIR", "JITCEP_CACHE_DIR", "JITCEP_SPARK_CACHE_DIR"):
        monkeypatch.delenv(key, raising=False)
    env = worker_env(None)
    assert "NUMBA_CACHE_DIR" not in env and "JITCEP_CACHE_DIR" not in env  # each worker's own defaults
    env = worker_env("/srv/c")
    assert env["NUMBA_CACHE_DIR"] == "/srv/c/numba" and env["JITCEP_CACHE_DIR"] == "/srv/c/codegen"


def test_spark_worker_bypasses_a_group_writable_cache_dir(tmp_path):
    """A fresh worker process runs the mapInArrow body with cache_dir= a group-writable directory."""
    pytest.importorskip("pyspark")
    from spark_adapter.driver import worker_env
    from spark_adapter.worker import Job

    q = jitcep.compile("PATTERN SEQ(A a, B b) WHERE a.x < b.x AND a.x > -4242 WITHIN 10")
    frame = EVENTS.with_columns(pl.Series("__cep_seq", [10, 11, 12, 13, 14]))
    target = jitcep.output_schema(q, EVENTS.schema, type="type")
    job = Job(patterns=tuple(q.patterns), options=q.options, time="ts", type="type", time_unit=None,
              partition_by=None, engine="compiled", shape="wide", source_columns=tuple(EVENTS.columns),
              split_time=False, target_schema=pl.DataFrame(schema=target).to_arrow().schema)
    shared = group_writable(tmp_path / "shared")
    env = worker_env(str(shared))
    (tmp_path / "in.pkl").write_bytes(pickle.dumps((pickle.dumps(job), env, frame.to_arrow().to_batches())))
    code = (
        "import pickle, sys\n"
        "payload, env, batches = pickle.load(open(sys.argv[1], 'rb'))\n"
        "from spark_adapter._entry import arrow_task\n"
        "import pyarrow as pa, polars as pl\n"
        "out = pl.from_arrow(pa.Table.from_batches(list(arrow_task(payload, env)(batches))))\n"
        "print(sorted(zip(out['a'].struct.field('row'), out['b'].struct.field('row'))))\n"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "JITCEP_CACHE_DIR")}
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "in.pkl")], env=clean, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([(10 + a, 10 + b) for a, b in EXPECTED])  # rows are seq values
    assert "UntrustedCacheWarning: NUMBA_CACHE_DIR" in r.stderr and "writable by group" in r.stderr
    assert files_under(shared) == []
