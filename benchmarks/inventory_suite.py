"""Kubernetes inventory benchmarks: build from kubectl dumps (time, peak RSS), watch events/s."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Result
from inventory.kubernetes.live import LiveKubernetes, LiveSettings, api_client
from simulator.generator import generate_facts
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects, write_kubectl_dump
from simulator.ladder import ladder_spec

NAME = "inventory"
TARGET_SIZE = "x-large"
WATCH_EVENTS = 20_000

# Run in a fresh interpreter so that peak RSS is the inventory's own. VmHWM, not
# ru_maxrss: the latter survives exec and would carry this (large) parent's peak.
_CHILD = """
import json, re, sys, time
from pathlib import Path
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.snapshot import read_cluster_objects
start = time.perf_counter()
objects = read_cluster_objects([sys.argv[1]])
read = time.perf_counter() - start
found = build_inventory(objects)
total = time.perf_counter() - start
peak = re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1)
print(json.dumps({"read_s": read, "total_s": total, "counts": found.counts,
                  "peak_rss_kib": int(peak)}))
"""


def run(sizes: list[str], repeat: int) -> list[Result]:
    results = []
    for size in dict.fromkeys([*sizes, TARGET_SIZE]):
        results += _from_dumps(size, repeat if size != TARGET_SIZE else 1)
    results.append(Result(NAME, "small", "watch_events_per_s", _watch_rate(), "events/s"))
    return results


def _from_dumps(size: str, repeat: int) -> list[Result]:
    objects = cluster_objects(generate_facts(ladder_spec(size)))
    with tempfile.TemporaryDirectory() as tmp:
        write_kubectl_dump(objects, Path(tmp))
        dump_mib = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
        runs = [json.loads(subprocess.run([sys.executable, "-c", _CHILD, tmp], check=True,
                                          capture_output=True, text=True).stdout)
                for _ in range(repeat)]
    best = sorted(runs, key=lambda r: r["total_s"])[len(runs) // 2]
    counts = best["counts"]
    return [
        Result(NAME, size, "dump_objects", len(objects), "count"),
        Result(NAME, size, "dump_mib", dump_mib, "MiB"),
        Result(NAME, size, "pod_interfaces", counts["interfaces"], "count"),
        Result(NAME, size, "vfs_configured", counts["vfs"], "count"),
        Result(NAME, size, "read_dumps_s", best["read_s"], "s"),
        Result(NAME, size, "build_from_dumps_s", best["total_s"], "s"),
        Result(NAME, size, "peak_rss_mib", max(r["peak_rss_kib"] for r in runs) / 1024, "MiB"),
    ]


def _watch_rate() -> float:
    """MODIFIED pod events per second, from the fake API server's apply to the reflector's
    store, over HTTP through the official client's Watch. Server and client share this
    process (and its GIL), so the figure is a lower bound."""
    objects = cluster_objects(generate_facts(ladder_spec("small")))
    pods = [o for o in objects if o["kind"] == "Pod"]
    events = []
    for i in range(WATCH_EVENTS):
        pod = copy.deepcopy(pods[i % len(pods)])
        pod["metadata"]["labels"]["revision"] = str(i)
        events.append(pod)
    with FakeKubeApi(objects) as api, tempfile.TemporaryDirectory() as tmp:
        live = LiveKubernetes(api_client(str(api.kubeconfig(Path(tmp) / "kubeconfig"))),
                              LiveSettings(watch_timeout_s=120))
        live.start()
        try:
            live.wait_ready(60)
            api.wait_watching("pods")
            seen = live.version
            start = time.perf_counter()
            for pod in events:
                api.apply("MODIFIED", pod)
            while live.version - seen < WATCH_EVENTS:
                time.sleep(0.005)
            return WATCH_EVENTS / (time.perf_counter() - start)
        finally:
            live.stop()
