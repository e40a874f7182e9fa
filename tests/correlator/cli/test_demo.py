"""``fabcorr demo`` end to end (real time, about a minute each, one after the other): the
service against the emulated fabric, scored against the ground truth. The demo runs as
``make demo`` runs it (two of the leaves over SNMP), on a port of its own; then both over
three shards behind an inlet (``--shards 3``)."""

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from correlator.cli.demo import events, shipped
from correlator.shards import owner
from simulator.generator import generate_facts
from simulator.scenario import load_scenario
from tests.correlator.service.running import free_port, in_session, left_behind
from topology.queries import summary
from topology.schema import port_id
from topology.snapshot import load_snapshot

MAKE_DEMO = ("--snmp", "leaf02,leaf04")  # what the Makefile's demo target adds
DEADLINE_S = 600  # a demo takes about a minute; only a hung one comes near this


def run_demo(out: Path, *options: str) -> tuple[int, str]:
    """``fabcorr demo`` with ``options`` until it exits (killed past the deadline); its exit
    code and output. It must leave no process behind."""
    process = _demo(out, *options, stdout=subprocess.PIPE)
    try:
        output, _ = process.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        left_behind(process)  # the demo and all it started
        output, _ = process.communicate()
        pytest.fail(f"fabcorr demo still running after {DEADLINE_S} s:\n{output}")
    left = left_behind(process)
    assert not left, f"fabcorr demo left running: {left}\n{output}"
    return process.returncode, output


def _demo(out: Path, *options: str, stdout: object) -> subprocess.Popen:
    """``fabcorr demo`` started in a session of its own (see :func:`left_behind`)."""
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
         "sys.exit(main())", "demo", "--out", str(out), "--listen",
         f"127.0.0.1:{free_port()}", *options],
        stdout=stdout, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def shown(demos: dict[str, tuple[int, str, Path]], name: str) -> tuple[int, str, Path]:
    """The demo ``name`` of ``demos``: its output printed, so that pytest shows the whole of
    it with any failure of the test."""
    print(demos[name][1])
    return demos[name]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    found = {}
    for name, options in (("demo", MAKE_DEMO), ("failures", ("--scenario", "failures"))):
        out = tmp_path_factory.mktemp(name)
        found[name] = (*run_demo(out, *options), out)
    return found


def test_the_demo_finds_the_noisy_tenant_two_intervals_after_it_starts_and_passes(runs):
    """The noisy job starts at +5 s: its cable is hot from then, a hotspot at the end of
    its second hot interval (+15 s). The counters are read every second, out of step with
    the 5 s intervals, so when congestion starts between two readings the interval before
    can get a share of its first ECN marks (0 to 1.6 M a second: a few milliseconds of them
    pass the threshold), and the hotspot then starts at +0 s and is reported at +10 s:
    one interval early, never late."""
    code, out, _ = shown(runs, "demo")
    assert code == 0, out
    assert "verdict: pass" in out
    lines = out.splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("  HOTSPOT"))
    since = re.match(r"  HOTSPOT leaf01:Ethernet9 out: .* since \+(\d+) s ", lines[first])
    assert since and since.group(1) in ("0", "5"), out
    reported = re.match(r"\s+\+(\d+) s  ", lines[first - 1])
    assert reported and int(reported.group(1)) == int(since.group(1)) + 10, out
    assert re.search(r"culprits:  team-c \d+% \(\d+%-\d+%, \d+ samples\); "
                     r"jobs team-c/sweep", out)
    assert "noisy neighbour: team-c sends" in out
    assert "hotspots: 2 true, 2 reported, precision 100%, recall 100%, culprit right 100%" \
        in out


