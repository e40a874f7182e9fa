"""An emulated switch's NETCONF-over-SSH agent serving OpenConfig LLDP and interfaces state
rendered from facts.

RFC 6242 framing (end-of-message; chunked once both hellos offer base:1.1) and RFC 6241
``<get>`` with subtree filters, ``<close-session>``, and ``rpc-error`` for anything else.
"""

from __future__ import annotations

import copy
import hmac
import itertools
import logging
import re
import socket
import socketserver
import threading
from collections.abc import Iterable
from typing import Any, Self

import paramiko
from lxml import etree

from inventory.facts import (
    FactSet,
    IdSubtype,
    InterfaceFact,
    LldpNeighborFact,
    Reporter,
    SwitchFact,
)

_log = logging.getLogger(__name__)

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
BASE_10 = "urn:ietf:params:netconf:base:1.0"
BASE_11 = "urn:ietf:params:netconf:base:1.1"
LLDP_NS = "http://openconfig.net/yang/lldp"
IF_NS = "http://openconfig.net/yang/interfaces"
ETH_NS = "http://openconfig.net/yang/interfaces/ethernet"
MODULES = {LLDP_NS: "openconfig-lldp", IF_NS: "openconfig-interfaces",
           ETH_NS: "openconfig-if-ethernet"}

_EOM = b"]]>]]>"
_CHUNK_SIZE = re.compile(rb"[1-9][0-9]{0,9}")
_MAX_MESSAGE = 4 << 20
# openconfig-lldp-types chassis and port id types for lldpd's subtypes
_CHASSIS_TYPES = {IdSubtype.MAC: "MAC_ADDRESS", IdSubtype.IFNAME: "INTERFACE_NAME",
                  IdSubtype.IFALIAS: "INTERFACE_ALIAS", IdSubtype.LOCAL: "LOCAL",
                  IdSubtype.IP: "NETWORK_ADDRESS", IdSubtype.OTHER: "CHASSIS_COMPONENT"}
_PORT_TYPES = {**_CHASSIS_TYPES, IdSubtype.OTHER: "PORT_COMPONENT"}
_COUNTERS = ("in-octets", "in-pkts", "in-discards", "in-errors",
             "out-octets", "out-pkts", "out-discards", "out-errors")


class _FramingError(Exception):
    """The peer broke RFC 6242 framing: the session ends."""


def speed_identity(speed_bps: int | None) -> str:
    """The openconfig-if-ethernet ETHERNET_SPEED identity of a speed.

    >>> speed_identity(400_000_000_000), speed_identity(2_500_000_000), speed_identity(None)
    ('SPEED_400GB', 'SPEED_2500MB', 'SPEED_UNKNOWN')
    """
    if not speed_bps:
        return "SPEED_UNKNOWN"
    if speed_bps % 10**9 == 0:
        return f"SPEED_{speed_bps // 10**9}GB"
    return f"SPEED_{speed_bps // 10**6}MB"


def _leaves(node: Any, leaves: Iterable[tuple[str, object]]) -> Any:
    """``node`` with a leaf (in its namespace) per name and value, unless the value is empty."""
    for leaf, value in leaves:
        if value not in ("", None):
            etree.SubElement(node, f"{{{etree.QName(node).namespace}}}{leaf}").text = str(value)
    return node


def _node(parent: Any, name: str, *leaves: tuple[str, object]) -> Any:
    return _leaves(etree.SubElement(parent, f"{{{etree.QName(parent).namespace}}}{name}"), leaves)


def _root(namespace: str, name: str, *leaves: tuple[str, object]) -> Any:
    return _leaves(etree.Element(f"{{{namespace}}}{name}", nsmap={None: namespace}), leaves)


