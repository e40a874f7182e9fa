"""Scoring fabcorr against ground truth, case by case: shares and their bound, interval
alignment, true hotspots (a cable judged once), matching, culprits, onset to report; the
truth recorder and its file; what fabcorr reported, read back; ``fabcorr simulate score``."""

import json

import pytest

from correlator.cli.main import main
from correlator.data import to_data
from inventory.errors import ConfigError
from simulator.reported import read_hotspots, read_log
from simulator.scenario import scenario_from
from simulator.score import Episode, Limits, ScoreError, score
from simulator.traffic import TrafficModel, TruthKey
from simulator.truth import TruthRecord, TruthRecorder, read_truth, write_truth

T0 = 1_000_000.0
HOST = "port:leaf01/Ethernet1"
UP, SPINE = "port:leaf01/Ethernet9", "port:spine01/Ethernet1"
LIMITS = Limits(intervals=2)
LINK_BYTES = 10_000


def _truth(start, tenants=None, signals=None, down=(), where=("leaf01", "Ethernet1", "in")):
    """One 10 s truth interval: ``tenants`` {tenant: bytes} on ``where`` (a port direction),
    ``signals`` {(switch, port, direction): {kind: value}}; leaf01:Ethernet9 is cabled to
    spine01:Ethernet1."""
    keys = {TruthKey(*where, f"tenant:{t}", f"job:{t}/j", f"pod:{t}/p"): b
            for t, b in (tenants or {}).items()}
    return TruthRecord(start, start + 10, keys, signals or {}, {UP: SPINE, SPINE: UP}, down)


def _link(samples, start=T0, port=HOST, **tenants):
    """A link direction as fabcorr reports it, LINK_BYTES counted: tenant -> (share, low,
    high), or (share, low, high, bytes low, bytes high); without the bytes, the shares'
    bounds times LINK_BYTES."""
    return {"port": port, "direction": "in", "start": start, "samples": samples,
            "counter_bytes": LINK_BYTES, "estimated_bytes": LINK_BYTES * 1.1,
            "tenants": [{"name": f"tenant:{t}", "share": v[0], "share_low": v[1],
                         "share_high": v[2], "bytes": v[0] * LINK_BYTES,
                         "low": v[3] if len(v) > 3 else v[1] * LINK_BYTES,
                         "high": v[4] if len(v) > 3 else v[2] * LINK_BYTES}
                        for t, v in tenants.items()]}


def _attribution(start, *links):
    return {"start": start, "seconds": 10.0, "links": list(links)}


def _hotspot(port, start, end=None, culprit="a"):
    return {"port": port, "direction": "out", "start": start, "end": end,
            "culprits": [{"name": f"tenant:{culprit}"}] if culprit else []}


def test_a_link_interval_is_within_when_every_tenant_is_inside_its_bound():
    truth = [_truth(T0, {"a": 600, "b": 400}), _truth(T0 + 10, {"a": 700, "b": 300})]
    report = score(truth, [
        _attribution(T0, _link(200, a=(0.62, 0.55, 0.65), b=(0.38, 0.35, 0.45)),
                     _link(99, port=UP, a=(1.0, 0.9, 1.0))),  # too few samples: not scored
        _attribution(T0 + 10, _link(200, T0 + 10, a=(0.64, 0.6, 0.69), b=(0.36, 0.31, 0.4)))],
        [])
    assert (report.link_intervals, report.within, report.within_fraction) == (2, 1, 0.5)
    assert report.mean_share_error == pytest.approx((0.02 + 0.02 + 0.06 + 0.06) / 4)
    assert [(m.start, m.tenant, m.true_share) for m in report.misses] == [
        (T0 + 10, "tenant:a", 0.7), (T0 + 10, "tenant:b", pytest.approx(0.3))]
    assert report.failures == ("shares within the 95 % bound in 50.0% of 2 link-intervals "
                               "(target 95%)",)
    assert not report.passed


