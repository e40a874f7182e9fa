"""``fabcorr discover`` over gNMI (a one-switch config with a crawl section finds the fabric)
and over NETCONF (SSH to real agents on loopback: host keys, ``--concurrency``)."""

import contextlib
import dataclasses
import json
import socket
import threading
from contextlib import ExitStack

import paramiko
import pytest
import yaml

from correlator.cli.main import main
from simulator.generator import FabricSpec, generate_facts
from simulator.gnmi_target import GnmiTarget
from simulator.netconf_server import NetconfServer


def test_discover_crawls_from_one_listed_switch(tmp_path, capsys):
    facts = generate_facts(FabricSpec(nodes=2, rails=2, spines=2))
    address = {s.name: s.mgmt_address for s in facts.switches}
    facts = dataclasses.replace(facts, neighbors=tuple(
        dataclasses.replace(n, mgmt_address=address.get(n.system_name, ""))
        for n in facts.neighbors))
    config, report = tmp_path / "fabcorr.yaml", tmp_path / "report.json"
    with ExitStack() as stack:
        port = 0  # every target on its own address and the same port, as the template's
        for name in sorted(address, key=lambda n: n != "leaf01"):
            port = stack.enter_context(GnmiTarget.from_facts(
                facts, name, host=address[name], port=port)).port
        config.write_text(
            "switches:\n"
            f"  - {{name: leaf01, address: {address['leaf01']}, protocols: [gnmi],\n"
            f"     gnmi: {{port: {port}, insecure: true, timeout_s: 10.0}}}}\n"
            "crawl: {template: leaf01, max_switches: 8, names: [leaf*, spine*]}\n")
        code = main(["discover", "--config", str(config), "--out", str(tmp_path / "t.json"),
                     "--report", str(report)])
    assert code == 0
    assert "switches reached: 4/4" in capsys.readouterr().err
    result = json.loads(report.read_text())
    assert result["switches"] == {"total": 4, "reached": 4}
    assert result["links"] == {"confirmed": 4}  # both leaves to both spines


PASSWORD = "nc-Pa55"


@pytest.fixture(scope="module")
def small():
    """Two leaves, two spines, two hosts: four leaf-spine cables."""
    return generate_facts(FabricSpec(nodes=2, rails=1, leaves_per_rail=2, spines=2,
                                     vfs_per_pf=1))


@pytest.fixture(scope="module")
def host_key():
    return paramiko.RSAKey.generate(2048)


@pytest.fixture
def agents(small, host_key):
    """A NETCONF agent (SSH on loopback) for every switch of ``small``, by name."""
    with ExitStack() as stack:
        yield {s.name: stack.enter_context(NetconfServer.from_facts(
            small, s.name, username="fabcorr", password=PASSWORD, host_key=host_key))
            for s in small.switches}


def _netconf_config(path, ports, verify):
    """A config listing every switch at 127.0.0.1:<its port> over NETCONF."""
    path.write_text(yaml.safe_dump({
        "defaults": {"netconf": {"username": "fabcorr", "timeout_s": 30.0,
                                 "hostkey_verify": verify,
                                 "password": {"env": "FABCORR_TEST_NETCONF_PASSWORD"}}},
        "switches": [{"name": name, "address": "127.0.0.1", "protocols": ["netconf"],
                      "netconf": {"port": port}} for name, port in ports.items()]}))
    return path


