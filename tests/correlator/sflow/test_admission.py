"""Which agents are believed, from which sources: the switches of the facts and of the
configuration, and declared relays."""

import ipaddress
import pickle

import pytest

from correlator.sflow.admission import Admission, admission_for
from inventory.devices import SwitchConfig
from inventory.facts import SwitchFact


def _packed(text: str) -> bytes:
    return ipaddress.ip_address(text).packed


def test_discovered_and_configured_switches_with_their_own_addresses():
    admission = admission_for(
        [SwitchFact("leaf01", mgmt_address="192.0.2.1", sflow_agent="10.0.0.1"),
         SwitchFact("leaf02", mgmt_address="2001:db8::2"),
         SwitchFact("leaf03", mgmt_address="leaf03.example")],  # a name: not resolved here
        [SwitchConfig("spine01", "192.0.2.9")], relays=["2001:db8:f::/48"])
    assert len(admission) == 3
    cases = [("10.0.0.1", "10.0.0.1", None), ("10.0.0.1", "192.0.2.1", None),
             ("10.0.0.1", "::ffff:192.0.2.1", None), ("10.0.0.1", "192.0.2.9", "spoofed-source"),
             ("2001:db8::2", "2001:db8::2", None), ("2001:db8::2", "2001:db8:f::7", None),
             ("192.0.2.9", "192.0.2.9", None), ("192.0.2.1", "192.0.2.1", "unknown-agent")]
    assert [admission.check(_packed(agent), source) for agent, source, _ in cases] == [
        reason for _, _, reason in cases]


def test_it_crosses_to_a_worker_process_intact():
    admission = Admission([("10.0.0.1",)], relays=["198.51.100.0/24"])
    copy = pickle.loads(pickle.dumps(admission))
    assert [copy.check(_packed("10.0.0.1"), s) for s in ("198.51.100.4", "198.51.101.4")] == [
        None, "spoofed-source"]


def test_a_relay_that_is_not_an_address_is_an_error():
    with pytest.raises(ValueError, match="'nowhere' does not appear to be an IPv4 or IPv6"):
        Admission([], relays=["nowhere"])
