"""Tools the tests drive: found, or the test skips with a printed reason when not root,
and fails as root (``make test`` installs them as root, and CI runs as root)."""

import os
import shutil

import pytest


def require(tool: str, package: str) -> str:
    """The path of ``tool`` from Debian package ``package``."""
    path = shutil.which(tool)
    if path is None:
        reason = f"{tool} is not installed (Debian package {package}; `make test` installs " \
                 "it as root)"
        if os.geteuid() == 0:
            pytest.fail(reason)
        print(f"skipped: {reason}")
        pytest.skip(reason)
    return path
