"""Three shards replaying their share of the demo scenario give one process's answers.

Each shard is given the datagrams of its switches (split here by the shard hash of the
agent's switch, as an inlet splits them) and the counter readings of the whole run (it
keeps its ports' and their peers'). The union of their attributions per interval and
link direction is the single process's, exactly; so are the hotspots (each judged by one
shard), but for the jobs the CNPs of a cross-shard cable's reverse direction throttle; and
summed over the shards, the exporter's fabric totals are the single process's, while every
other series (link, hotspot and fabric series) comes from exactly one shard.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from correlator.cli import merge
from correlator.data import to_data
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.api import MAX_LIMIT, PREFIX, handle
from correlator.service.exporter import Exposition, families
from correlator.service.traffic import GROUPS
from correlator.shards import Shard, owner
from simulator.fabric_run import stream
from simulator.scenario import load_scenario
from simulator.traffic import TrafficModel
from simulator.truth import TruthRecorder
from tests.correlator.service import prometheus
from topology.build import build_graph
from topology.schema import NodeKind

SCENARIO = Path(__file__).parents[2] / "simulator" / "scenarios" / "demo.yaml"
SHARDS = 3


@pytest.fixture(scope="module")
def runs():
    scenario = load_scenario(SCENARIO)
    model = TrafficModel(scenario)
    recorder = TruthRecorder(model)
    datagrams = []
    for step in stream(model):
        recorder.observe()
        datagrams += step.datagrams
    fabric = build_graph(model.inventory_facts())
    switch_of = {s.mgmt_address: s.name for s in fabric.facts.switches}
    config = ReplayConfig(interval_s=scenario.interval_s)
    alone = replay(fabric, [(at, payload) for at, payload, _ in datagrams], recorder.readings,
                   config)
    shards = []
    for index in range(SHARDS):
        share = [(at, payload) for at, payload, agent in datagrams
                 if owner(switch_of[agent], SHARDS) == index]
        shards.append(replay(fabric, share, recorder.readings,
                             ReplayConfig(interval_s=scenario.interval_s,
                                          shard=Shard(index, SHARDS))))
    return fabric, alone, shards


def _links(result):
    return [((a.start, link.port, link.direction), to_data(link))
            for a in result.attributions for link in a.links]


def test_every_shard_has_a_share(runs):
    _, alone, shards = runs
    counts = [r.totals.datagrams for r in shards]
    assert all(counts) and sum(counts) == alone.totals.datagrams
    assert sum((Counter(r.totals.samples) for r in shards), Counter()) == alone.totals.samples


def test_the_union_of_the_shards_attributions_is_the_single_process(runs):
    _, alone, shards = runs
    union = [item for result in shards for item in _links(result)]
    keys = Counter(key for key, _ in union)
    assert max(keys.values()) == 1  # no direction attributed twice
    assert dict(union) == dict(_links(alone))  # none missed, each the same
    assert len(union) == 768 and sum(1 for _, link in union if link["samples"]) > 200
    for field in ("unattributed_samples",):
        assert sum(getattr(a, field) for r in shards for a in r.attributions) == sum(
            getattr(a, field) for a in alone.attributions)


def test_hotspots_are_judged_once_and_the_same(runs):
    fabric, alone, shards = runs
    found = [to_data(h) for result in shards for h in result.hotspots]
    expected = [to_data(h) for h in alone.hotspots]
    assert len(expected) >= 2
    key = lambda h: (h["port"], h["direction"], h["start"])  # noqa: E731
    assert sorted(map(key, found)) == sorted(map(key, expected))
    by_key = {key(h): h for h in expected}
    crossing = 0
    for hotspot in found:
        single = by_key[key(hotspot)]
        assert {**hotspot, "throttled": ()} == {**single, "throttled": ()}
        # the CNPs of the reverse direction are sampled by the sender's switch: on another
        # shard when the cable crosses shards
        ends = {owner(fabric.attrs(port)["switch"], SHARDS)
                for port in (hotspot["port"], hotspot["peer"])}
        crossing += len(ends) > 1
        assert hotspot["throttled"] == ([] if len(ends) > 1 else single["throttled"])
    assert crossing and any(by_key[key(h)]["throttled"] for h in found)


def _series(view, name):
    """A family's series by label values, without the shard label (checked)."""
    family = next(f for f in families(view) if f.name == name)
    if view.shard.count == 1:
        assert "shard" not in family.labels
        return dict(family.rows)
    assert family.labels[-1] == "shard"
    assert {labels[-1] for labels, _ in family.rows} <= {str(view.shard.index)}
    return {labels[:-1]: value for labels, value in family.rows}


