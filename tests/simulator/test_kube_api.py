"""The fake Kubernetes API server, driven over HTTP by the official kubernetes client."""

import http.client
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlsplit
from urllib.request import urlopen

import pytest
import urllib3
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from simulator.kube_api import FakeKubeApi

SE = ("spiderpool.spidernet.io", "v2beta1")


def _obj(api_version: str, kind: str, name: str, namespace: str | None = None,
         **fields: object) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def _pod(namespace: str, name: str, **labels: str) -> dict:
    pod = _obj("v1", "Pod", name, namespace,
               spec={"nodeName": "gpu01", "containers": [{"name": "main"}]})
    if labels:
        pod["metadata"]["labels"] = labels
    return pod


CLUSTER = [
    _obj("v1", "Node", "gpu02"), _obj("v1", "Node", "gpu01"),
    _obj("v1", "Namespace", "team-a"), _obj("v1", "Namespace", "team-b"),
    _pod("team-b", "bert-1"), _pod("team-a", "llm-worker-1"), _pod("team-b", "bert-0"),
    _pod("team-a", "llm-worker-0"), _pod("team-b", "bert-2"),
    _obj("spiderpool.spidernet.io/v2beta1", "SpiderEndpoint", "llm-worker-0", "team-a",
         status={"current": {"node": "gpu01", "ips": [{"interface": "net1"}]}}),
    _obj("spiderpool.spidernet.io/v2beta1", "SpiderEndpoint", "bert-0", "team-b"),
    _obj("spiderpool.spidernet.io/v2beta1", "SpiderIPPool", "rail1"),
    _obj("apps/v1", "StatefulSet", "bert", "team-b", spec={"replicas": 3, "selector": {},
                                                           "template": {}, "serviceName": "bert"}),
    _obj("kubeflow.org/v1", "PyTorchJob", "llm", "team-a", spec={"nprocPerNode": "8"}),
    _obj("batch/v1", "Job", "llm-init", "team-a", spec={"template": {}}),
]
"""15 objects: resourceVersions 1..15 in this order."""


@pytest.fixture
def api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi(CLUSTER) as server:
        yield server


@pytest.fixture
def api_client(api: FakeKubeApi) -> Iterator[client.ApiClient]:
    with client.ApiClient(client.Configuration(host=api.url)) as c:
        yield c


def _names(items: list) -> list[str]:
    return [f"{i.metadata.namespace}/{i.metadata.name}" for i in items]


def test_pods_list_page_by_page_with_the_first_pages_resource_version(api, api_client):
    v1 = client.CoreV1Api(api_client)
    api.apply("MODIFIED", _pod("team-a", "llm-worker-0", app="llm"))  # rv 16
    pages, token = [], None
    while True:
        page = v1.list_pod_for_all_namespaces(limit=2, _continue=token)
        pages.append((page.metadata.resource_version, _names(page.items)))
        token = page.metadata._continue
        if token is None:
            break
        api.apply("MODIFIED", _obj("v1", "Node", "gpu01"))  # moves the current RV on
    assert pages == [("16", ["team-a/llm-worker-0", "team-a/llm-worker-1"]),
                     ("16", ["team-b/bert-0", "team-b/bert-1"]),
                     ("16", ["team-b/bert-2"])]
    assert api.requests["list", "pods"] == 3
    whole = v1.list_namespaced_pod("team-a")
    assert (whole.metadata.resource_version, whole.metadata._continue) == ("18", None)
    assert [(p.metadata.name, p.metadata.resource_version, p.metadata.labels)
            for p in whole.items] == [("llm-worker-0", "16", {"app": "llm"}),
                                      ("llm-worker-1", "6", None)]


def test_a_continue_token_older_than_the_compaction_is_expired(api, api_client):
    v1 = client.CoreV1Api(api_client)
    token = v1.list_node(limit=1).metadata._continue
    api.apply("MODIFIED", _obj("v1", "Node", "gpu01"))
    api.expire()
    with pytest.raises(ApiException) as err:
        v1.list_node(limit=1, _continue=token)
    assert err.value.status == 410
    assert json.loads(err.value.body)["reason"] == "Expired"


