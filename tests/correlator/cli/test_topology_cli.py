"""The ``fabcorr topology`` and ``simulate`` commands: output formats and exit codes."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import networkx as nx
import pytest
import yaml

from correlator.cli.main import main
from inventory.factfile import read_facts
from topology.build import build_graph
from topology.snapshot import save_snapshot

EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"
SNAPSHOT = str(EXAMPLE / "topology.json")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_where_table(capsys):
    code, out, _ = run(capsys, "topology", "where", "team-b/bert-large-worker-3",
                       "--snapshot", SNAPSHOT)
    assert code == 0
    assert out.splitlines() == [
        "POD                         IF    IPV4           NODE   PF         RAIL  VF"
        "            LEAF    PORT",
        "team-b/bert-large-worker-3  net1  10.101.0.9/16  gpu08  ens1f0np0  1     0000:1a:00.2"
        "  leaf02  Ethernet4",
        "team-b/bert-large-worker-3  net2  10.102.0.9/16  gpu08  ens2f0np0  2     0000:3d:00.2"
        "  leaf04  Ethernet4",
    ]


def test_where_marks_an_ended_pod_with_its_end_time(capsys, tmp_path):
    facts = read_facts([str(EXAMPLE / "facts.yaml")])
    ended = [replace(i, valid_until=1767229215.0) if i.pod == "bert-large-worker-3" else i
             for i in facts.pod_interfaces]
    snapshot = tmp_path / "ended.json"
    save_snapshot(build_graph(replace(facts, pod_interfaces=tuple(ended))), snapshot)
    code, out, _ = run(capsys, "topology", "where", "team-b/bert-large-worker-3",
                       "--snapshot", str(snapshot))
    assert code == 0
    assert out.splitlines() == [
        "POD                         IF    IPV4           NODE   PF         RAIL  VF"
        "            LEAF    PORT       ENDED",
        "team-b/bert-large-worker-3  net1  10.101.0.9/16  gpu08  ens1f0np0  1     0000:1a:00.2"
        "  leaf02  Ethernet4  2026-01-01T03:00:15+02:00",
        "team-b/bert-large-worker-3  net2  10.102.0.9/16  gpu08  ens2f0np0  2     0000:3d:00.2"
        "  leaf04  Ethernet4  2026-01-01T03:00:15+02:00",
    ]
    code, out, _ = run(capsys, "topology", "where", "team-b/bert-large-worker-3",
                       "--snapshot", str(snapshot), "-o", "json")
    assert [r["valid_until"] for r in json.loads(out)] == [1767229215.0, 1767229215.0]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_link_as_data(capsys, fmt):
    code, out, _ = run(capsys, "topology", "link", "leaf01:Ethernet5", "-o", fmt,
                       "--snapshot", SNAPSHOT)
    data = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    assert code == 0
    assert (data["port"], data["peer"], data["tier"]) == (
        "leaf01:Ethernet5", "spine01:Ethernet1", "leaf-spine")
    assert data["tenants"] == ["team-a", "team-b"]


def test_path_json_lists_hops(capsys):
    code, out, _ = run(capsys, "topology", "path", "10.101.0.2", "10.101.0.3", "-o", "json",
                       "--snapshot", SNAPSHOT)
    [pair] = json.loads(out)
    assert code == 0 and pair["count"] == 2
    assert [h["switch"] for h in pair["paths"][1]] == ["leaf01", "spine02", "leaf02"]


def test_snapshot_from_environment(capsys, monkeypatch):
    monkeypatch.setenv("FABCORR_SNAPSHOT", SNAPSHOT)
    code, out, _ = run(capsys, "topology", "summary")
    assert code == 0
    assert "leaf-spine  8" in out.splitlines()


def test_not_found_exits_1_with_close_matches(capsys):
    code, out, err = run(capsys, "topology", "job", "team-a/llm", "--snapshot", SNAPSHOT)
    assert (code, out) == (1, "")
    assert err == ("fabcorr: no job named 'team-a/llm'; did you mean "
                   "'team-a/llm-pretrain', 'team-a/eval'?\n")


@pytest.mark.parametrize(("argv", "line"), [
    (["topology", "where"], "topology where: the following arguments are required: THING"),
    (["topology", "where", "gpu01", "-o", "xml", "--snapshot", SNAPSHOT],
     "--output: invalid choice: 'xml' (choose from 'table', 'wide', 'json', 'yaml', 'jsonl')"),
    (["topology", "frobnicate"], "SUBCOMMAND: invalid choice: 'frobnicate' (choose from "
     "'build', 'where', 'path', 'link', 'job', 'tenant', 'summary', 'problems', 'export', "
     "'check')"),
    (["topology", "path", "a", "b", "--at", "yesterday", "--snapshot", SNAPSHOT],
     "--at: not a time: 'yesterday'"),
])
def test_usage_errors_exit_2_in_one_line(capsys, argv, line):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"fabcorr: {line}\n"


def test_unreadable_snapshot_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "topology", "summary", "--snapshot", str(tmp_path / "x.json"))
    assert code == 2 and "cannot read snapshot" in err


def test_at_resolves_an_ip_as_owned_then(capsys):
    code, _, _ = run(capsys, "topology", "where", "10.101.0.2", "--at", "2025-12-31T00:00:00Z",
                     "--snapshot", SNAPSHOT)
    assert code == 1  # the example's pods got their IPs on 2026-01-01


def test_build_then_export_graphml(capsys, tmp_path):
    snapshot = tmp_path / "t.json"
    code, _, err = run(capsys, "topology", "build", "--facts", str(EXAMPLE / "facts.yaml"),
                       "--out", str(snapshot))
    assert code == 0 and "161 nodes" in err
    assert snapshot.read_bytes() == (EXAMPLE / "topology.json").read_bytes()
    code, _, _ = run(capsys, "topology", "export", "-o", "graphml", "--out",
                     str(tmp_path / "f.graphml"), "--snapshot", str(snapshot))
    graph = nx.read_graphml(tmp_path / "f.graphml")
    assert code == 0 and graph.number_of_nodes() == 161


def test_export_to_stdout(capsysbinary):
    assert main(["topology", "export", "-o", "dot", "--out", "-", "--snapshot",
                 SNAPSHOT]) == 0
    assert capsysbinary.readouterr().out.startswith(b"graph fabric {")


def test_export_only_some_kinds(capsys, tmp_path):
    code, _, _ = run(capsys, "topology", "export", "-o", "graphml", "--kinds", "switch,port",
                     "--out", str(tmp_path / "f.graphml"), "--snapshot", SNAPSHOT)
    kinds = set(nx.get_node_attributes(nx.read_graphml(tmp_path / "f.graphml"), "kind").values())
    assert (code, kinds) == (0, {"switch", "port"})
    code, _, err = run(capsys, "topology", "export", "-o", "dot", "--kinds", "switches",
                       "--snapshot", SNAPSHOT)
    assert (code, err) == (2, "fabcorr: --kinds: unknown node kind 'switches' (kinds: "
                              "tenant, job, pod, pod-interface, vf, pf, node, switch, port)\n")


def test_problems_listing(capsys, tmp_path):
    snapshot = tmp_path / "t.json"
    assert main(["simulate", "generate", "--spec", str(EXAMPLE / "fabric.yaml"),
                 "--out", str(snapshot)]) == 0
    code, out, _ = run(capsys, "topology", "problems", "--snapshot", str(snapshot))
    assert (code, out) == (0, "KIND  SUBJECT  DETAIL\n")


def test_simulate_generate_gpus(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", "generate", "--gpus", "64", "--out",
                       str(tmp_path / "t.json"))
    assert code == 0
    assert "64 GPUs, 8 nodes, 8 leaves" in err
    code, out, _ = run(capsys, "topology", "summary", "-o", "json", "--snapshot",
                       str(tmp_path / "t.json"))
    assert json.loads(out)["nodes"]["pf"] == 64


def test_bad_spec_exits_2_naming_file_and_key(capsys, tmp_path):
    spec = tmp_path / "fabric.yaml"
    spec.write_text("nodes: 2\nspine: 3\n")
    code, _, err = run(capsys, "simulate", "generate", "--spec", str(spec), "--out",
                       str(tmp_path / "t.json"))
    assert code == 2
    assert err.startswith(f"fabcorr: {spec}: spine: unknown key (keys: nodes, rails,")


def test_console_script_runs():
    script = Path(sys.executable).parent / "fabcorr"
    done = subprocess.run([script, "topology", "link", "leaf04:Ethernet6", "--snapshot",
                           SNAPSHOT, "-o", "json"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["peer"] == "spine02:Ethernet4"


def test_out_dash_writes_snapshots_and_captures_to_standard_output(capsys, tmp_path):
    snapshot = tmp_path / "t.json"
    assert main(["topology", "build", "--facts", str(EXAMPLE / "facts.yaml"), "--out",
                 str(snapshot)]) == 0
    assert main(["topology", "build", "--facts", str(EXAMPLE / "facts.yaml"), "--out",
                 "-"]) == 0
    out, err = capsys.readouterr()
    assert out == snapshot.read_text()
    assert err.splitlines() == [f"wrote {snapshot}: 161 nodes, 199 edges, 0 problems",
                                "wrote -: 161 nodes, 199 edges, 0 problems"]
    pcap = tmp_path / "c.pcap"
    argv = [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
            "sys.exit(main())", "simulate", "capture", "--snapshot", SNAPSHOT, "--flows",
            str(EXAMPLE / "flows.yaml")]
    subprocess.run([*argv, "--out", str(pcap)], check=True, capture_output=True, timeout=600)
    piped = subprocess.run([*argv, "--out", "-"], check=True, capture_output=True,
                           timeout=600)
    assert piped.stdout == pcap.read_bytes() and len(piped.stdout) > 6_000_000
    assert piped.stderr.decode().splitlines()[0] == (
        "wrote -: 4,531 datagrams over 30 s from 2026-01-01T03:00:00+02:00")
