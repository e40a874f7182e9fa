"""Attribution of one interval, with every expected value computed by hand.

Wilson 95 % intervals used below (z = 1.959964): 30 of 45 -> [0.520705, 0.786411],
10 of 45 -> [0.125447, 0.362693], 15 of 45 -> [0.213589, 0.479295].
Ratio-estimator intervals for equal frames (share R of c of n samples: R ± z·sqrt(((1-R)²c
+ R²(n-c)) / n²)): 30 of 45 -> [0.528934, 0.804399], 10 of 45 -> [0.100754, 0.343691],
15 of 45 -> [0.195601, 0.471066].
A share's interval is the wider of the two on each side.
"""

from dataclasses import replace

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.attribution.attribute import UNATTRIBUTED, attribute
from correlator.collect.rates import Rates
from tests.correlator.attribution.conftest import A0, A1, B0, B1, FRAME, T0, datagram, flows
from topology.build import build_graph

UPLINK = "port:leaf01/Ethernet3"


def _interval(*samples, start=T0, end=T0 + 10):
    acc = Accumulator(start)
    acc.add(datagram([s for group in samples for s in group]), start + 1)
    return acc.take(end)


def _by_name(shares):
    return {s.name: s for s in shares}


def test_uplink_is_where_the_samples_say(fabric):
    assert fabric.indexes.port_for_sample("127.1.0.1", 1003) == UPLINK
    assert fabric.peer(UPLINK) == "port:spine01/Ethernet1"


def test_shares_apportion_the_counter_bytes_with_the_wider_interval(fabric):
    interval = _interval(flows(A0, A1, 30), flows(B0, B1, 10), flows("10.9.9.9", A1, 5))
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0, {"out_octets": 2e7}, {},
                           speed_bps=400_000_000_000, out_utilization=0.04)}
    result = attribute(fabric, interval, rates)  # 2e8 B: inside 187,830,000 ± 54,879,076
    (link,) = [x for x in result.links if x.port == UPLINK and x.direction == "out"]
    assert (link.samples, link.estimated_bytes, link.counter_bytes) == (45, 45 * FRAME * 1000,
                                                                        2e8)
    assert link.peer == "port:spine01/Ethernet1" and link.utilization == 0.04
    tenants = _by_name(link.tenants)
    assert [s.name for s in link.tenants] == ["tenant:a", "tenant:b", UNATTRIBUTED]
    a, b, nobody = tenants["tenant:a"], tenants["tenant:b"], tenants[UNATTRIBUTED]
    assert (a.samples, b.samples, nobody.samples) == (30, 10, 5)
    assert a.share == pytest.approx(2 / 3) and b.share == pytest.approx(2 / 9)
    assert (a.share_low, a.share_high) == pytest.approx((0.520705, 0.804399), abs=1e-6)
    # b's 10 samples are too few for the normal interval above: 2/9 x exp(1.96 x 0.06198 / (2/9))
    assert (b.share_low, b.share_high) == pytest.approx((0.100754, 0.383863), abs=1e-6)
    assert a.bytes == pytest.approx(2e8 * 2 / 3) and a.exact
    assert (a.low, a.high) == pytest.approx((0.520705 * 2e8, 0.804399 * 2e8), rel=1e-5)
    assert nobody.bytes == pytest.approx(2e8 / 9)
    assert _by_name(link.jobs).keys() == {"job:a/llm", "job:b/cv", UNATTRIBUTED}
    assert [s.name for s in link.pairs] == ["job:a/llm -> job:a/llm", "job:b/cv -> job:b/cv",
                                            f"{UNATTRIBUTED} -> job:a/llm"]
    assert link.traffic == {"roce-write": 45}
    assert result.unattributed_samples == 5 and result.unknown_ports == {}


def test_without_counters_bytes_are_the_sampled_estimate_with_its_own_bound(fabric):
    link = attribute(fabric, _interval(flows(A0, A1, 30), flows(B0, B1, 10))).links[0]
    a = _by_name(link.tenants)["tenant:a"]
    assert link.counter_bytes is None and not a.exact
    assert a.bytes == 30 * FRAME * 1000
    margin = 1.959963984540054 / 30 ** 0.5  # 0.357839
    assert (a.low, a.high) == pytest.approx((a.bytes * (1 - margin), a.bytes * (1 + margin)))


def test_pods_are_cut_to_the_top_k_plus_other(fabric):
    link = attribute(fabric, _interval(flows(A0, A1, 30), flows(B0, B1, 10),
                                       flows(A1, A0, 5)), top_pods=1).links[0]
    assert [(s.name, s.samples) for s in link.pods] == [("pod:a/llm-worker-0", 30),
                                                        ("other", 15)]
    assert link.pods[1].share == pytest.approx(15 / 45)
    assert (link.pods[1].share_low, link.pods[1].share_high) == pytest.approx(
        (0.195601, 0.503881), abs=1e-6)  # 15 samples: above, 1/3 x exp(1.96 x 0.07027 x 3)


