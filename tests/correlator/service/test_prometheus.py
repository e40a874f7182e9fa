"""deploy/ against a real Prometheus: the manifests, the rules (promtool and a server), and
every PromQL expression of the Grafana dashboards.

``fabcorr run`` runs on the example fabric (six emulated gNMI switches, the example
cluster's Kubernetes dumps; :mod:`tests.correlator.service.running`) with 1 s intervals,
and gets what an operator would want alerts for: spine01:Ethernet1's receive counters
show 88 % of line rate while the example scenario's sFlow (team-a floods that link, which
team-b also needs) is sent to it on repeat, with 2 % of the datagrams left out (sequence
gaps) and 3 % malformed ones added; leaf04's gNMI target goes away. Every other port
counts traffic, PFC pauses, ECN marks and discards under the hotspot thresholds. A real
Prometheus (Debian's, on loopback) scrapes the service every second and evaluates
``deploy/rules.yml``; every dashboard query and every rule expression must return series,
and exactly the intended alerts must fire.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from correlator.service.config import service_config_from
from correlator.service.exporter import METRICS, Exposition
from simulator.gnmi_target import CounterSource
from simulator.sflow_run import capture
from simulator.spec import load_capture_spec
from tests.correlator.service import prometheus
from tests.correlator.service.example_view import make_capture, replayed
from tests.correlator.service.running import RunningService, udp_drops

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "rules.yml"
# the base and the Prometheus Operator overlay: every object of overlays/operator, whose
# rendering tests/deploy/test_overlays.py checks
MANIFESTS = (DEPLOY / "base", DEPLOY / "overlays" / "operator")
DASHBOARDS = sorted((DEPLOY / "base" / "dashboards").glob("*.json"))
EXAMPLE = ROOT / "examples" / "fabric-small"
DOWN = "leaf04"  # the switch whose gNMI target the fixture stops

# Values chosen for the dashboards' single-value variables (each must be among the values
# Prometheus has); multi-value variables with "All" get every value, as Grafana's default.
CHOSEN = {"tenant": "team-a", "namespace": "team-a", "job": "llm-pretrain",
          "pod": "llm-pretrain-worker-0", "node": "gpu01"}
# Grafana's interval macros as a dashboard over the last hour with a 15 s scrape interval
# would get them.
MACROS = {"__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000",
          "__range": "1h", "__range_s": "3600", "__range_ms": "3600000"}
# The alerts the fixture must raise (alert name, identifying labels), and no other.
EXPECTED_ALERTS = {
    ("FabcorrHotspotActive", (("direction", "out"), ("port", "Ethernet5"),
                              ("switch", "leaf01"))),
    ("FabcorrNoisyNeighbour", (("tenant", "team-a"),)),
    ("FabcorrCollectorDown", (("switch", DOWN),)),
    ("FabcorrSflowLoss", ()),
    ("FabcorrSflowRejects", (("reason", "bad-version"),)),
    ("FabcorrComponentDown", (("component", "discovery"),)),
}
ALERT_KEYS = {"FabcorrHotspotActive": ("direction", "port", "switch"),
              "FabcorrNoisyNeighbour": ("tenant",), "FabcorrCollectorDown": ("switch",),
              "FabcorrSflowLoss": (), "FabcorrSflowRejects": ("reason",),
              "FabcorrComponentDown": ("component",)}


def _manifests() -> dict[str, list[dict[str, Any]]]:
    """kind -> documents of the manifests of MANIFESTS (not kustomizations)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(p for d in MANIFESTS for p in d.glob("*.yaml")
                       if p.name != "kustomization.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            if document is not None:
                found.setdefault(document["kind"], []).append(document)
    return found


def _one(kind: str, name: str) -> dict[str, Any]:
    matches = [d for d in _manifests()[kind] if d["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def _rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"]
            for rule in group["rules"]]


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _targets(dashboard: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for panel in _panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            yield panel["title"], target


def _exprs() -> Iterator[tuple[str, str]]:
    """(where, PromQL) of every dashboard target, variable query and rule (with the
    queries inside the rules' annotation templates)."""
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text())
        for title, target in _targets(dashboard):
            yield f"{path.name}: {title}", target["expr"]
        for var in dashboard["templating"]["list"]:
            if var["type"] == "query":
                yield f"{path.name}: ${var['name']}", _var_query(var)
    for rule in _rules():
        yield f"rules.yml: {rule['alert']}", rule["expr"]
        for key, text in rule.get("annotations", {}).items():
            for query in re.findall(r'printf "([^"]*)"', text):
                yield f"rules.yml: {rule['alert']} {key}", query


def _var_query(var: dict[str, Any]) -> str:
    query = var["query"]
    return query["query"] if isinstance(query, dict) else query


# -- manifests -------------------------------------------------------------------------


def test_manifests_are_valid_and_fit_together():
    kinds = _manifests()
    for kind in ("Deployment", "Service", "ServiceMonitor", "ConfigMap", "PrometheusRule",
                 "ServiceAccount", "ClusterRole", "ClusterRoleBinding"):
        assert kind in kinds, f"deploy/ has no {kind}"
    deployment = _one("Deployment", "fabcorr")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert spec["replicas"] == 1 and spec["strategy"]["type"] == "Recreate"
    assert container["command"] + container["args"] == \
        ["fabcorr", "run", "--config", "/etc/fabcorr/fabcorr.yaml"]
    ports = {p["name"]: (p["containerPort"], p["protocol"]) for p in container["ports"]}
    assert ports == {"http": (9460, "TCP"), "sflow": (6343, "UDP")}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["serviceAccountName"] == _one("ServiceAccount", "fabcorr")["metadata"]["name"]
    for env in container["env"]:  # secrets only from the Secret, never inline
        assert "value" not in env and env["valueFrom"]["secretKeyRef"]["name"] == \
            "fabcorr-credentials", env
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    http, sflow = _one("Service", "fabcorr"), _one("Service", "fabcorr-sflow")
    for service, port, protocol in ((http, "http", "TCP"), (sflow, "sflow", "UDP")):
        assert service["spec"]["selector"].items() <= labels.items()
        (entry,) = service["spec"]["ports"]
        assert (entry["name"], entry["targetPort"], entry["protocol"]) == \
            (port, port, protocol)
    assert http["spec"]["type"] == "ClusterIP"
    monitor = _one("ServiceMonitor", "fabcorr")["spec"]
    assert monitor["selector"]["matchLabels"].items() <= http["metadata"]["labels"].items()
    assert not monitor["selector"]["matchLabels"].items() <= \
        sflow["metadata"]["labels"].items()
    (endpoint,) = monitor["endpoints"]
    assert endpoint["port"] == "http" and endpoint["path"] == "/metrics"
    assert endpoint["honorLabels"] is True  # the series' own job/namespace/pod labels
    config_map = _one("ConfigMap", "fabcorr-config")
    mounted = {v["name"]: v for v in pod["volumes"]}["config"]["configMap"]["name"]
    assert mounted == config_map["metadata"]["name"]


def test_configmap_is_a_valid_service_configuration(tmp_path):
    container = _one("Deployment", "fabcorr")["spec"]["template"]["spec"]["containers"][0]
    environ = {env["name"]: "from-the-secret" for env in container["env"]}
    ca = tmp_path / "ca.pem"  # mounted from the Secret fabcorr-tls in the pod
    ca.write_text("CA\n")
    document = yaml.safe_load(_one("ConfigMap", "fabcorr-config")["data"]["fabcorr.yaml"]
                              .replace("/etc/fabcorr/tls/ca.pem", str(ca)))
    config = service_config_from(document, "deploy/base/configmap.yaml", environ)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert config.http.address[1] == ports["http"]
    assert config.sflow.port == ports["sflow"]
    assert config.kubernetes.source == ("live",)
    interval = _one("ServiceMonitor", "fabcorr")["spec"]["endpoints"][0]["interval"]
    assert f"{config.interval_s:g}s" == interval  # one scrape per attribution interval


def test_prometheus_rule_and_rule_file_say_the_same():
    rule = _one("PrometheusRule", "fabcorr")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"] == yaml.safe_load(RULES.read_text())


def test_promtool_check_rules():
    promtool = prometheus.binary(prometheus.PROMTOOL)
    result = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def _check_metrics(exposition: bytes) -> None:
    """promtool's verdict on an exposition, which must not be empty: promtool passes
    empty input, so an empty body (a service that answered nothing) would pass too."""
    assert exposition.strip(), "empty exposition: nothing for promtool to check"
    promtool = prometheus.binary(prometheus.PROMTOOL)
    result = subprocess.run([promtool, "check", "metrics"], input=exposition,
                            capture_output=True, timeout=60)
    assert result.returncode == 0, (result.stdout + result.stderr).decode()


def test_promtool_check_metrics(tmp_path):
    view = replayed(make_capture(tmp_path))  # the example scenario, replayed
    exposition = Exposition(lambda: view).render()
    assert b"fabcorr_hotspot_active{" in exposition  # its hotspot is in it
    _check_metrics(exposition)


def test_promtool_alone_passes_an_empty_exposition_and_the_check_does_not():
    promtool = prometheus.binary(prometheus.PROMTOOL)
    for empty in (b"", b"\n"):
        alone = subprocess.run([promtool, "check", "metrics"], input=empty,
                               capture_output=True, timeout=60)
        assert alone.returncode == 0, "promtool now fails empty input: simplify the check"
        with pytest.raises(AssertionError, match="empty exposition"):
            _check_metrics(empty)


def test_a_service_that_is_not_listening_is_an_error_not_an_empty_answer(tmp_path):
    stopped = RunningService(tmp_path)  # never entered: nothing listens on its port
    with pytest.raises(ConnectionRefusedError):
        stopped.fetch("/metrics")
    with pytest.raises(ConnectionRefusedError):
        stopped.get("/metrics")


# -- dashboards and rules, statically ---------------------------------------------------


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_is_grafana_json_with_a_datasource_variable(path):
    dashboard = json.loads(path.read_text())
    assert dashboard["uid"].startswith("fabcorr-") and dashboard["title"].startswith("fabcorr")
    assert "fabcorr" in dashboard["tags"]
    variables = dashboard["templating"]["list"]
    assert variables[0]["type"] == "datasource" and variables[0]["query"] == "prometheus"
    ids = [panel["id"] for panel in _panels(dashboard["panels"])]
    assert len(ids) == len(set(ids))
    for panel in _panels(dashboard["panels"]):
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}"
    for var in variables[1:]:
        assert var["datasource"]["uid"] == "${datasource}"
        assert re.fullmatch(r"label_values\(.+, *\w+\)", _var_query(var)), var["name"]


