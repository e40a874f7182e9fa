"""The emulated gNMI target on its own, driven over gRPC by pygnmi's client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from pygnmi.client import gNMIclient, gNMIException
from pygnmi.spec.v080 import gnmi_pb2 as pb
from pygnmi.spec.v080 import gnmi_pb2_grpc

from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter, SwitchFact
from simulator.gnmi_target import GnmiTarget, steady_counters

MAC = "0c:42:a1:01:00:00"
SWITCH = SwitchFact("leaf01", MAC, "127.1.0.1", "127.1.0.1", "eos")
INTERFACES = (
    InterfaceFact("leaf01", "Ethernet1", 1001, 400_000_000_000, "up", MAC, "to-gpu01"),
    InterfaceFact("leaf01", "Ethernet2", 1002, 100_000_000_000, "lower-layer-down", MAC),
    InterfaceFact("leaf02", "Ethernet1", 1001, 400_000_000_000, "up", MAC),  # not leaf01's
)
NEIGHBORS = (
    LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "b8:3f:d3:00:00:00", IdSubtype.MAC,
                     "b8:3f:d2:00:00:00", IdSubtype.MAC, "gpu01", "ens1f0np0", "10.0.0.5"),
)


def counters(port: str, now: float) -> dict[str, int]:
    """Constant counters, different per port."""
    n = int(port.removeprefix("Ethernet"))
    return {"in_octets": 100 + n, "out_octets": 200 + n, "in_pkts": 3, "out_pkts": 4,
            "in_discards": 0, "out_discards": 0, "in_errors": 0, "out_errors": 0,
            "pfc_rx_pause/3": 7, "pfc_tx_pause/3": 8, "queue_tx_pkts/3": 9,
            "queue_ecn_marked/3": 10, "queue_dropped/3": 11}


def _target(**options: object) -> GnmiTarget:
    options = {"profile": "eos", "counters": counters, "host": "127.1.0.1", **options}
    return GnmiTarget(SWITCH, INTERFACES, NEIGHBORS, **options)  # type: ignore[arg-type]


@pytest.fixture
def target() -> Iterator[GnmiTarget]:
    with _target() as running:
        yield running


def _client(target: GnmiTarget, **options: object) -> gNMIclient:
    # gnmi_timeout=0 skips the channel-ready wait, after which closing takes ~0.2 s
    return gNMIclient(target=("127.1.0.1", target.port), insecure=True, gnmi_timeout=0,
                      **options)


def _get(server: GnmiTarget, path: str, encoding: str = "json_ietf",
         **options: object) -> list[dict]:
    with _client(server) as client:
        reply = client.get(path=[path], encoding=encoding, **options)
    [notification] = reply["notification"]
    assert notification["timestamp"] > 0
    return notification["update"]


def _code(excinfo: pytest.ExceptionInfo[gNMIException]) -> grpc.StatusCode:
    return excinfo.value.orig_exc.code()


def test_binds_the_given_loopback_address_and_reports_capabilities(target: GnmiTarget) -> None:
    assert target.address == f"127.1.0.1:{target.port}" and target.port > 0
    with _client(target) as client:
        capabilities = client.capabilities()
    assert capabilities["supported_encodings"] == ["json", "json_ietf"]
    assert capabilities["gnmi_version"] == "0.8.0"
    assert [m["name"] for m in capabilities["supported_models"]] == [
        "openconfig-interfaces", "openconfig-lldp", "openconfig-qos", "openconfig-if-ethernet"]


def test_interface_state_is_json_ietf_with_module_prefixes_and_string_counters(
        target: GnmiTarget) -> None:
    assert _get(target, "/interfaces/interface[name=Ethernet1]/state") == [{
        "path": "interfaces/interface[name=Ethernet1]/state",
        "val": {"openconfig-interfaces:name": "Ethernet1",
                "openconfig-interfaces:oper-status": "UP",
                "openconfig-interfaces:counters": {
                    "in-octets": "101", "out-octets": "201", "in-pkts": "3", "out-pkts": "4",
                    "in-discards": "0", "out-discards": "0", "in-errors": "0",
                    "out-errors": "0", "in-unicast-pkts": "3", "in-multicast-pkts": "0",
                    "in-broadcast-pkts": "0", "out-unicast-pkts": "4",
                    "out-multicast-pkts": "0", "out-broadcast-pkts": "0"},
                "openconfig-interfaces:ifindex": 1001,
                "openconfig-interfaces:description": "to-gpu01"}}]


def test_json_encoding_has_numbers_and_no_prefixes(target: GnmiTarget) -> None:
    [update] = _get(target, "/interfaces/interface[name=Ethernet2]/state", encoding="json")
    assert update["val"]["counters"]["in-octets"] == 102
    assert update["val"]["oper-status"] == "LOWER_LAYER_DOWN"


def test_port_speed_is_an_identityref_per_interface(target: GnmiTarget) -> None:
    assert _get(target, "/interfaces/interface[name=*]/ethernet/state/port-speed") == [
        {"path": "interfaces/interface[name=Ethernet1]/ethernet/state/port-speed",
         "val": "openconfig-if-ethernet:SPEED_400GB"},
        {"path": "interfaces/interface[name=Ethernet2]/ethernet/state/port-speed",
         "val": "openconfig-if-ethernet:SPEED_100GB"}]


def test_lldp_neighbors_and_local_chassis(target: GnmiTarget) -> None:
    assert _get(target, "/lldp/interfaces/interface[name=*]/neighbors") == [
        {"path": "lldp/interfaces/interface[name=Ethernet1]/neighbors",
         "val": {"openconfig-lldp:neighbor": [{"id": "1", "state": {
             "id": "1", "chassis-id": "b8:3f:d3:00:00:00", "chassis-id-type": "MAC_ADDRESS",
             "port-id": "b8:3f:d2:00:00:00", "port-id-type": "MAC_ADDRESS",
             "system-name": "gpu01", "port-description": "ens1f0np0"},
             "mgmt-addresses": {"mgmt-address": [
                 {"address": "10.0.0.5", "state": {"address": "10.0.0.5"}}]}}]}},
        {"path": "lldp/interfaces/interface[name=Ethernet2]/neighbors",
         "val": {"openconfig-lldp:neighbor": []}}]
    assert _get(target, "/lldp/state") == [{"path": "lldp/state", "val": {
        "openconfig-lldp:chassis-id": MAC, "openconfig-lldp:chassis-id-type": "MAC_ADDRESS",
        "openconfig-lldp:system-name": "leaf01"}}]


@pytest.mark.parametrize(("profile", "path", "target_name", "val"), [
    ("openconfig", "/qos/interfaces/interface[interface-id=Ethernet1]/output/queues/"
     "queue[name=3]/state", "", {"openconfig-qos:name": "3", "openconfig-qos:transmit-pkts": "9",
                                 "openconfig-qos:dropped-pkts": "11",
                                 "openconfig-qos:ecn-marked-pkts": "10"}),
    ("eos", "/interfaces/interface[name=Ethernet1]/ethernet/pfc/priorities/priority[index=3]/"
     "state", "", {"index": 3, "in-frames": "7", "out-frames": "8"}),
    ("cumulus", "/qos/interfaces/interface[interface-id=Ethernet1]/switch-priority[priority=3]/"
     "state/counters", "", {"in-pause-pkts": "7", "out-pause-pkts": "8"}),
    ("sonic", "/COUNTERS/Ethernet1", "COUNTERS_DB", {
        "SAI_PORT_STAT_IF_IN_OCTETS": "101", "SAI_PORT_STAT_IF_OUT_OCTETS": "201",
        "SAI_PORT_STAT_IF_IN_UCAST_PKTS": "3", "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": "4",
        "SAI_PORT_STAT_IF_IN_DISCARDS": "0", "SAI_PORT_STAT_IF_OUT_DISCARDS": "0",
        "SAI_PORT_STAT_IF_IN_ERRORS": "0", "SAI_PORT_STAT_IF_OUT_ERRORS": "0",
        "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS": "0", "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS": "0",
        "SAI_PORT_STAT_PFC_3_RX_PKTS": "7", "SAI_PORT_STAT_PFC_3_TX_PKTS": "8"}),
    ("sonic", "/COUNTERS/Ethernet1/Queues", "COUNTERS_DB", {"Ethernet1:3": {
        "SAI_QUEUE_STAT_PACKETS": "9", "SAI_QUEUE_STAT_DROPPED_PACKETS": "11",
        "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "10"}}),
])
def test_vendor_counter_paths(profile: str, path: str, target_name: str, val: dict) -> None:
    with _target(profile=profile) as target:
        [update] = _get(target, path, target=target_name or None)
    assert update == {"path": path.lstrip("/"), "val": val}


def test_get_errors_have_grpc_status_codes(target: GnmiTarget) -> None:
    with _client(target) as client, pytest.raises(gNMIException) as missing:
        client.get(path=["/interfaces/interface[name=Ethernet9]/state"], encoding="json_ietf")
    assert _code(missing) == grpc.StatusCode.NOT_FOUND
    # pygnmi turns a module-prefixed first element into the origin, which EOS rejects
    with _client(target) as client, pytest.raises(gNMIException) as origin:
        client.get(path=["/openconfig-interfaces:interfaces/interface[name=*]/state"],
                   encoding="json_ietf")
    assert _code(origin) == grpc.StatusCode.INVALID_ARGUMENT
    with _target(subscribe_only=True) as only, _client(only) as client, \
            pytest.raises(gNMIException) as get:
        client.get(path=["/lldp/state"], encoding="json_ietf")
    assert _code(get) == grpc.StatusCode.UNIMPLEMENTED


def _subscribe(client: gNMIclient, list_mode: str, path: str, **subscription: object) -> Any:
    return client.subscribe2(subscribe={"mode": list_mode, "encoding": "json_ietf",
                                        "subscription": [{"path": path, **subscription}]})


def test_stream_sample_sends_initial_state_sync_then_one_update_per_interval() -> None:
    start = time.time()
    with _target(counters=steady_counters(start)) as target, _client(target) as client:
        source = steady_counters(start)
        stream = _subscribe(client, "stream", "/interfaces/interface[name=*]/state/counters",
                            mode="sample", sample_interval=100_000_000)
        first = next(stream)  # pygnmi merges everything up to sync_response into one item
        assert first["sync_response"] is True
        assert [u["path"] for u in first["update"]["update"]] == [
            "interfaces/interface[name=Ethernet1]/state/counters",
            "interfaces/interface[name=Ethernet2]/state/counters"]
        items = [stream.get_update(timeout=60) for _ in range(4)]
        target.stop()  # ends the stream cleanly before the channel closes
    paths = [item["update"]["update"][0]["path"].split("]")[0] for item in items]
    assert paths == ["interfaces/interface[name=Ethernet1",
                     "interfaces/interface[name=Ethernet2"] * 2
    stamps = [item["update"]["timestamp"] for item in items]
    assert stamps[0] == stamps[1] and stamps[2] == stamps[3]
    # Sample n is due n intervals after the initial state, or later on a loaded machine
    # (a late tick skips what it missed), never sooner.
    initial = first["update"]["timestamp"]
    assert stamps[0] - initial >= 100_000_000 and stamps[2] - initial >= 200_000_000
    for item in items:
        [update] = item["update"]["update"]
        port = update["path"].split("=")[1].split("]")[0]
        expected = source(port, item["update"]["timestamp"] / 1e9)["in_octets"]
        assert update["val"]["openconfig-interfaces:in-octets"] == str(expected)


def test_on_change_sends_initial_state_then_only_changes(target: GnmiTarget) -> None:
    with _client(target) as client:
        stream = _subscribe(client, "stream", "/interfaces/interface[name=*]/state/oper-status",
                            mode="on_change")
        first = next(stream)
        assert [u["val"] for u in first["update"]["update"]] == ["UP", "LOWER_LAYER_DOWN"]
        with pytest.raises(TimeoutError):
            stream.get_update(timeout=0.3)
        target.set_oper_status("Ethernet1", "down")
        changed = stream.get_update(timeout=60)
        target.stop()
    assert changed["update"]["update"] == [
        {"path": "interfaces/interface[name=Ethernet1]/state/oper-status", "val": "DOWN"}]


def test_once_ends_after_sync_and_poll_answers_each_poll(target: GnmiTarget) -> None:
    with _client(target) as client:
        items = list(_subscribe(client, "once", "/lldp/state"))
        assert [sorted(item) for item in items] == [["update"], ["sync_response"]]
        assert items[0]["update"]["update"][0]["val"]["openconfig-lldp:system-name"] == "leaf01"
        poll = _subscribe(client, "poll", "/interfaces/interface[name=*]/state/ifindex")
        for _ in range(2):
            answer = poll.get_update(timeout=60)
            assert [u["val"] for u in answer["update"]["update"]] == [1001, 1002]
        poll.close()  # half-closes: the target ends the POLL subscription


def test_stall_accepts_but_never_answers() -> None:
    with _target(stall=True) as target, grpc.insecure_channel(target.address) as channel:
        stub = gnmi_pb2_grpc.gNMIStub(channel)
        began = time.monotonic()
        with pytest.raises(grpc.RpcError) as excinfo:
            stub.Get(pb.GetRequest(encoding=4), timeout=0.3)
        assert excinfo.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED  # the call's own
        assert time.monotonic() - began >= 0.3


@pytest.mark.parametrize(("username", "password", "accepted"), [
    ("fabcorr", "s3cret", True), ("fabcorr", "wrong", False), ("", "", False)])
def test_credentials_are_checked(username: str, password: str, accepted: bool) -> None:
    with _target(username="fabcorr", password="s3cret") as target:
        client = _client(target, username=username, password=password)
        if accepted:
            with client:
                assert client.get(path=["/lldp/state"], encoding="json_ietf")["notification"]
        else:
            with pytest.raises(gNMIException) as excinfo:
                client.connect()
            assert _code(excinfo) == grpc.StatusCode.UNAUTHENTICATED
            assert excinfo.value.orig_exc.details() == "invalid username or password"


def test_garbage_answers_malformed_json_which_pygnmi_passes_on_as_a_string() -> None:
    with _target(garbage=True) as target:
        [update] = _get(target, "/interfaces/interface[name=Ethernet1]/state")
    assert update["val"] == '{"openconfig-interfaces:state": {"name": '


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="profile 'junos' is not one of"):
        _target(profile="junos")
