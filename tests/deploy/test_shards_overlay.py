"""deploy/overlays/shards (issue 17) as Debian's kubectl 1.20 renders it: the operator
variant with the single process replaced by a StatefulSet of shards behind inlets, every
object valid (Kubernetes OpenAPI, the operator's CRD schemas), the shard count the same in
its three places, the shards' pod the base's but for ``--shard auto``, the inlet's
arguments what ``fabcorr inlet`` parses, and the configuration the base's with the shards'
keys."""

from __future__ import annotations

import ipaddress
import re
import subprocess

import kubernetes_validate
import pytest
import yaml

from correlator import _wire
from correlator.cli.inlet import targets_of
from correlator.cli.main import build_parser
from correlator.service.config import service_config_from
from tests.correlator.service import prometheus
from tests.deploy.test_overlays import (
    CORE,
    CRD_SCHEMAS,
    DEPLOY,
    KUBERNETES_VERSIONS,
    OPERATOR,
    _crd_validator,
    _one,
    _render,
)

SHARDS = DEPLOY / "overlays" / "shards"
OBJECTS = (CORE - {("Deployment", "fabcorr")}) | OPERATOR | {
    ("StatefulSet", "fabcorr-shard"), ("Service", "fabcorr-shard"),
    ("NetworkPolicy", "fabcorr-shard"), ("PodDisruptionBudget", "fabcorr-shard"),
    ("Deployment", "fabcorr-inlet"), ("Service", "fabcorr-inlet"),
    ("PodDisruptionBudget", "fabcorr-inlet"), ("ServiceMonitor", "fabcorr-inlet"),
    ("PrometheusRule", "fabcorr-inlet")}


def _config(objects) -> dict:
    return yaml.safe_load(_one(objects, "ConfigMap", "fabcorr-config")["data"]["fabcorr.yaml"])


def _container(workload: dict) -> dict:
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    return container


def _matches(selector: dict, labels: dict) -> bool:
    return selector.items() <= labels.items()


def test_objects():
    objects = _render(SHARDS)
    assert {(o["kind"], o["metadata"]["name"]) for o in objects} == OBJECTS
    for o in objects:
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert o["metadata"]["namespace"] == "fabcorr", o["kind"]


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_match_the_kubernetes_openapi_schemas(version):
    for o in _render(SHARDS):
        if o["kind"] not in CRD_SCHEMAS:
            kubernetes_validate.validate(o, version, strict=True)


def test_operator_objects_match_the_crd_schemas():
    for o in _render(SHARDS):
        if o["kind"] in CRD_SCHEMAS:
            _crd_validator(o["kind"]).validate(o)
            assert o["metadata"]["labels"]["release"] == "prometheus"


