"""``fabcorr run`` end to end on the network-namespace lab: real lldpd, snmpd and pmacctd.

The service runs in the root namespace as it would in production: it discovers the
lab's switches over SNMPv2c (LLDP-MIB joined to IF-MIB), joins them with a fact file of
the hosts' side (nodes, PFs with the hosts' real uplink MACs and what the hosts' lldpd
hears, a VF per pod, pods with their addresses, a job per tenant, the tenants), polls
the switches' counters every second (net-snmp, which refreshes ifHCInOctets only every
few seconds), and receives sFlow from ``pmacctd`` sfprobe agents on three switch ports
over the management bridge. Three tenants' RoCEv2 traffic crosses the fabric both ways
(the plan of ``test_sflow_probe``) for about 55 s at three rates in turn; then the
service's attribution log is scored, per sampled port, direction ``in``, against what
really crossed: nftables counters per tenant on the port's ingress, read every 50 ms in
the switch's namespace and interpolated at the service's interval boundaries
(:mod:`tests.lab.oracles`, no fabcorr code):

- per (interval, port, tenant) with traffic or samples: the true bytes inside the
  interval's ``tenants[].low..high`` in at least :data:`BYTES_INSIDE` of them, the true
  share of the port's bytes inside ``share_low..share_high`` in all but the few that
  sampling alone leaves out (:func:`shares_floor`; :data:`SHARES_INSIDE` over runs); a
  tenant the interval does not list is read as ``fabcorr simulate score`` reads it (a
  share up to the bound for none of the link's samples, :func:`absent`);
- per (port, tenant) over the run: the true bytes between the sums of the per-interval
  bounds at least as often as inside the textbook estimate's 95 % bound (frame length x
  sampling rate of the flow samples tshark decodes from a capture of the sFlow);
- the tenants, jobs and pods attributed are exactly those whose traffic crossed the port,
  plus ``unattributed``: the lab's pokes that flush the agents, sent from link addresses
  no pod owns;
- the port's counter bytes (the links' ``counter_bytes`` from SNMP, summed over the
  intervals) agree with the kernel's count over the same time (:data:`COUNTER_TOLERANCE`).

pmacct's sfprobe names every port's data source 0:1; fabcorr then counts a sample for its
input ifIndex, inbound (:func:`correlator.attribution.accumulate.data_source`): that is
what puts the three agents' samples on the right ports here. It samples the same packet
numbers in every run (``test_sflow_probe`` says why); the senders' order is new every run
(:data:`SENDER_SEED`), so runs sample different packets. The frames are a mix of 62 to 1,098
bytes. Its samples reach the service a little after their packets crossed (0.17 s, 0.65 s
at the 95th percentile): the interval after the traffic gets its last samples.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import secrets
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
from simulator.score import absent_bound
from tests.lab.netns import COLLECTOR, SNMP_COMMUNITY, missing_tools
from tests.lab.oracles import Counts, naive_bound, naive_estimates

ROOT = Path(__file__).parents[2]
SAMPLING = 20
ROUNDS = 2400  # 40 packets per round and host
PPS = (2500, 1000, 3500)
"""Each host's packets per second, for a third of its packets each: about 55 s."""
PORTS = {("leaf1", "swp1"): "host1", ("leaf2", "swp1"): "host2", ("spine1", "swp1"): "host1"}
"""Sampled port -> the host whose traffic it receives."""
PODS = [("host1", "10.101.0.11", "A", 3), ("host1", "10.101.0.12", "A", 3),
        ("host1", "10.101.0.13", "B", 3), ("host1", "10.101.0.14", "C", 1),
        ("host2", "10.101.0.21", "A", 3), ("host2", "10.101.0.22", "A", 3),
        ("host2", "10.101.0.23", "B", 3), ("host2", "10.101.0.24", "C", 1)]
