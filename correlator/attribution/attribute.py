"""One interval's samples, resolved: each link direction's traffic by tenant, job and pod.

Samples name a port by (sFlow agent, ifIndex); their addresses name pod interfaces
through the IP index at the segment's start time. That join runs in the Rust core over
the interval's packed flow tables (:mod:`correlator.attribution.join`): Python gets one
table per link direction of sums by sender tenant, job and pod, by (sender job, receiver
job) and by throttled job, with exact integer sums, and apportions them here. Traffic is
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from correlator import _wire
from correlator.attribution.accumulate import IN, Interval
from correlator.attribution.estimate import (
    FEW_SAMPLES,
    NONE,
    OTHER,
    Z95,
    Counters,
    Ranked,
    Share,
    apportion,
)
from correlator.attribution.join import (
    NO_JOB,
    NO_TENANT,
    UNATTRIBUTED,
    FabricJoin,
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


@dataclass(slots=True)
class _Groups:
    """Sums of one link direction: its tenants, jobs, pods, (sender job, receiver job)
    pairs and throttled jobs ranked (the last three cut to the top K), each group's sums
    (samples, estimated bytes, packets, variance of the estimated bytes)."""

    samples: int = 0
    estimated: float = 0.0
    variance: float = 0.0
    tenants: Ranked = NONE
    jobs: Ranked = NONE
    pods: Ranked = NONE
    pairs: Ranked = NONE
    throttled: Ranked = NONE
    traffic: dict[str, int] = field(default_factory=dict)


def attribute(fabric: FabricGraph, interval: Interval, rates: Mapping[str, Rates] | None = None,
              top_pods: int = 10) -> Attribution:
    """Resolve and apportion ``interval``; ``rates`` by port ID give the exact bytes."""
    rates = rates or {}
    join = fabric_join(fabric)
    found, unknown_rows, unattributed = join.core.attribute(
        [(segment.start, *table) for segment in interval.segments for table in segment.tables],
        top_pods)
    groups = {(join.ports[port], _DIRECTIONS[direction]): _groups(join, *sums)
              for port, direction, *sums in found}
    unknown = {f"{address_text(agent)}:{ifindex}": samples
               for agent, ifindex, samples in sorted(unknown_rows)}
    links = [_link(fabric, port, direction, group, interval, rates.get(port))
             for (port, direction), group in groups.items()]
    for port, port_rates in rates.items():
        for direction in ("in", "out"):
            if (port, direction) not in groups and port in fabric.graph:
                links.append(_link(fabric, port, direction, _Groups(), interval, port_rates))
    links.sort(key=lambda link: (link.port, link.direction))
    return Attribution(interval.start, interval.seconds, tuple(links), unknown, unattributed)


_DIRECTIONS = tuple(_wire.DIRECTIONS)
_TRAFFIC = tuple(_wire.TRAFFIC)
_Row = tuple[int, int, int, int, int]  # id, samples, estimated bytes, packets, variance
_Cut = tuple[list[tuple[object, int, int, int, int]], _Row | None, _Row]  # top, other, all


def _groups(join: FabricJoin, total: _Row, tenants: _Cut, jobs: _Cut, pods: _Cut,
            pairs: _Cut, throttled: _Cut, traffic: list[tuple[int, int]]) -> _Groups:
    """One link direction's sums from the core, by name."""
    job = join.jobs
    return _Groups(
        total[1], float(total[2]), float(total[4]),
        _ranked(tenants, join.tenants.__getitem__),
        _ranked(jobs, job.__getitem__),
        _ranked(pods, join.pods.__getitem__),
        _ranked(pairs, lambda pair: f"{job[pair[0]]} -> {job[pair[1]]}"),  # type: ignore[index]
        _ranked(throttled, job.__getitem__),
        {_TRAFFIC[i]: n for i, n in traffic})


def _ranked(cut: _Cut, name: Callable[[Any], str]) -> Ranked:
    """A table the core ranked and cut, by name."""
    top, other, total = cut
    groups = [(name(key), (n, b, p, v)) for key, n, b, p, v in top]
    if other is not None:
        groups.append((OTHER, other[1:]))
    return Ranked(groups, total[1:])  # type: ignore[arg-type]


def _link(fabric: FabricGraph, port: str, direction: str, group: _Groups, interval: Interval,
          rates: Rates | None) -> LinkTraffic:
    counter_bytes, utilization = _exact(rates, direction, interval.seconds)
    check = counter_check(counter_bytes, group.samples, group.estimated, group.variance)
    counters = None if counter_bytes is None else Counters(
        counter_bytes, _known(rates, direction, interval.seconds), check == OUTSIDE)

    def ranked(table: Ranked) -> tuple[Share, ...]:
        return apportion(table, counters) if table.groups else ()

    throttled = apportion(group.throttled) if group.throttled.groups else ()  # among CNPs
    return LinkTraffic(port, direction, fabric.peer(port) or "", interval.start,
                       interval.seconds, group.samples, group.estimated, counter_bytes,
                       utilization, ranked(group.tenants), ranked(group.jobs),
                       ranked(group.pods), ranked(group.pairs),
                       dict(sorted(group.traffic.items())), throttled, check)


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