def render_interfaces(interfaces: Iterable[InterfaceFact]) -> Any:
    """openconfig-interfaces ``interfaces``: state, counters (zero) and ethernet state."""
    root = _root(IF_NS, "interfaces")
    for fact in interfaces:
        entry = _node(root, "interface", ("name", fact.name))
        state = _node(entry, "state", ("name", fact.name), ("description", fact.alias),
                      ("ifindex", fact.ifindex),
                      ("oper-status", (fact.oper_status or "unknown").upper()))
        _node(state, "counters", *((name, 0) for name in _COUNTERS))
        # port-speed is an identityref whose value names its module by a prefix; declared
        # here, lxml keeps the prefix when subtrees are copied (on the leaf it drops it).
        ethernet = etree.SubElement(entry, f"{{{ETH_NS}}}ethernet",
                                    nsmap={None: ETH_NS, "oc-eth": ETH_NS})
        _node(ethernet, "state", ("mac-address", fact.mac),
              ("port-speed", f"oc-eth:{speed_identity(fact.speed_bps)}"))
    return root


def render_lldp(switch: SwitchFact, ports: Iterable[str],
                neighbors: Iterable[LldpNeighborFact]) -> Any:
    """openconfig-lldp ``lldp``: the switch's chassis id and each port's neighbours."""
    root = _root(LLDP_NS, "lldp")
    _node(root, "state", ("system-name", switch.name), ("chassis-id", switch.chassis_id),
          ("chassis-id-type", "MAC_ADDRESS"))
    by_port: dict[str, list[LldpNeighborFact]] = {}
    for fact in neighbors:
        by_port.setdefault(fact.local_port, []).append(fact)
    by_port.update({port: [] for port in ports if port not in by_port})
    interfaces = _node(root, "interfaces")
    for port, facts in by_port.items():
        entry = _node(interfaces, "interface", ("name", port))
        _node(entry, "state", ("name", port))
        found = _node(entry, "neighbors")
        for number, fact in enumerate(facts, start=1):
            _node(_node(found, "neighbor", ("id", number)), "state", ("id", number),
                  ("system-name", fact.system_name), ("chassis-id", fact.chassis_id),
                  ("chassis-id-type", _CHASSIS_TYPES[fact.chassis_id_subtype]),
                  ("port-id", fact.port_id), ("port-id-type", _PORT_TYPES[fact.port_id_subtype]),
                  ("port-description", fact.port_description),
                  ("management-address", fact.mgmt_address))
    return root


def _same(spec: Any, node: Any) -> bool:
    """Same name; a filter element without a namespace matches any (RFC 6241 §6.2.1)."""
    want, have = etree.QName(spec), etree.QName(node)
    return want.localname == have.localname and want.namespace in (None, have.namespace)


def select(node: Any, spec: Any) -> Any | None:
    """Copy of ``node`` cut down by the subtree filter element ``spec`` (RFC 6241 §6.2),
    or None when a content match node fails or nothing is selected."""
    specs = [s for s in spec if isinstance(s.tag, str)]
    matches = [s for s in specs if len(s) == 0 and (s.text or "").strip()]
    for match in matches:
        if not any(_same(match, child) and (child.text or "").strip() == match.text.strip()
                   for child in node):
            return None
    if len(matches) == len(specs):  # a selection node, or content match nodes only
        return copy.deepcopy(node)
    kept = etree.Element(node.tag, nsmap=node.nsmap)
    for child in node:
        picks = [s for s in specs if _same(s, child)]
        part = copy.deepcopy(child) if any(s in matches for s in picks) else next(
            (p for s in picks if (p := select(child, s)) is not None), None)
        if part is not None:
            kept.append(part)
    return kept if len(kept) else None


