"""The synthetic fabric generator and the ladder sizes it builds."""

import dataclasses
from pathlib import Path

import pytest

from inventory.errors import ConfigError
from inventory.factfile import read_facts
from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.ladder import ladder_spec
from simulator.spec import load_fabric_spec
from topology.build import build_graph
from topology.snapshot import load_snapshot, snapshot_document

EXAMPLE = Path(__file__).parents[2] / "examples" / "fabric-small"


def test_small_ladder_matches_the_reference_shape():
    spec = ladder_spec("small")
    facts = generate_facts(spec)
    assert (spec.gpus, spec.leaves, len(facts.vfs), len(facts.pods)) == (1024, 16, 8192, 192)
    assert len(facts.pod_interfaces) == 1024  # one VF per GPU
    assert len({f.ipv4 for f in facts.pod_interfaces}) == 1024
    cables = build_graph(facts).graph.edges(data="kind")
    assert sum(kind == "cabled" for _, _, kind in cables) == 2048


def test_generation_is_deterministic():
    spec = ladder_spec("small")
    assert generate_facts(spec) == generate_facts(spec)


def test_jobs_span_leaves_and_tenants_share_them():
    facts = generate_facts(FabricSpec(nodes=4, rails=1, leaves_per_rail=2, spines=1,
                                      vfs_per_pf=1, jobs=(JobSpec("a", "x", pods=2),
                                                          JobSpec("b", "y", pods=2))))
    assert [(p.name, p.node) for p in facts.pods] == [
        ("x-worker-0", "gpu01"), ("x-worker-1", "gpu03"),
        ("y-worker-0", "gpu02"), ("y-worker-1", "gpu04"),
    ]


@pytest.mark.parametrize(("change", "message"), [
    ({"nodes": 0}, "nodes must be at least 1"),
    ({"uplinks_per_leaf": 3}, "uplinks_per_leaf must be a multiple of spines"),
    ({"jobs": (JobSpec("a", "x", pods=3),)}, "jobs need 6 NICs, the fabric has 4"),
    ({"jobs": (JobSpec("a", "x", pods=1, nics_per_pod=3),)}, "nics_per_pod exceeds rails"),
    ({"pods_per_nic": 3}, "pods_per_nic must be between 1 and vfs_per_pf"),
])
def test_inconsistent_specs_are_refused(change, message):
    spec = dataclasses.replace(FabricSpec(nodes=2, rails=2, vfs_per_pf=2, spines=2), **change)
    with pytest.raises(ValueError, match=message):
        generate_facts(spec)


def test_committed_example_is_what_the_spec_generates():
    spec = load_fabric_spec(EXAMPLE / "fabric.yaml")
    facts = generate_facts(spec)
    assert read_facts([EXAMPLE / "facts.yaml"]) == facts
    assert snapshot_document(load_snapshot(EXAMPLE / "topology.json")) == \
        snapshot_document(build_graph(facts))


def test_spec_file_errors_name_the_key(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("nodes: 2\njobs:\n  - {tenant: a, name: x, pods: two}\n")
    with pytest.raises(ConfigError, match=r"s.yaml: jobs\[0\]\.pods: expected int, got 'two'"):
        load_fabric_spec(path)
