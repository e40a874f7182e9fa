"""Three ``fabcorr run --shard I/3`` and one single ``fabcorr run`` side by side.

All four run on the example fabric's snapshot with 2 s intervals, without telemetry, so
each link direction's bytes are its samples' estimate, which only the datagrams decide.
Every interval the test sends the same second of the example's sFlow (its flows, and one
on every other switch, so every shard has some), each datagram from its switch's own
address, to the single process and to a real ``fabcorr inlet``, which forwards each to
the shard owning its switch. Datagrams go into the interval of their kernel arrival time,
so an interval whose burst was sent, and passed on by the inlet (its counts say when),
wholly inside it holds the same datagrams everywhere, however busy the machine: for those
intervals the union of the shards' attributions
(their logs) is the single process's, exactly, and no direction is in two shards' logs.
A real Prometheus (Debian's) scrapes the four; summed over the shards, the tenants'
fabric bytes are the single process's, and no link series comes from two shards.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import operator
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from correlator.cli import servers
from correlator.cli.main import main
from correlator.collect.collector import Collector
from correlator.service.config import service_config_from
from correlator.service.service import Service
from correlator.shards import Shard, owner
from inventory.counters import PortCounters
from inventory.factfile import read_facts
from inventory.facts import FactSet
from tests.correlator.service import prometheus
from tests.correlator.service.example_view import SNAPSHOT
from tests.correlator.service.running import (
    EXAMPLE,
    ROOT,
    RunningService,
    fetch_url,
    free_port,
)
from tests.correlator.service.sharding import (
    INTERVAL_S,
    SHARDS,
    Bursts,
    InletCounts,
    Switches,
    burst,
    logged,
    until_agreed,
    wait,
)
from topology.build import build_graph
from topology.schema import NodeKind, port_id
from topology.snapshot import load_snapshot

INTERVALS = 6  # bursts at least; more until Prometheus has the sums


class Inlet(InletCounts):
    """``fabcorr inlet`` in front of ``shards``, knowing the switches of the example's
    snapshot from ``config`` (a shard's), its metrics on a free port."""

    def __init__(self, folder: Path, config: Path, shards: list[Process]) -> None:
        self.sflow_port, self.http_port = free_port(socket.SOCK_DGRAM), free_port()
        super().__init__(f"http://127.0.0.1:{self.http_port}")
        self.stderr = (folder / "inlet.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
             "sys.exit(main())", "inlet", "--config", str(config),
             "--listen", f"127.0.0.1:{self.sflow_port}", "--http",
             f"127.0.0.1:{self.http_port}",
             *(f"--shard-address=127.0.0.1:{shard.sflow_port}" for shard in shards)],
            cwd=ROOT, stderr=self.stderr, stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)})

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError("fabcorr inlet exited: " + Path(self.stderr.name).read_text())
        with contextlib.suppress(ConnectionRefusedError):
            return fetch_url(f"http://127.0.0.1:{self.http_port}/readyz", timeout=5)[0] == 200
        return False

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