def test_a_port_with_counters_and_no_samples_says_so(fabric):
    quiet = "port:leaf01/Ethernet4"
    rates = {quiet: Rates("leaf01", "Ethernet4", T0 + 10, 10.0,
                          {"in_octets": 5e8, "out_octets": 1e8}, {})}
    result = attribute(fabric, _interval(flows(A0, A1, 3)), rates)
    quiet_links = [x for x in result.links if x.port == quiet]
    assert [(x.direction, x.status, x.counter_bytes, x.tenants) for x in quiet_links] == [
        ("in", "no samples", 5e9, ()), ("out", "no samples", 1e9, ())]


def test_samples_of_an_unknown_port_are_counted_not_attributed(fabric):
    result = attribute(fabric, _interval(flows(A0, A1, 4, source=77, input=77)))
    assert result.links == () and result.unknown_ports == {"127.1.0.1:77": 4}


def test_an_agent_that_does_not_name_its_data_source_counts_for_the_input_port(fabric):
    """pmacct's sfprobe says data source 0:1 whatever port it samples."""
    result = attribute(fabric, _interval(flows(A0, A1, 4, source=1, input=1001,
                                               output=0x3FFFFFFF)))
    assert [(x.port, x.direction, x.samples) for x in result.links] == [
        ("port:leaf01/Ethernet1", "in", 4)]


def test_cnps_count_against_the_job_they_throttle(fabric):
    link = attribute(fabric, _interval(flows(A1, A0, 8), flows(B1, A0, 2, traffic="roce-cnp"),
                                       flows(A1, B0, 6, traffic="roce-cnp"))).links[0]
    assert [(s.name, s.samples) for s in link.throttled] == [("job:b/cv", 6), ("job:a/llm", 2)]
    assert link.traffic == {"roce-cnp": 8, "roce-write": 8}


def _reused(facts, at):
    """The facts where 10.101.0.3 is a/llm-worker-1's until ``at``, then b/cv-worker-1's
    (whose own address moves away)."""
    interfaces = []
    for fact in facts.pod_interfaces:
        if fact.pod == "llm-worker-1":
            fact = replace(fact, valid_from=0.0, valid_until=at)
        elif fact.pod == "cv-worker-1":
            interfaces.append(replace(fact, ipv4="10.101.0.3/16", valid_from=at))
            fact = replace(fact, valid_from=0.0, valid_until=at)
        interfaces.append(fact)
    return build_graph(replace(facts, pod_interfaces=tuple(interfaces)))


def test_fixed_ip_reused_at_the_interval_boundary_goes_to_each_owner(facts):
    fabric = _reused(facts, T0 + 10)
    acc = Accumulator(T0)
    acc.add(datagram(flows(A1, A0, 6)), T0 + 5)
    before = attribute(fabric, acc.take(T0 + 10)).links[0]
    acc.add(datagram(flows(A1, A0, 4)), T0 + 11)
    after = attribute(fabric, acc.take(T0 + 20)).links[0]
    assert [(s.name, s.samples) for s in before.pods] == [("pod:a/llm-worker-1", 6)]
    assert [(s.name, s.samples) for s in after.pods] == [("pod:b/cv-worker-1", 4)]
    assert [s.name for s in after.tenants] == ["tenant:b"]


def test_reuse_inside_an_interval_is_split_by_a_cut(facts):
    fabric = _reused(facts, T0 + 4)
    acc = Accumulator(T0)
    acc.add(datagram(flows(A1, A0, 3)), T0 + 2)
    acc.cut(T0 + 4)
    acc.add(datagram(flows(A1, A0, 5)), T0 + 6)
    link = attribute(fabric, acc.take(T0 + 10)).links[0]
    assert {s.name: s.samples for s in link.pods} == {"pod:a/llm-worker-1": 3,
                                                      "pod:b/cv-worker-1": 5}


def test_counter_bytes_known_only_within_a_range_widen_the_bytes_bounds(fabric):
    """The counters allow the uplink 1.5e8 to 2.5e8 bytes in the interval (read on
    either side of its ends): tenant a's bytes stay 2/3 of the interpolated 2e8, their
    bounds run from its low share of the least to its high share of the most."""
    interval = _interval(flows(A0, A1, 30), flows(B0, B1, 10), flows("10.9.9.9", A1, 5))
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0, {"out_octets": 2e7}, {},
                           speed_bps=400_000_000_000, out_utilization=0.04,
                           ranges={"out_octets": (1.5e7, 2.5e7)})}
    (link,) = [x for x in attribute(fabric, interval, rates).links
               if x.port == UPLINK and x.direction == "out"]
    a = _by_name(link.tenants)["tenant:a"]
    assert link.counter_check == "ok" and a.bytes == pytest.approx(2e8 * 2 / 3)
    assert (a.low, a.high) == pytest.approx((0.520705 * 1.5e8, 0.804399 * 2.5e8), rel=1e-5)
