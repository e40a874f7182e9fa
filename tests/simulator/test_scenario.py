"""Scenario files: the examples parse, bad ones name the file, the key and the reason."""

from pathlib import Path

import pytest

from inventory.errors import ConfigError
from simulator.generator import generate_facts
from simulator.scenario import (
    Duty,
    IpReuse,
    LinkDown,
    Message,
    Noisy,
    SwitchDown,
    check_names,
    load_scenario,
    scenario_from,
)

SCENARIOS = Path(__file__).parents[2] / "simulator" / "scenarios"
JOB = {"tenant": "a", "name": "llm", "pods": 2}


def _doc(**extra):
    return {"fabric": {"nodes": 4, "rails": 1, "leaves_per_rail": 2, "spines": 2},
            "jobs": [dict(JOB)], **extra}


def test_demo_scenario_parses():
    scenario = load_scenario(SCENARIOS / "demo.yaml")
    fabric = scenario.fabric
    assert (fabric.nodes, fabric.rails, fabric.leaves_per_rail, fabric.spines) == (16, 2, 2, 2)
    assert fabric.uplinks_per_leaf < fabric.nodes_per_leaf  # oversubscribed
    assert {t.pattern for t in scenario.traffic} == {"ring", "tree", "all-to-all"}
    assert len({t.tenant for t in scenario.traffic}) == 3
    assert [type(e) for e in scenario.events] == [Noisy, IpReuse]
    check_names(scenario, generate_facts(fabric))


def test_failures_scenario_parses():
    scenario = load_scenario(SCENARIOS / "failures.yaml")
    assert scenario.events == (LinkDown(20, "leaf01", "Ethernet9"), SwitchDown(40, "spine02"))
    check_names(scenario, generate_facts(scenario.fabric))


def test_defaults_and_every_key():
    scenario = scenario_from(_doc(
        sampling_rate=1000, interval_s=5, seconds=30, seed=3, counter_every_s=2, start=1e9,
        events=[{"at": 9, "switch_down": "spine01"}, {"at": 2, "noisy": {"job": "a/llm",
                                                                        "gbps": 300}}]))
    assert (scenario.sampling_rate, scenario.interval_s, scenario.seconds, scenario.seed,
            scenario.counter_every_s, scenario.start_time) == (1000, 5, 30, 3, 2, 1e9)
    assert [e.at for e in scenario.events] == [2, 9]  # sorted by time
    job = scenario.traffic[0]
    assert (job.key, job.pattern, job.gbps, job.duty, job.message) == (
        "a/llm", "ring", 100.0, None, None)
    message = {"write_bytes": 65536, "sends": 2, "send_bytes": 512}
    with_message = scenario_from({"jobs": [{**JOB, "message": message}]})
    assert with_message.traffic[0].message == Message(65536, 2, 512)
    assert scenario_from({"jobs": [{**JOB, "message": {"write_bytes": 9}}]}).traffic[
        0].message == Message(9, 0, 256)
    assert scenario_from(_doc()).start_time == scenario.fabric.start_time + 3600


def test_oversubscription_sets_uplinks_per_leaf():
    doc = _doc()
    doc["fabric"] = {"nodes": 16, "rails": 1, "leaves_per_rail": 1, "spines": 2,
                     "oversubscription": 3}
    assert scenario_from(doc).fabric.uplinks_per_leaf == 6  # ceil(16 / 3) = 6, 3 per spine


def test_duty_cycle_on_time():
    duty = Duty(on_s=2, off_s=1, phase_s=0.5)
    assert duty.on_time(0, 3) == 2.0
    assert duty.on_time(0, 0.5) == duty.on_time(2.5, 3.5) == 0.0  # off phases
    assert (duty.on_time(0.5, 2.5), duty.on_time(3, 4)) == (2.0, 0.5)
    assert sum(duty.on_time(t, t + 1) for t in range(30)) == pytest.approx(20)