class Process:
    """``fabcorr run`` on the example snapshot (``shard`` "I/N", or None: alone), its API
    on ``host`` (a loopback address) and ``ports`` (HTTP, sFlow; default: free ones)."""

    def __init__(self, folder: Path, shard: str | None, host: str = "127.0.0.1",
                 ports: tuple[int, int] | None = None) -> None:
        self.folder, self.shard, self.host = folder, shard, host
        self.http_port, self.sflow_port = ports or (free_port(), free_port(socket.SOCK_DGRAM))
        self.log = folder / "attribution.jsonl"
        config = {
            "topology": {"snapshot": str(SNAPSHOT), "discover_every_s": 0},
            "service": {"listen": f"{host}:{self.http_port}"},
            # the test sends every switch's datagrams from one socket: a relay
            "sflow": {"listen": f"127.0.0.1:{self.sflow_port}", "relays": ["127.0.0.1"]},
            "attribution": {"interval_s": INTERVAL_S, "log": str(self.log)},
            "shards": {"count": SHARDS}}
        (folder / "fabcorr.yaml").write_text(yaml.safe_dump(config))
        self.stderr = (folder / "service.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
             "sys.exit(main())", "run", "--config", str(folder / "fabcorr.yaml"),
             *(["--shard", shard] if shard else [])],
            cwd=ROOT, stderr=self.stderr, stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)})

    @property
    def target(self) -> str:
        return f"{self.host}:{self.http_port}"

    @property
    def url(self) -> str:
        return f"http://{self.target}"

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"fabcorr run {self.shard} exited: "
                                 + (self.folder / "service.log").read_text()[-3000:])
        with contextlib.suppress(ConnectionRefusedError):
            return fetch_url(f"http://{self.target}/readyz", timeout=5)[0] == 200
        return False

    def logged(self) -> dict[float, dict]:
        """Attributed intervals by start (the last record of each)."""
        return logged(self.log)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()

    def interval(self) -> float | None:
        """The start of the last interval its API answers about."""
        status = json.loads(fetch_url(f"{self.url}/api/v1/status", timeout=30)[1])
        return status["interval"]["start"] if status["interval"] else None


SHARD_HOSTS = tuple(f"127.0.0.{i + 2}" for i in range(SHARDS))
"""The shards' API addresses, one port on all: what a headless Service's DNS name gives."""


def _shard_name(index: int) -> str:
    return f"{index}/{SHARDS}"


@pytest.fixture(scope="module")
def processes(tmp_path_factory):
    """The single process, the shards (a test may replace one: closed all the same), the
    inlet in front of them, and the switches sending to the inlet and the single process."""
    started: list[Process] = []
    shards: list[Process] = []
    inlet = switches = None
    try:
        started.append(Process(tmp_path_factory.mktemp("alone"), None))
        port = free_port()
        for index, host in enumerate(SHARD_HOSTS):
            folder = tmp_path_factory.mktemp(f"{index}-of-{SHARDS}")
            shards.append(Process(folder, _shard_name(index), host,
                                  (port, free_port(socket.SOCK_DGRAM))))
        started += shards
        inlet = Inlet(started[0].folder, shards[0].folder / "fabcorr.yaml", shards)
        for process in started:
            wait(process.ready, 120, f"{process.shard or 'alone'} ready")
        wait(inlet.ready, 120, "the inlet ready")
        switches = Switches([("127.0.0.1", started[0].sflow_port),
                             ("127.0.0.1", inlet.sflow_port)])
        yield started[0], shards, inlet, switches
    finally:
        for process in (*started, *shards, *([inlet] if inlet else [])):
            process.close()
        if switches is not None:
            switches.close()


