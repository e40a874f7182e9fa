"""LLDP reconciliation: confirmed, one-sided, conflicting and unresolved neighbour reports."""

import pytest

from inventory.facts import (
    FactSet,
    IdSubtype,
    InterfaceFact,
    LldpNeighborFact,
    NodeFact,
    PfFact,
    Reporter,
    SwitchFact,
)
from topology.build import build_graph
from topology.schema import KIND, STATUS

MAC, IFNAME, LOCAL = IdSubtype.MAC, IdSubtype.IFNAME, IdSubtype.LOCAL
SWITCHES = (
    SwitchFact("leaf1", chassis_id="0C:42:A1:00:00:01"),
    SwitchFact("leaf2", chassis_id="0c:42:a1:00:00:02"),
    SwitchFact("spine1", chassis_id="0c:42:a1:00:00:03"),
)
PORTS = tuple(
    InterfaceFact(switch, f"Ethernet{n}", ifindex=n, alias=f"etp{n}")
    for switch in ("leaf1", "leaf2", "spine1") for n in (1, 2, 3)
)
HOSTS = (NodeFact("gpu1", chassis_id="b8:3f:d3:00:00:01"),)
PFS = (PfFact("gpu1", "ens1f0np0", "0000:1a:00.0", mac="b8:3f:d2:00:00:01"),)


def switch_says(local, port, remote, remote_port, subtype=IFNAME, chassis=None):
    """``local``/``port`` hears ``remote`` (by chassis MAC) on ``remote_port``."""
    chassis_id = chassis or {s.name: s.chassis_id for s in SWITCHES}.get(remote, remote)
    return LldpNeighborFact(Reporter.SWITCH, local, port, chassis_id, MAC, remote_port, subtype,
                            system_name=remote)


def cables(*reports):
    fabric = build_graph(FactSet(switches=SWITCHES, interfaces=PORTS, nodes=HOSTS, pfs=PFS,
                                 neighbors=reports))
    found = {
        tuple(sorted((a, b))): edge[STATUS]
        for a, b, edge in fabric.graph.edges(data=True) if edge[KIND] == "cabled"
    }
    return found, sorted((p.kind, p.subject) for p in fabric.problems)


A1, B1, S1, S2, S3 = ("port:leaf1/Ethernet1", "port:leaf2/Ethernet1", "port:spine1/Ethernet1",
                      "port:spine1/Ethernet2", "port:spine1/Ethernet3")


def test_both_ends_reporting_each_other_confirm_the_cable():
    found, problems = cables(switch_says("leaf1", "Ethernet1", "spine1", "Ethernet1"),
                             switch_says("spine1", "Ethernet1", "leaf1", "Ethernet1"))
    assert found == {(A1, S1): "confirmed"}
    assert problems == []


def test_one_end_reporting_keeps_a_flagged_cable():
    found, problems = cables(switch_says("leaf1", "Ethernet1", "spine1", "Ethernet1"))
    assert found == {(A1, S1): "one-sided"}
    assert problems == [("link-one-sided", f"{A1}-{S1}")]


def test_stale_claim_on_a_confirmed_port_is_a_conflict_and_the_confirmed_cable_stays():
    found, problems = cables(
        switch_says("leaf1", "Ethernet1", "spine1", "Ethernet1"),
        switch_says("spine1", "Ethernet1", "leaf1", "Ethernet1"),
        switch_says("leaf2", "Ethernet1", "spine1", "Ethernet1"),  # leaf2 still remembers it
    )
    assert found == {(A1, S1): "confirmed", (B1, S1): "conflict"}
    assert problems == [("link-conflict", f"{B1}-{S1}")]


def test_two_unconfirmed_claims_on_one_port_are_both_conflicts():
    found, problems = cables(switch_says("leaf1", "Ethernet1", "spine1", "Ethernet1"),
                             switch_says("leaf2", "Ethernet1", "spine1", "Ethernet1"))
    assert found == {(A1, S1): "conflict", (B1, S1): "conflict"}
    assert [kind for kind, _ in problems] == ["link-conflict", "link-conflict"]


def test_port_id_by_alias_and_chassis_by_system_name_resolve():
    # SONiC sends the port alias as a 'local' port id; chassis unknown, name known.
    found, _ = cables(
        switch_says("leaf1", "Ethernet2", "spine1", "etp2", LOCAL, chassis="ff:ff:ff:ff:ff:ff"),
        switch_says("spine1", "Ethernet2", "leaf1", "Ethernet2"),
    )
    assert found == {("port:leaf1/Ethernet2", S2): "confirmed"}


def test_host_pf_by_port_mac_and_host_side_report_confirm():
    switch_side = switch_says("leaf1", "Ethernet3", "gpu1", "B8:3F:D2:00:00:01", MAC,
                              chassis="b8:3f:d3:00:00:01")
    host_side = LldpNeighborFact(Reporter.HOST, "gpu1", "ens1f0np0", "0c:42:a1:00:00:01", MAC,
                                 "Ethernet3", IFNAME, system_name="leaf1")
    found, problems = cables(switch_side, host_side)
    assert found == {("pf:gpu1/ens1f0np0", "port:leaf1/Ethernet3"): "confirmed"}
    assert problems == []


@pytest.mark.parametrize(("report", "kind"), [
    (switch_says("leaf1", "Ethernet1", "mgmt-sw", "Gi0/1", chassis="00:11:22:33:44:55"),
     "lldp-unresolved"),
    (switch_says("leaf1", "Ethernet9", "spine1", "Ethernet1"), "port-unlisted"),
    (switch_says("leaf9", "Ethernet1", "spine1", "Ethernet1"), "lldp-unknown-local"),
    (switch_says("leaf1", "Ethernet1", "leaf1", "Ethernet1"), "lldp-loop"),
])
def test_reports_that_explain_no_cable_are_problems(report, kind):
    found, problems = cables(report)
    assert kind in [k for k, _ in problems]
    if kind != "port-unlisted":
        assert found == {}


def test_unlisted_local_port_is_added_and_cabled():
    found, problems = cables(switch_says("leaf1", "Ethernet9", "spine1", "Ethernet3"),
                             switch_says("spine1", "Ethernet3", "leaf1", "Ethernet9"))
    assert found == {("port:leaf1/Ethernet9", S3): "confirmed"}
    assert problems == [("port-unlisted", "port:leaf1/Ethernet9")]
