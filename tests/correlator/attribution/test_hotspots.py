"""Hotspots: thresholds held for N intervals, culprits, victims, the noisy-neighbour verdict."""

import math

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.attribution.attribute import attribute
from correlator.attribution.hotspots import HotspotTracker, Thresholds, hot_kinds
from correlator.collect.rates import Rates
from inventory.errors import ConfigError
from tests.correlator.attribution.conftest import A0, A1, B0, B1, T0, datagram, flows

UPLINK = "port:leaf01/Ethernet3"
LIMITS = Thresholds(utilization=0.8, pfc_per_s=100, ecn_per_s=1000, discards_per_s=1,
                    intervals=2)


def _step(tracker, fabric, start, rates, samples):
    acc = Accumulator(start)
    acc.add(datagram(samples), start + 1)
    interval = acc.take(start + 10)
    return tracker.update(attribute(fabric, interval, rates), rates)


def _rates(at, out_utilization=0.5, **per_second):
    return {UPLINK: Rates("leaf01", "Ethernet3", at, 10.0, dict(per_second), {},
                          speed_bps=400_000_000_000, out_utilization=out_utilization,
                          in_utilization=0.1)}


def _traffic():
    # tenant a sends 80 of 100 samples out of the uplink, tenant b 20; CNPs towards a's
    # sender come back in on the same port
    return (flows(A0, A1, 80) + flows(B0, B1, 20)
            + flows(A1, A0, 9, input=1003, output=1001, traffic="roce-cnp"))


def test_a_direction_hot_for_n_intervals_becomes_a_hotspot_with_culprits_and_victims(fabric):
    tracker = HotspotTracker(LIMITS)
    assert _step(tracker, fabric, T0, _rates(T0 + 10, 0.9), _traffic()) == []
    (hot,) = _step(tracker, fabric, T0 + 10, _rates(T0 + 20, 0.95,
                                                    **{"pfc_rx_pause/3": 250.0}), _traffic())
    assert (hot.port, hot.direction, hot.peer) == (UPLINK, "out", "port:spine01/Ethernet1")
    assert hot.kinds == ("utilization", "pfc") and hot.severity == "critical"  # 250 >= 2x100
    assert (hot.start, hot.end, hot.active) == (T0, None, True)
    assert hot.signals == {"utilization": 0.95, "pfc": 250.0}
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 80)]
    assert [s.name for s in hot.culprit_jobs] == ["job:a/llm"]
    assert [s.name for s in hot.victims] == ["tenant:b"]
    assert [s.name for s in hot.victim_jobs] == ["job:b/cv"]
    assert [(s.name, s.samples) for s in hot.throttled] == [("job:a/llm", 9)]
    assert hot.noisy_neighbour.startswith("a sends 80% (")
    assert hot.noisy_neighbour.endswith(") of a link that b also use")


def test_a_hotspot_ends_at_the_first_cool_interval(fabric):
    tracker = HotspotTracker(LIMITS)
    for start in (T0, T0 + 10):
        _step(tracker, fabric, start, _rates(start + 10, 0.9), _traffic())
    assert _step(tracker, fabric, T0 + 20, _rates(T0 + 30, 0.2), _traffic()) == []
    (ended,) = tracker.ended
    assert (ended.start, ended.end, ended.severity) == (T0, T0 + 20, "warning")


def test_one_hot_interval_is_not_enough_and_a_break_restarts_the_count(fabric):
    tracker = HotspotTracker(LIMITS)
    hot_cool_hot = [0.9, 0.1, 0.9]
    results = [_step(tracker, fabric, T0 + 10 * i, _rates(T0 + 10 * i + 10, u), _traffic())
               for i, u in enumerate(hot_cool_hot)]
    assert results == [[], [], []] and tracker.ended == []


@pytest.mark.parametrize(("signal", "hot", "kind"), [
    ("queue_ecn_marked/UC3", (UPLINK, "out"), "ecn"),
    ("out_discards", (UPLINK, "out"), "discards"),
    ("queue_dropped/UC3", (UPLINK, "out"), "discards"),
    # what leaf01's uplink receives is what spine01 sends: judged as spine01's out
    ("in_discards", ("port:spine01/Ethernet1", "out"), "discards"),
    ("pfc_tx_pause/3", ("port:spine01/Ethernet1", "out"), "pfc")])