"""(host, address, tenant, weight): each pod sends to its tenant's pod on the other host."""
TENANTS = ("A", "B", "C")
UPLINK = "ens1f0np0"
POKE_FRAME = 22 + 8 + 20 + 14  # a :meth:`Lab.poke` datagram as the kernel counts it
UNATTRIBUTED = "unattributed"
INTERVAL_S = 1.0
NET_SNMP_CACHE_S = 3
"""How long snmpd serves IF-MIB from its cache here: net-snmp's default, as a switch has it
(the other lab tests read fresh counters)."""
BYTES_INSIDE = 0.93
SHARES_INSIDE = 0.94
"""The issue's targets for fabcorr's 95 % intervals, per (interval, port, tenant): bytes in
every run; shares over runs, since one run cannot show it. pmacct samples the same packet
numbers every run (``test_sflow_probe``), so a run measures one draw of sampling over the
senders' order (:data:`SENDER_SEED`), about 500 checks that share it. The lab's mix replayed
offline over 100 draws (``test_estimate_lab_replay``; sampling alone) covers 95.2 % on
average, 1.37 points from draw to draw (binomial: 0.98), 91.7 % at worst: a calibrated
interval leaves one run in five below 94 %. So a run fails below :func:`shares_floor`, and
the target is judged on runs pooled. Measured (load about 4, a core busy): 92.4-96.6 % in
eleven runs with new orders (94.8, 96.0, 95.0, 94.7, 93.8, 92.4, 96.0, 96.6, 95.8, 95.2,
93.6), 94.9 % of their 5,519 checks; the order of seed 0, the one every run used before,
92.0 % (91.3-94.4 % in earlier runs): an unlucky draw.

What else is in a miss: a tenant with under 10 samples whose bytes ride on a minority of
large frames (tenant C: a quarter of its frames are 1,098 B and carry 71 % of its bytes;
estimate.py's missed-class bound covers it), and pmacct's samples come in batches, 0.17 s
after their packets (0.65 s at the 95th percentile), so the intervals cut them late; the
interval after the traffic gets its last samples and only the pokes' bytes."""
SHARES_SPREAD = 2.0
"""A run's share coverage varies this many times a binomial proportion's standard deviation,
its checks sharing one draw of the sampling and one machine's timing. The replay above gave
1.4 (1.37 / 0.98: sampling alone); fifteen runs of this test gave 2.0 (1.95 points: the
eleven above, seed 0's 92.0, seed 35866's 96.0, and seed 42337's 91.3 on a quiet machine and
90.2 % under CI's busy core, which a floor made with 1.4 failed): pmacct's batches cut by
the intervals move with the machine's load, on every port at once."""


def shares_floor(checks: int) -> float:
    """The share coverage a calibrated 95 % interval stays above in all but about one run
    in a thousand: three standard deviations of a run's coverage below 95 %.

    >>> round(shares_floor(500), 3)
    0.892
    """
    return 0.95 - 3 * SHARES_SPREAD * math.sqrt(0.95 * 0.05 / checks)