def test_dashboard_uids_are_unique_and_cover_the_drill_downs():
    uids = [json.loads(p.read_text())["uid"] for p in DASHBOARDS]
    assert sorted(uids) == ["fabcorr-job", "fabcorr-node-leaf", "fabcorr-overview",
                            "fabcorr-pod", "fabcorr-tenant"]
    linked = set()
    for path in DASHBOARDS:
        linked |= set(re.findall(r"/d/(fabcorr-[a-z-]+)", path.read_text()))
    assert linked <= set(uids)


def test_only_metrics_and_labels_of_the_exporter_are_used():
    used: set[str] = set()
    for where, expr in _exprs():
        for name in re.findall(r"\bfabcorr_[a-z0-9_]+", expr):
            assert name in METRICS, f"{where}: {name} is not in exporter.METRICS"
            used.add(name)
        for name, matchers in re.findall(r"\b(fabcorr_[a-z0-9_]+)\{([^}]*)\}", expr):
            for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
                assert label in METRICS[name][1], f"{where}: {name} has no label {label}"
    assert set(METRICS) - used == set(), "metrics no dashboard or rule shows"


# -- fabcorr run with a hot link, a lost switch and lossy sFlow ---------------------------


HOT = ("spine01", "Ethernet1")  # its receive counters show the flood
THRESHOLDS = {"discards_per_s": 10.0}
# The defaults otherwise. Integer discard counters read every second give either nothing
# or at least 1/s, the default threshold: the discard panels need some, but not a hotspot.


