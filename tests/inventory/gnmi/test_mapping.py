"""gNMI replies (pygnmi's dicts) -> facts and counters: table-driven, no network."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygnmi.create_gnmi_path import gnmi_path_generator
from pygnmi.spec.v080 import gnmi_pb2 as pb

from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.errors import DecodeError
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter, SwitchFact
from inventory.gnmi.mapping import (
    CounterDecoder,
    facts_from_replies,
    id_subtype,
    oper_status,
    port_counters,
    speed_bps,
)

T1, T2 = 1_767_225_600 * 10**9, 1_767_225_601 * 10**9


def _get(*updates: tuple[str | None, Any], timestamp: int = T1,
         prefix: str | None = None) -> dict[str, Any]:
    """A Get reply as pygnmi returns it."""
    return {"notification": [{"timestamp": timestamp, "prefix": prefix, "alias": None,
                              "atomic": False, "update": [{"path": p, "val": v}
                                                          for p, v in updates]}]}


def _item(*updates: tuple[str, Any], timestamp: int = T1, **extra: Any) -> dict[str, Any]:
    """A Subscribe item as pygnmi returns it."""
    return {"update": {"update": [{"path": p, "val": v} for p, v in updates],
                       "timestamp": timestamp, **extra}}


COUNTER_CASES = {
    "JSON_IETF container: module prefixes, counter64 strings, in-pkts wins over parts": (
        [_get(("interfaces/interface[name=Ethernet1]/state", {
            "openconfig-interfaces:oper-status": "UP",
            "openconfig-interfaces:counters": {
                "in-octets": "18446744073709551615", "out-octets": "2", "in-pkts": "3",
                "in-unicast-pkts": "99", "out-unicast-pkts": "4", "out-multicast-pkts": "5",
                "out-broadcast-pkts": "6", "in-discards": "7", "out-discards": "8",
                "in-errors": "9", "out-errors": "10", "in-fcs-errors": "11"}}))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {
            "in_octets": 2**64 - 1, "out_octets": 2, "in_pkts": 3, "in_discards": 7,
            "out_discards": 8, "in_errors": 9, "out_errors": 10, "out_pkts": 15},
            oper_status="up")]),
    "leaf updates under a prefix; key values with '/'": (
        [_item(("counters/in-octets", "7"),
               ("oper-status", "openconfig-interfaces:LOWER_LAYER_DOWN"),
               prefix="interfaces/interface[name=Ethernet1/1]/state")],
        [PortCounters("leaf01", "Ethernet1/1", T1 / 1e9, {"in_octets": 7},
                      oper_status="lower-layer-down")]),
    "merged first stream item; latest timestamp per port": (
        [{**_item(("interfaces/interface[name=Ethernet1]/state/counters", {"in-octets": "1"}),
                  ("interfaces/interface[name=Ethernet2]/state/counters", {"in-octets": "2"})),
          "sync_response": True},
         _item(("interfaces/interface[name=Ethernet2]/state/counters", {"out-octets": "3"}),
               timestamp=T2)],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"in_octets": 1}),
         PortCounters("leaf01", "Ethernet2", T2 / 1e9, {"in_octets": 2, "out_octets": 3})]),
    "EOS PFC priorities and OpenConfig queues": (
        [_item(("interfaces/interface[name=Ethernet1]/ethernet/pfc/priorities", {
            "priority": [{"index": 3, "state": {"index": 3, "in-frames": "10",
                                                "out-frames": "11"}},
                         {"index": 4, "state": {"index": 4, "in-frames": "0",
                                                "out-frames": "1"}}]}),
               ("qos/interfaces/interface[interface-id=Ethernet1]/output/queues", {
                   "openconfig-qos:queue": [{"name": "UC3", "state": {
                       "name": "UC3", "transmit-pkts": "9", "dropped-pkts": "1",
                       "ecn-marked-pkts": "4", "max-queue-len": "1000"}}]}))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {
            "pfc_rx_pause/3": 10, "pfc_tx_pause/3": 11, "pfc_rx_pause/4": 0,
            "pfc_tx_pause/4": 1, "queue_tx_pkts/UC3": 9, "queue_dropped/UC3": 1,
            "queue_ecn_marked/UC3": 4})]),
    "Cumulus switch-priority pause counters, entry path and list forms": (
        [_item(("qos/interfaces/interface[interface-id=swp1]/switch-priority[priority=3]",
                {"priority": 3, "state": {"counters": {"in-pause-pkts": "5",
                                                       "out-pause-pkts": "6"}}}),
               ("qos/interfaces/interface[interface-id=swp2]", {"switch-priority": [
                   {"priority": 5, "state": {"counters": {"in-pause-pkts": "7"}}}]}))],
        [PortCounters("leaf01", "swp1", T1 / 1e9, {"pfc_rx_pause/3": 5, "pfc_tx_pause/3": 6}),
         PortCounters("leaf01", "swp2", T1 / 1e9, {"pfc_rx_pause/5": 7})]),
    "SONiC COUNTERS_DB: SAI names, ucast + non-ucast, queue keys 'Ethernet68:3'": (
        [_item(("COUNTERS/Ethernet68", {
            "SAI_PORT_STAT_IF_IN_OCTETS": "1", "SAI_PORT_STAT_IF_IN_UCAST_PKTS": "5",
            "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS": "2", "SAI_PORT_STAT_PFC_3_RX_PKTS": "8",
            "SAI_PORT_STAT_PFC_3_TX_PKTS": "0", "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "9"}),
            ("COUNTERS/Ethernet68/Queues", {"Ethernet68:3": {
                "SAI_QUEUE_STAT_PACKETS": "4", "SAI_QUEUE_STAT_DROPPED_PACKETS": "0",
                "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "2"}}),
            prefix="")],
        [PortCounters("leaf01", "Ethernet68", T1 / 1e9, {
            "in_octets": 1, "pfc_rx_pause/3": 8, "pfc_tx_pause/3": 0, "queue_tx_pkts/3": 4,
            "queue_dropped/3": 0, "queue_ecn_marked/3": 2, "in_pkts": 7})]),
    "port speed identity, last-clear, JSON numbers, whole-tree Get": (
        [_get((None, {"openconfig-interfaces:interfaces": {"interface": [{
            "name": "Ethernet1", "state": {"counters": {"in-octets": 12,
                                                        "last-clear": "1767225000000000000"}},
            "openconfig-if-ethernet:ethernet": {"state": {
                "port-speed": "openconfig-if-ethernet:SPEED_800GB"}}}]}}), timestamp=0)],
        [PortCounters("leaf01", "Ethernet1", 99.5, {"in_octets": 12},
                      speed_bps=800_000_000_000, last_clear=1_767_225_000.0)]),
    "no counters in the reply": (
        [_get(("lldp/state", {"chassis-id": "x"})), {"sync_response": True}], []),
}


@pytest.mark.parametrize(("replies", "expected"), COUNTER_CASES.values(), ids=COUNTER_CASES)
def test_port_counters(replies: list[dict[str, Any]], expected: list[PortCounters]) -> None:
    assert port_counters("leaf01", replies, received_at=99.5) == expected


BAD = {
    "malformed JSON pygnmi passed on as a string": _get(
        ("interfaces/interface[name=E1]/state", '{"openconfig-interfaces:state": {"name": ')),
    "malformed JSON at a leaf path": _get(
        ("interfaces/interface[name=E1]/state/counters/in-octets", "{\"in")),
    "a scalar where a container is expected": _get(
        ("interfaces/interface[name=E1]/state", {"openconfig-interfaces:counters": "0"})),
    "counter not a number": _item(
        ("interfaces/interface[name=E1]/state/counters", {"in-octets": "abc"})),
    "negative counter string": _item(
        ("interfaces/interface[name=E1]/state/counters", {"in-octets": "-1"})),
    "negative counter": _item(("interfaces/interface[name=E1]/state/counters", {"in-pkts": -1})),
    "boolean counter": _item(("interfaces/interface[name=E1]/state/counters", {"in-pkts": True})),
    "float counter": _item(("interfaces/interface[name=E1]/state/counters", {"in-pkts": 1.5})),
    "oper-status not a string": _item(("interfaces/interface[name=E1]/state/oper-status", 1)),
    "counters without an interface key": _item(
        ("interfaces/interface/state/counters", {"in-octets": "1"})),
    "queue without its key": _item(
        ("qos/interfaces/interface[interface-id=E1]/output/queues/queue/state",
         {"transmit-pkts": "1"})),
    "list entry not an object": _item(
        ("qos/interfaces/interface[interface-id=E1]/output/queues", {"queue": [3]})),
    "reply not a mapping": ["notification"],
    "notifications not a list": {"notification": {"update": []}},
    "update not a mapping": {"notification": [{"update": ["interfaces"]}]},
    "timestamp not an integer": _item(("lldp/state", {}), timestamp="1"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("reply", BAD.values(), ids=BAD)
def test_bad_payloads_raise_decode_error(reply: Any) -> None:
    with pytest.raises(DecodeError):
        port_counters("leaf01", [reply])


SWITCH = SwitchConfig("leaf01", "10.0.0.11", vendor="eos", role="leaf")
NEIGHBORS = "lldp/interfaces/interface[name={}]/neighbors"


def test_facts_from_a_discovery_get() -> None:
    reply = _get(
        (NEIGHBORS.format("Ethernet1"), {"openconfig-lldp:neighbor": [{"id": "1", "state": {
            "id": "1", "chassis-id": "B8-3F-D3-00-00-00", "chassis-id-type": "MAC_ADDRESS",
            "port-id": "b83f.d200.0000", "port-id-type": "MAC_ADDRESS",
            "system-name": "gpu01", "port-description": "ens1f0np0",
            "management-address": "192.0.2.9"},
            "mgmt-addresses": {"mgmt-address": [
                {"address": "10.0.0.5", "state": {"address": "10.0.0.5"}},
                {"address": "fd00::5", "state": {"address": "fd00::5"}}]}}]}),
        (NEIGHBORS.format("Ethernet3"), {"openconfig-lldp:neighbor": [{"id": "7", "state": {
            "chassis-id": "0c:42:a1:02:00:00", "chassis-id-type": "MAC_ADDRESS",
            "port-id": "Ethernet1", "port-id-type": "INTERFACE_NAME", "system-name": "spine01",
            "management-address": "10.0.0.21"}}]}),
        (NEIGHBORS.format("Ethernet4"), {"openconfig-lldp:neighbor": []}),
        ("interfaces/interface[name=Ethernet1]/state", {
            "openconfig-interfaces:name": "Ethernet1", "openconfig-interfaces:ifindex": 1001,
            "openconfig-interfaces:oper-status": "UP",
            "openconfig-interfaces:description": "to-gpu01",
            "openconfig-interfaces:counters": {"in-octets": "5"}}),
        ("interfaces/interface[name=Ethernet3]/state", {
            "openconfig-interfaces:ifindex": "1003",
            "openconfig-interfaces:oper-status": "NOT_PRESENT"}),
        ("interfaces/interface[name=Ethernet1]/ethernet/state", {
            "openconfig-if-ethernet:mac-address": "0C:42:A1:01:00:00",
            "openconfig-if-ethernet:port-speed": "openconfig-if-ethernet:SPEED_400GB"}),
        ("interfaces/interface[name=Ethernet4]/ethernet/state", {
            "openconfig-if-ethernet:port-speed": "SPEED_UNKNOWN"}),
    )
    local = _get(("lldp/state", {"openconfig-lldp:chassis-id": "0c42.a101.0000",
                                 "openconfig-lldp:chassis-id-type": "MAC_ADDRESS"}))
    facts = facts_from_replies(SWITCH, [reply, local])
    assert facts.switches == (
        SwitchFact("leaf01", "0c:42:a1:01:00:00", "10.0.0.11", "10.0.0.11", "eos", "leaf"),)
    assert facts.interfaces == (
        InterfaceFact("leaf01", "Ethernet1", 1001, 400_000_000_000, "up", "0c:42:a1:01:00:00",
                      "to-gpu01"),
        InterfaceFact("leaf01", "Ethernet3", 1003, None, "not-present"),
        InterfaceFact("leaf01", "Ethernet4"),
    )
    assert facts.neighbors == (
        LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "b8:3f:d3:00:00:00",
                         IdSubtype.MAC, "b8:3f:d2:00:00:00", IdSubtype.MAC, "gpu01",
                         "ens1f0np0", "10.0.0.5", "gnmi"),
        LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet3", "0c:42:a1:02:00:00",
                         IdSubtype.MAC, "Ethernet1", IdSubtype.IFNAME, "spine01", "",
                         "10.0.0.21", "gnmi"),
    )


def test_switch_fact_without_lldp_state_and_with_an_sflow_agent() -> None:
    switch = SwitchConfig("spine01", "10.0.0.21", vendor="cumulus", sflow_agent="10.1.0.21")
    assert facts_from_replies(switch, []).switches == (
        SwitchFact("spine01", "", "10.0.0.21", "10.1.0.21", "cumulus", ""),)


@pytest.mark.parametrize("reply", [
    _get(("interfaces/interface[name=E1]/ethernet/state", {"mac-address": "zz"})),
    _get(("interfaces/interface[name=E1]/state", {"ifindex": "one"})),
    _get((NEIGHBORS.format("E1"), {"neighbor": [{"id": "1", "state": {"system-name": 5}}]})),
    _get(("lldp/interfaces/interface[name=E1]/neighbors/neighbor/state", {"port-id": "x"})),
    _get(("interfaces/interface[name=E1]/state", "<rpc-error/>")),
], ids=["mac", "ifindex", "system-name", "neighbor-without-id", "not-json"])
def test_bad_discovery_replies_raise_decode_error(reply: dict[str, Any]) -> None:
    with pytest.raises(DecodeError):
        facts_from_replies(SWITCH, [reply])


@pytest.mark.parametrize(("value", "expected"), [
    ("MAC_ADDRESS", IdSubtype.MAC), ("INTERFACE_NAME", IdSubtype.IFNAME),
    ("INTERFACE_ALIAS", IdSubtype.IFALIAS), ("LOCAL", IdSubtype.LOCAL),
    ("NETWORK_ADDRESS", IdSubtype.IP), ("CHASSIS_COMPONENT", IdSubtype.OTHER),
    ("PORT_COMPONENT", IdSubtype.OTHER), ("AGENT_CIRCUIT_ID", IdSubtype.OTHER),
    ("openconfig-lldp-types:MAC_ADDRESS", IdSubtype.MAC), ("", IdSubtype.OTHER),
])
def test_id_subtypes(value: str, expected: IdSubtype) -> None:
    assert id_subtype(value) is expected


@pytest.mark.parametrize(("value", "expected"), [
    ("UP", "up"), ("DOWN", "down"), ("TESTING", "testing"), ("UNKNOWN", "unknown"),
    ("DORMANT", "dormant"), ("NOT_PRESENT", "not-present"),
    ("LOWER_LAYER_DOWN", "lower-layer-down"), ("openconfig-interfaces:UP", "up"),
])
def test_oper_status(value: str, expected: str) -> None:
    assert oper_status(value) == expected


@pytest.mark.parametrize(("identity", "bps"), [
    ("SPEED_10MB", 10**7), ("SPEED_100MB", 10**8), ("SPEED_1GB", 10**9),
    ("SPEED_2500MB", 25 * 10**8), ("SPEED_5GB", 5 * 10**9), ("SPEED_10GB", 10**10),
    ("SPEED_25GB", 25 * 10**9), ("SPEED_40GB", 4 * 10**10), ("SPEED_50GB", 5 * 10**10),
    ("SPEED_100GB", 10**11), ("SPEED_200GB", 2 * 10**11), ("SPEED_400GB", 4 * 10**11),
    ("SPEED_600GB", 6 * 10**11), ("SPEED_800GB", 8 * 10**11), ("SPEED_1600GB", 16 * 10**11),
    ("openconfig-if-ethernet:SPEED_400GB", 4 * 10**11), ("oc-eth:SPEED_100GB", 10**11),
    ("SPEED_UNKNOWN", None), ("fast", None),
])
def test_port_speed(identity: str, bps: int | None) -> None:
    assert speed_bps(identity) == bps


# -- CounterDecoder: the same readings from pygnmi's protobuf notifications ---------------

def _val(value: Any) -> pb.TypedValue:
    """A TypedValue: given as is, or ``value`` in JSON_IETF."""
    if isinstance(value, pb.TypedValue):
        return value
    return pb.TypedValue(json_ietf_val=json.dumps(value).encode())


def _note(*updates: tuple[str, Any], timestamp: int = T1, prefix: str = "",
          target: str = "", deletes: tuple[str, ...] = ()) -> pb.Notification:
    """A Notification as a target sends it: paths as pygnmi writes them."""
    return pb.Notification(
        timestamp=timestamp, prefix=gnmi_path_generator(prefix, target or None),
        update=[pb.Update(path=gnmi_path_generator(p), val=_val(v)) for p, v in updates],
        delete=[gnmi_path_generator(p) for p in deletes])


IF1 = "interfaces/interface[name=Ethernet1]"
DECODER_CASES = {
    "JSON_IETF container: module prefixes, counter64 strings, in-pkts wins over parts": (
        [_note((f"{IF1}/state", {
            "openconfig-interfaces:name": "Ethernet1", "openconfig-interfaces:ifindex": 1,
            "openconfig-interfaces:oper-status": "UP",
            "openconfig-interfaces:counters": {
                "in-octets": "18446744073709551615", "out-octets": "2", "in-pkts": "3",
                "in-unicast-pkts": "99", "out-unicast-pkts": "4", "out-multicast-pkts": "5",
                "out-broadcast-pkts": "6", "in-discards": "7", "out-discards": "8",
                "in-errors": "9", "out-errors": "10", "in-fcs-errors": "11"}}))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {
            "in_octets": 2**64 - 1, "out_octets": 2, "in_pkts": 3, "in_discards": 7,
            "out_discards": 8, "in_errors": 9, "out_errors": 10, "out_pkts": 15},
            oper_status="up")]),
    "counters subscribed on their own: every member module-qualified": (
        [_note((f"{IF1}/state/counters", {"openconfig-interfaces:in-octets": "4",
                                          "openconfig-interfaces:in-unicast-pkts": "2",
                                          "openconfig-interfaces:in-multicast-pkts": "1"}))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"in_octets": 4, "in_pkts": 3})]),
    "leaf updates under a prefix; key values with '/'": (
        [_note(("counters/in-octets", "7"),
               ("oper-status", "openconfig-interfaces:LOWER_LAYER_DOWN"),
               prefix="interfaces/interface[name=Ethernet1/1]/state")],
        [PortCounters("leaf01", "Ethernet1/1", T1 / 1e9, {"in_octets": 7},
                      oper_status="lower-layer-down")]),
    "typed scalar leaves (PROTO-style): uint_val, string_val": (
        [_note((f"{IF1}/state/counters/in-octets", pb.TypedValue(uint_val=2**64 - 1)),
               (f"{IF1}/state/counters/out-unicast-pkts", pb.TypedValue(uint_val=5)),
               (f"{IF1}/state/counters/out-multicast-pkts", pb.TypedValue(uint_val=0)),
               (f"{IF1}/state/oper-status", pb.TypedValue(string_val="DOWN")),
               (f"{IF1}/ethernet/state/port-speed", pb.TypedValue(string_val="SPEED_100GB")),
               (f"{IF1}/state/counters/last-clear",
                pb.TypedValue(uint_val=1_767_225_000 * 10**9)))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"in_octets": 2**64 - 1, "out_pkts": 5},
                      oper_status="down", speed_bps=100_000_000_000,
                      last_clear=1_767_225_000.0)]),
    "latest timestamp per port; no timestamp: received_at; deletes ignored": (
        [_note((f"{IF1}/state/counters", {"in-octets": "1"}),
               ("interfaces/interface[name=Ethernet2]/state/counters", {"in-octets": "2"})),
         _note(("interfaces/interface[name=Ethernet2]/state/counters", {"out-octets": "3"}),
               timestamp=T2, deletes=("interfaces/interface[name=Ethernet3]",)),
         _note(("interfaces/interface[name=Ethernet3]/state/counters", {"out-octets": "4"}),
               timestamp=0)],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"in_octets": 1}),
         PortCounters("leaf01", "Ethernet2", T2 / 1e9, {"in_octets": 2, "out_octets": 3}),
         PortCounters("leaf01", "Ethernet3", 99.5, {"out_octets": 4})]),
    "EOS PFC priorities and OpenConfig queues": (
        [_note((f"{IF1}/ethernet/pfc/priorities", {
            "priority": [{"index": 3, "state": {"index": 3, "in-frames": "10",
                                                "out-frames": "11"}},
                         {"index": 4, "state": {"index": 4, "in-frames": "0",
                                                "out-frames": "1"}}]}),
               ("qos/interfaces/interface[interface-id=Ethernet1]/output/queues", {
                   "openconfig-qos:queue": [{"name": "UC3", "state": {
                       "name": "UC3", "transmit-pkts": "9", "dropped-pkts": "1",
                       "ecn-marked-pkts": "4", "max-queue-len": "1000"}}]}))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {
            "pfc_rx_pause/3": 10, "pfc_tx_pause/3": 11, "pfc_rx_pause/4": 0,
            "pfc_tx_pause/4": 1, "queue_tx_pkts/UC3": 9, "queue_dropped/UC3": 1,
            "queue_ecn_marked/UC3": 4})]),
    "a queue leaf by its entry path": (
        [_note(("qos/interfaces/interface[interface-id=Ethernet1]/output/queues/"
                "queue[name=3]/state/transmit-pkts", pb.TypedValue(uint_val=8)))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"queue_tx_pkts/3": 8})]),
    "Cumulus switch-priority pause counters, entry path and list forms": (
        [_note(("qos/interfaces/interface[interface-id=swp1]/switch-priority[priority=3]",
                {"priority": 3, "state": {"counters": {"in-pause-pkts": "5",
                                                       "out-pause-pkts": "6"}}}),
               ("qos/interfaces/interface[interface-id=swp2]", {"switch-priority": [
                   {"priority": 5, "state": {"counters": {"in-pause-pkts": "7"}}}]}))],
        [PortCounters("leaf01", "swp1", T1 / 1e9, {"pfc_rx_pause/3": 5, "pfc_tx_pause/3": 6}),
         PortCounters("leaf01", "swp2", T1 / 1e9, {"pfc_rx_pause/5": 7})]),
    "SONiC COUNTERS_DB (prefix target): SAI names, ucast + non-ucast, 'Ethernet68:3'": (
        [_note(("COUNTERS/Ethernet68", {
            "SAI_PORT_STAT_IF_IN_OCTETS": "1", "SAI_PORT_STAT_IF_IN_UCAST_PKTS": "5",
            "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS": "2", "SAI_PORT_STAT_PFC_3_RX_PKTS": "8",
            "SAI_PORT_STAT_PFC_3_TX_PKTS": "0",
            "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "9"}),
            ("COUNTERS/Ethernet68/Queues", {"Ethernet68:3": {
                "SAI_QUEUE_STAT_PACKETS": "4", "SAI_QUEUE_STAT_DROPPED_PACKETS": "0",
                "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "2"}}),
            ("COUNTERS/Ethernet72/SAI_PORT_STAT_IF_OUT_OCTETS", "6"),
            target="COUNTERS_DB")],
        [PortCounters("leaf01", "Ethernet68", T1 / 1e9, {
            "in_octets": 1, "pfc_rx_pause/3": 8, "pfc_tx_pause/3": 0, "queue_tx_pkts/3": 4,
            "queue_dropped/3": 0, "queue_ecn_marked/3": 2, "in_pkts": 7}),
         PortCounters("leaf01", "Ethernet72", T1 / 1e9, {"out_octets": 6})]),
    "whole tree in JSON (not IETF): numbers, speed identity, last-clear": (
        [_note(("", pb.TypedValue(json_val=json.dumps({"interfaces": {"interface": [{
            "name": "Ethernet1", "state": {"counters": {
                "in-octets": 12, "last-clear": 1_767_225_000 * 10**9}},
            "ethernet": {"state": {
                "port-speed": "openconfig-if-ethernet:SPEED_800GB"}}}]}}).encode())))],
        [PortCounters("leaf01", "Ethernet1", T1 / 1e9, {"in_octets": 12},
                      speed_bps=800_000_000_000, last_clear=1_767_225_000.0)]),
    "no counters; updates without a value": (
        [_note(("lldp/state", {"chassis-id": "x"}), (f"{IF1}/state", pb.TypedValue()),
               (f"{IF1}/state/counters/in-octets", pb.TypedValue(json_ietf_val=b"null")))],
        []),
}


@pytest.mark.parametrize(("notifications", "expected"), DECODER_CASES.values(),
                         ids=DECODER_CASES)
def test_counter_decoder(notifications: list[pb.Notification],
                         expected: list[PortCounters]) -> None:
    decoder = CounterDecoder("leaf01")
    assert decoder.decode(notifications, received_at=99.5) == expected
    assert decoder.decode(notifications, received_at=99.5) == expected  # paths remembered
    assert decoder.dropped == 0


def _as_notifications(reply: dict[str, Any]) -> list[pb.Notification]:
    """pygnmi's dict of a reply back to the Notifications it came from."""
    notifications = reply.get("notification") or [reply["update"]]
    return [_note(*((u["path"] or "", u["val"]) for u in n["update"]),
                  timestamp=n["timestamp"], prefix=n.get("prefix") or "")
            for n in notifications]


