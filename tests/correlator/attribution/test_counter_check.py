"""Counter bytes checked against the sampled estimate, with every value computed by hand.

leaf01:Ethernet3 sends 30 samples of tenant a and 10 of tenant b, 4,174-byte frames at
rate 1,000: the estimate is 40 x 4,174 x 1,000 = 166,960,000 B with the variance
40 x 4,174² x 1,000² B², so the standard error is sqrt(40) x 4,174,000 = 26,398,694 B
and the 95 % bound 166,960,000 ± 51,740,489 B.
"""

import logging
import math
import re

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.attribution.attribute import attribute
from correlator.collect.rates import Rates
from correlator.data import to_data
from correlator.engine import Engine
from correlator.service.exporter import Exposition
from correlator.sflow.accounting import Totals
from correlator.view import View
from inventory.counters import PortCounters
from tests.correlator.attribution.conftest import A0, A1, B0, B1, FRAME, T0, datagram, flows

Z = 1.959963984540054
UPLINK = "port:leaf01/Ethernet3"
ESTIMATE = 40 * FRAME * 1000
BOUND = Z * math.sqrt(40) * FRAME * 1000


def _interval(a: int = 30, b: int = 10):
    acc = Accumulator(T0)
    acc.add(datagram([*flows(A0, A1, a), *flows(B0, B1, b)]), T0 + 1)
    return acc.take(T0 + 10)


def _uplink(fabric, counter_bytes: float, a: int = 30, b: int = 10):
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0,
                           {"out_octets": counter_bytes / 10}, {})}
    result = attribute(fabric, _interval(a, b), rates)
    (link,) = [x for x in result.links if (x.port, x.direction) == (UPLINK, "out")]
    return link


def test_the_bound_as_computed_by_hand():
    assert (ESTIMATE, round(BOUND)) == (166_960_000, 51_740_489)


@pytest.mark.parametrize(("counter_bytes", "check"), [
    (ESTIMATE + BOUND * 0.999, "ok"), (ESTIMATE - BOUND * 0.999, "ok"),
    (ESTIMATE + BOUND * 1.001, "outside"), (ESTIMATE - BOUND * 1.001, "outside")])
def test_counters_just_inside_the_bound_are_trusted_just_outside_not(fabric, counter_bytes,
                                                                      check):
    link = _uplink(fabric, counter_bytes)
    assert (link.counter_check, link.counter_bytes) == (check, pytest.approx(counter_bytes))
    a = {s.name: s for s in link.tenants}["tenant:a"]
    assert a.share == 0.75  # shares are the samples' either way
    assert a.exact is (check == "ok")
    expected = 0.75 * counter_bytes if check == "ok" else 30 * FRAME * 1000
    assert a.bytes == pytest.approx(expected)
    counted_low = 0.598060 * counter_bytes  # Wilson's, wider below than the ratio's
    estimated_low = 30 * FRAME * 1000 - Z * math.sqrt(30) * FRAME * 1000
    assert a.low == pytest.approx(
        min(counted_low, estimated_low) if check == "outside" else counted_low, rel=1e-6)


