"""``fabcorr run`` end to end: six emulated gNMI switches (discovery and counters), the
example cluster's Kubernetes objects, sFlow over UDP; metrics and a clean shutdown."""

import re
import time
from itertools import pairwise

import pytest

from tests.correlator.service.running import RunningService


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
                     30, "collecting from every switch")
    service.wait_for(lambda: _value(service.metrics(), "fabcorr_link_bytes_per_second",
                                    switch="leaf01", port="Ethernet1", direction="in"),
                     30, "a counter rate")
    service.send_example(seconds=3.0)
    service.wait_for(lambda: (_value(service.metrics(), "fabcorr_sflow_samples_total",
                                     type="flow") or 0) > 0, 60, "counting samples")
    service.wait_for(lambda: _value(service.metrics(), "fabcorr_link_tenant_bytes_per_second",
                                    switch="leaf01", port="Ethernet5", direction="out",
                                    tenant="team-a"), 60, "attributing")


def test_sigterm_under_load_attributes_every_sample_received(service):
    start = time.monotonic()
    sent = service.send_example(seconds=6.0, stop_at=start + 2.5)  # SIGTERM mid-stream
    assert service.stop() == 0
    assert sent > 100
    lines = service.logged()
    assert len(lines) >= 3
    for before, after in pairwise(lines):
        assert after["attribution"]["start"] == pytest.approx(
            before["attribution"]["start"] + before["attribution"]["seconds"])
    received = attributed = 0
    for line in lines:
        flows = line["received"]["samples"].get("flow", 0)
        links = line["attribution"]["links"]
        placed = sum(link["samples"] for link in links)
        unknown = sum(line["attribution"]["unknown_ports"].values())
        assert placed + unknown == flows  # every sample of the interval is in it
        received += flows
        attributed += placed
    assert attributed == received > 0
    last = (service.folder / "service.log").read_text().splitlines()[-1]
    assert last.endswith(f"stopped: {len(lines)} intervals attributed, {received} flow "
                         "samples received")