def test_three_shards_answer_as_one_process(processes):
    alone, shards, inlet, switches = processes
    datagrams = burst()
    shares = Counter(owner(switch, SHARDS) for _, switch, _ in datagrams)
    assert sorted(shares) == [0, 1, 2]  # every shard has datagrams
    with prometheus.running([p.target for p in (alone, *shards)]) as server, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        # a datagram of another shard's switch: not believed
        stray = next(data for data, switch, _ in datagrams if owner(switch, SHARDS) != 0)
        sender.sendto(stray, ("127.0.0.1", shards[0].sflow_port))
        clean, agreed = until_agreed(server, switches, datagrams, inlet, INTERVALS)
        assert set(agreed) >= {"team-a", "team-b"}
        # each shard's series are labelled with its index, and none comes from two
        labels = {r["metric"].get("shard", "") for r in server.query("fabcorr_ready")}
        assert labels == {"", "0", "1", "2"}
        twice = server.query("count by (switch, port, direction, tenant) "
                             "(fabcorr_link_tenant_bytes_per_second{shard!=\"\"}) > 1")
        assert twice == []
        rejects = server.query('fabcorr_sflow_rejects_total{reason="unknown-agent"}')
        assert {r["metric"].get("shard", ""): r["value"][1] for r in rejects} == {"0": "1"}

    wait(lambda: all(max(p.logged(), default=0) >= clean[-1] for p in (alone, *shards)),
          120, "the last interval logged everywhere")
    said = [(p.folder / "service.log").read_text() for p in shards]
    assert [re.findall(r"shard (\d/3): (\d) of 6 switches, (\d) of", log) for log in said] == [
        [("0/3", "3", "4")], [("1/3", "2", "4")], [("2/3", "1", "4")]]
    single = alone.logged()
    logs = [shard.logged() for shard in shards]
    for start in clean:
        found = [link for log in logs for link in log[start]["links"]]
        keys = Counter((link["port"], link["direction"]) for link in found)
        assert max(keys.values()) == 1  # no direction attributed by two shards
        expected = {(link["port"], link["direction"]): link for link in single[start]["links"]}
        assert {(link["port"], link["direction"]): link for link in found} == expected
        assert sum(link["samples"] for link in found) > 0
        assert sum(log[start]["unattributed_samples"] for log in logs) == \
            single[start]["unattributed_samples"]


SHARDS_NAME = "fabcorr-shards.test"  # the headless Service name the injected resolver knows


def _resolver(host: str, port: int) -> list[str]:
    assert host == SHARDS_NAME, host
    return list(SHARD_HOSTS)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


ASKED = (("top", "tenants", "-o", "json"), ("top", "jobs", "-o", "json", "--limit", "2"),
         ("top", "pods", "-o", "json"), ("top", "tenants"),
         ("who", "spine01:Ethernet1", "-o", "json"), ("who", "leaf01:Ethernet1", "-o", "json"),
         ("top", "tenants", "--link", "leaf01:Ethernet5", "-o", "json"),
         ("top", "pods", "--link", "spine01:Ethernet1", "-o", "json"),
         ("hotspots", "-o", "json"), ("topology", "summary", "-o", "json"))
"""Cross-shard cables among them: leaf01 (shard 1) to spine01 (shard 0) over Ethernet5."""


def test_the_merged_cli_answers_as_the_single_process(processes, capsys, monkeypatch):
    """``--server`` with the shards (a headless Service name, through an injected
    resolver, or a comma-separated list) answers what ``--server`` of the single process
    does, byte for byte, when all four answer about the same clean interval."""
    alone, shards, inlet, switches = processes
    monkeypatch.setattr(servers, "addresses", _resolver)
    name = f"http://{SHARDS_NAME}:{shards[0].http_port}"
    listed = ",".join(shard.url for shard in shards)
    with Bursts(switches, inlet) as bursts:
        deadline = time.monotonic() + 180
        while True:
            assert time.monotonic() < deadline, f"no steady interval: {bursts.sent}"
            before = {p.interval() for p in (alone, *shards)}
            answers = [[_cli(capsys, *argv, "--server", server) for argv in ASKED]
                       for server in (alone.url, name, listed)]
            after = {p.interval() for p in (alone, *shards)}
            if len(before) == 1 and before == after and before <= bursts.clean():
                break
    single, merged, listed_answers = answers
    assert [status for status, _, _ in single] == [0] * len(ASKED)
    assert merged == single
    assert listed_answers == single
    rows = json.loads(single[0][1])["rows"]
    assert {row["name"] for row in rows} >= {"team-a", "team-b"}
    spine = json.loads(single[4][1])
    assert spine["in"]["samples"] > 0  # sampled at leaf01 (shard 1), asked of spine01's port


