"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol: one page,
navigated, waited on, and asked to evaluate JavaScript (the ``websocket-client`` package,
which comes with ``kubernetes``, speaks the protocol's websocket)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import websocket

BINARY = "chromium"
START_S = 60.0  # the browser writes its DevTools port within this, even on a busy machine


def chromium_or_skip() -> str:
    """The browser's path; skips the test, saying why, when it is not installed."""
    found = shutil.which(BINARY)
    if found is None:
        print(f"no {BINARY} on PATH: the map's browser tests need Debian's chromium package "
              "(`apt-get install chromium`; `make .venv/.installed` installs it as root)")
        pytest.skip(f"no {BINARY} on PATH (apt-get install chromium)")
    return found


class Browser:
    """A context manager: headless Chromium with one blank page; :meth:`load` and
    :meth:`evaluate` act on that page."""

    def __init__(self, folder: Path, width: int = 1400, height: int = 800) -> None:
        self.folder, self.size = folder, (width, height)
        self.process: subprocess.Popen | None = None
        self.socket: websocket.WebSocket | None = None
        self._next = 0

    def __enter__(self) -> Browser:
        profile = self.folder / "chromium-profile"
        (profile / "DevToolsActivePort").unlink(missing_ok=True)  # a former run's
        self.process = subprocess.Popen(
            [chromium_or_skip(), "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-extensions", "--hide-scrollbars",
             f"--window-size={self.size[0]},{self.size[1]}", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port = self._port(profile / "DevToolsActivePort")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
                page = next(t for t in json.load(r) if t["type"] == "page")
            self.socket = websocket.create_connection(page["webSocketDebuggerUrl"],
                                                      timeout=60, suppress_origin=True)
            self.call("Page.enable")
            self.call("Performance.enable")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.socket is not None:
            self.socket.close()
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def _port(self, file: Path) -> int:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if file.exists() and file.read_text().strip():
                return int(file.read_text().split()[0])
            assert self.process is not None and self.process.poll() is None, \
                "chromium exited at start"
            time.sleep(0.1)
        raise AssertionError(f"chromium wrote no DevTools port in {START_S:g} s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command; its result (events on the way are dropped)."""
        assert self.socket is not None
        self._next += 1
        self.socket.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self._next:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if a promise)."""
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                          awaitPromise=True)
        if "exceptionDetails" in found:
            raise AssertionError(f"{expression[:80]}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def load(self, url: str, ready: str, deadline_s: float = 120.0) -> float:
        """Open ``url`` and wait until ``ready`` (an expression) is true in its document;
        the seconds from navigating to that moment."""
        began = time.monotonic()
        self.call("Page.navigate", url=url)
        current = f"location.href === {json.dumps(url)} && document.body !== null && ({ready})"
        while time.monotonic() - began < deadline_s:
            if self.evaluate(current):
                return time.monotonic() - began
            time.sleep(0.02)
        raise AssertionError(f"{url}: not ready ({ready}) after {deadline_s:g} s")

    def cpu_s(self) -> float:
        """CPU seconds the browser's processes have used (user and system, from /proc):
        what loading a page costs, however busy the machine is."""
        assert self.process is not None
        parents, ticks = {}, {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:  # a process that just ended
                continue
            pid = int(stat.parent.name)
            parents[pid], ticks[pid] = int(fields[1]), int(fields[11]) + int(fields[12])
        ours, grown = {self.process.pid}, True
        while grown:
            found = {pid for pid, parent in parents.items() if parent in ours} - ours
            ours |= found
            grown = bool(found)
        return sum(ticks.get(pid, 0) for pid in ours) / os.sysconf("SC_CLK_TCK")

    def screenshot(self, path: Path) -> None:
        """The viewport as a PNG."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
