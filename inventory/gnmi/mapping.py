"""gNMI replies, as pygnmi returns them, -> switch facts and counter readings. Pure.

A reply is a Get response ``{"notification": [...]}`` or one Subscribe item
(``{"update": {...}}``, possibly with ``"sync_response"``). Each update's value is walked
down to the containers the tables read, each known by its path without list keys
(``interfaces/interface/state/counters``) and the list keys met on the way
(``("Ethernet1",)``); the tables map (container, leaf) to fact fields or counter names.
Module prefixes are stripped from every name and JSON_IETF counter64 strings are read as
integers. SONiC ``COUNTERS_DB`` entries (``COUNTERS/Ethernet0``, ``Queues/Ethernet0:3``)
are read as list entries.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from inventory.counters import (
    PFC_RX,
    PFC_TX,
    QUEUE_DROPPED,
    QUEUE_ECN,
    QUEUE_TX,
    PortCounters,
)
from inventory.devices import SwitchConfig
from inventory.errors import DecodeError
from inventory.facts import (
    FactSet,
    IdSubtype,
    InterfaceFact,
    LldpNeighborFact,
    Reporter,
    SwitchFact,
    normalize_mac,
)

__all__ = ["Leaf", "facts_from_replies", "id_subtype", "leaves", "oper_status",
           "port_counters", "speed_bps"]


class Leaf(NamedTuple):
    """One leaf of a reply: container path without keys, list keys, name, value, ns time."""

    container: str
    keys: tuple[str, ...]
    name: str
    value: Any
    timestamp: int = 0


class _Table:
    """The counters of one container; per-priority or per-queue ones take the list key at
    ``sub`` as suffix (after its last ``:`` when ``after_colon``, as SONiC's
    ``Ethernet68:3``).

    ``names`` remembers what each leaf name met so far (module-qualified or not) stands
    for, ``""`` for none; ``parts`` holds the (unqualified) parts of totals, and
    :meth:`plain` the leaves whose value is the counter itself, with their full names.
    """

    __slots__ = ("_plain", "after_colon", "leaves", "names", "parts", "sub")
    _MAX_NAMES = 4096  # a target inventing names or keys cannot grow these without bound

    def __init__(self, leaves: dict[str, str], sub: int | None = None,
                 after_colon: bool = False) -> None:
        self.leaves, self.sub, self.after_colon = leaves, sub, after_colon
        self.names = dict(leaves)
        self.parts = {leaf: name.partition("+")[0] for leaf, name in leaves.items()
                      if "+" in name}
        self._plain = {"": {leaf: name for leaf, name in leaves.items() if _is_plain(name)}}

    def plain(self, suffix: str) -> dict[str, str]:
        """Leaf -> counter name with ``suffix``, for the leaves that are counters as is;
        the same name strings every sample."""
        found = self._plain.get(suffix)
        if found is None:
            found = {leaf: name + suffix for leaf, name in self._plain[""].items()}
            if len(self._plain) < self._MAX_NAMES:
                self._plain[suffix] = found
        return found

    def resolve(self, leaf: str) -> str:
        """The counter (``=field``, ``total+part``) name of ``leaf``, ``""`` if none."""
        name = self.leaves.get(_local(leaf), "") if ":" in leaf else ""
        if len(self.names) < self._MAX_NAMES:
            self.names[leaf] = name
            if name and _is_plain(name):  # module-qualified, as JSON_IETF's top members
                for suffix, plain in list(self._plain.items()):
                    plain[leaf] = name + suffix
        return name


def _is_plain(name: str) -> bool:
    return name[0] != "=" and "+" not in name


_IF = "interfaces/interface/state/counters"
_IF_STATE = "interfaces/interface/state"
_ETH_STATE = "interfaces/interface/ethernet/state"
_SONIC_PORT, _SONIC_QUEUE = "COUNTERS/*", "COUNTERS/*/Queues/*"

# container -> counters. A "total+part" name is summed into total when total itself is
# absent; an "=field" name is a PortCounters field.
_COUNTERS: dict[str, _Table] = {
    _IF: _Table({**{f"{way}-{what}": f"{way}_{what}" for way in ("in", "out")
                    for what in ("octets", "pkts", "discards", "errors")},
                 **{f"{way}-{cast}-pkts": f"{way}_pkts+{cast}" for way in ("in", "out")
                    for cast in ("unicast", "multicast", "broadcast")},
                 "last-clear": "=last_clear"}),
    _IF_STATE: _Table({"oper-status": "=oper_status"}),
    _ETH_STATE: _Table({"port-speed": "=speed_bps"}),
    "interfaces/interface/ethernet/pfc/priorities/priority/state":  # EOS
        _Table({"in-frames": PFC_RX, "out-frames": PFC_TX}, 1),
    "qos/interfaces/interface/switch-priority/state/counters":  # Cumulus
        _Table({"in-pause-pkts": PFC_RX, "out-pause-pkts": PFC_TX}, 1),
    "qos/interfaces/interface/output/queues/queue/state":
        _Table({"transmit-pkts": QUEUE_TX, "dropped-pkts": QUEUE_DROPPED,
                "ecn-marked-pkts": QUEUE_ECN}, 1),
    _SONIC_PORT: _Table({
        **{f"SAI_PORT_STAT_IF_{way}_{what}": f"{way.lower()}_{what.lower()}"
           for way in ("IN", "OUT") for what in ("OCTETS", "DISCARDS", "ERRORS")},
        **{f"SAI_PORT_STAT_IF_{way}_{cast}_PKTS": f"{way.lower()}_pkts+{cast}"
           for way in ("IN", "OUT") for cast in ("UCAST", "NON_UCAST")},
        **{f"SAI_PORT_STAT_PFC_{p}_{way}_PKTS": f"{name}/{p}"
           for p in range(8) for way, name in (("RX", PFC_RX), ("TX", PFC_TX))}}),
    _SONIC_QUEUE: _Table({"SAI_QUEUE_STAT_PACKETS": QUEUE_TX,
                          "SAI_QUEUE_STAT_DROPPED_PACKETS": QUEUE_DROPPED,
                          "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": QUEUE_ECN}, 1, True),
}

_INTERFACE = {(_IF_STATE, "name"): "", (_IF_STATE, "ifindex"): "ifindex",
              (_IF_STATE, "oper-status"): "oper_status", (_IF_STATE, "description"): "alias",
              (_ETH_STATE, "port-speed"): "speed_bps", (_ETH_STATE, "mac-address"): "mac"}
_NEIGHBOR_STATE = "lldp/interfaces/interface/neighbors/neighbor/state"
_NEIGHBOR = {(_NEIGHBOR_STATE, "chassis-id"): "chassis_id",
             (_NEIGHBOR_STATE, "chassis-id-type"): "chassis_id_subtype",
             (_NEIGHBOR_STATE, "port-id"): "port_id",
             (_NEIGHBOR_STATE, "port-id-type"): "port_id_subtype",
             (_NEIGHBOR_STATE, "system-name"): "system_name",
             (_NEIGHBOR_STATE, "port-description"): "port_description",
             (_NEIGHBOR_STATE, "management-address"): "mgmt_address",  # deprecated leaf
             ("lldp/interfaces/interface/neighbors/neighbor/mgmt-addresses/mgmt-address/state",
              "address"): "mgmt_addresses"}
_LOCAL = {("lldp/state", "chassis-id"): "chassis_id",
          ("lldp/state", "chassis-id-type"): "chassis_id_subtype"}

# Every container on the way to one the tables read: the walk skips all other subtrees,
# and a scalar where one of these is expected means the target's JSON did not parse.
_CONTAINERS = {"/".join(c.split("/")[:i])
               for c in (*_COUNTERS, *(c for table in (_INTERFACE, _NEIGHBOR, _LOCAL)
                                       for c, _ in table))
               for i in range(1, c.count("/") + 2)}
_CONTAINER_NAMES = frozenset(name for c in _CONTAINERS for name in c.split("/"))
_ANONYMOUS = frozenset({"COUNTERS", "Queues"})  # SONiC: children are entries named by key
_LIST_KEYS = ("name", "interface-id", "id", "index", "priority", "address")
_ELEM = re.compile(r"([^/\[\]]+)((?:\[[^=\]]*=[^\]]*\])*)")
_KEY = re.compile(r"\[[^=\]]*=([^\]]*)\]")
_SUBTYPES = {"MAC_ADDRESS": IdSubtype.MAC, "INTERFACE_NAME": IdSubtype.IFNAME,
             "INTERFACE_ALIAS": IdSubtype.IFALIAS, "LOCAL": IdSubtype.LOCAL,
             "NETWORK_ADDRESS": IdSubtype.IP}
_SPEED = re.compile(r"SPEED_(\d+)(GB|MB)")

_Node = tuple[str, tuple[str, ...], dict[str, Any], int]  # container, keys, object, time


def leaves(reply: Mapping[str, Any]) -> list[Leaf]:
    """The leaves of one pygnmi reply under the containers fabcorr reads.

    DecodeError when the reply is not shaped like one.

    >>> leaves({"update": {"timestamp": 7, "update": [{
    ...     "path": "interfaces/interface[name=Ethernet1/1]/state",
    ...     "val": {"openconfig-interfaces:counters": {"in-octets": "42"}}}]}})
    [Leaf(container='interfaces/interface/state/counters', keys=('Ethernet1/1',),
          name='in-octets', value='42', timestamp=7)]
    """
    return [Leaf(container, keys, _local(name), value, timestamp)
            for container, keys, node, timestamp in _nodes(reply)
            for name, value in node.items()
            if not (isinstance(value, dict) or (isinstance(value, list) and value
                    and isinstance(value[0], dict)))]


def facts_from_replies(switch: SwitchConfig, replies: Iterable[Mapping[str, Any]]) -> FactSet:
    """The switch, its interfaces and the LLDP neighbours it reports, from discovery
    replies (Get or Subscribe ONCE)."""
    local: dict[str, Any] = {}
    interfaces: dict[str, dict[str, Any]] = {}
    neighbors: dict[tuple[str, str], dict[str, Any]] = {}
    for reply in replies:
        for leaf in leaves(reply):
            where = (leaf.container, leaf.name)
            if where in _INTERFACE:
                fields = interfaces.setdefault(_key(leaf, 0), {})
                if _INTERFACE[where]:
                    fields[_INTERFACE[where]] = _interface_value(_INTERFACE[where], leaf)
            elif where in _NEIGHBOR:
                fields = neighbors.setdefault((_key(leaf, 0), _key(leaf, 1)), {})
                if _NEIGHBOR[where] == "mgmt_addresses":
                    fields.setdefault("mgmt_addresses", []).append(_text(leaf))
                else:
                    fields[_NEIGHBOR[where]] = _text(leaf)
            elif where in _LOCAL:
                local[_LOCAL[where]] = _text(leaf)
    chassis = local.get("chassis_id", "")
    if id_subtype(local.get("chassis_id_subtype", "")) == IdSubtype.MAC:
        chassis = normalize_mac(chassis) or chassis
    return FactSet(
        switches=(SwitchFact(switch.name, chassis, switch.address,
                             switch.sflow_agent or switch.address, switch.vendor, switch.role),),
        interfaces=tuple(InterfaceFact(switch.name, name, **fields)
                         for name, fields in interfaces.items()),
        neighbors=tuple(_neighbor(switch.name, port, fields)
                        for (port, _), fields in neighbors.items()),
    )


def port_counters(switch: str, replies: Iterable[Mapping[str, Any]],
                  received_at: float = 0.0) -> list[PortCounters]:
    """Counter readings per port from counter replies (Get or Subscribe, any profile).

    ``at`` is the latest notification timestamp of the port, or ``received_at`` when the
    target sent none.

    >>> [c.values for c in port_counters("leaf01", [{"update": {"timestamp": 2 * 10**9,
    ...     "update": [{"path": "interfaces/interface[name=Ethernet1]/state/counters",
    ...                 "val": {"in-unicast-pkts": "5", "in-multicast-pkts": "1"}},
    ...                {"path": "interfaces/interface[name=Ethernet1]/ethernet/pfc/"
    ...                         "priorities/priority[index=3]/state/in-frames", "val": "9"}]}}])]
    [{'pfc_rx_pause/3': 9, 'in_pkts': 6}]
    """
    ports = _Ports()
    for reply in replies:
        for container, keys, value, timestamp in _roots(reply):
            ports.walk(container, keys, value, timestamp)
    return ports.readings(switch, received_at)


class CounterDecoder:
    """Counter readings from one Subscribe stream's notifications, as pygnmi's protobuf
    messages (``gnmi_pb2.Notification``), without converting them to dicts first.

    Same tables and rules as :func:`port_counters`. Each update path is parsed once and
    remembered, so a sample costs its values only. A value that is JSON but does not parse
    drops that update (counted in ``dropped``); other malformed values raise DecodeError.
    Scalar typed values (``uint_val``, ``string_val``...) are read as leaves.

    >>> from pygnmi.spec.v080 import gnmi_pb2 as pb
    >>> path = pb.Path(elem=[pb.PathElem(name="interfaces"),
    ...     pb.PathElem(name="interface", key={"name": "Ethernet1"}), pb.PathElem(name="state")])
    >>> leaf = pb.Path(elem=[*path.elem, pb.PathElem(name="counters"),
    ...                      pb.PathElem(name="out-octets")])
    >>> value = pb.TypedValue(json_ietf_val=b'{"counters": {"in-octets": "5"}}')
    >>> n = pb.Notification(timestamp=3 * 10**9, update=[pb.Update(path=path, val=value),
    ...     pb.Update(path=leaf, val=pb.TypedValue(uint_val=7))])
    >>> [(c.port, c.at, c.values) for c in CounterDecoder("leaf01").decode([n])]
    [('Ethernet1', 3.0, {'in_octets': 5, 'out_octets': 7})]
    """

    _MAX_PATHS = 1 << 16

    def __init__(self, switch: str) -> None:
        self.switch = switch
        self.dropped = 0  # updates whose JSON did not parse
        self._paths: dict[bytes, tuple[str, tuple[str, ...], str, str]] = {}

    def decode(self, notifications: Iterable[Any], received_at: float = 0.0
               ) -> list[PortCounters]:
        """The readings of one sample; ``received_at`` stands in for a missing timestamp."""
        ports, paths, loads = _Ports(), self._paths, _loads
        for n in notifications:
            timestamp, prefix = n.timestamp, n.prefix
            lead = prefix.SerializeToString() if prefix.elem else b""
            for update in n.update:
                key = update.path.SerializeToString()
                if lead:
                    key = lead + b"/" + key
                where = paths.get(key)
                if where is None:
                    container, keys = _parse_elems([*prefix.elem, *update.path.elem])
                    where = (container, keys, *container.rpartition("/")[::2])
                    if len(paths) >= self._MAX_PATHS:
                        paths.clear()
                    paths[key] = where
                val = update.val
                kind = val.WhichOneof("value")
                if kind is None:
                    continue
                if kind == "json_ietf_val" or kind == "json_val":
                    try:
                        value = loads(getattr(val, kind))
                    except ValueError:  # malformed JSON (or not UTF-8)
                        self.dropped += 1
                        continue
                    if value.__class__ is dict or value.__class__ is list:
                        ports.walk(where[0], where[1], value, timestamp)
                        continue
                    if value is None:
                        continue
                else:
                    value = getattr(val, kind)
                container, keys, parent, name = where
                if container in _CONTAINERS:
                    raise DecodeError(f"gNMI value at {container!r} of {'/'.join(keys) or '?'}"
                                      f" is not an object: {_short(value)}")
                ports.leaf(parent, keys, name, value, timestamp)
        return ports.readings(self.switch, received_at)


class _Ports:
    """Counter readings per port, from the objects and leaves of counter containers.

    :meth:`walk` descends an object like :func:`_walk` (same checks, same order) and
    reads the counters of every container with a table on the way.
    """

    __slots__ = ("ports",)

    def __init__(self) -> None:
        self.ports: dict[str, _Reading] = {}

    def walk(self, container: str, keys: tuple[str, ...], node: Any, timestamp: int) -> None:
        if node.__class__ is list:
            for entry in node:
                if entry.__class__ is not dict:
                    raise DecodeError(f"list entry at {container!r} is not an object: "
                                      f"{_short(entry)}")
                for key in _LIST_KEYS:
                    if key in entry:
                        self.walk(container, (*keys, str(entry[key])), entry, timestamp)
                        break
                else:
                    self.walk(container, (*keys, ""), entry, timestamp)
            return
        if node.__class__ is not dict:
            raise DecodeError(f"{container!r} is not an object: {_short(node)}")
        table = _COUNTERS.get(container)
        if table is None:
            nested = _subtrees(container, keys, node)
        else:  # a counter container; the inline cases are those of _Reading.add
            reading, suffix = self._reading(container, table, keys, timestamp)
            values, sums, parts = reading.values, reading.parts, table.parts
            plain = table.plain(suffix)
            nested = None
            for name, child in node.items():
                if child.__class__ is str and child.isdigit() and child.isascii():
                    counter = plain.get(name)
                    if counter is not None:
                        values[counter] = int(child)
                        continue
                    counter = parts.get(name)
                    if counter is not None:
                        sums[counter] = sums.get(counter, 0) + int(child)
                        continue
                if child.__class__ is dict or child.__class__ is list:
                    path = _child(container, name)
                    if path:
                        nested = nested or []
                        nested.append((path, keys, child))
                        continue
                elif (name in _CONTAINER_NAMES or ":" in name) and _child(container, name):
                    raise DecodeError(f"{container}/{name} is not an object: {_short(child)}")
                counter = table.names.get(name)
                if counter is None:
                    counter = table.resolve(name)
                if counter:
                    reading.add(counter + suffix, child, container, name, keys)
        if nested:
            for path, sub, child in nested:
                self.walk(path, sub, child, timestamp)

    def leaf(self, container: str, keys: tuple[str, ...], name: str, value: Any,
             timestamp: int) -> None:
        """One leaf ``name`` of ``container`` (a scalar update)."""
        table = _COUNTERS.get(container)
        if table is None:
            return
        reading, suffix = self._reading(container, table, keys, timestamp)
        counter = table.names.get(name)
        if counter is None:
            counter = table.resolve(name)
        if counter:
            reading.add(counter + suffix, value, container, name, keys)

    def _reading(self, container: str, table: _Table, keys: tuple[str, ...],
                 timestamp: int) -> tuple[_Reading, str]:
        if len(keys) <= (table.sub or 0):
            raise DecodeError(f"{container} lacks its interface, priority or queue key")
        reading = self.ports.get(keys[0])
        if reading is None:
            reading = self.ports[keys[0]] = _Reading()
        if timestamp > reading.timestamp:
            reading.timestamp = timestamp
        if table.sub is None:
            return reading, ""
        suffix = keys[table.sub]
        return reading, "/" + (suffix.rpartition(":")[2] if table.after_colon else suffix)

    def readings(self, switch: str, received_at: float) -> list[PortCounters]:
        return [PortCounters(switch, port, r.timestamp / 1e9 if r.timestamp else received_at,
                             r.totals(), oper_status=r.oper_status, speed_bps=r.speed_bps,
                             last_clear=r.last_clear, stamped=bool(r.timestamp))
                for port, r in self.ports.items()]


class _Reading:
    """What the replies say about one port, accumulated."""

    __slots__ = ("last_clear", "oper_status", "parts", "speed_bps", "timestamp", "values")

    def __init__(self) -> None:
        self.values: dict[str, int] = {}
        self.parts: dict[str, int] = {}
        self.timestamp = 0
        self.oper_status = ""
        self.speed_bps: int | None = None
        self.last_clear: float | None = None

    def add(self, name: str, value: Any, container: str, leaf: str,
            keys: tuple[str, ...]) -> None:
        if name == "=oper_status":
            self.oper_status = _oper_status(_string(value, container, leaf))
        elif name == "=speed_bps":
            self.speed_bps = _speed_bps(_string(value, container, leaf))
        elif name == "=last_clear":
            self.last_clear = _count(value, container, leaf, keys) / 1e9
        elif "+" in name:
            total = name.partition("+")[0]
            self.parts[total] = self.parts.get(total, 0) + _count(value, container, leaf, keys)
        else:
            self.values[name] = _count(value, container, leaf, keys)

    def totals(self) -> dict[str, int]:
        for total, value in self.parts.items():
            self.values.setdefault(total, value)
        return self.values


def speed_bps(identity: str) -> int | None:
    """An openconfig-if-ethernet ``port-speed`` identity in bits per second.

    >>> speed_bps("openconfig-if-ethernet:SPEED_400GB"), speed_bps("SPEED_2500MB")
    (400000000000, 2500000000)
    >>> speed_bps("SPEED_UNKNOWN") is None
    True
    """
    match = _SPEED.fullmatch(_local(identity))
    if not match:
        return None
    return int(match[1]) * (10**9 if match[2] == "GB" else 10**6)


def oper_status(value: str) -> str:
    """An OpenConfig ``oper-status`` as lower-case words, like IF-MIB's names.

    >>> oper_status("LOWER_LAYER_DOWN"), oper_status("openconfig-interfaces:UP")
    ('lower-layer-down', 'up')
    """
    return _local(value).lower().replace("_", "-")


_oper_status = lru_cache(maxsize=256)(oper_status)  # a few values, every sample
_speed_bps = lru_cache(maxsize=256)(speed_bps)


def id_subtype(value: str) -> IdSubtype:
    """An OpenConfig LLDP chassis-id-type or port-id-type as an :class:`IdSubtype`.

    >>> id_subtype("MAC_ADDRESS"), id_subtype("NETWORK_ADDRESS"), id_subtype("PORT_COMPONENT")
    (<IdSubtype.MAC: 'mac'>, <IdSubtype.IP: 'ip'>, <IdSubtype.OTHER: 'other'>)
    """
    return _SUBTYPES.get(_local(value), IdSubtype.OTHER)


def _notifications(reply: Mapping[str, Any]) -> Iterator[tuple[int, str, list[Any]]]:
    if not isinstance(reply, Mapping):
        raise DecodeError(f"gNMI reply is not a mapping: {_short(reply)}")
    if "notification" in reply:
        notifications = reply["notification"]
    elif "update" in reply:
        notifications = [reply["update"]]
    else:
        return  # a bare sync_response
    if not isinstance(notifications, list):
        raise DecodeError(f"gNMI notifications are not a list: {_short(notifications)}")
    for n in notifications:
        if not isinstance(n, Mapping) or not isinstance(n.get("update") or [], list):
            raise DecodeError(f"gNMI notification is malformed: {_short(n)}")
        timestamp = n.get("timestamp") or 0
        if type(timestamp) is not int:
            raise DecodeError(f"gNMI timestamp is not an integer: {_short(timestamp)}")
        yield timestamp, n.get("prefix") or "", n.get("update") or []


def _roots(reply: Mapping[str, Any]) -> Iterator[tuple[str, tuple[str, ...], Any, int]]:
    """Each update of a reply as (container, keys, object, timestamp); a scalar value as
    an object of one leaf in its parent container."""
    for timestamp, prefix, updates in _notifications(reply):
        for update in updates:
            if not isinstance(update, Mapping):
                raise DecodeError(f"gNMI update is not a mapping: {_short(update)}")
            path = update.get("path") or ""
            path = f"{prefix}/{path}" if prefix else path
            container, keys = _parse(path)
            value = update.get("val")
            if isinstance(value, dict | list):
                yield container, keys, value, timestamp
            elif value is not None:
                if container in _CONTAINERS or (isinstance(value, str)
                                                and value[:1] in ("{", "[")):
                    raise DecodeError(f"gNMI value at {path!r} is not valid JSON: "
                                      f"{_short(value)}")
                parent, _, name = container.rpartition("/")
                yield parent, keys, {name: value}, timestamp


def _nodes(reply: Mapping[str, Any]) -> list[_Node]:
    """Every object under the containers the tables read, with its path and keys."""
    found: list[_Node] = []
    for container, keys, value, timestamp in _roots(reply):
        _walk(container, keys, value, timestamp, found)
    return found


def _walk(container: str, keys: tuple[str, ...], node: Any, timestamp: int,
          out: list[_Node]) -> list[_Node]:
    """Append to ``out`` ``node`` and every object under it in a container fabcorr reads."""
    if node.__class__ is list:
        for entry in node:
            if entry.__class__ is not dict:
                raise DecodeError(f"list entry at {container!r} is not an object: "
                                  f"{_short(entry)}")
            for key in _LIST_KEYS:
                if key in entry:
                    _walk(container, (*keys, str(entry[key])), entry, timestamp, out)
                    break
            else:
                _walk(container, (*keys, ""), entry, timestamp, out)
        return out
    if node.__class__ is not dict:
        raise DecodeError(f"{container!r} is not an object: {_short(node)}")
    out.append((container, keys, node, timestamp))
    anonymous = container.rpartition("/")[2] in _ANONYMOUS
    for name, child in node.items():
        if child.__class__ is dict or child.__class__ is list:
            if anonymous:
                _walk(f"{container}/*", (*keys, name), child, timestamp, out)
            elif path := _child(container, name):
                _walk(path, keys, child, timestamp, out)
        elif not anonymous and (name in _CONTAINER_NAMES or ":" in name) and \
                _child(container, name):
            raise DecodeError(f"{container}/{name} is not an object: {_short(child)}")
    return out


_CHILDREN: dict[tuple[str, str], str] = {}


def _child(container: str, name: str) -> str:
    """The path of member ``name`` of ``container`` if it is a container the walk enters,
    else ``""``."""
    path = _CHILDREN.get((container, name))
    if path is None:
        path = f"{container}/{_local(name)}" if container else _local(name)
        if path not in _CONTAINERS:
            path = ""
        if len(_CHILDREN) < 1 << 14:
            _CHILDREN[container, name] = path
    return path


def _subtrees(container: str, keys: tuple[str, ...], node: dict[str, Any]
              ) -> list[tuple[str, tuple[str, ...], Any]] | None:
    """The members of ``node`` the walk enters, with their paths and keys; DecodeError
    for a scalar where an object is expected."""
    nested = None
    if container.rpartition("/")[2] in _ANONYMOUS:
        for name, child in node.items():
            if child.__class__ is dict or child.__class__ is list:
                nested = nested or []
                nested.append((f"{container}/*", (*keys, name), child))
        return nested
    for name, child in node.items():
        if child.__class__ is dict or child.__class__ is list:
            path = _child(container, name)
            if path:
                nested = nested or []
                nested.append((path, keys, child))
        elif (name in _CONTAINER_NAMES or ":" in name) and _child(container, name):
            raise DecodeError(f"{container}/{name} is not an object: {_short(child)}")
    return nested


@lru_cache(maxsize=1 << 16)
def _parse(path: str) -> tuple[str, tuple[str, ...]]:
    """``interfaces/interface[name=Ethernet1/1]/state`` -> container path and key values."""
    names: list[str] = []
    keys: list[str] = []
    for match in _ELEM.finditer(path):
        name, brackets = match.groups()
        if names and names[-1] in _ANONYMOUS:
            names.append("*")
            keys.append(name)
        else:
            names.append(_local(name))
            keys.extend(_KEY.findall(brackets))
    return "/".join(names), tuple(keys)


def _parse_elems(elems: Iterable[Any]) -> tuple[str, tuple[str, ...]]:
    """:func:`_parse` of a path given as gNMI ``PathElem`` messages (keys of one element
    in the order of their names, as pygnmi prints them)."""
    names: list[str] = []
    keys: list[str] = []
    for elem in elems:
        if names and names[-1] in _ANONYMOUS:
            names.append("*")
            keys.append(elem.name)
        else:
            names.append(_local(elem.name))
            keys.extend(value for _, value in sorted(elem.key.items()))
    # interned: every switch's paths name the same containers and, mostly, ports
    return sys.intern("/".join(names)), tuple(sys.intern(key) for key in keys)


_scan = json.JSONDecoder().scan_once


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)``, calling the C scanner directly when ``raw`` is UTF-8 with no
    whitespace around its value (as targets send it): half the cost for small values."""
    try:
        text = raw.decode()
        value, end = _scan(text, 0)
    except (ValueError, StopIteration):
        return json.loads(raw)  # raises as it would have
    return value if end == len(text) else json.loads(raw)


