"""Shared pytest setup for the test suite.

- Makes the helper modules that live beside the tests (``semantic_helpers``,
  ``naive``, ``opencep_data`` ...) importable whatever pytest's import mode.
- Runs every hand-enumerated semantic test on each engine: a test module that
  uses :mod:`semantic_helpers` is parametrised over :data:`ENGINES` (test ids
  end in ``[reference]`` / ``[compiled]``), and the helpers run the public API
  with that engine (see ``semantic_helpers.use_engine``).  ``-k compiled``
  selects one engine.
- ``engine``: a fixture over :data:`ENGINES` for any other test that wants both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

ENGINES = ("reference", "compiled")


def _uses_semantic_helpers(module) -> bool:
    # a module imported names from semantic_helpers (events, matches, run ...)
    return any(getattr(v, "__module__", None) == "semantic_helpers" for v in vars(module).values())


def pytest_generate_tests(metafunc):
    if "engine" in metafunc.fixturenames:
        return  # the test takes its engine itself
    if "_semantic_engine" in metafunc.fixturenames and _uses_semantic_helpers(metafunc.module):
        metafunc.parametrize("_semantic_engine", ENGINES, indirect=True)


@pytest.fixture(autouse=True)
def _semantic_engine(request):
    """The engine semantic_helpers runs with during one test (unparametrised tests: untouched)."""
    engine = getattr(request, "param", None)
    if engine is None:
        yield None
        return
    import semantic_helpers

    with semantic_helpers.use_engine(engine):
        yield engine


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """Each engine of ``Query.run`` in turn."""
    return request.param