class _Channel:
    """NETCONF messages over an SSH channel: end-of-message framing, or chunked framing
    once ``chunked`` is set (RFC 6242 §4)."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self.channel, self.buffer, self.chunked = channel, b"", False

    def _until(self, end: bytes, limit: int) -> bytes:
        while (at := self.buffer.find(end)) < 0:
            if len(self.buffer) > limit:
                raise _FramingError(f"no {end!r} in {limit} bytes")
            self._fill()
        found, self.buffer = self.buffer[:at], self.buffer[at + len(end):]
        return found

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        found, self.buffer = self.buffer[:size], self.buffer[size:]
        return found

    def _fill(self) -> None:
        data = self.channel.recv(65536)
        if not data:
            raise EOFError
        self.buffer += data

    def read(self) -> bytes:
        if not self.chunked:
            return self._until(_EOM, _MAX_MESSAGE)
        parts: list[bytes] = []
        while True:
            if self._take(2) != b"\n#":
                raise _FramingError("expected a chunk header")
            size = self._until(b"\n", 11)
            if size == b"#" and parts:
                return b"".join(parts)
            if not _CHUNK_SIZE.fullmatch(size) or sum(map(len, parts)) > _MAX_MESSAGE:
                raise _FramingError(f"bad chunk size {size!r}")
            parts.append(self._take(int(size)))

    def write(self, element: Any) -> None:
        message = etree.tostring(element, xml_declaration=True, encoding="UTF-8")
        self.channel.sendall(b"\n#%d\n%s\n##\n" % (len(message), message) if self.chunked
                             else message + _EOM)


class _Interface(paramiko.ServerInterface):
    def __init__(self, agent: NetconfServer) -> None:
        self.agent, self.subsystem = agent, threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_auth_password(self, username: str, password: str) -> int:
        self.agent.logins.append(username)
        good = hmac.compare_digest(username.encode(), self.agent.username.encode()) & \
            hmac.compare_digest(password.encode(), self.agent.password.encode())
        return paramiko.AUTH_SUCCESSFUL if good else paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return paramiko.OPEN_SUCCEEDED if kind == "session" else \
            paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        if name == "netconf":
            self.subsystem.set()
        return name == "netconf"


def _error(tag: str, message: str, error_type: str = "protocol") -> Any:
    return _root(BASE_NS, "rpc-error", ("error-type", error_type), ("error-tag", tag),
                 ("error-severity", "error"), ("error-message", message))


class _Listener(socketserver.ThreadingTCPServer):
    """Accepts TCP connections and hands each to ``connection`` in a thread of its own."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], connection: Any) -> None:
        super().__init__(address, socketserver.BaseRequestHandler)
        self.connection = connection

    def finish_request(self, request: Any, client_address: Any) -> None:
        self.connection(request)


