"""What an emulated switch's SNMP agent serves, rendered from facts and one counter reading.

SNMPv2-MIB system, IF-MIB ifTable and ifXTable, LLDP-MIB local system, local port and
remote tables, and the profile's PFC (and ECN) table. OIDs and syntaxes are written here
from the MIBs (REFERENCE §4), not taken from fabcorr's ``inventory.snmp``, so fabcorr's
poller checked against this agent checks both sides. Pure.

LLDP local port numbers are interface positions (1, 2, ...), not ifIndex values, and the
remote table uses a non-zero TimeMark, as lldpd does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from ipaddress import ip_address

from pysnmp.proto.rfc1902 import (
    Counter32,
    Counter64,
    Gauge32,
    Integer32,
    OctetString,
    TimeTicks,
)

from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, SwitchFact, normalize_mac

Oid = tuple[int, ...]
Objects = dict[Oid, dict[Oid, object]]
"""Object (scalar or table column) OID -> instance index -> pysnmp value."""
Put = Callable[[Oid, Oid, object], None]

SYSTEM = (1, 3, 6, 1, 2, 1, 1)
IF_NUMBER = (1, 3, 6, 1, 2, 1, 2, 1)
IF_ENTRY = (1, 3, 6, 1, 2, 1, 2, 2, 1)
IF_X_ENTRY = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1)
LLDP_LOCAL = (1, 0, 8802, 1, 1, 2, 1, 3)
LLDP_LOC_PORT = LLDP_LOCAL + (7, 1)
LLDP_REM = (1, 0, 8802, 1, 1, 2, 1, 4, 1, 1)
LLDP_TIME_MARK = 100  # TimeTicks when the neighbours were learnt

# Per-priority PFC pause frames: profile -> (received table, sent table, per priority).
PFC: dict[str, tuple[Oid, Oid, bool]] = {
    # IEEE8021-PFC-MIB augments ifEntry: Indications (received), Requests (sent), Counter32
    "openconfig": ((1, 3, 111, 2, 802, 1, 1, 21, 1, 1, 1, 3),
                   (1, 3, 111, 2, 802, 1, 1, 21, 1, 1, 1, 2), False),
    "eos": ((1, 3, 6, 1, 4, 1, 30065, 3, 11, 1, 1, 1, 4),  # ARISTA-PFC-MIB indications
            (1, 3, 6, 1, 4, 1, 30065, 3, 11, 1, 1, 1, 3), True),  # ... requests
    "cumulus": ((1, 3, 6, 1, 4, 1, 33049, 15, 1, 2, 1, 3),  # MELLANOX-QOS Rx pause
                (1, 3, 6, 1, 4, 1, 33049, 15, 1, 2, 1, 5), True),  # ... Tx pause
    "sonic": ((1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 2, 1, 2),  # CISCO-PFC-EXT indications
              (1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 2, 1, 3), True),  # ... requests
}
ECN = {"eos": (1, 3, 6, 1, 4, 1, 30065, 3, 13, 1, 9, 1, 4)}  # ARISTA-QOS, .ifIndex.queue

_OPER = {"up": 1, "down": 2, "testing": 3, "unknown": 4, "dormant": 5, "not-present": 6,
         "lower-layer-down": 7}
# LLDP-MIB subtypes: IdSubtype -> (LldpChassisIdSubtype, LldpPortIdSubtype)
_SUBTYPES = {IdSubtype.IFALIAS: (2, 1), IdSubtype.MAC: (4, 3), IdSubtype.IP: (5, 4),
             IdSubtype.IFNAME: (6, 5), IdSubtype.LOCAL: (7, 7), IdSubtype.OTHER: (1, 2)}
# IF-MIB counter columns: (table, column) -> (counter name, 32-bit)
_IF_COUNTERS = {
    (IF_ENTRY, 10): ("in_octets", True), (IF_ENTRY, 11): ("in_pkts", True),
    (IF_ENTRY, 13): ("in_discards", True), (IF_ENTRY, 14): ("in_errors", True),
    (IF_ENTRY, 16): ("out_octets", True), (IF_ENTRY, 17): ("out_pkts", True),
    (IF_ENTRY, 19): ("out_discards", True), (IF_ENTRY, 20): ("out_errors", True),
    (IF_X_ENTRY, 6): ("in_octets", False), (IF_X_ENTRY, 7): ("in_pkts", False),
    (IF_X_ENTRY, 10): ("out_octets", False), (IF_X_ENTRY, 11): ("out_pkts", False),
}
_ZERO_HC = (8, 9, 12, 13)  # ifHC{In,Out}{Multicast,Broadcast}Pkts: all traffic is unicast


@dataclass(frozen=True)
class Port:
    """An interface as the agent numbers it."""

    fact: InterfaceFact
    ifindex: int
    lldp_port: int


def ports(interfaces: Iterable[InterfaceFact]) -> list[Port]:
    """Interfaces in ifIndex order (those without one numbered after the highest), with
    LLDP local port numbers 1, 2, ... (after the highest ifIndex if those overlap).

    >>> [(p.fact.name, p.ifindex, p.lldp_port) for p in ports([InterfaceFact("s", "e2", 1002),
    ...     InterfaceFact("s", "e1", 1001), InterfaceFact("s", "lo")])]
    [('e1', 1001, 1), ('e2', 1002, 2), ('lo', 1003, 3)]
    >>> [p.lldp_port for p in ports([InterfaceFact("s", "swp1", 1), InterfaceFact("s", "swp2", 2)])]
    [3, 4]
    """
    listed = sorted(interfaces, key=lambda i: (i.ifindex is None, i.ifindex or 0, i.name))
    spare = max((i.ifindex or 0 for i in listed), default=0)
    indexes = []
    for fact in listed:
        if fact.ifindex is None:
            spare += 1
        indexes.append(spare if fact.ifindex is None else fact.ifindex)
    offset = 0 if set(indexes).isdisjoint(range(1, len(indexes) + 1)) else max(indexes)
    return [Port(fact, index, offset + n)
            for n, (fact, index) in enumerate(zip(listed, indexes, strict=True), 1)]


def objects(switch: SwitchFact, table: list[Port], neighbors: Iterable[LldpNeighborFact],
            profile: str, counters: Mapping[str, Mapping[str, int]], uptime_ticks: int
            ) -> Objects:
    """Every object the agent serves; ``counters`` is port name -> counter name -> value."""
    found: Objects = {}

    def put(column: Oid, index: Oid, value: object) -> None:
        found.setdefault(column, {})[index] = value

    put(SYSTEM + (1,), (0,), OctetString(f"emulated {profile} switch {switch.name}"))
    put(SYSTEM + (3,), (0,), TimeTicks(uptime_ticks % 2**32))
    put(SYSTEM + (5,), (0,), OctetString(switch.name))
    put(IF_NUMBER, (0,), Integer32(len(table)))
    chassis = normalize_mac(switch.chassis_id)
    put(LLDP_LOCAL + (1,), (0,), Integer32(4 if chassis else 7))
    put(LLDP_LOCAL + (2,), (0,), OctetString(_id_octets(IdSubtype.MAC, chassis) if chassis
                                             else switch.chassis_id))
    put(LLDP_LOCAL + (3,), (0,), OctetString(switch.name))
    for port in table:
        _interface(put, port, counters[port.fact.name], profile)
    by_name = {port.fact.name: port for port in table}
    for remote, n in enumerate(neighbors, 1):
        port = by_name.get(n.local_port)
        if port is not None:
            _neighbor(put, (LLDP_TIME_MARK, port.lldp_port, remote), n)
    return found


def _interface(put: Put, port: Port, c: Mapping[str, int], profile: str) -> None:
    i, fact = (port.ifindex,), port.fact
    speed = fact.speed_bps or 0
    put(IF_ENTRY + (1,), i, Integer32(port.ifindex))
    put(IF_ENTRY + (2,), i, OctetString(fact.name))
    put(IF_ENTRY + (3,), i, Integer32(6))  # ethernetCsmacd
    put(IF_ENTRY + (5,), i, Gauge32(min(speed, 2**32 - 1)))
    put(IF_ENTRY + (6,), i, OctetString(_id_octets(IdSubtype.MAC, normalize_mac(fact.mac))))
    put(IF_ENTRY + (7,), i, Integer32(1))
    put(IF_ENTRY + (8,), i, Integer32(_OPER.get(fact.oper_status, 4)))
    for (table, column), (name, narrow) in _IF_COUNTERS.items():
        if name in c:
            put(table + (column,), i, Counter32(c[name] % 2**32) if narrow
                else Counter64(c[name] % 2**64))
    put(IF_X_ENTRY + (1,), i, OctetString(fact.name))
    for column in _ZERO_HC:
        put(IF_X_ENTRY + (column,), i, Counter64(0))
    put(IF_X_ENTRY + (15,), i, Gauge32(speed // 1_000_000))
    put(IF_X_ENTRY + (18,), i, OctetString(fact.alias))
    put(LLDP_LOC_PORT + (2,), (port.lldp_port,), Integer32(5))  # interfaceName
    put(LLDP_LOC_PORT + (3,), (port.lldp_port,), OctetString(fact.name))
    put(LLDP_LOC_PORT + (4,), (port.lldp_port,), OctetString(fact.alias or fact.name))
    received, sent, per_priority = PFC[profile]
    for table, name in ((received, "pfc_rx_pause"), (sent, "pfc_tx_pause")):
        counts = {int(k): v for k, v in _suffixed(c, name).items() if k.isdigit()}
        if per_priority:
            for priority, value in counts.items():
                put(table, (port.ifindex, priority), Counter64(value % 2**64))
        elif counts:
            put(table, i, Counter32(sum(counts.values()) % 2**32))
    if profile in ECN:
        for queue, value in _suffixed(c, "queue_ecn_marked").items():
            if queue.isdigit():
                put(ECN[profile], (port.ifindex, int(queue)), Counter64(value % 2**64))


def _neighbor(put: Put, index: Oid, n: LldpNeighborFact) -> None:
    chassis_type, port_type = _SUBTYPES[n.chassis_id_subtype][0], _SUBTYPES[n.port_id_subtype][1]
    put(LLDP_REM + (4,), index, Integer32(chassis_type))
    put(LLDP_REM + (5,), index, OctetString(_id_octets(n.chassis_id_subtype, n.chassis_id)))
    put(LLDP_REM + (6,), index, Integer32(port_type))
    put(LLDP_REM + (7,), index, OctetString(_id_octets(n.port_id_subtype, n.port_id)))
    put(LLDP_REM + (8,), index, OctetString(n.port_description))
    put(LLDP_REM + (9,), index, OctetString(n.system_name))


def _id_octets(subtype: IdSubtype, text: str) -> bytes:
    """An LLDP id as sent: a MAC as 6 bytes, an address with its IANA family first."""
    if subtype == IdSubtype.MAC and normalize_mac(text):
        return bytes.fromhex(normalize_mac(text).replace(":", ""))
    if subtype == IdSubtype.IP:
        address = ip_address(text)
        return bytes([1 if address.version == 4 else 2]) + address.packed
    return text.encode()


def _suffixed(counters: Mapping[str, int], name: str) -> dict[str, int]:
    return {k.partition("/")[2]: v for k, v in counters.items() if k.startswith(name + "/")}
