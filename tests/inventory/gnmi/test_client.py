"""discover() and stream_counters() with pygnmi against emulated targets over loopback gRPC."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from typing import Any

import pytest
from pydantic import ValidationError
from pygnmi.client import gNMIclient
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080.gnmi_pb2 import Notification, SubscribeResponse, Update

from inventory.counters import PortCounters
from inventory.devices import GnmiOptions, Secret, SwitchConfig
from inventory.errors import (
    DecodeError,
    FabcorrError,
    SourceError,
    SourceTimeout,
    SourceUnreachable,
)
from inventory.facts import FactSet
from inventory.gnmi import GnmiAuthError, GnmiError, GnmiTimeout, discover, stream_counters
from inventory.gnmi.client import GnmiClient, _Stream
from simulator.gnmi_target import GnmiTarget, steady_counters
from tests import virtual_time

from .conftest import SERVER_NAME, Pki

PROFILES = ("openconfig", "eos", "cumulus", "sonic")
PASSWORD = "hunter2-gnmi"
DEADLINE_S = 60.0  # a call that should end (answer or fail) fails the test after this long
PATIENT = 120.0  # a timeout_s no call of a test that must not wait for it reaches


@contextmanager
def serve(fabric: FactSet, name: str = "leaf01", **options: Any) -> Iterator[SwitchConfig]:
    """A target for switch ``name`` on its mgmt address, and the config to reach it."""
    address = next(s.mgmt_address for s in fabric.switches if s.name == name)
    profile = options.setdefault("profile", "openconfig")
    options.setdefault("subscribe_only", profile == "cumulus")
    gnmi = options.pop("gnmi", {"insecure": True})
    with GnmiTarget.from_facts(fabric, name, host=address, **options) as target:
        yield SwitchConfig(name, address, ("gnmi",), vendor=profile,
                           gnmi=GnmiOptions(port=target.port, **{"timeout_s": 10.0, **gnmi}))


def _patient(switch: SwitchConfig) -> SwitchConfig:
    """``switch`` with a timeout far beyond :data:`DEADLINE_S`."""
    return dataclasses.replace(switch, gnmi=dataclasses.replace(switch.gnmi, timeout_s=PATIENT))


def _discover(switch: SwitchConfig) -> FactSet:
    """discover(), failing the test with a plain TimeoutError after :data:`DEADLINE_S`."""
    return asyncio.run(asyncio.wait_for(discover(switch), DEADLINE_S))


def _ground_truth(fabric: FactSet, name: str, vendor: str) -> FactSet:
    switch = next(s for s in fabric.switches if s.name == name)
    return FactSet(
        switches=(dataclasses.replace(switch, vendor=vendor),),
        interfaces=tuple(i for i in fabric.interfaces if i.switch == name),
        neighbors=tuple(sorted((dataclasses.replace(n, source="gnmi") for n in fabric.neighbors
                                if n.reporter == "switch" and n.local_device == name),
                               key=lambda n: n.local_port)))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", ["leaf01", "leaf02", "spine01", "spine02"])
def test_discover_returns_the_generated_facts_of_the_switch(
        fabric: FactSet, name: str, profile: str) -> None:
    with serve(fabric, name, profile=profile) as switch:
        facts = _discover(switch)
    facts = dataclasses.replace(facts, neighbors=tuple(sorted(facts.neighbors,
                                                              key=lambda n: n.local_port)))
    assert facts == _ground_truth(fabric, name, profile)


def test_discover_runs_switches_concurrently(fabric: FactSet) -> None:
    """Three switches answer while a stalled one, started first, still waits: one after
    the other, they would wait for its timeout (far beyond the test's deadline) first."""
    names = [s.name for s in fabric.switches]
    with serve(fabric, names[0]) as a, serve(fabric, names[1]) as b, \
            serve(fabric, names[2]) as c, serve(fabric, names[3], stall=True) as stalled:

        async def all_of_them() -> tuple[list[FactSet], bool]:
            waiting = asyncio.create_task(discover(_patient(stalled)))
            await asyncio.sleep(0)  # the stalled switch's discovery is under way first
            try:
                answered = await asyncio.wait_for(
                    asyncio.gather(*(discover(s) for s in (a, b, c))), DEADLINE_S)
                return answered, waiting.done()
            finally:
                waiting.cancel()
                await asyncio.gather(waiting, return_exceptions=True)
        results, stalled_done = asyncio.run(all_of_them())
    assert [r.switches[0].name for r in results] == names[:3]
    assert not stalled_done


def _samples(switch: SwitchConfig, interval_s: float, count: int,
             ports: list[str] | None = None) -> list[list[PortCounters]]:
    async def collect() -> list[list[PortCounters]]:
        found = []
        async with aclosing(stream_counters(switch, interval_s, ports)) as stream:
            async for readings in stream:
                found.append(readings)
                if len(found) == count:
                    return found
        return found
    return asyncio.run(asyncio.wait_for(collect(), DEADLINE_S))


@pytest.mark.parametrize("profile", PROFILES)
def test_stream_counters_of_some_ports_only(fabric: FactSet, profile: str) -> None:
    """A shard reads only the far ends of its cables on another shard's switch."""
    source = steady_counters(start=time.time() - 60.0)
    ports = [i.name for i in fabric.interfaces if i.switch == "leaf01"]
    wanted = [ports[-1], ports[0]]
    with serve(fabric, profile=profile, counters=source) as switch:
        samples = _samples(switch, 0.2, 2, wanted)
    for readings in samples:
        assert sorted(r.port for r in readings) == sorted(wanted)
        for r in readings:
            assert r.values == {k: v for k, v in source(r.port, r.at).items()
                                if profile != "openconfig" or not k.startswith("pfc_")}


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize("pack", [False, True], ids=["per-path", "packed"])
@pytest.mark.parametrize("profile", PROFILES)
def test_stream_counters_match_the_targets_counter_source(fabric: FactSet, profile: str,
                                                          pack: bool) -> None:
    source = steady_counters(start=time.time() - 60.0)
    with serve(fabric, profile=profile, counters=source, pack=pack) as switch:
        samples = _samples(switch, 0.2, 3)
    ports = [i.name for i in fabric.interfaces if i.switch == "leaf01"]
    for readings in samples:
        assert [r.port for r in readings] == ports
        for r in readings:
            expected = {k: v for k, v in source(r.port, r.at).items()
                        if profile != "openconfig" or not k.startswith("pfc_")}
            assert (r.switch, r.values) == ("leaf01", expected)
            assert (r.oper_status, r.speed_bps) == (
                ("", None) if profile == "sonic" else ("up", 400_000_000_000))
    first, last = samples[1][0], samples[2][0]
    elapsed = last.at - first.at  # the target's own stamps: a loaded machine may stretch it
    assert elapsed > 0
    # Ethernet1 runs at 2/4 of 100 Gb/s: 6.25 GB/s, 1 pause frame per ms on priority 3;
    # each value is truncated to an integer, hence the 2 / elapsed tolerance
    rate = (last.values["in_octets"] - first.values["in_octets"]) / elapsed
    assert rate == pytest.approx(6.25e9, abs=2 / elapsed)
    if profile != "openconfig":
        pauses = (last.values["pfc_rx_pause/3"] - first.values["pfc_rx_pause/3"]) / elapsed
        assert pauses == pytest.approx(1000, abs=2 / elapsed)


@pytest.mark.parametrize("pack", [False, True], ids=["per-path", "packed"])
@pytest.mark.parametrize("profile", ["openconfig", "sonic"])
def test_a_sample_right_after_another_is_not_merged_into_it(fabric: FactSet, profile: str,
                                                            pack: bool) -> None:
    """A target catching up on a late tick sends two samples 2 ms apart: each is a reading
    of its own, not one summing the packet counters (unicast + multicast + broadcast) of
    both."""
    source = steady_counters(start=time.time() - 60.0)
    with serve(fabric, profile=profile, counters=source, pack=pack, echo_s=0.002) as switch:
        samples = _samples(switch, 0.5, 5)
    ports = [i.name for i in fabric.interfaces if i.switch == "leaf01"]
    for readings in samples:
        assert [r.port for r in readings] == ports
        for r in readings:
            assert r.values == {k: v for k, v in source(r.port, r.at).items()
                                if profile != "openconfig" or not k.startswith("pfc_")}
    # the initial state, then each tick's sample and its echo stamped 2 ms later
    ticks = [readings[0].at for readings in samples[1:]]
    assert ticks[1] - ticks[0] == pytest.approx(0.002, abs=1e-6)
    assert ticks[3] - ticks[2] == pytest.approx(0.002, abs=1e-6)


def test_a_stalled_target_times_out_within_the_configured_timeout(fabric: FactSet) -> None:
    """Never before the timeout, and by the timeout itself (its message says so): without
    it the calls would wait forever, and the test fail after its deadline."""
    with serve(fabric, stall=True, gnmi={"insecure": True, "timeout_s": 0.4}) as switch:
        for attempt in (lambda: _discover(switch), lambda: _samples(switch, 0.1, 1)):
            began = time.monotonic()
            with pytest.raises(SourceTimeout) as excinfo:
                attempt()
            assert time.monotonic() - began >= 0.4
            assert "Capabilities: no answer within 0.4 s" in str(excinfo.value)
            assert excinfo.value.kind == "timeout"
            assert isinstance(excinfo.value, GnmiTimeout)


def test_a_stream_of_unparseable_updates_is_garbage_not_a_timeout(fabric: FactSet) -> None:
    # garbage is judged after the timeout; short enough for the test, long enough for a
    # loaded machine's Capabilities to answer
    with serve(fabric, garbage=True, gnmi={"insecure": True, "timeout_s": 5.0}) as switch, \
            pytest.raises(GnmiError) as excinfo:
        _samples(switch, 0.2, 1)
    assert excinfo.value.kind == "garbage" and "could not be parsed" in str(excinfo.value)


def test_streams_take_no_thread_and_leave_no_task_when_cancelled(fabric: FactSet) -> None:
    """Streams run in the event loop: a fourth open stream has no more threads than the
    first (the target's server threads aside), and cancelling them ends every task (gRPC's
    own status task once the cancellation completes)."""
    def client_threads() -> int:
        return sum(not t.name.startswith(("ThreadPoolExecutor", "gnmi-call"))
                   for t in threading.enumerate())

    async def main(switch: SwitchConfig) -> tuple[list[int], set[asyncio.Task[Any]]]:
        async def consume(seen: list[Any]) -> None:
            while True:  # as the collector does: a stream that fails (a loaded machine
                try:     # can starve a 0.1 s stream into a timeout) is opened again
                    async with aclosing(stream_counters(switch, 0.1)) as stream:
                        async for readings in stream:
                            seen.append(readings)
                except FabcorrError:
                    await asyncio.sleep(0.05)

        tasks, threads = [], []
        for _ in range(4):
            seen: list[Any] = []
            tasks.append(asyncio.create_task(consume(seen)))
            deadline = time.monotonic() + DEADLINE_S
            while len(seen) < 2:
                assert time.monotonic() < deadline, "no two samples in time"
                await asyncio.sleep(0.02)
            threads.append(client_threads())
        for task in tasks:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), DEADLINE_S)
        deadline = time.monotonic() + DEADLINE_S
        while (left := asyncio.all_tasks() - {asyncio.current_task()}) and \
                time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return threads, left

    with serve(fabric) as switch:
        threads, left = asyncio.run(main(switch))
    assert threads == threads[:1] * 4 and not left


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_target_ending_the_stream_is_an_error_at_once(fabric: FactSet) -> None:
    async def collect(switch: SwitchConfig, target: GnmiTarget) -> list[Any]:
        found: list[Any] = []
        async with aclosing(stream_counters(switch, 0.2)) as stream:
            async for readings in stream:
                found.append(readings)
                if len(found) == 2:
                    await asyncio.to_thread(target.stop)  # its streams end with status OK
        return found

    address = next(s.mgmt_address for s in fabric.switches if s.name == "leaf01")
    target = GnmiTarget.from_facts(fabric, "leaf01", host=address).start()
    switch = SwitchConfig("leaf01", address, ("gnmi",), vendor="openconfig", gnmi=GnmiOptions(
        port=target.port, insecure=True, timeout_s=PATIENT))  # at once: not after a timeout
    with pytest.raises(GnmiError) as excinfo:
        asyncio.run(asyncio.wait_for(collect(switch, target), DEADLINE_S))
    assert excinfo.value.kind == "error" and "ended the subscription" in str(excinfo.value)


