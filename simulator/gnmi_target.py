"""An emulated switch's gNMI target (gRPC) serving OpenConfig state rendered from facts.

LLDP, interfaces (state, counters, ethernet port-speed), QoS queues and per-priority PFC
(EOS or Cumulus paths, REFERENCE §3) come from a switch's facts and a counter source;
the ``sonic`` profile also serves ``COUNTERS_DB`` (prefix target) with SAI names. Get,
Capabilities and Subscribe (STREAM with SAMPLE or ON_CHANGE, ONCE, POLL) are served.
Fault knobs: ``stall`` (accept, never answer), ``garbage`` (malformed JSON values),
``username``/``password`` (wrong credentials get UNAUTHENTICATED) and ``subscribe_only``
(Get is UNIMPLEMENTED, as on Cumulus 5.16) and ``echo_s`` (each streamed sample is
followed at once by another stamped that much later, as from a target catching up on a
late tick). A sample is one notification per concrete path, or one in all with ``pack``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent import futures
from typing import Any, Self

import grpc
from pygnmi.spec.v080 import gnmi_pb2 as pb
from pygnmi.spec.v080 import gnmi_pb2_grpc

from inventory.counters import INTERFACE_COUNTERS
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, SwitchFact
from simulator.emulated_switch import EmulatedSwitch

CounterSource = Callable[[str, float], Mapping[str, int]]
"""``(port name, now) -> {counter name: value}`` with the names of inventory.counters."""

PROFILES = ("openconfig", "eos", "cumulus", "sonic")
_JSON, _JSON_IETF = pb.Encoding.Value("JSON"), pb.Encoding.Value("JSON_IETF")
_ON_CHANGE_TICK_S = 0.05
_ROOT_MODULES = {"interfaces": "openconfig-interfaces", "lldp": "openconfig-lldp",
                 "qos": "openconfig-qos"}
_AUGMENTS = {"ethernet": "openconfig-if-ethernet"}
_VENDOR_SUBTREES = {"pfc", "switch-priority"}  # vendor augments: keys left unqualified
_LLDP_TYPES = {IdSubtype.MAC: "MAC_ADDRESS", IdSubtype.IFNAME: "INTERFACE_NAME",
               IdSubtype.IFALIAS: "INTERFACE_ALIAS", IdSubtype.LOCAL: "LOCAL",
               IdSubtype.IP: "NETWORK_ADDRESS"}
_SAI_PORT = {n: "IF_" + n.upper().replace("PKTS", "UCAST_PKTS") for n in INTERFACE_COUNTERS}
_SAI_QUEUE = {"queue_tx_pkts": "PACKETS", "queue_dropped": "DROPPED_PACKETS",
              "queue_ecn_marked": "WRED_ECN_MARKED_PACKETS"}
_OC_QUEUE = {"queue_tx_pkts": "transmit-pkts", "queue_dropped": "dropped-pkts",
             "queue_ecn_marked": "ecn-marked-pkts"}


def steady_counters(start: float, rate_bps: float = 100e9) -> CounterSource:
    """Counters growing linearly since ``start``: port ``EthernetN`` at ``(N % 4 + 1) / 4``
    of ``rate_bps`` both ways in 4 KiB packets, PFC and ECN on priority/queue 3.

    >>> steady_counters(0.0)("Ethernet3", 2.0)["in_octets"]
    25000000000
    """
    def counters(port: str, now: float) -> dict[str, int]:
        digits = "".join(ch for ch in port if ch.isdigit())
        octets = int((now - start) * rate_bps / 8 * (int(digits or 0) % 4 + 1) / 4)
        pkts = octets // 4096
        values = {"in_octets": octets, "out_octets": octets, "in_pkts": pkts, "out_pkts": pkts,
                  "in_discards": 0, "out_discards": 0, "in_errors": 0, "out_errors": 0}
        for p in range(8):
            pause = int((now - start) * 1000) if p == 3 else 0
            values |= {f"pfc_rx_pause/{p}": pause, f"pfc_tx_pause/{p}": pause // 2,
                       f"queue_tx_pkts/{p}": pkts if p == 3 else 0,
                       f"queue_ecn_marked/{p}": pkts // 100 if p == 3 else 0,
                       f"queue_dropped/{p}": 0}
        return values
    return counters


class _Counter64(int):
    """A counter64 leaf: a JSON string in JSON_IETF (RFC 7951), a number in JSON."""


class _List(dict):
    """A YANG list: key value -> entry; rendered as a JSON array of entries."""

    def __init__(self, key: str, entries: Iterable[tuple[str, dict]] = ()) -> None:
        super().__init__(entries)
        self.key = key


class _Hidden(dict):
    """A node served at its own path but left out of its parent's value (SONiC Queues)."""


