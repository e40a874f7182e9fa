"""A network-namespace lab: switches and hosts cabled by veth pairs, running real daemons.

Every switch namespace runs ``snmpd`` (AgentX master, IF-MIB from its own kernel) and
``lldpd -x`` serving LLDP-MIB through it; every host runs ``lldpd``; LLDP is really
exchanged over the veth cables. Switches are managed over a bridge in the root namespace
(198.18.0.0/24, a benchmarking range no real host uses). On demand, ``route()`` makes the
fabric an IPv4 router network with "pod" addresses on the hosts, ``sflow_probe()`` runs
``pmacctd``'s sFlow agent on a switch port, ``count_ingress()`` counts what a port receives
per group of source addresses (nftables, read over time) and ``capture()`` records what
reaches the management bridge. ``down()`` removes every namespace, link and
process, and is safe to call twice or after a failed ``up()``.

Every lab has the same management addresses, so one lab is up at a time on a machine: two
test runs at once would each reach the other's SNMP agents and sFlow collector. ``up()``
waits for the one before to go down (:data:`LOCK`).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MGMT_NET = "198.18.0"
COLLECTOR = f"{MGMT_NET}.254"
"""The root namespace's address on the management bridge (where the sFlow collector binds)."""
LINK_NET = "10.100"
SNMP_COMMUNITY = "fabcorr-lab"
SNMP_USER, SNMP_AUTH, SNMP_PRIV = "fabcorr", "lab-auth-secret", "lab-priv-secret"
DAEMONS = ("ip", "lldpd", "lldpcli", "snmpd", "snmpwalk", "snmpset")
NS_CACHE_TIMEOUT = "1.3.6.1.4.1.8072.1.5.3.1.2"
LOCK = Path("/run/fabcorr-lab.lock")
"""Held (flock) from ``up()`` to ``down()``; released by the kernel if the holder dies."""
LOCK_WAIT_S = 600.0
POKE = """import socket, sys
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind((sys.argv[1], 0))
for _ in range(int(sys.argv[3])):
    sock.sendto(bytes(22), (sys.argv[2], 9))
"""
COUNTS = """import ctypes, json, sys, time
nft = ctypes.CDLL("libnftables.so.1")
nft.nft_ctx_new.restype, nft.nft_ctx_new.argtypes = ctypes.c_void_p, [ctypes.c_uint32]
nft.nft_ctx_output_set_flags.argtypes = [ctypes.c_void_p, ctypes.c_uint]
nft.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
nft.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
nft.nft_ctx_get_output_buffer.restype = ctypes.c_char_p
nft.nft_ctx_get_output_buffer.argtypes = [ctypes.c_void_p]
ctx = nft.nft_ctx_new(0)
nft.nft_ctx_output_set_flags(ctx, 1 << 4)  # NFT_CTX_OUTPUT_JSON
nft.nft_ctx_buffer_output(ctx)
command, period = f"list counters table netdev {sys.argv[1]}".encode(), float(sys.argv[2])
while True:
    before = time.time()
    if nft.nft_run_cmd_from_buffer(ctx, command):
        sys.exit("nft failed")
    after = time.time()
    listed = json.loads(nft.nft_ctx_get_output_buffer(ctx))["nftables"]
    print(json.dumps([(before + after) / 2, {c["counter"]["name"]: [
        c["counter"]["packets"], c["counter"]["bytes"]] for c in listed if "counter" in c}]),
        flush=True)
    time.sleep(period)
"""


def missing_tools(tools: tuple[str, ...] = DAEMONS) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


@dataclass(frozen=True)
class Cable:
    """A veth pair from ``a``'s port ``a_port`` to ``b``'s port ``b_port``."""

    a: str
    a_port: str
    b: str
    b_port: str