def test_a_tenant_fabcorr_did_not_see_has_the_exact_bound_of_zero_samples():
    # (1 - p)^1000 = 0.05: p = 1 - exp(ln 0.05 / 1000) = 0.0029912 (the "rule of three")
    high = 0.0029912
    truth = [_truth(T0, {"a": 9970, "b": 29}), _truth(T0 + 10, {"a": 9900, "b": 100})]
    report = score(truth, [_attribution(T0, _link(1000, a=(1.0, 0.996, 1.0))),
                           _attribution(T0 + 10, _link(1000, T0 + 10, a=(1.0, 0.996, 1.0)))],
                   [])
    # at T0, b's 29 / 9999 = 0.0029 is inside [0, 0.0029912]; at T0 + 10, a's 99 % is
    # below 99.6 % and b's 1 % above the bound
    assert [(m.start, m.tenant, m.share, m.share_high) for m in report.misses] == [
        (T0 + 10, "tenant:a", 1.0, 1.0), (T0 + 10, "tenant:b", 0.0, pytest.approx(high,
                                                                                   abs=1e-7))]
    assert report.within == 1


@pytest.mark.parametrize(("b_bytes", "within"), [(299, 1), (331, 0)])
def test_the_absent_bound_at_its_limit(b_bytes, within):
    """With 100 samples the bound is 1 - 0.05^(1/100) = 0.029513; the scorer allows 0.001
    of slack: 299 / 10299 = 0.02903 is in, 331 / 10331 = 0.03204 is out."""
    truth = [_truth(T0, {"a": 10_000, "b": b_bytes})]
    report = score(truth, [_attribution(T0, _link(100, a=(1.0, 0.95, 1.0)))], [])
    assert report.within == within


def test_bytes_inside_their_interval_are_counted_beside_the_shares():
    """Link of 10,000 bytes: a truly sent 6,000 and b 4,000. a's bytes interval
    [5,000, 5,900] misses 6,000 though its share interval holds 0.6; b's [3,500, 4,500]
    holds 4,000; c, unreported, sent nothing: inside [0, bound x 10,000]."""
    truth = [_truth(T0, {"a": 6000, "b": 4000, "c": 0})]
    report = score(truth, [_attribution(T0, _link(
        200, a=(0.55, 0.5, 0.65, 5000, 5900), b=(0.4, 0.35, 0.45, 3500, 4500)))], [])
    assert report.within == 1
    assert (report.tenant_intervals, report.bytes_within) == (3, 2)
    assert report.bytes_within_fraction == pytest.approx(2 / 3)


def test_an_unreported_tenant_bytes_bound_is_the_absent_share_of_the_link():
    """200 samples: bound 1 - 0.05^(1/200) = 0.014867 of 10,000 bytes = 148.67 (+0.1 %)."""
    for sent, inside in ((148, True), (150, False)):
        truth = [_truth(T0, {"a": 10_000 - sent, "b": sent})]
        report = score(truth, [_attribution(T0, _link(
            200, a=(1.0, 0.9, 1.0, 0, 20_000)))], [])
        assert report.bytes_within == 1 + inside, sent


@pytest.mark.parametrize(("kind", "limit"), [("utilization", 0.8), ("pfc", 100.0),
                                             ("ecn", 1000.0), ("discards", 1.0)])
def test_a_signal_is_hot_at_its_limit_and_not_just_below(kind, limit):
    for value, hot in ((limit, True), (limit * (1 - 1e-9), False), (limit * 1.01, True)):
        signals = {("leaf01", "Ethernet9", "out"): {kind: value}}
        truth = [_truth(T0 + 10 * n, signals=signals) for n in range(2)]
        assert len(score(truth, [], [], LIMITS).true_hotspots) == hot, (kind, value)


def test_fabcorr_intervals_must_line_up_with_the_truth():
    truth = [_truth(T0, {"a": 1}), _truth(T0 + 10, {"a": 1})]
    before, after = _attribution(T0 - 10), _attribution(T0 + 20)
    assert score(truth, [before, _attribution(T0), after], []).ignored_intervals == 2
    with pytest.raises(ScoreError, match="does not match"):
        score(truth, [_attribution(T0 + 5)], [])
    with pytest.raises(ScoreError):
        score(truth, [{"start": T0, "seconds": 5.0, "links": []}], [])


def test_true_hotspots_take_n_hot_intervals_in_a_row_and_a_cable_is_judged_once():
    hot = {("spine01", "Ethernet1", "in"): {"utilization": 0.9, "bytes_per_s": 4.5e10},
           ("leaf01", "Ethernet9", "out"): {"utilization": 0.5, "ecn": 10.0}}
    blip = {("leaf01", "Ethernet2", "out"): {"pfc": 500.0}}
    truth = [_truth(T0, signals=hot), _truth(T0 + 10, signals={**hot, **blip}),
             _truth(T0 + 20, signals=hot), _truth(T0 + 30)]
    report = score(truth, [], [], LIMITS)
    # spine01 receiving what leaf01 sends is leaf01's out; one hot interval is no hotspot
    assert report.true_hotspots == (Episode(UP, "out", T0, T0 + 30),)
    assert (report.precision, report.recall) == (1.0, 0.0)


