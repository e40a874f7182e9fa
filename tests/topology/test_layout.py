"""The fabric map's layout: rows, orders, coordinates and cable crossings, on the demo
fabric (2 spines, 4 leaves on 2 rails, 16 nodes) and the medium ladder fabric (64 spines,
128 leaves on 8 rails, 1,024 nodes)."""

from functools import cache

import pytest

from correlator.cli.demo import shipped
from simulator.generator import FabricSpec, generate_facts
from simulator.ladder import ladder_spec
from simulator.scenario import load_scenario
from topology.build import build_graph
from topology.graph import FabricGraph
from topology.layout import Box, Cable, crossings, drawn_rows, layout, naive_rows, order_rows


@cache
def demo() -> FabricGraph:
    return build_graph(generate_facts(load_scenario(shipped()["demo"]).fabric))


@cache
def medium() -> FabricGraph:
    return build_graph(generate_facts(ladder_spec("medium")))


def test_the_demo_fabric_is_drawn_in_rows_with_each_nic_under_its_leaf():
    drawn = layout(demo())
    assert (drawn.width, drawn.height, drawn.collapsed) == (656.0, 460.0, False)
    assert drawn.rails == ((1, 40.0, 328.0), (2, 328.0, 616.0))
    switches = [(b.label, b.row, b.x, b.y, b.rail) for b in drawn.boxes if b.row != "hosts"]
    assert switches == [
        ("leaf01", "leaf", 112.0, 210.0, 1), ("leaf02", "leaf", 256.0, 210.0, 1),
        ("leaf03", "leaf", 400.0, 210.0, 2), ("leaf04", "leaf", 544.0, 210.0, 2),
        ("spine01", "spine", 184.0, 60.0, 0), ("spine02", "spine", 472.0, 60.0, 0)]
    under_leaf01 = [(b.label, b.x) for b in drawn.boxes if b.row == "hosts"][:8]
    assert under_leaf01 == [(f"gpu0{n}", 49.0 + 18 * (n - 1)) for n in range(1, 9)]
    assert Box("pf:gpu09/ens2f0np0", "gpu09", "hosts", 481.0, 360.0, 2) in drawn.boxes
    assert [c for c in drawn.cables if c.a.startswith("leaf01:")][7:] == [
        Cable("leaf01:Ethernet8", "gpu08:ens1f0np0", "switch:leaf01", "pf:gpu08/ens1f0np0",
              "host", "confirmed"),
        Cable("leaf01:Ethernet9", "spine01:Ethernet1", "switch:leaf01", "switch:spine01",
              "leaf-spine", "confirmed"),
        Cable("leaf01:Ethernet10", "spine02:Ethernet1", "switch:leaf01", "switch:spine02",
              "leaf-spine", "confirmed")]
    assert len(drawn.cables) == 32 + 8


def test_the_demo_layout_crosses_only_where_a_full_mesh_must():
    """Four leaves each cabled to both spines: C(4,2) pairs of leaves cross once each, the
    least possible; the naive picture (each node once, cabled to its two leaves) adds 120."""
    assert crossings(*drawn_rows(layout(demo()))) == 6
    assert crossings(*naive_rows(demo())) == 126


