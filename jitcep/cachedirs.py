"""Compile caches are trusted code: which directories may hold them (DESIGN.md section 5).

Numba's cache index files are pickles, unpickled by every process that
finds them, so whoever can write a cache directory can run code in every
process that loads from it.  jitcep therefore keeps compiled code on disk
only in a *private* directory (:func:`untrusted` says why one is not):

- owned by the current user and writable by nobody else (no group or other
  write bit);
- under parents nobody else can rename it out of: each parent (of the path
  as given and as resolved) owned by the user or root, and not writable by
  group or others unless sticky (like ``/tmp``, where only an entry's owner
  may rename it).

Directories jitcep creates are created 0700 (:func:`private_dir`).  A
directory that fails the check is not used: an
:class:`~jitcep.errors.UntrustedCacheWarning` says why and the code is
compiled in memory, in every process again.

The caches and who decides where they are:

- jitcep's generated predicate modules (:mod:`jitcep.codegen.cache`):
  ``$JITCEP_CACHE_DIR``, default :func:`default_root` ``/codegen``
  (``$XDG_CACHE_HOME/jitcep/codegen`` or ``~/.cache/jitcep/codegen``).
- Numba's caches of every ``cache=True`` function (:func:`numba_cache_trusted`):
  with ``NUMBA_CACHE_DIR`` set, Numba keeps them all there (the kernels and
  the generated predicates alike), so that directory is checked.  Without
  it, a kernel's cache goes to the ``__pycache__`` beside its source file
  when the process can write there: that directory is trusted as much as
  the installed package, since Python already imports ``.pyc`` files from
  it (whoever can write it can replace jitcep's code).  Else Numba uses its
  per-user directory (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``),
  which is checked.
"""

from __future__ import annotations

import os
import stat
import tempfile
import warnings
from pathlib import Path

from .errors import UntrustedCacheWarning

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def default_root() -> Path | None:
    """``$XDG_CACHE_HOME/jitcep`` (when absolute), else ``~/.cache/jitcep``; None without a home."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "jitcep"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "jitcep" if os.path.isabs(home) else None


def _writers(mode: int) -> str:
    return " and ".join(w for w, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if mode & bit)


def _parents_reason(dirs, uid: int) -> str | None:
    """Why one of ``dirs`` (the parents of a cache directory) lets someone else swap what is inside it."""
    for parent in dirs:
        st = os.lstat(parent)
        if st.st_uid not in (0, uid):
            return f"is inside {str(parent)!r}, owned by uid {st.st_uid}"
        if stat.S_ISLNK(st.st_mode):  # the link's target is among the resolved parents
            continue
        if st.st_mode & _OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
            return f"is inside {str(parent)!r}, writable by {_writers(st.st_mode)}"
    return None


def _with_parents(path: Path) -> list[Path]:
    """``path`` and its parents, as given and as resolved (symbolic links followed)."""
    resolved = Path(os.path.realpath(path))
    return [path, *path.parents, resolved, *resolved.parents]


def untrusted(path: str | os.PathLike) -> str | None:
    """Why the directory ``path`` may not hold compiled code, or None when it may (module docstring)."""
    if not hasattr(os, "geteuid"):  # no POSIX owners and modes to check (Windows: ACLs decide)
        return None
    uid = os.geteuid()
    given = Path(os.path.abspath(path))
    try:
        st = os.stat(given)
        if not stat.S_ISDIR(st.st_mode):
            return "is not a directory"
        if st.st_uid != uid:
            return f"is owned by uid {st.st_uid}, not by you (uid {uid})"
        if st.st_mode & _OTHERS_WRITE:
            return f"is writable by {_writers(st.st_mode)} (mode {stat.S_IMODE(st.st_mode):04o})"
        link = os.lstat(given)
        if stat.S_ISLNK(link.st_mode) and link.st_uid not in (0, uid):
            return f"is a symbolic link owned by uid {link.st_uid}"
        # whoever can rename a parent can put another directory in this one's place
        resolved = Path(os.path.realpath(given))
        return _parents_reason([*given.parents, *resolved.parents], uid)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"


def private_dir(path: str | os.PathLike, what: str) -> Path | None:
    """``path`` if it may hold compiled code, created 0700 where missing; else None and an
    :class:`~jitcep.errors.UntrustedCacheWarning` naming ``what`` it is and why it is not used.

    Nothing is created under a parent that fails the check.
    """
    path = Path(os.path.abspath(path))
    try:
        existing = path
        while not os.path.lexists(existing) and existing.parent != existing:
            existing = existing.parent
        reason = None
        if existing != path and hasattr(os, "geteuid"):
            reason = _parents_reason(_with_parents(existing), os.geteuid())
        if reason is None:
            missing = [p for p in (path, *path.parents) if p.is_relative_to(existing) and p != existing]
            for d in reversed(missing):
                try:
                    os.mkdir(d, 0o700)
                except FileExistsError:  # another process made it first: the check below judges it
                    continue
                os.chmod(d, 0o700)  # mkdir's mode passes through the umask: set it exactly
            reason = untrusted(path)
    except OSError as exc:
        reason = f"cannot be created ({exc.strerror or exc})"
    if reason is None:
        return path
    warnings.warn(f"{what} {str(path)!r} {reason}: compiled code is not cached there but kept in memory (it "
                  "is compiled again in every process). Compile caches are trusted code: use a directory you "
                  "own that nobody else can write, e.g. a new path, which jitcep creates with mode 0700",
                  UntrustedCacheWarning, stacklevel=3)
    return None


def _writable(directory: Path) -> bool:
    """Numba's own test of a cache directory: it can be created and a file made in it."""
    try:
        os.makedirs(directory, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


def numba_cache_trusted(kernels_dir: Path) -> bool:
    """Whether ``cache=True`` functions may use Numba's on-disk cache (module docstring).

    ``kernels_dir`` is the directory of jitcep's kernel sources, whose
    ``__pycache__`` Numba uses when ``NUMBA_CACHE_DIR`` is not set.
    """
    from numba.core import config as numba_config

    if numba_config.CACHE_DIR:
        return private_dir(numba_config.CACHE_DIR, "NUMBA_CACHE_DIR") is not None
    if _writable(kernels_dir / "__pycache__"):
        return True
    from numba.misc.appdirs import AppDirs

    user_wide = AppDirs(appname="numba", appauthor=False).user_cache_dir
    return private_dir(user_wide, "Numba's per-user cache directory") is not None
