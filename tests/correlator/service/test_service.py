"""``fabcorr run`` end to end: six emulated gNMI switches (discovery and counters), the
example cluster's Kubernetes objects, sFlow over UDP; metrics and a clean shutdown. And a
provisional interval's correction, through the service's own publishing path."""

import asyncio
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from itertools import pairwise

import pytest
import yaml

from correlator.attribution.accumulate import Accumulator
from correlator.service.api import handle
from correlator.service.config import service_config_from
from correlator.service.service import Service
from correlator.sflow.accounting import Totals
from inventory.counters import PortCounters
from simulator.reported import read_log
from simulator.sflow_run import capture
from simulator.spec import load_capture_spec
from tests.correlator.service.example_view import SNAPSHOT
from tests.correlator.service.running import (
    EXAMPLE,
    ROOT,
    RunningService,
    free_port,
    udp_drops,
)
from topology.snapshot import load_snapshot


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    with RunningService(tmp_path_factory.mktemp("service")) as running:
        yield running


def _value(metrics: str, name: str, **labels: str) -> float | None:
    for line in metrics.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.partition("}")[0]))
            if all(found.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_discovery_telemetry_and_sflow_come_together_in_the_metrics(service):
    metrics = service.metrics()
    assert _value(metrics, "fabcorr_ready") == 1
    assert _value(metrics, "fabcorr_link_speed_bytes_per_second", switch="spine01",
                  port="Ethernet1", peer_switch="leaf01", peer_port="Ethernet5",
                  tier="leaf-spine") == 5e10  # discovered over gNMI LLDP
    assert _value(metrics, "fabcorr_pod_interface_info", pod="llm-pretrain-worker-0",
                  interface="net1", leaf="leaf01", leaf_port="Ethernet1") == 1  # + Kubernetes
    service.wait_for(lambda: all(_value(service.metrics(), "fabcorr_collector_up",
                                        switch=s.name) == 1 for s in service.facts.switches),
                     120, "collecting from every switch")
    service.wait_for(lambda: _value(service.metrics(), "fabcorr_link_bytes_per_second",
                                    switch="leaf01", port="Ethernet1", direction="in"),
                     120, "a counter rate")
    service.send_example(seconds=3.0)
    service.wait_for(lambda: (_value(service.metrics(), "fabcorr_sflow_samples_total",
                                     type="flow") or 0) > 0, 60, "counting samples")
    service.wait_for(lambda: _value(service.metrics(), "fabcorr_link_tenant_bytes_per_second",
                                    switch="leaf01", port="Ethernet5", direction="out",
                                    tenant="team-a"), 60, "attributing")


def test_a_provisional_interval_is_logged_then_corrected_and_readers_keep_the_last(tmp_path):
    """leaf01:Ethernet5 read at 8, 12 and 19 s (100 B/s), [10, 20) published before its
    23 s reading (300 B/s since 19 s): 1,000 B, provisional; then the correction, 1,125 B
    (the counter at 20 s: 1,100 + 900 x 1/4; at 10 s: 400 x 2/4), on the next line with
    ``replaces``; the log reader, the API and the metrics take the correction."""
    log = tmp_path / "attribution.jsonl"
    service = Service(service_config_from(
        {"topology": {"snapshot": str(SNAPSHOT)}, "telemetry": {"interval_s": 5.0},
         "attribution": {"interval_s": 10.0, "log": str(log)}}, "test.yaml", {}))
    service.view = dataclasses.replace(service.view, fabric=load_snapshot(SNAPSHOT),
                                       ready=True)
    service.engine.readings([PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets})
                             for at, octets in ((8.0, 0), (12.0, 400), (19.0, 1100))])
    rendered = []

    async def run():
        await service._publish(Accumulator(10.0).take(20.0), Totals(datagrams=7))
        rendered.append(service.exposition.render().decode())
        await service._correct()  # the reading past the end is not in yet: nothing
        service.engine.readings([PortCounters("leaf01", "Ethernet5", 23.0,
                                              {"in_octets": 2000})])
        await service._correct()
        rendered.append(service.exposition.render().decode())

    asyncio.run(run())
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["attribution"]["start"], line["attribution"]["provisional"],
             line["attribution"]["replaces"], line["received"]["datagrams"],
             [(link["direction"], link["counter_bytes"])
              for link in line["attribution"]["links"]]) for line in lines] == [
        (10.0, True, False, 7, [("in", 1000.0), ("out", None)]),
        (10.0, False, True, 7, [("in", 1125.0), ("out", None)])]
    assert read_log(log) == ([lines[1]["attribution"]], None)
    status, links = handle(service.view, "GET", "/api/v1/links", {})
    assert (status, links) == (200, lines[1]["attribution"])
    assert [_value(text, "fabcorr_link_bytes_per_second", switch="leaf01", port="Ethernet5",
                   direction="in") for text in rendered] == [100.0, 112.5]
    assert service.engine.provisional == ()