class NetconfServer:
    """One switch's NETCONF agent on ``host:port`` (0: any free port), a thread per session.

    ``stall`` accepts SSH and the subsystem but never says hello; ``delay`` seconds pass
    before each ``<get>`` is answered (for timeout and concurrency tests).
    ``logins`` records the usernames of password attempts, ``rpcs`` the operations and
    ``framings`` each session's framing after the hellos (``"1.0"`` or ``"1.1"``).
    """

    def __init__(self, switch: SwitchFact, interfaces: Iterable[InterfaceFact] = (),
                 neighbors: Iterable[LldpNeighborFact] = (), *, username: str = "admin",
                 password: str = "admin", host_key: paramiko.PKey | None = None,
                 host: str = "127.0.0.1", port: int = 0, base11: bool = True,
                 stall: bool = False, delay: float = 0.0) -> None:
        interfaces = tuple(interfaces)
        self.tree = etree.Element(f"{{{BASE_NS}}}data", nsmap={None: BASE_NS})
        self.tree.append(render_lldp(switch, [i.name for i in interfaces], neighbors))
        self.tree.append(render_interfaces(interfaces))
        self.username, self.password = username, password
        self.host_key = host_key or paramiko.RSAKey.generate(2048)
        self.base11, self.stall, self.delay = base11, stall, delay
        self.logins: list[str] = []
        self.rpcs: list[str] = []
        self.framings: list[str] = []
        self._bind = (host, port)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._transports: set[paramiko.Transport] = set()
        self._session_ids = itertools.count(1)
        self._listener: _Listener | None = None

    @classmethod
    def from_facts(cls, facts: FactSet, name: str, **options: Any) -> NetconfServer:
        """The agent of switch ``name``: its interfaces and the neighbours it reports."""
        switch = next(s for s in facts.switches if s.name == name)
        return cls(switch, [i for i in facts.interfaces if i.switch == name],
                   [n for n in facts.neighbors
                    if n.reporter is Reporter.SWITCH and n.local_device == name], **options)

    @property
    def address(self) -> tuple[str, int]:
        assert self._listener is not None, "not started"
        return self._listener.server_address[:2]

    @property
    def known_hosts_line(self) -> str:
        """This agent's host key as an OpenSSH ``known_hosts`` line."""
        host, port = self.address
        return f"[{host}]:{port} {self.host_key.get_name()} {self.host_key.get_base64()}"

    def start(self) -> Self:
        self._listener = _Listener(self._bind, self._connection)
        threading.Thread(target=self._listener.serve_forever, args=(0.05,), daemon=True,
                         name="netconf-agent").start()
        return self

    def stop(self) -> None:
        """Stop listening and end every session."""
        self._stopping.set()
        if self._listener is not None:
            self._listener.shutdown()
            self._listener.server_close()
        with self._lock:
            transports = list(self._transports)
        for transport in transports:
            transport.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _connection(self, sock: socket.socket) -> None:
        transport = paramiko.Transport(sock)
        with self._lock:
            self._transports.add(transport)
        try:
            transport.add_server_key(self.host_key)
            interface = _Interface(self)
            transport.start_server(server=interface)
            channel = None
            while channel is None and transport.is_active() and not self._stopping.is_set():
                channel = transport.accept(0.1)
            if channel is not None and interface.subsystem.wait(5):
                self._session(_Channel(channel))
        except (EOFError, OSError, paramiko.SSHException, _FramingError) as exc:
            _log.debug("NETCONF session ended: %r", exc)
        except Exception:
            _log.exception("NETCONF session failed")
        finally:
            transport.close()
            with self._lock:
                self._transports.discard(transport)

    def _session(self, channel: _Channel) -> None:
        if self.stall:
            while not self._stopping.wait(0.05) and not channel.channel.closed:
                pass
            return
        uris = [BASE_10, *([BASE_11] if self.base11 else []),
                *(f"{ns}?module={module}" for ns, module in MODULES.items())]
        hello = _root(BASE_NS, "hello")
        _node(hello, "capabilities", *(("capability", uri) for uri in uris))
        channel.write(_leaves(hello, [("session-id", next(self._session_ids))]))
        theirs = _parse(channel.read())
        if theirs is None or theirs.tag != f"{{{BASE_NS}}}hello":
            return
        offered = {(c.text or "").strip() for c in theirs.iter(f"{{{BASE_NS}}}capability")}
        channel.chunked = self.base11 and BASE_11 in offered
        self.framings.append("1.1" if channel.chunked else "1.0")
        done = False
        while not done:
            reply, done = self._answer(channel.read())
            channel.write(reply)

    def _answer(self, message: bytes) -> tuple[Any, bool]:
        """The ``rpc-reply`` to one message, and whether the session ends after it."""
        rpc = _parse(message)
        reply = _root(BASE_NS, "rpc-reply")
        if rpc is None or rpc.tag != f"{{{BASE_NS}}}rpc":
            reply.append(_error("malformed-message", "expected a well-formed <rpc>", "rpc"))
            return reply, False
        reply.attrib.update(rpc.attrib)  # RFC 6241 §4.2: echo message-id and the rest
        operation = next((child for child in rpc if isinstance(child.tag, str)), None)
        name = etree.QName(operation).localname if operation is not None else ""
        self.rpcs.append(name)
        if "message-id" not in rpc.attrib:
            reply.append(_error("missing-attribute", "<rpc> has no message-id", "rpc"))
        elif operation is None or etree.QName(operation).namespace != BASE_NS or \
                name not in ("get", "close-session"):
            reply.append(_error("operation-not-supported", f"operation {name!r} is not supported"))
        elif name == "close-session":
            _node(reply, "ok")
        else:
            self._stopping.wait(self.delay)
            reply.append(self._get(operation))
        return reply, name == "close-session"

    def _get(self, operation: Any) -> Any:
        spec = operation.find(f"{{{BASE_NS}}}filter")
        if spec is None:
            return copy.deepcopy(self.tree)
        if spec.get("type", "subtree") != "subtree":
            return _error("operation-not-supported", "only subtree filters are supported")
        found = select(self.tree, spec) if len(spec) else None  # an empty filter selects nothing
        return etree.Element(self.tree.tag, nsmap=self.tree.nsmap) if found is None else found


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=True)


def _parse(message: bytes) -> Any | None:
    try:
        return etree.fromstring(message.strip(), _PARSER)
    except etree.XMLSyntaxError:
        return None
