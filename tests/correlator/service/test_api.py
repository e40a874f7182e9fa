"""The JSON API's handlers over the example scenario's view: spine01:Ethernet1 in is hot,
team-a makes most of it (the culprit), team-b shares it (the victim) and its CNPs come back
the other way, sampled by leaf01 on Ethernet5 in."""

import pytest

from correlator.data import to_data
from correlator.service.api import handle
from correlator.view import View
from inventory.factfile import facts_from_document
from inventory.problems import Problem
from tests.correlator.attribution.bounds import share_bounds
from tests.correlator.service.example_view import make_capture, replayed
from topology import queries
from topology.graph import FabricGraph

T0, SECONDS = 1767229200.0, 10.0
LAST = T0 + 20  # the last of the capture's three intervals
SPINE_IN = 438_270_000_000.0  # the counters' bytes of spine01:Ethernet1 in, last interval
CNP_BYTES = 46_800_000.0  # leaf01:Ethernet5 in: team-b's CNPs
A_SAMPLES, B_SAMPLES = 8938, 1498  # the samples of team-a and team-b on spine01 in
A_PEAK = 8994  # team-a's samples there in the second interval, the hotspot's best-sampled (10,456)
TEAM_A_BPS = SPINE_IN * A_SAMPLES / (A_SAMPLES + B_SAMPLES) / SECONDS  # equal frame sizes
TEAM_B_BPS = (SPINE_IN * B_SAMPLES / (A_SAMPLES + B_SAMPLES) + CNP_BYTES) / SECONDS


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    return replayed(make_capture(tmp_path_factory.mktemp("api")))


def get(view, path, **query):
    return handle(view, "GET", path, {k: [str(v)] for k, v in query.items()})


def _names(shares):
    return [s["name"] for s in shares]


def test_hotspots_name_the_culprit_the_victim_and_whom_the_cnps_throttle(view):
    status, (hot,) = get(view, "/api/v1/hotspots")
    assert status == 200
    assert (hot["port"], hot["direction"], hot["peer"], hot["kinds"], hot["severity"],
            hot["start"], hot["end"]) == ("port:leaf01/Ethernet5", "out",
                                          "port:spine01/Ethernet1", ["utilization"], "warning",
                                          T0 + SECONDS, None)  # sFlow counters from T0 + 5
    assert hot["signals"] == {"utilization": 0.87654, "discards": 0.0}
    assert _names(hot["culprits"]) == ["tenant:team-a"]
    assert _names(hot["culprit_jobs"]) == ["job:team-a/llm-pretrain"]
    assert _names(hot["victims"]) == ["tenant:team-b"]
    assert _names(hot["victim_jobs"]) == ["job:team-b/bert-large"]
    assert _names(hot["throttled"]) == ["job:team-b/bert-large"]
    assert hot["culprits"][0]["samples"] == A_PEAK  # the hotspot's best-sampled interval
    assert hot["noisy_neighbour"] == ("team-a sends 86% (85%-87%) of a link that "
                                      "team-b also use")


def test_who_reads_each_direction_from_the_end_that_sampled_it(view):
    status, found = get(view, "/api/v1/links/spine01:Ethernet1")
    assert status == 200
    assert (found["link"], found["peer"], found["start"], found["seconds"]) == (
        "spine01:Ethernet1", "leaf01:Ethernet5", LAST, SECONDS)
    inbound, outbound = found["in"], found["out"]
    assert (inbound["port"], inbound["direction"], inbound["samples"],
            inbound["counter_bytes"], inbound["utilization"]) == (
        "port:spine01/Ethernet1", "in", A_SAMPLES + B_SAMPLES, SPINE_IN, 0.87654)
    assert [(s["name"], s["samples"]) for s in inbound["tenants"]] == [
        ("tenant:team-a", A_SAMPLES), ("tenant:team-b", B_SAMPLES)]
    assert sum(s["bytes"] for s in inbound["tenants"]) == pytest.approx(SPINE_IN, rel=1e-12)
    # what spine01 sends on Ethernet1 is what leaf01 receives on Ethernet5: sampled there
    assert (outbound["port"], outbound["direction"], outbound["samples"],
            outbound["counter_bytes"], outbound["traffic"]) == (
        "port:leaf01/Ethernet5", "in", 67, CNP_BYTES, {"roce-cnp": 67})
    assert _names(outbound["throttled"]) == ["job:team-b/bert-large"]
    _, mirror = get(view, "/api/v1/links/leaf01:Ethernet5")
    assert (mirror["link"], mirror["peer"]) == ("leaf01:Ethernet5", "spine01:Ethernet1")
    assert (mirror["in"], mirror["out"]) == (outbound, inbound)


