"""Inlet benchmark: ``fabcorr inlet``'s forwarding thread on one core, over loopback.

The sflow suite's capture (1,000,000 RoCEv2 samples in datagrams of 5-10, from the leaves of
its 10,240-pod-IP fabric) is sent by ``benchmarks/sender`` (``sendmmsg`` batches at a set
rate, pinned to a core of its own) to an inlet (its Rust thread pinned to another) routing
every leaf to one of 3 shards by :func:`correlator.shards.owner`; the shards are sockets
nobody reads, so what is measured is the inlet's work alone (the header read, the source
check, the routing, one ``sendmmsg`` per shard and batch). Each leaf's management address
is 127.0.0.1, the sender's, so every datagram passes the source check.

``target_*``: at the sflow suite's live rate (1.05 M samples per second);
``saturated_*``: at 4 times that, the inlet's ceiling on one core (as far as the sender
keeps up: ``sent_datagrams_per_s``). For each: datagrams and samples forwarded per second
and per CPU second of the inlet process (its forwarding thread, the kernel's send work
included: the rate one core sustains, whatever else the machine runs), the percentage of
what was sent that was not forwarded (``lost_percent``: the inlet socket's kernel drops and
the inlet's own drops, counted once what was queued has gone through) and the inlet
process's CPU. ``FABCORR_BENCH_LIVE_S`` seconds per run (60), medians of ``repeat``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result, median
from benchmarks.sflow_suite import (
    LIVE_RCVBUF,
    LIVE_SECONDS,
    LIVE_TARGET,
    _build_sender,
    _capture,
    _cores,
    bench_facts,
)
from correlator.inlet.inlet import Inlet
from correlator.sflow.receiver import ReceiverConfig, kernel_drops, open_socket
from topology.build import build_graph

NAME = "inlet"
SIZE = "10k-ips"
SHARDS = 3


def run(sizes: list[str], repeat: int) -> list[Result]:
    """One capture of its own, whatever ``sizes`` says; nothing without cargo."""
    del sizes
    sender = _build_sender()
    if sender is None:
        return []
    fabric = build_graph(bench_facts())
    datagrams = _capture(fabric)
    per_datagram = sum(int.from_bytes(d[24:28], "big") for _, d, _ in datagrams) / len(datagrams)
    switches = [(s.name, (s.sflow_agent, "127.0.0.1")) for s in fabric.facts.switches]
    results = []
    with tempfile.TemporaryDirectory(prefix="fabcorr-inlet-bench-") as folder:
        sends = Path(folder) / "datagrams.bin"
        sends.write_bytes(b"".join(len(d).to_bytes(4, "little") + d for _, d, _ in datagrams))
        for name, times in (("target", 1.0), ("saturated", 4.0)):
            rate = times * LIVE_TARGET * 1.05 / per_datagram
            runs = [_forward(sender, sends, switches, rate, LIVE_SECONDS)
                    for _ in range(repeat)]
            results += [
                Result(NAME, SIZE, f"{name}_sent_datagrams_per_s",
                       median([r["sent"] / r["seconds"] for r in runs]), "datagrams/s"),
                Result(NAME, SIZE, f"{name}_forwarded_datagrams_per_s",
                       median([r["forwarded"] / r["seconds"] for r in runs]), "datagrams/s"),
                Result(NAME, SIZE, f"{name}_forwarded_samples_per_s",
                       median([r["samples"] / r["seconds"] for r in runs]), "samples/s"),
                Result(NAME, SIZE, f"{name}_forwarded_datagrams_per_cpu_s",
                       median([r["forwarded"] / r["cpu"] for r in runs]), "datagrams/s"),
                Result(NAME, SIZE, f"{name}_forwarded_samples_per_cpu_s",
                       median([r["samples"] / r["cpu"] for r in runs]), "samples/s"),
                Result(NAME, SIZE, f"{name}_lost_percent",
                       median([100 * (r["sent"] - r["forwarded"]) / r["sent"] for r in runs]),
                       "%"),
                Result(NAME, SIZE, f"{name}_kernel_drops",
                       median([r["kernel_drops"] for r in runs]), "count"),
                Result(NAME, SIZE, f"{name}_inlet_cpu_percent",
                       median([100 * r["cpu"] / r["seconds"] for r in runs]), "%"),
            ]
    return results


def _settled(inlet: Inlet) -> dict[str, list[int]]:
    """The inlet's counts once what was queued has gone through (no change for 1 s)."""
    counts, deadline = inlet.counts(), time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(1.0)
        counts, before = inlet.counts(), counts
        if counts == before:
            break
    return counts


def _forward(sender: Path, sends: Path, switches: list[tuple[str, tuple[str, str]]],
             rate: float, seconds: float) -> dict[str, float]:
    """``sends`` sent at ``rate`` datagrams per second for ``seconds`` through an inlet to
    :data:`SHARDS` unread sockets: sent, forwarded (datagrams, samples), kernel drops at
    the inlet's socket, the inlet process's CPU seconds."""
    shards = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(SHARDS)]
    for shard in shards:
        shard.bind(("127.0.0.1", 0))
    sock = open_socket(ReceiverConfig(host="127.0.0.1", port=0, rcvbuf_bytes=LIVE_RCVBUF))
    cores = _cores()
    if cores:  # the forwarding thread takes this thread's core when it starts
        os.sched_setaffinity(0, {cores[0]})
    inlet = Inlet(sock, [s.getsockname()[:2] for s in shards], lambda: switches)
    cpu = time.process_time()
    try:
        inlet.refresh()
        process = subprocess.Popen([str(sender), str(sends),
                                    f"127.0.0.1:{sock.getsockname()[1]}", str(rate),
                                    str(seconds)], stdout=subprocess.PIPE, text=True)
        if cores:
            os.sched_setaffinity(process.pid, {cores[1]})
        out, _ = process.communicate()
        counts = _settled(inlet)
        drops = kernel_drops(sock)
    finally:
        inlet.close()
        sock.close()
        for shard in shards:
            shard.close()
        if cores:
            os.sched_setaffinity(0, cores)
    report = json.loads(out)
    return {"sent": report["sent"], "seconds": report["seconds"],
            "forwarded": sum(counts["forwarded"]), "samples": sum(counts["samples"]),
            "kernel_drops": drops, "cpu": time.process_time() - cpu}
