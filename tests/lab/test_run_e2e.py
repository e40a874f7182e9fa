"""``fabcorr run`` end to end on the network-namespace lab: real lldpd, snmpd and pmacctd.

The service runs in the root namespace as it would in production: it discovers the
lab's switches over SNMPv2c (LLDP-MIB joined to IF-MIB), joins them with a fact file of
the hosts' side (nodes, PFs with the hosts' real uplink MACs and what the hosts' lldpd
hears, a VF per pod, pods with their addresses, a job per tenant, the tenants), polls
the switches' counters every second, and receives sFlow from ``pmacctd`` sfprobe agents
on three switch ports over the management bridge. Three tenants' RoCEv2 traffic crosses
the fabric both ways (the plan of ``test_sflow_probe``); then the service's attribution
log, every interval of it together, is checked against the traffic generator's record
and the kernel's counters, per sampled port, direction ``in``:

- the tenants, jobs and pods attributed are exactly those whose traffic crossed the port,
  plus ``unattributed``: the lab's pokes that flush the agents, sent from link addresses
  no pod owns;
- each tenant's true bytes over the run lie between the sums of fabcorr's per-interval
  95 % bounds (``tenants[].low`` and ``high`` of every interval); its share of the bytes
  is printed beside the truth;
- the port's counter bytes (the links' ``counter_bytes`` from SNMP telemetry, summed over
  the intervals) agree with the kernel's rx delta (:data:`COUNTER_TOLERANCE`).

pmacct's sfprobe names every port's data source 0:1; fabcorr then counts a sample for its
input ifIndex, inbound (:func:`correlator.attribution.accumulate.data_source`): that is
what puts the three agents' samples on the right ports here.

pmacct samples the same packet numbers in every run (``test_sflow_probe`` says why), so
the shares measured are the same every run. The frames are a mix of 62 to 1,098 bytes.

Counter windows and intervals: the service polls on its own clock and attributes on
wall-clock seconds, each interval taking the latest poll's rate. If a poll ended about
when an interval does, an interval could take the rate the one before took (or two polls
could fall in one interval): a second of traffic counted twice or not at all. The test
reads when the polls end (``/api/v1/status``) and restarts the service, timed to move
them, when they end outside :data:`POLL_PHASES`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from correlator.cli.main import main
from inventory.factfile import write_facts
from inventory.facts import (
    FactSet,
    JobFact,
    NodeFact,
    PfFact,
    PodFact,
    PodInterfaceFact,
    TenantFact,
    VfFact,
)
from inventory.hostlldp import host_neighbors
from simulator import roce_traffic
from tests.lab.netns import COLLECTOR, SNMP_COMMUNITY, missing_tools

ROOT = Path(__file__).parents[2]
SAMPLING = 20
ROUNDS = 600  # 40 packets per round and host: ~1,200 samples per port at 1:20
PPS = 3000  # per host: the traffic lasts 8 s
PORTS = {("leaf1", "swp1"): "host1", ("leaf2", "swp1"): "host2", ("spine1", "swp1"): "host1"}
"""Sampled port -> the host whose traffic it receives."""
PODS = [("host1", "10.101.0.11", "A", 3), ("host1", "10.101.0.12", "A", 3),
        ("host1", "10.101.0.13", "B", 3), ("host1", "10.101.0.14", "C", 1),
        ("host2", "10.101.0.21", "A", 3), ("host2", "10.101.0.22", "A", 3),
        ("host2", "10.101.0.23", "B", 3), ("host2", "10.101.0.24", "C", 1)]
"""(host, address, tenant, weight): each pod sends to its tenant's pod on the other host."""
UPLINK = "ens1f0np0"
POKE_FRAME = 22 + 8 + 20 + 14  # a :meth:`Lab.poke` datagram as the kernel counts it
UNATTRIBUTED = "unattributed"
INTERVAL_S = 1.0
POLL_PHASES = (0.25, 0.65)
"""Where in its second a poll may end when the service starts (seconds past the interval
boundary): polls end later while the machine is busy with the traffic (up to ~0.2 s
here), and the service can take a boundary late when its event loop is busy."""
TARGET_PHASE = 0.45
COUNTER_TOLERANCE = 0.03
"""Counter bytes against the kernel. Both count the same frames without FCS (snmpd reads
the kernel's counters), and the ~9.3 MB of traffic dwarf the LLDP frames around it (a few
hundred bytes a second), so what differs is time: each interval multiplies the latest
poll's rate by its own second, the rate being the poll's delta over its span between
timestamps taken mid-walk. While the traffic runs, the walks take longer (the service
gets less CPU) and those spans stretch or shrink by up to ~0.15 s; through the traffic
that cancels out, but not in the first and last windows of it: up to 2 x 0.15 s of the
traffic's rate (1.2 MB/s) against its ~9.3 MB, ~3.5 %. Measured: within ±1.7 %."""
LAUNCH = "import sys; from correlator.cli.main import main; sys.exit(main())"


