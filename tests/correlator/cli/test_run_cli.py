"""``fabcorr run`` through its configuration file: TLS and basic auth on the metrics and
the API, Kubernetes followed live from an API server, and the hotspot keys ``culprits``,
``dominance`` and ``neighbour_share`` (see :mod:`tests.correlator.service.running`)."""

import http.client
import ipaddress
import json
import math
import re
import socket
import ssl
import time
import urllib.error
import urllib.request

import pytest

from correlator.cli.main import main
from simulator import roce, sflow_wire
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects
from tests.correlator.service.certs import self_signed
from tests.correlator.service.running import RunningService, fetch_url

USER, SECRET = "prom", "s3cret:pw"


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = self_signed(folder)
    with RunningService(folder, tls=(cert, key), auth=(USER, SECRET)) as service:
        yield service


def test_metrics_over_https_verified_against_the_configured_certificate(secured):
    trusting = ssl.create_default_context(cafile=str(secured.tls[0]))
    status, body = fetch_url(f"{secured.url}/metrics", trusting, (USER, SECRET))
    assert status == 200
    assert "\nfabcorr_ready 1.0\n" in body.decode()
    assert fetch_url(f"{secured.url}/readyz", trusting) == (200, b"ready\n")  # probes: no auth


@pytest.mark.parametrize("auth", [None, (USER, "wrong"), ("prometheus", SECRET)])
def test_metrics_and_api_need_the_configured_user_and_password(secured, auth):
    trusting = ssl.create_default_context(cafile=str(secured.tls[0]))
    for path in ("/metrics", "/api/v1/status"):
        status, body = fetch_url(secured.url + path, trusting, auth)
        assert (status, json.loads(body)) == (401, {"error": "authentication required"})


def test_a_client_that_does_not_trust_the_certificate_is_refused(secured):
    with pytest.raises(urllib.error.URLError) as refused:
        fetch_url(f"{secured.url}/healthz", ssl.create_default_context())
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)


def test_plain_http_gets_no_answer_from_the_tls_port(secured):
    # the port listens (a refused connection would be ConnectionRefusedError): the server
    # drops what is no TLS handshake
    connection = http.client.HTTPConnection("127.0.0.1", secured.http_port, timeout=10)
    try:
        with pytest.raises((ConnectionResetError, http.client.BadStatusLine)):
            connection.request("GET", "/healthz")
            connection.getresponse()
    finally:
        connection.close()


