"""The NETCONF agent, driven over real SSH by ncclient and by a raw paramiko client."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import paramiko
import pytest
from lxml import etree
from ncclient import manager
from ncclient.operations import RPCError
from ncclient.transport import AuthenticationError, SessionError

from inventory.facts import FactSet
from simulator.generator import FabricSpec, generate_facts
from simulator.netconf_server import (
    BASE_NS,
    ETH_NS,
    IF_NS,
    LLDP_NS,
    NetconfServer,
    select,
)

HELLO_10 = (f'<hello xmlns="{BASE_NS}"><capabilities>'
            "<capability>urn:ietf:params:netconf:base:1.0</capability>"
            "</capabilities></hello>").encode()
HELLO_11 = HELLO_10.replace(b"</capabilities>", b"<capability>urn:ietf:params:netconf:base:1.1"
                            b"</capability></capabilities>")
GET_LLDP = (f'<rpc xmlns="{BASE_NS}" message-id="42" xmlns:x="urn:x" x:trace="abc"><get>'
            f'<filter type="subtree"><lldp xmlns="{LLDP_NS}"><state/></lldp></filter>'
            "</get></rpc>").encode()


@pytest.fixture(scope="module")
def facts() -> FactSet:
    return generate_facts(FabricSpec(nodes=2, rails=1, leaves_per_rail=2, spines=2,
                                     vfs_per_pf=1))


@pytest.fixture(scope="module")
def host_key() -> paramiko.PKey:
    return paramiko.RSAKey.generate(2048)


@pytest.fixture
def server(facts: FactSet, host_key: paramiko.PKey) -> Iterator[NetconfServer]:
    with NetconfServer.from_facts(facts, "leaf01", host_key=host_key) as agent:
        yield agent


def _connect(agent: NetconfServer, password: str = "admin", timeout: float = 10.0):
    host, port = agent.address
    return manager.connect(host=host, port=port, username="admin", password=password,
                           hostkey_verify=False, allow_agent=False, look_for_keys=False,
                           timeout=timeout)


@pytest.mark.parametrize(("base11", "framing"), [(True, "1.1"), (False, "1.0")])
def test_ncclient_gets_both_containers_in_either_framing(
        facts: FactSet, host_key: paramiko.PKey, base11: bool, framing: str) -> None:
    with NetconfServer.from_facts(facts, "leaf01", host_key=host_key, base11=base11) as agent:
        with _connect(agent) as session:
            assert ("urn:ietf:params:netconf:base:1.1" in session.server_capabilities) is base11
            data = session.get().data_ele
        assert agent.framings == [framing]
        assert agent.rpcs == ["get", "close-session"]
    assert [etree.QName(child).text for child in data] == [f"{{{LLDP_NS}}}lldp",
                                                           f"{{{IF_NS}}}interfaces"]
    assert data.findtext(f"{{{LLDP_NS}}}lldp/{{{LLDP_NS}}}state/{{{LLDP_NS}}}chassis-id") == \
        facts.switches[0].chassis_id
    assert len(data.findall(f".//{{{LLDP_NS}}}neighbor")) == 3  # a host and two spines


def test_subtree_filter_picks_top_containers_and_list_entries(server: NetconfServer) -> None:
    with _connect(server) as session:
        only_interfaces = session.get(filter=("subtree", f'<interfaces xmlns="{IF_NS}"/>'))
        one_port = session.get(filter=("subtree", f'<lldp xmlns="{LLDP_NS}"><interfaces>'
                                       "<interface><name>Ethernet2</name><neighbors/>"
                                       "</interface></interfaces></lldp>")).data_ele
    assert [etree.QName(c).localname for c in only_interfaces.data_ele] == ["interfaces"]
    ports = one_port.findall(f".//{{{LLDP_NS}}}interface")
    assert [p.findtext(f"{{{LLDP_NS}}}name") for p in ports] == ["Ethernet2"]
    assert ports[0].find(f"{{{LLDP_NS}}}state") is None  # not selected
    assert one_port.findtext(f".//{{{LLDP_NS}}}system-name") == "spine01"


def test_port_speed_is_a_prefixed_identityref_with_its_namespace_in_scope(
        server: NetconfServer) -> None:
    with _connect(server) as session:
        data = session.get(filter=("subtree", f'<interfaces xmlns="{IF_NS}"/>')).data_ele
    speed = data.find(f".//{{{ETH_NS}}}port-speed")
    prefix, _, name = speed.text.partition(":")
    assert (speed.nsmap[prefix], name) == (ETH_NS, "SPEED_400GB")
    assert data.findtext(f".//{{{ETH_NS}}}mac-address") == "0c:42:a1:01:00:00"


@pytest.mark.parametrize("operation", [
    '<frobnicate xmlns="urn:example:ops"/>',
    f'<get-config xmlns="{BASE_NS}"><source><running/></source></get-config>',
])
def test_unknown_operations_get_an_rpc_error_and_the_session_goes_on(
        server: NetconfServer, operation: str) -> None:
    with _connect(server) as session:
        with pytest.raises(RPCError) as caught:
            session.dispatch(etree.fromstring(operation))
        assert caught.value.tag == "operation-not-supported"
        assert caught.value.type == "protocol"
        assert session.get(filter=("subtree", f'<lldp xmlns="{LLDP_NS}"/>')).ok


def test_wrong_password_fails_authentication(server: NetconfServer) -> None:
    with pytest.raises(AuthenticationError):
        _connect(server, password="wrong")
    with _connect(server) as session:  # and the server still serves
        assert session.connected


def test_stalled_agent_never_says_hello(facts: FactSet, host_key: paramiko.PKey) -> None:
    with NetconfServer.from_facts(facts, "leaf01", host_key=host_key, stall=True) as agent:
        started = time.monotonic()
        with pytest.raises(SessionError, match="timed out"):  # the hello's own 0.3 s timeout
            _connect(agent, timeout=0.3)
        assert time.monotonic() - started >= 0.3


class _Raw:
    """A bare SSH ``netconf`` subsystem channel, to drive framing byte by byte."""

    def __init__(self, agent: NetconfServer) -> None:
        self.ssh = paramiko.SSHClient()
        self.ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        host, port = agent.address
        self.ssh.connect(host, port, "admin", "admin", allow_agent=False, look_for_keys=False,
                         timeout=30)
        self.channel = self.ssh.get_transport().open_session()
        self.channel.settimeout(30)
        self.channel.invoke_subsystem("netconf")
        self.buffer = b""

    def read_until(self, end: bytes) -> bytes:
        while end not in self.buffer:
            data = self.channel.recv(65536)
            assert data, f"closed before {end!r}"
            self.buffer += data
        message, _, self.buffer = self.buffer.partition(end)
        return message

    def close(self) -> None:
        self.ssh.close()


@pytest.fixture
def raw(server: NetconfServer) -> Iterator[_Raw]:
    client = _Raw(server)
    yield client
    client.close()


def test_end_of_message_framing_when_the_client_offers_only_1_0(
        server: NetconfServer, raw: _Raw) -> None:
    hello = etree.fromstring(raw.read_until(b"]]>]]>"))
    capabilities = [c.text for c in hello.iter(f"{{{BASE_NS}}}capability")]
    assert "urn:ietf:params:netconf:base:1.1" in capabilities
    assert hello.findtext(f"{{{BASE_NS}}}session-id") == "1"
    raw.channel.sendall(HELLO_10 + b"]]>]]>" + GET_LLDP + b"]]>]]>")
    reply = etree.fromstring(raw.read_until(b"]]>]]>"))
    assert reply.get("message-id") == "42"
    assert reply.get("{urn:x}trace") == "abc"  # every <rpc> attribute comes back
    assert reply.findtext(f".//{{{LLDP_NS}}}chassis-id") == "0c:42:a1:01:00:00"
    assert server.framings == ["1.0"]


def test_chunked_framing_reassembles_chunks(server: NetconfServer, raw: _Raw) -> None:
    raw.read_until(b"]]>]]>")
    chunks = b"".join(b"\n#%d\n%s" % (len(part), part)
                      for part in (GET_LLDP[:7], GET_LLDP[7:100], GET_LLDP[100:]))
    raw.channel.sendall(HELLO_11 + b"]]>]]>" + chunks + b"\n##\n")
    assert raw.read_until(b"\n") == b""  # a chunk header starts with LF
    header = raw.read_until(b"\n")
    size = int(header.removeprefix(b"#"))
    body = raw.read_until(b"\n##\n")
    assert len(body) == size
    assert etree.fromstring(body).get("message-id") == "42"
    assert server.framings == ["1.1"]


@pytest.mark.parametrize("garbage", [
    b"not xml]]>]]>",  # not a hello
    HELLO_11 + b"]]>]]>\n#zz\n",  # a chunk header without a size
    HELLO_11 + b"]]>]]>\n#0\n",  # chunk sizes start at 1
    HELLO_11 + b"]]>]]>\n#3\nabc\n##\n\n##\n",  # end of chunks before any chunk
    HELLO_10 + b"]]>]]>" + b"x" * (5 << 20),  # no end of message in sight
])
def test_broken_hello_or_framing_ends_the_session_not_the_server(
        server: NetconfServer, raw: _Raw, garbage: bytes) -> None:
    raw.read_until(b"]]>]]>")
    with contextlib.suppress(EOFError, OSError):  # the agent may hang up mid-send
        raw.channel.sendall(garbage)
    raw.buffer = b""
    with pytest.raises(AssertionError, match="closed before"):
        raw.read_until(b"never")
    with _connect(server) as session:
        assert session.get(filter=("subtree", f'<lldp xmlns="{LLDP_NS}"/>')).ok


def test_rpc_without_message_id_gets_missing_attribute(raw: _Raw) -> None:
    raw.read_until(b"]]>]]>")
    raw.channel.sendall(HELLO_10 + b"]]>]]>" + GET_LLDP.replace(b' message-id="42"', b"")
                        + b"]]>]]>")
    reply = etree.fromstring(raw.read_until(b"]]>]]>"))
    assert reply.findtext(f".//{{{BASE_NS}}}error-tag") == "missing-attribute"
    assert reply.get("{urn:x}trace") == "abc"


def test_malformed_rpc_gets_malformed_message(server: NetconfServer, raw: _Raw) -> None:
    raw.read_until(b"]]>]]>")
    raw.channel.sendall(HELLO_10 + b"]]>]]><rpc><unclosed>]]>]]>")
    reply = etree.fromstring(raw.read_until(b"]]>]]>"))
    assert reply.findtext(f".//{{{BASE_NS}}}error-tag") == "malformed-message"
    assert reply.get("message-id") is None


SUBTREE = [
    ("<d><a><b/></a></d>", "<a><b>1</b><c>2</c></a>", "<a><b>1</b></a>"),
    ("<d><a/></d>", "<a><b>1</b><c>2</c></a>", "<a><b>1</b><c>2</c></a>"),
    ("<d><a><e><k>y</k></e></a></d>",
     "<a><e><k>x</k><v>1</v></e><e><k>y</k><v>2</v></e></a>", "<a><e><k>y</k><v>2</v></e></a>"),
    ("<d><a><e><k>y</k><v/></e></a></d>",
     "<a><e><k>y</k><v>2</v><w>3</w></e></a>", "<a><e><k>y</k><v>2</v></e></a>"),
    ("<d><a><e><k>z</k></e></a></d>", "<a><e><k>y</k></e></a>", None),
    ("<d><zz/></d>", "<a/>", None),
    ('<d><a xmlns="urn:other"/></d>', "<a><b/></a>", None),
]


@pytest.mark.parametrize(("spec", "data", "expected"), SUBTREE)
def test_select_follows_rfc_6241_subtree_filtering(spec: str, data: str,
                                                   expected: str | None) -> None:
    root = etree.fromstring(f"<d>{data}</d>")
    found = select(root, etree.fromstring(spec))
    if expected is None:
        assert found is None
    else:
        assert etree.tostring(found).decode() == f"<d>{expected}</d>"