def test_a_host_link_nobody_sampled_has_no_traffic(view):
    assert get(view, "/api/v1/links/leaf01:Ethernet1") == (200, {
        "link": "leaf01:Ethernet1", "peer": "gpu01:ens1f0np0", "start": LAST,
        "seconds": SECONDS, "in": None, "out": None})


def test_links_is_the_last_interval(view):
    status, found = get(view, "/api/v1/links")
    assert status == 200
    assert (found["start"], found["seconds"], found["unknown_ports"],
            found["unattributed_samples"]) == (LAST, SECONDS, {}, 0)
    assert [(x["port"], x["direction"], x["samples"], x["counter_bytes"])
            for x in found["links"]] == [
        ("port:leaf01/Ethernet5", "in", 67, CNP_BYTES),
        ("port:leaf01/Ethernet5", "out", 0, 0.0),
        ("port:spine01/Ethernet1", "in", A_SAMPLES + B_SAMPLES, SPINE_IN),
        ("port:spine01/Ethernet1", "out", 0, 0.0)]


def test_top_tenants_fabric_wide_sums_a_tier(view):
    status, found = get(view, "/api/v1/top/tenants")
    assert status == 200
    assert (found["link"], found["start"], found["seconds"]) == (None, LAST, SECONDS)
    assert found["rows"] == [
        {"tier": "leaf-spine", "name": "team-a", "bytes_per_second": pytest.approx(TEAM_A_BPS)},
        {"tier": "leaf-spine", "name": "team-b", "bytes_per_second": pytest.approx(TEAM_B_BPS)}]
    _, jobs = get(view, "/api/v1/top/jobs", limit=1)
    assert [(r["tier"], r["name"]) for r in jobs["rows"]] == [
        ("leaf-spine", "team-a/llm-pretrain")]


def test_top_pods_of_one_link_are_its_shares_per_direction(view):
    status, found = get(view, "/api/v1/top/pods", link="spine01:Ethernet1", limit=2)
    assert status == 200 and found["link"] == "spine01:Ethernet1"
    assert [(r["direction"], r["name"], r["samples"], r["exact"]) for r in found["rows"]] == [
        ("in", "team-a/llm-pretrain-worker-0", 6971, True),
        ("in", "team-a/llm-pretrain-worker-2", 1967, True),
        ("out", "team-b/bert-large-worker-1", 67, True)]
    first = found["rows"][0]
    assert first["share"] == pytest.approx(6971 / (A_SAMPLES + B_SAMPLES))
    assert first["share_low"] < first["share"] < first["share_high"]
    assert (first["share_low"], first["share_high"]) == pytest.approx(
        share_bounds(6971, A_SAMPLES + B_SAMPLES, first["share"]), abs=1e-12)
    assert first["bytes_per_second"] == pytest.approx(first["share"] * SPINE_IN / SECONDS)


def test_jobs_and_tenants_carry_their_fabric_totals_by_tier(view):
    status, found = get(view, "/api/v1/jobs")
    assert status == 200 and found["start"] == LAST
    assert found["jobs"] == [
        {"job": "team-a/eval", "kind": "StatefulSet", "tenant": "team-a",
         "bytes_per_second": {}},
        {"job": "team-a/llm-pretrain", "kind": "PyTorchJob", "tenant": "team-a",
         "bytes_per_second": {"leaf-spine": pytest.approx(TEAM_A_BPS)}},
        {"job": "team-b/bert-large", "kind": "MPIJob", "tenant": "team-b",
         "bytes_per_second": {"leaf-spine": pytest.approx(TEAM_B_BPS)}}]
    _, found = get(view, "/api/v1/tenants")
    assert found["tenants"] == [
        {"tenant": "team-a", "jobs": ["team-a/eval", "team-a/llm-pretrain"],
         "bytes_per_second": {"leaf-spine": pytest.approx(TEAM_A_BPS)}},
        {"tenant": "team-b", "jobs": ["team-b/bert-large"],
         "bytes_per_second": {"leaf-spine": pytest.approx(TEAM_B_BPS)}}]


