"""``fabcorr attribute``: each option changes the answer as its help says, on a small
capture built sample by sample over the four-node, two-tenant fabric.

Four 10 s intervals from ``T0``. spine01's agent samples 1-in-``RATE`` what enters
spine01:Ethernet1 from leaf01:Ethernet3: in every interval ``A_SAMPLES`` of a/llm-worker-0
and ``B_SAMPLES`` of b/cv-worker-0, all ``FRAME`` bytes. leaf01's agent reports
leaf01:Ethernet3's counters 1 s into every interval: ``OUT_OCTETS`` more octets sent
(utilization 0.5 of 400G) each time. The counter file gives leaf01:Ethernet4's PFC
pauses received, ECN marks and discards, ``PFC``, ``ECN`` and ``OUT_DISCARDS`` more every
10 s (64-bit: an sFlow Counter32 of discards over 10 s at 400G could wrap unseen, and
fabcorr rightly leaves it out). Rates exist from the second reading on: intervals 1, 2
and 3 have them. One more datagram goes to UDP port ``OTHER_PORT``: leaf02 sampled
a/llm-worker-1 entering leaf02:Ethernet1.
"""

import ipaddress
import json
import math
import re

import pytest
import yaml

from correlator.cli.main import main
from simulator import roce, sflow_wire
from simulator.generator import generate_facts
from simulator.pcap import write_pcap
from tests.correlator.attribution.bounds import share_bounds
from tests.correlator.attribution.conftest import A0, A1, B0, B1, SPEC, T0
from tests.correlator.cli.conftest import iso
from topology.build import build_graph
from topology.snapshot import save_snapshot

LEAF01, LEAF02, SPINE01 = "127.1.0.1", "127.1.0.2", "127.1.0.3"
SPEED = 400_000_000_000
RATE, A_SAMPLES, B_SAMPLES = 1000, 60, 30
OUT_OCTETS = SPEED // 8 * 10 // 2  # half of line rate over 10 s
OUT_DISCARDS, PFC, ECN = 5, 250, 5000  # per 10 s: 0.5/s, 25/s, 500/s
INTERVALS = 4
OTHER_PORT, OTHER_PORT_SAMPLES = 6399, 10  # one datagram from leaf02 to another UDP port
_MAC = bytes(6)


def _frame(src, dst):
    return roce.frame(_MAC, _MAC, ipaddress.ip_address(src).packed,
                      ipaddress.ip_address(dst).packed,
                      roce.payload(roce.WRITE_ONLY, 7, 1, 4000))


FRAME = len(_frame(A0, A1)) + 4  # with the FCS


def _datagrams():
    """(time, payload, agent, UDP port) of the capture."""
    out, seq = [], 0
    for k in range(INTERVALS):
        at = T0 + 10 * k + 1
        counters = sflow_wire.CounterSample(k + 1, 1003, sflow_wire.IfCounters(
            1003, speed=SPEED, out_octets=OUT_OCTETS * (k + 1)))
        uptime_ms = int(1000 * (at - T0))  # the agents started at T0
        out.append((at, sflow_wire.Datagram(LEAF01, 0, k + 1, uptime_ms, [counters]).encode(),
                    LEAF01, 6343))
        samples = []
        for src, dst, count in ((A0, A1, A_SAMPLES), (B0, B1, B_SAMPLES)):
            frame = _frame(src, dst)
            for _ in range(count):
                seq += 1
                samples.append(sflow_wire.FlowSample(
                    seq, 1001, RATE, RATE * seq, 0, sflow_wire.ifindex(1001),
                    sflow_wire.ifindex(1002), frame[:128], FRAME))
        out.append((at + 2, sflow_wire.Datagram(SPINE01, 0, k + 1, uptime_ms + 2000,
                                                samples).encode(), SPINE01, 6343))
    frame = _frame(A1, A0)
    other = [sflow_wire.FlowSample(n + 1, 1001, RATE, RATE * (n + 1), 0, sflow_wire.ifindex(1001),
                                   sflow_wire.ifindex(1003), frame[:128], FRAME)
             for n in range(OTHER_PORT_SAMPLES)]
    out.append((T0 + 5, sflow_wire.Datagram(LEAF02, 0, 1, 5000, other).encode(), LEAF02,
                OTHER_PORT))
    return sorted(out, key=lambda d: d[0])


