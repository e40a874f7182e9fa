"""OpenConfig XML payloads -> facts, and malformed payloads -> DecodeError."""

from __future__ import annotations

import pytest
from lxml import etree

from inventory.errors import DecodeError
from inventory.facts import IdSubtype, InterfaceFact, LldpNeighborFact, Reporter
from inventory.netconf import mapping

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
LLDP = "http://openconfig.net/yang/lldp"
IF = "http://openconfig.net/yang/interfaces"
ETH = "http://openconfig.net/yang/interfaces/ethernet"


def _data(*parts: str) -> etree._Element:
    return etree.fromstring(f'<data xmlns="{BASE}">{"".join(parts)}</data>')


def _interface(name: str = "Ethernet1", state: str = "", ethernet: str = "") -> str:
    return (f'<interfaces xmlns="{IF}"><interface><name>{name}</name><state>{state}</state>'
            f'<ethernet xmlns="{ETH}"><state>{ethernet}</state></ethernet>'
            "</interface></interfaces>")


def _neighbor(state: str, port: str = "Ethernet1", extra: str = "") -> str:
    return (f'<lldp xmlns="{LLDP}"><interfaces><interface><name>{port}</name><neighbors>'
            f"<neighbor><id>7</id><state>{state}</state>{extra}</neighbor>"
            "</neighbors></interface></interfaces></lldp>")


INTERFACES = [
    ("a whole interface",
     _interface(state="<name>Ethernet1</name><description>to-gpu01</description>"
                "<ifindex>1001</ifindex><oper-status>UP</oper-status>",
                ethernet="<mac-address>0C:42:A1:01:00:00</mac-address>"
                "<port-speed>SPEED_400GB</port-speed>"),
     InterfaceFact("leaf01", "Ethernet1", 1001, 400_000_000_000, "up", "0c:42:a1:01:00:00",
                   "to-gpu01")),
    ("identityref prefixed with a declared prefix",
     _interface(ethernet='<port-speed xmlns:oc-eth="' + ETH + '">oc-eth:SPEED_2500MB'
                "</port-speed>"),
     InterfaceFact("leaf01", "Ethernet1", speed_bps=2_500_000_000)),
    ("identityref prefixed with the module name",
     _interface(ethernet="<port-speed>openconfig-if-ethernet:SPEED_100GB</port-speed>"),
     InterfaceFact("leaf01", "Ethernet1", speed_bps=100_000_000_000)),
    ("unknown speed, prefixed oper-status",
     _interface(state="<oper-status>oc-if:LOWER_LAYER_DOWN</oper-status>",
                ethernet="<port-speed>oc-eth:SPEED_UNKNOWN</port-speed>"),
     InterfaceFact("leaf01", "Ethernet1", oper_status="lower_layer_down")),
    ("no state at all",
     f'<interfaces xmlns="{IF}"><interface><name>Ethernet9</name></interface></interfaces>',
     InterfaceFact("leaf01", "Ethernet9")),
    ("name only in state",
     f'<interfaces xmlns="{IF}"><interface><state><name>Ethernet5</name><ifindex>0</ifindex>'
     "</state></interface></interfaces>",
     InterfaceFact("leaf01", "Ethernet5", ifindex=0)),
]


@pytest.mark.parametrize(("payload", "expected"), [c[1:] for c in INTERFACES],
                         ids=[c[0] for c in INTERFACES])
def test_interfaces(payload: str, expected: InterfaceFact) -> None:
    assert mapping.interfaces("leaf01", _data(payload)) == [expected]


MAC_NEIGHBOR = ("<system-name>gpu01</system-name><chassis-id>b8:3f:d3:00:00:00</chassis-id>"
                "<chassis-id-type>MAC_ADDRESS</chassis-id-type>"
                "<port-id>B8-3F-D2-00-00-00</port-id><port-id-type>MAC_ADDRESS</port-id-type>"
                "<port-description>ens1f0np0</port-description>")
NEIGHBORS = [
    ("host by MACs",
     _neighbor(MAC_NEIGHBOR + "<management-address>10.0.0.5</management-address>"),
     LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "b8:3f:d3:00:00:00",
                      IdSubtype.MAC, "b8:3f:d2:00:00:00", IdSubtype.MAC, "gpu01", "ens1f0np0",
                      "10.0.0.5", "netconf")),
    ("switch by name, prefixed types, mgmt-addresses list",
     _neighbor("<chassis-id>spine01</chassis-id><chassis-id-type>oc-lldp-types:LOCAL"
               "</chassis-id-type><port-id>Ethernet1</port-id>"
               "<port-id-type>oc-lldp-types:INTERFACE_NAME</port-id-type>",
               extra="<mgmt-addresses><mgmt-address><address>192.0.2.1</address><state>"
                     "<address>192.0.2.1</address></state></mgmt-address></mgmt-addresses>"),
     LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "spine01", IdSubtype.LOCAL,
                      "Ethernet1", IdSubtype.IFNAME, mgmt_address="192.0.2.1",
                      source="netconf")),
    ("other id types",
     _neighbor("<chassis-id>10.1.1.1</chassis-id><chassis-id-type>NETWORK_ADDRESS"
               "</chassis-id-type><port-id>uplink</port-id><port-id-type>INTERFACE_ALIAS"
               "</port-id-type>"),
     LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "10.1.1.1", IdSubtype.IP,
                      "uplink", IdSubtype.IFALIAS, source="netconf")),
    ("unknown and missing types",
     _neighbor("<chassis-id>c1</chassis-id><chassis-id-type>CHASSIS_COMPONENT</chassis-id-type>"
               "<port-id>p1</port-id>"),
     LldpNeighborFact(Reporter.SWITCH, "leaf01", "Ethernet1", "c1", IdSubtype.OTHER,
                      "p1", IdSubtype.OTHER, source="netconf")),
]


