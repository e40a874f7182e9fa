"""pmacctd's sFlow agent (sfprobe) on the lab's switch ports, read by fabcorr's decoder.

Three tenants' RoCEv2 traffic crosses the fabric both ways (A 60 %, B 30 %, C 10 % of the
bytes of each host); pmacctd samples what leaf1:swp1, leaf2:swp1 and spine1:swp1 receive,
1 in 20, and sends sFlow to a collector on the management bridge. Per port: the sample
fields against the kernel, the sampled packets against what was sent, tenant and port
estimates against what was sent and what the kernel counted, fabcorr's attribution (each
port's kernel byte counter apportioned to the tenants) against the bytes each tenant
sent, and fabcorr's decoder against tshark.

What pmacct 1.7.7 sfprobe sends (asserted below): sub-agent 0; source_id 0:1 whatever the
port; input = the port's kernel ifIndex (``pcap_ifindex: sys``), output 0x3FFFFFFF;
frame_length = the frame's length as libpcap saw it + 4 (an FCS it cannot see), stripped 4;
sample_pool = packets the agent has seen, up to this one. It samples at skips drawn from
``random()`` seeded with the data-source index, so samples fall on the same packet numbers
in every run: with ``pcap_filter: ip`` (the lab's LLDP and IPv6 frames do not shift them)
and the senders' seeded order, every run measures the same estimates.

Like with like: frame_length - stripped (no FCS) against the frame bytes sent, and the
samples of the traffic against the kernel's rx counters over the traffic (no FCS either;
they also count the few LLDP and IPv6 frames the agent does not see).

Bound: 95 % under Bernoulli (binomial) sampling: the relative error of a sum estimated from
c frames of sizes L_i is ≤ 1.96·√ΣL_i² / ΣL_i; for packets (every L = 1) that is REFERENCE
§8's 1.96·√(1/c).
"""

from __future__ import annotations

import ipaddress
import json
import math
import socket
import subprocess
import threading
import time
from collections import Counter

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.attribution.attribute import attribute
from correlator.collect.rates import Rates
from correlator.sflow.decode import Decoder
from correlator.sflow.packet import OPCODE_CLASS
from correlator.sflow.records import UNKNOWN_INTERFACE, FlowSample, address_text
from inventory.facts import (
    FactSet,
    InterfaceFact,
    PodFact,
    PodInterfaceFact,
    SwitchFact,
    TenantFact,
)
from simulator import roce_traffic
from simulator.pcap import write_pcap
from simulator.roce import ECT0
from tests.lab.netns import COLLECTOR, missing_tools
from topology.build import build_graph

SAMPLING = 20
ROUNDS = 600  # 40 packets per round and host: ~1,200 samples per port at 1:20
PORTS = {("leaf1", "swp1"): "host1", ("leaf2", "swp1"): "host2", ("spine1", "swp1"): "host1"}
"""Sampled port -> the host whose traffic it receives."""
PODS = [("host1", "10.101.0.11", "A", 3), ("host1", "10.101.0.12", "A", 3),
        ("host1", "10.101.0.13", "B", 3), ("host1", "10.101.0.14", "C", 1),
        ("host2", "10.101.0.21", "A", 3), ("host2", "10.101.0.22", "A", 3),
        ("host2", "10.101.0.23", "B", 3), ("host2", "10.101.0.24", "C", 1)]
"""(host, address, tenant, weight): each pod sends to its tenant's pod on the other host."""
TENANT = {address: tenant for _, address, tenant, _ in PODS}
Z95 = 1.96
POKE_PORT = 9