COUNTER_TOLERANCE = 0.001
"""Counter bytes summed over the intervals against the kernel's count over the same time:
the issue's 0.1 %. Both count the same frames without FCS (snmpd reads the kernel's
counters); what differs is time: the first and last intervals' ends are interpolated
between readings. Measured: within 0.0024 % (under 1 kB of 37.2 MB) on every port of
twelve runs, a core busy."""
LAUNCH = "import sys; from correlator.cli.main import main; sys.exit(main())"
SENDER_SEED = int(os.environ.get("FABCORR_LAB_SEED") or secrets.randbelow(1 << 16))
"""The senders' order (:func:`simulator.roce_traffic.send`), new every run: pmacct samples
the same packet numbers every run, so a fixed order would measure one draw of the sampling
again and again. ``FABCORR_LAB_SEED`` repeats a run's."""


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

    def start(self) -> None:
        """Write the configuration, start the service, wait until it is ready."""
        self.http_port = free_port("127.0.0.1", socket.SOCK_STREAM)
        self.sflow = (COLLECTOR, free_port(COLLECTOR, socket.SOCK_DGRAM))
        self.log = self.folder / "attribution.jsonl"
        self.stderr_path = self.folder / "service.log"
        config = self.folder / "fabcorr.yaml"
        config.write_text(yaml.safe_dump({
            "defaults": {"snmp": {"version": "2c",
                                  "community": {"env": "FABCORR_LAB_COMMUNITY"},
                                  "timeout_s": 5.0, "retries": 2}},
            "switches": [{"name": s, "address": self.lab.mgmt[s], "protocols": ["snmp"]}
                         for s in self.lab.switches],
            "service": {"listen": f"127.0.0.1:{self.http_port}"},
            "topology": {"facts": [str(self.folder / "hosts.yaml")], "discover_every_s": 0,
                         "deadline_s": 120, "save": str(self.folder / "topology.json")},
            "telemetry": {"interval_s": INTERVAL_S},
            "sflow": {"listen": f"{self.sflow[0]}:{self.sflow[1]}"},
            "attribution": {"interval_s": INTERVAL_S, "log": str(self.log)}}))
        with self.stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", LAUNCH, "run", "--config", str(config)],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr,
                env={**os.environ, "FABCORR_LAB_COMMUNITY": SNMP_COMMUNITY,
                     "PYTHONPATH": str(ROOT)})
        # ready once discovered over SNMP: a loaded machine's snmpd may take a minute, and
        # a switch whose discovery timed out would be missing (polls have their own bound)
        self.wait_for(lambda: self.get("/readyz")[0] == 200, 180, "ready")

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

    def stop(self, timeout: float = 60.0) -> int:
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


def counting(logged: list[dict]) -> bool:
    """Whether a published interval has counter bytes of every sampled port."""
    counted = {link["port"] for line in logged for link in line["attribution"]["links"]
               if link["direction"] == "in" and link["counter_bytes"] is not None}
    return counted >= {f"port:{d}/{p}" for d, p in PORTS}


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


def host_groups(host: str) -> dict[str, list[str]]:
    """Tenant -> the host's pod addresses of it."""
    return {t: [a for h, a, tenant, _ in PODS if h == host and tenant == t] for t in TENANTS}


def test_fabcorr_run_attributes_the_lab_links_to_their_tenants(lab, tmp_path):
    missing = missing_tools(("pmacctd", "nft", "dumpcap", "tshark"))
    if missing:
        pytest.fail(f"missing: {', '.join(missing)} (`make test` installs them as root)")
    began = time.monotonic()
    lab.route({host: [address for h, address, *_ in PODS if h == host] for host in lab.hosts})
    write_facts(host_facts(lab), tmp_path / "hosts.yaml")
    server, probes, pcap = FabcorrRun(lab, tmp_path), [], tmp_path / "sflow.pcapng"
    counters = [lab.count_ingress(device, port, host_groups(host))
                for (device, port), host in PORTS.items()]
    lab.snmp_cache(NET_SNMP_CACHE_S)
    try:
        server.start()
        print(f"service ready after {time.monotonic() - began:.1f} s; senders' seed "
              f"{SENDER_SEED} (FABCORR_LAB_SEED repeats it)")
        check_discovery(lab, server)
        # the counters' increase is known from their first readings on: count from before
        # the traffic (a busy machine's first polls time out: seen 11 s late, load 13)
        server.wait_for(lambda: counting(server.logged()), 60, "counting the sampled ports")
        probes = [lab.capture(server.sflow[1], pcap)]
        probes += [lab.sflow_probe(device, port, server.sflow, SAMPLING, pcap_filter="ip")
                   for device, port in PORTS]
        before = {port: lab.rx(*port) for port in PORTS}
        flows = roce_traffic.send(streams(lab), ROUNDS, pps=PPS, seed=SENDER_SEED)
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
        lab.stop(*counters)
        lab.snmp_cache(0)

    # a busy machine makes polls time out now and then: the intervals carry on without them
    errors = {name: health["errors"] for name, health in collectors.items()}
    print(f"poll errors: {errors}")
    assert all(set(kinds) <= {"timeout"} for kinds in errors.values()), errors
    logged = server.logged()
    reads = {device: lab.ingress_counts(device) for device, _ in PORTS}
    (tmp_path / "ingress.json").write_text(json.dumps(reads))  # beside the log, to look into
    truth = {port: Counts(reads[port[0]]) for port in PORTS}
    naive = naive_estimates(pcap, server.sflow[1])
    failures = check_log(lab, logged, flows, pokes, before, after, truth, naive)
    print(f"{len(logged)} intervals logged; the test took {time.monotonic() - began:.1f} s")
    assert failures == []


