"""The traffic model: flows per pattern, link loads, congestion computed by hand, counters,
ground truth, and the events."""

import ipaddress
import struct
import zlib
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

from simulator.congestion import DROP_SHARE, PAUSE_QUANTA_BITS
from simulator.flow_frames import CNP_BYTES, DATA_BYTES, PACKETS_PER_GBIT
from simulator.gnmi_target import GnmiTarget
from simulator.scenario import load_scenario, scenario_from
from simulator.traffic import CNP_PER_S, TrafficModel, TruthKey
from simulator.workload import pattern_pairs
from topology.build import build_graph
from topology.paths import interface_paths

SCENARIOS = Path(__file__).parents[2] / "simulator" / "scenarios"
SPEED = 400e9

# Frames as counted with their FCS (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
# FCS 4 = 62 bytes around the payload): WRITE FIRST/ONLY add a 16-byte RETH, ACK a
# 4-byte AETH; on the wire each frame takes 20 bytes more (preamble, IFG).
ONLY_4096 = 62 + 16 + 4096   # a 4096-byte WRITE ONLY: 4174
ACK = 62 + 4                 # 66
ONE_WRITE = {"write_bytes": 4096}  # one WRITE ONLY and one ACK back per unit


def _units(gbps: float, wire_bytes: int) -> int:
    """Whole units of a mix sent in one second at ``gbps`` on the wire."""
    return int(gbps * 1e9 / 8 / wire_bytes)


def _model(fabric: dict, jobs: list[dict], **extra) -> TrafficModel:
    return TrafficModel(scenario_from({"fabric": {"vfs_per_pf": 2, **fabric}, "jobs": jobs,
                                       **extra}))


def _run(model: TrafficModel) -> list[dict]:
    """Every port's counters after each tick (the first entry: before the first)."""
    names = [p for p, _, _ in model.port_list()]
    snapshots = [{p: model.counters(*p) for p in names}]
    while not model.done:
        model.step()
        snapshots.append({p: model.counters(*p) for p in names})
    return snapshots


def test_two_flows_with_their_own_source_ports_on_hand_computed_paths():
    model = _model({"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2},
                   [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 100,
                     "message": {"write_bytes": 8192}}], seconds=1, seed=4)
    there, back = model.flows
    assert (there.src, there.dst) == ("podif:a/llm-worker-0/net1", "podif:a/llm-worker-1/net1")
    for flow, leaf in ((there, "leaf01"), (back, "leaf02")):
        qp = struct.pack("!I", flow.qp)
        assert flow.sport == 0xC000 | zlib.crc32(flow.src_ip + flow.dst_ip + qp, 4) & 0x3FFF
        crc = zlib.crc32(flow.src_ip + flow.dst_ip + struct.pack("!HHB", flow.sport, 4791, 17))
        seed = zlib.crc32(f"4/{leaf}".encode())
        bucket = (((crc ^ seed) * 0x9E3779B1 & 0xFFFFFFFF) >> 16) % 2
        route = model.routes[model.flows.index(flow)]
        assert route[0].switch == leaf and route[1].switch == f"spine0{bucket + 1}"
    model.step()
    # an 8192-byte WRITE: FIRST (4096 + RETH: 4174) and LAST (4096: 4158); 8372 on the wire
    units = _units(100, 4174 + 4158 + 2 * 20)
    first = model.routes[0][0]
    # worker-0's host port receives its WRITEs and the ACKs of what worker-1 sends it
    host = model.counters("leaf01", first.ingress)
    assert (host["in_pkts"], host["in_octets"]) == (3 * units, units * (4174 + 4158 + ACK))
    assert DATA_BYTES == 4158  # a 4096-byte RDMA WRITE MIDDLE as REFERENCE §7 counts it