def test_a_shard_killed_and_restarted_misses_only_its_switches(processes, capsys,
                                                              tmp_path):
    """SIGKILL shard 1, then a new ``fabcorr run --shard 1/3`` on the same ports: while it
    is down the CLI answers from the others, names it and exits 3, and the inlet counts
    sends to it the kernel refused (and no other shard's); in every clean interval
    the directions of the other shards' switches are the single process's, and shard 1's
    are the single process's when it was up and missing while it was down."""
    alone, shards, inlet, switches = processes
    fabric = load_snapshot(SNAPSHOT)
    killed = 1
    mine = {p for p in fabric.nodes_of(NodeKind.PORT)
            if owner(fabric.attrs(p)["switch"], SHARDS) == killed}
    listed = ",".join(shard.url for shard in shards)
    victim = shards[killed]
    refused = inlet.counts("fabcorr_inlet_dropped_datagrams_total")
    with Bursts(switches, inlet) as bursts:
        wait(lambda: bursts.clean() & set(victim.logged()), 60,
              "a clean burst logged by the shard before the kill")
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait()
        down = time.time()
        wait(lambda: bursts.after(down) >= 2, 60,
              "two clean bursts while it is down")
        status, out, err = _cli(capsys, "top", "tenants", "--server", listed)
        assert status == 3
        assert err.startswith(f"fabcorr: {victim.url}: warning: no answer (cannot reach "
                              f"{victim.url}: ") and err.endswith(
                                  "; answering from the other shards\n"), err
        assert out.startswith("Fabric-wide, per tier: interval ")
        launched = time.time()
        restarted = Process(tmp_path, victim.shard, victim.host,
                            (victim.http_port, victim.sflow_port))
        shards[killed] = restarted
        wait(restarted.ready, 120, "the restarted shard ready")
        up = time.time()
        wait(lambda: bursts.in_intervals_after(up) >= 2, 60,
              "two clean bursts after the restart")
        sent = list(bursts.sent)
    # the inlet sends to the shards from connected sockets: the kernel refuses a send to
    # the killed shard's closed port (at most one datagram counted per batch)
    refusals = {shard: value - refused[shard, reason] for (shard, reason), value in
                inlet.counts("fabcorr_inlet_dropped_datagrams_total").items()
                if reason == "send-error"}
    assert refusals["1"] > 0 and refusals["0"] == refusals["2"] == 0, refusals
    last = max(start for start, _, _ in sent)
    wait(lambda: all(max(p.logged(), default=0) >= last for p in (alone, *shards)), 120,
          "the last interval logged everywhere")
    single, logs = alone.logged(), [victim.logged(), restarted.logged()]
    others = [shard.logged() for index, shard in enumerate(shards) if index != killed]
    seen: Counter = Counter()
    for start, began, ended in sent:
        expected = {(link["port"], link["direction"]): link for link in single[start]["links"]}
        theirs = {(link["port"], link["direction"]): link
                  for log in others for link in log[start]["links"]}
        assert theirs == {key: link for key, link in expected.items() if key[0] not in mine}
        own = {(link["port"], link["direction"]): link for log in logs
               for link in log.get(start, {"links": []})["links"] if link["samples"]}
        whole = {key: link for key, link in expected.items() if key[0] in mine
                 and link["samples"]}
        assert whole
        when = ("after" if start > up else "down" if down < began and ended < launched
                else "before" if ended < down else "restarting")
        assert own == ({} if when == "down" else whole) or when in ("before", "restarting")
        assert own in ({}, whole)  # never a part of an interval
        seen[when, bool(own)] += 1
    assert seen["down", False] >= 2 and seen["after", True] >= 2 and seen["before", True]


def _spine02s_shard() -> tuple[Service, FactSet]:
    """The service of the shard that owns spine02, configured with the example's switches
    over gNMI (not run); and the example's facts."""
    facts = read_facts([EXAMPLE / "facts.yaml"])
    config = service_config_from({
        "switches": [{"name": s.name, "address": s.mgmt_address, "protocols": ["gnmi"]}
                     for s in facts.switches],
        "topology": {"snapshot": str(SNAPSHOT)}, "shards": {"count": SHARDS}}, "f.yaml", {})
    return Service(dataclasses.replace(config, shard=Shard(2, SHARDS))), facts


