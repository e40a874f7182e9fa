"""``fabcorr run``'s configuration: the commented example, the environment, and errors
that name the file, the key and the reason (exit 2), never a secret; ``--check`` binds the
listen addresses; ``fabcorr config schema``."""

import json
import socket
from pathlib import Path

import pytest

from correlator.allocator import allocator_in_use
from correlator.cli.main import main
from correlator.service.config import load_service_config
from correlator.shards import Shard
from inventory.errors import ConfigError
from tests.inventory.test_devices import ENV, example_config

SNAPSHOT = Path(__file__).parents[3] / "examples" / "fabric-small" / "topology.json"
BASE = {"service": "service: {listen: '127.0.0.1:0'}", "sflow": "sflow: {listen: '127.0.0.1:0'}",
        "topology": f"topology: {{snapshot: {SNAPSHOT}}}"}


def _document(text: str) -> str:
    """``text`` after the base sections it does not set itself (local addresses, the
    example snapshot)."""
    return "".join(line + "\n" for section, line in BASE.items()
                   if not text.startswith(f"{section}:") and f"\n{section}:" not in text) \
        + text + "\n"


@pytest.fixture
def example(tmp_path) -> Path:
    return example_config(tmp_path)


def test_the_example_loads_with_every_default(example):
    config = load_service_config(example, ENV)
    assert [s.name for s in config.switches] == ["leaf01", "leaf02", "spine01"]
    assert (config.http.listen, config.http.address, config.http.tls_cert) == (
        "0.0.0.0:9460", ("0.0.0.0", 9460), "")
    assert (config.sflow.host, config.sflow.port, config.sflow.workers,
            config.sflow.rcvbuf_bytes, config.sflow.interval_s, config.sflow.relays,
            config.sflow.max_agents, config.sflow.max_sources) == (
        "0.0.0.0", 6343, 1, 8 << 20, 10.0, (), 16384, 262144)
    assert (config.interval_s, config.top_pods, config.thresholds.utilization,
            config.thresholds.intervals, config.telemetry_interval_s) == (10.0, 10, 0.8, 2, 10.0)
    assert (config.kubernetes.source, config.topology.discover_every_s) == ((), 3600.0)
    assert (config.shards, config.shard) == (1, Shard(0, 1))


def test_the_environment_overrides_the_file(example, tmp_path):
    dumps = [tmp_path / "a.json", tmp_path / "b.json"]
    for dump in dumps:
        dump.write_text("{}")
    env = {**ENV, "FABCORR_LISTEN": "127.0.0.1:19460", "FABCORR_SFLOW_LISTEN": "[::]:16343",
           "FABCORR_SFLOW_WORKERS": "3", "FABCORR_INTERVAL": "5",
           "FABCORR_KUBERNETES": ",".join(map(str, dumps)), "FABCORR_SERVICE_USER": "prom",
           "FABCORR_SERVICE_PASSWORD": "pw"}
    config = load_service_config(example, env)
    assert config.http.address == ("127.0.0.1", 19460)
    assert (config.sflow.host, config.sflow.port, config.sflow.workers) == ("::", 16343, 3)
    assert (config.interval_s, config.sflow.interval_s) == (5.0, 5.0)
    assert config.kubernetes.source == tuple(map(str, dumps))
    assert (config.http.username, config.http.password) == ("prom", "pw")
    assert "pw" not in repr(config.http)


def test_the_clients_variables_do_not_configure_the_server(example):
    env = {**ENV, "FABCORR_USER": "prom", "FABCORR_PASSWORD": "pw",
           "FABCORR_SNAPSHOT": str(SNAPSHOT)}
    config = load_service_config(example, env)
    assert (config.http.username, config.http.password, config.topology.snapshot) == (
        "", "", "")


def test_a_bad_variable_is_named(example):
    with pytest.raises(ConfigError) as caught:
        load_service_config(example, {**ENV, "FABCORR_SFLOW_WORKERS": "many"})
    assert str(caught.value) == (f"{example}: $FABCORR_SFLOW_WORKERS: Input should be a valid "
                                 "integer, unable to parse string as an integer")


def _files(folder: Path) -> dict[str, str]:
    return {"missing": str(folder / "missing.pem"),
            "ro": "/sys/a.log"}  # unwritable even for root


