"""``fabcorr run`` for tests: the example fabric's six switches as emulated gNMI targets on
their loopback management addresses, its Kubernetes objects as dumps, the service in a
subprocess, and the example scenario's sFlow sent to it over UDP. With ``tls`` (certificate
and key files) and ``auth`` (user, password) the service is asked over HTTPS, verifying its
certificate, with basic auth."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import yaml

from inventory.factfile import read_facts
from simulator.gnmi_target import CounterSource, GnmiTarget
from simulator.sflow_run import capture
from simulator.spec import load_capture_spec

ROOT = Path(__file__).parents[3]
EXAMPLE = ROOT / "examples" / "fabric-small"
PASSWORD = "lab-only"


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_session(process: subprocess.Popen) -> list[str]:
    """The command lines of the live processes in ``process``'s session (it started with
    ``start_new_session=True``: its children, and theirs), ``process`` itself left out."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            command = (stat.parent / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) == process.pid and int(stat.parent.name) != process.pid \
                and fields[0] != "Z":
            found.append(command.replace(b"\0", b" ").decode(errors="replace").strip())
    return found


def left_behind(process: subprocess.Popen, grace_s: float = 5.0) -> list[str]:
    """What ``process`` (started with ``start_new_session=True``) left running in its
    session ``grace_s`` after it was asked (a child still exiting then shows without its
    command line: it gets the time), all of which is then killed, ``process`` too, and
    reaped."""
    deadline = time.monotonic() + grace_s
    left = in_session(process)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = in_session(process)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return left


def udp_drops(port: int) -> int:
    """Datagrams the kernel dropped for the UDP sockets bound to ``port`` on 127.0.0.1 (the
    last column of /proc/net/udp: a full receive buffer)."""
    local = f"0100007F:{port:04X}"
    lines = Path("/proc/net/udp").read_text().splitlines()[1:]
    return sum(int(line.split()[-1]) for line in lines if line.split()[1] == local)