def test_the_cli_asks_the_service_over_https_with_basic_auth(secured, capsys, monkeypatch):
    monkeypatch.setenv("FABCORR_PASSWORD", SECRET)
    code = main(["topology", "link", "spine01:Ethernet1", "--server", secured.url,
                 "--ca-file", str(secured.tls[0]), "--user", USER, "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["peer"] == "leaf01:Ethernet5"  # the example fabric's cabling
    monkeypatch.setenv("FABCORR_PASSWORD", "wrong")
    code = main(["topology", "link", "spine01:Ethernet1", "--server", secured.url,
                 "--ca-file", str(secured.tls[0]), "--user", USER])
    assert code == 2
    assert "authentication required" in capsys.readouterr().err


@pytest.fixture
def cluster(tmp_path):
    """The example cluster's objects served by a Kubernetes API server on loopback."""
    service_facts = RunningService(tmp_path).facts
    with FakeKubeApi(cluster_objects(service_facts)) as api:
        yield api, service_facts


def _api(service, path):
    status, body = service.fetch(path)
    assert status == 200, (path, status, body)
    return json.loads(body)


def test_live_kubernetes_pods_appear_in_the_service_and_follow_changes(cluster, tmp_path):
    api, facts = cluster
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    live = {"source": "live", "kubeconfig": str(kubeconfig), "context": "fake",
            "refresh_s": 0.5}
    with RunningService(tmp_path, kubernetes=live) as service:
        summary = _api(service, "/api/v1/topology/summary")
        assert (summary["nodes"]["pod"], summary["nodes"]["pod-interface"],
                summary["nodes"]["job"], summary["nodes"]["tenant"]) == (
            len(facts.pods), len(facts.pod_interfaces), len(facts.jobs), len(facts.tenants))
        for tenant in facts.tenants:
            found = _api(service, f"/api/v1/topology/tenant?name={tenant.name}")
            assert found["pods"] == sorted(f"{p.namespace}/{p.name}" for p in facts.pods
                                           if p.tenant == tenant.name)
            assert found["jobs"] == sorted(f"{j.namespace}/{j.name}" for j in facts.jobs
                                           if j.tenant == tenant.name)
        (interface,) = [i for i in facts.pod_interfaces
                        if (i.pod, i.interface) == ("bert-large-worker-3", "net1")]
        ip = interface.ipv4.split("/")[0]
        (owner,) = _api(service, f"/api/v1/topology/where?q={ip}")
        assert (owner["pod"], owner["interface"]) == ("team-b/bert-large-worker-3", "net1")
        before = time.time()
        (pod,) = [o for o in cluster_objects(facts) if o["kind"] == "Pod"
                  and o["metadata"]["name"] == "bert-large-worker-3"]
        api.apply("DELETED", pod)
        # the pod is gone from the API server: its IP has no owner now, but had one before
        service.wait_for(lambda: service.fetch(f"/api/v1/topology/where?q={ip}")[0] == 404, 60,
                         "following the API server")
        (then,) = _api(service, f"/api/v1/topology/where?q={ip}&at={before:.3f}")
        assert then == {**owner, "valid_until": then["valid_until"]}  # ended since, at:
        assert owner["valid_until"] is None and before <= then["valid_until"] <= time.time()
        assert service.stop() == 0


# What enters spine01:Ethernet1 from leaf01:Ethernet5, per datagram: samples of three jobs.
# Jobs by share: bert-large 0.40, llm-pretrain 0.35, eval 0.25: two make half the bytes.
# Tenants: team-a 0.60 (llm-pretrain and eval), team-b 0.40.
SENDERS = (("10.101.0.6", "10.101.0.7", 40), ("10.101.0.2", "10.101.0.3", 35),
           ("10.101.0.10", "10.101.0.11", 25))
HOT = ("port:leaf01/Ethernet5", "out")  # hot anyway: the emulated switches pause it 1000/s


class Sender:
    """Datagrams of spine01's agent with every sample of :data:`SENDERS`, numbered in turn."""

    def __init__(self, facts):
        (spine,) = [s for s in facts.switches if s.name == "spine01"]
        (port,) = [i for i in facts.interfaces if (i.switch, i.name) == ("spine01", "Ethernet1")]
        self.agent, self.ifindex = spine.sflow_agent, port.ifindex
        self.datagrams = self.samples = 0

    def next(self):
        samples = []
        for src, dst, count in SENDERS:
            frame = roce.frame(bytes(6), bytes(6), ipaddress.ip_address(src).packed,
                               ipaddress.ip_address(dst).packed,
                               roce.payload(roce.WRITE_ONLY, 7, 1, 4000))
            for _ in range(count):
                self.samples += 1
                samples.append(sflow_wire.FlowSample(
                    self.samples, self.ifindex, 1000, 1000 * self.samples, 0,
                    sflow_wire.ifindex(self.ifindex), sflow_wire.UNKNOWN, frame[:128],
                    len(frame) + 4))
        self.datagrams += 1
        return sflow_wire.Datagram(self.agent, 0, self.datagrams, 1000 * self.datagrams,
                                   samples).encode()


def _judged(service):
    """The hot direction's hotspot as the service reports it once it has seen samples of
    its traffic: datagrams keep coming, so every interval holds whole ones (the same
    shares); None until then."""
    status, body = service.fetch("/api/v1/hotspots")
    if status != 200:
        return None
    found = [h for h in json.loads(body) if (h["port"], h["direction"]) == HOT and h["culprits"]]
    return found[0] if found else None


def _hotspot_with(tmp_path, **thresholds):
    attribution = {"interval_s": 1.0, "log": str(tmp_path / "attribution.jsonl"),
                   "thresholds": thresholds}
    with RunningService(tmp_path, attribution=attribution) as service:
        sender = Sender(service.facts)
        found = None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            deadline = time.monotonic() + 90
            while found is None:
                assert time.monotonic() < deadline, "no hotspot with culprits in 90 s"
                udp.sendto(sender.next(), ("127.0.0.1", service.sflow_port))
                time.sleep(0.2)
                found = _judged(service)
        assert service.stop() == 0
    return found


def _names(shares):
    return [s["name"] for s in shares]


up, down = (lambda x: math.nextafter(x, 1)), (lambda x: math.nextafter(x, 0))


@pytest.mark.parametrize(("thresholds", "culprit_jobs", "noisy"), [
    # culprits: the fewest top senders making half the bytes, but no more than `culprits`
    ({"culprits": 1, "dominance": 0.6, "neighbour_share": 0.4}, 1, True),
    ({"culprits": 2, "dominance": up(0.6), "neighbour_share": 0.4}, 2, False),
    ({"culprits": 3, "dominance": down(0.6), "neighbour_share": up(0.4)}, 2, False),
    ({"culprits": 2, "dominance": down(0.6), "neighbour_share": down(0.4)}, 2, True),
])
def test_hotspot_keys_of_the_config_file_split_culprits_and_name_the_noisy_neighbour(
        tmp_path, thresholds, culprit_jobs, noisy):
    hot = _hotspot_with(tmp_path, **thresholds)
    jobs = ["job:team-b/bert-large", "job:team-a/llm-pretrain", "job:team-a/eval"]
    assert _names(hot["culprit_jobs"]) == jobs[:culprit_jobs]
    assert _names(hot["victim_jobs"]) == jobs[culprit_jobs:]
    assert [(s["name"], s["share"]) for s in hot["culprits"]] == [("tenant:team-a", 0.6)]
    assert [(s["name"], s["share"]) for s in hot["victims"]] == [("tenant:team-b", 0.4)]
    if noisy:
        assert re.fullmatch(r"team-a sends 60% \(\d+%-\d+%\) of a link that "
                            r"team-b also use", hot["noisy_neighbour"])
    else:
        assert hot["noisy_neighbour"] == ""


def test_a_bad_hotspot_key_stops_the_service_at_the_start(tmp_path, capsys):
    config = tmp_path / "fabcorr.yaml"
    snapshot = tmp_path / "topology.json"
    snapshot.write_text("{}")
    config.write_text(f"topology: {{snapshot: {snapshot}}}\n"
                      "attribution: {thresholds: {culprits: 0}}\n")
    assert main(["run", "--config", str(config), "--check"]) == 2
    assert capsys.readouterr().err == (f"fabcorr: {config}: attribution.thresholds.culprits: "
                                       "Input should be greater than or equal to 1\n")
