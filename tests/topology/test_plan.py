"""Cabling plan check against the example fabric: missing, miswired, unexpected."""

from pathlib import Path

import pytest

from inventory.errors import ConfigError
from inventory.facts import FactSet
from topology.graph import FabricGraph
from topology.plan import (
    MissingCable,
    Miswire,
    PlannedCable,
    UnexpectedCable,
    check_plan,
    parse_plan,
)
from topology.snapshot import load_snapshot

SNAPSHOT = Path(__file__).parents[2] / "examples" / "fabric-small" / "topology.json"

# examples/fabric-small: leafN:Ethernet5 -> spine01:EthernetN, leafN:Ethernet6 -> spine02:EthernetN
UPLINKS = [(f"leaf0{n}:Ethernet{4 + s}", f"spine0{s}:Ethernet{n}")
           for n in range(1, 5) for s in (1, 2)]
# gpu01-04 on leaf01 (rail 1) and leaf03 (rail 2), gpu05-08 on leaf02 and leaf04
HOST_LINKS = [(f"gpu0{g}:ens{r}f0np0", f"leaf0{(g > 4) + 2 * r - 1}:Ethernet{(g - 1) % 4 + 1}")
              for g in range(1, 9) for r in (1, 2)]


@pytest.fixture(scope="module")
def fabric():
    return load_snapshot(SNAPSHOT)


def plan_of(links):
    return tuple(PlannedCable(a, b, i) for i, (a, b) in enumerate(links))


def altered(fabric, change):
    """A copy of ``fabric`` whose graph ``change`` edited."""
    graph = fabric.graph.copy()
    change(graph)
    return FabricGraph(graph, FactSet(), ())


def test_plan_equal_to_the_fabric(fabric):
    report = check_plan(fabric, plan_of(UPLINKS))
    assert report.ok
    assert (report.planned, report.as_planned) == (8, 8)
    assert report.missing == report.miswired == report.unexpected == ()


def test_ends_in_either_order(fabric):
    assert check_plan(fabric, plan_of([(b, a) for a, b in UPLINKS])).ok


def test_host_links_planned_and_checked(fabric):
    report = check_plan(fabric, plan_of(UPLINKS + HOST_LINKS), hosts=True)
    assert report.ok and report.as_planned == 24


def test_unlisted_host_links_are_unexpected_only_when_asked(fabric):
    assert check_plan(fabric, plan_of(UPLINKS)).ok
    report = check_plan(fabric, plan_of(UPLINKS), hosts=True)
    assert len(report.unexpected) == 16
    assert report.unexpected[0] == UnexpectedCable("gpu01:ens1f0np0", "leaf01:Ethernet1",
                                                   "confirmed", "host")


def test_one_end_moved_is_one_miswire(fabric):
    links = list(UPLINKS)
    links[0] = ("leaf01:Ethernet5", "spine01:Ethernet9")
    report = check_plan(fabric, plan_of(links))
    assert report.miswired == (
        Miswire("leaf01:Ethernet5", "spine01:Ethernet9", "spine01:Ethernet1", "confirmed", 0),)
    assert (report.missing, report.unexpected, report.as_planned) == ((), (), 7)


def test_two_cables_swapped_miswire_every_end(fabric):
    links = list(UPLINKS)
    links[0], links[1] = ("leaf01:Ethernet5", "spine02:Ethernet1"), \
        ("leaf01:Ethernet6", "spine01:Ethernet1")
    report = check_plan(fabric, plan_of(links))
    assert report.miswired == (
        Miswire("leaf01:Ethernet5", "spine02:Ethernet1", "spine01:Ethernet1", "confirmed", 0),
        Miswire("spine02:Ethernet1", "leaf01:Ethernet5", "leaf01:Ethernet6", "confirmed", 0),
        Miswire("leaf01:Ethernet6", "spine01:Ethernet1", "spine02:Ethernet1", "confirmed", 1),
        Miswire("spine01:Ethernet1", "leaf01:Ethernet6", "leaf01:Ethernet5", "confirmed", 1),
    )
    assert (report.missing, report.unexpected) == ((), ())


def test_host_miswired(fabric):
    report = check_plan(fabric, plan_of([("gpu01:ens1f0np0", "leaf03:Ethernet1")]))
    assert report.miswired == (
        Miswire("gpu01:ens1f0np0", "leaf03:Ethernet1", "leaf01:Ethernet1", "confirmed", 0),
        Miswire("leaf03:Ethernet1", "gpu01:ens1f0np0", "gpu01:ens2f0np0", "confirmed", 0),
    )


