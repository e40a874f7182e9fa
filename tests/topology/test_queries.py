"""Exact answers of the topology queries on the committed example fabric."""

from pathlib import Path

import pytest

from inventory.errors import NotFound
from topology import queries
from topology.paths import Hop
from topology.snapshot import load_snapshot

EXAMPLE = Path(__file__).parents[2] / "examples" / "fabric-small" / "topology.json"


@pytest.fixture(scope="module")
def fabric():
    return load_snapshot(EXAMPLE)


def test_where_pod_lists_both_rails(fabric):
    rows = queries.where(fabric, "team-a/llm-pretrain-worker-0")
    assert [(r.interface, r.ipv4, r.node, r.pf, r.rail, r.vf, r.leaf, r.leaf_port)
            for r in rows] == [
        ("net1", "10.101.0.2/16", "gpu01", "ens1f0np0", 1, "0000:1a:00.2", "leaf01", "Ethernet1"),
        ("net2", "10.102.0.2/16", "gpu01", "ens2f0np0", 2, "0000:3d:00.2", "leaf03", "Ethernet1"),
    ]
    assert {(r.job, r.tenant) for r in rows} == {("team-a/llm-pretrain", "team-a")}


@pytest.mark.parametrize(("ref", "expected"), [
    ("10.102.0.6", ("team-b/bert-large-worker-0", "net2", "gpu03", "leaf03", "Ethernet3")),
    ("10.101.0.11/16", ("team-a/eval-1", "net1", "gpu05", "leaf02", "Ethernet1")),
    ("team-a/eval-0/net2", ("team-a/eval-0", "net2", "gpu01", "leaf03", "Ethernet1")),
    ("gpu01/0000:1a:00.3", ("team-a/eval-0", "net1", "gpu01", "leaf01", "Ethernet1")),
])
def test_where_single_interface(fabric, ref, expected):
    [row] = queries.where(fabric, ref)
    assert (row.pod, row.interface, row.node, row.leaf, row.leaf_port) == expected


def test_where_node_lists_every_interface_then_free_pf(fabric):
    rows = queries.where(fabric, "gpu03")
    assert [(r.pf, r.leaf, r.leaf_port, r.pod, r.interface) for r in rows] == [
        ("ens1f0np0", "leaf01", "Ethernet3", "team-b/bert-large-worker-0", "net1"),
        ("ens2f0np0", "leaf03", "Ethernet3", "team-b/bert-large-worker-0", "net2"),
    ]


def test_where_free_vf_has_no_pod(fabric):
    [row] = queries.where(fabric, "gpu08/0000:3d:00.5")
    assert (row.node, row.pf, row.rail, row.leaf, row.leaf_port, row.vf, row.pod) == (
        "gpu08", "ens2f0np0", 2, "leaf04", "Ethernet4", "0000:3d:00.5", "")


def test_two_equal_cost_paths_between_leaves_of_one_rail(fabric):
    found = queries.paths(fabric, "team-a/llm-pretrain-worker-0", "team-a/llm-pretrain-worker-1")
    assert [(p.source, p.destination, p.count) for p in found] == [
        ("podif:team-a/llm-pretrain-worker-0/net1", "podif:team-a/llm-pretrain-worker-1/net1", 2),
        ("podif:team-a/llm-pretrain-worker-0/net2", "podif:team-a/llm-pretrain-worker-1/net2", 2),
    ]
    assert found[0].paths == (
        (Hop("leaf01", "Ethernet1", "Ethernet5"), Hop("spine01", "Ethernet1", "Ethernet2"),
         Hop("leaf02", "Ethernet5", "Ethernet1")),
        (Hop("leaf01", "Ethernet1", "Ethernet6"), Hop("spine02", "Ethernet1", "Ethernet2"),
         Hop("leaf02", "Ethernet6", "Ethernet1")),
    )
    assert found[1].paths[0] == (
        Hop("leaf03", "Ethernet1", "Ethernet5"), Hop("spine01", "Ethernet3", "Ethernet4"),
        Hop("leaf04", "Ethernet5", "Ethernet1"))