def _readings():
    return [{"switch": "leaf01", "port": "Ethernet4", "at": T0 + 10 * k + 1,
             "values": {"pfc_rx_pause/3": PFC * k, "queue_ecn_marked/UC3": ECN * k,
                        "out_discards": OUT_DISCARDS * k}}
            for k in range(INTERVALS)]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    folder = tmp_path_factory.mktemp("attribute")
    save_snapshot(build_graph(generate_facts(SPEC)), folder / "topology.json")
    write_pcap(folder / "run.pcap", [(t, d, a, "192.0.2.99", port)
                                     for t, d, a, port in _datagrams()])
    (folder / "counters.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _readings()))
    return folder


def attribute(capsys, capture, *options, counters=True, fmt="json"):
    argv = ["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
            str(capture / "run.pcap"), *(["--counters", str(capture / "counters.jsonl")]
                                         if counters else []), *options, "-o", fmt]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if fmt == "json" else yaml.safe_load(out) if fmt == "yaml" else out


def bounds(c, n):
    """The 95 % bounds of the share of ``c`` of ``n`` equal frames (tests' own formula)."""
    return share_bounds(c, n, c / n)


def _link(attribution, port, direction):
    """The link direction's traffic in ``attribution``, None when not listed."""
    found = [x for x in attribution["links"]
             if (x["port"], x["direction"]) == (f"port:{port}", direction)]
    assert len(found) <= 1
    return found[0] if found else None


def cells(line):
    """A table row's cells (columns are two or more spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


def _busy(attribution):
    return sorted((x["port"], x["direction"]) for x in attribution["links"]
                  if x["samples"] or x["counter_bytes"])


def test_defaults_attribute_every_interval_and_find_no_hotspot(capsys, capture):
    result = attribute(capsys, capture)
    assert result["totals"]["datagrams"] == 2 * INTERVALS + 1
    assert result["totals"]["samples"] == {
        "counters": INTERVALS, "flow": INTERVALS * (A_SAMPLES + B_SAMPLES) + OTHER_PORT_SAMPLES}
    assert [(a["start"], a["seconds"]) for a in result["attributions"]] == [
        (T0 + 10 * k, 10.0) for k in range(INTERVALS)]
    n = A_SAMPLES + B_SAMPLES
    low, high = bounds(A_SAMPLES, n)
    for k, attribution in enumerate(result["attributions"]):
        spine = _link(attribution, "spine01/Ethernet1", "in")
        assert spine["samples"] == n
        assert spine["estimated_bytes"] == n * RATE * FRAME
        (a, b) = spine["tenants"]
        assert (a["name"], a["samples"], b["name"], b["samples"]) == (
            "tenant:a", A_SAMPLES, "tenant:b", B_SAMPLES)
        assert a["share"] == pytest.approx(A_SAMPLES / n, rel=1e-12)
        assert (a["share_low"], a["share_high"]) == pytest.approx((low, high), rel=1e-12)
        uplink = _link(attribution, "leaf01/Ethernet3", "out")
        # no rate before the second reading, then half of 400G over 10 s
        if k == 0:
            assert uplink is None
        else:
            assert (uplink["counter_bytes"], uplink["utilization"]) == (OUT_OCTETS, 0.5)
    assert _busy(result["attributions"][0]) == [("port:leaf02/Ethernet1", "in"),
                                                ("port:spine01/Ethernet1", "in")]
    assert result["hotspots"] == []  # 0.5 utilization, 0.5 discards/s, 25 PFC/s, 500 ECN/s


def test_samples_of_keys_beyond_an_intervals_flow_table_are_lost_counted_and_exit_3(
        capsys, capture):
    """One flow key an interval: spine01's first (tenant a's) is kept; tenant b's samples
    and leaf02's, each a key of its own, are lost and counted, and the run is partial."""
    code = main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), "--max-flows", "1", "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 3, err
    result = json.loads(out)
    assert result["totals"]["evictions"] == {"flows": INTERVALS * B_SAMPLES
                                             + OTHER_PORT_SAMPLES}
    for attribution in result["attributions"]:
        spine = _link(attribution, "spine01/Ethernet1", "in")
        assert spine["samples"] == A_SAMPLES
        assert [t["name"] for t in spine["tenants"]] == ["tenant:a"]
        assert _link(attribution, "leaf02/Ethernet1", "in") is None
    code = main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), "--max-flows", "1", "-o", "table"])
    assert code == 3
    assert f"Lost to full tables: {INTERVALS * B_SAMPLES + OTHER_PORT_SAMPLES} flows" in \
        capsys.readouterr().out.splitlines()


