"""Generated source -> imported module, cached on disk so Numba's ``cache=True`` works.

Numba caches a compiled function next to the *file* that defines it, keyed by
the file's path and stamp.  Generated code therefore goes to a real file named
by a hash of its source, in ``$JITCEP_CACHE_DIR`` (default
``~/.cache/jitcep/codegen``, see :func:`jitcep.cachedirs.default_root`); a
second process importing the same source finds both the file and Numba's
cache and compiles nothing.

Both are trusted code (:mod:`jitcep.cachedirs`): when the directory is not
private, or Numba's cache is not (``NUMBA_FLAGS["cache"]`` is off), the module
is executed from memory and compiled without a cache, after a warning.
Generated source does not import its Numba flags: the loader gives it
``NUMBA_FLAGS`` with ``cache`` set to whether it has a trusted file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import types
import warnings
from pathlib import Path

from .. import config
from ..cachedirs import default_root, private_dir
from ..errors import UntrustedCacheWarning

_loaded: dict[str, object] = {}


def cache_dir() -> Path | None:
    """The directory generated modules are kept in, created 0700 when missing; None (with an
    :class:`~jitcep.errors.UntrustedCacheWarning`) when it is not private or there is no home."""
    base = os.environ.get("JITCEP_CACHE_DIR")
    if base:
        return private_dir(base, "JITCEP_CACHE_DIR")
    root = default_root()
    if root is None:
        warnings.warn("no home directory and no XDG_CACHE_HOME for jitcep's compile cache: compiled code is "
                      "kept in memory; set JITCEP_CACHE_DIR to a private directory", UntrustedCacheWarning,
                      stacklevel=2)
        return None
    return private_dir(root / "codegen", "jitcep's compile cache")


def source_key(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:20]


def load_module(source: str, prefix: str = "jitcep_gen"):
    """Import ``source`` as a module: from a file in the cache directory (written once, atomically)
    when caching is trusted, else from memory."""
    key = source_key(source)
    if key in _loaded:
        return _loaded[key]
    name = f"{prefix}_{key}"
    directory = cache_dir() if config.NUMBA_FLAGS["cache"] else None
    if directory is None:
        module = types.ModuleType(name)
        module.NUMBA_FLAGS = dict(config.NUMBA_FLAGS, cache=False)
        sys.modules[name] = module
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - jitcep's own generated code
    else:
        path = directory / f"{name}.py"
        if not path.exists() or path.read_text() != source:
            # write to a temp file and rename: concurrent processes never see half a file
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.NUMBA_FLAGS = dict(config.NUMBA_FLAGS, cache=True)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    _loaded[key] = module
    return module
