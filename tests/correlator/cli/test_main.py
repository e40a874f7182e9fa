"""The CLI's one error boundary: every failure is one line ``fabcorr: WHERE: reason`` on
stderr and an exit status (2 bad input or environment, 1 a thing that does not exist);
``--debug`` adds the traceback. One row per reproducer of issue 13."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from correlator.cli.attribute import _FIELDS
from correlator.cli.main import main
from inventory.counters import PortCounters
from inventory.problems import PROBLEM_KINDS

ROOT = Path(__file__).parents[3]
EXAMPLE = ROOT / "examples" / "fabric-small"
SNAPSHOT = str(EXAMPLE / "topology.json")
PODS = ("team-a/llm-pretrain-worker-0", "team-a/llm-pretrain-worker-1")
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
"""


def _facts(tmp: Path, old: str, new: str) -> str:
    path = tmp / "facts.yaml"
    text = (EXAMPLE / "facts.yaml").read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return str(path)


def _counters(tmp: Path, reading: dict) -> str:
    path = tmp / "counters.jsonl"
    path.write_text(json.dumps(reading) + "\n")
    return str(path)


def _pods(tmp: Path) -> str:
    document = json.loads((EXAMPLE / "kubernetes" / "pods.json").read_text())
    document["items"][0]["metadata"] = "oops"
    path = tmp / "pods.json"
    path.write_text(json.dumps(document))
    return str(path)


def _write(tmp: Path, name: str, text: str | bytes) -> str:
    path = tmp / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def _flows(tmp: Path) -> str:
    return _write(tmp, "flows.yaml", "flows: [{switch: leaf01, port: Ethernet1, "
                  "src: 10.101.0.999, dst: 10.101.0.3, packets_per_s: 1}]\n")


# (argv built from a temporary folder, exit status, stderr line after "fabcorr: ")
REPRODUCERS = {
    "build into a missing folder": (
        lambda t: ["topology", "build", "--facts", str(EXAMPLE / "facts.yaml"), "--out",
                   "/nonexistent/dir/o.json"],
        2, "/nonexistent/dir/o.json: cannot write: No such file or directory"),
    "build onto a directory": (
        lambda t: ["topology", "build", "--facts", str(EXAMPLE / "facts.yaml"), "--out", str(t)],
        2, "{t}: cannot write: is a directory"),
    "a fact's IPv4 out of range": (
        lambda t: ["topology", "build", "--facts", _facts(t, "ipv4: 10.101.0.2/16",
                                                          "ipv4: 10.0.0.300/24"),
                   "--out", str(t / "o.json")],
        2, "{t}/facts.yaml: pod_interfaces[0].ipv4: '10.0.0.300/24' is not an IPv4 "
           "address/prefix"),
    "a negative speed in facts": (
        lambda t: ["topology", "build", "--facts", _facts(t, "speed_bps: 400000000000",
                                                          "speed_bps: -5"),
                   "--out", str(t / "o.json")],
        2, "{t}/facts.yaml: interfaces[0].speed_bps: must be >= 0, not -5"),
    "a path limit past any list": (
        lambda t: ["topology", "path", *PODS, "--snapshot", SNAPSHOT,
                   "--limit", "99999999999999999999999"],
        2, "--limit: must be between 0 and 100000, not 99999999999999999999999"),
    "export into a missing folder": (
        lambda t: ["topology", "export", "--snapshot", SNAPSHOT, "-o", "dot", "--out",
                   "/nonexistent/x.dot"],
        2, "/nonexistent/x.dot: cannot write: No such file or directory"),
    "a server URL that does not parse": (
        lambda t: ["hotspots", "--server", "http://[::1"],
        2, "--server: 'http://[::1' is not a URL: Invalid IPv6 URL"),
    "a counter reading at noon": (
        lambda t: ["attribute", "--snapshot", SNAPSHOT, "--pcap", str(t / "none.pcap"),
                   "--counters", _counters(t, {"switch": "leaf01", "port": "Ethernet1",
                                               "at": "noon"})],
        2, "{t}/counters.jsonl: line 1: at: expected Unix seconds (a finite number), not "
           "'noon'"),
    "a counter of lots": (
        lambda t: ["attribute", "--snapshot", SNAPSHOT, "--pcap", str(t / "none.pcap"),
                   "--counters", _counters(t, {"switch": "leaf01", "port": "Ethernet1",
                                               "at": 1, "values": {"in_octets": "lots"}})],
        2, "{t}/counters.jsonl: line 1: values: expected {counter: non-negative integer}, "
           "not {'in_octets': 'lots'}"),
    "a pod whose metadata is a string": (
        lambda t: ["inventory", "pods", "--from", _pods(t)],
        2, "{t}/pods.json: items[0].metadata: expected a mapping, not str"),
    "no kubeconfig at all": (
        lambda t: ["inventory", "pods"],
        2, "~/.kube/config: no kubeconfig found, and not running in a cluster"),
    "an unknown kubeconfig context": (
        lambda t: ["inventory", "pods", "--kubeconfig", _write(t, "kc.yaml", KUBECONFIG),
                   "--context", "nope"],
        2, "{t}/kc.yaml: context: no context 'nope' (contexts: ctx)"),
    "a capture flow from a bad IP": (
        lambda t: ["simulate", "capture", "--snapshot", SNAPSHOT, "--flows", _flows(t),
                   "--out", str(t / "c.pcap")],
        2, "{t}/flows.yaml: flows[0].src: '10.101.0.999' is not an IP address"),
    "a capture collector that is no IP": (
        lambda t: ["simulate", "capture", "--snapshot", SNAPSHOT, "--flows",
                   str(EXAMPLE / "flows.yaml"), "--collector", "10.0.0.999:6343"],
        2, "--collector: '10.0.0.999:6343': '10.0.0.999' is not an IP address or host name"),
    "zero GPUs": (
        lambda t: ["simulate", "generate", "--gpus", "0", "--out", str(t / "o.json")],
        2, "--gpus: must be >= 8, not 0"),
    "minus eight GPUs": (
        lambda t: ["simulate", "generate", "--gpus", "-8", "--out", str(t / "o.json")],
        2, "--gpus: must be >= 8, not -8"),
    "GPUs not in eights": (
        lambda t: ["simulate", "generate", "--gpus", "12", "--out", str(t / "o.json")],
        2, "--gpus: must be a positive multiple of 8, not 12"),
    "a config that is not UTF-8": (
        lambda t: ["run", "--check", "--config", _write(t, "f.yaml", b"sflow: {listen: \xff}\n")],
        2, "{t}/f.yaml: not UTF-8 text (byte 16)"),
    "an IP written wrong is bad input, not unknown": (
        lambda t: ["topology", "where", "10.101.0.300", "--snapshot", SNAPSHOT],
        2, "THING: '10.101.0.300' is not an IPv4 address"),
    "an IP nobody owns is unknown": (
        lambda t: ["topology", "where", "10.101.9.9", "--snapshot", SNAPSHOT],
        1, "no pod interface with IP named '10.101.9.9 (now)'"),
    "at NaN": (
        lambda t: ["topology", "where", "10.101.0.2", "--at", "nan", "--snapshot", SNAPSHOT],
        2, "--at: not a time: 'nan' (not a finite number)"),
    "at 1e400": (
        lambda t: ["topology", "where", "10.101.0.2", "--at", "1e400", "--snapshot", SNAPSHOT],
        2, "--at: not a time: '1e400' (not a finite number)"),
    "an offset of 99 minutes": (
        lambda t: ["topology", "where", "10.101.0.2", "--at", "2026-01-01T01:00:00+05:99",
                   "--snapshot", SNAPSHOT],
        2, "--at: not a time: '2026-01-01T01:00:00+05:99' (offset minutes or seconds over 59)"),
    "a problem kind that does not exist": (
        lambda t: ["topology", "problems", "--kind", "bogus", "--snapshot", SNAPSHOT],
        2, "--kind: invalid choice: 'bogus' (choose from " + ", ".join(
            repr(k) for k in sorted(PROBLEM_KINDS)) + ")"),
    "minus three links": (
        lambda t: ["attribute", "--snapshot", SNAPSHOT, "--pcap", "x.pcap", "--links", "-3"],
        2, "--links: must be >= 1, not -3"),
    "a nanosecond interval": (
        lambda t: ["who", "spine01:Ethernet1", "--snapshot", SNAPSHOT, "--pcap", "x.pcap",
                   "--interval", "1e-9"],
        2, "--interval: must be >= 0.1, not 1e-9"),
    "an unknown command": (
        lambda t: ["frobnicate"],
        2, "COMMAND: invalid choice: 'frobnicate' (choose from 'topology', 'inventory', "
           "'discover', 'sflow', 'attribute', 'hotspots', 'who', 'top', 'run', 'inlet', 'map', "
           "'config', 'demo', 'simulate', 'completion')"),
}


