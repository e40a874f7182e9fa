"""``fabcorr topology check``: plan against the example fabric, output formats, exit codes."""

import json
from pathlib import Path

import yaml

from correlator.cli.main import main

SNAPSHOT = str(Path(__file__).parents[3] / "examples" / "fabric-small" / "topology.json")
UPLINKS = [[f"leaf0{n}:Ethernet{4 + s}", f"spine0{s}:Ethernet{n}"]
           for n in range(1, 5) for s in (1, 2)]


def check(capsys, tmp_path, links, *options):
    plan = tmp_path / "plan.yaml"
    plan.write_text(links if isinstance(links, str) else yaml.safe_dump(links))
    code = main(["topology", "check", "--plan", str(plan), "--snapshot", SNAPSHOT, *options])
    out, err = capsys.readouterr()
    return code, out, err


def test_matching_plan_exits_0_with_empty_lists(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, UPLINKS, "-o", "json")
    assert code == 0
    assert json.loads(out) == {"planned": 8, "as_planned": 8, "missing": [], "miswired": [],
                               "unexpected": []}


def test_matching_plan_table(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, UPLINKS)
    assert code == 0
    assert out.splitlines() == ["Planned:    8", "As planned: 8", "Missing:    0",
                                "Miswired:   0", "Unexpected: 0"]


def test_swapped_cable_is_that_miswire(capsys, tmp_path):
    links = [*UPLINKS[1:], ["leaf01:Ethernet5", "spine01:Ethernet9"]]
    code, out, _ = check(capsys, tmp_path, links, "-o", "yaml")
    report = yaml.safe_load(out)
    assert code == 1
    assert report["miswired"] == [{
        "port": "leaf01:Ethernet5", "planned_peer": "spine01:Ethernet9",
        "actual_peer": "spine01:Ethernet1", "status": "confirmed", "entry": 7}]
    assert report["missing"] == report["unexpected"] == []


def test_swapped_cable_table(capsys, tmp_path):
    links = [*UPLINKS[1:], ["leaf01:Ethernet5", "spine01:Ethernet9"]]
    code, out, _ = check(capsys, tmp_path, links)
    assert code == 1
    assert out.splitlines()[5:] == [
        "",
        "Miswired",
        "ENTRY  PORT              PLANNED PEER       ACTUAL PEER        LLDP",
        "7      leaf01:Ethernet5  spine01:Ethernet9  spine01:Ethernet1  confirmed",
    ]


def test_plan_missing_a_cable_reports_one_unexpected(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, UPLINKS[:-1], "-o", "json")
    report = json.loads(out)
    assert code == 1
    assert report["unexpected"] == [{"a": "leaf04:Ethernet6", "b": "spine02:Ethernet4",
                                     "status": "confirmed", "tier": "leaf-spine"}]
    assert report["missing"] == report["miswired"] == []


def test_extra_planned_cable_is_one_missing(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, [*UPLINKS, ["leaf01:Ethernet7", "spine01:Ethernet5"]],
                         "-o", "json")
    report = json.loads(out)
    assert code == 1
    assert [(m["a"], m["b"], m["entry"]) for m in report["missing"]] == [
        ("leaf01:Ethernet7", "spine01:Ethernet5", 8)]
    assert report["miswired"] == report["unexpected"] == []


def test_hosts_option_reports_unplanned_host_cables(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, UPLINKS, "--hosts", "-o", "json")
    assert code == 1
    assert len(json.loads(out)["unexpected"]) == 16


def test_malformed_plan_exits_2_naming_file_entry_and_reason(capsys, tmp_path):
    text = "- [leaf01:Ethernet5, spine01:Ethernet1]\n- [leaf02, spine01:Ethernet2]\n"
    code, out, err = check(capsys, tmp_path, text)
    assert (code, out) == (2, "")
    assert err == f"fabcorr: {tmp_path / 'plan.yaml'}: entry 1 (line 2): 'leaf02' is not " \
                  "DEVICE:PORT\n"


def test_unreadable_plan_exits_2(capsys, tmp_path):
    code = main(["topology", "check", "--plan", str(tmp_path / "nope.yaml"),
                 "--snapshot", SNAPSHOT])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"fabcorr: {tmp_path / 'nope.yaml'}: cannot read")


def test_plan_option_is_required(capsys):
    assert main(["topology", "check", "--snapshot", SNAPSHOT]) == 2
    assert capsys.readouterr().err == (
        "fabcorr: topology check: the following arguments are required: --plan\n")