def test_each_counter_family_makes_its_own_direction_hot(fabric, signal, hot, kind):
    tracker = HotspotTracker(Thresholds(intervals=1))
    rates = _rates(T0 + 10, 0.1, **{signal: 5000.0})
    (found,) = _step(tracker, fabric, T0, rates, _traffic())
    assert ((found.port, found.direction), found.kinds) == (hot, (kind,))


def test_both_ends_of_a_cable_make_one_hotspot_with_the_signals_of_both(fabric):
    """spine01 sees the uplink busy on its receive counters, leaf01 marks ECN sending."""
    spine = "port:spine01/Ethernet1"
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0,
                           {"queue_ecn_marked/3": 5000.0}, {}, out_utilization=0.5),
             spine: Rates("spine01", "Ethernet1", T0 + 10, 10.0, {}, {},
                          in_utilization=0.93)}
    (hot,) = _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0, rates, _traffic())
    assert (hot.port, hot.direction, hot.kinds) == (UPLINK, "out", ("utilization", "ecn"))
    assert hot.signals == {"utilization": 0.93, "ecn": 5000.0}


def _cable(leaf_utilization, leaf_range, spine_utilization, spine_range):
    """The uplink's send counters at leaf01 and its receive counters at spine01."""
    return {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0, {}, {},
                          out_utilization=leaf_utilization,
                          ranges={"out_octets": leaf_range} if leaf_range else {}),
            "port:spine01/Ethernet1": Rates("spine01", "Ethernet1", T0 + 10, 10.0, {}, {},
                                            in_utilization=spine_utilization,
                                            ranges={"in_octets": spine_range}
                                            if spine_range else {})}


@pytest.mark.parametrize(("leaf", "spine", "hot"), [
    # a stale agent's 0.82 against a streamed far end's 0.78, agreeing: the far end's word
    ((0.82, (3.0e10, 4.5e10)), (0.78, (3.8e10, 3.9e10)), None),
    # the same, the other way round: the better-pinned end is hot
    ((0.78, (3.0e10, 4.5e10)), (0.82, (4.0e10, 4.1e10)), 0.82),
    # the leaf pins it better, whichever end reads higher
    ((0.81, (4.0e10, 4.1e10)), (0.79, (3.0e10, 4.5e10)), 0.81),
    # ranges that just touch still agree
    ((0.82, (3.9e10, 4.5e10)), (0.79, (3.8e10, 3.9e10)), None),
    ((0.79, (3.8e10, 3.9e10)), (0.82, (3.9e10, 4.5e10)), None),
    # contradicting ends (a counter reading nothing): the larger, however sharp the other
    ((0.0, (0.0, 0.0)), (0.93, (4.5e10, 4.8e10)), 0.93),
    ((0.85, (4.0e10, 4.1e10)), (0.79, (3.0e10, 3.1e10)), 0.85),
    # a range known at one end only, or at neither: the larger
    ((0.79, (3.9e10, 4.0e10)), (0.85, None), 0.85),
    ((0.79, None), (0.85, None), 0.85),
])
def test_a_cables_utilization_is_the_sharper_ends_when_they_agree_else_the_larger(fabric, leaf,
                                                                              spine, hot):
    """Both ends count the same bytes: where they agree, the larger of two estimates is
    biased upwards; where they contradict each other, one end is wrong."""
    found = _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0,
                  _cable(*leaf, *spine), _traffic())
    assert [h.signals["utilization"] for h in found] == ([hot] if hot else [])


def test_a_dominant_tenant_alone_is_no_noisy_neighbour(fabric):
    tracker = HotspotTracker(Thresholds(intervals=1))
    (hot,) = _step(tracker, fabric, T0, _rates(T0 + 10, 0.9), flows(A0, A1, 50))
    assert hot.noisy_neighbour == "" and hot.victims == ()


@pytest.mark.parametrize("key", ["utilization", "pfc_per_s", "ecn_per_s", "discards_per_s",
                                 "dominance"])
