"""Shared pytest setup for the test suite.

Makes the helper modules that live beside the tests (``semantic_helpers``,
``naive``, ``opencep_data`` ...) importable whatever pytest's import mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
