"""``fabcorr run`` through its configuration file: TLS and basic auth on the metrics and
the API, Kubernetes followed live from an API server, and the hotspot keys ``culprits``,
``dominance`` and ``neighbour_share`` (see :mod:`tests.correlator.service.running`)."""

import base64
import http.client
import json
import ssl
import time
import urllib.error
import urllib.request

import pytest

from correlator.cli.main import main
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects
from tests.correlator.service.certs import self_signed
from tests.correlator.service.running import RunningService

USER, SECRET = "prom", "s3cret:pw"


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = self_signed(folder)
    with RunningService(folder, tls=(cert, key), auth=(USER, SECRET)) as service:
        yield service


def _fetch(url, context=None, auth=None):
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization",
                           "Basic " + base64.b64encode(":".join(auth).encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


def test_metrics_over_https_verified_against_the_configured_certificate(secured):
    trusting = ssl.create_default_context(cafile=str(secured.tls[0]))
    status, body = _fetch(f"{secured.url}/metrics", trusting, (USER, SECRET))
    assert status == 200
    assert "\nfabcorr_ready 1.0\n" in body.decode()
    assert _fetch(f"{secured.url}/readyz", trusting) == (200, b"ready\n")  # probes: no auth


@pytest.mark.parametrize("auth", [None, (USER, "wrong"), ("prometheus", SECRET)])
def test_metrics_and_api_need_the_configured_user_and_password(secured, auth):
    trusting = ssl.create_default_context(cafile=str(secured.tls[0]))
    for path in ("/metrics", "/api/v1/status"):
        status, body = _fetch(secured.url + path, trusting, auth)
        assert (status, json.loads(body)) == (401, {"error": "authentication required"})


def test_a_client_that_does_not_trust_the_certificate_is_refused(secured):
    with pytest.raises(urllib.error.URLError) as refused:
        _fetch(f"{secured.url}/healthz", ssl.create_default_context())
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
    status, body = service.get(path)
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
        service.wait_for(lambda: service.get(f"/api/v1/topology/where?q={ip}")[0] == 404, 60,
                         "following the API server")
        assert _api(service, f"/api/v1/topology/where?q={ip}&at={before:.3f}") == [owner]
        assert service.stop() == 0