def _counters(switch: str, start: float) -> CounterSource:
    """One switch's counters from ``start``: 10-45 % of a 400G port's line rate in and out
    (88 % in on HOT), PFC pause frames and ECN marks on priority / queue 3, a few
    discards."""
    def counters(port: str, now: float) -> dict[str, int]:
        n = int("".join(ch for ch in port if ch.isdigit()) or 0)
        t = max(0.0, now - start)
        util_in = 0.88 if (switch, port) == HOT else 0.10 + 0.05 * (n % 8)
        util_out = 0.10 + 0.04 * (n % 8)
        octets_in, octets_out = int(t * util_in * 50e9), int(t * util_out * 50e9)
        values = {"in_octets": octets_in, "out_octets": octets_out,
                  "in_pkts": octets_in // 4096, "out_pkts": octets_out // 4096,
                  "in_discards": int(t * 3), "out_discards": int(t * 2), "in_errors": 0,
                  "out_errors": 0}
        for p in range(8):
            values |= {f"pfc_rx_pause/{p}": int(t * (20 + n)) if p == 3 else 0,
                       f"pfc_tx_pause/{p}": int(t * (10 + n)) if p == 3 else 0,
                       f"queue_tx_pkts/{p}": octets_out // 4096 if p == 3 else 0,
                       f"queue_ecn_marked/{p}": int(t * (200 + 10 * n)) if p == 3 else 0,
                       f"queue_dropped/{p}": int(t) if p == 3 else 0}
        return values
    return counters