def test_a_shard_reads_its_switches_and_the_far_ends_of_their_cables():
    service, _ = _spine02s_shard()
    fabric = load_snapshot(SNAPSHOT)
    service.view = dataclasses.replace(service.view, fabric=fabric)
    switches, ports = service._read_switches(fabric)
    assert [s.name for s in switches] == ["leaf01", "leaf02", "leaf03", "leaf04", "spine02"]
    # of the leaves, the ports cabled to spine02 only
    assert ports == {leaf: ("Ethernet6",) for leaf in ("leaf01", "leaf02", "leaf03", "leaf04")}
    read: list[PortCounters] = []
    service.engine.readings = read.extend  # type: ignore[method-assign]
    everything = [PortCounters(fabric.attrs(p)["switch"], fabric.attrs(p)["name"], 1.0, {})
                  for p in fabric.nodes_of(NodeKind.PORT)]
    service._readings(everything)
    spine02 = {p for p in fabric.nodes_of(NodeKind.PORT) if p.startswith("port:spine02/")}
    expected = spine02 | {fabric.peer(p) for p in spine02 if fabric.peer(p)}
    assert {port_id(r.switch, r.port) for r in read} == expected
    assert len(expected) == 8


def test_a_shard_reads_its_switches_before_discovery_finds_them_and_follows_its_cables():
    """A discovery that timed out (a loaded machine, seen in the sharded demo) leaves a
    shard's switch out of its first fabric: the shard reads it all the same, from the
    configuration, and once a fabric with its cables comes, reads their far ends too."""
    service, facts = _spine02s_shard()
    unanswered = build_graph(dataclasses.replace(
        facts, switches=tuple(s for s in facts.switches if s.name != "spine02"),
        interfaces=tuple(i for i in facts.interfaces if i.switch != "spine02"),
        neighbors=tuple(n for n in facts.neighbors if n.local_device != "spine02")))
    service.view = dataclasses.replace(service.view, fabric=unanswered)
    switches, ports = service._read_switches(unanswered)
    assert ([s.name for s in switches], ports) == (["spine02"], {})
    read: list[PortCounters] = []
    service.engine.readings = read.extend  # type: ignore[method-assign]
    service._readings([PortCounters("spine02", "Ethernet1", 1.0, {}),
                       PortCounters("leaf01", "Ethernet6", 1.0, {})])
    assert [(r.switch, r.port) for r in read] == [("spine02", "Ethernet1")]
    service._collector = Collector(switches, 1.0, service._readings, ports=ports)
    asyncio.run(service._swap(load_snapshot(SNAPSHOT)))
    assert [s.name for s in service._collector.switches] == [
        "leaf01", "leaf02", "leaf03", "leaf04", "spine02"]
    assert service._collector.ports == {
        leaf: ("Ethernet6",) for leaf in ("leaf01", "leaf02", "leaf03", "leaf04")}


def _series(metrics: str, name: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'(\w+)="([^"]*)"', line.partition("}")[0]))
            for line in metrics.splitlines() if line.startswith(name + "{")]


HOT = ("leaf01", "Ethernet5")  # marks ECN in its egress queue; cabled to spine01:Ethernet1


def _quiet(switch: str, start: float):
    """Counters of a quiet switch, but for HOT's ECN marks (5,000/s on queue 3)."""
    def counters(port: str, now: float) -> dict[str, int]:
        marks = int(max(0.0, now - start) * 5000) if (switch, port) == HOT else 0
        values = dict.fromkeys(("in_octets", "out_octets", "in_pkts", "out_pkts",
                                "in_discards", "out_discards", "in_errors", "out_errors"), 0)
        for p in range(8):
            values |= {f"pfc_rx_pause/{p}": 0, f"pfc_tx_pause/{p}": 0,
                       f"queue_tx_pkts/{p}": 0, f"queue_dropped/{p}": 0,
                       f"queue_ecn_marked/{p}": marks if p == 3 else 0}
        return values
    return counters


