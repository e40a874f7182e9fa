"""``fabcorr inlet`` over real UDP: the CLI in a subprocess between senders bound to the
example fabric's switch addresses (127.1.0.x) and real receiving sockets, one per shard;
shard discovery by DNS with an injected resolver (the test's own table, changed as pods
come and go) against the same forwarding thread, in this process; and fabcorr's own
receive path as the shards, trusting the inlet as their relay."""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from correlator.inlet.inlet import Inlet, configured_switches
from correlator.inlet.targets import statefulset_targets
from correlator.service.config import service_config_from
from correlator.sflow.admission import Admission
from correlator.sflow.receiver import ReceiverConfig, Worker, open_socket
from correlator.shards import owner
from inventory.factfile import read_facts
from simulator.sflow_wire import datagram_header
from tests.correlator.service.running import free_port

ROOT = Path(__file__).parents[3]
SNAPSHOT = ROOT / "examples" / "fabric-small" / "topology.json"
SWITCHES = {s.name: s.mgmt_address for s in read_facts([ROOT / "examples" / "fabric-small"
                                                        / "facts.yaml"]).switches}
DEADLINE_S = 60.0


def sflow(agent: str, seq: int, samples: int, rng: random.Random) -> bytes:
    """A datagram with a real header and bytes after it the inlet must pass on as they are."""
    header = datagram_header(agent, 0, seq, 1000 + seq, samples)
    return header + rng.randbytes(rng.randrange(4, 400))


