"""deploy/'s kustomize variants as Debian's kubectl 1.20 (kustomize v2.0.3) renders them:
the objects each variant holds, the resources by fabric size, every core object valid
against the Kubernetes OpenAPI schemas (kubernetes-validate), the ServiceMonitor and
PrometheusRule against the Prometheus Operator CRDs' schemas (schemas/, their source in
each file), the `release` label, the dashboards ConfigMap for Grafana's sidecar, a
runbook section for every alert, and the Secret's keys documented."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import Version, all_versions, latest_version

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
KUBECTL = ROOT / "build" / "kubernetes-client" / "usr" / "bin" / "kubectl"  # make test
SCHEMAS = Path(__file__).parent / "schemas"
RUNBOOKS = ROOT / "docs" / "runbooks.md"
RUNBOOK_URL = "https://github.com/fabcorr/fabcorr/blob/main/docs/runbooks.md#"
# Kubernetes releases whose OpenAPI schemas every core object must satisfy: the oldest and
# the newest that kubernetes-validate ships (1.25 and 1.37 with 1.37.0).
KUBERNETES_VERSIONS = (min(all_versions(), key=Version), latest_version())

CORE = {("ServiceAccount", "fabcorr"), ("ClusterRole", "fabcorr-inventory"),
        ("ClusterRoleBinding", "fabcorr-inventory"), ("ConfigMap", "fabcorr-config"),
        ("ConfigMap", "fabcorr-dashboards"), ("Service", "fabcorr"),
        ("Service", "fabcorr-sflow"), ("Deployment", "fabcorr")}
OPERATOR = {("ServiceMonitor", "fabcorr"), ("PrometheusRule", "fabcorr")}
MEDIUM = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}
VARIANTS = {  # overlay -> (objects, the container's resources)
    "plain": (CORE, MEDIUM),
    "operator": (CORE | OPERATOR, MEDIUM),
    "small": (CORE | OPERATOR, {"requests": {"cpu": "500m", "memory": "512Mi"},
                                "limits": {"memory": "2Gi"}}),
    "medium": (CORE | OPERATOR, MEDIUM),
    "large": (CORE | OPERATOR, {"requests": {"cpu": "2", "memory": "3Gi"},
                                "limits": {"memory": "12Gi"}}),
}
CRD_SCHEMAS = {"ServiceMonitor": "servicemonitor.v1.json",
               "PrometheusRule": "prometheusrule.v1.json"}


@cache
def _render(directory: Path) -> tuple[dict[str, Any], ...]:
    if not KUBECTL.exists():
        pytest.skip(f"no {KUBECTL.relative_to(ROOT)} (make test unpacks Debian's "
                    "kubernetes-client there)")
    done = subprocess.run([str(KUBECTL), "kustomize", str(directory)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


def _one(objects, kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objects if (o["kind"], o["metadata"]["name"]) == (kind, name)]
    return found


def test_kubectl_is_debians_1_20():
    if not KUBECTL.exists():
        pytest.skip(f"no {KUBECTL.relative_to(ROOT)}")
    done = subprocess.run([str(KUBECTL), "version", "--client", "--short"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.startswith("Client Version: v1.20."), done.stdout


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_objects_and_resources(variant):
    objects = _render(DEPLOY / "overlays" / variant)
    expected, resources = VARIANTS[variant]
    assert {(o["kind"], o["metadata"]["name"]) for o in objects} == expected
    for o in objects:
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert o["metadata"]["namespace"] == "fabcorr", o["kind"]
    deployment = _one(objects, "Deployment", "fabcorr")
    assert deployment["spec"]["replicas"] == 1  # one process: the sFlow collector
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == resources
    assert container["image"] == f"fabcorr:{_version()}"  # what make image tags


def test_deploy_root_is_the_medium_variant():
    assert _render(DEPLOY) == _render(DEPLOY / "overlays" / "medium")


def test_plain_variant_is_annotated_for_a_plain_prometheus():
    service = _one(_render(DEPLOY / "overlays" / "plain"), "Service", "fabcorr")
    assert service["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true", "prometheus.io/port": "9460",
        "prometheus.io/path": "/metrics"}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_core_objects_match_the_kubernetes_openapi_schemas(variant, version):
    core = [o for o in _render(DEPLOY / "overlays" / variant) if o["kind"] not in CRD_SCHEMAS]
    assert {(o["kind"], o["metadata"]["name"]) for o in core} == CORE
    for o in core:
        kubernetes_validate.validate(o, version, strict=True)


@pytest.mark.parametrize("variant", ["operator", "small", "medium", "large"])
def test_operator_objects_match_the_crd_schemas(variant):
    objects = _render(DEPLOY / "overlays" / variant)
    for kind in CRD_SCHEMAS:
        (found,) = [o for o in objects if o["kind"] == kind]
        _crd_validator(kind).validate(found)
        assert found["metadata"]["labels"]["release"] == "prometheus"


def test_the_validators_reject_what_the_api_server_would():
    """The checks can fail: an unknown field, a wrong type, a bad duration."""
    objects = _render(DEPLOY / "overlays" / "operator")
    deployment = copy.deepcopy(_one(objects, "Deployment", "fabcorr"))
    deployment["spec"]["replica"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)
    service = copy.deepcopy(_one(objects, "Service", "fabcorr"))
    service["spec"]["ports"][0]["port"] = "http"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(service, KUBERNETES_VERSIONS[-1], strict=True)
    monitor = copy.deepcopy(_one(objects, "ServiceMonitor", "fabcorr"))
    monitor["spec"]["endpoints"][0]["honorlabels"] = True
    rule = copy.deepcopy(_one(objects, "PrometheusRule", "fabcorr"))
    rule["spec"]["groups"][0]["rules"][0]["for"] = "3 minutes"
    for kind, bad in (("ServiceMonitor", monitor), ("PrometheusRule", rule)):
        with pytest.raises(jsonschema.ValidationError):
            _crd_validator(kind).validate(bad)


def test_crd_schemas_name_their_source():
    for name in CRD_SCHEMAS.values():
        schema = json.loads((SCHEMAS / name).read_text())
        assert re.fullmatch(r"https://github\.com/prometheus-operator/prometheus-operator/"
                            r"blob/[0-9a-f]{40}/example/prometheus-operator-crd/"
                            r"monitoring\.coreos\.com_\w+\.yaml", schema["x-source"])
        assert re.fullmatch(r"\d+\.\d+\.\d+", schema["x-operator-version"])


def test_dashboards_configmap_for_grafanas_sidecar():
    config_map = _one(_render(DEPLOY / "overlays" / "plain"), "ConfigMap",
                      "fabcorr-dashboards")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "fabcorr"}
    files = {p.name: p for p in (DEPLOY / "base" / "dashboards").glob("*.json")}
    assert set(config_map["data"]) == set(files)
    for name, path in files.items():
        assert json.loads(config_map["data"][name]) == json.loads(path.read_text())


def test_every_alert_has_a_runbook_section():
    rules = [o for o in _render(DEPLOY / "overlays" / "shards") if o["kind"] == "PrometheusRule"]
    assert {r["metadata"]["name"] for r in rules} == {"fabcorr", "fabcorr-inlet"}
    groups = [g for rule in rules for g in rule["spec"]["groups"]]
    alerts = [r["alert"] for g in groups for r in g["rules"]]
    sections = re.findall(r"^## (\S+)$", RUNBOOKS.read_text(), re.MULTILINE)
    assert sorted(sections) == sorted(alerts)  # one section each, none stale
    for group in groups:
        for r in group["rules"]:
            # GitHub's anchor of a heading that is one word: the word in lower case
            assert r["annotations"]["runbook_url"] == RUNBOOK_URL + r["alert"].lower()


def test_every_secret_key_is_documented():
    deployment = _one(_render(DEPLOY / "overlays" / "plain"), "Deployment", "fabcorr")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    refs = {e["valueFrom"]["secretKeyRef"]["key"]: e["name"] for e in container["env"]}
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("\n## Deployment"):]
    documented = dict(re.findall(r"^\| `([a-z0-9-]+)` \| `(FABCORR_\w+)` \|", section,
                                 re.MULTILINE))
    assert documented == refs


@cache
def _crd_validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMAS / CRD_SCHEMAS[kind]).read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