def test_status(view):
    status, found = get(view, "/api/v1/status")
    assert status == 200
    # the capture's last interval: its ports' counters come from sFlow counter samples, and
    # none came after its end, so they are carried on to it: provisional
    assert found["interval"] == {
        "start": LAST, "seconds": SECONDS, "provisional": True, "link_directions": 4,
        "samples": A_SAMPLES + B_SAMPLES + 67, "unattributed_samples": 0,
        "unknown_port_samples": 0, "attribution_seconds": 0.0}
    # the run is over: its last interval is judged for hotspots as it stands
    assert (found["ready"], found["started"], found["ports_with_rates"], found["hotspots"],
            found["collectors"]) == (True, T0, 2, {"active": 1, "ended": 0,
                                                   "judged_until": LAST + SECONDS}, {})
    assert found["sflow"] == {"datagrams": 4531, "bytes": 6177664,
                              "samples": {"flow": 31552, "counters": 12}, "rejects": {},
                              "lost_datagrams": 0, "agent_restarts": 0, "agent_drops": 0,
                              "kernel_drops": 0, "interleaved": 0, "evictions": {}}


@pytest.mark.parametrize(("path", "query", "expected"), [
    ("/api/v1/topology/summary", {}, lambda f: queries.summary(f)),
    ("/api/v1/topology/where", {"q": "team-a/llm-pretrain-worker-0"},
     lambda f: queries.where(f, "team-a/llm-pretrain-worker-0")),
    ("/api/v1/topology/where", {"q": "10.101.0.2", "at": "2026-01-01T01:00:00Z"},
     lambda f: queries.where(f, "10.101.0.2", T0)),
    ("/api/v1/topology/path", {"a": "10.101.0.2", "b": "10.101.0.3", "limit": 1},
     lambda f: queries.paths(f, "10.101.0.2", "10.101.0.3", limit=1)),
    ("/api/v1/topology/link", {"port": "spine01:Ethernet1"},
     lambda f: queries.link(f, "spine01:Ethernet1")),
    ("/api/v1/topology/job", {"name": "team-b/bert-large"},
     lambda f: queries.job(f, "team-b/bert-large")),
    ("/api/v1/topology/tenant", {"name": "team-a"}, lambda f: queries.tenant(f, "team-a")),
])
def test_topology_answers_are_the_queries_as_data(view, path, query, expected):
    status, found = get(view, path, **query)
    assert (status, found) == (200, to_data(expected(view.fabric)))
    assert found  # not trivially empty


def test_problems_of_one_kind(view):
    found = (Problem("link-one-sided", "leaf01:Ethernet5-spine01:Ethernet1"),
             Problem("podif-unattached", "team-a/x/net1", "no VF"))
    fabric = FabricGraph(view.fabric.graph, view.fabric.facts, found)
    assert get(View(fabric), "/api/v1/topology/problems") == (200, to_data(list(found)))
    assert get(View(fabric), "/api/v1/topology/problems", kind="podif-unattached") == (
        200, [{"kind": "podif-unattached", "subject": "team-a/x/net1", "detail": "no VF"}])


def test_the_facts_whole_and_in_their_three_parts(view):
    """The parts split the facts: the switches' sections, the hosts' and the workloads',
    no fact in two."""
    whole, switches, hosts, workloads = (
        facts_from_document(get(view, "/api/v1/topology/facts", **part)[1])
        for part in ({}, {"part": "switches"}, {"part": "hosts"}, {"part": "workloads"}))
    assert whole == view.fabric.facts
    assert {name for name, count in switches.count().items() if count} == {
        "switches", "interfaces", "neighbors"}
    assert {name for name, count in hosts.count().items() if count} == {
        "nodes", "pfs", "vfs", "neighbors"}
    assert {name for name, count in workloads.count().items() if count} == {
        "pods", "pod_interfaces", "jobs", "tenants"}
    assert len(switches.switches) == 6
    assert {n.reporter for n in switches.neighbors} == {"switch"}
    assert {n.reporter for n in hosts.neighbors} == {"host"}
    assert sum(sum(part.count().values()) for part in (switches, hosts, workloads)) == sum(
        whole.count().values())
    assert switches.merge(hosts).merge(workloads).count() == whole.count()