def _neighbor(switch: str, port: str, fields: dict[str, Any]) -> LldpNeighborFact:
    chassis_type = id_subtype(fields.get("chassis_id_subtype", ""))
    port_type = id_subtype(fields.get("port_id_subtype", ""))
    chassis, port_id = fields.get("chassis_id", ""), fields.get("port_id", "")
    if chassis_type == IdSubtype.MAC:
        chassis = normalize_mac(chassis) or chassis
    if port_type == IdSubtype.MAC:
        port_id = normalize_mac(port_id) or port_id
    addresses = fields.get("mgmt_addresses") or [fields.get("mgmt_address", "")]
    return LldpNeighborFact(
        Reporter.SWITCH, switch, port, chassis, chassis_type, port_id, port_type,
        fields.get("system_name", ""), fields.get("port_description", ""), addresses[0],
        source="gnmi")


def _interface_value(field: str, leaf: Leaf) -> Any:
    if field == "ifindex":
        return _count(leaf.value, leaf.container, leaf.name, leaf.keys)
    text = _text(leaf)
    if field == "mac":
        mac = normalize_mac(text)
        if not mac:
            raise DecodeError(f"{leaf.container}/mac-address is not a MAC: {_short(text)}")
        return mac
    return {"oper_status": oper_status, "speed_bps": speed_bps}.get(field, str)(text)


def _count(value: Any, container: str, leaf: str, keys: tuple[str, ...]) -> int:
    if type(value) is int and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise DecodeError(f"{container}/{leaf} of {'/'.join(keys) or '?'} is not a counter: "
                      f"{_short(value)}")


def _string(value: Any, container: str, leaf: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{container}/{leaf} is not a string: {_short(value)}")
    return value


def _text(leaf: Leaf) -> str:
    return _string(leaf.value, leaf.container, leaf.name)


def _key(leaf: Leaf, index: int) -> str:
    if len(leaf.keys) <= index:
        raise DecodeError(f"{leaf.container}/{leaf.name} lacks a list key")
    return leaf.keys[index]


def _local(name: str) -> str:
    return name.rpartition(":")[2]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