class RunningService:
    """A context manager: targets up, service ready; :meth:`stop` sends SIGTERM."""

    def __init__(self, folder: Path, interval_s: float = 1.0, *,
                 tls: tuple[Path, Path] | None = None, auth: tuple[str, str] | None = None,
                 sflow_workers: int = 1, options: tuple[str, ...] = (),
                 counters: Callable[[str], CounterSource] | None = None,
                 **config: object) -> None:
        self.folder, self.interval_s, self.sflow_workers = folder, interval_s, sflow_workers
        self.options = options  # more of fabcorr run's command line
        self.counters = counters  # switch name -> its target's counters (else steady ones)
        self.tls, self.auth = tls, auth
        self.facts = read_facts([EXAMPLE / "facts.yaml"])
        self.http_port, self.sflow_port = free_port(), free_port(socket.SOCK_DGRAM)
        self.log = folder / "attribution.jsonl"
        self.extra = config
        self.targets: list[GnmiTarget] = []
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> RunningService:
        try:
            for switch in self.facts.switches:
                self.targets.append(GnmiTarget.from_facts(
                    self.facts, switch.name, host=switch.mgmt_address, username="fabcorr",
                    password=PASSWORD, pack=True,
                    **({"counters": self.counters(switch.name)} if self.counters else {})
                ).start())
            config = self.folder / "fabcorr.yaml"
            config.write_text(yaml.safe_dump(self._config()))
            self.stderr = (self.folder / "service.log").open("w")
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
                 "sys.exit(main())", "run", "--config", str(config), *self.options],
                cwd=ROOT, stderr=self.stderr, stdout=subprocess.DEVNULL,
                env={**os.environ, "FABCORR_GNMI_PASSWORD": PASSWORD,
                     "PYTHONPATH": str(ROOT),
                     **({"FABCORR_SERVICE_PASSWORD": self.auth[1]} if self.auth else {})})
            self.wait_for(self._ready, 60, "ready")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for target in self.targets:
            target.stop()
        if hasattr(self, "stderr"):
            self.stderr.close()

    def _config(self) -> dict:
        switches = [{"name": s.name, "address": s.mgmt_address, "protocols": ["gnmi"]}
                    for s in self.facts.switches]
        gnmi = {"insecure": True, "username": "fabcorr", "timeout_s": 5.0,
                "password": {"env": "FABCORR_GNMI_PASSWORD"}}
        return {"defaults": {"gnmi": gnmi},
                "switches": [{**s, "gnmi": {"port": t.port}}
                             for s, t in zip(switches, self.targets, strict=True)],
                "service": self._service(),
                "kubernetes": {"source": [str(EXAMPLE / "kubernetes")]},
                "topology": {"discover_every_s": 0},
                "telemetry": {"interval_s": self.interval_s},
                # the test sends every switch's datagrams from one socket: a relay
                "sflow": {"listen": f"127.0.0.1:{self.sflow_port}", "relays": ["127.0.0.1"],
                          "workers": self.sflow_workers},
                "attribution": {"interval_s": self.interval_s, "log": str(self.log)},
                **self.extra}

    def _service(self) -> dict:
        service = {"listen": f"127.0.0.1:{self.http_port}"}
        if self.tls:
            service |= {"tls_cert": str(self.tls[0]), "tls_key": str(self.tls[1])}
        if self.auth:
            service["username"] = self.auth[0]  # the password comes from the environment
        return service

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.http_port}"

    def fetch(self, path: str) -> tuple[int, bytes]:
        """Status and body of ``GET path``, whatever the status. A refused connection
        raises ConnectionRefusedError (not urllib's wrapper), any other failure its own
        error: never a made-up status."""
        context = ssl.create_default_context(cafile=str(self.tls[0])) if self.tls else None
        return fetch_url(self.url + path, context, self.auth, timeout=5)

    def get(self, path: str, status: int = 200) -> bytes:
        """The body of ``GET path``, which must answer exactly ``status``."""
        found, body = self.fetch(path)
        assert found == status, f"GET {path}: {found}, not {status}: {body[:500]!r}"
        return body

    def metrics(self) -> str:
        return self.get("/metrics").decode()

    def _ready(self) -> bool:
        try:
            return self.fetch("/readyz")[0] == 200
        except ConnectionRefusedError:  # not listening yet
            return False

    def wait_for(self, condition, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"fabcorr run exited {self.process.returncode}: "
                                     + (self.folder / "service.log").read_text()[-3000:])
            if time.monotonic() > deadline:
                raise AssertionError(f"not {what} in {timeout} s: "
                                     + (self.folder / "service.log").read_text()[-3000:])
            time.sleep(0.1)

    def send_example(self, seconds: float, stop_after: float | None = None) -> int:
        """The example scenario's datagrams, re-timed to now, over ``seconds`` of wall
        time (all of them, unless ``stop_after`` seconds of sending pass first; counted from
        the first datagram, so a slow machine's time making them does not count); returns
        how many were sent."""
        spec = load_capture_spec(EXAMPLE / "flows.yaml")
        run = capture(self.facts, list(spec.flows), spec.seconds, spec.sampling_rate,
                      time.time(), spec.seed, spec.counter_every_s)
        sent, start = 0, time.monotonic()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            for n, (_, data, _) in enumerate(run.datagrams):
                due = start + seconds * n / len(run.datagrams)
                if stop_after is not None and time.monotonic() >= start + stop_after:
                    break
                time.sleep(max(0.0, due - time.monotonic()))
                sender.sendto(data, ("127.0.0.1", self.sflow_port))
                sent += 1
        return sent

    def stop(self, timeout: float = 30.0) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def logged(self) -> list[dict]:
        """The attribution log's records, the last of each ``start`` (a correction replaces
        its interval's provisional record)."""
        records = {}
        for line in self.log.read_text().splitlines():
            record = json.loads(line)
            records[record["attribution"]["start"]] = record
        return list(records.values())


def fetch_url(url: str, context: ssl.SSLContext | None = None,
              auth: tuple[str, str] | None = None, timeout: float = 10) -> tuple[int, bytes]:
    """Status and body of ``GET url`` (with basic ``auth``), whatever the status; a refused
    connection raises ConnectionRefusedError, not urllib's wrapper."""
    request = urllib.request.Request(url)
    if auth:
        token = base64.b64encode(":".join(auth).encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            raise exc.reason from exc
        raise