@pytest.mark.parametrize("case", REPRODUCERS)
def test_every_failure_is_one_line_and_its_exit_status(case, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.kube/config
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    argv, status, line = REPRODUCERS[case]
    code = main(argv(tmp_path))
    expected = "fabcorr: " + line.replace("{t}", str(tmp_path)) + "\n"
    assert (code, capsys.readouterr().err) == (status, expected)


def test_debug_adds_the_traceback_before_the_line(capsys):
    argv = ["topology", "export", "--snapshot", SNAPSHOT, "-o", "dot", "--out",
            "/nonexistent/x.dot"]
    assert main(["--debug", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert "FileNotFoundError" in err and "inventory.errors.WriteError" in err
    assert err.endswith("\nfabcorr: /nonexistent/x.dot: cannot write: No such file or "
                        "directory\n")


def test_an_unexpected_error_is_one_line_too(capsys, monkeypatch):
    def broken(_: object) -> None:
        raise KeyError("oops")
    monkeypatch.setattr("correlator.cli.topology.load_snapshot", broken)
    code = main(["topology", "export", "-o", "dot", "--out", "-"])
    assert (code, capsys.readouterr().err) == (
        2, "fabcorr: internal error: KeyError: 'oops' (--debug shows the traceback)\n")


def test_every_problem_kind_in_the_code_is_known():
    pattern = re.compile(r'Problem\(\s*"([a-z-]+)"')
    found = {kind for package in ("inventory", "topology", "correlator")
             for path in (ROOT / package).rglob("*.py")
             for kind in pattern.findall(path.read_text())}
    assert found == PROBLEM_KINDS


def test_every_field_of_a_counter_reading_is_checked():
    assert list(_FIELDS) == [f.name for f in fields(PortCounters)]


def test_every_help_text_renders_and_shows_percent_signs_once(capsys):
    from correlator.cli.completion import commands
    from correlator.cli.main import build_parser

    for command in commands(build_parser()):
        with pytest.raises(SystemExit):
            main([*command.path.split()[1:], "--help"])
        out = capsys.readouterr().out
        assert out.startswith(f"usage: {command.path}") and "%%" not in out, command.path
    with pytest.raises(SystemExit):
        main(["attribute", "--help"])
    assert "with 95% intervals" in " ".join(capsys.readouterr().out.split())