def test_custom_objects_list_cluster_wide_and_by_namespace(api_client):
    custom = client.CustomObjectsApi(api_client)
    every = custom.list_cluster_custom_object(*SE, "spiderendpoints")
    assert (every["apiVersion"], every["kind"], every["metadata"]) == (
        "spiderpool.spidernet.io/v2beta1", "SpiderEndpointList", {"resourceVersion": "15"})
    assert [(o["metadata"]["namespace"], o["metadata"]["name"], o["metadata"]["resourceVersion"])
            for o in every["items"]] == [("team-a", "llm-worker-0", "10"),
                                         ("team-b", "bert-0", "11")]
    team_a = custom.list_namespaced_custom_object(*SE, "team-a", "spiderendpoints")
    assert team_a["items"] == [CLUSTER[9] | {"metadata": {
        "name": "llm-worker-0", "namespace": "team-a", "resourceVersion": "10"}}]
    pools = custom.list_cluster_custom_object(*SE, "spiderippools")
    assert [o["metadata"]["name"] for o in pools["items"]] == ["rail1"]


def test_owner_objects_are_read_one_by_one(api_client):
    sts = client.AppsV1Api(api_client).read_namespaced_stateful_set("bert", "team-b")
    assert (sts.metadata.name, sts.metadata.resource_version, sts.spec.replicas) == (
        "bert", "13", 3)
    job = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        "kubeflow.org", "v1", "team-a", "pytorchjobs", "llm")
    assert job == CLUSTER[13] | {"metadata": {"name": "llm", "namespace": "team-a",
                                              "resourceVersion": "14"}}
    batch = client.BatchV1Api(api_client)
    assert batch.read_namespaced_job("llm-init", "team-a").metadata.resource_version == "15"
    with pytest.raises(ApiException) as err:
        batch.read_namespaced_job("llm-init", "team-b")
    assert err.value.status == 404
    assert json.loads(err.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'jobs.batch "llm-init" not found', "reason": "NotFound", "code": 404}


def test_kubeconfig_loads_into_a_fresh_configuration(api, tmp_path: Path):
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(api.kubeconfig(tmp_path / "config")),
                            client_configuration=cfg)
    assert cfg.host == api.url
    with client.ApiClient(cfg) as c:
        v1 = client.CoreV1Api(c)
        assert [n.metadata.name for n in v1.list_node().items] == ["gpu01", "gpu02"]
        assert v1.read_namespace("team-b").metadata.resource_version == "4"
    assert api.requests == {("list", "nodes"): 1, ("get", "namespaces"): 1}


def test_watch_replays_then_streams_changes_and_bookmarks(api, api_client):
    v1 = client.CoreV1Api(api_client)
    rv = v1.list_pod_for_all_namespaces().metadata.resource_version
    api.apply("ADDED", _pod("team-a", "llm-worker-2"))  # before the watch: replayed

    def change() -> None:
        assert api.wait_watching("pods")
        api.apply("MODIFIED", _pod("team-a", "llm-worker-2", app="llm"))
        api.apply("MODIFIED", _obj("v1", "Node", "gpu01"))  # another resource: not seen
        api.apply("DELETED", _obj("v1", "Pod", "bert-1", "team-b"))
        api.bookmark("pods")

    w = watch.Watch()
    with ThreadPoolExecutor(1) as pool:
        changed = pool.submit(change)
        events = list(w.stream(v1.list_pod_for_all_namespaces, resource_version=rv,
                               allow_watch_bookmarks=True, timeout_seconds=1))
        changed.result()
    assert [(e["type"], e["raw_object"]["metadata"].get("name"),
             e["raw_object"]["metadata"]["resourceVersion"]) for e in events] == [
        ("ADDED", "llm-worker-2", "16"), ("MODIFIED", "llm-worker-2", "17"),
        ("DELETED", "bert-1", "19"), ("BOOKMARK", None, "19")]
    assert events[1]["object"].metadata.labels == {"app": "llm"}  # a V1Pod
    assert events[2]["object"].spec.node_name == "gpu01"  # the last state
    # BOOKMARK: the raw dict, not deserialized; Watch keeps its RV for the next request.
    assert events[3]["object"] == {"kind": "Pod", "apiVersion": "v1",
                                   "metadata": {"resourceVersion": "19"}}
    assert w.resource_version == "19"
    # The stream ended cleanly after timeoutSeconds; with timeout_seconds the client returns
    # instead of watching again.
    assert api.requests["watch", "pods"] == 1


