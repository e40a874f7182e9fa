"""SNMP walks (LLDP-MIB, IF-MIB, PFC MIBs) -> facts and counter readings. Pure.

A walk is a mapping from numeric OID tuples to values (``bytes`` for OCTET STRINGs,
``int`` for INTEGER/Counter/Gauge/TimeTicks). LLDP-MIB indexes ports by
``LocalPortNum``, which need not be the ifIndex: the local port table's port id (or
description) is matched against ifName, then ifDescr, then ifAlias, and PortNum is taken
as the ifIndex only when ifName agrees (REFERENCE §4).
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterator, Mapping

from inventory.counters import PFC_RX, PFC_TX, QUEUE_ECN, PortCounters, per
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter

Oid = tuple[int, ...]
Walk = Mapping[Oid, object]


def oid(text: str) -> Oid:
    """``"1.3.6.1"`` -> ``(1, 3, 6, 1)``."""
    return tuple(int(part) for part in text.strip(".").split("."))


LLDP = oid("1.0.8802.1.1.2.1")
LLDP_LOC_CHASSIS_SUBTYPE = LLDP + (3, 1, 0)
LLDP_LOC_CHASSIS_ID = LLDP + (3, 2, 0)
LLDP_LOC_SYSNAME = LLDP + (3, 3, 0)
LLDP_LOC_PORT = LLDP + (3, 7, 1)  # .2 PortIdSubtype .3 PortId .4 PortDesc, index PortNum
LLDP_REM = LLDP + (4, 1, 1)  # .4-.9, index TimeMark.LocalPortNum.RemIndex
IF_TABLE = oid("1.3.6.1.2.1.2.2.1")  # .2 ifDescr .6 ifPhysAddress .8 ifOperStatus ...
IF_X_TABLE = oid("1.3.6.1.2.1.31.1.1.1")  # .1 ifName .15 ifHighSpeed .18 ifAlias ...
SYS_UPTIME = oid("1.3.6.1.2.1.1.3.0")

DISCOVERY_WALKS = (oid("1.0.8802.1.1.2.1.3"), LLDP_REM, IF_TABLE, IF_X_TABLE)
"""Subtrees one discovery walks."""

# LLDP-MIB LldpChassisIdSubtype and LldpPortIdSubtype -> lldpd's names.
_CHASSIS_SUBTYPES = {2: IdSubtype.IFALIAS, 4: IdSubtype.MAC, 5: IdSubtype.IP,
                     6: IdSubtype.IFNAME, 7: IdSubtype.LOCAL}
_PORT_SUBTYPES = {1: IdSubtype.IFALIAS, 3: IdSubtype.MAC, 4: IdSubtype.IP,
                  5: IdSubtype.IFNAME, 7: IdSubtype.LOCAL}
_OPER_STATUS = {1: "up", 2: "down", 3: "testing", 4: "unknown", 5: "dormant",
                6: "not-present", 7: "lower-layer-down"}

# Interface counters: IF-MIB column -> (counter name, bits).
_COUNTER_COLUMNS = {
    (IF_X_TABLE, 6): ("in_octets", 64), (IF_X_TABLE, 10): ("out_octets", 64),
    (IF_X_TABLE, 7): ("in_ucast", 64), (IF_X_TABLE, 8): ("in_mcast", 64),
    (IF_X_TABLE, 9): ("in_bcast", 64), (IF_X_TABLE, 11): ("out_ucast", 64),
    (IF_X_TABLE, 12): ("out_mcast", 64), (IF_X_TABLE, 13): ("out_bcast", 64),
    (IF_TABLE, 13): ("in_discards", 32), (IF_TABLE, 14): ("in_errors", 32),
    (IF_TABLE, 19): ("out_discards", 32), (IF_TABLE, 20): ("out_errors", 32),
}
COUNTER_WALKS = (SYS_UPTIME[:-1], IF_TABLE + (8,), IF_TABLE + (13,), IF_TABLE + (14,),
                 IF_TABLE + (19,), IF_TABLE + (20,), *(IF_X_TABLE + (c,) for c in
                                                       (6, 7, 8, 9, 10, 11, 12, 13, 15)))
"""Subtrees one counter poll walks (vendor PFC subtrees are added per profile)."""

# Per-priority PFC pause counters: vendor profile -> [(subtree, counter)], indexed
# .<ifIndex>.<priority>. IEEE8021-PFC-MIB has only per-port totals (priority = None).
PFC_TABLES: dict[str, tuple[tuple[Oid, str, bool], ...]] = {
    "eos": ((oid("1.3.6.1.4.1.30065.3.11.1.1.1.3"), PFC_TX, True),
            (oid("1.3.6.1.4.1.30065.3.11.1.1.1.4"), PFC_RX, True)),
    "cumulus": ((oid("1.3.6.1.4.1.33049.15.1.2.1.3"), PFC_RX, True),
                (oid("1.3.6.1.4.1.33049.15.1.2.1.5"), PFC_TX, True)),
    "sonic": ((oid("1.3.6.1.4.1.9.9.813.1.2.1.2"), PFC_RX, True),
              (oid("1.3.6.1.4.1.9.9.813.1.2.1.3"), PFC_TX, True)),
    "openconfig": ((oid("1.3.111.2.802.1.1.21.1.1.1.2"), PFC_TX, False),
                   (oid("1.3.111.2.802.1.1.21.1.1.1.3"), PFC_RX, False)),
}
ECN_TABLES = {"eos": oid("1.3.6.1.4.1.30065.3.13.1.9.1.4")}  # .<ifIndex>.<queue>


def column(walk: Walk, table: Oid, number: int) -> dict[Oid, object]:
    """Index suffix -> value of one table column."""
    prefix = (*table, number)
    size = len(prefix)
    return {key[size:]: value for key, value in walk.items() if key[:size] == prefix}


def text(value: object) -> str:
    """An OCTET STRING as text (undecodable bytes as hex)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8").rstrip("\x00")
        except UnicodeDecodeError:
            return value.hex(":")
    return "" if value is None else str(value)


