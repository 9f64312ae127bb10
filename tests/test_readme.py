"""The README's pattern examples must stay valid: each one compiles (parse + validate)."""

import re
from pathlib import Path

import pytest

import jitcep

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _patterns():
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", README, flags=re.S):
        # python blocks hold the pattern inside a triple-quoted string
        m = re.search(r'"""(.*?)"""', block, flags=re.S)
        text = m.group(1) if m else block
        if re.match(r"\s*(PATTERN|EVENT)\b", text):
            out.append(text)
    return out


def test_readme_has_pattern_examples():
    assert len(_patterns()) >= 2


@pytest.mark.parametrize("text", _patterns())
def test_readme_pattern_compiles(text):
    jitcep.compile(text)