class Collector:
    """Receives sFlow on the management bridge: (arrival time, datagram, sender address)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind((COLLECTOR, 0))
        self.sock.settimeout(0.05)
        self.address: tuple[str, int] = self.sock.getsockname()
        self.datagrams: list[tuple[float, bytes, str]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._done.set()
        self._thread.join()
        self.sock.close()

    def _receive(self) -> None:
        while not self._done.is_set():
            try:
                data, (sender, _) = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            self.datagrams.append((time.time(), data, sender))


def is_poke(sample) -> bool:
    return isinstance(sample, FlowSample) and sample.packet.dst_port == POKE_PORT


def flush(lab, collector: Collector, timeout: float = 15.0) -> None:
    """Poke the sampled ports until each agent has sent a sample of a poke: agents send
    samples in order, so all the samples of the traffic before have then arrived. (A burst
    of 2N pokes holds a sample; a later burst, in a new second, makes the agent send it.)"""
    decoder, waiting = Decoder(), {lab.mgmt[device] for device, _ in PORTS}
    read, deadline = 0, time.monotonic() + timeout
    while waiting:
        assert time.monotonic() < deadline, f"no poke sample from {sorted(waiting)}"
        for port in PORTS:
            lab.poke(*port, count=2 * SAMPLING)
        time.sleep(0.2)
        arrived = collector.datagrams[read:]
        read += len(arrived)
        waiting -= {sender for _, data, sender in arrived
                    if (datagram := decoder.decode(data)) and any(map(is_poke, datagram.samples))}


def streams(lab) -> dict[str, list[roce_traffic.Stream]]:
    half = len(PODS) // 2
    return {lab.ns(host): [roce_traffic.Stream(tenant, src, PODS[(n + half) % len(PODS)][1],
                                               0x1000 + n, weight)
                           for n, (h, src, tenant, weight) in enumerate(PODS) if h == host]
            for host in lab.hosts}


def estimate(samples: list[FlowSample]) -> tuple[int, int, float, float]:
    """Estimated packets and bytes (no FCS), and their 95 % relative bounds."""
    sizes = [s.frame_length - s.stripped for s in samples]
    return (len(sizes) * SAMPLING, sum(sizes) * SAMPLING, Z95 / math.sqrt(len(sizes)),
            Z95 * math.sqrt(sum(size * size for size in sizes)) / sum(sizes))


def compare(what: str, samples: list[FlowSample], packets: int, octets: int) -> list[str]:
    """Failures of the estimates from ``samples`` against the true counts; prints both."""
    est_packets, est_octets, packet_bound, byte_bound = estimate(samples)
    errors = est_packets / packets - 1, est_octets / octets - 1
    print(f"{what:<22} c={len(samples):>5} packets {errors[0]:+7.2%} (±{packet_bound:.2%}) "
          f"bytes {errors[1]:+7.2%} (±{byte_bound:.2%})")
    return [f"{what}: {kind} error {error:+.2%} beyond ±{bound:.2%}"
            for kind, error, bound in (("packet", errors[0], packet_bound),
                                       ("byte", errors[1], byte_bound)) if abs(error) > bound]


def tshark_samples(pcap, port: int) -> list[tuple]:
    """Flow samples as tshark 4.0 reads them; a minimal reader of ``-T json`` (BTHs are
    dissected as top-level ``infiniband`` layers, in sample order)."""
    out = subprocess.run(["tshark", "-r", str(pcap), "-T", "json", "--no-duplicate-keys",
                          "-d", f"udp.port=={port},sflow"],
                         capture_output=True, text=True, check=True).stdout
    samples = []
    for frame in json.loads(out):
        layers = frame["_source"]["layers"]
        bths = layers.get("infiniband", [])
        bths = [bths] if isinstance(bths, dict) else list(bths)
        for key, sample in layers["sflow"].items():
            if not key.startswith("Flow sample"):
                continue
            header = sample["Raw packet header"]
            tree = header["sflow_245.header_tree"]
            opcode, qp = -1, 0
            if tree.get("udp", {}).get("udp.dstport") == "4791":
                bth = bths.pop(0)["infiniband.bth_tree"]
                opcode = int(bth["infiniband.bth.opcode"])
                qp = int(bth["infiniband.bth.destqp"], 16)
            samples.append((
                layers["sflow"]["sflow_245.agent"],
                int(sample["sflow.flow_sample.sequence_number"]),
                int(sample["sflow.flow_sample.sampling_rate"]),
                int(sample["sflow.flow_sample.sample_pool"]),
                int(sample["sflow.flow_sample.input_interface"]),
                int(header["sflow_245.header.frame_length"]),
                int(header["sflow_245.header.payload_stripped"]),
                tree["ip"]["ip.src"], tree["ip"]["ip.dst"], opcode, qp))
        assert bths == []
    return samples


def test_pmacct_sfprobe_samples_match_the_traffic_the_kernel_and_tshark(lab, tmp_path):
    missing = missing_tools(("pmacctd", "tshark"))
    if missing:
        pytest.fail(f"missing: {', '.join(missing)} (`make test` installs them as root)")
    lab.route({host: [address for h, address, *_ in PODS if h == host] for host in lab.hosts})
    with Collector() as collector:
        probes = [lab.sflow_probe(device, port, collector.address, SAMPLING, pcap_filter="ip")
                  for device, port in PORTS]
        try:
            before = {port: lab.rx(*port) for port in PORTS}
            flows = roce_traffic.send(streams(lab), ROUNDS)
            time.sleep(0.1)  # the last packets cross the spine
            after = {port: lab.rx(*port) for port in PORTS}
            flush(lab, collector)
        finally:
            lab.stop(*probes)

    decoder = Decoder()
    datagrams = [(sender, decoder.decode(data)) for _, data, sender in collector.datagrams]
    assert (decoder.rejects, decoder.skipped) == (Counter(), Counter())
    failures = []
    for (device, port), host in PORTS.items():
        agent = lab.mgmt[device]
        mine = [d for sender, d in datagrams if sender == agent]
        assert {(d.agent, d.sub_agent) for d in mine} == {(ipaddress.ip_address(agent).packed, 0)}
        assert sorted(d.seq for d in mine) == list(range(1, len(mine) + 1))  # none lost
        samples = sorted((s for d in mine for s in d.samples if isinstance(s, FlowSample)),
                         key=lambda s: s.seq)
        assert [s.seq for s in samples] == list(range(1, len(samples) + 1))
        assert len(samples) >= 1000
        assert {(s.source_type, s.source_index, s.input, s.output, s.sampling_rate, s.drops,
                 s.stripped) for s in samples} == {
            (0, 1, lab.ifindex(device, port), UNKNOWN_INTERFACE, SAMPLING, 0, 4)}

        sent = [f for f in flows if f.src in {a for h, a, *_ in PODS if h == host}]
        sent_packets = sum(f.packets for f in sent)
        # sample_pool = the sampled packet's number among those the agent saw: the traffic
        # is packets 1..sent_packets (pcap_filter ip), the pokes come after
        pools = [s.sample_pool for s in samples]
        assert pools == sorted(set(pools))
        roce = [s for s in samples if s.sample_pool <= sent_packets]
        assert sent_packets - 2 * SAMPLING < roce[-1].sample_pool  # skips are < 2N
        assert all(map(is_poke, samples[len(roce):])) and samples[len(roce):] != []
        assert all(s.packet.opcode >= 0 for s in roce)
        seen = {(address_text(s.packet.src_ip), address_text(s.packet.dst_ip), s.packet.opcode,
                 s.packet.dest_qp, s.frame_length - s.stripped, s.packet.dscp, s.packet.ecn,
                 s.packet.traffic) for s in roce}
        assert seen == {(f.src, f.dst, f.opcode, f.dest_qp, f.bytes // f.packets, f.dscp, ECT0,
                         OPCODE_CLASS[f.opcode]) for f in sent}

        for tenant in sorted(set(TENANT.values())):
            packets, octets = roce_traffic.totals(sent, lambda f: f.tenant)[tenant]
            failures += compare(f"{device}:{port} {tenant}", [
                s for s in roce if TENANT[address_text(s.packet.src_ip)] == tenant],
                packets, octets)
        failures += compare(f"{device}:{port} all/kernel", roce,
                            after[device, port][0] - before[device, port][0],
                            after[device, port][1] - before[device, port][1])

    failures += attributed(lab, collector.datagrams, flows, before, after)
    assert failures == []

    pcap = tmp_path / "sflow.pcap"
    write_pcap(pcap, [(at, data, sender, COLLECTOR, collector.address[1])
                      for at, data, sender in collector.datagrams])
    assert tshark_samples(pcap, collector.address[1]) == [
        (address_text(d.agent), s.seq, s.sampling_rate, s.sample_pool, s.input, s.frame_length,
         s.stripped, address_text(s.packet.src_ip), address_text(s.packet.dst_ip),
         s.packet.opcode, s.packet.dest_qp)
        for _, d in datagrams for s in d.samples if isinstance(s, FlowSample)]


def lab_fabric(lab):
    """The lab as fabcorr's facts: the sampled switches with their agents and ports, one
    pod per address in its tenant's namespace."""
    return build_graph(FactSet(
        switches=tuple(SwitchFact(device, f"02:00:00:00:00:{n:02x}", lab.mgmt[device],
                                  lab.mgmt[device])
                       for n, device in enumerate(sorted({d for d, _ in PORTS}))),
        interfaces=tuple(InterfaceFact(device, port, lab.ifindex(device, port))
                         for device, port in PORTS),
        pods=tuple(PodFact(f"tenant-{tenant.lower()}", f"pod-{address}", host, tenant=tenant)
                   for host, address, tenant, _ in PODS),
        pod_interfaces=tuple(PodInterfaceFact(f"tenant-{tenant.lower()}", f"pod-{address}",
                                              "net1", host, ipv4=f"{address}/32")
                             for host, address, tenant, _ in PODS),
        tenants=tuple(TenantFact(t) for t in sorted(set(TENANT.values())))))