def test_shards_stream_their_switches_and_publish_each_port_once(tmp_path, capsys):
    """Three shards on the six emulated gNMI switches (discovery and counters): each
    streams its own switches and, port by port, the far ends of their cables; each port's
    counters and each switch's health are published by exactly one shard. The ECN marks
    of leaf01's (shard 1's) egress towards spine01 (shard 0's) make a hotspot that shard
    0 judges, having streamed leaf01:Ethernet5 for it, and no other shard."""
    facts = read_facts([EXAMPLE / "facts.yaml"])
    assert [owner(switch, SHARDS) for switch in ("leaf01", "spine01")] == [1, 0]
    with contextlib.ExitStack() as stack:
        shards = []
        for index in range(SHARDS):
            folder = tmp_path / str(index)
            folder.mkdir()
            shards.append(stack.enter_context(RunningService(
                folder, shards={"count": SHARDS}, options=("--shard", f"{index}/{SHARDS}"),
                counters=lambda switch: _quiet(switch, time.time()))))
        hot = {"switch": HOT[0], "port": HOT[1], "direction": "out", "kinds": "ecn",
               "severity": "critical", "shard": "0"}
        for index, shard in enumerate(shards):  # every own port's rates published
            owned = {(i.switch, i.name) for i in facts.interfaces
                     if owner(i.switch, SHARDS) == index}
            shard.wait_for(lambda s=shard, o=owned: {(x["switch"], x["port"]) for x in _series(
                s.metrics(), "fabcorr_link_bytes_per_second")} == o, 60, "counter rates")
        shards[0].wait_for(lambda: [_series(s.metrics(), "fabcorr_hotspot_active")
                                    for s in shards] == [[hot], [], []], 90, "the hotspot")
        ports: Counter = Counter()
        for index, shard in enumerate(shards):
            metrics = shard.metrics()
            up = _series(metrics, "fabcorr_collector_up")
            assert sorted(s["switch"] for s in up) == sorted(
                s.name for s in facts.switches if owner(s.name, SHARDS) == index)
            assert {s["shard"] for s in up} == {str(index)}
            found = {(s["switch"], s["port"]) for s in _series(
                metrics, "fabcorr_link_bytes_per_second")}
            assert {owner(switch, SHARDS) for switch, _ in found} == {index}
            ports.update(found)
            assert _series(metrics, "fabcorr_hotspot_active") == ([hot] if index == 0 else [])
            log = (shard.folder / "service.log").read_text()
            assert re.search(rf"shard {index}/3: \d of 6 switches, 4 of their cables' far "
                             "ends read", log), log[-2000:]
        assert max(ports.values()) == 1
        assert set(ports) == {(i.switch, i.name) for i in facts.interfaces}
        # the CLI over the three: shard 0's hotspot, leaf01's counters judged at spine01
        status = main(["hotspots", "-o", "json", "--server", ",".join(s.url for s in shards)])
        found = json.loads(capsys.readouterr().out)
        assert status == 0
        assert [(h["port"], h["direction"], h["kinds"], h["end"]) for h in found] == [
            (port_id(*HOT), "out", ["ecn"], None)]


def test_a_shard_admits_its_agents_without_parsing_a_snapshots_facts():
    """Admission and scope read the switches from their nodes: a snapshot's facts stay
    unparsed, and the switches made of the nodes are the facts' own."""
    service, _ = _spine02s_shard()
    fabric = load_snapshot(SNAPSHOT)
    service._admission(fabric)
    service.engine.scope(fabric)
    assert callable(fabric._facts)  # still the lazy reader
    by_name = operator.attrgetter("name")
    assert sorted(fabric.switches(), key=by_name) == sorted(fabric.facts.switches, key=by_name)