def pod_name(address: str) -> str:
    return "pod-" + address.rsplit(".", 1)[1]


def namespace(tenant: str) -> str:
    return f"tenant-{tenant.lower()}"


def host_facts(lab) -> FactSet:
    """The hosts' side, as Kubernetes and a host agent know it: nodes, each with its uplink
    PF (its real MAC, which the switches' LLDP reports) and what its lldpd hears, a VF per
    pod, pods with their addresses, a job per tenant, the tenants."""
    vfs, interfaces = [], []
    for host in lab.hosts:
        mine = [(address, tenant) for h, address, tenant, _ in PODS if h == host]
        for number, (address, tenant) in enumerate(mine):
            vf = f"0000:1a:00.{number + 2}"
            vfs.append(VfFact(host, vf, UPLINK, number))
            interfaces.append(PodInterfaceFact(namespace(tenant), pod_name(address), "net1",
                                               host, ipv4=f"{address}/32", vf_pci=vf))
    tenants = sorted({tenant for *_, tenant, _ in PODS})
    return FactSet(
        nodes=tuple(NodeFact(host) for host in lab.hosts),
        pfs=tuple(PfFact(host, UPLINK, "0000:1a:00.0", lab.mac(host, UPLINK))
                  for host in lab.hosts),
        neighbors=tuple(n for h in lab.hosts for n in host_neighbors(h, lab.lldp_json(h))),
        vfs=tuple(vfs),
        pods=tuple(PodFact(namespace(tenant), pod_name(address), host, job_kind="Job",
                           job_name="train", tenant=tenant)
                   for host, address, tenant, _ in PODS),
        pod_interfaces=tuple(interfaces),
        jobs=tuple(JobFact(namespace(t), "train", "Job", tenant=t) for t in tenants),
        tenants=tuple(TenantFact(t) for t in tenants))


def streams(lab) -> dict[str, list[roce_traffic.Stream]]:
    half = len(PODS) // 2
    return {lab.ns(host): [roce_traffic.Stream(tenant, src, PODS[(n + half) % len(PODS)][1],
                                               0x1000 + n, weight)
                           for n, (h, src, tenant, weight) in enumerate(PODS) if h == host]
            for host in lab.hosts}