def test_matching_culprits_and_onset_to_report():
    hot = {("leaf01", "Ethernet9", "out"): {"ecn": 5000.0},
           ("leaf01", "Ethernet10", "out"): {"utilization": 0.95}}
    truth = []
    for n in range(4):
        record = _truth(T0 + 10 * n, signals=hot)
        bytes_ = {TruthKey("leaf01", "Ethernet9", "out", f"tenant:{t}", "", ""): b
                  for t, b in (("a", 300 if n < 2 else 100), ("b", 250))}
        bytes_ |= {TruthKey("leaf01", "Ethernet10", "out", "tenant:c", "", ""): 1}
        truth.append(TruthRecord(record.start, record.end, bytes_, hot, record.peers))
    reported = [_hotspot(UP, T0 + 10),  # found one interval late: hot at 10 and 20
                _hotspot("port:leaf01/Ethernet10", T0, T0 + 10, culprit=""),
                _hotspot("port:leaf02/Ethernet9", T0)]  # false
    report = score(truth, [], reported, LIMITS)
    assert [(e.port, e.start, e.end) for e in report.true_hotspots] == [
        ("port:leaf01/Ethernet10", T0, None), (UP, T0, None)]
    assert (report.precision, report.recall) == (2 / 3, 1.0)
    first, second = report.matches
    # on leaf01:Ethernet9, a sent 300 + 100 + 100 from 10 on, b 250 each time: b leads
    assert (second.port, second.culprit, second.true_culprit, second.culprit_ok) == (
        UP, "tenant:a", "tenant:b", False)
    assert (first.culprit, first.true_culprit, first.culprit_ok) == (None, "tenant:c", False)
    assert report.onset_to_report_s == (20.0, 30.0)  # reported at the end of 10 and 20
    assert report.culprit_accuracy == 0.0 and not report.passed


def test_nothing_hot_and_nothing_reported_is_perfect():
    report = score([_truth(T0, {"a": 5})], [_attribution(T0, _link(100, a=(1.0, 0.96, 1.0)))],
                   [])
    assert (report.within_fraction, report.precision, report.recall, report.culprit_accuracy,
            report.passed) == (1.0, 1.0, 1.0, 1.0, True)


def test_a_true_hotspot_on_a_switch_down_is_counted_and_flagged():
    hot = {("spine01", "Ethernet1", "in"): {"utilization": 0.9}}
    truth = [_truth(T0 + 10 * n, signals=hot, down=("spine01",)) for n in range(2)]
    report = score(truth, [], [], LIMITS)
    assert report.true_hotspots == (Episode(UP, "out", T0, None, down=True),)
    assert report.recall == 0.0


