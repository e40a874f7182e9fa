"""The emulated SNMP agent read by fabcorr's own SNMP discovery and counter poller, and by
net-snmp's command-line tools as an independent client."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from dataclasses import replace

import pytest

from correlator.collect.rates import RateConfig, RateTracker
from inventory.counters import PortCounters
from inventory.devices import Secret, SnmpOptions, SwitchConfig
from inventory.errors import SourceTimeout
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter, SwitchFact
from inventory.snmp import client, discover, poll_counters
from simulator.snmp_agent import SnmpAgent
from tests.tools import require

HOST, COMMUNITY = "127.1.0.1", "s3cret"
MAC = "0c:42:a1:01:00:00"
SWITCH = SwitchFact("leaf01", MAC, HOST, HOST, "eos")
INTERFACES = (
    InterfaceFact("leaf01", "Ethernet1", 1001, 400_000_000_000, "up", MAC, "to-gpu01"),
    InterfaceFact("leaf01", "Ethernet2", 1002, 100_000_000_000, "lower-layer-down", MAC),
    InterfaceFact("leaf01", "Ethernet3", 1003, 400_000_000_000, "up", MAC, "to-spine01"),
    InterfaceFact("leaf02", "Ethernet1", 1001, 400_000_000_000, "up", MAC),  # not leaf01's
)
NEIGHBORS = (
    LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "b8:3f:d3:00:00:00", IdSubtype.MAC,
                     "b8:3f:d2:00:00:00", IdSubtype.MAC, "gpu01", "ens1f0np0", "10.0.0.5"),
    LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet3", "0c:42:a1:02:00:00", IdSubtype.MAC,
                     "Ethernet7", IdSubtype.IFNAME, "spine01", "to-leaf01"),
    LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet3", "10.9.8.7", IdSubtype.IP,
                     "port-9", IdSubtype.LOCAL, "odd01"),
    LldpNeighborFact(Reporter.SWITCH, "leaf02", "Ethernet1", "b8:3f:d3:00:00:01", IdSubtype.MAC,
                     "b8:3f:d2:00:00:01", IdSubtype.MAC, "gpu02"),  # not leaf01's
)
LLDP_LOC_PORT_ID, IF_NAME = "1.0.8802.1.1.2.1.3.7.1.3", "1.3.6.1.2.1.31.1.1.1.1"


class Stepped:
    """Counters set by ``step`` (as the traffic model's are by its tick), not by time."""

    def __init__(self) -> None:
        self.step = 1

    def __call__(self, port: str, now: float) -> dict[str, int]:
        n, s = int(port.removeprefix("Ethernet")), self.step
        values = {"in_octets": 10**15 + 1_000_000 * s + n, "out_octets": 2 * 10**15 + s,
                  "in_pkts": 10**12 + 100 * s, "out_pkts": 5 * s, "in_errors": 0,
                  "out_errors": 7,
                  "in_discards": 2**32 - 20 + 15 * s,  # a Counter32 wrapping after step 1
                  "out_discards": 2**33 + s}
        for p in range(8):
            values |= {f"pfc_rx_pause/{p}": 1000 * s + p if p == 3 else 0,
                       f"pfc_tx_pause/{p}": 400 * s if p == 3 else p,
                       f"queue_ecn_marked/{p}": 10**6 * s if p == 3 else 0,
                       f"queue_tx_pkts/{p}": 9, f"queue_dropped/{p}": 11}
        return values


def expected(profile: str, values: dict[str, int]) -> dict[str, int]:
    """What fabcorr's SNMP poller should read of ``values`` on ``profile``."""
    found = {k: v for k, v in values.items() if "/" not in k}
    for name in ("in_discards", "out_discards", "in_errors", "out_errors"):
        found[name] %= 2**32
    pauses = {k: v for k, v in values.items() if k.startswith("pfc_")}
    if profile == "openconfig":  # IEEE8021-PFC-MIB: per port, not per priority
        for way in ("rx", "tx"):
            found[f"pfc_{way}_pause"] = sum(v for k, v in pauses.items() if f"_{way}_" in k)
    else:
        found |= pauses
    if profile == "eos":
        found |= {k: v for k, v in values.items() if k.startswith("queue_ecn_marked/")}
    return found


def config(agent: SnmpAgent, timeout_s: float = 10.0, retries: int = 1,
           community: str = COMMUNITY) -> SwitchConfig:
    return SwitchConfig("leaf01", HOST, vendor=agent.profile, snmp=SnmpOptions(
        port=agent.port, community=Secret(community), timeout_s=timeout_s, retries=retries))


def _oid(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@pytest.fixture
def agent(request: pytest.FixtureRequest) -> Iterator[SnmpAgent]:
    profile = getattr(request, "param", "eos")
    with SnmpAgent(SWITCH, INTERFACES, NEIGHBORS, profile=profile, counters=Stepped(),
                   host=HOST, community=COMMUNITY) as running:
        yield running


def test_discovery_finds_exactly_the_switch_its_interfaces_and_neighbours(agent) -> None:
    assert agent.address == f"{HOST}:{agent.port}" and agent.port > 0
    found = asyncio.run(discover(config(agent)))
    assert [(s.name, s.chassis_id) for s in found.switches] == [("leaf01", MAC)]
    assert found.interfaces == INTERFACES[:3]
    assert found.neighbors == tuple(replace(n, mgmt_address="", source="snmp")
                                    for n in NEIGHBORS[:3])


def test_lldp_port_numbers_are_not_the_if_indexes(agent) -> None:
    walk = asyncio.run(client.walk(HOST, config(agent).snmp,
                                   [_oid(LLDP_LOC_PORT_ID), _oid(IF_NAME)]))
    port_ids = {k[-1]: v for k, v in walk.items() if k[:-1] == _oid(LLDP_LOC_PORT_ID)}
    if_names = {k[-1]: v for k, v in walk.items() if k[:-1] == _oid(IF_NAME)}
    assert port_ids == {1: b"Ethernet1", 2: b"Ethernet2", 3: b"Ethernet3"}
    assert if_names == {1001: b"Ethernet1", 1002: b"Ethernet2", 1003: b"Ethernet3"}


@pytest.mark.parametrize("agent", ["openconfig", "eos", "cumulus", "sonic"], indirect=True)
def test_polls_read_the_counter_source_exactly_and_rates_follow(agent) -> None:
    # The counters move by step, not by time: each poll is dated its step's second, so the
    # rates' interval is 1 s however long a loaded machine takes between the polls (8.8 s
    # would let a 32-bit packet counter of a 400 Gb/s port wrap unseen: ``ambiguous``).
    source = agent.counters
    tracker = RateTracker(RateConfig(interval_s=1.0))
    readings: list[PortCounters] = []
    rates = None
    for step in (1, 2):
        source.step = step
        polled = {c.port: c for c in asyncio.run(poll_counters(config(agent)))}
        assert sorted(polled) == ["Ethernet1", "Ethernet2", "Ethernet3"]
        for port, reading in polled.items():
            assert reading.values == expected(agent.profile, source(port, 0.0))
            assert reading.bits == dict.fromkeys(
                ("in_discards", "in_errors", "out_discards", "out_errors"), 32)
            assert reading.uptime_s == pytest.approx(86_400, abs=60)
        assert (polled["Ethernet2"].oper_status, polled["Ethernet2"].speed_bps) == (
            "lower-layer-down", 100_000_000_000)
        at = readings[0].at + 1.0 if readings else polled["Ethernet1"].at
        readings.append(replace(polled["Ethernet1"], at=at))
        rates = tracker.update(readings[-1])
    assert rates is not None and rates.skipped == {} and rates.wrapped == ("in_discards",)
    assert rates.interval_s == 1.0
    assert rates.per_second["in_octets"] == 1_000_000
    assert rates.per_second["in_discards"] == 15
    pfc_rx = "pfc_rx_pause" if agent.profile == "openconfig" else "pfc_rx_pause/3"
    assert rates.per_second[pfc_rx] == 1000
    if agent.profile == "eos":
        assert rates.per_second["queue_ecn_marked/3"] == 10**6


def test_stopped_agent_does_not_answer(agent) -> None:
    asyncio.run(poll_counters(config(agent)))
    agent.stop()
    with pytest.raises(SourceTimeout):  # the poll's own timeout; the test's fails after 60 s
        asyncio.run(asyncio.wait_for(poll_counters(config(agent, timeout_s=0.3, retries=0)),
                                     60))
    with agent:  # a restart answers on the same port again
        assert asyncio.run(poll_counters(config(agent)))


def test_wrong_community_is_silence(agent) -> None:
    with pytest.raises(SourceTimeout):
        asyncio.run(discover(config(agent, timeout_s=0.3, retries=0, community="nope")))


def test_net_snmp_walks_and_gets(agent) -> None:
    target = ["-v2c", "-c", COMMUNITY, "-On", "-t", "2", agent.address]
    walk = subprocess.run([require("snmpwalk", "snmp"), *target, IF_NAME], capture_output=True,
                          text=True, check=True, timeout=20)
    assert walk.stdout.splitlines() == [f'.{IF_NAME}.{1000 + n} = STRING: "Ethernet{n}"'
                                        for n in (1, 2, 3)]
    get = subprocess.run([require("snmpget", "snmp"), *target, "1.3.6.1.2.1.1.5.0",
                          "1.3.6.1.2.1.31.1.1.1.6.1001", f"{IF_NAME}.7", "1.3.6.1.2.1.1.4.0"],
                         capture_output=True, text=True, check=True, timeout=20)
    assert get.stdout.splitlines() == [
        '.1.3.6.1.2.1.1.5.0 = STRING: "leaf01"',
        f".1.3.6.1.2.1.31.1.1.1.6.1001 = Counter64: {10**15 + 1_000_001}",
        f".{IF_NAME}.7 = No Such Instance currently exists at this OID",
        ".1.3.6.1.2.1.1.4.0 = No Such Object available on this agent at this OID"]
