"""``fabcorr discover`` over SNMP against real snmpd + lldpd agents in network namespaces."""

import asyncio
import socket
import subprocess
import sys

import pytest

from correlator.cli.main import main
from correlator.collect.rates import RateConfig, RateTracker
from inventory.devices import Secret, SnmpOptions, SwitchConfig
from inventory.discovery import discover_all
from inventory.factfile import write_facts
from inventory.facts import FactSet, NodeFact, PfFact
from inventory.hostlldp import host_neighbors
from inventory.snmp import poll_counters
from tests.lab.netns import SNMP_AUTH, SNMP_COMMUNITY, SNMP_PRIV, SNMP_USER
from topology.build import build_graph

V2C = SnmpOptions(community=Secret(SNMP_COMMUNITY), timeout_s=3.0)
V3 = SnmpOptions(version="3", user=SNMP_USER, auth_protocol="sha", auth_key=Secret(SNMP_AUTH),
                 priv_protocol="aes", priv_key=Secret(SNMP_PRIV), timeout_s=3.0)


def switches(lab):
    """leaf1 and leaf2 over SNMPv2c, spine1 over SNMPv3 authPriv."""
    return [SwitchConfig(name, lab.mgmt[name], snmp=V3 if name == "spine1" else V2C)
            for name in lab.switches]


def host_facts(lab) -> FactSet:
    """What Kubernetes and the hosts' lldpd know about the hosts."""
    return FactSet(
        nodes=tuple(NodeFact(h) for h in lab.hosts),
        pfs=tuple(PfFact(h, "ens1f0np0", "0000:1a:00.0", lab.mac(h, "ens1f0np0"))
                  for h in lab.hosts),
        neighbors=tuple(n for h in lab.hosts for n in host_neighbors(h, lab.lldp_json(h))))


def test_discovery_finds_exactly_the_lab_cabling(lab):
    found = asyncio.run(discover_all(switches(lab)))
    assert found.failures == ()
    fabric = build_graph(found.facts.merge(host_facts(lab)))
    cables = {tuple(sorted((a, b))): edge["status"]
              for a, b, edge in fabric.graph.edges(data=True) if edge["kind"] == "cabled"}
    assert cables == {
        ("pf:host1/ens1f0np0", "port:leaf1/swp1"): "confirmed",
        ("pf:host2/ens1f0np0", "port:leaf2/swp1"): "confirmed",
        ("port:leaf1/swp51", "port:spine1/swp1"): "confirmed",
        ("port:leaf2/swp51", "port:spine1/swp2"): "confirmed",
    }
    assert fabric.problems == ()
    roles = {s: fabric.attrs(f"switch:{s}")["role"] for s in lab.switches}
    assert roles == {"leaf1": "leaf", "leaf2": "leaf", "spine1": "spine"}
    # The LLDP-MIB port numbers are joined to ifIndex through ifName, not assumed equal.
    swp51 = fabric.attrs("port:leaf1/swp51")
    assert swp51["ifindex"] == int(lab.run("leaf1", "cat", "/sys/class/net/swp51/ifindex"))


def test_wrong_community_and_dead_agent_fail_alone(lab):
    wrong = SwitchConfig("leaf1", lab.mgmt["leaf1"],
                         snmp=SnmpOptions(community=Secret("nope"), timeout_s=0.3, retries=0))
    dead = SwitchConfig("ghost", "198.18.0.99", snmp=SnmpOptions(
        community=Secret(SNMP_COMMUNITY), timeout_s=0.3, retries=0))
    good = switches(lab)[1]
    # The switches' own 0.3 s timeouts end the failures: discovery's deadline is beyond the
    # test's, which fails after 60 s.
    found = asyncio.run(asyncio.wait_for(discover_all([wrong, dead, good], deadline_s=120), 60))
    assert sorted((f.switch, f.kind) for f in found.failures) == [
        ("ghost", "timeout"), ("leaf1", "timeout")]  # SNMPv2c: a bad community is silence
    assert all(f.message for f in found.failures)  # the SNMP timeout's, not the deadline's
    assert [s.name for s in found.facts.switches] == ["leaf2"]