def test_sigterm_after_traffic_attributes_every_sample_received(service):
    """A clean stop once the sender is done; under load: the next test."""
    sent = service.send_example(seconds=6.0, stop_after=2.5)
    assert service.stop() == 0
    assert sent > 100
    lines = service.logged()
    assert len(lines) >= 3
    _contiguous(lines)
    received, attributed = _received_and_attributed(lines)
    assert attributed == received > 0
    last = (service.folder / "service.log").read_text().splitlines()[-1]
    assert last.endswith(f"stopped: {len(lines)} intervals attributed, {received} flow "
                         "samples received")


IP_RECVERR, MSG_ERRQUEUE = 11, 0x2000  # Linux: <linux/in.h>, <bits/socket.h>


def _sflow_header(datagram: bytes) -> tuple[bytes, int]:
    """An sFlow v5 datagram's header (version to sample count) and where its samples
    start, read from its bytes."""
    end = 8 + (4 if int.from_bytes(datagram[4:8], "big") == 1 else 16) + 16
    return datagram[:end], end


def _flow_samples(datagram: bytes) -> int:
    """The flow samples (standard or expanded) of an sFlow v5 datagram."""
    header, offset = _sflow_header(datagram)
    flows = 0
    for _ in range(int.from_bytes(header[-4:], "big")):
        tag, length = struct.unpack_from("!II", datagram, offset)
        flows += tag in (1, 3)  # enterprise 0, format 1 (flow) or 3 (expanded flow)
        offset += 8 + length
    return flows