def test_a_rate_threshold_must_be_positive_and_any_positive_one_will_do(key):
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError) as error:
            Thresholds(**{key: bad}).validate()
        assert error.value.key == key
    smallest = math.nextafter(0.0, 1.0)  # 5e-324
    assert Thresholds(**{key: smallest}).validate() == Thresholds(**{key: smallest})


@pytest.mark.parametrize("key", ["intervals", "culprits"])
def test_intervals_and_culprits_must_be_at_least_one(key):
    with pytest.raises(ConfigError) as error:
        Thresholds(**{key: 0}).validate()
    assert error.value.key == key  # also when the other one is at its limit, 1
    other = {"intervals": "culprits", "culprits": "intervals"}[key]
    with pytest.raises(ConfigError) as error:
        Thresholds(**{key: 0, other: 1}).validate()
    assert error.value.key == key
    assert Thresholds(intervals=1, culprits=1).validate() == Thresholds(intervals=1, culprits=1)


def test_what_a_port_sends_is_read_from_its_peers_ingress_samples(fabric):
    """leaf01:Ethernet3 marks ECN on its way out to spine01; only spine01 samples that
    traffic (entering its Ethernet1), and CNPs come back sampled by leaf01 itself."""
    tracker = HotspotTracker(Thresholds(intervals=1))
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0,
                           {"queue_ecn_marked/3": 5000.0}, {}, out_utilization=0.5)}
    spine = [s._replace(source_index=1001, input=1001, output=1002)
             for s in flows(A0, A1, 30) + flows(B0, B1, 10)]
    cnps = flows(B1, B0, 4, source=1003, input=1003, output=1002, traffic="roce-cnp")
    acc = Accumulator(T0)
    acc.add(datagram(spine, agent=bytes([127, 1, 0, 3])), T0 + 1)
    acc.add(datagram(cnps), T0 + 2)
    interval = acc.take(T0 + 10)
    (hot,) = tracker.update(attribute(fabric, interval, rates), rates)
    assert (hot.port, hot.direction, hot.kinds) == (UPLINK, "out", ("ecn",))
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 30)]
    assert [(s.name, s.samples) for s in hot.victims] == [("tenant:b", 10)]
    assert [(s.name, s.samples) for s in hot.throttled] == [("job:b/cv", 4)]


def test_culprits_are_the_fewest_top_senders_making_half_the_bytes(fabric):
    tracker = HotspotTracker(Thresholds(intervals=1))
    even = flows(A0, A1, 40) + flows(B0, B1, 35) + flows(A1, B1, 25)
    (hot,) = _step(tracker, fabric, T0, _rates(T0 + 10, 0.9), even)
    assert [s.name for s in hot.culprit_jobs] == ["job:a/llm"]  # 65 % of the samples
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 65)]
    three = flows(A0, A1, 40) + flows(B0, B1, 35) + flows("10.9.9.9", B1, 25)
    (hot,) = _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0,
                   _rates(T0 + 10, 0.9), three)
    assert [s.name for s in hot.culprits] == ["tenant:a", "tenant:b"]  # 40 %, then 75 %
    assert hot.victims == ()  # the unattributed 25 % is nobody's


def test_a_hotspot_on_a_port_known_only_from_its_peer_still_names_the_culprits(fabric):
    """Only spine01 reports here: its receive counters and its samples of the uplink."""
    spine = "port:spine01/Ethernet1"
    rates = {spine: Rates("spine01", "Ethernet1", T0 + 10, 10.0, {}, {}, in_utilization=0.9)}
    samples = [s._replace(source_index=1001, input=1001, output=1002)
               for s in flows(A0, A1, 30) + flows(B0, B1, 10)]
    acc = Accumulator(T0)
    acc.add(datagram(samples, agent=bytes([127, 1, 0, 3])), T0 + 1)
    (hot,) = HotspotTracker(Thresholds(intervals=1)).update(
        attribute(fabric, acc.take(T0 + 10), rates), rates)
    assert (hot.port, hot.direction, hot.peer) == (UPLINK, "out", spine)
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 30)]


