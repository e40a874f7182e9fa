"""One interval's samples, resolved: each link direction's traffic by tenant, job and pod.

Samples name a port by (sFlow agent, ifIndex); their addresses name pod interfaces
through the IP index at the segment's start time. That join runs in the Rust core over
the interval's packed flow tables (:mod:`correlator.attribution.join`): it sums each
link direction by sender tenant, job and pod, by (sender job, receiver job) and by
throttled job, in exact integers, and keeps the tables; here each direction's counters
are read and checked, and the core apportions its tables by them (the shares of
:mod:`correlator.attribution.estimate`), named. Traffic is
attributed to its *sender* (the source address); the (source job, destination job) pairs
keep the other end. An address no pod interface owned goes to ``unattributed``. CNPs are
also counted by the job they throttle (the CNP's destination): those are the senders
that congestion on the reverse direction slows down.

A port with counters but no samples still gets its :class:`LinkTraffic`, which says
``no samples``; samples of a port the topology does not know are counted in
:attr:`Attribution.unknown_ports`. Pods and job pairs (and the jobs CNPs throttle) are
listed per link direction up to ``top_pods``, the rest summed as ``other``: a link
carrying thousands of pairs gives a bounded answer.

Counter bytes are checked against the samples (:func:`counter_check`): where they lie
outside the sampled estimate's 95 % bound, the counters are not trusted for that
interval: a group's bytes are the sampled estimate, within the hull of the estimate's own
95 % interval and the interval apportioned from the counters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from correlator import _wire
from correlator.attribution.accumulate import IN, Interval
from correlator.attribution.estimate import FEW_SAMPLES, Z95, Counters, Share
from correlator.attribution.join import (
    NO_JOB,
    NO_TENANT,
    UNATTRIBUTED,
    fabric_join,
)
from correlator.collect.rates import Rates
from correlator.sflow.records import address_text
from topology.graph import FabricGraph

__all__ = ["CHECKED", "NO_JOB", "NO_TENANT", "OUTSIDE", "UNATTRIBUTED", "Attribution",
           "LinkTraffic", "attribute", "counter_check"]

CNP = "roce-cnp"
CHECKED, OUTSIDE = "ok", "outside"  # LinkTraffic.counter_check, "" when not checked
MIN_CHECK_SAMPLES = FEW_SAMPLES
"""Fewer samples than this and the estimate's normal bound is not trusted to judge the
counters."""


@dataclass(frozen=True, slots=True)
class LinkTraffic:
    """One direction of one port over one interval (``in``: what the port received).

    ``counter_bytes`` are the bytes from the port counters (``None`` without them);
    shares apportion them, unless ``counter_check`` is ``outside``: then the counters
    contradict the samples and shares give the sampled estimate (``exact`` False) within
    the hull of its interval and the counters'.
    ``counter_check`` is ``ok`` when the counters were checked and agree, empty when not
    checked. ``pods``, ``pairs`` and ``throttled`` are cut to the top K plus ``other``.
    """

    port: str
    direction: str
    peer: str
    start: float
    seconds: float
    samples: int
    estimated_bytes: float
    counter_bytes: float | None
    utilization: float | None
    tenants: tuple[Share, ...]
    jobs: tuple[Share, ...]
    pods: tuple[Share, ...]
    pairs: tuple[Share, ...]
    traffic: dict[str, int]
    throttled: tuple[Share, ...]
    counter_check: str = ""

    @property
    def status(self) -> str:
        return "ok" if self.samples else "no samples"


@dataclass(frozen=True, slots=True)
class Attribution:
    """Every link direction of one interval, and what could not be placed.

    ``provisional``: some link's counters were carried on past their last reading (the
    readings after the interval's end had not come); ``replaces``: this is a correction of
    the interval's earlier, provisional attribution, with the counters since read.
    """

    start: float
    seconds: float
    links: tuple[LinkTraffic, ...]
    unknown_ports: dict[str, int]  # "agent:ifIndex" -> samples
    unattributed_samples: int
    provisional: bool = False
    replaces: bool = False


def attribute(fabric: FabricGraph, interval: Interval, rates: Mapping[str, Rates] | None = None,
              top_pods: int = 10) -> Attribution:
    """Resolve and apportion ``interval``; ``rates`` by port ID give the exact bytes."""
    rates = rates or {}
    join = fabric_join(fabric)
    joined, found, unknown_rows, unattributed = join.core.attribute(
        [(segment.start, *table) for segment in interval.segments for table in segment.tables],
        top_pods)
    links = []
    for link, (port_id, direction, samples, estimated, variance, traffic) in enumerate(found):
        port = join.ports[port_id]
        links.append(_link(fabric, port, _DIRECTIONS[direction], interval, rates.get(port),
                           _Sampled(joined, link, samples, float(estimated), float(variance),
                                    {_TRAFFIC[i]: n for i, n in traffic})))
    sampled = {(link.port, link.direction) for link in links}
    for port, port_rates in rates.items():
        for direction in _DIRECTIONS:
            if (port, direction) not in sampled and port in fabric.graph:
                links.append(_link(fabric, port, direction, interval, port_rates, None))
    links.sort(key=lambda link: (link.port, link.direction))
    unknown = {f"{address_text(agent)}:{ifindex}": samples
               for agent, ifindex, samples in sorted(unknown_rows)}
    return Attribution(interval.start, interval.seconds, tuple(links), unknown, unattributed)


_DIRECTIONS = tuple(_wire.DIRECTIONS)
_TRAFFIC = tuple(_wire.TRAFFIC)


class _Sampled(NamedTuple):
    """What the core's join summed for one link direction (its ``link`` place in
    ``joined``): samples, estimated bytes and their variance, samples per traffic class."""

    joined: _wire.Joined
    link: int
    samples: int
    estimated: float
    variance: float
    traffic: dict[str, int]


def _link(fabric: FabricGraph, port: str, direction: str, interval: Interval,
          rates: Rates | None, sampled: _Sampled | None) -> LinkTraffic:
    counter_bytes, utilization = _exact(rates, direction, interval.seconds)
    samples, estimated, variance = sampled[2:5] if sampled is not None else (0, 0.0, 0.0)
    check = counter_check(counter_bytes, samples, estimated, variance)
    counters = None if counter_bytes is None else Counters(
        counter_bytes, _known(rates, direction, interval.seconds), check == OUTSIDE)
    tenants, jobs, pods, pairs, throttled = _NO_SHARES if sampled is None else \
        sampled.joined.shares(sampled.link, counters)
    return LinkTraffic(port, direction, fabric.peer(port) or "", interval.start,
                       interval.seconds, samples, estimated, counter_bytes, utilization,
                       tenants, jobs, pods, pairs,
                       dict(sorted(sampled.traffic.items())) if sampled is not None else {},
                       throttled, check)


_NO_SHARES: tuple[tuple[Share, ...], ...] = ((),) * 5


def counter_check(counter_bytes: float | None, samples: int, estimated: float,
                  variance: float) -> str:
    """Whether a direction's counter bytes agree with its samples: ``outside`` when they
    lie beyond ``estimated ± 1.96·sqrt(variance)`` (the sampled estimate's 95 % bound),
    ``ok`` inside it, ``""`` without counters or with fewer than
    :data:`MIN_CHECK_SAMPLES` samples.

    An estimate of 900 B with a variance of 2,500 B² has the bound 900 ± 97.998 B
    (1.96 x 50):

    >>> counter_check(997.9, 30, 900.0, 2500.0), counter_check(998.0, 30, 900.0, 2500.0)
    ('ok', 'outside')
    >>> counter_check(999.0, 29, 900.0, 2500.0), counter_check(None, 30, 900.0, 2500.0)
    ('', '')
    """
    if counter_bytes is None or samples < MIN_CHECK_SAMPLES:
        return ""
    return OUTSIDE if abs(counter_bytes - estimated) > Z95 * math.sqrt(variance) else CHECKED


def _known(rates: Rates | None, direction: str, seconds: float
           ) -> tuple[float, float] | None:
    """The least and the most bytes the counters allow the direction in the interval."""
    found = rates.octets_range(direction) if rates is not None else None
    return (found[0] * seconds, found[1] * seconds) if found else None


def _exact(rates: Rates | None, direction: str, seconds: float
           ) -> tuple[float | None, float | None]:
    if rates is None:
        return None, None
    counter = "in_octets" if direction == IN else "out_octets"
    per_second = rates.per_second.get(counter)
    utilization = rates.in_utilization if direction == IN else rates.out_utilization
    return (per_second * seconds if per_second is not None else None), utilization