def test_the_medium_fabric_collapses_hosts_per_leaf_and_crosses_half_as_much():
    """128 leaves each cabled to all 64 spines: C(128,2) * C(64,2) crossings cannot be
    avoided; the naive picture's 8,192 host cables nearly double them."""
    drawn = layout(medium())
    assert drawn.collapsed
    groups = [b for b in drawn.boxes if b.row == "hosts"]
    assert len(groups) == 128 and {(b.label, b.count) for b in groups} == {("64 NICs", 64)}
    assert groups[0] == Box("hosts:leaf01", "64 NICs", "hosts", 72.0, 360.0, 1, 64)
    assert len([b for b in drawn.boxes if b.row != "hosts"]) == 192
    assert len(drawn.cables) == 8192 + 8192
    assert crossings(*drawn_rows(drawn)) == 16_386_048 == (128 * 127 // 2) * (64 * 63 // 2)
    assert crossings(*naive_rows(medium())) == 31_760_384


def test_a_fabric_over_the_threshold_collapses_its_hosts():
    drawn = layout(demo(), collapse_over=31)
    groups = [(b.id, b.label, b.x) for b in drawn.boxes if b.row == "hosts"]
    assert groups == [("hosts:leaf01", "8 NICs", 72.0), ("hosts:leaf02", "8 NICs", 136.0),
                      ("hosts:leaf03", "8 NICs", 200.0), ("hosts:leaf04", "8 NICs", 264.0)]
    assert {c.b_box for c in drawn.cables if c.a.startswith("leaf02:Ethernet")
            and c.tier == "host"} == {"hosts:leaf02"}


def test_barycentre_sweeps_untangle_a_crossed_order():
    rows = [["s1", "s2"], ["l1", "l2", "l3", "l4"]]
    links = [("l1", "s2"), ("l2", "s1"), ("l3", "s2"), ("l4", "s1")]
    assert crossings(rows, links) == 3
    ordered = order_rows(rows, links, {})
    assert ordered == [["s1", "s2"], ["l2", "l4", "l1", "l3"]]
    assert crossings(ordered, links) == 0


def test_barycentre_keeps_leaves_within_their_rail():
    rows = [["s1", "s2"], ["l1", "l2", "l3", "l4"]]
    links = [("l1", "s2"), ("l2", "s1"), ("l3", "s2"), ("l4", "s1")]
    rails = {"l1": 1, "l2": 1, "l3": 2, "l4": 2}
    assert order_rows(rows, links, rails) == [["s1", "s2"], ["l2", "l1", "l4", "l3"]]


@pytest.mark.parametrize(("rows", "cables", "expected"), [
    ([["a", "b"], ["c", "d"]], [("a", "d"), ("b", "c")], 1),
    ([["a", "b"], ["c", "d"]], [("a", "c"), ("b", "d")], 0),
    ([["a", "b"], ["c", "d"]], [("a", "d"), ("a", "d"), ("b", "c")], 2),  # parallel cables
    ([["a", "b"], ["c", "d"]], [("d", "a"), ("b", "c")], 1),  # either end first
    ([["a", "b"], ["c", "d"]], [("a", "c"), ("a", "d"), ("b", "c")], 1),  # shared ends
    ([["a", "b"], ["c"], ["d", "e"]], [("a", "e"), ("b", "d")], 0),  # rows apart: uncounted
    ([["a", "b", "c"], ["d", "e", "f"]], [("a", "f"), ("b", "e"), ("c", "d")], 3),
])
def test_crossings(rows, cables, expected):
    assert crossings(rows, cables) == expected


def test_a_three_tier_fabric_gets_a_super_spine_row_on_top():
    """Four Clos pods of two leaves under four super-spines (tests/topology/test_answers):
    the rows' name order already crosses least, and barycentre keeps it."""
    fabric = build_graph(generate_facts(FabricSpec(
        nodes=32, rails=2, leaves_per_rail=4, spines=2, uplinks_per_leaf=4, leaves_per_pod=2,
        super_spines=4, uplinks_per_spine=2, vfs_per_pf=4)))
    drawn = layout(fabric)
    rows = {(b.row, b.y): [] for b in drawn.boxes}
    for b in drawn.boxes:
        rows[b.row, b.y].append(b.label)
    assert [(row, y, len(labels)) for (row, y), labels in rows.items()] == [
        ("leaf", 360.0, 8), ("hosts", 510.0, 64), ("super-spine", 60.0, 4), ("spine", 210.0, 8)]
    assert rows["super-spine", 60.0] == [f"superspine0{n}" for n in range(1, 5)]
    assert Cable("spine01:Ethernet5", "superspine01:Ethernet1", "switch:spine01",
                 "switch:superspine01", "spine-super-spine", "confirmed") in drawn.cables
    assert crossings(*drawn_rows(drawn)) == 52
    assert crossings(*naive_rows(fabric)) == 548
