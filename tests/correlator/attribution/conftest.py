"""A four-node, two-tenant fabric and builders of decoded sFlow samples for it.

::

    gpu01 a/llm-worker-0 10.101.0.2 -- leaf01:Ethernet1
    gpu03 a/llm-worker-1 10.101.0.3 -- leaf02:Ethernet1
    gpu02 b/cv-worker-0  10.101.0.4 -- leaf01:Ethernet2
    gpu04 b/cv-worker-1  10.101.0.5 -- leaf02:Ethernet2
    leaf01 (sFlow agent 127.1.0.1) and leaf02 (127.1.0.2) each cabled to spine01 and spine02
"""

import ipaddress

import pytest

from correlator.attribution.estimate import Counters, Share, apportion
from correlator.sflow.records import Datagram, FlowSample, Packet
from simulator.generator import FabricSpec, JobSpec, generate_facts
from tests.attribution_oracle.estimate import rank
from topology.build import build_graph

SPEC = FabricSpec(nodes=4, rails=1, leaves_per_rail=2, spines=2, vfs_per_pf=2,
                  jobs=(JobSpec("a", "llm", pods=2), JobSpec("b", "cv", pods=2)))
LEAF01 = ipaddress.ip_address("127.1.0.1").packed
A0, A1, B0, B1 = "10.101.0.2", "10.101.0.3", "10.101.0.4", "10.101.0.5"
FRAME = 4174
T0 = 1767229200.0  # an hour after the generated pods started


@pytest.fixture(scope="module")
def facts():
    return generate_facts(SPEC)


@pytest.fixture(scope="module")
def fabric(facts):
    return build_graph(facts)


def packet(src: str, dst: str, traffic: str = "roce-write", opcode: int = 0x0A) -> Packet:
    return Packet(traffic, -1, 4, ipaddress.ip_address(src).packed,
                  ipaddress.ip_address(dst).packed, 26, 2, 17, 49152, 4791, opcode, 7, 1, False)


def flows(src: str, dst: str, count: int, *, source: int = 1003, input: int = 1001,
          output: int = 1003, rate: int = 1000, frame: int = FRAME,
          traffic: str = "roce-write") -> list[FlowSample]:
    """``count`` samples of one flow seen by the data source ``source``."""
    return [FlowSample(i, 0, source, rate, rate * i, 0, input, output, frame, 4,
                       packet(src, dst, traffic)) for i in range(count)]


def datagram(samples, agent: bytes = LEAF01) -> Datagram:
    return Datagram(agent, 0, 1, 1000, list(samples))


def shares(groups: dict, counters: Counters | None = None, top: int | None = None
           ) -> tuple[Share, ...]:
    """Every group's share as fabcorr apportions it, largest first; the sums are the core's
    integers (given as floats, they must be whole)."""
    whole = {}
    for name, sums in groups.items():
        assert all(float(x).is_integer() for x in sums), f"{name}: {sums} not whole"
        whole[name] = tuple(int(x) for x in sums)
    return apportion(rank(whole, top), counters)