def free_port(host: str, kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class FabcorrRun:
    """``fabcorr run`` against the lab, in a subprocess in the root namespace."""

    def __init__(self, lab, folder: Path) -> None:
        self.lab, self.folder = lab, folder
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        """Write the configuration, start the service, wait until it is ready."""
        self.starts += 1
        self.http_port = free_port("127.0.0.1", socket.SOCK_STREAM)
        self.sflow = (COLLECTOR, free_port(COLLECTOR, socket.SOCK_DGRAM))
        self.log = self.folder / f"attribution-{self.starts}.jsonl"
        self.stderr_path = self.folder / f"service-{self.starts}.log"
        config = self.folder / "fabcorr.yaml"
        config.write_text(yaml.safe_dump({
            "defaults": {"snmp": {"version": "2c",
                                  "community": {"env": "FABCORR_LAB_COMMUNITY"},
                                  "timeout_s": 2.0}},
            "switches": [{"name": s, "address": self.lab.mgmt[s], "protocols": ["snmp"]}
                         for s in self.lab.switches],
            "service": {"listen": f"127.0.0.1:{self.http_port}"},
            "topology": {"facts": [str(self.folder / "hosts.yaml")], "discover_every_s": 0,
                         "deadline_s": 15, "save": str(self.folder / "topology.json")},
            "telemetry": {"interval_s": INTERVAL_S},
            "sflow": {"listen": f"{self.sflow[0]}:{self.sflow[1]}"},
            "attribution": {"interval_s": INTERVAL_S, "log": str(self.log)}}))
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", LAUNCH, "run", "--config", str(config)],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr,
                env={**os.environ, "FABCORR_LAB_COMMUNITY": SNMP_COMMUNITY,
                     "PYTHONPATH": str(ROOT)})
        self.wait_for(lambda: self.get("/readyz")[0] == 200, 30, "ready")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except OSError:
            return 0, b""

    def status(self) -> dict:
        return json.loads(self.get("/api/v1/status")[1])

    def wait_for(self, condition, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"fabcorr run exited {self.process.returncode}: "
                                     + self.stderr_path.read_text()[-3000:])
            if time.monotonic() > deadline:
                raise AssertionError(f"fabcorr run not {what} in {timeout} s: "
                                     + self.stderr_path.read_text()[-3000:])
            time.sleep(0.1)

    def logged(self) -> list[dict]:
        """The attribution log's complete lines."""
        if not self.log.exists():
            return []
        text = self.log.read_text()
        return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines()]

    def poll_phases(self) -> dict[str, float]:
        """When each switch's polls end, in seconds past the interval boundary, once two
        of each have been published."""
        seen: dict[str, set[float]] = {}

        def polled_twice() -> bool:
            for name, health in self.status()["collectors"].items():
                if health["last_success"] is not None:
                    seen.setdefault(name, set()).add(health["last_success"])
            return len(seen) == len(self.lab.switches) and all(
                len(times) >= 2 for times in seen.values())

        self.wait_for(polled_twice, 60, "polling every switch")
        return {name: max(times) % INTERVAL_S for name, times in seen.items()}

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM; the exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        self.process = None
        return code

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


def started_in_phase(server: FabcorrRun) -> dict[str, float]:
    """Start the service until its polls end in :data:`POLL_PHASES`; after a miss, start it
    again at the moment that puts them at :data:`TARGET_PHASE` (discovery takes about as
    long every time)."""
    offset = None
    for _ in range(4):
        if offset is not None:
            time.sleep((TARGET_PHASE - offset - time.time()) % INTERVAL_S)
        launched = time.time()
        server.start()
        phases = server.poll_phases()
        print("polls end +" + ", +".join(f"{p:.3f} s ({n})" for n, p in sorted(phases.items()))
              + " past the second")
        if all(POLL_PHASES[0] <= phase <= POLL_PHASES[1] for phase in phases.values()):
            return phases
        offset = (max(phases.values()) - launched) % INTERVAL_S
        assert server.stop() == 0
    raise AssertionError(f"the service's polls never ended in {POLL_PHASES}")