def _peer(capsys, snapshot, port):
    """``topology link PORT``'s peer in ``snapshot``."""
    assert main(["topology", "link", port, "--snapshot", str(snapshot), "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)["peer"]


def _expected_cables(facts):
    """Leaf-spine cables from the generator's own LLDP facts (switch side, both ends)."""
    switches = {s.name for s in facts.switches}
    return sorted({tuple(sorted((f"{n.local_device}:{n.local_port}",
                                 f"{n.system_name}:{n.port_id}")))
                   for n in facts.neighbors
                   if n.local_device in switches and n.system_name in switches})


def test_discover_over_netconf_verifies_host_keys_from_known_hosts(small, agents, tmp_path,
                                                                   monkeypatch, capsys):
    monkeypatch.setenv("FABCORR_TEST_NETCONF_PASSWORD", PASSWORD)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "known_hosts").write_text(
        "".join(a.known_hosts_line + "\n" for a in agents.values()))
    config = _netconf_config(tmp_path / "fabcorr.yaml",
                             {n: a.address[1] for n, a in agents.items()}, verify=True)
    snapshot, report = tmp_path / "t.json", tmp_path / "report.json"
    code = main(["discover", "--config", str(config), "--out", str(snapshot), "--report",
                 str(report)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "switches reached: 4/4\nlinks: 4 confirmed, 0 one-sided, 0 in conflict\n" in err
    result = json.loads(report.read_text())
    assert (result["switches"], result["links"], result["failures"]) == (
        {"total": 4, "reached": 4}, {"confirmed": 4}, [])
    cables = _expected_cables(small)
    assert len(cables) == 4
    for a, b in cables:
        assert (_peer(capsys, snapshot, a), _peer(capsys, snapshot, b)) == (b, a)
    for agent in agents.values():
        assert agent.logins == ["fabcorr"] and agent.rpcs == ["get", "close-session"]


def test_an_unknown_host_key_fails_that_switch_with_exit_3(agents, tmp_path, monkeypatch,
                                                           capsys):
    monkeypatch.setenv("FABCORR_TEST_NETCONF_PASSWORD", PASSWORD)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    known = [a for n, a in agents.items() if n != "spine02"]
    (tmp_path / ".ssh" / "known_hosts").write_text(
        "".join(a.known_hosts_line + "\n" for a in known))
    config = _netconf_config(tmp_path / "fabcorr.yaml",
                             {n: a.address[1] for n, a in agents.items()}, verify=True)
    code = main(["discover", "--config", str(config), "--out", str(tmp_path / "t.json")])
    err = capsys.readouterr().err
    port = agents["spine02"].address[1]
    assert code == 3
    assert "switches reached: 3/4\n" in err
    assert (f"failed: spine02 over netconf: hostkey: 127.0.0.1:{port}: no host key for it in "
            f"{tmp_path}/.ssh/known_hosts\n") in err
    assert agents["spine02"].rpcs == []


class HeldProxies:
    """A TCP proxy in front of each agent. Every connection is held, not forwarded, until
    the test releases it; :meth:`wait_held` waits until ``n`` are held at once. A held
    switch cannot answer, so its discovery keeps its slot of ``--concurrency``."""

    def __init__(self, targets):
        self.changed = threading.Condition()
        self.held, self.arrived, self.released = [], 0, False
        self.listeners, self.threads = [], []
        self.ports = {}
        for name, port in targets.items():
            listener = socket.create_server(("127.0.0.1", 0))
            self.listeners.append(listener)
            self.ports[name] = listener.getsockname()[1]
            self._thread(self._accept, listener, port)

    def _thread(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _accept(self, listener, port):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self.changed:
                self.arrived += 1
                self.held.append((client, port))
                self.changed.notify_all()

    def wait_held(self, n, timeout=60.0):
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.held) >= n, timeout), \
                f"{len(self.held)} connections held, not {n}, after {timeout} s"
            return len(self.held), self.arrived

    def release_one(self):
        """Forward the connection held longest."""
        with self.changed:
            client, port = self.held.pop(0)
        upstream = socket.create_connection(("127.0.0.1", port))
        self._thread(self._pipe, client, upstream)
        self._thread(self._pipe, upstream, client)

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self):
        for listener in self.listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept()
            listener.close()
        with self.changed:
            for client, _ in self.held:
                client.close()
        for thread in self.threads:
            thread.join(30)
            assert not thread.is_alive(), thread


@pytest.mark.parametrize("concurrency", [1, 2, 4])
def test_concurrency_is_how_many_switches_are_asked_at_once(agents, tmp_path, monkeypatch,
                                                           capsys, concurrency):
    monkeypatch.setenv("FABCORR_TEST_NETCONF_PASSWORD", PASSWORD)
    proxies = HeldProxies({n: a.address[1] for n, a in agents.items()})
    config = _netconf_config(tmp_path / "fabcorr.yaml", proxies.ports, verify=False)
    done = {}

    def discover():
        done["code"] = main(["discover", "--config", str(config), "--out",
                             str(tmp_path / "t.json"), "--concurrency", str(concurrency)])

    runner = threading.Thread(target=discover)
    runner.start()
    seen = []
    try:
        for released in range(len(agents)):
            # `concurrency` connections at once, and the next only once one has finished
            seen.append(proxies.wait_held(min(concurrency, len(agents) - released)))
            proxies.release_one()
    finally:
        runner.join(120)
        proxies.close()
    assert not runner.is_alive()
    expected = [min(concurrency, len(agents) - n) for n in range(len(agents))]
    assert seen == [(held, n + held) for n, held in enumerate(expected)]
    assert done["code"] == 0
    assert "switches reached: 4/4\nlinks: 4 confirmed" in capsys.readouterr().err
