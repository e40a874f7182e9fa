"""``fabcorr attribute --pcap`` on a capture where nearly every sample is a new pod pair,
next to pmacct's ``sfacctd`` on the same pcap in the same run (issue 14).

The fabric is the sflow suite's (10,240 pod IPs, 120 jobs of 30 tenants), saved as a
snapshot that knows every agent, port and pod. The capture holds 1,000,000 RoCEv2 flow
samples in datagrams of 5-10 from the leaves, each from a pod at its own leaf port to a
pod drawn from the whole fabric: ~1 M distinct pod pairs over one 10 s interval.

``fabcorr attribute`` runs as a user runs it, one process per run, with table output
and with ``-o json`` (to /dev/null; its size is measured once); its CPU seconds (user +
system, from the child's resource usage) less those of the same command on an empty
capture (interpreter, imports, loading the snapshot: ``start_cpu_s``), run in turn with
it, are its work (:func:`work_cpu`).
``sfacctd`` decodes and aggregates (its core and print plugin, as the sflow suite runs
it), and decodes alone: its core process's own CPU seconds, read from ``/proc`` once it
has read the whole capture (``pcap_savefile_wait``). Targets: >= 5x the former, >= 1x
the latter, json within 2x of the table's time. Medians of ``repeat`` runs.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result, median
from benchmarks.sflow_suite import bench_facts, sfacctd
from simulator import roce, sflow_wire
from simulator.pcap import write_pcap
from topology.build import build_graph
from topology.footprint import plugs
from topology.graph import FabricGraph
from topology.snapshot import save_snapshot

NAME = "attribute"
SIZE = "1m-pairs"
SAMPLES = 1_000_000
SECONDS = 10
RATE = 4000
AGGREGATE_TARGET = 5.0  # x sfacctd decode + aggregate
DECODE_TARGET = 1.0  # x sfacctd decode alone
JSON_TARGET = 2.0  # json's time over the table's, at most
_FABCORR = [sys.executable, "-m", "correlator.cli.main"]


def run(sizes: list[str], repeat: int) -> list[Result]:
    """One fabric of its own, whatever ``sizes`` says."""
    del sizes
    fabric = build_graph(bench_facts())
    datagrams, pairs = capture(fabric)
    with tempfile.TemporaryDirectory(prefix="fabcorr-attribute-bench-") as name:
        folder = Path(name)
        snapshot, pcap, empty = folder / "snapshot.json", folder / "capture.pcap", \
            folder / "empty.pcap"
        save_snapshot(fabric, snapshot)
        write_pcap(pcap, [(t, d, a, "192.0.2.99", 6343) for t, d, a in datagrams])
        write_pcap(empty, [])
        del fabric, datagrams
        table, start = work_cpu(snapshot, pcap, empty, "table", repeat)
        json, _ = work_cpu(snapshot, pcap, empty, "json", repeat)
        json_bytes = _json_size(snapshot, pcap, folder)
        aggregate = [sfacctd(pcap, folder, SAMPLES) for _ in range(repeat)]
        decode = [_sfacctd_core(pcap, folder) for _ in range(repeat)]
    results = [
        Result(NAME, SIZE, "samples", SAMPLES, "count"),
        Result(NAME, SIZE, "distinct_pod_pairs", pairs, "count"),
        Result(NAME, SIZE, "start_cpu_s", start, "s"),
        Result(NAME, SIZE, "table_cpu_s", table, "s"),
        Result(NAME, SIZE, "table_samples_per_cpu_s", SAMPLES / table, "samples/s"),
        Result(NAME, SIZE, "json_cpu_s", json, "s"),
        Result(NAME, SIZE, "json_vs_table_ratio", json / table, "ratio"),
        Result(NAME, SIZE, "json_mib", json_bytes / 2**20, "MiB"),
    ]
    if all(a is not None for a in aggregate) and all(d is not None for d in decode):
        theirs = median([a for a in aggregate if a is not None])
        core = median([d for d in decode if d is not None])
        results += [
            Result(NAME, SIZE, "sfacctd_aggregate_samples_per_cpu_s", SAMPLES / theirs,
                   "samples/s"),
            Result(NAME, SIZE, "sfacctd_decode_samples_per_cpu_s", SAMPLES / core,
                   "samples/s"),
            Result(NAME, SIZE, "table_vs_sfacctd_aggregate_ratio", theirs / table, "ratio"),
            Result(NAME, SIZE, "table_vs_sfacctd_decode_ratio", core / table, "ratio"),
        ]
    return results


def capture(fabric: FabricGraph) -> tuple[list[tuple[float, bytes, str]], int]:
    """Datagrams (time, payload, agent) of ``SAMPLES`` samples, 5-10 per datagram, each
    from a random pod at its leaf port to a random pod; and how many distinct (source,
    destination) pairs they hold."""
    rng = random.Random(14)
    agents = {s.name: s.sflow_agent for s in fabric.facts.switches}
    by_leaf, addresses = leaf_templates(fabric)
    leaves = sorted(by_leaf)
    sequence = dict.fromkeys(leaves, 0)
    payloads: list[tuple[bytes, str]] = []
    pairs: set[tuple[bytes, bytes]] = set()
    made = 0
    while made < SAMPLES:
        leaf = rng.choice(leaves)
        count = min(rng.randint(5, 10), SAMPLES - made)
        sequence[leaf] += 1
        samples = []
        for _ in range(count):
            template = rng.choice(by_leaf[leaf])
            dst = rng.choice(addresses)
            samples.append(sample_to(template, dst))
            pairs.add((template[0][template[1] - 8:template[1] - 4], dst))
        header = sflow_wire.datagram_header(agents[leaf], 0, sequence[leaf], sequence[leaf],
                                            count)
        payloads.append((header + b"".join(samples), agents[leaf]))
        made += count
    start = 1767229200.0
    return [(start + SECONDS * i / len(payloads), data, agent)
            for i, (data, agent) in enumerate(payloads)], len(pairs)


def leaf_templates(fabric: FabricGraph) -> tuple[dict[str, list[tuple[bytes, int]]],
                                                   list[bytes]]:
    """Per leaf, a sample template (:func:`sample_template`) from each pod interface at
    its ports; and every pod interface's address."""
    graph = fabric.graph
    by_leaf: dict[str, list[tuple[bytes, int]]] = {}
    addresses = []
    for podif, plug in sorted(plugs(fabric).items()):
        port = graph.nodes[plug.leaf_port]
        address = bytes(int(p) for p in graph.nodes[podif]["ipv4"].split("/")[0].split("."))
        addresses.append(address)
        by_leaf.setdefault(port["switch"], []).append(sample_template(address, port["ifindex"]))
    return by_leaf, addresses