def _small_model(**extra):
    return TrafficModel(scenario_from({
        "fabric": {"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 1, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 360}],
        "sampling_rate": 100_000, "interval_s": 2, "seconds": 4, **extra}))


def test_the_recorder_keeps_counter_deltas_and_readings_and_the_file_round_trips(tmp_path):
    model = _small_model(events=[{"at": 2, "switch_down": "spine01"}])
    recorder = TruthRecorder(model)
    while not model.done:
        model.step()
        recorder.observe()
    first, second = recorder.records
    assert (first.start - model.start, first.end - model.start, second.down_switches) == (
        0.0, 2.0, ("spine01",))
    names = {(n.switch, n.port, n.direction) for n in first.bytes}
    assert {(s, p, d) for s, p, d in first.signals} == names
    for (switch, port, direction), values in first.signals.items():
        octets = sum(b for k, b in first.bytes.items() if (k.switch, k.port, k.direction) == (
            switch, port, direction))
        assert values["bytes_per_s"] == octets / 2
        assert values["utilization"] == octets * 8 / 2 / 400e9
    key = next(iter(first.bytes))
    assert (key.tenant, key.job, key.pod[:14]) == ("tenant:a", "job:a/llm", "pod:a/llm-work")
    # the two leaves' uplinks are cabled to spine01; readings: every port at 0, 2, 4 s
    # but spine01's once it is down
    assert first.peers == {"port:leaf01/Ethernet2": "port:spine01/Ethernet1",
                           "port:spine01/Ethernet1": "port:leaf01/Ethernet2",
                           "port:leaf02/Ethernet2": "port:spine01/Ethernet2",
                           "port:spine01/Ethernet2": "port:leaf02/Ethernet2"}
    by_time = {}
    for reading in recorder.readings:
        by_time.setdefault(reading.at - model.start, set()).add(reading.switch)
    assert by_time == {0.0: {"leaf01", "leaf02", "spine01"}, 2.0: {"leaf01", "leaf02",
                                                                  "spine01"},
                       4.0: {"leaf01", "leaf02"}}
    path = tmp_path / "truth.jsonl"
    write_truth(path, [first])
    write_truth(path, [second], append=True)
    assert read_truth(path) == recorder.records


def test_the_recorder_must_see_every_step():
    model = _small_model(interval_s=1)
    recorder = TruthRecorder(model, keep_readings=False)
    model.step()
    model.step()
    with pytest.raises(RuntimeError, match="every step"):
        recorder.observe()
    assert recorder.readings == []


def test_bad_truth_and_log_files_name_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"start": 1}\n')
    with pytest.raises(ConfigError, match="line 1"):
        read_truth(bad)
    with pytest.raises(ConfigError, match="line 1"):
        read_log(bad)
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="list of hotspots"):
        read_hotspots(bad)


def test_a_log_caught_mid_line_reads_as_its_whole_lines(tmp_path):
    """A service appending a line of many pages is seen part-written by a reader (seen in
    the sharded demo, which scores the shards' logs while they run): the part is left for
    the next read; a last whole line without its newline is read; a bad line before the
    last is still an error naming it."""
    lines = [json.dumps({"attribution": {"start": start, "seconds": 5}}) for start in (0, 5)]
    log = tmp_path / "log.jsonl"
    log.write_text(lines[0] + "\n" + lines[1][:20])
    assert read_log(log) == ([{"start": 0, "seconds": 5}], None)
    log.write_text(lines[0] + "\n" + lines[1])
    assert read_log(log) == ([{"start": 0, "seconds": 5}, {"start": 5, "seconds": 5}], None)
    log.write_text(lines[1][:20] + "\n" + lines[0] + "\n")
    with pytest.raises(ConfigError, match="line 1"):
        read_log(log)