def test_watch_without_resource_version_starts_with_the_current_state(api, api_client):
    custom = client.CustomObjectsApi(api_client)
    stream = watch.Watch().stream(custom.list_namespaced_custom_object, *SE, "team-a",
                                  "spiderendpoints")
    first = next(stream)
    api.apply("MODIFIED", _obj(f"{SE[0]}/{SE[1]}", "SpiderEndpoint", "bert-0", "team-b"))
    api.apply("DELETED", _obj(f"{SE[0]}/{SE[1]}", "SpiderEndpoint", "llm-worker-0", "team-a"))
    second = next(stream)
    stream.close()
    assert [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["namespace"],
             e["object"]["metadata"]["resourceVersion"]) for e in (first, second)] == [
        ("ADDED", "llm-worker-0", "team-a", "10"), ("DELETED", "llm-worker-0", "team-a", "17")]


def test_an_expired_watch_raises_410_and_retries_once_without_timeout(api, api_client):
    v1 = client.CoreV1Api(api_client)
    rv = v1.list_pod_for_all_namespaces().metadata.resource_version
    api.apply("DELETED", _obj("v1", "Pod", "bert-0", "team-b"))
    api.expire()
    # With timeout_seconds, the ERROR event becomes ApiException(status=410) at once.
    with pytest.raises(ApiException) as err:
        list(watch.Watch().stream(v1.list_pod_for_all_namespaces, resource_version=rv,
                                  timeout_seconds=2))
    assert (err.value.status, err.value.reason) == (
        410, "Expired: too old resource version: 15 (16)")
    assert api.requests["watch", "pods"] == 1
    # Without it, the client silently watches once more from the same RV, then raises.
    with pytest.raises(ApiException) as err:
        list(watch.Watch().stream(v1.list_pod_for_all_namespaces, resource_version=rv))
    assert err.value.status == 410
    assert api.requests["watch", "pods"] == 3