def test_a_path_lists_up_to_the_limit_and_counts_all(view):
    _, (pair,) = get(view, "/api/v1/topology/path", a="10.101.0.2", b="10.101.0.3", limit=1)
    assert (pair["count"], len(pair["paths"])) == (2, 1)


@pytest.mark.parametrize(("path", "query", "status", "error"), [
    ("/api/v1/hotspot", {}, 404,
     "no API endpoint '/api/v1/hotspot'; did you mean '/api/v1/hotspots'?"),
    ("/links", {}, 404,
     "no API endpoint '/links'; did you mean '/api/v1/links', '/api/v1/links/'?"),
    ("/api/v1/top/tenant", {}, 404, "no top list named 'tenant'; did you mean 'tenants'?"),
    ("/api/v1/top/", {}, 404,
     "no top list named ''; did you mean 'tenants', 'jobs', 'pods'?"),
    ("/api/v1/links/spine01:Ethernet9", {}, 404,
     "no port named 'spine01:Ethernet9'; did you mean 'spine01:Ethernet4', "
     "'spine01:Ethernet3', 'spine01:Ethernet2'?"),
    ("/api/v1/topology/job", {"name": "team-a/llm"}, 404,
     "no job named 'team-a/llm'; did you mean 'team-a/llm-pretrain', 'team-a/eval'?"),
    ("/api/v1/topology/where", {"q": "10.101.0.2", "at": "0"}, 404,
     "no pod interface with IP named '10.101.0.2 (at 0.0)'"),
    ("/api/v1/links/", {}, 400, "name the link: /api/v1/links/SWITCH:PORT"),
    ("/api/v1/topology/where", {}, 400, "missing parameter 'q'"),
    ("/api/v1/topology/where", {"q": "gpu01", "at": "noon"}, 400, "at: not a time: 'noon'"),
    ("/api/v1/topology/link", {"prt": "x"}, 400, "unknown parameter 'prt' (allowed: port)"),
    ("/api/v1/top/jobs", {"limit": "0"}, 400, "limit: must be between 1 and 100000, not 0"),
    ("/api/v1/topology/path", {"a": "10.101.0.2", "b": "10.101.0.3",
                               "limit": "99999999999999999999999"}, 400,
     "limit: must be between 0 and 100000, not 99999999999999999999999"),
    ("/api/v1/topology/where", {"q": "10.101.0.300"}, 400,
     "q: '10.101.0.300' is not an IPv4 address"),
    ("/api/v1/topology/where", {"q": "10.101.0.2", "at": "nan"}, 400,
     "at: not a time: 'nan' (not a finite number)"),
    ("/api/v1/topology/problems", {"kind": "bogus"}, 400,
     "kind: unknown problem kind 'bogus' (kinds: bad-role-hint, device-info-missing, "
     "ip-conflict, ip-duplicate, ippool-malformed, link-conflict, link-one-sided, lldp-loop, "
     "lldp-unknown-local, lldp-unresolved, mac-conflict, network-status-malformed, "
     "podif-unattached, port-unlisted, resource-unreadable, spiderendpoint-missing, "
     "spiderendpoint-stale, sriov-state-malformed, unknown-api-version, unknown-job, "
     "unknown-node, unknown-pod, unknown-switch, unknown-tenant, vf-unknown, vf-unknown-pf)"),
    ("/api/v1/top/jobs", {"limit": "ten"}, 400, "limit: not an integer: 'ten'"),
    ("/api/v1/topology/facts", {"part": "inventory"}, 400,
     "part: 'switches', 'hosts' or 'workloads', not 'inventory'"),
])
def test_errors_say_what_is_wrong(view, path, query, status, error):
    assert get(view, path, **query) == (status, {"error": error})


def test_the_api_is_read_only(view):
    assert handle(view, "POST", "/api/v1/status", {}) == (
        405, {"error": "method POST not allowed: the API is read-only"})


@pytest.mark.parametrize("path", ["/api/v1/links", "/api/v1/links/spine01:Ethernet1",
                                  "/api/v1/hotspots", "/api/v1/top/pods", "/api/v1/jobs",
                                  "/api/v1/tenants"])
def test_traffic_waits_for_the_first_interval(view, path):
    starting = View(view.fabric)
    assert get(starting, path) == (503, {"error": "no interval attributed yet"})
    assert get(starting, "/api/v1/topology/summary")[0] == 200
    status, found = get(starting, "/api/v1/status")
    assert (status, found["ready"], found["interval"]) == (200, False, None)
