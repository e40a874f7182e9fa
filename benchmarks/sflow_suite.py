"""sFlow benchmark: decode and attribute a capture of 1,000,000 RoCEv2 samples on one core,
next to pmacct's ``sfacctd`` reading the same capture.

The fabric has 10,240 pod IPs (1,280 nodes x 8 NICs, 120 jobs of 30 tenants). The
capture holds datagrams of 5-10 flow samples with 128-byte headers, from the leaves'
host-facing ports, between pods of the same job (the flows a job's collectives make),
one datagram stream per leaf over one 10 s interval. fabcorr's number covers reading the pcap,
decoding every datagram down to the BTH, accumulating per interval and attributing every
interval (ports, pods, jobs, tenants, shares); ``decode_attribute`` the same from
datagrams already in memory. ``sfacctd`` reads the pcap with ``pcap_savefile`` and
aggregates by agent, input interface and source / destination host into its print plugin
(it prints what it counted, which is checked against the sample count). Both are timed
in CPU seconds (fabcorr: this process, one thread; sfacctd: its core and plugin
processes, from the children's resource usage: its wall time is mostly fixed waits) in
the same run, medians of ``repeat`` runs; the ratio is fabcorr's samples per CPU second
over sfacctd's. ``wire_decode_accumulate`` is the Rust core (:mod:`correlator._wire`)
decoding and accumulating the in-memory datagrams and handing over the interval's table,
``python_decode_accumulate`` the same in pure Python; issue 14's target for the Rust core
is 2.5 M samples per CPU second.

Live over loopback, the same datagrams are sent by ``benchmarks/sender`` (Rust,
``sendmmsg`` batches at a set rate, pinned to a core of its own) to one receive worker (its
Rust thread, pinned to another; the receive buffer is asked for ``LIVE_RCVBUF`` past
``net.core.rmem_max`` when the process may (root), ``live_receive_buffer_bytes`` is what the
kernel granted, twice the usable size):
``live_*`` at >= 1 M samples per second for ``FABCORR_BENCH_LIVE_S`` seconds (60; issue
14: < 0.1 % lost, kernel drops counted), and ``boundary_*`` at 20,000 datagrams per
second over 1 s intervals while Python holds the GIL for 0.5 s after every boundary, as
attributing an interval does (issue 13: drops at the interval boundary).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.harness import Result, median
from correlator import _wire
from correlator.attribution.accumulate import Accumulator
from correlator.replay import ReplayConfig, replay
from correlator.sflow import native
from correlator.sflow.accounting import Totals
from correlator.sflow.admission import Admission
from correlator.sflow.pcap import read_udp_payloads
from correlator.sflow.receiver import ReceiverConfig, Worker, open_socket, receive_buffer
from inventory.facts import FactSet
from simulator import roce, sflow_wire
from simulator.generator import FabricSpec, generate_facts
from simulator.ladder import synthetic_jobs
from simulator.pcap import write_pcap
from tests.sflow_oracle.decode import Decoder
from topology.build import build_graph
from topology.footprint import owners, plugs
from topology.graph import FabricGraph

NAME = "sflow"
SIZE = "10k-ips"
SAMPLES = 1_000_000
SECONDS = 10  # one interval: at 1:400k a medium fabric sends 1M samples in 1.4 s
RATE = 4000
WIRE_TARGET = 2_500_000  # samples per CPU second, decode + accumulate (issue 14)
LIVE_TARGET = 1_000_000  # samples per second over loopback, one receive worker (issue 14)
LIVE_SECONDS = float(os.environ.get("FABCORR_BENCH_LIVE_S", "60"))
LIVE_RCVBUF = 128 << 20  # bytes asked for the receive buffer: ~0.3 s of the live traffic
BOUNDARY_RATE = 20_000  # datagrams per second (issue 13)
_SENDER = Path(__file__).parent / "sender"
_SPEC = FabricSpec(nodes=1280, leaves_per_rail=20, spines=64, uplinks_per_leaf=64)
_TEMPLATES = 20_000  # distinct (port, source, destination) samples to draw from


def run(sizes: list[str], repeat: int) -> list[Result]:
    """One fabric size of its own, whatever ``sizes`` says."""
    del sizes
    facts = bench_facts()
    fabric = build_graph(facts)
    datagrams = _capture(fabric)
    samples = sum(_count(d) for _, d, _ in datagrams)
    with tempfile.TemporaryDirectory(prefix="fabcorr-sflow-bench-") as folder:
        pcap = Path(folder) / "capture.pcap"
        write_pcap(pcap, [(t, d, a, "192.0.2.99", 6343) for t, d, a in datagrams])
        memory = [(t, d) for t, d, _ in datagrams]
        wire = median([_wire_decode_accumulate(memory, samples) for _ in range(repeat)])
        python = median([_python_decode_accumulate(memory, samples) for _ in range(repeat)])
        ours_memory = median([_fabcorr(fabric, memory, samples) for _ in range(repeat)])
        ours_pcap = median([_fabcorr(fabric, _from_pcap(pcap), samples)
                            for _ in range(repeat)])
        theirs = [sfacctd(pcap, Path(folder), samples) for _ in range(repeat)]
        sender = _build_sender()
        if sender is not None:
            sends = Path(folder) / "datagrams.bin"
            sends.write_bytes(b"".join(len(d).to_bytes(4, "little") + d
                                       for _, d, _ in datagrams))
            agents = sorted({a for _, _, a in datagrams})
            per_datagram = samples / len(datagrams)
            live = [_live(sender, sends, agents, LIVE_TARGET * 1.05 / per_datagram,
                          LIVE_SECONDS, 10.0, 0.0) for _ in range(repeat)]
            boundary = [_live(sender, sends, agents, BOUNDARY_RATE, 10.0, 1.0, 0.5)
                        for _ in range(repeat)]
    results = [
        Result(NAME, SIZE, "pod_ips", len(facts.pod_interfaces), "count"),
        Result(NAME, SIZE, "samples", samples, "count"),
        Result(NAME, SIZE, "datagrams", len(datagrams), "count"),
        Result(NAME, SIZE, "wire_decode_accumulate_samples_per_cpu_s", samples / wire,
               "samples/s"),
        Result(NAME, SIZE, "wire_vs_target_ratio", samples / wire / WIRE_TARGET, "ratio"),
        Result(NAME, SIZE, "python_decode_accumulate_samples_per_cpu_s", samples / python,
               "samples/s"),
        Result(NAME, SIZE, "decode_attribute_samples_per_s", samples / ours_memory,
               "samples/s"),
        Result(NAME, SIZE, "pcap_decode_attribute_samples_per_s", samples / ours_pcap,
               "samples/s"),
    ]
    if sender is not None:
        for name, runs in (("live", live), ("boundary", boundary)):
            results += [
                Result(NAME, SIZE, f"{name}_received_samples_per_s",
                       median([r["samples"] / r["seconds"] for r in runs]), "samples/s"),
                Result(NAME, SIZE, f"{name}_lost_percent",
                       median([100 * r["lost"] / r["sent"] for r in runs]), "%"),
                Result(NAME, SIZE, f"{name}_kernel_drops",
                       median([r["kernel_drops"] for r in runs]), "count"),
                Result(NAME, SIZE, f"{name}_receiver_cpu_percent",
                       median([100 * r["cpu"] / r["seconds"] for r in runs]), "%"),
            ]
        results.append(Result(NAME, SIZE, "live_receive_buffer_bytes",
                              median([r["rcvbuf"] for r in live]), "bytes"))
        results.append(Result(NAME, SIZE, "live_vs_target_ratio",
                              median([r["samples"] / r["seconds"] for r in live])
                              / LIVE_TARGET, "ratio"))
    if all(t is not None for t in theirs):
        cpu = median([t for t in theirs if t is not None])
        results += [
            Result(NAME, SIZE, "sfacctd_pcap_samples_per_cpu_s", samples / cpu, "samples/s"),
            Result(NAME, SIZE, "fabcorr_vs_sfacctd_ratio", cpu / ours_pcap, "ratio"),
        ]
    return results


def bench_facts() -> FactSet:
    """The benchmark fabric's facts: 10,240 pod IPs in 120 jobs of 30 tenants."""
    return generate_facts(replace(_SPEC, jobs=synthetic_jobs(_SPEC.nodes, _SPEC.rails,
                                                               120, 30)))