def test_a_rejected_subscription_reports_the_targets_status(fabric: FactSet) -> None:
    async def first_sample(switch: SwitchConfig) -> Any:
        async with GnmiClient(switch) as client, \
                aclosing(client.stream(["/vendor:interfaces"], 0.2)) as stream:
            return await anext(stream)

    with serve(fabric, profile="eos") as switch, pytest.raises(GnmiError) as excinfo:
        asyncio.run(first_sample(switch))  # EOS rejects origins it does not know
    assert excinfo.value.kind == "error" and "INVALID_ARGUMENT" in str(excinfo.value)


def test_wrong_password_is_an_auth_error_that_never_shows_the_password(
        fabric: FactSet, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    good = {"insecure": True, "username": "fabcorr", "password": Secret(PASSWORD)}
    bad = {**good, "password": Secret("not-" + PASSWORD)}
    with serve(fabric, username="fabcorr", password=PASSWORD, gnmi=good) as switch:
        assert _discover(switch).interfaces
    with serve(fabric, username="fabcorr", password=PASSWORD, gnmi=good) as switch:
        assert _samples(switch, 0.2, 1)[0]
    with serve(fabric, username="fabcorr", password=PASSWORD, gnmi=bad) as switch:
        with pytest.raises(GnmiAuthError):
            _samples(switch, 0.2, 1)
        with pytest.raises(GnmiAuthError) as excinfo:
            _discover(switch)
    error = excinfo.value
    assert (error.kind, isinstance(error, SourceError)) == ("auth", True)
    assert "UNAUTHENTICATED" in str(error)
    chain, cause = [], error
    while cause is not None:
        chain.append(f"{cause!s} {cause!r}")
        cause = cause.__cause__ or cause.__context__
    output = capsys.readouterr()
    for text in (*chain, output.out, output.err, caplog.text):
        assert PASSWORD not in text


def test_garbage_json_is_a_source_error_caused_by_a_decode_error(fabric: FactSet) -> None:
    with serve(fabric, garbage=True) as switch, pytest.raises(SourceError) as excinfo:
        _discover(switch)
    assert excinfo.value.kind == "garbage"
    assert isinstance(excinfo.value.__cause__, DecodeError)


def test_a_closed_port_is_unreachable_at_once(fabric: FactSet) -> None:
    with serve(fabric) as switch:
        pass  # the target is gone: its port refuses connections
    with pytest.raises(SourceUnreachable) as excinfo:
        _discover(_patient(switch))  # at once: not after its timeout
    assert excinfo.value.kind == "unreachable"


def test_tls_is_verified_against_the_configured_ca(fabric: FactSet, pki: Pki) -> None:
    verified = {"ca_file": pki.ca_file}
    with serve(fabric, cert_pem=pki.cert_pem, key_pem=pki.key_pem, gnmi=verified) as switch:
        assert _discover(switch).interfaces
    # leaf02 (127.1.0.2) is not in the certificate: only the server name override matches
    tls = {"cert_pem": pki.cert_pem, "key_pem": pki.key_pem}
    with serve(fabric, "leaf02", **tls, gnmi=verified) as switch, \
            pytest.raises(SourceUnreachable) as excinfo:
        _discover(switch)
    assert excinfo.value.kind == "tls"
    with serve(fabric, "leaf02", **tls, gnmi={**verified, "server_name": SERVER_NAME}) as switch:
        assert _discover(switch).switches[0].name == "leaf02"


def test_tls_fails_against_an_untrusted_certificate(fabric: FactSet, untrusted: Pki) -> None:
    tls = {"cert_pem": untrusted.cert_pem, "key_pem": untrusted.key_pem}
    with serve(fabric, **tls, gnmi={"ca_file": untrusted.ca_file}) as switch, \
            pytest.raises(SourceUnreachable) as excinfo:
        _discover(switch)
    assert excinfo.value.kind == "tls"
    with pytest.raises(ValidationError, match=r"/nonexistent/ca\.pem: no such file"):
        GnmiOptions(ca_file="/nonexistent/ca.pem")  # refused with the configuration


def test_pygnmi_path_root_alone_trusts_any_certificate(fabric: FactSet, untrusted: Pki) -> None:
    """Why the client passes the CA as ``path_cert``: with ``path_root`` alone pygnmi 0.8.15
    fetches the server's own certificate and trusts it. Revisit if this test fails."""
    tls = {"cert_pem": untrusted.cert_pem, "key_pem": untrusted.key_pem}
    with serve(fabric, **tls, gnmi={"ca_file": untrusted.ca_file}) as switch, \
            gNMIclient(target=(switch.address, switch.gnmi.port), path_root=untrusted.ca_file,
                       gnmi_timeout=0) as client:
        assert client.capabilities()["gnmi_version"] == "0.8.0"


def test_stream_responses_are_cut_into_samples() -> None:
    """sync_response ends the initial state; a notification stamped half an interval later
    starts the next sample, as does one of a path already in the sample however close its
    stamp (a late target's next sample); otherwise a sample ends after half an interval of
    silence (at most 1 s); the error that ends the RPC follows the last sample."""
    interval = 0.2

    def note(at_s: float, port: str = "Ethernet1") -> SubscribeResponse:
        return SubscribeResponse(update=Notification(timestamp=int(at_s * 1e9), update=[
            Update(path=gnmi_path_generator(f"interfaces/interface[name={port}]/state"))]))

    def stamps(sample: Any) -> list[float]:
        return [n.timestamp / 1e9 for n in sample]

    async def cut() -> list[Any]:
        stream = _Stream(interval)
        for response in (note(1.0), note(1.0, "Ethernet2"), SubscribeResponse(sync_response=True),
                         note(1.2), note(1.2, "Ethernet2"), note(1.4),
                         note(1.41, "Ethernet2"), note(1.412)):
            stream._hand(response)
        samples = [await asyncio.wait_for(stream.samples.get(), 1) for _ in range(4)]
        stream._hand(note(1.6))
        stream._hand(EOFError("the target ended the subscription"))
        samples += [await asyncio.wait_for(stream.samples.get(), 1) for _ in range(2)]
        stream.end()
        return samples

    *samples, error = virtual_time.run(cut())
    assert [stamps(sample) for sample in samples] == [
        [1.0, 1.0], [1.2, 1.2], [1.4, 1.41], [1.412], [1.6]]
    assert isinstance(error, EOFError)