def _announced(out: str, expected: list[tuple[int, str]]) -> None:
    """Each scripted event is announced once its moment has come: before every interval
    line that ends after it (the service cannot report a time the emulator has not reached).
    Interval lines that end before it may come after it: a busy machine reports late."""
    lines = out.splitlines()
    found = [n for n, line in enumerate(lines) if "  EVENT " in line]
    assert [lines[n] for n in found] == [f"  {f'+{at} s':>6}  EVENT {text}"
                                         for at, text in expected], out
    ends = {n: int(m.group(1)) for n, line in enumerate(lines)
            if (m := re.match(r"\s+([+-]\d+) s  ", line)) and "EVENT" not in line}
    for n, (at, _) in zip(found, expected, strict=True):
        assert all(end <= at for k, end in ends.items() if k < n), out


def test_events_are_named_as_people_know_them():
    """The announcements of the shipped scenarios, from the scenario and the fabric's facts
    (the handover's IPs are the ended pod's)."""
    found = {}
    for name, path in shipped().items():
        scenario = load_scenario(path)
        found[name] = events(scenario, generate_facts(scenario.fabric))
    assert found == {
        "demo": [(5.0, "noisy job: team-c/sweep (tenant team-c) starts sending 170 Gb/s per NIC"),
                 (20.0, "fixed-IP handover: team-a/eval-1 (tenant team-a, job team-a/eval) "
                        "ends; team-b/bert-large-worker-4 (tenant team-b, job "
                        "team-b/bert-large) takes its VFs and IPs 10.101.0.11, 10.102.0.11")],
        "failures": [(20.0, "link down: the cable at leaf01:Ethernet9 carries nothing"),
                     (40.0, "switch down: spine02 stops answering management and telemetry "
                            "(it still forwards)")]}


def test_the_demo_announces_the_noisy_job_and_the_ip_handover_as_they_happen(runs):
    _, out, _ = shown(runs, "demo")
    _announced(out, [
        (5, "noisy job: team-c/sweep (tenant team-c) starts sending 170 Gb/s per NIC"),
        (20, "fixed-IP handover: team-a/eval-1 (tenant team-a, job team-a/eval) ends; "
             "team-b/bert-large-worker-4 (tenant team-b, job team-b/bert-large) takes its VFs "
             "and IPs 10.101.0.11, 10.102.0.11")])


def test_a_switch_that_stops_answering_is_reported_down_and_the_rest_stays_accurate(runs):
    _switch_down_reported(shown(runs, "failures"))


def _switch_down_reported(run: tuple[int, str, Path]) -> None:
    """The failures scenario's events announced, spine02 not answering from +40 s on, and
    the rest accurate."""
    code, out, _ = run
    assert code == 0, out
    _announced(out, [(20, "link down: the cable at leaf01:Ethernet9 carries nothing"),
                     (40, "switch down: spine02 stops answering management and telemetry "
                          "(it still forwards)")])
    lines = [line for line in out.splitlines()
             if re.match(r"\s+\+\d+ s  ", line) and "EVENT" not in line]
    down = [int(re.match(r"\s+\+(\d+)", line).group(1)) for line in lines
            if "not answering: spine02" in line]
    assert down and min(down) >= 40  # the scenario stops spine02 at 40 s
    assert all("not answering" not in line for line in lines
               if int(re.match(r"\s+\+(\d+)", line).group(1)) < 40)
    assert "verdict: pass" in out


def test_a_failed_cable_disappears_from_the_fabric_and_its_paths(runs):
    """The emulated switches report the cable's ports down with no LLDP neighbour; the
    service's rediscovery drops it, so no path uses it (the model's flows left it too)."""
    folder = shown(runs, "failures")[2]
    fabric = load_snapshot(folder / "topology.json")  # the last fabric the service built
    assert fabric.peer(port_id("leaf01", "Ethernet9")) is None
    assert fabric.peer(port_id("spine01", "Ethernet1")) is None
    assert fabric.peer(port_id("leaf01", "Ethernet10")) == port_id("spine01", "Ethernet2")
    # 16 leaf-spine cables, one down; spine02 stopped answering at 40 s: its cables stay,
    # from what it said before
    assert summary(fabric).links["leaf-spine"] == {"confirmed": 15}