def test_link_load_is_the_sum_of_its_flows():
    # a: a 10,000-byte WRITE (FIRST 4174, MIDDLE 4158, LAST of 1808: 1870) and two
    # 100-byte SENDs (162 each): 10,526 bytes in 5 frames, 10,626 on the wire, 3 ACKs;
    # b: one 4096-byte WRITE ONLY (4174, 4194 on the wire), 1 ACK
    model = _model({"nodes": 8, "rails": 2, "leaves_per_rail": 2, "spines": 2},
                   [{"tenant": "a", "name": "llm", "pods": 4, "pattern": "all-to-all",
                     "gbps": 90, "message": {"write_bytes": 10_000, "sends": 2,
                                             "send_bytes": 100}},
                    {"tenant": "b", "name": "x", "pods": 4, "gbps": 50, "message": ONE_WRITE}],
                   seconds=1)
    before, after = _run(model)
    mixes = {0: (10_626, 5, 3), 1: (4194, 1, 1)}  # wire bytes, frames and ACKs per unit
    expected: Counter = Counter()
    for f, (flow, route) in enumerate(zip(model.flows, model.routes, strict=True)):
        wire, frames, acks = mixes[flow.job]
        units = _units(model.scenario.traffic[flow.job].gbps * flow.share, wire)
        for hops, packets in ((route, units * frames), (model.back_routes[f], units * acks)):
            for hop in hops:
                expected[(hop.switch, hop.ingress, "in")] += packets
                expected[(hop.switch, hop.egress, "out")] += packets
    for port, values in after.items():
        for way in ("in", "out"):
            assert values[f"{way}_pkts"] - before[port][f"{way}_pkts"] == \
                expected[(*port, way)], (port, way)
    assert len(model.flows) == 4 * 3 * 2 + 4 * 2  # all-to-all on 2 rails, a ring on 2


def test_oversubscribed_uplink_by_hand():
    """Four pods on two leaves with one 400G uplink each; a ring at 320G per NIC puts two
    flows (640G) on each uplink: every flow is scaled by 400/640 to 200G."""
    model = _model({"nodes": 4, "rails": 1, "leaves_per_rail": 2, "spines": 1},
                   [{"tenant": "a", "name": "llm", "pods": 4, "gbps": 320,
                     "message": ONE_WRITE}], seconds=1)
    uplink = next(h.egress for r in model.routes for h in r if h.switch == "leaf01"
                  and h.egress != r[-1].egress)
    model.step()
    sent = _units(200, ONLY_4096 + 20)  # per flow: 320 x 400 / 640
    up = model.counters("leaf01", uplink)
    # + the ACKs and CNPs of the two flows coming back
    assert up["out_pkts"] == 2 * sent + 2 * sent + 2 * CNP_PER_S
    assert up["out_octets"] == 2 * sent * (ONLY_4096 + ACK) + 2 * CNP_PER_S * CNP_BYTES
    assert up["queue_ecn_marked/3"] == round(2 * sent * (1 - 400 / 640))
    assert up["queue_dropped/3"] == up["out_discards"] == \
        round(240 * PACKETS_PER_GBIT * DROP_SHARE)  # 1.6x: past the drop threshold
    pauses = round((1 - 400 / 640) * SPEED / PAUSE_QUANTA_BITS)
    feeders = {r[0].ingress for r in model.routes if r[0].switch == "leaf01" and len(r) > 1}
    assert len(feeders) == 2
    for port in feeders:  # the leaf pauses the two NICs that feed the uplink
        assert model.counters("leaf01", port)["pfc_tx_pause/3"] == pauses
    down = model.counters("spine01", "Ethernet2")  # spine01 -> leaf02: 400G, not over
    assert down["out_pkts"] == 4 * sent + 2 * CNP_PER_S and down["queue_ecn_marked/3"] == 0


def test_mild_overload_marks_ecn_without_pfc():
    model = _model({"nodes": 4, "rails": 1, "leaves_per_rail": 2, "spines": 1},
                   [{"tenant": "a", "name": "llm", "pods": 4, "gbps": 220}], seconds=1)
    model.step()
    counters = [model.counters(*p) for p, _, _ in model.port_list()]
    assert sum(c["queue_ecn_marked/3"] for c in counters) > 0
    assert sum(c["pfc_tx_pause/3"] + c["pfc_rx_pause/3"] + c["out_discards"]
               for c in counters) == 0


@pytest.mark.parametrize("name", ["demo", "failures"])
def test_counters_are_monotonic_and_truth_matches_their_deltas(name):
    model = TrafficModel(load_scenario(SCENARIOS / f"{name}.yaml"))
    snapshots = _run(model)
    for earlier, later in pairwise(snapshots):
        for port, values in later.items():
            assert all(v >= earlier[port][k] for k, v in values.items()), port
    interval = model.scenario.interval_s
    assert [(t.start - model.start, t.end - model.start) for t in model.truth] == \
        [(s, s + interval) for s in range(0, model.scenario.seconds, interval)]
    for n, truth in enumerate(model.truth):
        sums: Counter = Counter()
        for key, octets in truth.bytes.items():
            sums[(key.switch, key.port, key.direction)] += octets
        first, last = snapshots[n * interval], snapshots[(n + 1) * interval]
        for port in first:
            for way in ("in", "out"):
                delta = last[port][f"{way}_octets"] - first[port][f"{way}_octets"]
                assert sums[(*port, way)] == delta, (n, port, way)