def test_promtool_checks_the_inlets_rules(tmp_path):
    rule = _one(_render(SHARDS), "PrometheusRule", "fabcorr-inlet")
    rules = tmp_path / "inlet-rules.yml"
    rules.write_text(yaml.safe_dump(rule["spec"]))
    result = subprocess.run([prometheus.binary(prometheus.PROMTOOL), "check", "rules",
                             str(rules)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 2 rules found" in result.stdout
    names = {m for r in rule["spec"]["groups"][0]["rules"]
             for m in re.findall(r"fabcorr_\w+", r["expr"])}
    assert names == {"fabcorr_inlet_dropped_datagrams_total"}
    reasons = {reason for r in rule["spec"]["groups"][0]["rules"]
               for reason in re.search(r'reason=~"([^"]+)"', r["expr"])[1].split("|")}
    assert reasons == set(_wire.DROPS)  # every drop reason is alerted on


def test_three_shards_behind_two_inlets_that_find_them_by_dns():
    objects = _render(SHARDS)
    shards = _one(objects, "StatefulSet", "fabcorr-shard")
    headless = _one(objects, "Service", "fabcorr-shard")
    inlet = _one(objects, "Deployment", "fabcorr-inlet")
    assert shards["spec"]["replicas"] == 3 == _config(objects)["shards"]["count"]
    assert shards["spec"]["serviceName"] == "fabcorr-shard"
    assert headless["spec"]["clusterIP"] == "None"
    pod_labels = shards["spec"]["template"]["metadata"]["labels"]
    assert _matches(headless["spec"]["selector"], pod_labels)
    assert inlet["spec"]["replicas"] >= 2
    args = build_parser().parse_args(_container(inlet)["args"])
    assert args.command == "inlet" and args.shards == 3
    assert targets_of(args, _listening(objects)) == [
        (f"fabcorr-shard-{i}.fabcorr-shard", 6343) for i in range(3)]  # the pods' DNS names
    inlet_labels = inlet["spec"]["template"]["metadata"]["labels"]
    sflow = _one(objects, "Service", "fabcorr-sflow")
    assert _matches(sflow["spec"]["selector"], inlet_labels)  # the switches reach the inlets
    assert not _matches(sflow["spec"]["selector"], pod_labels)
    assert sflow["spec"]["externalTrafficPolicy"] == "Local"  # the switch's own source
    # the ServiceMonitor scrapes every shard through the Service fabcorr
    assert _matches(_one(objects, "Service", "fabcorr")["spec"]["selector"], pod_labels)
    assert _matches(_one(objects, "Service", "fabcorr-inlet")["spec"]["selector"], inlet_labels)
    for name, labels in (("fabcorr-shard", pod_labels), ("fabcorr-inlet", inlet_labels)):
        budget = _one(objects, "PodDisruptionBudget", name)
        assert _matches(budget["spec"]["selector"]["matchLabels"], labels)
    assert _one(objects, "PodDisruptionBudget", "fabcorr-inlet")["spec"]["minAvailable"] == 1


def test_only_the_inlets_send_the_shards_sflow():
    objects = _render(SHARDS)
    policy = _one(objects, "NetworkPolicy", "fabcorr-shard")["spec"]
    pod_labels = _one(objects, "StatefulSet", "fabcorr-shard")["spec"]["template"]["metadata"][
        "labels"]
    inlet_labels = _one(objects, "Deployment", "fabcorr-inlet")["spec"]["template"][
        "metadata"]["labels"]
    assert _matches(policy["podSelector"]["matchLabels"], pod_labels)
    sflow, http = policy["ingress"]
    assert sflow["ports"] == [{"protocol": "UDP", "port": 6343}]
    (source,) = sflow["from"]
    assert _matches(source["podSelector"]["matchLabels"], inlet_labels)
    assert http == {"ports": [{"protocol": "TCP", "port": 9460}]}


def test_the_shards_pod_is_the_base_one_with_shard_auto():
    shards = _one(_render(SHARDS), "StatefulSet", "fabcorr-shard")["spec"]["template"]
    single = _one(_render(DEPLOY / "overlays" / "operator"), "Deployment", "fabcorr")[
        "spec"]["template"]
    container = shards["spec"]["containers"][0]
    assert container["args"] == [*single["spec"]["containers"][0]["args"], "--shard", "auto"]
    container["args"] = single["spec"]["containers"][0]["args"]
    assert shards == single


def _listening(objects):
    """The whole configuration, validated as the service does."""
    return service_config_from(_config(objects), "overlays/shards/config.yaml", {})


def test_the_configuration_is_the_base_one_with_the_shards_keys():
    objects = _render(SHARDS)
    document = _config(objects)
    base = _config(_render(DEPLOY / "overlays" / "operator"))
    relays = document["sflow"].pop("relays")
    assert document.pop("shards") == {"count": 3}
    assert document == base
    assert [ipaddress.ip_network(r).prefixlen for r in relays] == [16]  # the pod network
    config = _listening(objects)
    assert config.sflow.relays == tuple(relays)
    assert config.shards == 3
    ports = {p["name"]: p["containerPort"] for p in _container(
        _one(objects, "StatefulSet", "fabcorr-shard"))["ports"]}
    assert (config.sflow.port, config.http.address[1]) == (ports["sflow"], ports["http"])