@dataclass
class _Sent:
    """What the sender did: datagrams sent, bad-version datagrams sent, and the datagrams
    left out that a receiver can see missing (a later datagram of the same agent in the same
    run: the next run's sequence starts again, which is a restart, not a loss)."""

    good: int = 0
    bad: int = 0
    left_out_seen: int = 0


def _agent(datagram: bytes) -> bytes:
    """An sFlow v5 datagram's agent address and sub-agent id (its sequence's key)."""
    address_type = int.from_bytes(datagram[4:8], "big")
    end = 8 + (4 if address_type == 1 else 16)
    return datagram[8:end + 4]


class _Sflow(threading.Thread):
    """The example scenario's sFlow to the service on repeat, at the scenario's pace:
    every 50th datagram left out (2 % lost, sequence gaps) and a bad-version datagram after
    every 33rd (3 % rejected). Holding :attr:`lock` holds the sender between two datagrams
    (its pace resumes from there), with :attr:`sent` telling exactly what it sent."""

    BAD_VERSION = (4).to_bytes(4, "big") + bytes(24)

    def __init__(self, service: RunningService) -> None:
        super().__init__(daemon=True, name="sflow")
        self.service, self.stopping = service, threading.Event()
        self.lock, self.sent = threading.Lock(), _Sent()

    def run(self) -> None:
        spec = load_capture_spec(EXAMPLE / "flows.yaml")
        address = ("127.0.0.1", self.service.sflow_port)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            while not self.stopping.is_set():
                start = time.time()
                run = capture(self.service.facts, list(spec.flows), spec.seconds,
                              spec.sampling_rate, start, spec.seed, spec.counter_every_s)
                began = time.monotonic()
                unseen: dict[bytes, int] = {}  # agent -> left out since its last datagram
                for n, (at, data, _) in enumerate(run.datagrams, 1):
                    if self.stopping.wait(max(0.0, began + at - start - time.monotonic())):
                        return
                    held = time.monotonic()
                    with self.lock:
                        began += time.monotonic() - held  # paused: the pace resumes
                        self._send(sender, address, n, data, unseen)

    def _send(self, sender: socket.socket, address: tuple[str, int], n: int, data: bytes,
              unseen: dict[bytes, int]) -> None:
        agent = _agent(data)
        if n % 50:
            sender.sendto(data, address)
            self.sent.good += 1
            self.sent.left_out_seen += unseen.get(agent, 0)
            unseen[agent] = 0
        elif agent in unseen:  # left out after one of the agent's datagrams of this run
            unseen[agent] += 1
        if n % 33 == 0:
            sender.sendto(self.BAD_VERSION, address)
            self.sent.bad += 1

    def stop(self) -> None:
        self.stopping.set()
        self.join(5)


