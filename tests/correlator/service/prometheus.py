"""A real Prometheus server for tests: Debian's ``/usr/bin/prometheus`` on loopback.

:func:`running` starts it on a free port with a temporary storage directory, 1 s scrape and
rule evaluation intervals, one scrape job (``fabcorr``, ``honor_labels: true`` as the
ServiceMonitor of ``deploy/`` has it) and optional rule files; it waits for ``/-/ready``
and always stops the server and removes its files, also when the test fails.

Without the binary a test skips with the reason, unless it runs as root: ``make test``
installs Debian's ``prometheus`` as root, so there a missing binary is a failure.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.tools import require

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
JOB = "fabcorr"


def binary(path: str) -> str:
    """The installed prometheus or promtool (both in Debian's prometheus package)."""
    return require(Path(path).name, "prometheus")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrometheusError(AssertionError):
    """The HTTP API answered with an error (a bad query, typically)."""


class Prometheus:
    """A started server: its address and its HTTP API."""

    def __init__(self, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.url = url
        self.process = process
        self.log = log

    def api(self, path: str, **params: str | Sequence[str]) -> Any:
        """``data`` of ``/api/v1/<path>``; PrometheusError on an error status."""
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as r:
                status, body = r.status, json.load(r)
        except urllib.error.HTTPError as exc:
            with exc:
                status, body = exc.code, json.load(exc)
        if status != 200 or body.get("status") != "success":
            raise PrometheusError(f"{path} {params}: HTTP {status}, {body.get('errorType')}: "
                                  f"{body.get('error')}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector (or scalar as one sample) of ``expr`` now."""
        data = self.api("query", query=expr)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def series(self, match: str) -> list[dict[str, str]]:
        """Label sets of the series ``match`` selects (last 5 minutes)."""
        return self.api("series", **{"match[]": match, "start": str(time.time() - 300)})

    def alerts(self) -> list[dict[str, Any]]:
        """Every pending or firing alert."""
        return self.api("alerts")["alerts"]

    def rules(self) -> list[dict[str, Any]]:
        """Every rule group as loaded, with the rules' health and last error."""
        return self.api("rules")["groups"]

    def targets(self) -> list[dict[str, Any]]:
        return self.api("targets")["activeTargets"]

    def wait(self, what: str, check: Any, timeout: float = 60.0, every: float = 0.25) -> Any:
        """Poll ``check()`` until it returns something truthy; fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n"
                                     f"{self.log_tail()}")
            if self.process.poll() is not None:
                raise AssertionError(f"prometheus exited ({self.process.returncode}) while "
                                     f"waiting for {what}\n{self.log_tail()}")
            time.sleep(every)

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(FileNotFoundError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""


@contextlib.contextmanager
def running(target: str | Sequence[str], rule_files: Sequence[Path] = (), *,
            timeout: float = 60.0) -> Iterator[Prometheus]:
    """Prometheus scraping ``target`` (``host:port``, ``/metrics``; or several) every
    second and evaluating ``rule_files`` every second; stopped and cleaned up on exit."""
    executable = binary(PROMETHEUS)
    folder = Path(tempfile.mkdtemp(prefix="fabcorr-prometheus-"))
    process: subprocess.Popen[bytes] | None = None
    try:
        rules = []
        for i, path in enumerate(rule_files):
            copy = folder / f"rules-{i}-{Path(path).name}"
            shutil.copyfile(path, copy)
            rules.append(str(copy))
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s",
                       "evaluation_interval": "1s"},
            "rule_files": rules,
            "scrape_configs": [{"job_name": JOB, "honor_labels": True,
                                "static_configs": [{"targets": [target] if isinstance(
                                    target, str) else list(target)}]}],
        }
        (folder / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        port = free_port()
        log = folder / "prometheus.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [executable, f"--config.file={folder / 'prometheus.yml'}",
                 f"--storage.tsdb.path={folder / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}",
                 "--storage.tsdb.retention.time=1h", "--log.level=warn"],
                stdout=out, stderr=subprocess.STDOUT, cwd=folder)
        server = Prometheus(f"http://127.0.0.1:{port}", process, log)
        server.wait("/-/ready", lambda: _ready(server.url), timeout)
        yield server
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _ready(url: str) -> bool:
    """Whether ``/-/ready`` answers 200; False while the port refuses connections or the
    server answers 503 (starting); any other failure is raised."""
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=10) as response:
            return response.status == 200
    except urllib.error.HTTPError as exc:
        with exc:
            if exc.code == 503:
                return False
            raise
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return False
        raise
