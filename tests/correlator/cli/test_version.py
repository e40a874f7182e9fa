"""``fabcorr --version``: the installed distribution's version, from its metadata; the
oracle is pyproject.toml, read here without the product."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[3]


def test_version_prints_the_project_version_and_exits_0():
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    fabcorr = Path(sys.executable).with_name("fabcorr")  # the installed console script
    done = subprocess.run([str(fabcorr), "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"fabcorr {expected}\n", "")
