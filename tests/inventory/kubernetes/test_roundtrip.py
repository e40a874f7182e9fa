"""Facts -> realistic Kubernetes objects -> the inventory gives the same facts back.

The objects come from simulator.kube_objects; the inventory knows nothing of how they
were made, so agreement checks the parser against an independent rendering of REFERENCE.
"""

import dataclasses

import pytest

from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.objects import ClusterObjects, sort_objects
from inventory.kubernetes.snapshot import read_cluster_objects
from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.kube_objects import cluster_objects, write_kubectl_dump

SPEC = FabricSpec(nodes=4, rails=2, vfs_per_pf=2, spines=1, pods_per_nic=2, jobs=(
    JobSpec("team-a", "llm", "PyTorchJob", 2), JobSpec("team-b", "db", "StatefulSet", 1),
    JobSpec("team-b", "js", "JobSet", 1), JobSpec("team-a", "mpi", "MPIJob", 1),
    JobSpec("team-b", "lws", "LeaderWorkerSet", 1), JobSpec("team-a", "batch", "Job", 1)))
ROLE_LABELLED = {"PyTorchJob", "MPIJob"}  # kinds whose pods carry a replica type


def in_memory(objects):
    resources, others = sort_objects(objects)
    return ClusterObjects({k: tuple(v) for k, v in resources.items()}, tuple(others))


def comparable(facts):
    """What Kubernetes can know: no LLDP chassis ids, roles only where labelled."""
    return {
        "nodes": {dataclasses.replace(n, chassis_id="") for n in facts.nodes},
        "pfs": set(facts.pfs), "vfs": set(facts.vfs), "jobs": set(facts.jobs),
        "pod_interfaces": set(facts.pod_interfaces),
        "pods": {dataclasses.replace(p, role=p.role if p.job_kind in ROLE_LABELLED else "")
                 for p in facts.pods},
        "tenants": {t.name for t in facts.tenants},
    }


@pytest.fixture(scope="module")
def truth():
    return generate_facts(SPEC)


def test_objects_give_back_the_facts(truth):
    found = build_inventory(in_memory(cluster_objects(truth)))
    assert found.problems == ()
    assert comparable(found.facts) == comparable(truth)
    assert {(p.name, p.job_kind, p.job_name) for p in found.facts.pods} >= {
        ("js-worker-0", "JobSet", "js"), ("lws-0", "LeaderWorkerSet", "lws"),
        ("db-0", "StatefulSet", "db")}
    assert {t.source for t in found.facts.tenants} == {"label:tenant"}


def test_kubectl_dumps_read_back_to_the_same_inventory(truth, tmp_path):
    objects = cluster_objects(truth)
    write_kubectl_dump(objects, tmp_path)
    from_files = build_inventory(read_cluster_objects([tmp_path]))
    assert from_files == build_inventory(in_memory(objects))
