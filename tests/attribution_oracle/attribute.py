"""Attribution with the join in Python, key by key, as fabcorr did before the Rust core
(:mod:`correlator.attribution.join`): each flow key's addresses resolved through the IP
index at the segment's start, summed per link direction by name, each table ranked and
cut (:func:`tests.attribution_oracle.estimate.rank`) and apportioned by the Python method
(:func:`tests.attribution_oracle.estimate.apportion`), each direction's counters checked
against its samples here (:func:`counter_check`, as the core checks them). Reading a
direction's counters from its port's rates is the product's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import (
    CNP,
    NO_JOB,
    NO_TENANT,
    OUTSIDE,
    UNATTRIBUTED,
    Attribution,
    LinkTraffic,
    _exact,
    _known,
)
from correlator.attribution.estimate import FEW_SAMPLES, Z95, Counters, Ranked, Share
from correlator.collect.rates import Rates
from correlator.sflow.records import address_text
from tests.attribution_oracle.estimate import apportion, rank
from topology.footprint import Owner, owners
from topology.graph import FabricGraph

_NOBODY = Owner(UNATTRIBUTED, UNATTRIBUTED, UNATTRIBUTED)


@dataclass(slots=True)
class _Sums:
    """One link direction's sums by name, as :func:`_add` makes them."""

    samples: int = 0
    estimated: float = 0.0
    variance: float = 0.0
    tenants: dict[str, list[int]] = field(default_factory=dict)
    jobs: dict[str, list[int]] = field(default_factory=dict)
    pods: dict[str, list[int]] = field(default_factory=dict)
    pairs: dict[str, list[int]] = field(default_factory=dict)
    throttled: dict[str, list[int]] = field(default_factory=dict)
    traffic: dict[str, int] = field(default_factory=dict)

    def link(self, fabric: FabricGraph, port: str, direction: str, interval: Interval,
             rates: Rates | None, top: int) -> LinkTraffic:
        """This direction's traffic, as :func:`correlator.attribution.attribute._link`
        gives it."""
        def ranked(table: dict[str, list[int]], cut: int | None = None) -> Ranked:
            return rank({k: tuple(v) for k, v in table.items()}, cut)  # type: ignore[misc]

        counter_bytes, utilization = _exact(rates, direction, interval.seconds) \
            if rates is not None else (None, None)
        check = counter_check(counter_bytes, self.samples, self.estimated, self.variance)
        counters = None if counter_bytes is None else Counters(
            counter_bytes, _known(rates, direction, interval.seconds),  # type: ignore[arg-type]
            check == OUTSIDE)

        def shares(table: dict[str, list[int]], cut: int | None = None,
                   by: Counters | None = counters) -> tuple[Share, ...]:
            return apportion(ranked(table, cut), by) if table else ()

        return LinkTraffic(port, direction, fabric.peer(port) or "", interval.start,
                           interval.seconds, self.samples, self.estimated, counter_bytes,
                           utilization, shares(self.tenants), shares(self.jobs),
                           shares(self.pods, top), shares(self.pairs, top),
                           dict(sorted(self.traffic.items())),
                           shares(self.throttled, top, None), check)


def attribute(fabric: FabricGraph, interval: Interval, rates: Mapping[str, Rates] | None = None,
              top_pods: int = 10) -> Attribution:
    """What :func:`correlator.attribution.attribute.attribute` answers, joined in Python."""
    rates = rates or {}
    indexes, table = fabric.indexes, owners(fabric)

    def owner_of(address: bytes, at: float) -> Owner:
        hit = indexes.ips.owner(address, at) if address else None
        found = table.get(hit.interface, _NOBODY) if hit is not None else _NOBODY
        if not found.job or not found.tenant:
            found = Owner(found.pod, found.job or NO_JOB, found.tenant or NO_TENANT)
        return found

    groups: dict[tuple[str, str], _Sums] = {}
    unknown: dict[str, int] = {}
    unattributed = 0
    for segment in interval.segments:
        for (agent, ifindex, direction, src, dst, traffic), sums in segment.flows():
            port = indexes.port_for_sample(agent, ifindex)
            if port is None:
                where = f"{address_text(agent)}:{ifindex}"
                unknown[where] = unknown.get(where, 0) + sums[0]
                continue
            sender, receiver = owner_of(src, segment.start), owner_of(dst, segment.start)
            if sender is _NOBODY:
                unattributed += sums[0]
            _add(groups.setdefault((port, direction), _Sums()), sums, sender, receiver,
                 traffic)
    links = [group.link(fabric, port, direction, interval, rates.get(port), top_pods)
             for (port, direction), group in groups.items()]
    for port, port_rates in rates.items():
        for direction in ("in", "out"):
            if (port, direction) not in groups and port in fabric.graph:
                links.append(_Sums().link(fabric, port, direction, interval, port_rates,
                                          top_pods))
    links.sort(key=lambda link: (link.port, link.direction))
    return Attribution(interval.start, interval.seconds, tuple(links), unknown, unattributed)


def _add(group: _Sums, sums: tuple[int, int, int, int], sender: Owner, receiver: Owner,
         traffic: str) -> None:
    group.samples += sums[0]
    group.estimated += sums[1]
    group.variance += sums[3]
    for table, name in ((group.tenants, sender.tenant), (group.jobs, sender.job),
                        (group.pods, sender.pod),
                        (group.pairs, f"{sender.job} -> {receiver.job}")):
        _sum(table, name, sums)
    if traffic == CNP:
        _sum(group.throttled, receiver.job, sums)
    group.traffic[traffic] = group.traffic.get(traffic, 0) + sums[0]


def _sum(table: dict[str, list[int]], name: str, sums: tuple[int, int, int, int]) -> None:
    found = table.setdefault(name, [0, 0, 0, 0])
    for i in range(4):
        found[i] += sums[i]


def counter_check(counter_bytes: float | None, samples: int, estimated: float,
                  variance: float) -> str:
    """``outside`` when ``counter_bytes`` lie beyond ``estimated ± Z95·sqrt(variance)``,
    ``ok`` inside, ``""`` without counters or with fewer than ``FEW_SAMPLES`` samples."""
    if counter_bytes is None or samples < FEW_SAMPLES:
        return ""
    return OUTSIDE if abs(counter_bytes - estimated) > Z95 * math.sqrt(variance) else "ok"