class _Lab(RunningService):
    sflow: _Sflow

    """:class:`RunningService` with EOS switches (their gNMI has PFC counters; OpenConfig's
    has none) counting what :func:`_counters` says, the hotspot thresholds above, and
    rediscovery every second from a copy of the Kubernetes dumps (:attr:`dumps`)."""

    def __init__(self, folder: Path) -> None:
        self.dumps = folder / "kubernetes"
        shutil.copytree(EXAMPLE / "kubernetes", self.dumps)
        super().__init__(folder, interval_s=1.0,
                         attribution={"interval_s": 1.0, "thresholds": THRESHOLDS},
                         kubernetes={"source": [str(self.dumps)]},
                         topology={"discover_every_s": 1})

    def _config(self) -> dict:  # called once the targets run, before the service starts
        start = time.time()
        for target in self.targets:
            target.profile, target.counters = "eos", _counters(target.switch.name, start)
        config = super()._config()
        for switch in config["switches"]:
            switch["vendor"] = "eos"
        return config


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[RunningService]:
    """``fabcorr run`` on the lab above, leaf04's target stopped once the service is ready
    (its collector then fails), the Kubernetes dumps gone (rediscovery then fails), the
    sFlow sender going."""
    with _Lab(tmp_path_factory.mktemp("service")) as running:
        (down,) = [t for t in running.targets if t.switch.name == DOWN]
        down.stop()
        running.dumps.rename(running.dumps.with_name("gone"))
        sflow = running.sflow = _Sflow(running)
        sflow.start()
        try:
            yield running
        finally:
            sflow.stop()