def mac(value: object) -> str:
    """A 6-byte OCTET STRING as a MAC address (else its text)."""
    if isinstance(value, bytes) and len(value) == 6:
        return value.hex(":")
    return text(value).lower()


def lldp_id(subtype: IdSubtype, value: object) -> str:
    """An LLDP chassis or port id as text, per its subtype."""
    if subtype == IdSubtype.MAC:
        return mac(value)
    if subtype == IdSubtype.IP and isinstance(value, bytes) and len(value) in (5, 17):
        return str(ipaddress.ip_address(value[1:]))  # IANA address family byte first
    return text(value)


def interfaces(switch: str, walk: Walk) -> list[InterfaceFact]:
    """IF-MIB interfaces (ifName, else ifDescr) with ifIndex, speed, status and MAC."""
    names, descrs = column(walk, IF_X_TABLE, 1), column(walk, IF_TABLE, 2)
    speeds, status = column(walk, IF_X_TABLE, 15), column(walk, IF_TABLE, 8)
    macs, aliases = column(walk, IF_TABLE, 6), column(walk, IF_X_TABLE, 18)
    found = []
    for index in sorted(set(names) | set(descrs)):
        name = text(names.get(index)) or text(descrs.get(index))
        speed = speeds.get(index)
        found.append(InterfaceFact(
            switch, name, index[0],
            int(speed) * 1_000_000 if isinstance(speed, int) and speed else None,
            _OPER_STATUS.get(status.get(index), ""), mac(macs.get(index, b"")),
            text(aliases.get(index))))
    return found


def port_names(walk: Walk) -> dict[int, str]:
    """LLDP LocalPortNum -> interface name, joined through the local port table."""
    if_names = {i[0]: text(v) for i, v in column(walk, IF_X_TABLE, 1).items()}
    by_text = {}  # ifAlias, then ifDescr, then ifName: the later wins a clash
    for table, number in ((IF_X_TABLE, 18), (IF_TABLE, 2), (IF_X_TABLE, 1)):
        for index, value in column(walk, table, number).items():
            if text(value):
                by_text[text(value)] = if_names.get(index[0]) or text(value)
    ids = column(walk, LLDP_LOC_PORT, 3)
    descrs = column(walk, LLDP_LOC_PORT, 4)
    names = {}
    for (port_num,) in set(ids) | set(descrs):
        candidates = (text(ids.get((port_num,))), text(descrs.get((port_num,))))
        found = next((by_text[c] for c in candidates if c in by_text), None)
        if found is None and port_num in if_names and if_names[port_num] in candidates:
            found = if_names[port_num]
        names[port_num] = found or candidates[0] or candidates[1]
    return names


