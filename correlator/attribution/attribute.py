"""One interval's samples, resolved: each link direction's traffic by tenant, job and pod.

Samples name a port by (sFlow agent, ifIndex); their addresses name pod interfaces
through the IP index at the segment's start time. That join runs in the Rust core over
the interval's packed flow tables (:mod:`correlator.attribution.join`): it sums each
link direction by sender tenant, job and pod, by (sender job, receiver job) and by
throttled job, in exact integers; here each direction's counters are read from its
port's rates and handed in, and the core checks them and apportions the direction's
tables by them as it finishes it (the shares of :mod:`correlator.attribution.estimate`),
named. Traffic is
attributed to its *sender* (the source address); the (source job, destination job) pairs
keep the other end. An address no pod interface owned goes to ``unattributed``. CNPs are
also counted by the job they throttle (the CNP's destination): those are the senders
that congestion on the reverse direction slows down.

A port with counters but no samples still gets its :class:`LinkTraffic`, which says
``no samples``; samples of a port the topology does not know are counted in
:attr:`Attribution.unknown_ports`. Pods and job pairs (and the jobs CNPs throttle) are
listed per link direction up to ``top_pods``, the rest summed as ``other``: a link
carrying thousands of pairs gives a bounded answer.

Counter bytes are checked against the samples: where they lie beyond
``estimated ± 1.96·sqrt(variance)`` (the sampled estimate's 95 % bound; with at least
``FEW_SAMPLES``, 30, samples: fewer and the normal bound is not trusted to judge them),
the counters are not trusted for that interval: a group's bytes are the sampled estimate,
within the hull of the estimate's own 95 % interval and the interval apportioned from the
counters. An estimate of 900 B with a variance of 2,500 B² has the bound 900 ± 97.998 B:
counters of 997.9 B agree (``ok``), 998.0 B are ``outside``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from correlator import _wire
from correlator.attribution.accumulate import IN, Interval
from correlator.attribution.estimate import Share
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
           "LinkTraffic", "attribute"]

CNP = "roce-cnp"
_, CHECKED, OUTSIDE = _wire.CHECKS  # LinkTraffic.counter_check, "" when not checked


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
    start, seconds, peer = interval.start, interval.seconds, fabric.peer
    exact, counted = _read(rates, seconds, join.ids)
    found, unknown_rows, unattributed = join.core.attribute(
        [(segment.start, *table) for segment in interval.segments for table in segment.tables],
        top_pods, counted)
    links = []
    for (port_id, direction, samples, estimated, traffic, check, tenants, jobs, pods, pairs,
         throttled) in found:
        port = join.ports[port_id]
        counter_bytes, utilization = exact.get((port, direction), _UNCOUNTED)
        links.append(LinkTraffic(port, direction, peer(port) or "", start, seconds, samples,
                                 estimated, counter_bytes, utilization, tenants, jobs, pods,
                                 pairs, traffic, throttled, check))
    sampled = {(link.port, link.direction) for link in links}
    for (port, direction), (counter_bytes, utilization) in exact.items():
        if (port, direction) not in sampled and port in fabric.graph:
            links.append(LinkTraffic(port, direction, peer(port) or "", start, seconds, 0, 0.0,
                                     counter_bytes, utilization, (), (), (), (), {}, (), ""))
    links.sort(key=lambda link: (link.port, link.direction))
    unknown = {f"{address_text(agent)}:{ifindex}": samples
               for agent, ifindex, samples in sorted(unknown_rows)}
    return Attribution(start, seconds, tuple(links), unknown, unattributed)


_DIRECTIONS = tuple(_wire.DIRECTIONS)
_UNCOUNTED = (None, None)  # a direction's counter bytes and utilization without rates


def _read(rates: Mapping[str, Rates], seconds: float, ids: Mapping[str, int]
          ) -> tuple[dict[tuple[str, str], tuple[float | None, float | None]],
                     dict[tuple[int, int], tuple[float, tuple[float, float] | None]]]:
    """Each direction of each rated port: its counter bytes and utilization by (port ID,
    direction), and what the core checks and apportions by, for the ports of the join
    (``ids``) whose counters count bytes, by (port id, direction index): the counter
    bytes and the least and the most the readings allow."""
    exact, counted = {}, {}
    for port, port_rates in rates.items():
        for index, direction in enumerate(_DIRECTIONS):
            found = exact[port, direction] = _exact(port_rates, direction, seconds)
            if found[0] is not None and port in ids:
                counted[ids[port], index] = (found[0], _known(port_rates, direction, seconds))
    return exact, counted


def _known(rates: Rates, direction: str, seconds: float) -> tuple[float, float] | None:
    """The least and the most bytes the counters allow the direction in the interval."""
    found = rates.octets_range(direction)
    return (found[0] * seconds, found[1] * seconds) if found else None


def _exact(rates: Rates, direction: str, seconds: float) -> tuple[float | None, float | None]:
    """The direction's bytes by the counters over the interval, and its utilization."""
    counter = "in_octets" if direction == IN else "out_octets"
    per_second = rates.per_second.get(counter)
    utilization = rates.in_utilization if direction == IN else rates.out_utilization
    return (per_second * seconds if per_second is not None else None), utilization
