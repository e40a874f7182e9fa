"""One interval's samples, resolved: each link direction's traffic by tenant, job and pod.

Samples name a port by (sFlow agent, ifIndex); their addresses name pod interfaces
through the IP index at the segment's start time. Traffic is attributed to its *sender*
(the source address); the (source job, destination job) pairs keep the other end. An
address no pod interface owned goes to ``unattributed``. CNPs are also counted by the
job they throttle (the CNP's destination): those are the senders that congestion on the
reverse direction slows down.

A port with counters but no samples still gets its :class:`LinkTraffic`, which says
``no samples``; samples of a port the topology does not know are counted in
:attr:`Attribution.unknown_ports`.

Counter bytes are checked against the samples (:func:`counter_check`): where they lie
outside the sampled estimate's 95 % bound, the counters are not trusted for that
interval: a group's bytes are the sampled estimate, within the hull of the estimate's own
95 % interval and the interval apportioned from the counters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from correlator.attribution.accumulate import IN, Interval
from correlator.attribution.estimate import FEW_SAMPLES, Z95, Share, Sums, shares
from correlator.collect.rates import Rates
from correlator.sflow.records import address_text
from topology.footprint import Owner, owners
from topology.graph import FabricGraph

UNATTRIBUTED = "unattributed"
NO_JOB, NO_TENANT = "no-job", "no-tenant"  # a known pod that belongs to none
_NOBODY = Owner(UNATTRIBUTED, UNATTRIBUTED, UNATTRIBUTED)
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
    checked. ``pods`` is cut to the top K plus ``other``.
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
    """Sums of one link direction: group name -> [samples, estimated bytes, packets,
    variance of the estimated bytes]."""

    samples: int = 0
    estimated: float = 0.0
    variance: float = 0.0
    tenants: dict[str, list[float]] = field(default_factory=dict)
    jobs: dict[str, list[float]] = field(default_factory=dict)
    pods: dict[str, list[float]] = field(default_factory=dict)
    pairs: dict[str, list[float]] = field(default_factory=dict)
    throttled: dict[str, list[float]] = field(default_factory=dict)
    traffic: dict[str, int] = field(default_factory=dict)


def attribute(fabric: FabricGraph, interval: Interval, rates: Mapping[str, Rates] | None = None,
              top_pods: int = 10) -> Attribution:
    """Resolve and apportion ``interval``; ``rates`` by port ID give the exact bytes."""
    rates = rates or {}
    indexes, table = fabric.indexes, owners(fabric)
    ip_owners: dict[tuple[bytes, float], Owner] = {}

    def owner_of(address: bytes, at: float) -> Owner:
        found = ip_owners.get((address, at))
        if found is None:
            hit = indexes.ips.owner(address, at) if address else None
            found = table.get(hit.interface, _NOBODY) if hit is not None else _NOBODY
            if not found.job or not found.tenant:
                found = Owner(found.pod, found.job or NO_JOB, found.tenant or NO_TENANT)
            ip_owners[(address, at)] = found
        return found

    ports: dict[tuple[bytes, int], str | None] = {}
    groups: dict[tuple[str, str], _Groups] = {}
    unknown: dict[str, int] = {}
    unattributed = 0
    for segment in interval.segments:
        at = segment.start
        for (agent, ifindex, direction, src, dst, traffic), sums in segment.flows():
            port = ports.get((agent, ifindex), "")
            if port == "":
                port = ports[(agent, ifindex)] = indexes.port_for_sample(agent, ifindex)
            if port is None:
                where = f"{address_text(agent)}:{ifindex}"
                unknown[where] = unknown.get(where, 0) + sums[0]
                continue
            sender, receiver = owner_of(src, at), owner_of(dst, at)
            if sender is _NOBODY:
                unattributed += sums[0]
            group = groups.get((port, direction))
            if group is None:
                group = groups[(port, direction)] = _Groups()
            _add(group, sums, sender, receiver, traffic)
    links = [_link(fabric, port, direction, group, interval, rates.get(port), top_pods)
             for (port, direction), group in groups.items()]
    for port, port_rates in rates.items():
        for direction in ("in", "out"):
            if (port, direction) not in groups and port in fabric.graph:
                links.append(_link(fabric, port, direction, _Groups(), interval, port_rates,
                                   top_pods))
    links.sort(key=lambda link: (link.port, link.direction))
    return Attribution(interval.start, interval.seconds, tuple(links), unknown, unattributed)


def _add(group: _Groups, sums: tuple[int, int, int, int], sender: Owner, receiver: Owner,
         traffic: str) -> None:
    samples = sums[0]
    group.samples += samples
    group.estimated += sums[1]
    group.variance += sums[3]
    for table, name in ((group.tenants, sender.tenant), (group.jobs, sender.job),
                        (group.pods, sender.pod),
                        (group.pairs, f"{sender.job} -> {receiver.job}")):
        _sum(table, name, sums)
    if traffic == CNP:
        _sum(group.throttled, receiver.job, sums)
    group.traffic[traffic] = group.traffic.get(traffic, 0) + samples


def _sum(table: dict[str, list[float]], name: str, sums: tuple[int, int, int, int]) -> None:
    found = table.get(name)
    if found is None:
        table[name] = list(sums)
    else:
        found[0] += sums[0]
        found[1] += sums[1]
        found[2] += sums[2]
        found[3] += sums[3]


def _link(fabric: FabricGraph, port: str, direction: str, group: _Groups, interval: Interval,
          rates: Rates | None, top_pods: int) -> LinkTraffic:
    counter_bytes, utilization = _exact(rates, direction, interval.seconds)
    check = counter_check(counter_bytes, group.samples, group.estimated, group.variance)
    known = _known(rates, direction, interval.seconds)

    def ranked(table: dict[str, list[float]], top: int | None = None,
               exact: float | None = counter_bytes) -> tuple[Share, ...]:
        sums: dict[str, Sums] = {k: (int(v[0]), v[1], v[2], v[3]) for k, v in table.items()}
        if not sums:
            return ()
        found = shares(sums, exact, top)
        if exact is None:
            return found
        counted = _within(found, known)
        return _disputed(shares(sums, None, top), counted) if check == OUTSIDE else counted

    throttled = ranked(group.throttled, exact=None)  # shares among the CNPs only
    return LinkTraffic(port, direction, fabric.peer(port) or "", interval.start,
                       interval.seconds, group.samples, group.estimated, counter_bytes,
                       utilization, ranked(group.tenants), ranked(group.jobs),
                       ranked(group.pods, top_pods), ranked(group.pairs),
                       dict(sorted(group.traffic.items())), throttled, check)


def _disputed(estimated: tuple[Share, ...], counted: tuple[Share, ...]
              ) -> tuple[Share, ...]:
    """Shares of a direction whose counters the samples contradict: the sampled estimate,
    within the hull of its own 95 % interval and the one apportioned from the counters
    (either may be the wrong one: stale counters, or an unlucky sample)."""
    return tuple(e._replace(low=min(e.low, c.low), high=max(e.high, c.high))
                 for e, c in zip(estimated, counted, strict=True))


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


def _within(found: tuple[Share, ...], known: tuple[float, float] | None
            ) -> tuple[Share, ...]:
    """Shares apportioned from counter bytes that are only known within ``known`` (the
    counters read on either side of the interval's ends): each group's bounds stretched
    from ``share_low`` of the least to ``share_high`` of the most."""
    if known is None:
        return found
    return tuple(s._replace(low=min(s.low, s.share_low * known[0]),
                            high=max(s.high, s.share_high * known[1])) for s in found)


def _known(rates: Rates | None, direction: str, seconds: float
           ) -> tuple[float, float] | None:
    """The least and the most bytes the counters allow the direction in the interval."""
    found = rates.ranges.get("in_octets" if direction == IN else "out_octets") \
        if rates is not None else None
    return (found[0] * seconds, found[1] * seconds) if found else None


def _exact(rates: Rates | None, direction: str, seconds: float
           ) -> tuple[float | None, float | None]:
    if rates is None:
        return None, None
    counter = "in_octets" if direction == IN else "out_octets"
    per_second = rates.per_second.get(counter)
    utilization = rates.in_utilization if direction == IN else rates.out_utilization
    return (per_second * seconds if per_second is not None else None), utilization