def test_counters_outside_give_way_to_the_estimate_within_both_intervals(fabric):
    """Either the counters or the sample may be wrong: the bytes are the estimate, within
    the hull of its own interval (estimate ± 1.96 x its standard error) and the one
    apportioned from the counters (share bounds x 2e10). Share bounds, equal frames:
    a (30 of 40) ratio 0.75 ± 0.134190 is wider above than Wilson's [0.598060, 0.858129];
    b (10 of 40) Wilson's [0.141871, 0.401940] is wider above than the ratio's 0.25 ± 0.134190,
    and with fewer than 30 samples the ratio's on the log scale wider still:
    0.25 x exp(0.134190 / 0.25) = 0.427613.
    """
    link = _uplink(fabric, 2e10)  # 120 times the estimate: stale, or another port's
    assert (link.counter_check, link.counter_bytes, link.estimated_bytes) == (
        "outside", 2e10, ESTIMATE)
    a, b = link.tenants
    margin_a = Z * math.sqrt(30) * FRAME * 1000  # 1.96 x the standard error of a's bytes
    margin_b = Z * math.sqrt(10) * FRAME * 1000
    assert (a.name, a.bytes, a.exact) == ("tenant:a", 30 * FRAME * 1000, False)
    assert (a.low, a.high) == pytest.approx((30 * FRAME * 1000 - margin_a, 0.884190 * 2e10),
                                            rel=1e-6)
    assert (b.name, b.bytes, b.exact) == ("tenant:b", 10 * FRAME * 1000, False)
    assert (b.low, b.high) == pytest.approx((10 * FRAME * 1000 - margin_b, 0.427613 * 2e10),
                                            rel=1e-6)
    low = _uplink(fabric, 1e6)  # far below: the counters' interval is the lower one
    a = low.tenants[0]
    assert (low.counter_check, a.bytes) == ("outside", 30 * FRAME * 1000)
    assert (a.low, a.high) == pytest.approx((0.598060 * 1e6, 30 * FRAME * 1000 + margin_a),
                                            rel=1e-6)
    assert to_data(link)["counter_check"] == "outside"  # the API and the attribution log


def test_too_few_samples_or_no_counters_are_not_checked(fabric):
    few = _uplink(fabric, 2e10, a=20, b=9)  # 29 samples
    assert few.counter_check == "" and all(s.exact for s in few.tenants)
    assert few.tenants[0].bytes == pytest.approx(2e10 * 20 / 29)
    thirty = _uplink(fabric, 2e10, a=20, b=10)
    assert thirty.counter_check == "outside"
    result = attribute(fabric, _interval())
    (unchecked,) = [x for x in result.links if (x.port, x.direction) == (UPLINK, "out")]
    assert (unchecked.counter_check, unchecked.counter_bytes) == ("", None)


def test_the_metric_says_which_directions_disagree(fabric):
    result = attribute(fabric, _interval(), {UPLINK: Rates(
        "leaf01", "Ethernet3", T0 + 10, 10.0, {"out_octets": 2e9}, {})})
    text = Exposition(lambda: View(fabric, result, ready=True)).render().decode()
    lines = [line for line in text.splitlines()
             if line.startswith("fabcorr_link_bytes_mismatch")]
    assert lines == ['fabcorr_link_bytes_mismatch{direction="out",port="Ethernet3",'
                     'switch="leaf01"} 1.0']
    agreeing = attribute(fabric, _interval(), {UPLINK: Rates(
        "leaf01", "Ethernet3", T0 + 10, 10.0, {"out_octets": ESTIMATE / 10}, {})})
    text = Exposition(lambda: View(fabric, agreeing, ready=True)).render().decode()
    assert re.findall(r"^fabcorr_link_bytes_mismatch\{.*\} (\S+)$", text, re.M) == ["0.0"]


def test_the_engine_logs_the_port_once_per_interval(fabric, caplog):
    engine = Engine(telemetry_interval_s=10.0)
    engine.readings([PortCounters("leaf01", "Ethernet3", T0 + t, {"out_octets": v})
                     for t, v in ((0.0, 0), (5.0, 10**10), (10.0, 2 * 10**10))])
    with caplog.at_level(logging.WARNING, logger="correlator.engine"):
        view = engine.close(fabric, _interval(), Totals())
    (link,) = [x for x in view.attribution.links if (x.port, x.direction) == (UPLINK, "out")]
    assert (link.counter_bytes, link.counter_check) == (2e10, "outside")
    assert [r.getMessage() for r in caplog.records] == [
        "counter bytes outside the sampled estimate's 95% bound, the estimate used, interval "
        f"{T0:.3f}: leaf01/Ethernet3 out counters 20000000000 B, sampled {ESTIMATE} B "
        "(40 samples)"]