def topology_link(server: FabcorrRun, port: str) -> dict:
    """``fabcorr topology link PORT --server URL -o json``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["topology", "link", port, "--server", server.url, "-o", "json"]) == 0
    return json.loads(out.getvalue())


def check_discovery(lab, server: FabcorrRun) -> None:
    """The switches' LLDP over SNMP joined with the hosts' facts: every cable confirmed
    from both ends, the host ports matched to the hosts' PFs by MAC, the sampled ports'
    ifIndex (what the sFlow agents name them by) the kernel's."""
    ifindexes = {f"{d}:{p}": topology_link(server, f"{d}:{p}")["ifindex"] for d, p in PORTS}
    assert ifindexes == {f"{d}:{p}": lab.ifindex(d, p) for d, p in PORTS}
    host = topology_link(server, "leaf1:swp1")
    assert (host["peer"], host["peer_kind"], host["status"], host["tier"]) == (
        f"host1:{UPLINK}", "pf", "confirmed", "host")
    assert (host["tenants"], host["pods"]) == (["A", "B", "C"], sorted(
        f"{namespace(tenant)}/{pod_name(address)}" for h, address, tenant, _ in PODS
        if h == "host1"))
    for port, peer in (("spine1:swp1", "leaf1:swp51"), ("leaf2:swp51", "spine1:swp2"),
                       ("leaf2:swp1", f"host2:{UPLINK}")):
        report = topology_link(server, port)
        assert (report["peer"], report["status"]) == (peer, "confirmed"), report
    status, body = server.get("/api/v1/topology/summary")
    summary = json.loads(body)
    assert status == 200 and summary["problems"] == {}, summary
    assert summary["links"] == {"host": {"confirmed": 2}, "leaf-spine": {"confirmed": 2}}


def poked(lab, server: FabcorrRun, pokes: dict, timeout: float = 60.0) -> float:
    """Poke the sampled ports until the log has a sample of a poke (``unattributed``) on
    each: agents send samples in order, so every sample of the traffic has arrived. Counts
    the pokes sent into each port; returns when the last were sent."""
    deadline = time.monotonic() + timeout
    while True:
        for port in PORTS:
            lab.poke(*port, count=2 * SAMPLING)
            pokes[port] = pokes.get(port, 0) + 2 * SAMPLING
        last = time.time()
        time.sleep(0.3)
        flushed = {link["port"] for line in server.logged()
                   for link in line["attribution"]["links"] if link["direction"] == "in"
                   and any(t["name"] == UNATTRIBUTED for t in link["tenants"])}
        if flushed >= {f"port:{d}/{p}" for d, p in PORTS}:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(
                f"poke samples only on {sorted(flushed)}; {len(server.logged())} intervals "
                f"logged; status {json.dumps(server.status())}; the service's log: "
                + server.stderr_path.read_text()[-3000:])


def test_fabcorr_run_attributes_the_lab_links_to_their_tenants(lab, tmp_path):
    missing = missing_tools(("pmacctd",))
    if missing:
        pytest.fail(f"missing: {', '.join(missing)} (`make test` installs them as root)")
    began = time.monotonic()
    lab.route({host: [address for h, address, *_ in PODS if h == host] for host in lab.hosts})
    write_facts(host_facts(lab), tmp_path / "hosts.yaml")
    server, probes = FabcorrRun(lab, tmp_path), []
    try:
        started_in_phase(server)
        print(f"service ready after {time.monotonic() - began:.1f} s, {server.starts} start(s)")
        check_discovery(lab, server)
        probes = [lab.sflow_probe(device, port, server.sflow, SAMPLING, pcap_filter="ip")
                  for device, port in PORTS]
        before = {port: lab.rx(*port) for port in PORTS}
        flows = roce_traffic.send(streams(lab), ROUNDS, pps=PPS)
        pokes: dict = {}
        last = poked(lab, server, pokes)
        # until a poll after the last poke is in a published interval: every byte counted
        server.wait_for(lambda: any(line["attribution"]["start"]
                                    + line["attribution"]["seconds"] > last + 2 * INTERVAL_S
                                    for line in server.logged()), 60, "past the pokes")
        after = {port: lab.rx(*port) for port in PORTS}
        collectors = server.status()["collectors"]
        lab.stop(*probes)
        probes = []
        assert server.stop() == 0
    finally:
        with contextlib.suppress(Exception):
            lab.stop(*probes)
        server.kill()

    assert all(health["errors"] == {} for health in collectors.values()), collectors
    logged = server.logged()
    failures = check_log(logged, flows, pokes, before, after)
    print(f"{len(logged)} intervals logged; the test took {time.monotonic() - began:.1f} s")
    assert failures == []