def neighbors(switch: str, walk: Walk) -> list[LldpNeighborFact]:
    """Remote systems of the LLDP-MIB remote table, one per (local port, remote index)."""
    ports = port_names(walk)
    columns = {n: column(walk, LLDP_REM, n) for n in range(4, 10)}
    found = []
    for index in sorted(columns[5]):
        _, local_port, _ = index
        chassis_subtype = _CHASSIS_SUBTYPES.get(columns[4].get(index), IdSubtype.OTHER)
        port_subtype = _PORT_SUBTYPES.get(columns[6].get(index), IdSubtype.OTHER)
        found.append(LldpNeighborFact(
            Reporter.SWITCH, switch, ports.get(local_port, str(local_port)),
            lldp_id(chassis_subtype, columns[5].get(index)), chassis_subtype,
            lldp_id(port_subtype, columns[7].get(index)), port_subtype,
            system_name=text(columns[9].get(index)),
            port_description=text(columns[8].get(index)), source="snmp"))
    return found


def chassis_id(walk: Walk) -> str:
    """The switch's own LLDP chassis id."""
    subtype = _CHASSIS_SUBTYPES.get(walk.get(LLDP_LOC_CHASSIS_SUBTYPE), IdSubtype.OTHER)
    return lldp_id(subtype, walk.get(LLDP_LOC_CHASSIS_ID))


def counters(switch: str, walk: Walk, at: float, vendor: str = "openconfig"
             ) -> list[PortCounters]:
    """One PortCounters per interface of a counter walk (names from inventory.counters)."""
    names = {i[0]: text(v) for i, v in column(walk, IF_X_TABLE, 1).items()}
    values: dict[int, dict[str, int]] = defaultdict(dict)
    bits: dict[int, dict[str, int]] = defaultdict(dict)
    for (table, number), (name, width) in _COUNTER_COLUMNS.items():
        for (index, *_), value in column(walk, table, number).items():
            if isinstance(value, int):
                values[index][name] = value
                if width != 64:
                    bits[index][name] = width
    for subtree, name, per_priority in PFC_TABLES.get(vendor, ()):
        for index, value in _rows(walk, subtree):
            if isinstance(value, int):
                key = per(name, index[1]) if per_priority and len(index) > 1 else name
                values[index[0]][key] = value
    for index, value in _rows(walk, ECN_TABLES.get(vendor, ())):
        if isinstance(value, int) and len(index) > 1:
            values[index[0]][per(QUEUE_ECN, index[1])] = value
    speeds, status = column(walk, IF_X_TABLE, 15), column(walk, IF_TABLE, 8)
    uptime = walk.get(SYS_UPTIME)
    readings = []
    for index, counted in sorted(values.items()):
        _sum_packets(counted)
        speed = speeds.get((index,))
        readings.append(PortCounters(
            switch, names.get(index, str(index)), at, counted, bits.get(index, {}),
            _OPER_STATUS.get(status.get((index,)), ""),
            int(speed) * 1_000_000 if isinstance(speed, int) and speed else None,
            uptime / 100 if isinstance(uptime, int) else None))
    return readings


def _rows(walk: Walk, subtree: Oid) -> Iterator[tuple[Oid, object]]:
    size = len(subtree)
    if size:
        for key, value in walk.items():
            if key[:size] == subtree:
                yield key[size:], value


def _sum_packets(counted: dict[str, int]) -> None:
    """in_pkts/out_pkts = unicast + multicast + broadcast (IF-MIB has no total)."""
    for direction in ("in", "out"):
        parts = [counted.pop(f"{direction}_{kind}", None) for kind in ("ucast", "mcast",
                                                                       "bcast")]
        if parts[0] is not None:
            counted[f"{direction}_pkts"] = sum(p for p in parts if p is not None)