def test_duty_cycle_and_noisy_event_set_the_rate():
    model = _model({"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2},
                   [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 100,
                     "duty": {"on_s": 1, "off_s": 1}, "message": ONE_WRITE}], seconds=4,
                   events=[{"at": 2, "noisy": {"job": "a/llm", "gbps": 300}}])
    port = ("leaf01", model.routes[0][0].ingress)
    snapshots = _run(model)
    per_tick = [b[port]["in_pkts"] - a[port]["in_pkts"]
                for a, b in pairwise(snapshots)]
    # the sender's WRITEs, and as many ACKs for what it receives; a flow carries the part
    # of a unit it could not send over to its next tick
    first, carry = divmod(100e9 / 8 / 4194, 1)
    assert per_tick == [2 * first, 0, 2 * int(300e9 / 8 / 4194 + carry), 0]


def test_link_down_moves_flows_off_the_failed_cable():
    scenario = load_scenario(SCENARIOS / "failures.yaml")
    model = TrafficModel(scenario)
    event = scenario.events[0]
    failed = (event.switch, event.port)
    crossing = {f for f, r in enumerate(model.routes) if any(
        (h.switch, h.egress) == failed or (h.switch, h.ingress) == failed for h in r)}
    assert crossing
    before = list(model.routes)
    snapshots = _run(model)
    assert failed in model.down_ports and ("spine01", "Ethernet1") in model.down_ports
    for f, route in enumerate(model.routes):
        assert all((h.switch, h.egress) != failed and (h.switch, h.ingress) != failed
                   for h in route)
        assert (route == before[f]) is (f not in crossing)
    octets = [s[failed]["out_octets"] + s[failed]["in_octets"] for s in snapshots]
    assert octets[event.at] > octets[1] > 0 and octets[event.at:] == [octets[event.at]] * len(
        octets[event.at:])
    later = [k for t in model.truth[2:] for k in t.bytes if (k.switch, k.port) == failed]
    assert later == []


def test_switch_down_is_a_flag_from_its_time_on():
    model = TrafficModel(load_scenario(SCENARIOS / "failures.yaml"))
    seen = []
    while not model.done:
        model.step()
        seen.append("spine02" in model.down_switches)
    assert seen.index(True) == 40 and all(seen[40:])


def test_ip_reuse_hands_the_ip_and_its_bytes_to_the_new_pod():
    scenario = load_scenario(SCENARIOS / "demo.yaml")
    reuse = scenario.events[1]
    model = TrafficModel(scenario)
    _run(model)
    facts = model.inventory_facts()
    at = model.start + reuse.at
    old = [f for f in facts.pod_interfaces if f"{f.namespace}/{f.pod}" == reuse.old]
    new = [f for f in facts.pod_interfaces if f"{f.namespace}/{f.pod}" == reuse.new]
    assert [f.valid_until for f in old] == [at, at] and [f.valid_from for f in new] == [at, at]
    assert [(f.ipv4, f.vf_pci, f.node, f.valid_until) for f in new] == \
        [(f.ipv4, f.vf_pci, f.node, None) for f in old]
    pod = next(p for p in facts.pods if f"{p.namespace}/{p.name}" == reuse.new)
    assert (pod.job_name, pod.tenant) == ("bert-large", "team-b")
    owners = defaultdict(set)
    for truth in model.truth:
        for key in truth.bytes:
            if key.pod in (reuse.old, reuse.new):
                owners[truth.start - model.start].add((key.tenant, key.job, key.pod))
    before = reuse.at - scenario.interval_s
    assert owners[before] == {("team-a", "team-a/eval", reuse.old)}
    assert owners[reuse.at] == {("team-b", "team-b/bert-large", reuse.new)}
    assert len(facts.pod_interfaces) == len(model.facts.pod_interfaces) + 2


def test_demo_noisy_tenant_makes_one_congested_uplink():
    scenario = load_scenario(SCENARIOS / "demo.yaml")
    noisy = scenario.events[0]
    model = TrafficModel(scenario)
    snapshots = _run(model)
    marked = {p for p, v in snapshots[-1].items() if v["queue_ecn_marked/3"]}
    assert marked == {("leaf01", "Ethernet9")}
    assert snapshots[noisy.at][("leaf01", "Ethernet9")]["queue_ecn_marked/3"] == 0
    after = next(t for t in model.truth if t.start >= model.start + noisy.at)
    tenants: Counter = Counter()
    for key, octets in after.bytes.items():
        if (key.switch, key.port, key.direction) == ("leaf01", "Ethernet9", "out"):
            tenants[key.tenant] += octets
    assert tenants.most_common(1)[0][0] == "team-c"
    assert tenants["team-c"] > sum(tenants.values()) / 2