@pytest.mark.parametrize(("port", "datagrams", "flow"), [
    (6343, 2 * INTERVALS, INTERVALS * (A_SAMPLES + B_SAMPLES)),
    (OTHER_PORT, 1, OTHER_PORT_SAMPLES),
    (9, 0, 0),
])
def test_port_keeps_only_the_datagrams_sent_to_it(capsys, capture, port, datagrams, flow):
    result = attribute(capsys, capture, "--port", str(port), counters=False)
    assert result["totals"]["datagrams"] == datagrams
    assert result["totals"]["samples"].get("flow", 0) == flow
    leaf02 = [x for a in result["attributions"] for x in a["links"]
              if x["port"] == "port:leaf02/Ethernet1" and x["samples"]]
    assert [x["samples"] for x in leaf02] == ([OTHER_PORT_SAMPLES] if port == OTHER_PORT else [])


@pytest.mark.parametrize("seconds", [5, 20, 40])
def test_interval_cuts_the_run(capsys, capture, seconds):
    result = attribute(capsys, capture, "--interval", str(seconds), "--port", "6343")
    starts = [a["start"] for a in result["attributions"]]
    last_datagram = 10 * (INTERVALS - 1) + 3  # seconds after T0
    assert starts == [T0 + seconds * k for k in range(last_datagram // seconds + 1)]
    assert all(a["seconds"] == seconds for a in result["attributions"])
    # every sample of spine01 arrives 3 s into a 10 s step, in one datagram
    samples = [(_link(a, "spine01/Ethernet1", "in") or {"samples": 0})["samples"]
               for a in result["attributions"]]
    assert samples == [(A_SAMPLES + B_SAMPLES) * sum(
        1 for k in range(INTERVALS) if s <= T0 + 10 * k + 3 < s + seconds) for s in starts]
    last = _link(result["attributions"][-1], "leaf01/Ethernet3", "out")
    # the rate over the interval; none for one that starts before the first counters (T0 + 1)
    assert last["counter_bytes"] == (OUT_OCTETS / 10 * seconds if len(starts) > 1 else None)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--interval", "0", "--interval: must be >= 0.1, not 0"),
    ("--interval", "1e-9", "--interval: must be >= 0.1, not 1e-9"),
    ("--links", "-3", "--links: must be >= 1, not -3"),
    ("--top-pods", "0", "--top-pods: must be >= 1, not 0"),
    ("--hot-intervals", "0", "--hot-intervals: must be >= 1, not 0"),
    ("--utilization", "0", "hotspots: utilization: must be > 0, not 0.0"),
])
def test_bad_values_exit_2_naming_the_option(capsys, capture, option, value, message):
    code = main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), option, value])
    assert (code, capsys.readouterr().err) == (2, f"fabcorr: {message}\n")