def test_unlisted_cable_is_unexpected(fabric):
    report = check_plan(fabric, plan_of(UPLINKS[:-1]))
    assert report.unexpected == (
        UnexpectedCable("leaf04:Ethernet6", "spine02:Ethernet4", "confirmed", "leaf-spine"),)
    assert (report.missing, report.miswired) == ((), ())


def test_extra_planned_cable_is_missing(fabric):
    report = check_plan(fabric, plan_of([*UPLINKS, ("leaf01:Ethernet7", "spine01:Ethernet5")]))
    assert report.missing == (MissingCable(
        "leaf01:Ethernet7", "spine01:Ethernet5", 8,
        "not in the fabric: leaf01:Ethernet7, spine01:Ethernet5"),)
    assert (report.miswired, report.unexpected) == ((), ())


def test_uncabled_known_ports_are_missing_without_note(fabric):
    unplugged = altered(fabric, lambda g: g.remove_edge("port:leaf04/Ethernet6",
                                                        "port:spine02/Ethernet4"))
    report = check_plan(unplugged, plan_of(UPLINKS))
    assert report.missing == (MissingCable("leaf04:Ethernet6", "spine02:Ethernet4", 7),)


def test_one_sided_cables_keep_their_status(fabric):
    def one_sided(graph):
        graph.edges["port:leaf04/Ethernet6", "port:spine02/Ethernet4"]["status"] = "one-sided"

    report = check_plan(altered(fabric, one_sided), plan_of(UPLINKS[:-1]))
    assert [(u.a, u.status) for u in report.unexpected] == [("leaf04:Ethernet6", "one-sided")]
    assert check_plan(altered(fabric, one_sided), plan_of(UPLINKS)).ok


def test_conflicting_cable_at_a_planned_port(fabric):
    def conflict(graph):
        graph.add_edge("port:leaf01/Ethernet5", "port:spine02/Ethernet4", kind="cabled",
                       status="conflict", tier="leaf-spine")

    report = check_plan(altered(fabric, conflict), plan_of(UPLINKS))
    assert report.as_planned == 8
    assert report.miswired == (
        Miswire("leaf01:Ethernet5", "spine01:Ethernet1", "spine02:Ethernet4", "conflict", 0),
        Miswire("spine02:Ethernet4", "leaf04:Ethernet6", "leaf01:Ethernet5", "conflict", 7),
    )


def test_parse_plan_block_and_flow_styles():
    text = "- [leaf01:Ethernet5, spine01:Ethernet1]\n- - gpu01:ens1f0np0\n  - leaf01:et-0/0/0:1\n"
    assert parse_plan(text, "p.yaml") == (
        PlannedCable("leaf01:Ethernet5", "spine01:Ethernet1", 0),
        PlannedCable("gpu01:ens1f0np0", "leaf01:et-0/0/0:1", 1),
    )


@pytest.mark.parametrize(("text", "key", "reason"), [
    ("- [a:b, c:d", "", "not YAML"),
    ("", "", "expected a non-empty list of cables"),
    ("[]", "", "expected a non-empty list of cables"),
    ("leaf01: Ethernet1", "", "expected a non-empty list of cables"),
    ("- [a:1, b:1]\n- a:2", "entry 1 (line 2)", "expected a list of two endpoints"),
    ("- [a:1, b:1, c:1]", "entry 0 (line 1)", "expected a list of two endpoints"),
    ("- [a:1, b:1]\n\n- [a:2, 7]", "entry 1 (line 3)", "7 is not DEVICE:PORT"),
    ("- [a:1, b]", "entry 0 (line 1)", "'b' is not DEVICE:PORT"),
    ("- [a:1, 'b:']", "entry 0 (line 1)", "'b:' is not DEVICE:PORT"),
    ("- [a:1, a:1]", "entry 0 (line 1)", "a cable from a:1 to itself"),
    ("- [a:1, b:1]\n- [c:1, b:1]", "entry 1 (line 2)", "b:1 is already planned in entry 0"),
])
def test_parse_errors_name_file_entry_and_reason(text, key, reason):
    with pytest.raises(ConfigError) as error:
        parse_plan(text, "plan.yaml")
    assert (error.value.source, error.value.key) == ("plan.yaml", key)
    assert error.value.reason.startswith(reason)