def attributed(lab, datagrams, flows, before, after) -> list[str]:
    """fabcorr's attribution of the run, each port's bytes apportioned from the kernel's
    counter: every tenant's bytes sent inside the 95 % interval. Pokes (UDP to port 9,
    after the traffic) are left out of the samples, as they are of the counters."""
    fabric, start = lab_fabric(lab), datagrams[0][0]
    end = datagrams[-1][0] + 1
    accumulator, decoder = Accumulator(start), Decoder()
    for at, data, _ in datagrams:
        datagram = decoder.decode(data)
        datagram.samples[:] = [s for s in datagram.samples if not is_poke(s)]
        accumulator.add(datagram, at)
    interval = accumulator.take(end)
    rates = {f"port:{device}/{port}": Rates(device, port, end, interval.seconds, {
        "in_octets": (after[device, port][1] - before[device, port][1]) / interval.seconds},
        {}) for device, port in PORTS}
    result = attribute(fabric, interval, rates)
    failures = []
    assert result.unknown_ports == {} and result.unattributed_samples == 0
    for link in result.links:
        if link.direction != "in":
            continue
        device, port = link.port.removeprefix("port:").split("/")
        host = PORTS[device, port]
        sent = roce_traffic.totals([f for f in flows if f.src in {
            a for h, a, *_ in PODS if h == host}], lambda f: f"tenant:{f.tenant}")
        assert {s.name for s in link.tenants} == set(sent)
        for share in link.tenants:
            octets = sent[share.name][1]
            print(f"{link.port} {share.name}: {share.bytes / octets - 1:+.2%} "
                  f"[{share.low / octets - 1:+.2%}, {share.high / octets - 1:+.2%}]")
            if not share.low <= octets <= share.high:
                failures.append(f"{link.port} {share.name}: sent {octets} outside "
                                f"[{share.low:.0f}, {share.high:.0f}]")
    return failures