def check_log(lab, logged: list[dict], flows, pokes: dict, before: dict, after: dict,
              truth: dict[tuple[str, str], Counts], naive: dict) -> list[str]:
    """The log against the generator, the kernel's counters and tshark's estimates, per
    sampled port; prints the measurements, returns the failures."""
    assert all(line["attribution"]["unknown_ports"] == {} for line in logged)
    received = [line["received"] for line in logged]
    assert all(r["rejects"] == {} and r["lost_datagrams"] == 0 for r in received)
    intervals = sorted({line["attribution"]["start"]: line["attribution"]
                        for line in logged}.values(), key=lambda a: a["start"])
    failures, trials, windows = [], [], []
    for (device, port), host in PORTS.items():
        node, counts = f"port:{device}/{port}", truth[device, port]
        links = [link for a in intervals for link in a["links"]
                 if link["port"] == node and link["direction"] == "in"]
        # what crossed it: the host's streams, and the pokes into this port
        mine = [f for f in flows if f.src in {a for h, a, *_ in PODS if h == host}]
        sent = roce_traffic.totals(mine, lambda f: f.tenant)
        poke_bytes = pokes[device, port] * POKE_FRAME
        total = sum(octets for _, octets in sent.values()) + poke_bytes
        for tier, names in (("tenants", {f"tenant:{f.tenant}" for f in mine}),
                            ("jobs", {f"job:{namespace(f.tenant)}/train" for f in mine}),
                            ("pods", {f"pod:{namespace(f.tenant)}/{pod_name(f.src)}"
                                      for f in mine})):
            seen = {share["name"] for link in links for share in link[tier] if share["samples"]}
            assert seen == {*names, UNATTRIBUTED}, (node, tier, sorted(seen))
        # the kernel saw the generator's frames and the pokes, and LLDP frames only besides
        kernel = after[device, port][1] - before[device, port][1]
        assert 0 <= kernel - total < 0.001 * total, (node, kernel, total)
        # nftables saw every frame of each tenant: the truth is exact
        assert {t: counts.between(t, counts.times[0], counts.times[-1]) for t in sent} == {
            t: octets for t, (_, octets) in sent.items()}, node

        trials += interval_trials(node, intervals, counts)
        print(f"{node} in: {sum(link['samples'] for link in links)} samples in "
              f"{sum(1 for link in links if link['samples'])} intervals; "
              f"{pokes[device, port]} pokes ({poke_bytes / total:.2%} of the bytes)")
        for tenant, (_, octets) in sorted(sent.items()):
            shares = [s for link in links for s in link["tenants"]
                      if s["name"] == f"tenant:{tenant}"]
            found, low, high = (sum(s[k] for s in shares) for k in ("bytes", "low", "high"))
            guess = naive_bound([naive[lab.mgmt[device], address]
                                 for address in host_groups(host)[tenant]])
            windows.append((low <= octets <= high, guess[0] <= octets <= guess[1]))
            print(f"  {tenant}: {found:.0f} bytes, true {octets} ({found / octets - 1:+.2%}); "
                  f"bounds [{low:.0f}, {high:.0f}]; naive [{guess[0]:.0f}, {guess[1]:.0f}]; "
                  f"{sum(s['samples'] for s in shares)} samples")

        # the counters over the intervals against the kernel over the same time
        spanned = [(link, counts.between("port", link["start"], link["start"]
                                         + link["seconds"])) for link in links]
        spanned = [(link["counter_bytes"] or 0.0, true) for link, true in spanned
                   if true is not None]
        counted, kernel = (sum(pair[i] for pair in spanned) for i in (0, 1))
        error = counted / kernel - 1
        print(f"  counter bytes {counted:.0f}, kernel {kernel:.0f}: {error:+.2%} "
              f"(tolerance ±{COUNTER_TOLERANCE:.1%}); per interval, off by "
              f"{[round(c - k) for c, k in spanned if c or k]}")
        if abs(error) > COUNTER_TOLERANCE:
            failures.append(f"{node}: counter bytes {counted:.0f}, kernel {kernel:.0f}: "
                            f"{error:+.2%}")
    return failures + score(trials, windows)


