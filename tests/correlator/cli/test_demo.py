"""``fabcorr demo`` end to end (real time: about a minute each, run side by side): the
service against the emulated fabric, scored against the ground truth."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.correlator.service.running import free_port
from topology.queries import summary
from topology.schema import port_id
from topology.snapshot import load_snapshot

SCENARIOS = Path(__file__).parents[3] / "examples" / "scenarios"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    started, outs = {}, {}
    for name in ("demo", "failures"):
        out = outs[name] = tmp_path_factory.mktemp(name)
        started[name] = subprocess.Popen(
            [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
             "sys.exit(main())", "demo", "--scenario", str(SCENARIOS / f"{name}.yaml"),
             "--out", str(out), "--listen", f"127.0.0.1:{free_port()}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return {name: (process.wait(240), process.stdout.read(), outs[name])
            for name, process in started.items()}


def test_the_demo_finds_the_noisy_tenant_within_30_s_and_passes_its_score(runs):
    code, out, _ = runs["demo"]
    assert code == 0, out
    assert "verdict: pass" in out
    (first, *_) = re.findall(r"HOTSPOT (\S+ \w+): .*\[(\d+) s after the demo started\]", out)
    assert first[0] == "leaf01:Ethernet9 out" and int(first[1]) < 30, out
    assert re.search(r"culprits:  team-c \d+% \(\d+%-\d+%, \d+ samples\); "
                     r"jobs team-c/sweep", out)
    assert "noisy neighbour: tenant:team-c sends" in out
    assert "hotspots: 2 true, 2 reported, precision 100%, recall 100%, culprit right 100%" \
        in out


def test_a_switch_that_stops_answering_is_reported_down_and_the_rest_stays_accurate(runs):
    code, out, _ = runs["failures"]
    assert code == 0, out
    lines = [line for line in out.splitlines() if re.match(r"\s+\+\s*\d+ s", line)]
    down = [int(re.match(r"\s+\+\s*(\d+)", line).group(1)) for line in lines
            if "not answering: spine02" in line]
    assert down and min(down) >= 40  # the scenario stops spine02 at 40 s
    assert all("not answering" not in line for line in lines
               if int(re.match(r"\s+\+\s*(\d+)", line).group(1)) < 40)
    assert "verdict: pass" in out


def test_a_failed_cable_disappears_from_the_fabric_and_its_paths(runs):
    """The emulated switches report the cable's ports down with no LLDP neighbour; the
    service's rediscovery drops it, so no path uses it (the model's flows left it too)."""
    folder = runs["failures"][2]
    fabric = load_snapshot(folder / "topology.json")  # the last fabric the service built
    assert fabric.peer(port_id("leaf01", "Ethernet9")) is None
    assert fabric.peer(port_id("spine01", "Ethernet1")) is None
    assert fabric.peer(port_id("leaf01", "Ethernet10")) == port_id("spine01", "Ethernet2")
    # 16 leaf-spine cables, one down; spine02 stopped answering at 40 s: its cables stay,
    # from what it said before
    assert summary(fabric).links["leaf-spine"] == {"confirmed": 15}