@pytest.mark.parametrize(("doc", "key", "reason"), [
    ([], "", "a scenario is a mapping"),
    ({"jobs": [JOB], "sampling": 5}, "sampling", "unknown key"),
    ({"jobs": []}, "jobs", "non-empty list"),
    ({"jobs": [JOB, JOB]}, "jobs[1]", "defined twice"),
    ({"jobs": [{**JOB, "pattern": "mesh"}]}, "jobs[0].pattern", "one of ring, tree"),
    ({"jobs": [{**JOB, "gbps": "fast"}]}, "jobs[0].gbps", "expected a number"),
    ({"jobs": [{**JOB, "pods": 0}]}, "jobs[0].pods", "must be >= 1"),
    ({"jobs": [{"name": "x"}]}, "jobs[0].tenant", "non-empty string"),
    ({"jobs": [{**JOB, "duty": {"on_s": 1}}]}, "jobs[0].duty.off_s", "missing"),
    ({"jobs": [{**JOB, "message": {"sends": 1}}]}, "jobs[0].message.write_bytes", "missing"),
    ({"jobs": [{**JOB, "message": {"write_bytes": 0}}]}, "jobs[0].message.write_bytes",
     "must be >= 1"),
    ({"jobs": [{**JOB, "message": {"write_bytes": 9, "sends": -1}}]},
     "jobs[0].message.sends", "must be >= 0"),
    ({"jobs": [{**JOB, "message": 4096}]}, "jobs[0].message", "expected a mapping"),
    ({"jobs": [{**JOB, "message": {"write_bytes": 9, "size": 1}}]}, "jobs[0].message.size",
     "unknown key"),
    ({"jobs": [{**JOB, "duty": {"on_s": 0, "off_s": 0}}]}, "jobs[0].duty", "positive"),
    ({"jobs": [{**JOB, "duty": {"on_s": 1, "off_s": 1, "of": 1}}]}, "jobs[0].duty.of",
     "unknown key"),
    ({"jobs": [JOB], "fabric": {"node": 2}}, "fabric.node", "unknown key"),
    ({"jobs": [JOB], "fabric": {"nodes": "x"}}, "fabric.nodes", "expected int"),
    ({"jobs": [{**JOB, "pods": 99}], "fabric": {"nodes": 2}}, "fabric", "NICs"),
    ({"jobs": [JOB], "fabric": {"uplinks_per_leaf": 2, "oversubscription": 2}},
     "fabric.oversubscription", "not both"),
    ({"jobs": [JOB], "fabric": {"oversubscription": 0.5}}, "fabric.oversubscription",
     "must be >= 1"),
    ({"jobs": [JOB], "seconds": 0}, "seconds", "must be >= 1"),
    ({"jobs": [JOB], "seed": True}, "seed", "expected an integer"),
    ({"jobs": [JOB], "events": {}}, "events", "list of events"),
    ({"jobs": [JOB], "events": [{"at": 1}]}, "events[0]", "exactly one of"),
    ({"jobs": [JOB], "events": [{"at": 1.5, "switch_down": "s"}]}, "events[0].at",
     "expected an integer"),
    ({"jobs": [JOB], "events": [{"at": 60, "switch_down": "s"}]}, "events[0].at",
     "before the end"),
    ({"jobs": [JOB], "events": [{"at": 1, "noisy": {"job": "b/x", "gbps": 1}}]},
     "events[0].noisy.job", "no job 'b/x' (jobs: a/llm)"),
    ({"jobs": [JOB], "events": [{"at": 1, "noisy": {"job": "a/llm", "gbps": 800}}]},
     "events[0].noisy.gbps", "exceeds the NIC speed"),
    ({"jobs": [JOB], "events": [{"at": 1, "noisy": "a/llm"}]}, "events[0].noisy",
     "expected a mapping"),
    ({"jobs": [JOB], "events": [{"at": 1, "link_down": "leaf01"}]}, "events[0].link_down",
     "SWITCH:PORT"),
    ({"jobs": [JOB], "events": [{"at": 1, "ip_reuse": {"from": "a", "to": "b/p"}}]},
     "events[0].ip_reuse.from", "namespace/pod"),
    ({"jobs": [JOB], "events": [{"at": 1, "ip_reuse": {"from": "a/p", "to": "b/p",
                                                        "job": "a/llm"}}]},
     "events[0].ip_reuse.job", "not in the namespace of b/p"),
    ({"jobs": [JOB], "events": [{"at": 1, "switch_down": ""}]}, "events[0].switch_down",
     "switch name"),
])
def test_bad_scenarios_name_the_key(doc, key, reason):
    with pytest.raises(ConfigError) as caught:
        scenario_from(doc, "s.yaml")
    assert (caught.value.source, caught.value.key) == ("s.yaml", key)
    assert reason in caught.value.reason


@pytest.mark.parametrize(("event", "key", "reason"), [
    ({"ip_reuse": {"from": "a/nobody", "to": "b/p"}}, "events[0].ip_reuse.from",
     "no pod a/nobody"),
    ({"ip_reuse": {"from": "a/llm-worker-0", "to": "a/llm-worker-1"}}, "events[0].ip_reuse.to",
     "already exists"),
    ({"link_down": "leaf01:Ethernet99"}, "events[0].link_down", "no port Ethernet99"),
    ({"switch_down": "spine09"}, "events[0].switch_down", "no switch spine09"),
])
def test_names_are_checked_against_the_facts(event, key, reason):
    scenario = scenario_from(_doc(events=[{"at": 1, **event}]), "s.yaml")
    with pytest.raises(ConfigError) as caught:
        check_names(scenario, generate_facts(scenario.fabric))
    assert (caught.value.key, reason in caught.value.reason) == (key, True)


def test_unreadable_file_is_a_config_error(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("jobs: [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not YAML"):
        load_scenario(bad)
