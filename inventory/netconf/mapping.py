"""OpenConfig LLDP and interfaces state, as a NETCONF ``<get>`` returns it, -> facts.

Pure: takes the reply's ``<data>`` element (lxml), returns facts. Enumerations and
identityrefs are read with any ``module:`` prefix stripped (REFERENCE §3). Content that
cannot be read as the model raises :class:`~inventory.errors.DecodeError` naming the
switch and the path; nothing else escapes.
"""

from __future__ import annotations

import re

from lxml import etree

from inventory.errors import DecodeError
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter, normalize_mac

Element = etree._Element

LLDP_NS = "http://openconfig.net/yang/lldp"
IF_NS = "http://openconfig.net/yang/interfaces"
ETH_NS = "http://openconfig.net/yang/interfaces/ethernet"
_NS = {"l": LLDP_NS, "i": IF_NS, "e": ETH_NS}

FILTERS = (
    f'<lldp xmlns="{LLDP_NS}"><state><chassis-id/><chassis-id-type/></state>'
    "<interfaces><interface><name/><neighbors/></interface></interfaces></lldp>",
    f'<interfaces xmlns="{IF_NS}"><interface><name/>'
    "<state><name/><description/><ifindex/><oper-status/></state>"
    f'<ethernet xmlns="{ETH_NS}"><state><mac-address/><port-speed/></state></ethernet>'
    "</interface></interfaces>",
)
"""Subtree filters selecting just the leaves read here (no counters)."""

SUBTYPES = {"MAC_ADDRESS": IdSubtype.MAC, "INTERFACE_NAME": IdSubtype.IFNAME,
            "INTERFACE_ALIAS": IdSubtype.IFALIAS, "LOCAL": IdSubtype.LOCAL,
            "NETWORK_ADDRESS": IdSubtype.IP}
"""openconfig-lldp-types chassis and port id types -> lldpd's subtypes (others: ``other``)."""

OPER_STATUS = frozenset({"up", "down", "testing", "unknown", "dormant", "not_present",
                         "lower_layer_down"})
_SPEED = re.compile(r"SPEED_([0-9]+)(MB|GB)")


def strip_prefix(value: str) -> str:
    """An enumeration or identityref name without its ``module:`` prefix.

    >>> strip_prefix("oc-eth:SPEED_400GB"), strip_prefix(" openconfig-if-ethernet:SPEED_1GB")
    ('SPEED_400GB', 'SPEED_1GB')
    """
    return value.strip().rpartition(":")[2]


def speed_bps(identity: str) -> int | None:
    """Bits per second of an ETHERNET_SPEED identity; None for ``SPEED_UNKNOWN``.

    >>> speed_bps("oc-eth:SPEED_400GB"), speed_bps("SPEED_2500MB"), speed_bps("SPEED_UNKNOWN")
    (400000000000, 2500000000, None)
    """
    name = strip_prefix(identity)
    if name == "SPEED_UNKNOWN":
        return None
    match = _SPEED.fullmatch(name)
    if match is None:
        raise ValueError(f"{identity!r} is not an ETHERNET_SPEED identity")
    return int(match[1]) * (10**9 if match[2] == "GB" else 10**6)


def chassis_id(switch: str, data: Element) -> str:
    """The switch's own LLDP chassis id (``lldp/state/chassis-id``), or ``""``."""
    state = _leaves(_data(switch, data), "l:lldp/l:state")
    if not state.get("chassis-id"):
        return ""
    return _id(f"{switch}: lldp/state", "chassis-id", state)[0]


def interfaces(switch: str, data: Element) -> list[InterfaceFact]:
    """Each ``interfaces/interface``: name, ifindex, speed, oper-status, MAC, description."""
    found = []
    entries = _data(switch, data).iterfind("i:interfaces/i:interface", _NS)
    for number, entry in enumerate(entries, start=1):
        name = _text(entry, "i:name") or _text(entry, "i:state/i:name")
        if not name:
            raise DecodeError(f"{switch}: interfaces/interface[{number}]: no name")
        found.append(_interface(switch, name, entry))
    return found


