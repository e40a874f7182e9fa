"""``fabcorr sflow decode`` against tshark, and ``fabcorr attribute`` against the ground
truth of a synthetic capture over the four-node, two-tenant fabric."""

import ipaddress
import json
from pathlib import Path

import pytest

from correlator.cli.main import main
from simulator import roce, sflow_wire
from simulator.generator import generate_facts
from simulator.pcap import write_pcap
from simulator.sflow_run import PortFlow, capture
from tests.correlator.attribution.bounds import share_bounds
from tests.correlator.attribution.conftest import A0, A1, B0, B1, SPEC, T0
from tests.sflow import tshark
from topology.build import build_graph
from topology.snapshot import save_snapshot

COLLECTOR = "192.0.2.99"
FLOWS = [PortFlow("spine01", "Ethernet1", A0, A1, 100_000, out_port="Ethernet2"),
         PortFlow("spine01", "Ethernet1", B0, B1, 30_000, out_port="Ethernet2", sport=50001),
         PortFlow("leaf01", "Ethernet1", A0, A1, 50_000, opcode=roce.SEND_ONLY,
                  out_port="Ethernet3")]
SECONDS, RATE = 30, 1000


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 30 s capture at 1:1000 (about 6,500 samples) and its snapshot."""
    folder = tmp_path_factory.mktemp("run")
    facts = generate_facts(SPEC)
    save_snapshot(build_graph(facts), folder / "topology.json")
    cap = capture(facts, FLOWS, SECONDS, RATE, T0)
    write_pcap(folder / "run.pcap", [(t, d, a, COLLECTOR, 6343) for t, d, a in cap.datagrams])
    return folder, cap


def _odd_datagrams():
    """What the agent above never sends: IPv6 agent and packets, expanded samples, VLAN
    tags, CNPs, non-RoCE packets, discard samples."""
    mac = bytes(6)
    v6 = [ipaddress.ip_address(a).packed for a in ("fd00::2", "fd00::3")]
    v4 = [ipaddress.ip_address(a).packed for a in (A0, B1)]
    frames = [roce.frame(mac, mac, *v6, roce.payload(roce.CNP, 0xABCDE, 0), vlan=7, dscp=48),
              roce.frame(mac, mac, *v4, roce.payload(roce.READ_REQUEST, 3, 99, 65536)),
              roce.frame(mac, mac, *v4, b"dns?" * 10, dport=53)]
    samples = [sflow_wire.FlowSample(i + 1, 1001, 512, 512 * (i + 1), i, sflow_wire.ifindex(1001),
                                     sflow_wire.UNKNOWN, f[:128], len(f) + 4, expanded=i == 0,
                                     extended_switch=(7, 6, 7, 6) if i == 0 else None)
               for i, f in enumerate(frames)]
    samples.append(sflow_wire.DiscardSample(9, 1001, 1, sflow_wire.ifindex(1001),
                                            sflow_wire.dropped(259), 259, frames[1][:64], 90))
    return [(T0 + 31, sflow_wire.Datagram("fd00::1", 1, 7, 5000, samples).encode(), "fd00::1")]


@pytest.fixture(scope="module")
def odd_pcap(tmp_path_factory):
    path = tmp_path_factory.mktemp("odd") / "odd.pcap"
    write_pcap(path, [(t, d, a, "fd00::99", 6343) for t, d, a in _odd_datagrams()])
    return path


def _decode(capsys, pcap, *extra):
    code = main(["sflow", "decode", str(pcap), "-o", "json", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _ours(record):
    return {"agent": record["agent"], "sub_agent": record["sub_agent"],
            "datagram_seq": record["datagram_seq"], "seq": record["seq"],
            "sampling_rate": record["sampling_rate"], "sample_pool": record["sample_pool"],
            "drops": record["drops"], "source_index": record["source_index"],
            "input": (record["input_format"], record["input"]),
            "output": (record["output_format"], record["output"]),
            "frame_length": record["frame_length"], "stripped": record["stripped"],
            "src_ip": record["src_ip"], "dst_ip": record["dst_ip"],
            "src_port": record["src_port"] or None, "dst_port": record["dst_port"] or None,
            "dscp": record["dscp"], "ecn": record["ecn"],
            "vlan": None if record["vlan"] < 0 else record["vlan"],
            "opcode": None if record["opcode"] < 0 else record["opcode"],
            "dest_qp": None if record["opcode"] < 0 else record["dest_qp"],
            "psn": None if record["opcode"] < 0 else record["psn"]}


def _theirs(flow):
    return {key: flow[key] for key in (
        "agent", "sub_agent", "datagram_seq", "seq", "sampling_rate", "sample_pool", "drops",
        "source_index", "input", "output", "frame_length", "stripped", "src_ip", "dst_ip",
        "src_port", "dst_port", "dscp", "ecn", "vlan", "opcode", "dest_qp", "psn")}


@pytest.mark.parametrize("which", ["run", "odd"])
def test_every_flow_sample_equals_what_tshark_decodes(capsys, run, odd_pcap, which):
    pcap = run[0] / "run.pcap" if which == "run" else odd_pcap
    code, records, err = _decode(capsys, pcap)
    oracle = tshark.decode(pcap)
    flows = [r for r in records if r["type"] == "flow"]
    assert code == 0 and oracle.malformed == []
    assert len(flows) == len(oracle.flows) > 0
    assert [_ours(r) for r in flows] == [_theirs(f) for f in oracle.flows]
    counters = [r for r in records if r["type"] == "counters"]
    assert len(counters) == len(oracle.counters)
    for ours, theirs in zip(counters, oracle.counters, strict=True):
        assert ours["counters"] == theirs["if_counters"]
    datagrams = len(run[1].datagrams) if which == "run" else 1
    assert err == (f"{datagrams:,} datagram{'s' * (datagrams != 1)}, {len(records):,} "
                   "samples\n")


def test_tshark_skips_discard_samples_which_fabcorr_decodes(capsys, odd_pcap):
    _, records, _ = _decode(capsys, odd_pcap)
    (drop,) = [r for r in records if r["type"] == "discard"]
    assert (drop["reason"], drop["reason_name"], drop["output_format"], drop["output"],
            drop["traffic"], drop["src_ip"]) == (259, "no_buffer_space", 1, 259,
                                                 "roce-read-request", A0)
    assert [(o["format"], o["length"]) for o in tshark.decode(odd_pcap).others] == [(5, 120)]


def test_decode_resolves_ports_pods_jobs_and_tenants(capsys, run):
    folder, _ = run
    _, records, _ = _decode(capsys, folder / "run.pcap", "--snapshot",
                            str(folder / "topology.json"))
    flows = [r for r in records if r["type"] == "flow"]
    seen = {(r["port"], r["src_pod"], r["src_job"], r["src_tenant"], r["dst_pod"])
            for r in flows}
    assert seen == {
        ("port:spine01/Ethernet1", "pod:a/llm-worker-0", "job:a/llm", "tenant:a",
         "pod:a/llm-worker-1"),
        ("port:spine01/Ethernet1", "pod:b/cv-worker-0", "job:b/cv", "tenant:b",
         "pod:b/cv-worker-1"),
        ("port:leaf01/Ethernet1", "pod:a/llm-worker-0", "job:a/llm", "tenant:a",
         "pod:a/llm-worker-1")}


def test_attribute_shares_hold_the_ground_truth(capsys, run):
    folder, cap = run
    code = main(["attribute", "--snapshot", str(folder / "topology.json"), "--pcap",
                 str(folder / "run.pcap"), "-o", "json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and len(result["attributions"]) == 3
    assert result["totals"]["rejects"] == {} and result["totals"]["lost_datagrams"] == 0
    per_second = {(f.switch, f.port, f.src): f.packets_per_s * (len(f.frame()) + 4)
                  for f in FLOWS}
    tenant_of = {A0: "tenant:a", B0: "tenant:b"}
    checked = 0
    for attribution in result["attributions"]:
        for link in attribution["links"]:
            if link["samples"] == 0:
                continue
            switch, port = link["port"].removeprefix("port:").split("/")
            truth = {tenant_of[src]: rate * 10 for (s, p, src), rate in per_second.items()
                     if (s, p) == (switch, port)}
            if attribution is not result["attributions"][0]:  # counters known from 10 s on
                assert link["counter_bytes"] == sum(truth.values())
            for share in link["tenants"]:
                expected = truth[share["name"]] / sum(truth.values())
                assert share["share_low"] <= expected <= share["share_high"], (link, share)
                assert (share["share_low"], share["share_high"]) == pytest.approx(
                    share_bounds(share["samples"], link["samples"], share["share"]),
                    abs=1e-12)
                checked += 1
    assert checked == 9  # 3 intervals x (2 tenants on spine01, 1 on leaf01)
    assert cap.truth[("spine01", "Ethernet1", A0)] == [3_000_000, 3_000_000 * 4174]


def test_a_missing_or_foreign_file_is_a_usage_error(capsys, tmp_path):
    assert main(["sflow", "decode", str(tmp_path / "none.pcap")]) == 2
    assert capsys.readouterr().err == (
        f"fabcorr: {tmp_path / 'none.pcap'}: cannot read: No such file or directory\n")
    (tmp_path / "text.pcap").write_text("hello, not a capture\n")
    assert main(["sflow", "decode", str(tmp_path / "text.pcap")]) == 2
    assert capsys.readouterr().err == (
        f"fabcorr: {tmp_path / 'text.pcap'}: not a pcap or pcapng file (magic 0x6c6c6568)\n")


def test_rejected_datagrams_exit_3_with_their_reasons(capsys, tmp_path):
    good = _odd_datagrams()[0][1]
    pcap = tmp_path / "bad.pcap"
    write_pcap(pcap, [(T0, good, "fd00::1", "fd00::99", 6343),
                      (T0 + 1, good[:30], "fd00::1", "fd00::99", 6343)])
    code, _, err = _decode(capsys, pcap)
    assert (code, err) == (3, "1 datagram, 4 samples, rejected: 1 short-datagram\n")


EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"


def test_the_example_capture_names_the_noisy_tenant_and_its_victims(capsys, tmp_path):
    pcap = tmp_path / "example.pcap"
    assert main(["simulate", "capture", "--snapshot", str(EXAMPLE / "topology.json"),
                 "--flows", str(EXAMPLE / "flows.yaml"), "--out", str(pcap)]) == 0
    err = capsys.readouterr().err
    assert "  sent spine01:Ethernet1 from 10.101.0.2: 210,000,000 packets, 876,540,000,000 bytes" \
        in err.splitlines()
    assert main(["attribute", "--snapshot", str(EXAMPLE / "topology.json"), "--pcap",
                 str(pcap), "-o", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    (hot,) = result["hotspots"]
    assert (hot["port"], hot["direction"], hot["kinds"], hot["end"]) == (
        "port:leaf01/Ethernet5", "out", ["utilization"], None)
    assert [s["name"] for s in hot["culprits"]] == ["tenant:team-a"]
    assert [s["name"] for s in hot["culprit_jobs"]] == ["job:team-a/llm-pretrain"]
    assert [s["name"] for s in hot["victims"]] == ["tenant:team-b"]
    assert [s["name"] for s in hot["throttled"]] == ["job:team-b/bert-large"]
    truth = 876540000000 + 250440000000  # team-a's bytes over 30 s
    share = hot["culprits"][0]
    assert share["share_low"] <= truth / (truth + 187830000000) <= share["share_high"]
    (link, *_) = [link for attribution in result["attributions"]
                  for link in attribution["links"]
                  if share in link["tenants"]]  # the interval the hotspot's shares are of
    assert (share["share_low"], share["share_high"]) == pytest.approx(
        share_bounds(share["samples"], link["samples"], share["share"]), abs=1e-12)
    assert hot["noisy_neighbour"].startswith("team-a sends 8")


@pytest.mark.parametrize(("text", "message"), [
    ("seconds: 5\n", "flows: expected a non-empty list of flows"),
    ("flows: [{switch: leaf01, port: Ethernet1, src: 10.101.0.2}]\n",
     "flows[0]: missing dst, packets_per_s"),
    ("flows: [{switch: leaf01, port: Ethernet99, src: 10.0.0.1, dst: 10.0.0.2, "
     "packets_per_s: 1}]\n",
     "flows[0]: leaf01:Ethernet99 is not a port of the snapshot"),
    ("flows: [{switch: leaf01, port: Ethernet1, src: 10.0.0.1, dst: 10.101.0.999, "
     "packets_per_s: 1}]\n", "flows[0].dst: '10.101.0.999' is not an IP address"),
    ("sampling_rate: 0\nflows: [{switch: leaf01, port: Ethernet1, src: 10.0.0.1, dst: 10.0.0.2, "
     "packets_per_s: 1}]\n", "sampling_rate: must be >= 1"),
])
def test_a_bad_capture_spec_names_the_key(capsys, tmp_path, text, message):
    spec = tmp_path / "flows.yaml"
    spec.write_text(text)
    assert main(["simulate", "capture", "--snapshot", str(EXAMPLE / "topology.json"),
                 "--flows", str(spec), "--out", str(tmp_path / "x.pcap")]) == 2
    assert f"{spec}: {message}" in capsys.readouterr().err