def test_the_expired_watch_is_one_error_event_in_a_complete_chunked_stream(api):
    api.apply("MODIFIED", _obj("v1", "Node", "gpu01"))
    api.expire()
    conn = http.client.HTTPConnection(urlsplit(api.url).netloc, timeout=5)
    conn.request("GET", "/api/v1/nodes?watch=1&resourceVersion=3")
    resp = conn.getresponse()
    assert (resp.status, resp.getheader("Transfer-Encoding")) == (200, "chunked")
    assert resp.read().decode().splitlines() == [json.dumps({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 3 (16)", "reason": "Expired", "code": 410}})]
    conn.close()


def test_a_dropped_watch_raises_protocol_error_in_the_client(api, api_client):
    v1 = client.CoreV1Api(api_client)
    rv = v1.list_pod_for_all_namespaces().metadata.resource_version
    api.apply("ADDED", _pod("team-a", "llm-worker-2"))
    stream = watch.Watch().stream(v1.list_pod_for_all_namespaces, resource_version=rv)
    assert next(stream)["object"].metadata.name == "llm-worker-2"
    assert api.drop_watches() == 1
    # No terminating chunk: urllib3 raises, Watch does not retry (even without timeout_seconds).
    with pytest.raises(urllib3.exceptions.ProtocolError, match="Response ended prematurely"):
        next(stream)
    assert (api.requests["list", "pods"], api.requests["watch", "pods"]) == (1, 1)


def test_stop_cuts_open_watches_and_joins(api, api_client):
    custom = client.CustomObjectsApi(api_client)
    stream = watch.Watch().stream(custom.list_cluster_custom_object, *SE, "spiderippools")
    assert next(stream)["object"]["metadata"]["name"] == "rail1"  # the only pool
    api.stop()
    with pytest.raises(urllib3.exceptions.ProtocolError, match="Response ended prematurely"):
        next(stream)
    with pytest.raises(RuntimeError, match="not started"):
        _ = api.url


def test_forbidden_resources_and_objects_answer_403(api, api_client):
    v1, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    api.forbid("", "pods")
    api.forbid("apps", "statefulsets", "bert")
    with pytest.raises(ApiException) as err:
        v1.list_pod_for_all_namespaces()
    assert err.value.status == 403
    assert json.loads(err.value.body)["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group ""'
        " at the cluster scope")
    with pytest.raises(ApiException) as err:
        next(watch.Watch().stream(v1.list_namespaced_pod, "team-a", timeout_seconds=1))
    assert err.value.status == 403
    with pytest.raises(ApiException) as err:
        apps.read_namespaced_stateful_set("bert", "team-b")
    assert err.value.status == 403
    assert json.loads(err.value.body)["message"] == (
        'statefulsets.apps "bert" is forbidden: User "system:anonymous" cannot get resource'
        ' "statefulsets" in API group "apps" in the namespace "team-b"')
    assert _names(apps.list_namespaced_stateful_set("team-b").items) == ["team-b/bert"]
    assert [n.metadata.name for n in v1.list_node().items] == ["gpu01", "gpu02"]
    assert api.requests == {("list", "pods"): 1, ("watch", "pods"): 1,
                            ("get", "statefulsets.apps"): 1, ("list", "statefulsets.apps"): 1,
                            ("list", "nodes"): 1}


@pytest.mark.parametrize(("path", "code", "message"), [
    ("/api/v1/secrets", 404, "the server could not find the requested resource"),
    ("/apis/apps/v1/namespaces/team-a/nodes", 404,
     "the server could not find the requested resource"),
    ("/api/v1/pods/bert-0", 404, "the server could not find the requested resource"),
    ("/api/v1/pods?limit=many", 400, "invalid limit"),
    ("/api/v1/pods?continue=garbage", 400, "invalid continue"),
    ("/api/v1/namespaces/team-a/pods/x?watch=true", 400,
     "watch the collection with a metadata.name fieldSelector instead"),
])
def test_bad_requests_answer_a_status_and_the_server_keeps_serving(api, path, code, message):
    with pytest.raises(HTTPError) as err:
        urlopen(api.url + path, timeout=5)
    assert err.value.code == code
    status = json.loads(err.value.read())
    assert (status["kind"], status["code"], status["message"]) == ("Status", code, message)
    with urlopen(api.url + "/api/v1/nodes/gpu01", timeout=5) as resp:
        assert json.loads(resp.read())["metadata"] == {"name": "gpu01", "resourceVersion": "2"}


def test_objects_of_unknown_kinds_or_without_their_scope_are_refused():
    with pytest.raises(ValueError, match="no resource serves v1 Secret"):
        FakeKubeApi([_obj("v1", "Secret", "token", "team-a")])
    with pytest.raises(ValueError, match=r"a Pod needs metadata\.name and metadata\.namespace"):
        FakeKubeApi([_obj("v1", "Pod", "orphan")])
    with pytest.raises(ValueError, match=r"a Node needs metadata\.name and no namespace"):
        FakeKubeApi([_obj("v1", "Node", "gpu01", "team-a")])
    api = FakeKubeApi(CLUSTER[:1])
    with pytest.raises(ValueError, match=r"cannot apply ADDED to Node gpu02 \(stored\)"):
        api.apply("ADDED", CLUSTER[0])
    with pytest.raises(ValueError, match=r"cannot apply DELETED to Node gpu01 \(absent\)"):
        api.apply("DELETED", CLUSTER[1])
