"""The emulated fabric with some switches over SNMP: fabcorr discovers the full cabling
from the switch configs the emulator writes."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import replace

import pytest

from inventory.devices import devices_from
from inventory.discovery import discover_all
from inventory.errors import SourceTimeout
from inventory.facts import FactSet
from inventory.snmp import poll_counters
from simulator.emulator import EmulatedFabric
from simulator.scenario import scenario_from
from simulator.traffic import TrafficModel
from topology.build import build_graph

PASSWORD_ENV = "FABCORR_TEST_EMULATED"


def _model(**extra: object) -> TrafficModel:
    return TrafficModel(scenario_from({
        "fabric": {"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 20}], **extra}))


def _cables(facts: FactSet) -> dict[tuple[str, str], str]:
    graph = build_graph(facts).graph
    return {tuple(sorted((a, b))): edge["status"]
            for a, b, edge in graph.edges(data=True) if edge["kind"] == "cabled"}


def test_one_snmp_switch_among_gnmi_ones_gives_discovery_the_full_cabling() -> None:
    model = _model()
    fabric = EmulatedFabric(model, password="pw", snmp={"leaf02"}).start()
    try:
        config = fabric.switch_config(PASSWORD_ENV)
        switches = devices_from({"switches": config}, "emulated", {PASSWORD_ENV: "pw"})
        found = asyncio.run(discover_all(switches, deadline_s=60))
    finally:
        fabric.stop()
    assert {s["name"]: s["protocols"] for s in config} == {
        "leaf01": ["gnmi"], "leaf02": ["snmp"], "spine01": ["gnmi"], "spine02": ["gnmi"]}
    assert found.failures == ()
    assert {n.source for n in found.facts.neighbors if n.local_device == "leaf02"} == {"snmp"}
    facts = model.facts
    hosts = FactSet(nodes=facts.nodes, pfs=facts.pfs,
                    neighbors=tuple(n for n in facts.neighbors if n.reporter == "host"))
    cables = _cables(found.facts.merge(hosts))
    assert cables == _cables(facts) and set(cables.values()) == {"confirmed"}
    assert len(cables) == 2 + 2 * 2  # a host on each leaf, each leaf to both spines
    key = ("switch", "name", "ifindex", "speed_bps", "oper_status")
    assert sorted(tuple(getattr(i, k) for k in key) for i in found.facts.interfaces) == sorted(
        tuple(getattr(i, k) for k in key) for i in facts.interfaces)


def test_without_snmp_every_switch_is_gnmi() -> None:
    fabric = EmulatedFabric(_model())
    assert {s["protocols"][0] for s in fabric.switch_config(PASSWORD_ENV)} == {"gnmi"}


def test_switch_down_stops_its_snmp_agent() -> None:
    fabric = EmulatedFabric(_model(seconds=2, events=[{"at": 1, "switch_down": "leaf02"}]),
                            snmp={"leaf02", "spine01"}).start()
    config = devices_from({"switches": fabric.switch_config(PASSWORD_ENV)}, "emulated",
                          {PASSWORD_ENV: ""})
    leaf02, spine01 = (next(s for s in config if s.name == name) for name in ("leaf02",
                                                                             "spine01"))
    try:
        assert asyncio.run(poll_counters(leaf02))  # no password: community "public"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as collector:
            collector.bind(("127.0.0.1", 0))
            fabric.run(collector.getsockname())
        assert fabric.error is None
        with pytest.raises(SourceTimeout):
            asyncio.run(poll_counters(replace(leaf02, snmp=replace(
                leaf02.snmp, timeout_s=0.3, retries=0))))
        assert asyncio.run(poll_counters(spine01))
    finally:
        fabric.stop()
