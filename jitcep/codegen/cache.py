"""Generated source -> imported module, cached on disk so Numba's ``cache=True`` works.

Numba caches a compiled function next to the *file* that defines it, keyed by
the file's path and stamp.  Generated code therefore goes to a real file named
by a hash of its source, in ``$JITCEP_CACHE_DIR`` (default
``~/.cache/jitcep/codegen``); a second process importing the same source finds
both the file and Numba's cache and compiles nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

_loaded: dict[str, object] = {}


def cache_dir() -> Path:
    base = os.environ.get("JITCEP_CACHE_DIR")
    if base:
        path = Path(base)
    else:
        root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(root) / "jitcep" / "codegen"
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_key(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:20]


def load_module(source: str, prefix: str = "jitcep_gen"):
    """Import ``source`` as a module from the cache directory (written once, atomically)."""
    key = source_key(source)
    if key in _loaded:
        return _loaded[key]
    name = f"{prefix}_{key}"
    path = cache_dir() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        # write to a temp file and rename: concurrent processes never see half a file
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _loaded[key] = module
    return module
