"""``fabcorr run``'s configuration: the commented example, the environment, and errors
that name the file, the key and the reason (exit 2)."""

from pathlib import Path

import pytest

from correlator.cli.main import main
from correlator.service.config import load_service_config
from inventory.errors import ConfigError
from tests.inventory.test_devices import ENV, EXAMPLE


@pytest.fixture
def example(tmp_path) -> Path:
    secret = tmp_path / "gnmi-password"
    secret.write_text("s3cret\n")
    path = tmp_path / "fabcorr.yaml"
    path.write_text(EXAMPLE.read_text().replace("/run/secrets/gnmi-password", str(secret)))
    return path


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


def test_the_environment_overrides_the_file(example):
    env = {**ENV, "FABCORR_LISTEN": "127.0.0.1:19460", "FABCORR_SFLOW_LISTEN": "[::]:16343",
           "FABCORR_SFLOW_WORKERS": "3", "FABCORR_INTERVAL": "5",
           "FABCORR_KUBERNETES": "dumps/a.json,dumps/b.json", "FABCORR_USER": "prom",
           "FABCORR_PASSWORD": "pw"}
    config = load_service_config(example, env)
    assert config.http.address == ("127.0.0.1", 19460)
    assert (config.sflow.host, config.sflow.port, config.sflow.workers) == ("::", 16343, 3)
    assert (config.interval_s, config.sflow.interval_s) == (5.0, 5.0)
    assert config.kubernetes.source == ("dumps/a.json", "dumps/b.json")
    assert (config.http.username, config.http.password) == ("prom", "pw")
    assert "pw" not in repr(config.http)


@pytest.mark.parametrize(("text", "message"), [
    ("sflow: {listen: 6343}\n", "sflow.listen: expected str, not 6343"),
    ("sflow: {listen: nowhere}\n", "sflow.listen: expected HOST:PORT, not 'nowhere'"),
    ("sflow: {workers: 0}\n", "sflow.workers: must be >= 1, not 0"),
    ("sflow: {relays: [10.0.0.300]}\n",
     "sflow.relays: '10.0.0.300' does not appear to be an IPv4 or IPv6 network"),
    ("sflow: {max_agents: 0}\n", "sflow.max_agents: must be >= 1, not 0"),
    ("attribution: {interval_s: 0}\n", "attribution.interval_s: must be > 0, not 0.0"),
    ("attribution: {thresholds: {utilisation: 1}}\n",
     "attribution.thresholds.utilisation: unknown key (keys: utilization, "),
    ("attribution: {thresholds: {intervals: 0}}\n",
     "attribution.thresholds.intervals: must be >= 1"),
    ("service: {tls_cert: c.pem}\n", "service.tls_cert: tls_cert and tls_key go together"),
    ("metrics: {}\n", "metrics: unknown section (sections: switches, defaults, "),
    ("topology: {}\n", "switches: expected a non-empty list of switches"),
])
def test_a_bad_configuration_names_file_key_and_reason(tmp_path, text, message):
    path = tmp_path / "f.yaml"
    path.write_text("topology: {snapshot: t.json}\n" + text if "topology" not in text
                    else text)
    with pytest.raises(ConfigError) as caught:
        load_service_config(path, {})
    assert str(caught.value).startswith(f"{path}: {message}")


def test_run_exits_2_on_a_malformed_config(tmp_path, capsys):
    path = tmp_path / "f.yaml"
    path.write_text("sflow: {workers: many}\ntopology: {snapshot: t.json}\n")
    assert main(["run", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"fabcorr: {path}: sflow.workers: expected a number, not 'many'\n")


def test_check_prints_a_summary(example, capsys, monkeypatch):
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    assert main(["run", "--config", str(example), "--check"]) == 0
    assert capsys.readouterr().out == (
        f"{example}: ok: 3 switches, sFlow on 0.0.0.0:6343 (1 worker(s)), metrics and API on "
        "0.0.0.0:9460, 10 s intervals\n")