@pytest.mark.parametrize(("payload", "expected"), [c[1:] for c in NEIGHBORS],
                         ids=[c[0] for c in NEIGHBORS])
def test_neighbors(payload: str, expected: LldpNeighborFact) -> None:
    assert mapping.neighbors("leaf01", _data(payload)) == [expected]


def test_ports_without_neighbours_and_empty_replies_give_nothing() -> None:
    lonely = (f'<lldp xmlns="{LLDP}"><interfaces><interface><name>Ethernet3</name>'
              "<neighbors/></interface></interfaces></lldp>")
    assert mapping.neighbors("leaf01", _data(lonely)) == []
    assert mapping.interfaces("leaf01", _data()) == []
    assert mapping.chassis_id("leaf01", _data()) == ""


@pytest.mark.parametrize(("chassis", "chassis_type", "expected"), [
    ("0C:42:A1:01:00:00", "MAC_ADDRESS", "0c:42:a1:01:00:00"),
    ("0c42.a101.0000", "oc-lldp-types:MAC_ADDRESS", "0c:42:a1:01:00:00"),
    ("leaf01", "LOCAL", "leaf01"),
])
def test_chassis_id(chassis: str, chassis_type: str, expected: str) -> None:
    data = _data(f'<lldp xmlns="{LLDP}"><state><chassis-id>{chassis}</chassis-id>'
                 f"<chassis-id-type>{chassis_type}</chassis-id-type></state></lldp>")
    assert mapping.chassis_id("leaf01", data) == expected


MALFORMED = [
    (mapping.interfaces, _interface(state="<ifindex>-3</ifindex>"),
     "leaf01: interfaces/interface[name=Ethernet1]/state/ifindex: '-3' is not a uint32"),
    (mapping.interfaces, _interface(state="<ifindex>4294967296</ifindex>"),
     "leaf01: interfaces/interface[name=Ethernet1]/state/ifindex: '4294967296' is not a uint32"),
    (mapping.interfaces, _interface(state="<oper-status>SLEEPY</oper-status>"),
     "leaf01: interfaces/interface[name=Ethernet1]/state/oper-status: 'SLEEPY' is not an "
     "oper-status"),
    (mapping.interfaces, _interface(ethernet="<port-speed>oc-eth:SPEED_FAST</port-speed>"),
     "leaf01: interfaces/interface[name=Ethernet1]/ethernet/state/port-speed: "
     "'oc-eth:SPEED_FAST' is not an ETHERNET_SPEED identity"),
    (mapping.interfaces, _interface(ethernet="<mac-address>0c:42:zz</mac-address>"),
     "leaf01: interfaces/interface[name=Ethernet1]/ethernet/state/mac-address: '0c:42:zz' "
     "is not a MAC address"),
    (mapping.interfaces, f'<interfaces xmlns="{IF}"><interface><state/></interface>'
     "</interfaces>", "leaf01: interfaces/interface[1]: no name"),
    (mapping.neighbors, _neighbor("<port-id>p1</port-id>"),
     "leaf01: lldp/interfaces/interface[name=Ethernet1]/neighbors/neighbor[id=7]/state/"
     "chassis-id: missing"),
    (mapping.neighbors, _neighbor("<chassis-id>c1</chassis-id>"),
     "leaf01: lldp/interfaces/interface[name=Ethernet1]/neighbors/neighbor[id=7]/state/"
     "port-id: missing"),
    (mapping.neighbors, _neighbor("<chassis-id>gpu01</chassis-id><chassis-id-type>MAC_ADDRESS"
                                  "</chassis-id-type><port-id>p1</port-id>"),
     "leaf01: lldp/interfaces/interface[name=Ethernet1]/neighbors/neighbor[id=7]/state/"
     "chassis-id: 'gpu01' is not a MAC address"),
    (mapping.neighbors, _neighbor(MAC_NEIGHBOR, port=""),
     "leaf01: lldp/interfaces/interface[1]: no name"),
    (mapping.chassis_id, f'<lldp xmlns="{LLDP}"><state><chassis-id>xyz</chassis-id>'
     "<chassis-id-type>MAC_ADDRESS</chassis-id-type></state></lldp>",
     "leaf01: lldp/state/chassis-id: 'xyz' is not a MAC address"),
]


@pytest.mark.parametrize(("read", "payload", "message"), MALFORMED)
def test_malformed_content_raises_decode_error_naming_the_leaf(read, payload: str,
                                                               message: str) -> None:
    with pytest.raises(DecodeError) as caught:
        read("leaf01", _data(payload))
    assert str(caught.value) == message


@pytest.mark.parametrize("read", [mapping.interfaces, mapping.neighbors, mapping.chassis_id])
def test_a_missing_data_element_is_a_decode_error(read) -> None:
    with pytest.raises(DecodeError, match="leaf01: the reply has no <data> element"):
        read("leaf01", None)


def test_filters_are_well_formed_subtree_filters() -> None:
    roots = [etree.fromstring(f) for f in mapping.FILTERS]
    assert [etree.QName(r).text for r in roots] == [f"{{{LLDP}}}lldp", f"{{{IF}}}interfaces"]
    assert roots[1].find(f".//{{{ETH}}}port-speed") is not None