def test_a_hotspot_keeps_the_story_of_its_best_sampled_hot_interval(fabric):
    """Culprits and victims come from the hot interval with the most samples on the
    direction: a thin interval later in the episode does not replace them, a richer one
    does."""
    tracker = HotspotTracker(LIMITS)
    _step(tracker, fabric, T0, _rates(T0 + 10, 0.9), _traffic())  # 100 samples, a leads
    (hot,) = _step(tracker, fabric, T0 + 10, _rates(T0 + 20, 0.9), flows(B0, B1, 3))
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 80)]
    assert [(s.name, s.samples) for s in hot.victims] == [("tenant:b", 20)]
    assert [(s.name, s.samples) for s in hot.throttled] == [("job:a/llm", 9)]
    (hot,) = _step(tracker, fabric, T0 + 20, _rates(T0 + 30, 0.9),
                   flows(B0, B1, 90) + flows(A0, A1, 11))  # 101 samples: b leads now
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:b", 90)]
    assert [(s.name, s.samples) for s in hot.victims] == [("tenant:a", 11)]
    assert hot.throttled == () and hot.start == T0


# -- every threshold at its limit and one step (the next float) either side ----------------

BOUNDS = {"utilization": 0.8, "pfc": 100.0, "ecn": 1000.0, "discards": 1.0}


@pytest.mark.parametrize("kind", BOUNDS)
def test_a_signal_is_hot_at_its_threshold_and_not_one_step_below(kind):
    limit = BOUNDS[kind]
    below, above = math.nextafter(limit, 0.0), math.nextafter(limit, math.inf)
    assert hot_kinds({kind: limit}, LIMITS) == {kind: 1.0}
    assert hot_kinds({kind: below}, LIMITS) == {}
    assert hot_kinds({kind: above}, LIMITS) == {kind: above / limit}
    assert above / limit > 1.0


@pytest.mark.parametrize(("signal", "limit"), [
    ("pfc_rx_pause/3", 100.0), ("queue_ecn_marked/UC3", 1000.0), ("out_discards", 1.0)])
def test_the_tracker_sees_a_counter_at_its_threshold_and_not_one_step_below(fabric, signal,
                                                                           limit):
    tracker = HotspotTracker(Thresholds(intervals=1))
    (hot,) = _step(tracker, fabric, T0, _rates(T0 + 10, 0.1, **{signal: limit}), _traffic())
    assert (hot.port, hot.direction, hot.severity) == (UPLINK, "out", "warning")
    below = math.nextafter(limit, 0.0)
    tracker = HotspotTracker(Thresholds(intervals=1))
    assert _step(tracker, fabric, T0, _rates(T0 + 10, 0.1, **{signal: below}), _traffic()) == []


def test_utilization_at_its_threshold_is_hot_and_one_step_below_is_not(fabric):
    (hot,) = _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0, _rates(T0 + 10, 0.8),
                   _traffic())
    assert (hot.kinds, hot.signals) == (("utilization",), {"utilization": 0.8})
    below = math.nextafter(0.8, 0.0)
    assert _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0,
                 _rates(T0 + 10, below), _traffic()) == []


def test_severity_is_critical_at_exactly_twice_a_threshold(fabric):
    def severity(pfc):
        (hot,) = _step(HotspotTracker(Thresholds(intervals=1)), fabric, T0,
                       _rates(T0 + 10, 0.1, **{"pfc_rx_pause/3": pfc}), _traffic())
        return hot.severity
    assert 200.0 / 100.0 == 2.0 and math.nextafter(200.0, 0.0) / 100.0 < 2.0
    assert severity(200.0) == "critical"
    assert severity(math.nextafter(200.0, 0.0)) == "warning"
    assert severity(math.nextafter(200.0, math.inf)) == "critical"


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_a_hotspot_needs_exactly_intervals_hot_intervals_in_a_row(fabric, n):
    tracker = HotspotTracker(Thresholds(intervals=n))
    found = [_step(tracker, fabric, T0 + 10 * i, _rates(T0 + 10 * i + 10, 0.9), _traffic())
             for i in range(n + 1)]
    assert found[:n - 1] == [[]] * (n - 1)  # N-1 hot intervals: not yet
    assert [len(f) for f in found[n - 1:]] == [1, 1]  # the N-th and after
    assert found[n - 1][0].start == T0


