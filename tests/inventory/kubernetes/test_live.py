"""Live mode over real HTTP: the official client against the fake API server.

The server (simulator.kube_api) stands in for kube-apiserver, which cannot run here; the
client, its list pagination, its Watch and the reflectors are the real ones.
"""

import copy
import random
import time
from pathlib import Path

import pytest

from inventory.backoff import Backoff
from inventory.kubernetes.history import Retention
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.live import LiveKubernetes, LiveSettings, api_client
from inventory.kubernetes.snapshot import read_cluster_objects
from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects, write_kubectl_dump
from topology.indexes import IpIndex

SPEC = FabricSpec(nodes=4, rails=2, vfs_per_pf=2, spines=1, pods_per_nic=2, jobs=(
    JobSpec("team-a", "llm", "PyTorchJob", 3), JobSpec("team-b", "db", "StatefulSet", 1),
    JobSpec("team-b", "js", "JobSet", 1), JobSpec("team-b", "vj", "VolcanoJob", 1)))
SETTINGS = LiveSettings(page_size=2, watch_timeout_s=1, request_timeout_s=5,
                        backoff=Backoff(base_s=0.01, cap_s=0.05),
                        retention=Retention(max_age_s=600))
T1 = 1_767_300_000.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def named(objects, kind, name):
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


@pytest.fixture
def objects():
    return cluster_objects(generate_facts(SPEC))


@pytest.fixture
def api(objects, tmp_path):
    with FakeKubeApi(objects) as server:
        server.forbid("batch.volcano.sh", "jobs")  # RBAC: the Volcano owner GET is refused
        yield server


@pytest.fixture
def live(api, tmp_path):
    clock = Clock(T1 - 600)
    source = LiveKubernetes(api_client(str(api.kubeconfig(tmp_path / "kubeconfig"))),
                            SETTINGS, clock)
    source.clock_control = clock
    source.start()
    yield source
    source.stop()


def test_live_and_snapshot_modes_give_the_same_facts(live, objects, tmp_path: Path):
    assert live.wait_ready(60)
    from_live = live.inventory()
    write_kubectl_dump(objects, tmp_path / "dump")
    from_files = build_inventory(read_cluster_objects([tmp_path / "dump"]))
    assert from_live.facts == from_files.facts
    # Pods were listed two per page: three pages of six pods, with continue tokens.
    assert live.reflectors["pods"].lists == 3
    jobs = {(j.name, j.kind) for j in from_live.facts.jobs}
    assert jobs == {("llm", "PyTorchJob"), ("db", "StatefulSet"), ("js", "JobSet"),
                    ("vj", "VolcanoJob")}


def test_inventory_waits_for_the_initial_lists(api, tmp_path):
    source = LiveKubernetes(api_client(str(api.kubeconfig(tmp_path / "k"))), SETTINGS)
    with pytest.raises(RuntimeError, match="initial lists"):
        source.inventory()


def test_watch_events_410_and_dropped_connections_end_in_the_exact_facts(live, api, objects):
    assert live.wait_ready(60)
    before = live.inventory()
    worker = named(objects, "Pod", "llm-worker-1")
    reused_ip = next(i.ipv4 for i in before.facts.pod_interfaces
                     if (i.pod, i.interface) == ("llm-worker-1", "net1"))

    # The pod goes at T1; a new pod of another job gets its pool IP right after.
    live.clock_control.now = T1
    api.apply("DELETED", worker)
    wait_for(lambda: ("team-a", "llm-worker-1") not in live.stores["pods"].objects)
    newcomer = copy.deepcopy(worker)
    newcomer["metadata"].update(name="other-0", uid="uid-other-0", ownerReferences=[],
                                labels={"job-name": "other"})
    newcomer["status"]["startTime"] = "2026-01-01T20:40:00Z"  # = T1
    api.apply("ADDED", newcomer)
    relabelled = copy.deepcopy(named(objects, "Pod", "llm-worker-2"))
    relabelled["metadata"]["labels"]["training.kubeflow.org/replica-index"] = "7"
    api.apply("MODIFIED", relabelled)
    api.bookmark()

    # History is compacted and every watch cut: the reflectors must relist.
    lists_before = api.requests[("list", "pods")]
    api.expire()
    api.drop_watches()
    wait_for(lambda: api.requests[("list", "pods")] > lists_before)
    pods = live.stores["pods"]
    wait_for(lambda: ("team-a", "other-0") in pods.objects and
             pods.objects[("team-a", "llm-worker-2")].unpacked()["metadata"]["labels"]
             ["training.kubeflow.org/replica-index"] == "7")

    after = live.inventory()
    pods = {(p.name, p.job_kind, p.job_name, p.index) for p in after.facts.pods}
    assert pods == {
        ("llm-worker-0", "PyTorchJob", "llm", "0"), ("llm-worker-2", "PyTorchJob", "llm", "7"),
        ("db-0", "StatefulSet", "db", "0"), ("js-worker-0", "JobSet", "js", "0"),
        ("vj-worker-0", "VolcanoJob", "vj", "0"), ("other-0", "Job", "other", ""),
        ("llm-worker-1", "PyTorchJob", "llm", "1"),  # departed, kept for its IP history
    }
    assert after.counts["departed_interfaces"] == 2
    index, problems = IpIndex.from_facts(after.facts.pod_interfaces)
    assert problems == []
    address = reused_ip.split("/")[0]
    assert index.lookup(address, T1 - 1) == "podif:team-a/llm-worker-1/net1"
    assert index.lookup(address, T1) == "podif:team-a/other-0/net1"
    assert index.lookup(address) == "podif:team-a/other-0/net1"


def test_backoff_is_capped_exponential_with_full_jitter():
    backoff, rng = Backoff(base_s=0.5, cap_s=30.0), random.Random(1)
    ceilings = [max(backoff.delay(n, rng) for _ in range(2000)) for n in (0, 3, 6, 60)]
    assert [round(c, 1) for c in ceilings] == [0.5, 4.0, 30.0, 30.0]
    assert min(backoff.delay(3, rng) for _ in range(2000)) < 0.05