# (the YAML after a snapshot and local addresses, the key and reason named)
BAD = {
    "an infinite interval": ("attribution: {interval_s: 1e400}",
                             "attribution.interval_s: Input should be a finite number"),
    "a nanosecond interval": ("telemetry: {interval_s: 1e-9}",
                              "telemetry.interval_s: Input should be greater than or equal "
                              "to 0.1"),
    "a trillion workers": ("sflow: {workers: 999999999999}",
                           "sflow.workers: Input should be less than or equal to 64"),
    "a relay that is no address": ("sflow: {relays: [10.0.0.300]}",
                                   "sflow.relays[0]: '10.0.0.300' does not appear to be an "
                                   "IPv4 or IPv6 network"),
    "no agents followed": ("sflow: {max_agents: 0}",
                           "sflow.max_agents: Input should be greater than or equal to 1"),
    "utilization of five": ("attribution: {thresholds: {utilization: 5}}",
                            "attribution.thresholds.utilization: Input should be less than "
                            "or equal to 1"),
    "port 70000": ("switches: [{name: a, address: 10.0.0.1, gnmi: {port: 70000}}]",
                   "switches[0].gnmi.port: Input should be less than or equal to 65535"),
    "listen on port 70000": ("sflow: {listen: '0.0.0.0:70000'}",
                             "sflow.listen: '0.0.0.0:70000': port 70000 is over 65535"),
    "address 10.0.0.999": ("switches: [{name: a, address: 10.0.0.999}]",
                           "switches[0].address: '10.0.0.999' is not an IP address or host "
                           "name"),
    "listen on nonsense": ("service: {listen: nonsense}",
                           "service.listen: expected HOST:PORT, not 'nonsense'"),
    "a missing snapshot": ("topology: {snapshot: {missing}}",
                           "topology.snapshot: {missing}: no such file"),
    "missing TLS files": ("service: {tls_cert: {missing}, tls_key: {missing}}",
                          "service.tls_cert: {missing}: no such file"),
    "a TLS certificate without key": (f"service: {{tls_cert: {SNAPSHOT}}}",
                                      "service.tls_cert: tls_cert and tls_key go together"),
    "a missing CA": ("switches: [{name: a, address: x, gnmi: {ca_file: {missing}}}]",
                     "switches[0].gnmi.ca_file: {missing}: no such file"),
    "an unwritable attribution log": ("attribution: {log: {ro}}",
                                      "attribution.log: {ro}: not writable: Permission "
                                      "denied"),
    "a missing Kubernetes dump folder": ("kubernetes: {source: [{missing}]}",
                                         "kubernetes.source[0]: {missing}: no such file or "
                                         "folder"),
    "a duplicate switches key": ("switches: [{name: a, address: x}]\n"
                                 "switches: [{name: b, address: y}]",
                                 "switches: duplicate key on line 5 (first on line 4)"),
    "a duplicate key deeper down": ("sflow: {workers: 2, workers: 3}",
                                    "workers: duplicate key on line 3 (first on line 3)"),
    "an unknown section": ("metrics: {}", "metrics: unknown key"),
    "an unknown threshold": ("attribution: {thresholds: {utilisation: 1}}",
                             "attribution.thresholds.utilisation: unknown key"),
    "no switches and no snapshot": (
        "topology: {snapshot: ''}",
        "switches: expected a non-empty list of switches (or a topology.snapshot)"),
}


@pytest.mark.parametrize("case", BAD)
def test_check_refuses_what_run_would_fail_on(case, tmp_path, capsys):
    files = _files(tmp_path)
    text, message = (part.replace("{missing}", files["missing"]).replace("{ro}", files["ro"])
                     for part in BAD[case])
    path = tmp_path / "f.yaml"
    path.write_text(_document(text))
    assert main(["run", "--check", "--config", str(path)]) == 2
    assert capsys.readouterr() == ("", f"fabcorr: {path}: {message}\n")