def sample_template(src: bytes, ifindex: int) -> tuple[bytes, int]:
    """A flow sample from ``src`` to 0.0.0.0 at port ``ifindex``, and where its sampled
    header's IPv4 destination ends."""
    mac = bytes(6)
    frame = roce.frame(mac, mac, src, bytes(4), roce.payload(roce.WRITE_ONLY, 7, 1, 4096),
                       sport=49152 + ifindex % 16384)
    encoded = sflow_wire.FlowSample(1, ifindex, RATE, RATE, 0, sflow_wire.ifindex(ifindex),
                                    sflow_wire.ifindex(1), frame[:128], len(frame) + 4).encode()
    return encoded, len(encoded) - 128 + 34  # the header is the sample's last 128 bytes


def sample_to(template: tuple[bytes, int], dst: bytes) -> bytes:
    """The template sample sent to ``dst``: its address and IPv4 header checksum set
    (RFC 1624: the checksum of a zero destination, less the new words)."""
    encoded, end = template
    checksum = int.from_bytes(encoded[end - 10:end - 8], "big")  # the IPv4 header's 10-11
    total = (~checksum & 0xFFFF) + int.from_bytes(dst[:2], "big") + \
        int.from_bytes(dst[2:], "big")
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return b"".join((encoded[:end - 10], (~total & 0xFFFF).to_bytes(2, "big"),
                     encoded[end - 8:end - 4], dst, encoded[end:]))


def work_cpu(snapshot: Path, pcap: Path, empty: Path, output: str, repeat: int
             ) -> tuple[float, float]:
    """CPU seconds of ``fabcorr attribute`` on ``pcap`` less those on ``empty`` (the
    process start: interpreter, imports, snapshot): the median over ``repeat`` pairs of
    runs, each pair run back to back so that both see the machine alike (a virtual
    machine's speed drifts over minutes), after one pair that is not counted (files just
    written, caches cold). Also the median start."""
    fabcorr_cpu(snapshot, empty, output), fabcorr_cpu(snapshot, pcap, output)
    pairs = [(fabcorr_cpu(snapshot, empty, output), fabcorr_cpu(snapshot, pcap, output))
             for _ in range(repeat)]
    return median([work - start for start, work in pairs]), median([s for s, _ in pairs])


def fabcorr_cpu(snapshot: Path, pcap: Path, output: str) -> float:
    """CPU seconds of one ``fabcorr attribute`` process (its output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*_FABCORR, "attribute", "--snapshot", str(snapshot), "--pcap", str(pcap),
                    "-o", output], check=True, stdout=subprocess.DEVNULL, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _json_size(snapshot: Path, pcap: Path, folder: Path) -> int:
    out = folder / "attribution.json"
    with out.open("wb") as stream:
        subprocess.run([*_FABCORR, "attribute", "--snapshot", str(snapshot), "--pcap",
                        str(pcap), "-o", "json"], check=True, stdout=stream, timeout=900)
    size = out.stat().st_size
    out.unlink()
    return size


def _sfacctd_core(pcap: Path, folder: Path) -> float | None:
    """CPU seconds of sfacctd's core process alone (reading and decoding ``pcap``, handing
    the flows to its plugin): read from ``/proc`` once its CPU time has stopped growing
    after the capture (it waits then), None when sfacctd is not installed."""
    binary = shutil.which("sfacctd")
    if binary is None:
        return None
    config = folder / "sfacctd-core.conf"
    config.write_text(
        f"daemonize: false\npcap_savefile: {pcap}\npcap_savefile_wait: true\n"
        "plugins: print\naggregate: peer_src_ip, in_iface, src_host, dst_host\n"
        f"print_output: csv\nprint_output_file: {folder / 'sfacctd-core.csv'}\n"
        "print_refresh_time: 3600\nprint_output_file_append: true\nlogfile: /dev/null\n")
    process = subprocess.Popen([binary, "-f", str(config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        last, still = -1, 0.0
        deadline = time.monotonic() + 600
        while still < 2.0 and time.monotonic() < deadline:
            time.sleep(0.25)
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            used = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
            still = still + 0.25 if used == last else 0.0
            last = used
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return last / ticks