def test_a_machine_too_busy_for_the_lead_sets_up_again_then_gives_up(tmp_path):
    """With a lead into the past the service is never ready before the traffic's start: the demo
    says so, sets up again with the next lead, and after the last one exits 2 with one
    line, leaving no process behind (its emulated switches and service stopped)."""
    code = ("import sys; import correlator.cli.demo as demo; demo._LEADS_S = (-60.0, -60.0); "
            "from correlator.cli.main import main; sys.exit(main())")
    done = subprocess.run(
        [sys.executable, "-c", code, "demo", "--out", str(tmp_path), "--listen",
         f"127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.count("setting up again with more lead") == 2
    assert done.stderr.strip().splitlines() == [
        "fabcorr: fabcorr run was not ready -60 s after setting up, when the traffic was to "
        "start: too slow a machine"]


def test_sigterm_stops_the_demo_and_its_service_mid_traffic(tmp_path):
    """SIGTERM to the demo alone, once its traffic runs: it says so, stops its service
    (which had been running in its session) and exits 0, leaving no process behind."""
    log = tmp_path / "demo.out"
    with log.open("w") as stream:
        process = _demo(tmp_path / "out", stdout=stream)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while "traffic starts at" not in log.read_text():
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        services = in_session(process)
        process.send_signal(signal.SIGTERM)
        code = process.wait(120)
    finally:
        left = left_behind(process)
    assert [" ".join(c.split()[-3:-1]) for c in services] == ["run --config"], services
    assert (code, left) == (0, []), log.read_text()
    assert "interrupted" in log.read_text().splitlines()


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The demo and the failures over three shards behind an inlet."""
    found = {}
    for name, options in (("demo", MAKE_DEMO), ("failures", ("--scenario", "failures"))):
        out = tmp_path_factory.mktemp(f"{name}-shards")
        found[name] = (*run_demo(out, *options, "--shards", "3"), out)
    return found


def test_the_demo_over_three_shards_behind_an_inlet_scores_their_union_and_passes(sharded):
    """The switches send to the inlet, which forwards each datagram to its switch's shard;
    the demo follows the shards' merged answers and scores the union of their logs, which
    `fabcorr simulate score` with a --log per shard scores alike; no link direction of an
    interval is in two shards' logs."""
    code, out, folder = shown(sharded, "demo")
    assert code == 0, out
    assert "3 shards (fabcorr run --shard I/3) and fabcorr inlet ready after " in out
    assert re.search(r"  HOTSPOT leaf01:Ethernet9 out: .* since \+(0|5) s ", out), out
    assert re.search(r"culprits:  team-c \d+% \(\d+%-\d+%, \d+ samples\); "
                     r"jobs team-c/sweep", out)
    assert "hotspots: 2 true, 2 reported, precision 100%, recall 100%, culprit right 100%" \
        in out
    logs = [folder / f"shard-{index}" / "attribution.jsonl" for index in range(3)]
    assert " ".join(f"--log {log}" for log in logs) in out
    assert out.rstrip().endswith("verdict: pass")
    seen: Counter = Counter()
    for log in logs:
        for line in log.read_text().splitlines():
            record = json.loads(line)["attribution"]
            if not record["replaces"]:
                seen.update((record["start"], link["port"], link["direction"])
                            for link in record["links"] if link["samples"])
    assert seen and max(seen.values()) == 1
    assert {owner(port.removeprefix("port:").partition("/")[0], 3)
            for _, port, _ in seen} == {0, 1, 2}
    score = subprocess.run(
        [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
         "sys.exit(main())", "simulate", "score", "--truth", str(folder / "truth.jsonl"),
         *(f"--log={log}" for log in logs), "--hotspots", str(folder / "hotspots.json")],
        capture_output=True, text=True, timeout=DEADLINE_S)
    assert score.returncode == 0, score.stdout + score.stderr


def test_a_switch_down_over_three_shards_is_reported_by_its_shard(sharded):
    _switch_down_reported(shown(sharded, "failures"))