class GnmiTarget(EmulatedSwitch):
    """One emulated switch's gNMI server on a loopback address; a context manager."""

    def __init__(self, switch: SwitchFact, interfaces: Iterable[InterfaceFact],
                 neighbors: Iterable[LldpNeighborFact] = (), *, profile: str = "openconfig",
                 counters: CounterSource | None = None, host: str = "127.0.0.1",
                 port: int = 0, cert_pem: bytes | None = None, key_pem: bytes | None = None,
                 username: str = "", password: str = "", stall: bool = False,
                 garbage: bool = False, subscribe_only: bool = False,
                 pack: bool = False, echo_s: float = 0.0) -> None:
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
        self.switch, self.profile = switch, profile
        self.interfaces = {i.name: i for i in interfaces if i.switch == switch.name}
        self.neighbors = [n for n in neighbors if n.local_device == switch.name]
        self.counters = counters or steady_counters(time.time())
        self.stall, self.garbage, self.subscribe_only = stall, garbage, subscribe_only
        self.pack, self.echo_s = pack, echo_s
        self._credentials = (username, password)
        self._tls = (key_pem, cert_pem) if cert_pem and key_pem else None
        self._host, self._port = host, port
        self._server: grpc.Server | None = None
        self._stopped = threading.Event()


    def start(self) -> Self:
        self._stopped.clear()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        gnmi_pb2_grpc.add_gNMIServicer_to_server(_Servicer(self), server)
        bind = f"{self._host}:{self._port}"
        if self._tls:
            self._port = server.add_secure_port(bind, grpc.ssl_server_credentials([self._tls]))
        else:
            self._port = server.add_insecure_port(bind)
        server.start()
        self._server = server
        return self

    def stop(self) -> None:
        """Stop serving; open streams end cleanly (status OK) within the grace period."""
        self._stopped.set()
        if self._server is not None:
            self._server.stop(grace=1.0).wait(5)
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def set_oper_status(self, port: str, status: str) -> None:
        """Change a port's oper-status (seen by ON_CHANGE subscribers)."""
        self.interfaces[port] = dataclasses.replace(self.interfaces[port], oper_status=status)

    def tree(self, now: float, target: str = "") -> dict[str, Any]:
        """The data tree at ``now``: OpenConfig, or SONiC COUNTERS_DB for that target."""
        ports = {name: self.counters(name, now) for name in self.interfaces}
        if target == "COUNTERS_DB" and self.profile == "sonic":
            return {"COUNTERS": {p: _sonic_port(p, c) for p, c in ports.items()}}
        tree = {"interfaces": {"interface": _List("name", (
            (f.name, self._interface(f, ports[f.name])) for f in self.interfaces.values()))},
            "lldp": self._lldp()}
        if self.profile != "sonic":
            tree["qos"] = {"interfaces": {"interface": _List("interface-id", (
                (p, self._qos(p, c)) for p, c in ports.items()))}}
        return tree

    def _interface(self, fact: InterfaceFact, c: Mapping[str, int]) -> dict:
        counters = {name.replace("_", "-"): _Counter64(c[name])
                    for name in INTERFACE_COUNTERS if name in c}
        for way in ("in", "out"):
            if f"{way}_pkts" in c:
                counters |= {f"{way}-unicast-pkts": _Counter64(c[f"{way}_pkts"]),
                             f"{way}-multicast-pkts": _Counter64(0),
                             f"{way}-broadcast-pkts": _Counter64(0)}
        state = {"name": fact.name, "oper-status": fact.oper_status.upper().replace("-", "_"),
                 "counters": counters}
        if fact.ifindex is not None:
            state["ifindex"] = fact.ifindex
        if fact.alias:
            state["description"] = fact.alias
        ethernet: dict[str, Any] = {"state": {"mac-address": fact.mac}}
        if fact.speed_bps:
            ethernet["state"]["port-speed"] = _speed_identity(fact.speed_bps)
        if self.profile == "eos":
            ethernet["pfc"] = {"priorities": {"priority": _List("index", (
                (p, {"index": int(p), "state": {
                    "index": int(p), "in-frames": _Counter64(c.get(f"pfc_rx_pause/{p}", 0)),
                    "out-frames": _Counter64(c.get(f"pfc_tx_pause/{p}", 0))}})
                for p in _suffixes(c, "pfc_rx_pause")))}}
        return {"name": fact.name, "state": state, "ethernet": ethernet}

    def _qos(self, port: str, c: Mapping[str, int]) -> dict:
        queues = _List("name", ((q, {"name": q, "state": {"name": q, **{
            leaf: _Counter64(c.get(f"{name}/{q}", 0)) for name, leaf in _OC_QUEUE.items()}}})
            for q in _suffixes(c, "queue_tx_pkts")))
        entry: dict[str, Any] = {"interface-id": port, "output": {"queues": {"queue": queues}}}
        if self.profile == "cumulus":
            entry["switch-priority"] = _List("priority", ((p, {"priority": int(p), "state": {
                "counters": {"in-pause-pkts": _Counter64(c.get(f"pfc_rx_pause/{p}", 0)),
                             "out-pause-pkts": _Counter64(c.get(f"pfc_tx_pause/{p}", 0))}}})
                for p in _suffixes(c, "pfc_rx_pause")))
        return entry

    def _lldp(self) -> dict:
        ports = _List("name", ((p, {"name": p, "neighbors": {"neighbor": _List("id")}})
                               for p in self.interfaces))
        for n in self.neighbors:
            entries = ports.setdefault(n.local_port, {"name": n.local_port, "neighbors": {
                "neighbor": _List("id")}})["neighbors"]["neighbor"]
            i = str(len(entries) + 1)
            entries[i] = {"id": i, "state": {
                "id": i, "chassis-id": n.chassis_id,
                "chassis-id-type": _LLDP_TYPES.get(n.chassis_id_subtype, "CHASSIS_COMPONENT"),
                "port-id": n.port_id,
                "port-id-type": _LLDP_TYPES.get(n.port_id_subtype, "PORT_COMPONENT"),
                "system-name": n.system_name, "port-description": n.port_description}}
            if n.mgmt_address:
                entries[i]["mgmt-addresses"] = {"mgmt-address": _List("address", [(
                    n.mgmt_address, {"address": n.mgmt_address,
                                     "state": {"address": n.mgmt_address}})])}
        return {"state": {"chassis-id": self.switch.chassis_id, "chassis-id-type": "MAC_ADDRESS",
                          "system-name": self.switch.name}, "interfaces": {"interface": ports}}


