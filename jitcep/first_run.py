"""Whether the kernels are in Numba's disk cache yet, and the first-run notice.

The kernels (:mod:`jitcep.kernels`) are compiled by Numba on their first
call with each combination of argument types, and kept in Numba's disk cache
(:mod:`jitcep.cachedirs` says where).  On a new machine the first run of a
pattern therefore waits seconds for compilation.  A run on a terminal whose
kernels are not cached yet prints one line (:data:`NOTICE`) so the wait is not
taken for a hang.  Whether they are is decided cheaply, without asking Numba to
load anything: a marker file in the kernels' Numba cache directory, written
after a warm-up (:mod:`jitcep.warmup`) or a compiled run completes, named by the
Numba and Python versions and the kernel sources' sizes and times (what Numba's
own cache is keyed by), so an upgrade or an emptied cache brings the notice back.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TextIO

NOTICE = "jitcep: compiling kernels, first run only (jitcep warmup does it ahead)"

_KERNELS = Path(__file__).parent / "kernels"
_noticed = False
_known_cached = False  # the marker was seen or written by this process: no need to look again


def cache_directory() -> Path | None:
    """The directory Numba keeps the kernels' cache in; None when it is not used (not trusted)."""
    from . import config

    if not config.NUMBA_FLAGS["cache"]:
        return None
    from .kernels import grouping

    try:  # Numba's own locator decides it (NUMBA_CACHE_DIR, __pycache__ or the per-user directory)
        return Path(grouping._counting_sort._cache._cache_path)
    except AttributeError:  # a Numba whose cache object is laid out otherwise: no notice, no marker
        return None


def _stamp() -> str:
    import numba

    h = hashlib.sha1(f"{numba.__version__} {sys.version_info[:2]}".encode())
    for src in sorted(_KERNELS.glob("*.py")):
        st = src.stat()
        h.update(f"{src.name} {st.st_mtime_ns} {st.st_size}".encode())
    return h.hexdigest()[:16]


def marker() -> Path | None:
    """The file that says this installation's kernels are in the cache; None when nothing is cached."""
    directory = cache_directory()
    return None if directory is None else directory / f"jitcep-warm-{_stamp()}"


def kernels_cached() -> bool:
    """Whether a warm-up or a compiled run has filled the kernels' cache (True when there is no cache
    to fill: compiling in memory every time is announced by an UntrustedCacheWarning instead)."""
    global _known_cached
    if not _known_cached:
        m = marker()
        _known_cached = m is None or m.exists()
    return _known_cached


def mark_cached() -> None:
    """Record that the kernels' cache is filled (after a successful warm-up or compiled run)."""
    global _known_cached
    if _known_cached:
        return
    m = marker()
    if m is not None and not m.exists():
        try:
            m.parent.mkdir(parents=True, exist_ok=True)
            m.touch()
        except OSError:  # a cache Numba could not write either: the notice stays, nothing else changes
            return
    _known_cached = True


def should_notice(stream: TextIO) -> bool:
    """Whether to print :data:`NOTICE` on ``stream``: a terminal, once per process, kernels not cached."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or stream-like object without a terminal
        return False
    return tty and not _noticed and not kernels_cached()


def notice(stream: TextIO | None = None) -> None:
    """Print :data:`NOTICE` when :func:`should_notice` says so (called before the compiled engine runs)."""
    global _noticed
    stream = sys.stderr if stream is None else stream
    if should_notice(stream):
        _noticed = True
        print(NOTICE, file=stream, flush=True)


def silence() -> None:
    """No notice from now on in this process (a warm-up announces its own compilation)."""
    global _noticed
    _noticed = True