@pytest.mark.parametrize("top", [1, 2])
def test_top_pods_lists_k_pods_then_other(capsys, capture, top):
    result = attribute(capsys, capture, "--top-pods", str(top))
    pods = _link(result["attributions"][0], "spine01/Ethernet1", "in")["pods"]
    expected = [("pod:a/llm-worker-0", A_SAMPLES), ("pod:b/cv-worker-0", B_SAMPLES)]
    if top == 1:
        expected = [expected[0], ("other", B_SAMPLES)]
    assert [(p["name"], p["samples"]) for p in pods] == expected


def test_links_shows_the_busiest_link_directions_in_tables(capsys, capture):
    out = attribute(capsys, capture, "--links", "1", "--port", "6343", fmt="table")
    blocks = out.split("\n\n")
    assert blocks[0].splitlines() == [
        "Intervals:           4", "Datagrams:           8",
        "Samples:             4 counters, 360 flow",
        "Rejected:            none", "Lost to full tables: none",
        "Lost datagrams:      0", "Hotspots:            0"]
    # interval 0 has one busy direction (no counters yet); then the uplink's 250 GB lead
    assert blocks[1].splitlines()[0] == f"Interval {iso(T0)} +10 s"
    assert cells(blocks[1].splitlines()[2])[:2] == ["spine01:Ethernet1", "in"]
    for k in (1, 2, 3):
        lines = blocks[k + 1].splitlines()
        assert lines[0] == f"Interval {iso(T0 + 10 * k)} +10 s (busiest 1 of 2 link directions)"
        assert len(lines) == 3
        assert cells(lines[2]) == ["leaf01:Ethernet3", "out", "0", f"{OUT_OCTETS:,}",
                                   "50%", "no samples"]
    full = attribute(capsys, capture, "--port", "6343", fmt="table")
    assert len(full.split("\n\n")[4].splitlines()) == 4  # both directions, no title note


def test_wide_adds_jobs_pods_and_throttled_columns(capsys, capture):
    narrow = attribute(capsys, capture, "--port", "6343", "--interval", "40", fmt="table")
    wide = attribute(capsys, capture, "--port", "6343", "--interval", "40", fmt="wide")
    columns = ["LINK", "DIR", "SAMPLES", "BYTES", "UTIL", "TENANTS (SHARE, 95%)"]
    assert cells(narrow.split("\n\n")[1].splitlines()[1]) == columns
    assert cells(wide.split("\n\n")[1].splitlines()[1]) == [
        *columns, "JOBS", "TOP PODS", "THROTTLED BY CNPS"]
    n = INTERVALS * (A_SAMPLES + B_SAMPLES)
    a_low, a_high = bounds(INTERVALS * A_SAMPLES, n)
    (row,) = [x for x in wide.splitlines() if x.startswith("spine01:Ethernet1")]
    a = f"66.7% ({a_low:.1%}-{a_high:.1%})"
    b = f"33.3% ({1 - a_high:.1%}-{1 - a_low:.1%})"
    assert f"a/llm {a}, b/cv {b}" in row
    assert f"a/llm-worker-0 {a}, b/cv-worker-0 {b}" in row


def test_yaml_says_what_json_says(capsys, capture):
    assert attribute(capsys, capture, fmt="yaml") == attribute(capsys, capture)


# option, the signal's exact value in intervals 1-3, its kind, the direction it heats
SIGNALS = [
    ("--utilization", 0.5, "utilization", "leaf01/Ethernet3"),  # OUT_OCTETS / 10 s / 50 GB/s
    ("--pfc", PFC / 10, "pfc", "leaf01/Ethernet4"),  # from --counters only
    ("--discards", OUT_DISCARDS / 10, "discards", "leaf01/Ethernet4"),
    ("--ecn", ECN / 10, "ecn", "leaf01/Ethernet4"),
]
UPLINK_SIGNALS = {"leaf01/Ethernet3": {"utilization": 0.5},
                  "leaf01/Ethernet4": {"pfc": PFC / 10, "ecn": ECN / 10,
                                       "discards": OUT_DISCARDS / 10}}