def test_cnps_go_back_from_receiver_to_sender():
    model = _model({"nodes": 4, "rails": 1, "leaves_per_rail": 2, "spines": 1},
                   [{"tenant": "a", "name": "llm", "pods": 4, "gbps": 320,
                     "message": ONE_WRITE}], seconds=1)
    tick = model.step()
    cnps = [(taps, frame, n) for taps, frame, n in tick.offers if n == CNP_PER_S]
    assert len(cnps) == 4
    for taps, frame, _ in cnps:
        head = frame[:128]
        assert head[15] >> 2 == 48 and head[15] & 3 == 0  # DSCP 48, not ECN-capable
        assert head[42] == 0x81 and len(frame) + 4 == CNP_BYTES
        src, dst = head[26:30], head[30:34]
        flow = next(f for f in model.flows if (f.dst_ip, f.src_ip) == (src, dst))
        assert taps[0][0] == model.routes[model.flows.index(flow)][-1].switch
    # worker-1 sends its own data, and the ACKs and CNPs for what worker-0 sends it
    first_hop = model.routes[1][0]
    assert model.flows[1].src == "podif:a/llm-worker-1/net1"
    key = TruthKey(first_hop.switch, first_hop.ingress, "in", "a", "a/llm", "a/llm-worker-1")
    sent = _units(200, ONLY_4096 + 20)
    assert model.truth[0].bytes[key] == sent * (ONLY_4096 + ACK) + CNP_PER_S * CNP_BYTES


def test_counter_source_feeds_the_gnmi_target():
    model = _model({"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2},
                   [{"tenant": "a", "name": "llm", "pods": 2}], seconds=2)
    model.step()
    target = GnmiTarget.from_facts(model.facts, "leaf01", counters=model.counter_source("leaf01"))
    tree = target.tree(0.0)
    entry = tree["interfaces"]["interface"]["Ethernet1"]
    assert entry["state"]["counters"]["in-octets"] == model.counters("leaf01",
                                                                     "Ethernet1")["in_octets"]
    queues = tree["qos"]["interfaces"]["interface"]["Ethernet1"]["output"]["queues"]["queue"]
    assert "3" in queues


def test_patterns():
    assert pattern_pairs("ring", 2) == [(0, 1), (1, 0)]
    assert sorted(pattern_pairs("tree", 7)) == sorted(
        [(c, (c - 1) // 2) for c in range(1, 7)] + [((c - 1) // 2, c) for c in range(1, 7)])


def test_truth_keys_name_sender_and_direction():
    model = _model({"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2},
                   [{"tenant": "a", "name": "llm", "pods": 2}], seconds=1)
    model.step()
    keys = set(model.truth[0].bytes)
    assert TruthKey("leaf01", "Ethernet1", "in", "a", "a/llm", "a/llm-worker-0") in keys
    assert TruthKey("leaf01", "Ethernet1", "out", "a", "a/llm", "a/llm-worker-1") in keys
    addresses = {ipaddress.ip_address(f.src_ip).compressed for f in model.flows}
    assert addresses == {"10.101.0.2", "10.101.0.3"}


def test_three_tier_paths_are_equal_cost_and_truth_matches_counters():
    model = _model({"nodes": 8, "rails": 1, "leaves_per_rail": 4, "spines": 2,
                    "leaves_per_pod": 2, "super_spines": 2},
                   [{"tenant": "a", "name": "x", "pods": 8, "pattern": "all-to-all",
                     "gbps": 390}], seconds=2)
    assert Counter(len(r) for r in model.routes) == {5: 32, 3: 16, 1: 8}
    graph = build_graph(model.facts)  # an independent cross-check: the inventory's paths
    for flow, route in zip(model.flows, model.routes, strict=True):
        listed = interface_paths(graph, flow.src, flow.dst, limit=1000).paths
        assert route in [tuple((h.switch, h.ingress, h.egress) for h in p) for p in listed]
    _run(model)
    totals: Counter = Counter()
    for truth in model.truth:
        for key, octets in truth.bytes.items():
            totals[(key.switch, key.port, key.direction)] += octets
    counters = {p: model.counters(*p) for p, _, _ in model.port_list()}
    assert all(totals[(*p, way)] == c[f"{way}_octets"] for p, c in counters.items()
               for way in ("in", "out"))
    assert sum(c["queue_ecn_marked/3"] for c in counters.values()) > 0
