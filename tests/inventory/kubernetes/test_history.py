"""IP ownership history: departed pods keep their IPs for lookups, within bounds."""

from inventory.facts import PodFact, PodInterfaceFact
from inventory.kubernetes.history import IpHistory, Retention
from topology.indexes import IpIndex

T1 = 1_000.0


def departed(name: str, ip: str, start: float = 0.0) -> tuple[PodFact, tuple]:
    pod = PodFact("a", name, uid=f"uid-{name}")
    return pod, (PodInterfaceFact("a", name, "net1", ipv4=ip, valid_from=start),)


def test_fixed_ip_moves_from_pod_a_to_pod_b_at_t1():
    history = IpHistory()
    pod_a, interfaces_a = departed("db-0", "10.1.0.7/24")
    history.record(pod_a, interfaces_a, ended=T1)
    live_b = PodInterfaceFact("a", "db-0-new", "net1", ipv4="10.1.0.7/24", valid_from=T1)
    old = [i for d in history.departed() for i in d.interfaces]
    index, problems = IpIndex.from_facts([*old, live_b])
    assert problems == []
    assert index.lookup("10.1.0.7", T1 - 1) == "podif:a/db-0/net1"
    assert index.lookup("10.1.0.7", T1) == "podif:a/db-0-new/net1"
    assert index.lookup("10.1.0.7") == "podif:a/db-0-new/net1"


def test_retention_by_age_and_by_count():
    history = IpHistory(Retention(max_age_s=100.0, max_entries=2))
    for n, ended in enumerate((10.0, 20.0, 30.0)):
        history.record(*departed(f"p{n}", f"10.1.0.{n}/24"), ended=ended)
    history.expire(now=50.0)  # all young, but three exceed the cap of two
    assert [d.pod.name for d in history.departed()] == ["p1", "p2"]
    history.expire(now=125.0)  # p1 ended at 20: older than 100 s
    assert [d.pod.name for d in history.departed()] == ["p2"]
    assert len(history) == 1


def test_recording_twice_or_without_interfaces_changes_nothing():
    history = IpHistory()
    pod, interfaces = departed("p", "10.1.0.1/24")
    history.record(pod, interfaces, ended=5.0)
    history.record(pod, interfaces, ended=9.0)
    history.record(PodFact("a", "q", uid="uid-q"), (), ended=9.0)
    assert [(d.pod.name, d.interfaces[0].valid_until) for d in history.departed()] == [
        ("p", 5.0)]