class _Load(threading.Thread):
    """The example scenario's sFlow on repeat at its pace until the service's process has
    exited; once :attr:`terminate` is set, a datagram a millisecond, and after 50 of those
    the service gets SIGTERM from this thread, between two datagrams, and the datagrams go
    on. They go over a connected socket with IP_RECVERR: the kernel queues an error carrying
    the start of every datagram that found no socket on the port, so what the service's
    socket was given is exactly what was sent less those. The receiving socket's drops
    (/proc/net/udp) are followed while it exists."""

    def __init__(self, service: RunningService, deadline_s: float = 180.0) -> None:
        super().__init__(daemon=True, name="load")
        self.service, self.deadline = service, time.monotonic() + deadline_s
        self.flows: Counter[bytes] = Counter()  # header -> flow samples sent with it
        self.sent = self.sent_flows = self.refused_flows = self.kernel_drops = 0
        self.going = threading.Event()  # set once 300 datagrams went out
        self.terminate = threading.Event()
        self.countdown = 50  # datagrams from terminate to SIGTERM
        self.signalled: tuple[float, int] | None = None  # when SIGTERM went, datagrams sent

    def run(self) -> None:
        spec = load_capture_spec(EXAMPLE / "flows.yaml")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
            sock.connect(("127.0.0.1", self.service.sflow_port))
            while not self._exited():
                start = time.time()
                run = capture(self.service.facts, list(spec.flows), spec.seconds,
                              spec.sampling_rate, start, spec.seed, spec.counter_every_s)
                began = time.monotonic()
                for at, data, _ in run.datagrams:
                    time.sleep(0.001 if self.terminate.is_set()
                               else max(0.0, began + at - start - time.monotonic()))
                    if self._exited():
                        break
                    self._send(sock, data)
            sock.send(b"marker")  # its error comes after every other datagram's
            while self._errors(sock) != b"marker":
                assert time.monotonic() < self.deadline, "no error for the marker"
                time.sleep(0.05)

    def _exited(self) -> bool:
        assert time.monotonic() < self.deadline, "the service did not exit"
        return self.service.process.poll() is not None

    def _send(self, sock: socket.socket, data: bytes) -> None:
        try:
            sock.send(data)
        except ConnectionRefusedError:  # the previous one's error, reported: not sent
            return
        self.sent += 1
        flows = _flow_samples(data)
        self.sent_flows += flows
        self.flows[_sflow_header(data)[0]] = flows
        self.kernel_drops = max(self.kernel_drops, udp_drops(self.service.sflow_port))
        self._errors(sock)
        if self.sent == 300:
            self.going.set()
        if self.terminate.is_set() and self.signalled is None:
            self.countdown -= 1
            if self.countdown == 0:
                self.signalled = time.time(), self.sent
                self.service.process.send_signal(signal.SIGTERM)

    def _errors(self, sock: socket.socket) -> bytes:
        """Count the queued errors' flow samples as refused; the last payload's start."""
        last = b""
        while True:
            try:
                last, _, _, _ = sock.recvmsg(2048, 512, MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            except BlockingIOError:
                return last
            if last != b"marker":
                self.refused_flows += self.flows[_sflow_header(last)[0]]


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_under_load_accounts_for_every_sample_sent(tmp_path, workers):
    """Within 5 s of SIGTERM the service has exited, every datagram its socket (or its
    workers' sockets) took counted in the intervals it logged, the last one included;
    from the signal on, new datagrams are refused, as by a closed port."""
    with RunningService(tmp_path, sflow_workers=workers) as service:
        load = _Load(service)
        load.start()
        try:
            assert load.going.wait(120), "the sender did not get going"
            service.wait_for(lambda: service.log.exists() and len(service.logged()) >= 2,
                             60, "two intervals logged")
            load.terminate.set()  # SIGTERM while the sender goes on, faster
            code = service.process.wait(60)
            exited = time.time()
        finally:
            load.join(200)
    assert code == 0 and not load.is_alive()
    assert load.signalled is not None
    signalled, sent_before = load.signalled
    assert exited - signalled < 5.0
    lines = service.logged()
    _contiguous(lines)
    end = lines[-1]["attribution"]["start"] + lines[-1]["attribution"]["seconds"]
    assert end >= signalled  # the interval in progress is logged
    received, attributed = _received_and_attributed(lines)
    given = load.sent_flows - load.refused_flows  # what reached the service's socket
    print(f"sent {load.sent} datagrams ({load.sent - sent_before} after SIGTERM), "
          f"{load.sent_flows} flow samples; refused "
          f"{load.refused_flows}; kernel drops {load.kernel_drops}; received {received} "
          f"in {len(lines)} intervals; exited {exited - signalled:.2f} s after SIGTERM")
    most = max(load.flows.values(), default=0)
    assert given - load.kernel_drops * most <= received <= given
    if load.kernel_drops == 0:
        assert received == given
    assert attributed == received > 0
    last = (service.folder / "service.log").read_text().splitlines()[-1]
    assert last.endswith(f"stopped: {len(lines)} intervals attributed, {received} flow "
                         "samples received")


def _contiguous(lines: list[dict]) -> None:
    """The logged intervals follow each other with no gap."""
    for before, after in pairwise(lines):
        assert after["attribution"]["start"] == pytest.approx(
            before["attribution"]["start"] + before["attribution"]["seconds"])


def _received_and_attributed(lines: list[dict]) -> tuple[int, int]:
    """Flow samples received and placed on links, over the logged intervals; every sample
    of an interval is in it (on a link, or counted for an unknown port)."""
    received = attributed = 0
    for line in lines:
        flows = line["received"]["samples"].get("flow", 0)
        placed = sum(link["samples"] for link in line["attribution"]["links"])
        assert placed + sum(line["attribution"]["unknown_ports"].values()) == flows
        received += flows
        attributed += placed
    return received, attributed


def test_sigterm_during_discovery_exits_at_once(tmp_path):
    """A switch that takes the connection and never answers holds discovery until its
    deadline (a minute here); SIGTERM ends the service within 5 s all the same, cleanly."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections queue, nobody ever reads them
        config = tmp_path / "fabcorr.yaml"
        config.write_text(yaml.safe_dump({
            "switches": [{"name": "leaf01", "address": "127.0.0.1", "protocols": ["gnmi"],
                          "gnmi": {"port": silent.getsockname()[1], "insecure": True,
                                   "timeout_s": 60.0}}],
            "service": {"listen": f"127.0.0.1:{free_port()}"},
            "sflow": {"listen": f"127.0.0.1:{free_port(socket.SOCK_DGRAM)}"},
            "topology": {"deadline_s": 60.0}}))
        with (tmp_path / "service.log").open("w+") as log:
            process = subprocess.Popen(
                [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
                 "sys.exit(main())", "run", "--config", str(config)],
                cwd=ROOT, stderr=log, stdout=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            held = None
            try:
                silent.settimeout(60)
                held, _ = silent.accept()  # discovery has connected: it waits for an answer
                process.send_signal(signal.SIGTERM)
                signalled = time.monotonic()
                code = process.wait(30)
                took = time.monotonic() - signalled
            finally:
                process.kill()
                process.wait()
                if held is not None:
                    held.close()
            log.seek(0)
            lines = log.read().splitlines()
    assert (code, took < 5.0) == (0, True), lines
    assert [line.split(": ", 1)[1] for line in lines[-2:]] == [
        "stopped before the fabric was built",
        "stopped: 0 intervals attributed, 0 flow samples received"], lines
    assert not any("Traceback" in line for line in lines)


def test_a_failing_component_is_logged_down_and_restarted(tmp_path):
    """The Kubernetes dump folder disappears: rediscovery fails, says why in the log, and
    the service is not ready (``/readyz`` 503, ``fabcorr_component_up`` 0) until the folder
    is back and the next attempt, after its backoff, succeeds."""
    dumps = tmp_path / "kubernetes"
    shutil.copytree(EXAMPLE / "kubernetes", dumps)
    with RunningService(tmp_path, kubernetes={"source": [str(dumps)]},
                        topology={"discover_every_s": 1}) as service:
        assert _value(service.metrics(), "fabcorr_component_up", component="discovery") == 1
        dumps.rename(tmp_path / "away")
        service.wait_for(lambda: service.fetch("/readyz")[0] == 503, 60, "not ready")
        assert service.fetch("/readyz") == (503, b"not ready\n")
        assert _value(service.metrics(), "fabcorr_component_up", component="discovery") == 0
        assert _value(service.metrics(), "fabcorr_component_up", component="intervals") == 1
        log = (tmp_path / "service.log").read_text()
        assert re.search(r"ERROR correlator\.service\.service: discovery failed, again in 1 s: "
                         rf"\w+: .*{re.escape(str(dumps))}", log), log[-2000:]
        (tmp_path / "away").rename(dumps)
        service.wait_for(lambda: service.fetch("/readyz")[0] == 200, 60, "ready again")
        assert _value(service.metrics(), "fabcorr_component_up", component="discovery") == 1
        assert service.stop() == 0


def test_an_unwritable_attribution_log_is_reported_and_nothing_is_lost(tmp_path):
    """The log's folder goes away while the service runs: it says so once, is not ready
    (``attribution_log`` down), and once the folder is back writes every interval held,
    in order: the log has no gap."""
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "attribution.jsonl"
    with RunningService(tmp_path, attribution={"interval_s": 1.0, "log": str(log)}) \
            as service:
        service.log = log
        service.wait_for(lambda: log.exists() and len(service.logged()) >= 1, 60, "logging")
        folder.rename(tmp_path / "away")
        service.wait_for(lambda: service.fetch("/readyz")[0] == 503, 60, "not ready")
        assert _value(service.metrics(), "fabcorr_component_up",
                      component="attribution_log") == 0
        time.sleep(2.5)  # intervals go on being attributed, their lines held
        (tmp_path / "away").rename(folder)
        service.wait_for(lambda: service.fetch("/readyz")[0] == 200, 60, "ready again")
        assert service.stop() == 0
    lines = service.logged()
    assert len(lines) >= 4
    _contiguous(lines)
    text = (tmp_path / "service.log").read_text()
    assert text.count(f"attribution log {log} cannot be written, lines held until it "
                      "can: No such file or directory") == 1
    assert re.search(rf"attribution log {re.escape(str(log))} written again: "
                     r"[2-9]\d* held lines", text)