def check_log(logged: list[dict], flows, pokes: dict, before: dict, after: dict) -> list[str]:
    """The log's intervals together, per sampled port, against the generator and kernel;
    prints the measurements, returns the failures."""
    assert all(line["attribution"]["unknown_ports"] == {} for line in logged)
    received = [line["received"] for line in logged]
    assert all(r["rejects"] == {} and r["lost_datagrams"] == 0 for r in received)
    failures = []
    for (device, port), host in PORTS.items():
        node = f"port:{device}/{port}"
        links = [link for line in logged for link in line["attribution"]["links"]
                 if link["port"] == node and link["direction"] == "in"]
        # what crossed it: the host's streams, and the pokes into this port
        mine = [f for f in flows if f.src in {a for h, a, *_ in PODS if h == host}]
        sent = roce_traffic.totals(mine, lambda f: f"tenant:{f.tenant}")
        poke_bytes = pokes[device, port] * POKE_FRAME
        total = sum(octets for _, octets in sent.values()) + poke_bytes
        for tier, names in (("jobs", {f"job:{namespace(f.tenant)}/train" for f in mine}),
                            ("pods", {f"pod:{namespace(f.tenant)}/{pod_name(f.src)}"
                                      for f in mine})):
            seen = {share["name"] for link in links for share in link[tier] if share["samples"]}
            assert seen == {*names, UNATTRIBUTED}, (node, tier, sorted(seen))
        groups: dict[str, list[float]] = {}  # tenant -> [samples, bytes, low, high]
        for link in links:
            for share in link["tenants"]:
                sums = groups.setdefault(share["name"], [0, 0.0, 0.0, 0.0])
                for i, key in enumerate(("samples", "bytes", "low", "high")):
                    sums[i] += share[key]
        assert set(groups) == {*sent, UNATTRIBUTED}, (node, sorted(groups))
        print(f"{node} in: {sum(s[0] for s in groups.values())} samples in "
              f"{sum(1 for link in links if link['samples'])} intervals; "
              f"{pokes[device, port]} pokes ({poke_bytes / total:.2%} of the bytes)")
        attributed = sum(s[1] for s in groups.values())
        for tenant, (_, octets) in sorted(sent.items()):
            samples, found, low, high = groups[tenant]
            print(f"  {tenant}: {found:.0f} bytes, true {octets} ({found / octets - 1:+.2%}; "
                  f"share {found / attributed:.4f}, true {octets / total:.4f}); bounds "
                  f"[{low:.0f}, {high:.0f}]; {samples:.0f} samples")
            if not low <= octets <= high:
                failures.append(f"{node} {tenant}: true bytes {octets} outside "
                                f"[{low:.0f}, {high:.0f}]")
        # the agents keep the last pokes' samples: the pokes' bytes can only be low
        assert groups[UNATTRIBUTED][2] <= poke_bytes

        counted = sum(link["counter_bytes"] or 0.0 for link in links)
        kernel = after[device, port][1] - before[device, port][1]
        error = counted / kernel - 1
        print(f"  counter bytes {counted:.0f}, kernel rx {kernel}: {error:+.2%} "
              f"(tolerance ±{COUNTER_TOLERANCE:.0%}); per interval "
              f"{[round(link['counter_bytes'] or 0) for link in links]}")
        # the kernel saw the generator's frames and the pokes, and LLDP frames only besides
        assert 0 <= kernel - total < 0.001 * total, (node, kernel, total)
        if abs(error) > COUNTER_TOLERANCE:
            failures.append(f"{node}: counter bytes {counted:.0f}, kernel {kernel}: "
                            f"{error:+.2%}")
    return failures