def test_path_under_one_leaf_crosses_only_that_leaf(fabric):
    found = queries.paths(fabric, "10.101.0.2", "10.101.0.4")
    assert [(p.count, p.paths) for p in found] == [
        (1, ((Hop("leaf01", "Ethernet1", "Ethernet2"),),)),
    ]


def test_tenants_behind_a_spine_port(fabric):
    report = queries.link(fabric, "spine01:Ethernet1")
    assert (report.peer, report.peer_kind, report.status, report.tier, report.role) == (
        "leaf01:Ethernet5", "port", "confirmed", "leaf-spine", "fabric")
    assert report.tenants == ("team-a", "team-b")
    assert report.jobs == ("team-a/eval", "team-a/llm-pretrain", "team-b/bert-large")
    assert report.interfaces == (
        "team-a/eval-0/net1", "team-a/llm-pretrain-worker-0/net1",
        "team-a/llm-pretrain-worker-2/net1", "team-b/bert-large-worker-0/net1",
        "team-b/bert-large-worker-2/net1",
    )


def test_host_port_carries_only_its_pfs_pods(fabric):
    report = queries.link(fabric, "leaf02:Ethernet1")
    assert (report.peer, report.peer_kind, report.tier, report.speed_bps) == (
        "gpu05:ens1f0np0", "pf", "host", 400_000_000_000)
    assert report.pods == ("team-a/eval-1", "team-a/llm-pretrain-worker-1")
    assert report.tenants == ("team-a",)


def test_job_footprint(fabric):
    report = queries.job(fabric, "team-b/bert-large")
    assert (report.kind, report.tenant) == ("MPIJob", "team-b")
    assert report.pods == tuple(f"team-b/bert-large-worker-{k}" for k in range(4))
    footprint = report.footprint
    assert footprint.nodes == ("gpu03", "gpu04", "gpu07", "gpu08")
    assert footprint.leaves == ("leaf01", "leaf02", "leaf03", "leaf04")
    assert footprint.leaf_ports == tuple(
        f"{leaf}:Ethernet{port}" for leaf in ("leaf01", "leaf02", "leaf03", "leaf04")
        for port in (3, 4))
    assert footprint.spines == ("spine01", "spine02")
    assert footprint.super_spines == ()
    assert footprint.neighbours == ("team-a",)


def test_tenant(fabric):
    report = queries.tenant(fabric, "team-a")
    assert report.jobs == ("team-a/eval", "team-a/llm-pretrain")
    assert len(report.pods) == 6
    assert report.footprint.nodes == ("gpu01", "gpu02", "gpu05", "gpu06")
    assert report.footprint.neighbours == ("team-b",)


def test_summary_counts(fabric):
    summary = queries.summary(fabric)
    assert summary.nodes == {"tenant": 2, "job": 3, "pod": 10, "pod-interface": 20, "vf": 64,
                             "pf": 16, "node": 8, "switch": 6, "port": 32}
    assert summary.switches == {"leaf": 4, "spine": 2}
    assert summary.links == {"host": {"confirmed": 16}, "leaf-spine": {"confirmed": 8}}
    assert summary.problems == {}


@pytest.mark.parametrize(("call", "message"), [
    (lambda f: queries.where(f, "team-a/llm-pretrain-worker-7"),
     "team-a/llm-pretrain-worker-"),
    (lambda f: queries.link(f, "spine01:Ethernet9"), "did you mean 'spine01:Ethernet4'"),
    (lambda f: queries.job(f, "team-b/bert"), "team-b/bert-large"),
    (lambda f: queries.where(f, "10.101.9.9"), "10.101.9.9"),
])
def test_unknown_names_raise_not_found_with_close_matches(fabric, call, message):
    with pytest.raises(NotFound, match=message):
        call(fabric)
