"""discover() over real SSH against simulated agents built from a generated fabric."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from inventory import netconf
from inventory.devices import NetconfOptions, Secret, SwitchConfig
from inventory.errors import SourceError, SourceTimeout, SourceUnreachable
from inventory.facts import FactSet, Reporter
from simulator.generator import FabricSpec, generate_facts
from simulator.netconf_server import NetconfServer

PASSWORD = "s3cret-Pa55"
DEADLINE_S = 60.0  # a call that should end (answer or fail) fails the test after this long
PATIENT = 120.0  # a wait no call of a test that must not wait for it reaches


@pytest.fixture(scope="module")
def facts() -> FactSet:
    return generate_facts(FabricSpec(nodes=2, rails=1, leaves_per_rail=2, spines=2,
                                     vfs_per_pf=1))


@pytest.fixture(scope="module")
def host_key() -> paramiko.PKey:
    return paramiko.RSAKey.generate(2048)


def _agent(facts: FactSet, name: str, host_key: paramiko.PKey, **options) -> NetconfServer:
    return NetconfServer.from_facts(facts, name, username="fabcorr", password=PASSWORD,
                                    host_key=host_key, **options)


@pytest.fixture
def agent(facts: FactSet, host_key: paramiko.PKey) -> Iterator[NetconfServer]:
    with _agent(facts, "leaf01", host_key) as server:
        yield server


def _switch(name: str, port: int, password: str = PASSWORD, timeout_s: float = PATIENT,
            verify: bool = True) -> SwitchConfig:
    return SwitchConfig(name=name, address="127.0.0.1", protocols=("netconf",), role="leaf",
                        netconf=NetconfOptions(port=port, username="fabcorr",
                                               password=Secret(password, "test"),
                                               timeout_s=timeout_s, hostkey_verify=verify))


def _known_hosts(tmp_path: Path, *agents: NetconfServer) -> str:
    path = tmp_path / "known_hosts"
    path.write_text("".join(a.known_hosts_line + "\n" for a in agents))
    return str(path)


def _expected(facts: FactSet, name: str) -> tuple[tuple, tuple]:
    return (tuple(i for i in facts.interfaces if i.switch == name),
            tuple(dataclasses.replace(n, source="netconf") for n in facts.neighbors
                  if n.reporter is Reporter.SWITCH and n.local_device == name))


def _discover(switch: SwitchConfig, known_hosts: str | None = None) -> FactSet:
    """discover(), failing the test with a plain TimeoutError after :data:`DEADLINE_S`."""
    return asyncio.run(asyncio.wait_for(netconf.discover(switch, known_hosts), DEADLINE_S))


def _fails(switch: SwitchConfig, known_hosts: str | None = None) -> SourceError:
    with pytest.raises(SourceError) as caught:
        _discover(switch, known_hosts)
    assert PASSWORD not in str(caught.value)
    assert PASSWORD not in repr(caught.value.__cause__)
    return caught.value


def test_discover_returns_exactly_the_switch_facts(facts: FactSet, agent: NetconfServer,
                                                   tmp_path: Path) -> None:
    switch = _switch("leaf01", agent.address[1])  # no part of the call waits for its timeout
    found = _discover(switch, _known_hosts(tmp_path, agent))
    interfaces, neighbors = _expected(facts, "leaf01")
    assert (found.interfaces, found.neighbors) == (interfaces, neighbors)
    assert len(interfaces) == 3 and len(neighbors) == 3
    (fact,) = found.switches
    assert fact.chassis_id == facts.switches[0].chassis_id
    assert (fact.name, fact.mgmt_address, fact.sflow_agent, fact.role_hint) == \
        ("leaf01", "127.0.0.1", "127.0.0.1", "leaf")
    assert agent.rpcs == ["get", "close-session"] and agent.framings == ["1.1"]


def test_many_switches_are_discovered_concurrently(facts: FactSet, host_key: paramiko.PKey,
                                                   tmp_path: Path) -> None:
    """Every agent holds its reply for a while: at some moment all four had the <get> and
    none had replied (one after the other, a <get> would only go out after a reply)."""
    names = [s.name for s in facts.switches]
    agents = [_agent(facts, name, host_key, delay=10.0).start() for name in names]
    try:
        known = _known_hosts(tmp_path, *agents)

        async def everyone() -> tuple[list[FactSet], bool]:
            calls = asyncio.gather(*(netconf.discover(_switch(n, a.address[1]), known)
                                     for n, a in zip(names, agents, strict=True)))
            all_waiting = False
            while not calls.done():
                all_waiting = all_waiting or all(a.rpcs == ["get"] for a in agents)
                await asyncio.wait([calls], timeout=0.02)
            return calls.result(), all_waiting

        found, all_waiting = asyncio.run(asyncio.wait_for(everyone(), DEADLINE_S))
    finally:
        for agent in agents:
            agent.stop()
    assert all_waiting
    merged = FactSet()
    for one in found:
        merged = merged.merge(one)
    assert set(merged.interfaces) == set(facts.interfaces)
    assert set(merged.neighbors) == {dataclasses.replace(n, source="netconf")
                                     for n in facts.neighbors if n.reporter is Reporter.SWITCH}


def test_wrong_password_is_an_auth_error(agent: NetconfServer, tmp_path: Path) -> None:
    error = _fails(_switch("leaf01", agent.address[1], password="wrong"),
                   _known_hosts(tmp_path, agent))
    assert error.kind == "auth"
    assert "authentication failed for user 'fabcorr'" in str(error)


def test_stalled_agent_times_out_within_the_timeout(facts: FactSet, host_key: paramiko.PKey,
                                                    tmp_path: Path) -> None:
    with _agent(facts, "leaf01", host_key, stall=True) as agent:
        started = time.monotonic()
        error = _fails(_switch("leaf01", agent.address[1], timeout_s=0.5),
                       _known_hosts(tmp_path, agent))
        elapsed = time.monotonic() - started
    assert isinstance(error, SourceTimeout) and error.kind == "timeout"
    assert "no NETCONF reply within 0.5s" in str(error)
    assert elapsed >= 0.5  # never before the timeout


def test_a_slow_reply_times_out_within_the_timeout(facts: FactSet, host_key: paramiko.PKey,
                                                   tmp_path: Path) -> None:
    # The reply would come after the test's deadline: only the timeout ends the call. The
    # session up to the <get> must fit in the timeout: 5 s, for a loaded machine's SSH.
    with _agent(facts, "leaf01", host_key, delay=PATIENT) as agent:
        started = time.monotonic()
        error = _fails(_switch("leaf01", agent.address[1], timeout_s=5.0),
                       _known_hosts(tmp_path, agent))
        elapsed = time.monotonic() - started
        assert agent.rpcs == ["get"]
    assert isinstance(error, SourceTimeout) and error.kind == "timeout"
    assert "no NETCONF reply within 5s" in str(error)
    assert elapsed >= 5.0  # never before the timeout


def test_another_host_key_in_known_hosts_is_refused(agent: NetconfServer,
                                                    tmp_path: Path) -> None:
    other = paramiko.RSAKey.generate(2048)
    path = tmp_path / "known_hosts"
    path.write_text(f"[127.0.0.1]:{agent.address[1]} ssh-rsa {other.get_base64()}\n")
    error = _fails(_switch("leaf01", agent.address[1]), str(path))
    assert error.kind == "hostkey" and "unknown host key" in str(error)
    assert agent.logins == []  # the password never went to the impostor


def test_a_host_missing_from_known_hosts_is_refused_before_connecting(
        agent: NetconfServer, tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(f"[127.0.0.1]:1 {agent.host_key.get_name()} {agent.host_key.get_base64()}\n")
    error = _fails(_switch("leaf01", agent.address[1]), str(path))
    assert error.kind == "hostkey" and "no host key for it in" in str(error)
    assert agent.logins == []


def test_default_known_hosts_is_the_users(agent: NetconfServer, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    switch = _switch("leaf01", agent.address[1])
    assert _fails(switch).kind == "hostkey"  # ~/.ssh/known_hosts does not exist
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "known_hosts").write_text(agent.known_hosts_line + "\n")
    assert len(_discover(switch).neighbors) == 3


def test_no_verification_accepts_any_host_key(agent: NetconfServer) -> None:
    switch = _switch("leaf01", agent.address[1], verify=False)
    assert len(_discover(switch, "/nonexistent").interfaces) == 3


def test_closed_port_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = _fails(_switch("leaf01", port, verify=False))
    assert isinstance(error, SourceUnreachable) and error.kind == "unreachable"


def test_a_peer_that_is_not_ssh_is_garbage() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def answer_http() -> None:
        connection, _ = listener.accept()
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        connection.close()

    thread = threading.Thread(target=answer_http, daemon=True)
    thread.start()
    try:
        error = _fails(_switch("leaf01", listener.getsockname()[1], verify=False))
    finally:
        thread.join(2)
        listener.close()
    assert error.kind == "garbage" and "SSH protocol banner" in str(error)


def test_a_peer_that_never_speaks_times_out_and_frees_the_worker_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # paramiko waits 15 s for a banner; here longer than the test's deadline, so that only
    # the connection cut at the timeout frees the worker thread asyncio.run() waits for.
    opened = paramiko.Transport.__init__

    def patient(transport: paramiko.Transport, *args, **kwargs) -> None:
        opened(transport, *args, **kwargs)
        transport.banner_timeout = PATIENT

    monkeypatch.setattr(paramiko.Transport, "__init__", patient)
    listener = socket.create_server(("127.0.0.1", 0))  # accepts, never says a word
    try:
        started = time.monotonic()
        error = _fails(_switch("leaf01", listener.getsockname()[1], timeout_s=0.5,
                               verify=False))
        elapsed = time.monotonic() - started
    finally:
        listener.close()
    assert isinstance(error, SourceTimeout) and error.kind == "timeout"
    assert 0.5 <= elapsed < DEADLINE_S