@pytest.mark.parametrize(("replies", "expected"), [
    case for name, case in COUNTER_CASES.items() if not name.startswith("merged")],
    ids=[name for name in COUNTER_CASES if not name.startswith("merged")])
def test_counter_decoder_reads_what_port_counters_reads(
        replies: list[dict[str, Any]], expected: list[PortCounters]) -> None:
    notifications = [n for reply in replies if "sync_response" not in reply
                     or "update" in reply for n in _as_notifications(reply)]
    assert CounterDecoder("leaf01").decode(notifications, received_at=99.5) == expected


def test_counter_decoder_reads_new_values_at_remembered_paths() -> None:
    decoder = CounterDecoder("leaf01")
    for value in ("1", "2", "3"):
        sample = [_note((f"{IF1}/state/counters", {"in-octets": value}),
                        (f"{IF1}/state/counters/out-octets", pb.TypedValue(uint_val=7))),
                  _note(("counters", {"in-octets": "5"}),  # same path, other prefixes
                        prefix="interfaces/interface[name=Ethernet2]/state"),
                  _note(("counters", {"in-octets": value}),
                        prefix="interfaces/interface[name=Ethernet3]/state")]
        assert [(r.port, r.values) for r in decoder.decode(sample)] == [
            ("Ethernet1", {"in_octets": int(value), "out_octets": 7}),
            ("Ethernet2", {"in_octets": 5}), ("Ethernet3", {"in_octets": int(value)})]


