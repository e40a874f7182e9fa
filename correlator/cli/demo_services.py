"""The services ``fabcorr demo`` runs as child processes on loopback: one ``fabcorr run``,
or (``--shards N``) N ``fabcorr run --shard I/N`` behind one ``fabcorr inlet``, which the
emulated switches send their sFlow to; and their API answers as one process's
(:mod:`correlator.cli.merge`).

One process keeps its files in the demo's folder; shard I keeps its configuration, log
and attribution log in ``shard-I/`` and serves its API on ``--listen``'s port + I, the
inlet its metrics on port + N (log ``inlet.log``). Each shard discovers its own switches:
the whole fabric is built from their facts (:func:`correlator.cli.merge.fabric`), as
``fabcorr topology --server`` builds it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from correlator.cli import merge
from correlator.data import to_data
from inventory.errors import SourceError
from inventory.schema import split_address
from topology import queries
from topology.graph import FabricGraph
from topology.snapshot import load_snapshot

PASSWORD_ENV = "FABCORR_DEMO_GNMI_PASSWORD"
_FABCORR = [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
            "sys.exit(main())"]


@dataclass
class Services:
    """The processes (name, process, its stderr log), the APIs (one per shard), the
    attribution logs, where the switches send sFlow, the topology the one process saves,
    and the inlet's metrics (None: no inlet)."""

    processes: list[tuple[str, subprocess.Popen, Path]]
    urls: list[str]
    logs: list[Path]
    sflow: tuple[str, int]
    topology: Path
    inlet: str | None
    _seen: dict[float, dict[int, dict[str, Any]]] = field(default_factory=dict)
    """Interval start -> shard -> its interval as last asked (the shards close an interval
    at moments of their own: each is seen in the status while it is the shard's last)."""

    def status(self) -> dict[str, Any]:
        """``/api/v1/status``, merged over the shards: its interval the latest every shard
        has been seen to close (asked at least once an interval)."""
        answers = [get(url, "/api/v1/status") for url in self.urls]
        if len(answers) == 1:
            return answers[0]
        for index, answer in enumerate(answers):
            if answer["interval"] is not None:
                self._seen.setdefault(answer["interval"]["start"], {})[index] = \
                    answer["interval"]
        closed = [start for start, found in self._seen.items() if len(found) == len(answers)]
        if not closed:
            return merge.status(answers, None)
        latest = max(closed)
        self._seen = {start: found for start, found in self._seen.items() if start >= latest}
        return merge.status(answers, [self._seen[latest][i] for i in range(len(answers))])

    def fabric(self) -> FabricGraph:
        """The whole fabric: the one process's saved topology, or the shards' facts
        built into one."""
        if self.inlet is None:
            return load_snapshot(self.topology)
        facts = "/api/v1/topology/facts?part="
        return merge.fabric(get(self.urls[0], facts + "workloads"),
                            [(get(url, facts + "switches"), get(url, facts + "hosts"))
                             for url in self.urls])

    def summary(self) -> dict[str, Any]:
        """``/api/v1/topology/summary`` of the whole fabric."""
        if self.inlet is None:
            return get(self.urls[0], "/api/v1/topology/summary")
        return to_data(queries.summary(self.fabric()))

    def hotspots(self) -> list[dict[str, Any]]:
        """``/api/v1/hotspots``, merged over the shards."""
        return merge.hotspots([get(url, "/api/v1/hotspots") for url in self.urls])

    def wait_ready(self, timeout: float = 60) -> float:
        """Seconds until every process is ready; SourceError when one exits or is not
        ready in ``timeout``."""
        began = time.monotonic()
        probes = [f"{url}/api/v1/status" for url in self.urls] + \
            ([f"{self.inlet}/readyz"] if self.inlet else [])
        while time.monotonic() - began < timeout:
            for name, process, log in self.processes:
                if process.poll() is not None:
                    raise SourceError(f"{name} exited ({process.returncode}): "
                                      + log.read_text()[-2000:])
            if all(_ready(probe) for probe in probes):
                return time.monotonic() - began
            time.sleep(0.2)
        raise SourceError(f"not ready after {timeout:g} s; see "
                          + ", ".join(str(log) for _, _, log in self.processes))

    def stop(self) -> None:
        for _, process, _ in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for _, process, _ in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def start(fabric: Any, out: Path, listen: str, interval: float, shards: int) -> Services:
    """The services for ``fabric`` (an :class:`~simulator.emulator.EmulatedFabric`):
    one process when ``shards`` is 0, else that many shards behind an inlet."""
    host, port = split_address(listen)
    facts = out / "cluster-facts.yaml"
    fabric.write_cluster_facts(facts)
    config = {"switches": fabric.switch_config(PASSWORD_ENV),
              "topology": {"facts": [str(facts)], "discover_every_s": interval,
                           "save": str(out / "topology.json")},
              "telemetry": {"interval_s": 1.0},
              "attribution": {"interval_s": interval}}
    if not shards:
        url, sflow = _address(host, port), ("127.0.0.1", _free_udp_port())
        process = _run(out, config, url, sflow)
        return Services([process], [f"http://{url}"], [out / "attribution.jsonl"], sflow,
                        out / "topology.json", None)
    processes, urls, targets = [], [], []
    for index in range(shards):
        folder = out / f"shard-{index}"
        folder.mkdir(exist_ok=True)
        url, sflow = _address(host, port + index), ("127.0.0.1", _free_udp_port())
        topology = {k: v for k, v in config["topology"].items() if k != "save"}
        processes.append(_run(folder, {**config, "topology": topology,
                                       "shards": {"count": shards}}, url, sflow,
                              ("--shard", f"{index}/{shards}"), ["127.0.0.1"]))
        urls.append(f"http://{url}")
        targets.append(f"{sflow[0]}:{sflow[1]}")
    inlet, sflow = _address(host, port + shards), ("127.0.0.1", _free_udp_port())
    log = out / "inlet.log"
    with log.open("w") as stream:
        processes.append(("fabcorr inlet", subprocess.Popen(
            [*_FABCORR, "inlet", "--config", str(out / "shard-0" / "fabcorr.yaml"),
             "--listen", f"{sflow[0]}:{sflow[1]}", "--http", inlet,
             *(f"--shard-address={target}" for target in targets)],
            stdout=subprocess.DEVNULL, stderr=stream, env=_env()), log))
    return Services(processes, urls, [out / f"shard-{i}" / "attribution.jsonl"
                                      for i in range(shards)], sflow, out / "topology.json",
                    f"http://{inlet}")