def test_summed_over_shards_the_exported_totals_are_the_single_process(runs):
    fabric, alone, shards = runs
    views = [replay_view(fabric, result, Shard(i, SHARDS)) for i, result in enumerate(shards)]
    single = replay_view(fabric, alone)
    for name in ("fabcorr_tenant_fabric_bytes_per_second", "fabcorr_job_fabric_bytes_per_second"):
        summed: Counter = Counter()
        for view in views:
            summed.update(_series(view, name))
        expected = _series(single, name)
        assert summed.keys() == expected.keys() and expected
        assert {k: pytest.approx(v, rel=1e-12) for k, v in summed.items()} == expected
    for name in ("fabcorr_link_tenant_bytes_per_second", "fabcorr_link_bytes_per_second",
                 "fabcorr_link_speed_bytes_per_second", "fabcorr_pod_interface_info",
                 "fabcorr_job_info", "fabcorr_hotspot_active",
                 "fabcorr_hotspot_start_timestamp_seconds", "fabcorr_hotspot_noisy_neighbour",
                 "fabcorr_hotspot_culprit_share_ratio", "fabcorr_hotspot_victim_share_ratio",
                 "fabcorr_link_samples", "fabcorr_link_job_bytes_per_second",
                 "fabcorr_link_pod_bytes_per_second", "fabcorr_link_utilization_ratio",
                 "fabcorr_link_ecn_marked_packets_per_second"):
        per_shard = [_series(view, name) for view in views]
        union = {k: v for series in per_shard for k, v in series.items()}
        assert sum(map(len, per_shard)) == len(union)  # no series from two shards
        assert union == _series(single, name) and union, name


def test_a_shards_exposition_is_prometheus_clients_and_promtool_clean(runs):
    fabric, _, shards = runs
    view = replay_view(fabric, shards[0], Shard(0, SHARDS))
    exposition = Exposition(lambda: view)
    text = exposition.render()
    assert text == generate_latest(exposition.registry)
    assert b'fabcorr_ready{shard="0"} 1.0\n' in text
    assert not re.search(rb"^fabcorr_\w+ ", text, re.MULTILINE)  # no series without it
    promtool = prometheus.binary(prometheus.PROMTOOL)
    result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                            timeout=60)
    assert result.returncode == 0, (result.stdout + result.stderr).decode()


def _asker(view):
    def ask(endpoint, **params):
        status, body = handle(view, "GET", PREFIX + endpoint,
                              {k: [str(v)] for k, v in params.items()})
        assert status == 200, body
        return json.loads(json.dumps(body))  # as the CLI reads it
    return ask


def test_the_shards_answers_merged_are_the_single_process(runs):
    """The API answers of the three shards' views, merged as ``--server`` merges them
    (:mod:`correlator.cli.merge`), are the single process's about the last interval."""
    fabric, alone, shards = runs
    asks = [_asker(replay_view(fabric, result, Shard(i, SHARDS)))
            for i, result in enumerate(shards)]
    single = _asker(replay_view(fabric, alone))
    for group in GROUPS:  # sums in another order: the rates to the last bits
        for limit in (1, 3, 10):
            merged = merge.top([ask(f"top/{group}", limit=MAX_LIMIT) for ask in asks], limit)
            expected = single(f"top/{group}", limit=limit)
            assert merged == {**expected, "rows": [
                {**row, "bytes_per_second": pytest.approx(row["bytes_per_second"], rel=1e-12)}
                for row in expected["rows"]]}
            assert expected["rows"]
    ports = sorted(fabric.nodes_of(NodeKind.PORT))
    assert len(ports) == 48
    for port in ports:
        whos = [ask(f"links/{port}") for ask in asks]
        assert merge.who(whos) == single(f"links/{port}"), port
        tops = [ask("top/jobs", link=port) for ask in asks]
        assert merge.top_link(tops, whos) == single("top/jobs", link=port), port
    merged = merge.hotspots([ask("hotspots") for ask in asks])
    expected = single("hotspots")
    assert len(expected) >= 2
    for hotspot, alike in zip(merged, expected, strict=True):
        ends = {owner(fabric.attrs(port)["switch"], SHARDS)
                for port in (hotspot["port"], hotspot["peer"])}
        assert hotspot == (alike if len(ends) == 1 else {**alike, "throttled": []})