@dataclass
class Lab:
    """Switches and hosts (namespace names are prefixed, so runs never collide)."""

    switches: list[str]
    hosts: list[str]
    cables: list[Cable]
    prefix: str = field(default_factory=lambda: "fc" + secrets.token_hex(2))
    processes: list[subprocess.Popen] = field(default_factory=list)
    mgmt: dict[str, str] = field(default_factory=dict)
    _lock: int | None = field(default=None, repr=False)

    @property
    def workdir(self) -> Path:
        """Configs, sockets and logs. Not under a private temp dir: lldpd applies its
        configuration as its unprivileged user, which must be able to read it."""
        return Path("/run") / self.prefix

    def ns(self, device: str) -> str:
        return f"{self.prefix}-{device}"

    def run(self, device: str | None, *argv: str, check: bool = True) -> str:
        """Run a command in a device's namespace (or the root one); return stdout."""
        command = ["ip", "netns", "exec", self.ns(device), *argv] if device else list(argv)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if check and done.returncode:
            raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")
        return done.stdout

    def up(self) -> None:
        """Create namespaces and cables, start the daemons, wait for LLDP to converge
        (after any other lab on this machine is down)."""
        self._acquire()
        self.workdir.mkdir(mode=0o755, parents=True, exist_ok=True)
        Path("/run/lldpd").mkdir(parents=True, exist_ok=True)  # lldpd's privsep chroot
        for device in self.switches + self.hosts:
            self.run(None, "ip", "netns", "add", self.ns(device))
            self.run(device, "ip", "link", "set", "lo", "up")
        for number, cable in enumerate(self.cables):
            left, right = f"{self.prefix}a{number}", f"{self.prefix}b{number}"
            self.run(None, "ip", "link", "add", left, "type", "veth", "peer", "name", right)
            for tmp, device, port in ((left, cable.a, cable.a_port),
                                      (right, cable.b, cable.b_port)):
                self.run(None, "ip", "link", "set", tmp, "netns", self.ns(device), "name", port)
                self.run(device, "ip", "link", "set", port, "up")
        self._management()
        for device in self.switches:
            self._snmpd(device)
        for device in self.switches:  # lldpd's AgentX subagent needs the master up first
            self._wait_agentx(device)
        for device in self.switches + self.hosts:
            self._lldpd(device, switch=device in self.switches)
        self.wait_for_lldp()

    def _acquire(self, timeout: float = LOCK_WAIT_S) -> None:
        descriptor = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        deadline, told = time.monotonic() + timeout, False
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(descriptor)
                    raise RuntimeError(f"another lab held {LOCK} for {timeout:.0f} s") \
                        from None
                if not told:
                    print(f"waiting for another lab to go down ({LOCK})", file=sys.stderr)
                    told = True
                time.sleep(0.2)
                continue
            self._lock = descriptor
            return

    def _management(self) -> None:
        bridge = f"{self.prefix}br"
        self.run(None, "ip", "link", "add", bridge, "type", "bridge")
        self.run(None, "ip", "addr", "add", f"{COLLECTOR}/24", "dev", bridge)
        self.run(None, "ip", "link", "set", bridge, "up")
        for number, device in enumerate(self.switches):
            outside, inside = f"{self.prefix}m{number}", f"{self.prefix}n{number}"
            self.run(None, "ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            self.run(None, "ip", "link", "set", outside, "master", bridge, "up")
            self.run(None, "ip", "link", "set", inside, "netns", self.ns(device), "name", "mgmt0")
            address = f"{MGMT_NET}.{11 + number}"
            self.run(device, "ip", "addr", "add", f"{address}/24", "dev", "mgmt0")
            self.run(device, "ip", "link", "set", "mgmt0", "up")
            self.mgmt[device] = address

    def _start(self, device: str, name: str, argv: list[str],
               env: dict | None = None) -> subprocess.Popen:
        log = (self.workdir / f"{device}-{name}.log").open("w")
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.ns(device), *argv], stdout=log,
            stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
        self.processes.append(process)
        return process

    def _snmpd(self, device: str) -> None:
        home = self.workdir / device
        home.mkdir(mode=0o755, exist_ok=True)
        config = home / "snmpd.conf"
        config.write_text(
            f"agentAddress udp:{self.mgmt[device]}:161\n"
            f"rocommunity {SNMP_COMMUNITY} {MGMT_NET}.0/24\n"
            f"rwcommunity {SNMP_COMMUNITY}-rw {MGMT_NET}.254\n"
            f"createUser {SNMP_USER} SHA {SNMP_AUTH} AES {SNMP_PRIV}\n"
            f"rouser {SNMP_USER} priv\n"
            f"sysName {device}\n"
            "master agentx\nagentXSocket tcp:127.0.0.1:705\n")
        self._start(device, "snmpd", ["snmpd", "-f", "-Lo", "-C", "-c", str(config),
                                      "-p", str(home / "snmpd.pid")],
                    env={"SNMP_PERSISTENT_DIR": str(home), "MIBS": ""})

    def _lldpd(self, device: str, switch: bool) -> None:
        home = self.workdir / device
        home.mkdir(mode=0o755, exist_ok=True)
        commands = [f"configure system hostname {device}", "configure lldp tx-interval 1"]
        if switch:  # switches send the port name as port id, as Cumulus and EOS do
            commands.append("configure lldp portidsubtype ifname")
        (home / "lldpd.conf").write_text("\n".join(commands) + "\n")
        argv = ["lldpd", "-d", "-u", str(self.control(device)), "-O", str(home / "lldpd.conf"),
                "-I", "swp*" if switch else "ens*"]
        if switch:
            argv += ["-x", "-X", "tcp:127.0.0.1:705"]
        self._start(device, "lldpd", argv)

    def control(self, device: str) -> Path:
        return self.workdir / device / "lldpd.socket"

    def lldp_json(self, device: str) -> str:
        """``lldpcli -f json show neighbors details`` on a device."""
        return self.run(device, "lldpcli", "-u", str(self.control(device)), "-f", "json",
                        "show", "neighbors", "details")

    def wait_for_lldp(self, timeout: float = 120.0) -> None:
        """Until every device hears a neighbour on each of its cabled ports, and every
        switch's SNMP agent serves them."""
        ports: dict[str, set[str]] = {}
        for cable in self.cables:
            ports.setdefault(cable.a, set()).add(cable.a_port)
            ports.setdefault(cable.b, set()).add(cable.b_port)
        deadline = time.monotonic() + timeout
        pending = dict(ports)
        while pending and time.monotonic() < deadline:
            for device in list(pending):
                try:
                    interfaces = json.loads(self.lldp_json(device))["lldp"].get("interface")
                except (RuntimeError, ValueError, KeyError):
                    continue
                if interfaces is None:
                    continue
                heard = set(interfaces) if isinstance(interfaces, dict) else {
                    name for one in interfaces for name in one}
                if heard >= pending[device]:
                    del pending[device]
            time.sleep(0.3)
        if pending:
            raise RuntimeError(f"LLDP did not converge on {sorted(pending)}")
        for device in self.switches:
            self._wait_snmp(device, deadline)
        # a lab that measures rates over a few seconds wants every poll fresh
        self.snmp_cache(0)

    def snmp_cache(self, seconds: int) -> None:
        """How long every switch's snmpd serves IF-MIB from its cache (NET-SNMP-AGENT-MIB
        nsCacheTimeout; net-snmp's default is 3 s: ifHCInOctets refreshes that often)."""
        for device in self.switches:
            subprocess.run(["snmpset", "-v2c", "-c", f"{SNMP_COMMUNITY}-rw", self.mgmt[device],
                            f"{NS_CACHE_TIMEOUT}.1.3.6.1.2.1.2.2", "i", str(seconds)],
                           capture_output=True, check=True)

    def _wait_agentx(self, device: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ":705 " in self.run(device, "ss", "-ltnH", check=False):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{device}: snmpd's AgentX socket did not open")

    def _wait_snmp(self, device: str, deadline: float) -> None:
        """Until the agent serves LLDP-MIB remote entries (lldpd registered over AgentX)."""
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["snmpwalk", "-v2c", "-c", SNMP_COMMUNITY, "-On", "-t", "1", "-r", "0",
                 self.mgmt[device], "1.0.8802.1.1.2.1.4.1.1.5"],
                capture_output=True, text=True, check=False)
            if done.returncode == 0 and "No Such" not in done.stdout and \
                    done.stdout.count("\n") >= 1:
                return
            time.sleep(0.3)
        raise RuntimeError(f"{device}: snmpd did not serve LLDP-MIB in time")

    def mac(self, device: str, port: str) -> str:
        [link] = json.loads(self.run(device, "ip", "-j", "link", "show", port))
        return link["address"]

    def ifindex(self, device: str, port: str) -> int:
        return int(self.run(device, "cat", f"/sys/class/net/{port}/ifindex"))

    def rx(self, device: str, port: str) -> tuple[int, int]:
        """The kernel's received (packets, bytes) of a port; bytes count no FCS."""
        stats = f"/sys/class/net/{port}/statistics/rx_"
        packets, octets = self.run(device, "cat", f"{stats}packets", f"{stats}bytes").split()
        return int(packets), int(octets)

    def route(self, pods: dict[str, list[str]]) -> None:
        """Make the switches IPv4 routers and give each host its pod addresses (``{host:
        [address, ...]}``, /32 each on the host's port).

        Cable n is 10.100.n.0/30, .1 on its ``a`` end and .2 on its ``b`` end, with permanent
        neighbour entries on both (no ARP during a measurement). Every other device gets a
        /32 route to each pod along the shortest path through the switches.
        """
        links: dict[str, list[tuple[str, str, str, str]]] = {}  # (port, address, peer, port)
        for number, cable in enumerate(self.cables):
            a, b = f"{LINK_NET}.{number}.1", f"{LINK_NET}.{number}.2"
            for device, port, address, peer, peer_port, peer_address in (
                    (cable.a, cable.a_port, a, cable.b, cable.b_port, b),
                    (cable.b, cable.b_port, b, cable.a, cable.a_port, a)):
                self.run(device, "ip", "addr", "replace", f"{address}/30", "dev", port)
                self.run(device, "ip", "neigh", "replace", peer_address, "lladdr",
                         self.mac(peer, peer_port), "dev", port, "nud", "permanent")
                links.setdefault(device, []).append((port, address, peer, peer_port))
        for device in self.switches:
            self.run(device, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for host, addresses in pods.items():
            for address in addresses:
                self.run(host, "ip", "addr", "replace", f"{address}/32", "dev",
                         links[host][0][0])
            reached, queue = {host}, [host]
            for device in queue:  # breadth first from the host; only switches forward
                if device != host and device not in self.switches:
                    continue
                for _, via, peer, peer_port in links[device]:
                    if peer in reached:
                        continue
                    reached.add(peer)
                    queue.append(peer)
                    for address in addresses:
                        self.run(peer, "ip", "route", "replace", f"{address}/32", "via", via,
                                 "dev", peer_port)

    def sflow_probe(self, device: str, port: str, receiver: tuple[str, int],
                    sampling_rate: int, pcap_filter: str = "",
                    timeout: float = 10.0) -> subprocess.Popen:
        """Start ``pmacctd``'s sfprobe plugin on a switch port: the packets the port receives
        (those matching ``pcap_filter``), sampled 1 in ``sampling_rate``, sent as sFlow to
        ``receiver`` with the switch's management address as agent. Returns once it
        captures; stopped by :meth:`stop` or :meth:`down`.

        The agent sends the samples it holds only when a packet reaches it in a later
        second than the last one did, and libpcap hands it packets up to a second late: to
        collect every sample, :meth:`poke` the port until a sample of a poke arrives.
        """
        name = f"pmacctd-{port}"
        config = self.workdir / device / f"{name}.conf"
        config.parent.mkdir(mode=0o755, exist_ok=True)
        config.write_text(
            f"daemonize: false\npcap_interface: {port}\npcap_direction: in\n"
            "pcap_ifindex: sys\nplugins: sfprobe[probe]\n"
            f"sfprobe_receiver[probe]: {receiver[0]}:{receiver[1]}\n"
            f"sfprobe_agentip[probe]: {self.mgmt[device]}\nsfprobe_direction[probe]: in\n"
            f"sampling_rate: {sampling_rate}\n"
            + (f"pcap_filter: {pcap_filter}\n" if pcap_filter else ""))
        process = self._start(device, name, ["pmacctd", "-f", str(config)])
        log = self.workdir / f"{device}-{name}.log"
        deadline = time.monotonic() + timeout
        while "Sampling at:" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                self.stop(process)
                raise RuntimeError(f"{device}: pmacctd did not start: {log.read_text()}")
            time.sleep(0.05)
        return process

    def count_ingress(self, device: str, port: str, groups: dict[str, list[str]],
                      period: float = 0.05) -> subprocess.Popen:
        """Count what a switch port receives, in all (counter ``port``) and per group of
        IPv4 source addresses (``{name: [address, ...]}``), with nftables on its ingress
        hook, and read the counters every ``period`` seconds until stopped; the reads are
        :meth:`ingress_counts`. One port per device."""
        rules = "".join(f'counter {name} {{}}\n' for name in ("port", *groups))
        rules += (f'chain {port}_in {{ type filter hook ingress device "{port}" priority 0;\n'
                  'counter name "port"\n')
        rules += "".join(f'ip saddr {{ {", ".join(addresses)} }} counter name "{name}"\n'
                         for name, addresses in groups.items())
        self.run(device, "nft", "-f", str(self._write(device, "ingress.nft",
                                                      f"table netdev fclab {{\n{rules}}}\n}}\n")))
        return self._start(device, "ingress", [sys.executable, "-c", COUNTS, "fclab",
                                                str(period)])

    def ingress_counts(self, device: str) -> list[tuple[float, dict[str, tuple[int, int]]]]:
        """The reads of :meth:`count_ingress` so far: (when, {counter: (packets, frame
        bytes)}), frame bytes as the kernel's rx counters count them (the ingress hook
        sees each packet without its 14-byte Ethernet header)."""
        lines = (self.workdir / f"{device}-ingress.log").read_text().splitlines()
        reads = [json.loads(line) for line in lines if line.startswith("[")]
        return [(at, {name: (packets, octets + 14 * packets)
                      for name, (packets, octets) in counters.items()})
                for at, counters in reads]

    def capture(self, udp_port: int, path: Path, timeout: float = 10.0) -> subprocess.Popen:
        """Record the UDP datagrams to ``udp_port`` that cross the management bridge (the
        switches' sFlow, say) in ``path`` (pcapng) until stopped."""
        log = self.workdir / f"capture-{udp_port}.log"
        with log.open("w") as out:
            process = subprocess.Popen(["dumpcap", "-i", f"{self.prefix}br", "-f",
                                        f"udp dst port {udp_port}", "-w", str(path)],
                                       stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(process)
        deadline = time.monotonic() + timeout
        while "Capturing on" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                self.stop(process)
                raise RuntimeError(f"dumpcap did not start: {log.read_text()}")
            time.sleep(0.05)
        return process

    def _write(self, device: str, name: str, text: str) -> Path:
        path = self.workdir / device / name
        path.parent.mkdir(mode=0o755, exist_ok=True)
        path.write_text(text)
        return path

    def poke(self, device: str, port: str, count: int = 1) -> None:
        """Send ``count`` UDP datagrams (to port 9, 64-byte frames) into a switch port from
        its cable peer (after :meth:`route`)."""
        for number, cable in enumerate(self.cables):
            ends = {(cable.a, cable.a_port): (cable.b, 2, 1),  # (peer, its host part, ours)
                    (cable.b, cable.b_port): (cable.a, 1, 2)}
            if (device, port) in ends:
                peer, source, target = ends[device, port]
                self.run(peer, sys.executable, "-c", POKE, f"{LINK_NET}.{number}.{source}",
                         f"{LINK_NET}.{number}.{target}", str(count))
                return
        raise ValueError(f"{device}:{port} is not cabled")

    def stop(self, *processes: subprocess.Popen) -> None:
        """Stop processes this lab started (and forget them)."""
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process in self.processes:
                self.processes.remove(process)

    def down(self) -> None:
        """Stop every process, delete every namespace, link and file of this lab."""
        self.stop(*self.processes)
        for device in self.switches + self.hosts:
            subprocess.run(["ip", "netns", "del", self.ns(device)], capture_output=True,
                           check=False)
        subprocess.run(["ip", "link", "del", f"{self.prefix}br"], capture_output=True,
                       check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)  # releases it
            self._lock = None
