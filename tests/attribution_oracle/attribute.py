"""Attribution with the join in Python, key by key, as fabcorr did before the Rust core
(:mod:`correlator.attribution.join`): each flow key's addresses resolved through the IP
index at the segment's start, summed per link direction by name. The apportioning
(:func:`correlator.attribution.attribute._link`) is the product's: only the join, and the
ranking and cut of each table (:func:`tests.attribution_oracle.estimate.rank`), are checked
against this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import (
    CNP,
    NO_JOB,
    NO_TENANT,
    UNATTRIBUTED,
    Attribution,
    _Groups,
    _link,
)
from correlator.attribution.estimate import Ranked
from correlator.collect.rates import Rates
from correlator.sflow.records import address_text
from tests.attribution_oracle.estimate import rank
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

    def groups(self, top: int) -> _Groups:
        def ranked(table: dict[str, list[int]], cut: int | None = None) -> Ranked:
            return rank({k: tuple(v) for k, v in table.items()}, cut)  # type: ignore[misc]

        return _Groups(self.samples, self.estimated, self.variance, ranked(self.tenants),
                       ranked(self.jobs), ranked(self.pods, top), ranked(self.pairs, top),
                       ranked(self.throttled, top), self.traffic)


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
    links = [_link(fabric, port, direction, group.groups(top_pods), interval, rates.get(port))
             for (port, direction), group in groups.items()]
    for port, port_rates in rates.items():
        for direction in ("in", "out"):
            if (port, direction) not in groups and port in fabric.graph:
                links.append(_link(fabric, port, direction, _Groups(), interval, port_rates))
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