def send(source: str, data: bytes, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
        out.bind((source, 0))
        out.sendto(data, ("127.0.0.1", port))


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {DEADLINE_S:g} s: {what}")
        time.sleep(0.05)


class Shards:
    """Receiving sockets, one per shard; what each received, in order."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self.sockets = sockets
        self.received: list[list[bytes]] = [[] for _ in sockets]
        for s in sockets:
            s.setblocking(False)

    def drain(self) -> list[list[bytes]]:
        for s, received in zip(self.sockets, self.received, strict=True):
            while True:
                try:
                    received.append(s.recv(65535))
                except BlockingIOError:
                    break
        return self.received

    def close(self) -> None:
        for s in self.sockets:
            s.close()


def udp_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, port))
    return s


@contextmanager
def running_inlet(folder: Path, shard_ports: list[int]) -> Iterator[tuple[int, int]]:
    """``fabcorr inlet`` forwarding to 127.0.0.1 at ``shard_ports``: (sFlow, HTTP) ports."""
    sflow_port, http_port = free_port(socket.SOCK_DGRAM), free_port()
    config = folder / "fabcorr.yaml"
    config.write_text(yaml.safe_dump({"topology": {"snapshot": str(SNAPSHOT)}}))
    log = (folder / "inlet.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
         "sys.exit(main())", "inlet", "--config", str(config),
         "--listen", f"127.0.0.1:{sflow_port}", "--http", f"127.0.0.1:{http_port}",
         *(f"--shard-address=127.0.0.1:{p}" for p in shard_ports)],
        cwd=ROOT, stderr=log, stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: process.poll() is not None or _get(http_port, "/readyz")[0] == 200,
                 "the inlet is ready")
        assert process.poll() is None, (folder / "inlet.log").read_text()
        yield sflow_port, http_port
    finally:
        process.terminate()
        assert process.wait(DEADLINE_S) == 0, (folder / "inlet.log").read_text()
        log.close()


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def metrics(port: int) -> dict[tuple[str, ...], float]:
    """The inlet's series: (name, shard, reason) -> value (labels it has, in that order)."""
    status, text = _get(port, "/metrics")
    assert status == 200
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(fabcorr_inlet_\w+)(?:\{(.*)\})? (\S+)", line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match[2] or ""))
            found[(match[1], *(labels[k] for k in ("shard", "reason") if k in labels))] = \
                float(match[3])
    return found


def test_forwards_each_switch_to_its_shard_unchanged_and_drops_what_it_must(tmp_path):
    rng = random.Random(17)
    shards = Shards([udp_socket() for _ in range(3)])
    try:
        with running_inlet(tmp_path, [s.getsockname()[1] for s in shards.sockets]) as (
                port, http):
            # the drops first: once the last good datagram is through, they were counted
            spoofed = sflow(SWITCHES["leaf01"], 1, 3, rng)
            send(SWITCHES["leaf02"], spoofed, port)
            send("127.9.9.9", sflow("127.9.9.9", 1, 3, rng), port)
            send(SWITCHES["leaf01"], b"not sflow at all, long enough for a header", port)
            sent: list[list[bytes]] = [[], [], []]
            samples = Counter[int]()
            for seq in range(20):
                for name, address in sorted(SWITCHES.items()):
                    data = sflow(address, seq, seq % 5, rng)
                    send(address, data, port)
                    sent[owner(name, 3)].append(data)
                    samples[owner(name, 3)] += seq % 5
            wait_for(lambda: [len(r) for r in shards.drain()] == [len(s) for s in sent],
                     f"the shards received {[len(s) for s in sent]} datagrams")
            assert shards.drain() == sent  # unchanged, in order, each to its own shard
            assert sorted(map(len, sent)) != [0, 0, 120]  # the fabric does spread
            counts = metrics(http)
    finally:
        shards.close()
    spoofed_shard = str(owner("leaf01", 3))
    for shard in range(3):
        assert counts[("fabcorr_inlet_forwarded_datagrams_total", str(shard))] == len(sent[shard])
        assert counts[("fabcorr_inlet_forwarded_samples_total", str(shard))] == samples[shard]
        for reason in ("spoofed-source", "unresolved", "send-error"):
            expected = 1 if (str(shard), reason) == (spoofed_shard, "spoofed-source") else 0
            assert counts[("fabcorr_inlet_dropped_datagrams_total", str(shard), reason)] == \
                expected
    assert counts[("fabcorr_inlet_dropped_datagrams_total", "", "unknown-agent")] == 1
    assert counts[("fabcorr_inlet_dropped_datagrams_total", "", "bad-header")] == 1
    assert counts[("fabcorr_inlet_switches",)] == 6


def test_a_dead_shard_is_counted_undeliverable_while_the_others_receive(tmp_path):
    rng = random.Random(3)
    dead = owner("leaf01", 3)
    sockets = [udp_socket() for _ in range(3)]
    ports = [s.getsockname()[1] for s in sockets]
    sockets[dead].close()  # nothing listens there now: the port refuses
    live = [i for i in range(3) if i != dead]
    shards = Shards([sockets[i] for i in live])
    try:
        with running_inlet(tmp_path, ports) as (port, http):
            expected = Counter[int]()
            for seq in range(5):  # rounds: a refusal is reported to the round after it
                for name, address in sorted(SWITCHES.items()):
                    send(address, sflow(address, seq, 1, rng), port)
                    expected[owner(name, 3)] += 1

                def through() -> bool:
                    shards.drain()
                    counts = metrics(http)
                    return [len(r) for r in shards.received] == [expected[i] for i in live] \
                        and counts[("fabcorr_inlet_forwarded_datagrams_total", str(dead))] + \
                        counts[("fabcorr_inlet_dropped_datagrams_total", str(dead),
                                "send-error")] == expected[dead]
                wait_for(through, f"round {seq} is through")
            counts = metrics(http)
    finally:
        shards.close()
    assert expected[dead] >= 5
    assert counts[("fabcorr_inlet_dropped_datagrams_total", str(dead), "send-error")] >= 1
    for shard in live:
        assert counts[("fabcorr_inlet_forwarded_datagrams_total", str(shard))] == expected[shard]
        assert counts[("fabcorr_inlet_dropped_datagrams_total", str(shard), "send-error")] == 0


def test_finds_the_shards_by_dns_and_follows_them(tmp_path):
    """The resolver is injected: a table this test changes as a pod starts and moves."""
    config = service_config_from({"topology": {"snapshot": str(SNAPSHOT)}}, "test.yaml", {})
    first = udp_socket("127.2.0.1")
    port = first.getsockname()[1]
    dns = {"fabcorr-shard-0.fabcorr-shard": "127.2.0.1",
           "fabcorr-shard-1.fabcorr-shard": "127.2.0.2"}  # shard 2's pod is not up yet
    targets = statefulset_targets("fabcorr-shard.fabcorr-shard", 3, port)
    shards = Shards([first, udp_socket("127.2.0.2", port)])
    sock = udp_socket()
    inlet = Inlet(sock, targets, *configured_switches(config),
                  resolve=lambda host, _: [dns[host]] if host in dns else [])
    rng = random.Random(5)
    by_shard = {i: [n for n in sorted(SWITCHES) if owner(n, 3) == i] for i in range(3)}
    assert all(by_shard.values())

    def send_round(seq: int) -> None:
        for name in sorted(SWITCHES):
            send(SWITCHES[name], sflow(SWITCHES[name], seq, 1, rng), sock.getsockname()[1])

    def counted(shard: int, forwarded: int, unresolved: int) -> Callable[[], bool]:
        def check() -> bool:
            counts = inlet.counts()
            return counts["forwarded"][shard] == forwarded and \
                counts["dropped"][shard][3] == unresolved
        return check

    try:
        inlet.refresh()
        assert inlet.addresses == ["127.2.0.1", "127.2.0.2", ""]
        send_round(0)
        n2 = len(by_shard[2])
        wait_for(counted(2, 0, n2), "shard 2's datagrams counted unresolved")
        dns["fabcorr-shard-2.fabcorr-shard"] = "127.2.0.3"  # the pod started
        shards.sockets.append(udp_socket("127.2.0.3", port))
        shards.received.append([])
        shards.sockets[-1].setblocking(False)
        inlet.refresh()
        send_round(1)
        wait_for(counted(2, n2, n2), "shard 2's datagrams forwarded")
        dns["fabcorr-shard-2.fabcorr-shard"] = "127.2.0.4"  # restarted elsewhere
        moved = udp_socket("127.2.0.4", port)
        moved.setblocking(False)
        shards.sockets.append(moved)
        shards.received.append([])
        inlet.refresh()
        assert inlet.addresses == ["127.2.0.1", "127.2.0.2", "127.2.0.4"]
        send_round(2)
        wait_for(counted(2, 2 * n2, n2), "shard 2's datagrams forwarded to its new address")
        wait_for(lambda: [len(r) for r in shards.drain()] == [
            3 * len(by_shard[0]), 3 * len(by_shard[1]), n2, n2],
            "every shard received its switches' datagrams, at its address of the moment")
        assert inlet.counts()["unrouted"] == [0] * 5
    finally:
        inlet.close()
        sock.close()
        shards.close()


@pytest.mark.parametrize(("argv", "line"), [
    (["--shard-dns", "fabcorr-shard.fabcorr-shard"],
     "fabcorr: --shards: --shard-dns needs the number of shards (>= 1)"),
    (["--shard-dns", "fabcorr-shard", "--shards", "3"],
     "fabcorr: --shard-dns: expected STATEFULSET.SERVICE (e.g. fabcorr-shard.fabcorr-shard), "
     "not 'fabcorr-shard'"),
    (["--shard-address", "127.0.0.1:1", "--shards", "2"],
     "fabcorr: --shards: 2 shards but 1 --shard-address"),
    (["--shard-address", "127.0.0.1"],
     "fabcorr: --shard-address: expected HOST:PORT, not '127.0.0.1'"),
    (["--shard-address", "127.0.0.1:1", "--resolve-every", "0"],
     "fabcorr: --resolve-every: must be > 0"),
])
def test_a_bad_option_is_one_line_and_exit_2(tmp_path, capsys, argv, line):
    from correlator.cli.main import main

    config = tmp_path / "fabcorr.yaml"
    config.write_text(yaml.safe_dump({"topology": {"snapshot": str(SNAPSHOT)}}))
    assert main(["inlet", "--config", str(config), *argv]) == 2
    assert capsys.readouterr().err == line + "\n"


def test_fabcorrs_own_receivers_behind_it_take_it_as_their_relay(tmp_path):
    """Shards as fabcorr receives sFlow (the Rust receive path, admission with the inlet's
    address as the one relay): each gets exactly its switches' datagrams, all believed,
    no sequence gap."""
    socks = [open_socket(ReceiverConfig(host="127.0.0.1", port=0)) for _ in range(3)]
    admission = Admission([(a, a) for a in SWITCHES.values()], relays=["127.0.0.1"])
    workers = [Worker(time.time(), 3600.0, admission=admission) for _ in socks]
    for worker, sock in zip(workers, socks, strict=True):
        worker.receive(sock)
    expected = Counter[int]()
    try:
        with running_inlet(tmp_path, [s.getsockname()[1] for s in socks]) as (port, http):
            for seq in range(1, 11):
                for name, address in sorted(SWITCHES.items()):
                    send(address, datagram_header(address, 0, seq, 1000 * seq, 0), port)
                    expected[owner(name, 3)] += 1
            wait_for(lambda: sum(v for k, v in metrics(http).items()
                                 if k[0] == "fabcorr_inlet_forwarded_datagrams_total") == 60,
                     "the inlet forwarded every datagram")
        totals = [worker.take(time.time())[1] for worker in workers]
    finally:
        for worker, sock in zip(workers, socks, strict=True):
            worker.stop()
            sock.close()
    assert [t.datagrams for t in totals] == [expected[i] for i in range(3)]
    assert [(dict(t.rejects), t.lost_datagrams) for t in totals] == [({}, 0)] * 3


def test_a_changed_fact_file_is_read_again(tmp_path):
    facts = tmp_path / "facts.yaml"

    def write(names: list[str], mtime: int) -> None:
        facts.write_text(yaml.safe_dump({"switches": [
            {"name": name, "mgmt_address": SWITCHES[name]} for name in names]}))
        os.utime(facts, (mtime, mtime))

    write(["leaf01"], 1_000_000)
    config = service_config_from({"topology": {"facts": [str(facts)]}, "switches": [
        {"name": "spine01", "address": SWITCHES["spine01"]}]}, "test.yaml", {})
    shard = udp_socket()
    sock = udp_socket()
    inlet = Inlet(sock, [shard.getsockname()[:2]], *configured_switches(config))
    rng = random.Random(9)

    def forwarded(count: int) -> Callable[[], bool]:
        return lambda: inlet.counts()["forwarded"] == [count]

    try:
        inlet.refresh()
        assert inlet.switches == 2  # the fact file's and the configuration's
        for name in ("leaf01", "spine01", "leaf02"):
            send(SWITCHES[name], sflow(SWITCHES[name], 1, 1, rng), sock.getsockname()[1])
        wait_for(lambda: inlet.counts()["unrouted"][1] == 1, "leaf02 is unknown")
        assert inlet.counts()["forwarded"] == [2]
        inlet.refresh()  # nothing changed: nothing read
        write(["leaf01", "leaf02"], 2_000_000)
        inlet.refresh()
        assert inlet.switches == 3
        send(SWITCHES["leaf02"], sflow(SWITCHES["leaf02"], 2, 1, rng), sock.getsockname()[1])
        wait_for(forwarded(3), "leaf02 is forwarded once the fact file names it")
    finally:
        inlet.close()
        sock.close()
        shard.close()