def _build_sender() -> Path | None:
    """The sender's binary, built if need be (None without cargo)."""
    if shutil.which("cargo") is None:
        return None
    subprocess.run(["cargo", "build", "--quiet", "--release", "--manifest-path",
                    str(_SENDER / "Cargo.toml")], check=True)
    return _SENDER / "target" / "release" / "fabcorr-sflow-send"


def _live(sender: Path, sends: Path, agents: list[str], rate: float, seconds: float,
          interval_s: float, busy_s: float) -> dict[str, float]:
    """``sends`` sent at ``rate`` datagrams per second for ``seconds`` to one receive
    worker; after every interval boundary Python holds the GIL for ``busy_s``. What was
    sent, received (datagrams, samples), dropped by the kernel, lost, and the receiving
    process's CPU seconds beyond that busy work."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sock = open_socket(ReceiverConfig(host="127.0.0.1", port=port, interval_s=interval_s,
                                      rcvbuf_bytes=LIVE_RCVBUF))
    worker = Worker(time.time(), interval_s,
                    admission=Admission([(a,) for a in agents], relays=["127.0.0.0/8"]))
    worker.watch(sock)
    cores = _cores()
    if cores:  # the receive thread takes this thread's core when it starts
        os.sched_setaffinity(0, {cores[0]})
    worker.receive(sock)
    totals, busy = Totals(), 0.0
    cpu = time.process_time()
    started = time.time()
    process = subprocess.Popen([str(sender), str(sends), f"127.0.0.1:{port}", str(rate),
                                str(seconds)], stdout=subprocess.PIPE, text=True)
    if cores:
        os.sched_setaffinity(process.pid, {cores[1]})
    try:
        while process.poll() is None:
            time.sleep(max(0.0, min(0.1, worker.end - time.time())))
            if time.time() < worker.end:
                continue
            for _, part in worker.close(time.time()):
                totals.add(part)
            began = time.process_time()
            while time.process_time() - began < busy_s:  # the GIL held, as attributing does
                sum(range(1000))
            busy += time.process_time() - began
        out, _ = process.communicate()
        time.sleep(0.2)
        now = time.time()
        for _, part in [*worker.close(now), worker.take(now)]:
            totals.add(part)
        granted = receive_buffer(sock)
    finally:
        worker.stop()
        sock.close()
        if process.poll() is None:
            process.kill()
        if cores:
            os.sched_setaffinity(0, cores)
    elapsed = time.time() - started
    sent = json.loads(out)["sent"]
    if totals.rejects:
        raise RuntimeError(f"live: rejects {dict(totals.rejects)}")
    return {"sent": sent, "received": totals.datagrams, "samples": totals.samples["flow"],
            "kernel_drops": totals.kernel_drops, "lost": sent - totals.datagrams,
            "seconds": json.loads(out)["seconds"], "rcvbuf": granted,
            "cpu": time.process_time() - cpu - busy, "elapsed": elapsed}


def _cores() -> list[int]:
    """The receiver's core and the sender's (the first two this process may use), then
    the rest; empty with fewer than two."""
    cores = sorted(os.sched_getaffinity(0))
    return cores if len(cores) >= 2 else []


def _fabcorr(fabric: FabricGraph, datagrams: object, samples: int) -> float:
    """CPU seconds of one replay (a single thread: CPU time is its time on one core)."""
    start = time.process_time()
    result = replay(fabric, datagrams, config=ReplayConfig(interval_s=10.0))  # type: ignore[arg-type]
    seconds = time.process_time() - start
    got = sum(result.totals.samples.values())
    if got != samples or result.totals.rejects:
        raise RuntimeError(f"fabcorr decoded {got} of {samples} samples, "
                           f"rejects {dict(result.totals.rejects)}")
    unknown = sum(sum(a.unknown_ports.values()) for a in result.attributions)
    if unknown or any(a.unattributed_samples for a in result.attributions):
        raise RuntimeError("samples of the benchmark capture did not resolve")
    return seconds


def _wire_decode_accumulate(datagrams: list[tuple[float, bytes]], samples: int) -> float:
    """CPU seconds of the Rust core over ``datagrams``, the interval handed to Python."""
    start = time.process_time()
    accumulator = _wire.Accumulator(datagrams[0][0])
    accumulator.add_many(datagrams)
    interval, _ = native.interval(accumulator.take(datagrams[-1][0] + 1.0))
    seconds = time.process_time() - start
    got = accumulator.take_counts()["samples"]
    if got != {"flow": samples} or not interval.segments[0].tables:
        raise RuntimeError(f"the Rust core decoded {got} of {samples} samples")
    return seconds


def _python_decode_accumulate(datagrams: list[tuple[float, bytes]], samples: int) -> float:
    """CPU seconds of the Python decoder and accumulator over ``datagrams``."""
    start = time.process_time()
    decoder, accumulator = Decoder(), Accumulator(datagrams[0][0])
    for at, data in datagrams:
        datagram = decoder.decode(data)
        if datagram is not None:
            accumulator.add(datagram, at)
    accumulator.take(datagrams[-1][0] + 1.0)
    seconds = time.process_time() - start
    if decoder.samples != {"flow": samples}:
        raise RuntimeError(f"the Python decoder decoded {decoder.samples} of {samples}")
    return seconds


def _from_pcap(pcap: Path) -> object:
    return ((at, payload) for at, _, _, _, payload in read_udp_payloads(pcap))


def sfacctd(pcap: Path, folder: Path, samples: int) -> float | None:
    """CPU seconds sfacctd takes over ``pcap`` (decoding and aggregating: its core and
    print plugin processes), None when it is not installed."""
    binary = shutil.which("sfacctd")
    if binary is None:
        return None
    output = folder / "sfacctd.csv"
    output.unlink(missing_ok=True)
    config = folder / "sfacctd.conf"
    config.write_text(
        f"daemonize: false\npcap_savefile: {pcap}\n"
        "plugins: print\naggregate: peer_src_ip, in_iface, src_host, dst_host\n"
        f"print_output: csv\nprint_output_file: {output}\nprint_refresh_time: 3600\n"
        "print_output_file_append: true\n"  # a full cache is flushed: keep every flush
        "logfile: /dev/null\n")  # no sfacctd_port: it may not go with pcap_savefile
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "-f", str(config)], check=True, timeout=600,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    counted = _sfacctd_packets(output)
    if counted != samples:
        raise RuntimeError(f"sfacctd counted {counted} of {samples} samples")
    return seconds


def _sfacctd_packets(output: Path) -> int:
    """Packets (samples: no renormalization) in sfacctd's CSV output (one or more
    flushes of its cache, each under the header)."""
    lines = output.read_text().splitlines()
    column = lines[0].split(",").index("PACKETS")
    return sum(int(line.split(",")[column]) for line in lines if line and line != lines[0])


def _capture(fabric: FabricGraph) -> list[tuple[float, bytes, str]]:
    """Datagrams (time, payload, agent) of ``SAMPLES`` samples, 5-10 per datagram."""
    rng = random.Random(7)
    graph, who = fabric.graph, owners(fabric)
    agents = {s.name: s.sflow_agent for s in fabric.facts.switches}
    by_job: dict[str, list[tuple[str, str, int]]] = {}
    for podif, plug in plugs(fabric).items():
        port = graph.nodes[plug.leaf_port]
        address = graph.nodes[podif]["ipv4"].split("/")[0]
        by_job.setdefault(who[podif].job, []).append((address, port["switch"],
                                                      port["ifindex"]))
    jobs = [members for members in by_job.values() if len(members) > 1]
    templates: dict[str, list[bytes]] = {}
    mac = bytes(6)
    for n in range(_TEMPLATES):
        (src, leaf, index), (dst, _, _) = rng.sample(rng.choice(jobs), 2)
        frame = roce.frame(mac, mac, _packed(src), _packed(dst),
                           roce.payload(rng.choice((roce.WRITE_ONLY, roce.WRITE_MIDDLE,
                                                    roce.SEND_ONLY, roce.ACK)),
                                        rng.randrange(1 << 24), n, 4096),
                           sport=49152 + n % 16384)
        templates.setdefault(leaf, []).append(sflow_wire.FlowSample(
            n, index, RATE, RATE * n, 0, sflow_wire.ifindex(index),
            sflow_wire.ifindex(1), frame[:128], len(frame) + 4).encode())
    names = sorted(templates)
    sequence = dict.fromkeys(names, 0)
    payloads: list[tuple[bytes, str]] = []
    made = 0
    while made < SAMPLES:
        leaf = rng.choice(names)
        count = min(rng.randint(5, 10), SAMPLES - made)
        sequence[leaf] += 1
        header = sflow_wire.datagram_header(agents[leaf], 0, sequence[leaf], sequence[leaf],
                                            count)
        payloads.append((header + b"".join(rng.choices(templates[leaf], k=count)),
                         agents[leaf]))
        made += count
    start = 1767229200.0
    return [(start + SECONDS * i / len(payloads), data, agent)
            for i, (data, agent) in enumerate(payloads)]


def _packed(address: str) -> bytes:
    return bytes(int(part) for part in address.split("."))


def _count(datagram: bytes) -> int:
    return int.from_bytes(datagram[24:28], "big")