@pytest.mark.parametrize(("option", "signal", "kind", "port"), SIGNALS)
@pytest.mark.parametrize(("limit", "severity"), [
    (lambda s: s, "warning"),  # at the limit: hot
    (lambda s: math.nextafter(s, 0), "warning"),  # one step under: hot
    (lambda s: math.nextafter(s, math.inf), None),  # one step over: not hot
    (lambda s: s / 2, "critical"),  # twice the limit
    (lambda s: math.nextafter(s / 2, math.inf), "warning"),  # just under twice
])
def test_a_threshold_at_its_limit_makes_a_hotspot(capsys, capture, option, signal, kind, port,
                                                  limit, severity):
    result = attribute(capsys, capture, option, repr(limit(signal)))
    if severity is None:
        assert result["hotspots"] == []
        return
    (hot,) = result["hotspots"]
    assert (hot["port"], hot["direction"], hot["kinds"], hot["severity"], hot["start"],
            hot["end"]) == (f"port:{port}", "out", [kind], severity, T0 + 10, None)
    assert hot["signals"] == UPLINK_SIGNALS[port]


def test_the_uplinks_hotspot_names_culprit_victim_and_noisy_neighbour(capsys, capture):
    (hot,) = attribute(capsys, capture, "--utilization", "0.5")["hotspots"]
    assert hot["peer"] == "port:spine01/Ethernet1"  # its traffic, sampled at the far end
    assert [(s["name"], s["samples"]) for s in hot["culprits"]] == [("tenant:a", A_SAMPLES)]
    assert [(s["name"], s["samples"]) for s in hot["victims"]] == [("tenant:b", B_SAMPLES)]
    assert [s["name"] for s in hot["culprit_jobs"]] == ["job:a/llm"]
    assert [s["name"] for s in hot["victim_jobs"]] == ["job:b/cv"]
    low, high = bounds(A_SAMPLES, A_SAMPLES + B_SAMPLES)
    assert hot["noisy_neighbour"] == (f"a sends 67% ({low:.0%}-{high:.0%}) of a link "
                                      "that b also use")


@pytest.mark.parametrize(("intervals", "hotspots"), [(1, 1), (3, 1), (4, 0)])
def test_hot_intervals_in_a_row_make_a_hotspot(capsys, capture, intervals, hotspots):
    # intervals 1, 2 and 3 are hot: three in a row, the streak starting at T0 + 10
    result = attribute(capsys, capture, "--utilization", "0.5", "--hot-intervals",
                       str(intervals))
    assert [(h["port"], h["start"]) for h in result["hotspots"]] == \
        [("port:leaf01/Ethernet3", T0 + 10)] * hotspots


def test_counters_give_the_rates_the_capture_lacks(capsys, capture):
    limits = ("--pfc", "25", "--ecn", "500", "--discards", "0.5")
    without = attribute(capsys, capture, *limits, counters=False)
    assert without["hotspots"] == []
    assert "port:leaf01/Ethernet4" not in without["rates"]
    found = attribute(capsys, capture, *limits)
    (hot,) = found["hotspots"]
    assert (hot["port"], hot["kinds"]) == ("port:leaf01/Ethernet4", ["pfc", "ecn", "discards"])
    rates = found["rates"]["port:leaf01/Ethernet4"]
    # the last interval's rates (one reading 10 s after the one before), dated at its end
    assert (rates["at"], rates["interval_s"], rates["per_second"]) == (
        T0 + 40, 10.0, {"pfc_rx_pause/3": PFC / 10, "queue_ecn_marked/UC3": ECN / 10,
                        "out_discards": OUT_DISCARDS / 10})