def test_a_short_snmpv3_key_is_refused_and_never_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FABCORR_V3_KEY", "k3y-123")
    path = tmp_path / "f.yaml"
    path.write_text(_document("switches: [{name: a, address: x, snmp: {version: 3, user: u, "
                              "auth_key: {env: FABCORR_V3_KEY}}}]"))
    assert main(["--debug", "run", "--check", "--config", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.endswith(f"fabcorr: {path}: switches[0].snmp.auth_key: SNMPv3 keys have at "
                        "least 8 characters (from env FABCORR_V3_KEY)\n")
    assert "k3y-123" not in out + err


def test_snmp_version_2_needs_no_quotes(tmp_path, capsys):
    path = tmp_path / "f.yaml"
    path.write_text(_document("switches: [{name: a, address: x, snmp: {version: 2}}]"))
    assert main(["run", "--check", "--config", str(path)]) == 0
    assert load_service_config(path, {}).switches[0].snmp.version == "2c"


@pytest.mark.parametrize(("kind", "key"), [(socket.SOCK_STREAM, "service.listen"),
                                            (socket.SOCK_DGRAM, "sflow.listen")])
def test_check_and_run_refuse_an_address_in_use(tmp_path, capsys, kind, key):
    with socket.socket(socket.AF_INET, kind) as taken:
        taken.bind(("127.0.0.1", 0))
        if kind == socket.SOCK_STREAM:
            taken.listen()
        port = taken.getsockname()[1]
        section = key.split(".")[0]
        path = tmp_path / "f.yaml"
        path.write_text(_document(f"{section}: {{listen: '127.0.0.1:{port}'}}"))
        for argv in (["run", "--check", "--config", str(path)], ["run", "--config", str(path)]):
            assert main(argv) == 2
            assert capsys.readouterr().err == (
                f"fabcorr: {path}: {key}: cannot listen on 127.0.0.1:{port}: Address already "
                "in use\n")


def test_an_sflow_address_not_on_this_machine_fails_before_ready(tmp_path, capsys):
    path = tmp_path / "f.yaml"
    path.write_text(_document("sflow: {listen: '192.0.2.77:6343'}"))
    assert main(["run", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"fabcorr: {path}: sflow.listen: cannot listen on 192.0.2.77:6343: Cannot assign "
        "requested address\n")


def test_check_prints_a_summary(example, capsys, monkeypatch):
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FABCORR_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("FABCORR_SFLOW_LISTEN", "127.0.0.1:0")
    assert main(["run", "--config", str(example), "--check"]) == 0
    assert capsys.readouterr().out == (
        f"{example}: ok: 3 switches, sFlow on 127.0.0.1:0 (1 worker(s)), metrics and API on "
        f"127.0.0.1:0, 10 s intervals, allocator {allocator_in_use()}\n")


@pytest.mark.parametrize(("flag", "pod", "expected"), [
    ("1/3", None, ", shard 1/3"), ("auto", "fabcorr-2", ", shard 2/3"), ("0/1", None, "")])
def test_check_names_the_shard(example, capsys, monkeypatch, flag, pod, expected):
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FABCORR_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("FABCORR_SFLOW_LISTEN", "127.0.0.1:0")
    if pod:
        monkeypatch.setenv("POD_NAME", pod)
    example.write_text(example.read_text().replace("  count: 1 ", "  count: 3 "))
    status = main(["run", "--config", str(example), "--check", "--shard", flag])
    out, err = capsys.readouterr()
    if flag == "0/1":
        assert (status, out) == (2, "")
        assert err.strip().endswith("--shard: 0/1: shards.count is 3")
        return
    assert status == 0 and out.endswith(
        f"10 s intervals{expected}, allocator {allocator_in_use()}\n")


def test_shard_auto_needs_an_ordinal(example, capsys, monkeypatch):
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("POD_NAME", "fabcorr")
    assert main(["run", "--config", str(example), "--check", "--shard", "auto"]) == 2
    assert "--shard: --shard auto: pod name 'fabcorr' does not end in a StatefulSet " \
        "ordinal (-N)" in capsys.readouterr().err


def test_the_schema_is_a_json_schema_of_every_section(capsys):
    assert main(["config", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert (schema["type"], schema["additionalProperties"]) == ("object", False)
    assert list(schema["properties"]) == ["defaults", "switches", "crawl", "service",
                                          "kubernetes", "topology", "telemetry", "sflow",
                                          "attribution", "shards"]
    sflow = schema["$defs"]["SflowSettings"]["properties"]
    assert (sflow["workers"]["minimum"], sflow["workers"]["maximum"]) == (1, 64)
    assert schema["$defs"]["HttpSettings"]["properties"]["password"]["anyOf"] == [
        {"properties": {name: {"title": name.title(), "type": "string"}}, "required": [name],
         "type": "object"} for name in ("env", "file")]