@pytest.fixture(scope="module")
def server(service, tmp_path_factory) -> Iterator[prometheus.Prometheus]:
    """Prometheus scraping the service, with deploy/rules.yml loaded, once the expected
    alerts fire.

    The rules are loaded from a copy whose ``for:`` durations are 2 s instead of minutes:
    the service's conditions hold within seconds and stay, so waiting minutes would prove
    nothing more, while 2 s still takes every alert through pending to firing."""
    document = yaml.safe_load(RULES.read_text())
    for group in document["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "2s"
    rules = tmp_path_factory.mktemp("rules") / "rules.yml"
    rules.write_text(yaml.safe_dump(document, sort_keys=False))
    began = time.monotonic()
    with prometheus.running(f"127.0.0.1:{service.http_port}", [rules]) as server:
        server.wait("the scrape target up", lambda: [
            t for t in server.targets() if t["health"] == "up"])
        server.wait("the expected alerts firing", lambda: _firing(server) >= EXPECTED_ALERTS,
                    timeout=90)
        print(f"prometheus up, scraping, alerts firing after {time.monotonic() - began:.1f} s")
        yield server


def _firing(server: prometheus.Prometheus, state: str = "firing") -> set[tuple[str, Any]]:
    found = set()
    for alert in server.alerts():
        if state and alert["state"] != state:
            continue
        labels = alert["labels"]
        name = labels["alertname"]
        keys = ALERT_KEYS.get(name, tuple(sorted(labels)))
        found.add((name, tuple((k, labels.get(k, "")) for k in keys)))
    return found


# -- against the server ----------------------------------------------------------------


def test_every_rule_loads_and_its_expression_returns_series(server):
    groups = server.rules()
    rules = [rule for group in groups for rule in group["rules"]]
    assert len(rules) == len(_rules())
    for rule in rules:
        assert rule["health"] == "ok", (rule["name"], rule.get("lastError"))
    for rule in _rules():
        assert server.query(rule["expr"]), f"{rule['alert']}: {rule['expr']} has no series"


def test_promtool_check_metrics_of_the_running_service(server, service):
    status, body = service.fetch("/metrics")
    assert status == 200 and body, (status, body[:500])
    _check_metrics(body)


def test_exactly_the_injected_conditions_alert(server):
    assert _firing(server, state="") == EXPECTED_ALERTS  # nothing else, pending or firing
    alerts = {a["labels"]["alertname"]: a for a in server.alerts()}
    hotspot = alerts["FabcorrHotspotActive"]
    assert hotspot["labels"]["severity"] == "warning"
    assert hotspot["labels"]["kinds"] == "utilization"
    description = hotspot["annotations"]["description"]
    assert re.search(r"It is the leaf-spine cable to spine01:Ethernet1\. Culprits: "
                     r"team-a 8\d(\.\d+)?%; victims: team-b 1\d(\.\d+)?%\.", description), \
        description
    noisy = alerts["FabcorrNoisyNeighbour"]
    assert noisy["value"] in ("1", "1e+00")
    assert re.search(r"use: leaf01:Ethernet5 out \(8\d", noisy["annotations"]["description"])
    down = alerts["FabcorrCollectorDown"]
    assert down["labels"]["protocol"] == "gnmi"
    description = down["annotations"]["description"]
    assert re.search(r"Last counters: (never|20\d\d-\d\d-\d\d [\d:.]+ \+0000 UTC)\. "
                     r"Errors since start: [a-z-]+ \d+", description), description
    # Prometheus extrapolates each rate() to the window's edges on its own, so the ratios
    # are only above the rules' 1 %; the counts behind them are checked exactly below.
    assert float(alerts["FabcorrSflowLoss"]["value"]) > 0.01
    assert float(alerts["FabcorrSflowRejects"]["value"]) > 0.01
    for alert in alerts.values():
        for text in alert["annotations"].values():
            assert "error expanding" not in text, text  # a template that failed


def test_the_service_counts_exactly_the_datagrams_left_out_and_the_bad_ones(server, service):
    """With the sender held, once the service has taken in what was sent (or the kernel
    dropped it, counted in /proc/net/udp): decoded == good sent, rejected == bad sent,
    lost == left out where a later datagram shows the gap; each within the kernel's drops,
    exact without them."""
    def counts() -> tuple[float, float, float]:
        metrics = service.metrics()
        return (_sample(metrics, "fabcorr_sflow_datagrams_total"),
                _sample(metrics, "fabcorr_sflow_rejects_total", reason="bad-version"),
                _sample(metrics, "fabcorr_sflow_lost_datagrams_total"))

    with service.sflow.lock:
        sent = replace(service.sflow.sent)
        assert sent.good > 1000 and sent.bad > 30 and sent.left_out_seen > 20, sent
        service.wait_for(lambda: sum(counts()[:2]) + udp_drops(service.sflow_port)
                         == sent.good + sent.bad, 60, "every datagram sent taken in")
        (decoded, rejected, lost), drops = counts(), udp_drops(service.sflow_port)
    print(f"sent {sent}; decoded {decoded:g}, rejected {rejected:g}, lost {lost:g}, "
          f"kernel drops {drops}")
    assert sent.good - drops <= decoded <= sent.good
    assert sent.bad - drops <= rejected <= sent.bad
    assert sent.left_out_seen <= lost <= sent.left_out_seen + drops
    if drops == 0:
        assert (decoded, rejected, lost) == (sent.good, sent.bad, sent.left_out_seen)


def _sample(metrics: str, name: str, **labels: str) -> float:
    """The value of the one sample of ``name`` with ``labels`` in an exposition."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    (value,) = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                if line.startswith(f"{name}{{{wanted}}} " if labels else f"{name} ")]
    return value


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_every_dashboard_query_returns_series(server, path):
    dashboard = json.loads(path.read_text())
    values = _variables(server, dashboard)
    missing = []
    for title, target in _targets(dashboard):
        expr = _interpolate(target["expr"], values)
        assert "$" not in re.sub(r'"\$1"', "", expr), f"{title}: left over variable: {expr}"
        try:
            result = _series(server, expr)
        except prometheus.PrometheusError as exc:
            missing.append(f"{title} [{target['refId']}]: {exc}")
            continue
        if not result:
            missing.append(f"{title} [{target['refId']}]: no series: {expr}")
            continue
        for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")):
            if not all(label in series["metric"] for series in result):
                missing.append(f"{title} [{target['refId']}]: legend label {label} missing "
                               f"from {[s['metric'] for s in result]}")
    assert not missing, "\n".join(missing)


def _series(server: prometheus.Prometheus, expr: str, timeout_s: float = 30.0) -> list:
    """The query's series, asked again for up to ``timeout_s`` while it has none: a panel
    shows the latest interval, and in a 1 s interval a tenant sampled a few times a second
    can have no sample on a link."""
    deadline = time.monotonic() + timeout_s
    while not (result := server.query(expr)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return result


def _variables(server: prometheus.Prometheus, dashboard: dict[str, Any]) -> dict[str, str]:
    """Every template variable resolved through Prometheus as Grafana would: in order, a
    variable's query may use the ones before it; "All" (multi-value) is Grafana's regex
    alternation of every value."""
    values: dict[str, str] = {}
    for var in dashboard["templating"]["list"]:
        if var["type"] == "datasource":
            continue
        selector, label = re.fullmatch(r"label_values\((.+),\s*(\w+)\)",
                                       _var_query(var)).groups()
        found = sorted({s[label] for s in server.series(_interpolate(selector, values))
                        if s.get(label)})
        assert found, f"variable {var['name']}: {_var_query(var)} has no values"
        if var.get("includeAll"):
            escaped = [re.sub(r"([\\^$*+?.()|{}\[\]])", r"\\\\\1", v) for v in found]
            values[var["name"]] = escaped[0] if len(escaped) == 1 else \
                "(" + "|".join(escaped) + ")"
        else:
            chosen = CHOSEN.get(var["name"], found[0])
            assert chosen in found, f"variable {var['name']}: {chosen} not in {found}"
            values[var["name"]] = chosen
    return values


def _interpolate(expr: str, values: dict[str, str]) -> str:
    """Grafana's $name, ${name}, ${name:format} and [[name]] of known variables and interval
    macros; anything else (label_replace's "$1") stays."""
    known = {**MACROS, **values}

    def substitute(match: re.Match[str]) -> str:
        name = next(group for group in match.groups() if group)
        return known.get(name, match.group(0))

    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", substitute, expr)


def test_the_node_graph_has_the_switches_and_their_link_directions(server):
    """Grafana's node graph takes the frames with ``source`` and ``target`` fields as
    edges and the others as nodes, each with an ``id``."""
    panel = next(p for p in _panels(json.loads((DEPLOY / "base" / "dashboards" /
                                                "fabric-overview.json").read_text())["panels"])
                 if p["type"] == "nodeGraph")
    nodes, edges = (_series(server, target["expr"]) for target in panel["targets"])
    ids = {s["metric"]["id"] for s in nodes}
    assert all(s["metric"]["title"] == s["metric"]["id"] for s in nodes)
    assert ids == {"leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"}
    links = {(s["metric"]["source"], s["metric"]["target"]) for s in edges}
    assert all(s["metric"]["id"] == "{source}->{target}".format(**s["metric"]) for s in edges)
    assert {("leaf01", "spine01"), ("spine01", "leaf01"), ("leaf02", "spine02")} <= links
    assert {end for link in links for end in link} <= ids