def neighbors(switch: str, data: Element) -> list[LldpNeighborFact]:
    """Each neighbour of ``lldp/interfaces/interface/neighbors``, as ``switch`` reports it."""
    found = []
    ports = _data(switch, data).iterfind("l:lldp/l:interfaces/l:interface", _NS)
    for number, entry in enumerate(ports, start=1):
        port = _text(entry, "l:name") or _text(entry, "l:state/l:name")
        if not port:
            raise DecodeError(f"{switch}: lldp/interfaces/interface[{number}]: no name")
        for index, neighbor in enumerate(entry.iterfind("l:neighbors/l:neighbor", _NS), start=1):
            path = (f"{switch}: lldp/interfaces/interface[name={port}]/neighbors/"
                    f"neighbor[id={_text(neighbor, 'l:id') or index}]/state")
            state = _leaves(neighbor, "l:state")
            chassis, chassis_type = _id(path, "chassis-id", state)
            port_id, port_type = _id(path, "port-id", state)
            found.append(LldpNeighborFact(
                Reporter.SWITCH, switch, port, chassis, chassis_type, port_id, port_type,
                system_name=state.get("system-name", ""),
                port_description=state.get("port-description", ""),
                # management-address is deprecated for mgmt-addresses (REFERENCE §3)
                mgmt_address=state.get("management-address") or _text(
                    neighbor, "l:mgmt-addresses/l:mgmt-address/l:state/l:address"),
                source="netconf",
            ))
    return found


def _interface(switch: str, name: str, entry: Element) -> InterfaceFact:
    path = f"{switch}: interfaces/interface[name={name}]"
    state = _leaves(entry, "i:state")
    ethernet = _leaves(entry, "e:ethernet/e:state")
    ifindex = state.get("ifindex", "")
    if ifindex and not (ifindex.isascii() and ifindex.isdigit() and int(ifindex) < 2**32):
        raise DecodeError(f"{path}/state/ifindex: {ifindex!r} is not a uint32")
    status = strip_prefix(state.get("oper-status", "")).lower()
    if status and status not in OPER_STATUS:
        raise DecodeError(f"{path}/state/oper-status: {status.upper()!r} is not an oper-status")
    mac = ethernet.get("mac-address", "")
    if mac and not normalize_mac(mac):
        raise DecodeError(f"{path}/ethernet/state/mac-address: {mac!r} is not a MAC address")
    try:
        speed = speed_bps(ethernet["port-speed"]) if ethernet.get("port-speed") else None
    except ValueError as exc:
        raise DecodeError(f"{path}/ethernet/state/port-speed: {exc}") from None
    return InterfaceFact(switch, name, int(ifindex) if ifindex else None, speed, status,
                         normalize_mac(mac), state.get("description", ""))


def _id(path: str, leaf: str, state: dict[str, str]) -> tuple[str, IdSubtype]:
    """An LLDP id leaf and its ``-type``; a MAC-typed id is normalised and must be a MAC."""
    value = state.get(leaf, "")
    if not value:
        raise DecodeError(f"{path}/{leaf}: missing")
    subtype = SUBTYPES.get(strip_prefix(state.get(f"{leaf}-type", "")), IdSubtype.OTHER)
    if subtype is IdSubtype.MAC:
        if not normalize_mac(value):
            raise DecodeError(f"{path}/{leaf}: {value!r} is not a MAC address")
        value = normalize_mac(value)
    return value, subtype


def _data(switch: str, data: object) -> Element:
    if not etree.iselement(data):
        raise DecodeError(f"{switch}: the reply has no <data> element")
    return data  # type: ignore[return-value]


def _text(parent: Element, path: str) -> str:
    return (parent.findtext(path, "", _NS) or "").strip()


def _leaves(parent: Element, path: str) -> dict[str, str]:
    """Text of the leaves of the container at ``path``, by local name."""
    container = parent.find(path, _NS)
    if container is None:
        return {}
    return {etree.QName(leaf).localname: (leaf.text or "").strip()
            for leaf in container if isinstance(leaf.tag, str) and len(leaf) == 0}