@dataclasses.dataclass(slots=True)
class _Call:
    """What a request fixes for all its paths, and the last tree made for it."""

    prefix: pb.Path
    encoding: int
    context: grpc.ServicerContext
    tree: tuple[tuple[int, str], dict[str, Any]] | None = None


class _Servicer(gnmi_pb2_grpc.gNMIServicer):
    def __init__(self, target: GnmiTarget) -> None:
        self.t = target

    def Capabilities(self, request: pb.CapabilityRequest, context: grpc.ServicerContext
                     ) -> pb.CapabilityResponse:
        self._admit(context)
        models = [pb.ModelData(name=m, organization="OpenConfig working group")
                  for m in (*_ROOT_MODULES.values(), *_AUGMENTS.values())]
        return pb.CapabilityResponse(supported_models=models, gNMI_version="0.8.0",
                                     supported_encodings=[_JSON, _JSON_IETF])

    def Get(self, request: pb.GetRequest, context: grpc.ServicerContext) -> pb.GetResponse:
        self._admit(context)
        if self.t.subscribe_only:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "Get is not supported; use Subscribe")
        call, now_ns = self._call(request.prefix, request.encoding, context), time.time_ns()
        updates = [u for path in request.path for u in self._updates(call, path, now_ns, True)]
        return pb.GetResponse(notification=[pb.Notification(
            timestamp=now_ns, prefix=_target_prefix(request.prefix), update=updates)])

    def Subscribe(self, request_iterator: Iterator[pb.SubscribeRequest],
                  context: grpc.ServicerContext) -> Iterator[pb.SubscribeResponse]:
        self._admit(context)
        first = next(request_iterator, None)
        if first is None or not first.HasField("subscribe"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "first request must be subscribe")
        sl = first.subscribe
        call, subs = self._call(sl.prefix, sl.encoding, context), list(sl.subscription)
        if not (sl.mode == pb.SubscriptionList.STREAM and sl.updates_only):
            yield from self._responses(call, subs, time.time_ns())
        yield pb.SubscribeResponse(sync_response=True)
        if sl.mode == pb.SubscriptionList.POLL:  # until the client half-closes
            for request in request_iterator:
                if request.HasField("poll"):
                    yield from self._responses(call, subs, time.time_ns())
                    yield pb.SubscribeResponse(sync_response=True)
        elif sl.mode == pb.SubscriptionList.STREAM:  # until cancelled or stopped
            yield from self._stream(call, subs)

    def _stream(self, call: _Call, subs: list[pb.Subscription]
                ) -> Iterator[pb.SubscribeResponse]:
        sampled = [s for s in subs if s.mode != pb.SubscriptionMode.Value("ON_CHANGE")]
        changing = [s for s in subs if s not in sampled]
        period = {id(s): (s.sample_interval or 10**9) / 1e9 for s in sampled}
        start = time.monotonic()  # one clock: paths of one period are sampled together
        due = {id(s): start + period[id(s)] for s in sampled}
        sent = {u.path.SerializeToString(deterministic=True): u.val.SerializeToString()
                for s in changing for u in self._updates(call, s.path, time.time_ns())}
        while call.context.is_active():
            wake = min([*due.values(), time.monotonic() + _ON_CHANGE_TICK_S] if changing
                       else due.values(), default=time.monotonic() + 1.0)
            if self.t._stopped.wait(max(0.0, wake - time.monotonic())):
                return
            now, now_ns = time.monotonic(), time.time_ns()
            ready = [s for s in sampled if due[id(s)] <= now]
            for s in ready:  # a late tick skips the samples it missed: next due after now
                due[id(s)] += period[id(s)] * (1 + int((now - due[id(s)]) // period[id(s)]))
            yield from self._responses(call, ready, now_ns)
            if ready and self.t.echo_s:
                yield from self._responses(call, ready, now_ns + int(self.t.echo_s * 1e9))
            changed = []
            for s in changing:
                for u in self._updates(call, s.path, now_ns):
                    key, value = u.path.SerializeToString(deterministic=True), \
                        u.val.SerializeToString()
                    if sent.get(key) != value:
                        sent[key] = value
                        changed.append(u)
            yield from self._notifications(call, changed, now_ns)

    def _responses(self, call: _Call, subs: list[pb.Subscription], now_ns: int
                   ) -> Iterator[pb.SubscribeResponse]:
        updates = [u for s in subs for u in self._updates(call, s.path, now_ns)]
        return self._notifications(call, updates, now_ns)

    def _notifications(self, call: _Call, updates: list[pb.Update], now_ns: int
                       ) -> Iterator[pb.SubscribeResponse]:
        # One notification per concrete path (or one for all with ``pack``), full paths
        # and no element prefix; never timestamp 0 (pygnmi makes that a None item).
        for group in [updates] if self.t.pack and updates else [[u] for u in updates]:
            yield pb.SubscribeResponse(update=pb.Notification(
                timestamp=now_ns, prefix=_target_prefix(call.prefix), update=group))

    def _updates(self, call: _Call, path: pb.Path, now_ns: int, must_exist: bool = False
                 ) -> list[pb.Update]:
        found = self._values(call, path, now_ns, must_exist)
        if self.t.garbage:
            for update in found:
                update.val.json_ietf_val = b'{"openconfig-interfaces:state": {"name": '
        return found

    def _values(self, call: _Call, path: pb.Path, now_ns: int, must_exist: bool
                ) -> list[pb.Update]:
        origin = path.origin or call.prefix.origin
        if origin not in ("", "openconfig") and self.t.profile in ("eos", "sonic"):
            call.context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown origin {origin!r}")
        elems = [*call.prefix.elem, *path.elem]
        found = list(_select(self._tree(call, now_ns), elems))
        if not found and must_exist and not any(
                "*" in e.name or "*" in e.key.values() for e in elems):
            call.context.abort(grpc.StatusCode.NOT_FOUND,
                               f"no data at /{'/'.join(e.name for e in elems)}")
        names = [_local(e.name) for e in elems]
        return [pb.Update(path=pb.Path(elem=concrete), val=_typed(node, names, call.encoding))
                for concrete, node in found]

    def _tree(self, call: _Call, now_ns: int) -> dict[str, Any]:
        """The target's tree at ``now_ns``, made once for all the paths answered then."""
        key = (now_ns, call.prefix.target)
        if call.tree is None or call.tree[0] != key:
            call.tree = (key, self.t.tree(now_ns / 1e9, call.prefix.target))
        return call.tree[1]

    def _call(self, prefix: pb.Path, encoding: int, context: grpc.ServicerContext) -> _Call:
        if encoding not in (_JSON, _JSON_IETF):
            context.abort(grpc.StatusCode.UNIMPLEMENTED,
                          f"encoding {pb.Encoding.Name(encoding)} is not supported")
        return _Call(prefix, encoding, context)

    def _admit(self, context: grpc.ServicerContext) -> None:
        if self.t.stall:  # accept, then never answer
            while not self.t._stopped.wait(0.05) and context.is_active():
                pass
            context.abort(grpc.StatusCode.UNAVAILABLE, "target stopped")
        username, password = self.t._credentials
        if username or password:
            sent = dict(context.invocation_metadata())
            if not (hmac.compare_digest(str(sent.get("username", "")), username)
                    and hmac.compare_digest(str(sent.get("password", "")), password)):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid username or password")


def _select(tree: dict, elems: list[pb.PathElem]) -> Iterator[tuple[list[pb.PathElem], Any]]:
    """Concrete (path, node) pairs matching ``elems``; ``*`` or a missing key matches all."""
    matches: list[tuple[list[pb.PathElem], Any]] = [([], tree)]
    for elem in elems:
        name, found = _local(elem.name), []
        for path, node in matches:
            if not isinstance(node, dict):
                continue
            names = fnmatch.filter(node, name) if "*" in name else [name] * (name in node)
            for child_name in names:
                child = node[child_name]
                if not isinstance(child, _List):
                    found.append(([*path, pb.PathElem(name=child_name)], child))
                    continue
                wanted = elem.key.get(child.key, "*")
                found += [([*path, pb.PathElem(name=child_name, key={child.key: key})], entry)
                          for key, entry in child.items() if wanted in ("*", key)]
        matches = found
    yield from matches


def _typed(node: Any, names: list[str], encoding: int) -> pb.TypedValue:
    ietf = encoding == _JSON_IETF
    value = _render(node, ietf)
    if ietf and isinstance(value, dict) and names and names[0] in _ROOT_MODULES:
        module: str | None = _ROOT_MODULES[names[0]]
        for name in names[1:]:
            module = None if name in _VENDOR_SUBTREES else _AUGMENTS.get(name, module)
        if module:
            value = {k if ":" in k else f"{_AUGMENTS.get(k, module)}:{k}": v
                     for k, v in value.items()}
    text = json.dumps(value, separators=(",", ":")).encode()
    return pb.TypedValue(json_ietf_val=text) if ietf else pb.TypedValue(json_val=text)


def _render(node: Any, ietf: bool) -> Any:
    if isinstance(node, _List):
        return [_render(entry, ietf) for entry in node.values()]
    if isinstance(node, dict):
        return {(f"{_AUGMENTS[k]}:{k}" if ietf and k in _AUGMENTS else k): _render(v, ietf)
                for k, v in node.items() if not isinstance(v, _Hidden)}
    if isinstance(node, _Counter64):
        return str(int(node)) if ietf else int(node)
    return node


def _sonic_port(port: str, c: Mapping[str, int]) -> dict:
    node: dict[str, Any] = {f"SAI_PORT_STAT_{sai}": _Counter64(c[name])
                            for name, sai in _SAI_PORT.items() if name in c}
    for way in ("IN", "OUT"):
        node[f"SAI_PORT_STAT_IF_{way}_NON_UCAST_PKTS"] = _Counter64(0)
    for p in _suffixes(c, "pfc_rx_pause"):
        node[f"SAI_PORT_STAT_PFC_{p}_RX_PKTS"] = _Counter64(c[f"pfc_rx_pause/{p}"])
        node[f"SAI_PORT_STAT_PFC_{p}_TX_PKTS"] = _Counter64(c.get(f"pfc_tx_pause/{p}", 0))
    node["Queues"] = _Hidden({f"{port}:{q}": {
        f"SAI_QUEUE_STAT_{sai}": _Counter64(c.get(f"{name}/{q}", 0))
        for name, sai in _SAI_QUEUE.items()} for q in _suffixes(c, "queue_tx_pkts")})
    return node


def _speed_identity(bps: int) -> str:
    gb, mb = divmod(bps, 10**9)
    name = f"SPEED_{gb}GB" if not mb else f"SPEED_{bps // 10**6}MB"
    return f"openconfig-if-ethernet:{name}"


def _suffixes(counters: Mapping[str, int], name: str) -> list[str]:
    return [k.partition("/")[2] for k in counters if k.startswith(name + "/")]


def _target_prefix(prefix: pb.Path) -> pb.Path | None:
    return pb.Path(target=prefix.target) if prefix.target else None


def _local(name: str) -> str:
    return name.rpartition(":")[2]