def test_counter_decoder_drops_updates_whose_json_does_not_parse() -> None:
    decoder = CounterDecoder("leaf01")
    garbage = pb.TypedValue(json_ietf_val=b'{"openconfig-interfaces:state": {"name": ')
    sample = [_note((f"{IF1}/state", garbage),
                    ("interfaces/interface[name=Ethernet2]/state/counters", {"in-octets": "2"}),
                    (f"{IF1}/state/counters", pb.TypedValue(json_ietf_val=b"\xff")))]
    assert decoder.decode(sample) == [PortCounters("leaf01", "Ethernet2", T1 / 1e9,
                                                   {"in_octets": 2})]
    assert decoder.dropped == 2
    assert decoder.decode([_note((f"{IF1}/state", garbage))]) == []
    assert decoder.dropped == 3


BAD_NOTIFICATIONS = {
    "counter not a number": _note((f"{IF1}/state/counters", {"in-octets": "abc"})),
    "negative counter string": _note((f"{IF1}/state/counters", {"in-octets": "-1"})),
    "negative int_val": _note((f"{IF1}/state/counters/in-pkts", pb.TypedValue(int_val=-1))),
    "bool_val counter": _note((f"{IF1}/state/counters/in-pkts", pb.TypedValue(bool_val=True))),
    "double_val counter": _note((f"{IF1}/state/counters/in-pkts",
                                 pb.TypedValue(double_val=1.5))),
    "counter as an object": _note((f"{IF1}/state/counters", {"in-octets": {"value": "1"}})),
    "oper-status not a string": _note((f"{IF1}/state/oper-status",
                                       pb.TypedValue(uint_val=1))),
    "a scalar where a container is expected": _note((f"{IF1}/state/counters", "0")),
    "a scalar member where a container is expected": _note(
        (f"{IF1}/state", {"openconfig-interfaces:counters": "0"})),
    "counters without an interface key": _note(
        ("interfaces/interface/state/counters", {"in-octets": "1"})),
    "queue without its key": _note(
        ("qos/interfaces/interface[interface-id=E1]/output/queues/queue/state",
         {"transmit-pkts": "1"})),
    "list entry not an object": _note(
        ("qos/interfaces/interface[interface-id=E1]/output/queues", {"queue": [3]})),
}


@pytest.mark.parametrize("notification", BAD_NOTIFICATIONS.values(), ids=BAD_NOTIFICATIONS)
def test_counter_decoder_bad_values_raise_decode_error(notification: pb.Notification) -> None:
    with pytest.raises(DecodeError):
        CounterDecoder("leaf01").decode([notification])