SENDER = """
import socket, sys, time
target, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * size
for _ in range(count):
    sock.sendto(payload, (target, 9))
    time.sleep(0.0002)
"""


def test_counter_rates_match_the_traffic_sent(lab):
    lab.run("host1", "ip", "addr", "replace", "198.18.1.1/30", "dev", "ens1f0np0")
    lab.run("leaf1", "ip", "addr", "replace", "198.18.1.2/30", "dev", "swp1")
    lab.run("host1", "ip", "neigh", "replace", "198.18.1.2", "lladdr", lab.mac("leaf1", "swp1"),
            "dev", "ens1f0np0")  # static ARP: no resolution traffic in the measurement
    leaf1 = switches(lab)[0]
    count, payload = 5000, 1400
    before = {c.port: c for c in asyncio.run(poll_counters(leaf1))}["swp1"]
    subprocess.run(["ip", "netns", "exec", lab.ns("host1"), sys.executable, "-c", SENDER,
                    "198.18.1.2", str(count), str(payload)], check=True)
    after = {c.port: c for c in asyncio.run(poll_counters(leaf1))}["swp1"]
    frame = payload + 8 + 20 + 14  # UDP, IPv4, Ethernet (the kernel counts no FCS)
    tracker = RateTracker(RateConfig(interval_s=after.at - before.at))
    assert tracker.update(before) is None
    rates = tracker.update(after)
    assert rates.skipped == {}
    sent_per_second = count * frame / rates.interval_s
    assert rates.per_second["in_octets"] == pytest.approx(sent_per_second, rel=0.02)
    assert rates.per_second["in_pkts"] * rates.interval_s >= count
    assert after.bits["in_discards"] == 32 and "in_octets" not in after.bits


def test_discover_command_writes_the_snapshot_and_reports(lab, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LAB_COMMUNITY", SNMP_COMMUNITY)
    # The real agents get generous timeouts (a loaded snmpd is slow), the ghost a short one:
    # it is a socket that takes every request and never answers, so only it times out, by
    # its own SNMP timeout long before discovery's deadline.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as ghost:
        ghost.bind(("127.0.0.1", 0))
        config = tmp_path / "fabcorr.yaml"
        config.write_text(
            "defaults:\n  snmp: {community: {env: LAB_COMMUNITY}, timeout_s: 10, retries: 2}\n"
            "switches:\n" + "".join(f"  - {{name: {s}, address: {lab.mgmt[s]}}}\n"
                                     for s in lab.switches)
            + "  - {name: ghost, address: 127.0.0.1, snmp: {port: "
            f"{ghost.getsockname()[1]}, timeout_s: 0.3, retries: 0}}}}\n")
        hosts = tmp_path / "hosts"
        hosts.mkdir()
        for host in lab.hosts:
            (hosts / f"{host}.json").write_text(lab.lldp_json(host))
        write_facts(host_facts(lab), tmp_path / "hosts.yaml")
        code = main(["discover", "--config", str(config), "--out", str(tmp_path / "t.json"),
                     "--facts", str(tmp_path / "hosts.yaml"), "--host-lldp", str(hosts),
                     "--deadline", "300"])
    err = capsys.readouterr().err
    assert code == 3  # the ghost switch did not answer
    assert "switches reached: 3/4\n" in err
    assert "links: 4 confirmed, 0 one-sided, 0 in conflict\n" in err
    assert "host ports: 2 matched to PFs, 0 unmatched\n" in err
    assert "failed: ghost over snmp: timeout: " in err
    # the SNMP timeout's message, not the deadline's (empty)
    assert "failed: ghost over snmp: timeout: \n" not in err
    assert main(["topology", "summary", "--snapshot", str(tmp_path / "t.json")]) == 0