def test_cli_scores_a_log_and_a_hotspot_list(tmp_path, capsys):
    hot = {("leaf01", "Ethernet9", "out"): {"utilization": 0.9}}
    truth = [_truth(T0 + 10 * n, {"a": 5}, hot, where=("leaf01", "Ethernet9", "out"))
             for n in range(2)]
    write_truth(tmp_path / "truth.jsonl", truth)
    link = _link(100, port=UP, a=(1.0, 0.96, 1.0)) | {"direction": "out"}
    (tmp_path / "log.jsonl").write_text("".join(
        json.dumps({"attribution": _attribution(T0 + 10 * n, {**link, "start": T0 + 10 * n}),
                    "received": {}}) + "\n" for n in range(2)))
    (tmp_path / "hot.json").write_text(json.dumps([_hotspot(UP, T0)]))
    args = ["simulate", "score", "--truth", str(tmp_path / "truth.jsonl"), "--log",
            str(tmp_path / "log.jsonl"), "--hotspots", str(tmp_path / "hot.json")]
    assert main([*args, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["within_fraction"], data["precision"], data["recall"], data["passed"],
            data["onset_to_report_s"]) == (1.0, 1.0, 1.0, True, [20.0])
    (tmp_path / "hot.json").write_text("[]")
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "FAIL: recall 0%" in out and "missed" in out
    assert main([*args, "--utilization", "0.95"]) == 0  # then nothing is truly hot
    assert main([*args, "--min-samples", "0"]) == 2
    write_truth(tmp_path / "truth.jsonl", [_truth(T0 + 5, {"a": 5})])
    assert main(args) == 2
    assert "does not match" in capsys.readouterr().err


def test_a_corrected_interval_counts_by_its_correction(tmp_path, capsys):
    """A provisional T0 whose shares miss the truth, T0 + 10, then T0's correction
    (``replaces``) inside it: the reader keeps T0's correction where T0 first came, and the
    scorer scores it; without the correction T0 is a miss."""
    write_truth(tmp_path / "truth.jsonl", [_truth(T0, {"a": 600, "b": 400}),
                                           _truth(T0 + 10, {"a": 600, "b": 400})])
    inside = _link(200, a=(0.62, 0.55, 0.65), b=(0.38, 0.35, 0.45))
    outside = _link(200, a=(0.9, 0.85, 0.95), b=(0.1, 0.05, 0.15))
    later = _link(200, T0 + 10, a=(0.62, 0.55, 0.65), b=(0.38, 0.35, 0.45))
    records = [_attribution(T0, outside) | {"provisional": True, "replaces": False},
               _attribution(T0 + 10, later) | {"provisional": False, "replaces": False},
               _attribution(T0, inside) | {"provisional": False, "replaces": True}]
    (tmp_path / "hot.json").write_text("[]")
    args = ["simulate", "score", "--truth", str(tmp_path / "truth.jsonl"), "--log",
            str(tmp_path / "log.jsonl"), "--hotspots", str(tmp_path / "hot.json"), "-o", "json"]
    found = []
    for logged in (records, records[:2]):
        (tmp_path / "log.jsonl").write_text("".join(
            json.dumps({"attribution": record, "received": {}}) + "\n" for record in logged))
        found.append(read_log(tmp_path / "log.jsonl"))
        main(args)
        data = json.loads(capsys.readouterr().out)
        found.append((data["link_intervals"], data["within"]))
    assert found == [([records[2], records[1]], None), (2, 2),
                     ([records[0], records[1]], None), (2, 1)]


def test_cli_reads_fabcorr_attribute_json(tmp_path, capsys):
    truth = [_truth(T0, {"a": 5})]
    write_truth(tmp_path / "truth.jsonl", truth)
    document = {"attributions": [_attribution(T0, _link(100, a=(1.0, 0.96, 1.0)))],
                "hotspots": [_hotspot(UP, T0)], "totals": {}, "rates": {}}
    (tmp_path / "run.json").write_text(json.dumps(to_data(document)))
    assert main(["simulate", "score", "--truth", str(tmp_path / "truth.jsonl"), "--log",
                 str(tmp_path / "run.json")]) == 1
    assert "precision 0%" in capsys.readouterr().out


def test_true_signals_by_hand_on_an_oversubscribed_uplink():
    """A ring of 4 pods on two leaves at 320G per NIC, one 400G uplink per leaf: each leaf
    uplink carries two flows, 640G offered (in full-MTU equivalents of 4178 wire bytes).
    Its ``out`` marks (1 - 400/640) of the packets sent, drops 1e-4 of the 240G excess
    (counted as out_discards and queue drops both), and the leaf pauses both feeding host
    ports for the throttled 3/8 of the second: those ports' ``in`` pfc."""
    model = TrafficModel(scenario_from({
        "fabric": {"nodes": 4, "rails": 1, "leaves_per_rail": 2, "spines": 1, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 4, "gbps": 320,
                  "message": {"write_bytes": 4096}}],
        "interval_s": 1, "seconds": 1}))
    recorder = TruthRecorder(model)
    model.step()
    (record,) = recorder.observe()
    uplink = next(h.egress for r in model.routes for h in r if h.switch == "leaf01"
                  and h.egress != r[-1].egress)
    sent = int(200e9 / 8 / (4174 + 20))  # WRITE ONLY units per flow, 200G each
    out = record.signals[("leaf01", uplink, "out")]
    assert out["ecn"] == round(2 * sent * (1 - 400 / 640))
    assert out["discards"] == 2 * round(240e9 / 8 / (4158 + 20) * 1e-4)
    octets = 2 * sent * (4174 + 66) + 2 * 20_000 * 78  # data and ACKs, CNPs coming back
    assert out["bytes_per_s"] == octets and out["utilization"] == octets * 8 / 400e9
    assert out["pfc"] == 0  # spine01 passes everything on: it pauses nobody
    pauses = round((1 - 400 / 640) * 400e9 / (65535 * 512))
    feeders = {r[0].ingress for r in model.routes if r[0].switch == "leaf01"}
    for port in feeders:
        assert record.signals[("leaf01", port, "in")]["pfc"] == pauses
        assert "ecn" not in record.signals[("leaf01", port, "in")]
