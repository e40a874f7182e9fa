"""Containers of the project's image for the deploy tests: ``docker`` commands, the image
``make image`` builds (:func:`build_image`, once per run through the ``image`` fixture),
and what the tests ask of a running container."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
IMAGE, BASE = f"fabcorr:{VERSION}", "fabcorr-base:bookworm"


def docker(*args: str, timeout: float = 120, check: bool = True,
           stderr: int = subprocess.PIPE) -> str:
    """``docker ARGS``' output; AssertionError with its stderr when it fails (``check``)."""
    done = subprocess.run(["docker", *args], stdout=subprocess.PIPE, stderr=stderr,
                          text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)}: exit {done.returncode}: "
                             f"{(done.stderr or '').strip()[-2000:]}")
    return done.stdout


def build_image() -> str:
    """``make image`` (incremental), or a skip saying what is missing."""
    if shutil.which("docker") is None:
        pytest.skip("no docker command: the image tests need a Docker engine")
    if subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode:
        pytest.skip("the Docker engine does not answer (docker info failed)")
    if os.geteuid() != 0 and not (ROOT / "build/image/base-bookworm.tar").exists():
        pytest.skip("not root: debootstrap cannot make the image's base")
    began = time.monotonic()
    done = subprocess.run(["make", "--no-print-directory", "image"], cwd=ROOT,
                          capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    size = int(docker("image", "inspect", IMAGE, "--format", "{{.Size}}"))
    print(f"\nmake image: {time.monotonic() - began:.1f} s, {IMAGE} {size / 1e6:.0f} MB")
    return IMAGE


def get(url: str) -> tuple[int, bytes]:
    """Status and body of GET url, whatever the status; ConnectionError when refused."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except urllib.error.URLError as exc:
        raise ConnectionError(str(exc.reason)) from exc


def answers(url: str, status: int = 200) -> bool:
    """Whether GET url answers ``status`` (False while nothing listens)."""
    try:
        return get(url)[0] == status
    except ConnectionError:
        return False


def wait(condition: Callable[[], object], timeout: float, what: str,
         logs: Callable[[], str]) -> None:
    """Until ``condition()``; AssertionError with the end of ``logs()`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} in {timeout} s:\n{logs()[-3000:]}")
        time.sleep(0.2)


def logs(container: str) -> str:
    """The container's output, stdout and stderr interleaved."""
    return docker("logs", container, check=False, stderr=subprocess.STDOUT)


def ip(container: str, network: str) -> str:
    """The container's address on ``network``."""
    return docker("inspect", container, "--format",
                  f"{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}").strip()


def subnet(network: str) -> tuple[str, str]:
    """The network's subnet and gateway (the host's address on it)."""
    (config,) = json.loads(docker("network", "inspect", network, "--format",
                                  "{{json .IPAM.Config}}"))
    return config["Subnet"], config["Gateway"]