# Shares below are of equal frames, so a tenant's share is exactly its samples / 100.

def _hot(fabric, samples, **limits):
    (hot,) = _step(HotspotTracker(Thresholds(intervals=1, **limits)), fabric, T0,
                   _rates(T0 + 10, 0.9), samples)
    return hot


def _mix(a, b, nobody):
    return flows(A0, A1, a) + flows(B0, B1, b) + flows("10.9.9.9", A1, nobody)


def test_a_culprit_making_exactly_half_the_bytes_is_enough_and_just_under_is_not(fabric):
    half = _hot(fabric, _mix(50, 30, 20))
    assert half.culprits[0].share == 0.5
    assert ([s.name for s in half.culprits], [s.name for s in half.victims]) == (
        ["tenant:a"], ["tenant:b"])
    under = _hot(fabric, _mix(49, 31, 20))
    assert ([s.name for s in under.culprits], under.victims) == (["tenant:a", "tenant:b"], ())


def test_culprits_are_cut_at_the_culprits_threshold(fabric):
    # 40 % nobody's, then a and b at 30 % each (ties go by name)
    one = _hot(fabric, _mix(30, 30, 40), culprits=1)
    assert ([s.name for s in one.culprits], [s.name for s in one.victims]) == (
        ["tenant:a"], ["tenant:b"])
    two = _hot(fabric, _mix(30, 30, 40), culprits=2)
    assert ([s.name for s in two.culprits], two.victims) == (["tenant:a", "tenant:b"], ())


def test_culprits_stop_at_the_last_named_group_short_of_half(fabric):
    hot = _hot(fabric, _mix(20, 20, 60))  # a and b make 40 %: both, and nobody else
    assert ([s.name for s in hot.culprits], hot.victims) == (["tenant:a", "tenant:b"], ())


def _verdicts_around(fabric, key, limit):
    """The 50/30/20 mix's hotspot with ``key`` at ``limit``, and the noisy-neighbour
    verdicts one float step below and above it."""
    at = _hot(fabric, _mix(50, 30, 20), **{key: limit})
    below, above = (_hot(fabric, _mix(50, 30, 20), **{key: math.nextafter(limit, toward)})
                    .noisy_neighbour for toward in (0.0, 1.0))
    return at, below, above


def test_a_tenant_with_exactly_the_dominance_share_is_a_noisy_neighbour(fabric):
    at, below, above = _verdicts_around(fabric, "dominance", 0.5)
    assert at.noisy_neighbour.startswith("a sends 50% (")
    assert at.noisy_neighbour.endswith(") of a link that b also use")
    assert (below, above) == (at.noisy_neighbour, "")


def test_a_neighbour_with_exactly_the_neighbour_share_counts(fabric):
    at, below, above = _verdicts_around(fabric, "neighbour_share", 0.3)
    assert at.victims[0].share == 0.3
    assert at.noisy_neighbour.endswith(") of a link that b also use")
    assert (below, above) == (at.noisy_neighbour, "")


def test_a_later_hot_interval_with_exactly_as_many_samples_keeps_the_first_story(fabric):
    tracker = HotspotTracker(LIMITS)
    _step(tracker, fabric, T0, _rates(T0 + 10, 0.9), _traffic())  # 100 out, a leads
    tie = flows(B0, B1, 90) + flows(A0, A1, 10) + flows(A1, A0, 9, input=1003, output=1001,
                                                        traffic="roce-cnp")
    (hot,) = _step(tracker, fabric, T0 + 10, _rates(T0 + 20, 0.9), tie)  # 100 out, as before
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:a", 80)]
    (hot,) = _step(tracker, fabric, T0 + 20, _rates(T0 + 30, 0.9),
                   flows(B0, B1, 91) + flows(A0, A1, 10))  # one sample more: b's story
    assert [(s.name, s.samples) for s in hot.culprits] == [("tenant:b", 91)]
