"""The docstring examples of the public modules run and pass (they are documentation, so they must be true)."""

from __future__ import annotations

import doctest
import importlib
import pydoc

import pytest

import jitcep

# modules whose docstrings hold examples; each must try at least one
_WITH_EXAMPLES = ["jitcep", "jitcep.query", "jitcep.output", "jitcep.pattern.parser", "jitcep.pattern.lexer",
                  "jitcep.pattern.printer", "jitcep.pattern.validate", "jitcep.pattern.kinds", "jitcep.pattern.builder",
                  "jitcep.testing.patterns", "jitcep.pattern.dnf"]


@pytest.mark.parametrize("module", _WITH_EXAMPLES)
def test_docstring_examples(module):
    failed, tried = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0


@pytest.mark.parametrize("fn", [jitcep.compile, jitcep.Query.run, jitcep.output_schema])
def test_public_entry_points_document_with_examples(fn):
    text = pydoc.render_doc(fn, renderer=pydoc.plaintext)
    assert "Examples\n" in text or ">>> " in text
    if fn is not jitcep.output_schema:  # numpydoc sections
        for section in ("Parameters", "Examples"):
            assert f"{section}\n" in text and "-" * len(section) in text


def test_all_is_exactly_the_public_names():
    public = {n for n in vars(jitcep) if not n.startswith("_")} - {"annotations"}
    modules = {n for n in public if type(getattr(jitcep, n)).__name__ == "module"}
    assert set(jitcep.__all__) - {"__version__"} == public - modules
    assert len(jitcep.__all__) == len(set(jitcep.__all__))


def test_every_named_error_is_exported():
    from jitcep import errors

    named = {n for n, c in vars(errors).items()
             if isinstance(c, type) and (issubclass(c, errors.JitcepError) or issubclass(c, Warning))
             and c.__module__ == errors.__name__}
    assert named <= set(jitcep.__all__)