def interval_trials(node: str, intervals: list[dict], counts: Counts) -> list[tuple]:
    """Per interval and tenant with traffic or samples on the port: (what, whether the true
    bytes lie in the interval's bounds, whether the true share lies in its share bounds)."""
    trials = []
    for a in intervals:
        start, end = a["start"], a["start"] + a["seconds"]
        port = counts.between("port", start, end)
        if port is None:
            continue
        [link] = [link for link in a["links"] if link["port"] == node
                  and link["direction"] == "in"] or [None]
        listed = {s["name"]: s for s in link["tenants"]} if link else {}
        for tenant in TENANTS:
            true = counts.between(tenant, start, end)
            share = listed.get(f"tenant:{tenant}")
            if not true and (share is None or not share["samples"]):
                continue
            if share is None:  # unreported: as `fabcorr simulate score` reads it
                share = absent(link)
            bytes_in = share["low"] <= true <= share["high"]
            shares_in = port > 0 and share["share_low"] <= true / port <= share["share_high"]
            what = (f"{node} {tenant} @{start:.0f}: true {true:.0f} of {port:.0f}, "
                    f"bounds [{share['low']:.0f}, {share['high']:.0f}], share "
                    f"[{share['share_low']:.3f}, {share['share_high']:.3f}], "
                    f"{share['samples']} samples of {link['samples'] if link else 0}, "
                    f"counters {link and link['counter_bytes']}")
            trials.append((what, bytes_in, shares_in))
    return trials


def absent(link: dict | None) -> dict:
    """What a tenant the link direction's samples did not show may have had: a share up to
    the one-sided 95 % bound for none of its ``n`` samples (:func:`absent_bound`; all of
    it without samples), its bytes that of the link's."""
    samples = link["samples"] if link else 0
    high = absent_bound(samples)
    total = (link["counter_bytes"] if link["counter_bytes"] is not None
             else link["estimated_bytes"]) if link else 0.0
    return {"samples": 0, "low": 0.0, "high": high * total, "share_low": 0.0,
            "share_high": high}


def score(trials: list[tuple], windows: list[tuple[bool, bool]]) -> list[str]:
    """Print the fractions inside and the misses; the targets missed."""
    bytes_in = sum(t[1] for t in trials) / len(trials)
    shares_in = sum(t[2] for t in trials) / len(trials)
    ours, naive = (sum(w[i] for w in windows) for i in (0, 1))
    floor = shares_floor(len(trials))
    print(f"per (interval, port, tenant), {len(trials)} of them: bytes inside "
          f"{bytes_in:.1%} (target {BYTES_INSIDE:.0%}), shares inside {shares_in:.1%} "
          f"(target {SHARES_INSIDE:.0%} over runs, {floor:.1%} in one); window totals "
          f"inside {ours} of {len(windows)}, the naive estimate's {naive}")
    for what, inside, share_inside in trials:
        if not (inside and share_inside):
            print(f"  miss ({'' if inside else 'bytes '}{'' if share_inside else 'share'}): "
                  f"{what}")
    return [f"{name} inside in {found:.1%} < {target:.1%}" for name, found, target in (
        ("bytes", bytes_in, BYTES_INSIDE), ("shares", shares_in, floor))
        if found < target] + ([f"window totals inside {ours} < naive {naive}"]
                              if ours < naive else [])