def _run(folder: Path, config: dict[str, Any], listen: str, sflow: tuple[str, int],
         options: tuple[str, ...] = (), relays: list[str] | None = None
         ) -> tuple[str, subprocess.Popen, Path]:
    """``fabcorr run`` with ``config`` written to ``folder``, its API on ``listen``, sFlow
    on ``sflow`` (from the switches' own addresses, or from ``relays``: an inlet), its
    files there."""
    log = folder / "attribution.jsonl"
    log.unlink(missing_ok=True)
    path = folder / "fabcorr.yaml"
    path.write_text(yaml.safe_dump({
        **config, "service": {"listen": listen},
        "sflow": {"listen": f"{sflow[0]}:{sflow[1]}", "relays": relays or []},
        "attribution": {**config["attribution"], "log": str(log)}}, sort_keys=False))
    stderr = folder / "service.log"
    with stderr.open("w") as stream:
        process = subprocess.Popen(
            [*_FABCORR, "run", "--config", str(path), *options], stdout=subprocess.DEVNULL,
            stderr=stream, env=_env())
    return " ".join(("fabcorr run", *options)), process, stderr


def _env() -> dict[str, str]:
    """The environment holding the emulated switches' password (the configuration names
    it)."""
    return {**os.environ, PASSWORD_ENV: "demo-only"}


def get(url: str, path: str) -> Any:
    """The JSON ``url`` answers at ``path`` (an error's body too)."""
    try:
        with urllib.request.urlopen(url + path, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
    except urllib.error.HTTPError:
        return False
    except OSError:  # not listening yet
        return False
    return not url.endswith("/api/v1/status") or bool(json.loads(body).get("ready"))


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