@pytest.mark.parametrize(("line", "reason"), [
    ('{"switch": "leaf01", "port": "Ethernet4", "at": 1, "values": {}, "colour": 1}',
     "line 3: colour: unknown field (fields: switch, port, at, values, bits, oper_status, "
     "speed_bps, uptime_s, last_clear, stamped)"),
    ('{"switch": "leaf01", "port": "Ethernet4", "at": "noon"}',
     "line 3: at: expected Unix seconds (a finite number), not 'noon'"),
    ('{"switch": "leaf01", "port": "Ethernet4", "at": 1, "values": {"in_octets": "lots"}}',
     "line 3: values: expected {counter: non-negative integer}, not {'in_octets': 'lots'}"),
    ('{"switch": "leaf01", "at": 1}', "line 3: missing field(s) port"),
    ("[1, 2]", "line 3: not a JSON object"),
])
def test_a_bad_counters_line_exits_2_naming_file_and_line(capsys, capture, tmp_path, line,
                                                          reason):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_readings()[0]) + "\n\n" + line + "\n")
    code = main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), "--counters", str(bad)])
    assert (code, capsys.readouterr().err) == (2, f"fabcorr: {bad}: {reason}\n")


@pytest.mark.parametrize("offset", [0.5, 2.0])  # before and after the sFlow counter sample
def test_counters_of_a_port_the_capture_also_counts_replace_its_samples(capsys, capture,
                                                                         tmp_path, offset):
    readings = tmp_path / "uplink.jsonl"
    readings.write_text("".join(json.dumps(
        {"switch": "leaf01", "port": "Ethernet3", "at": T0 + 10 * k + offset,
         "values": {"pfc_rx_pause/3": PFC * k}}) + "\n" for k in range(INTERVALS)))
    code = main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), "--counters", str(readings), "--pfc", "25",
                 "-o", "json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    (hot,) = result["hotspots"]
    assert (hot["port"], hot["kinds"], hot["signals"], hot["start"]) == (
        "port:leaf01/Ethernet3", ["pfc"], {"pfc": PFC / 10}, T0 + 10)
    rates = result["rates"]["port:leaf01/Ethernet3"]
    assert (rates["at"], rates["interval_s"], rates["per_second"]) == (
        T0 + 40, 10.0, {"pfc_rx_pause/3": PFC / 10})  # the last interval's, dated at its end


@pytest.mark.parametrize("options", [(), ("--pfc", "25", "--ecn", "500")])
def test_the_shards_of_a_run_attribute_each_direction_once(capsys, capture, options):
    """leaf02 and spine01 are shard 0's of 3, leaf01 shard 1's, spine02 shard 2's: the
    uplink leaf01:Ethernet4 -> spine02 is judged by shard 2, which has no datagram but
    reads leaf01:Ethernet4's counters (the far end of spine02's cable) from --counters."""
    whole = attribute(capsys, capture, *options)
    parts = [attribute(capsys, capture, *options, "--shard", f"{i}/3") for i in range(3)]
    assert [p["totals"]["datagrams"] for p in parts] == [INTERVALS + 1, INTERVALS, 0]
    for k, expected in enumerate(whole["attributions"]):
        found = [link for p in parts for link in p["attributions"][k]["links"]]
        assert len(found) == len(expected["links"])  # none twice
        assert sorted(found, key=lambda x: (x["port"], x["direction"])) == expected["links"]
    assert [h for p in parts for h in p["hotspots"]] == whole["hotspots"]
    assert [[h["port"] for h in p["hotspots"]] for p in parts] == [
        [], [], ["port:leaf01/Ethernet4"] if options else []]


def test_shard_must_be_i_of_n(capsys, capture):
    assert main(["attribute", "--snapshot", str(capture / "topology.json"), "--pcap",
                 str(capture / "run.pcap"), "--shard", "3/3"]) == 2
    assert capsys.readouterr().err == (
        "fabcorr: --shard: shard 3/3: the index must be below the count (from 0)\n")
