"""What a user's tools see of the installed package (PEP 561 marker, data files)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path


def test_package_is_marked_typed_and_ships_the_marker():
    # type checkers read jitcep's annotations only when py.typed is installed beside it (PEP 561)
    assert resources.files("jitcep").joinpath("py.typed").is_file()
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["jitcep"]
