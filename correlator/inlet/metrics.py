"""The inlet's Prometheus metrics, from its counts (:meth:`Inlet.counts`) at each scrape.

- ``fabcorr_inlet_forwarded_datagrams_total{shard}``, ``..._forwarded_samples_total{shard}``
  (the samples the forwarded datagrams' headers declare);
- ``fabcorr_inlet_dropped_datagrams_total{shard,reason}``: ``spoofed-source``,
  ``unresolved`` (the shard had no address), ``send-error`` (the kernel refused to send:
  the shard's port refused an earlier datagram; at most one per batch, a sign, not a
  measure, of what a refusing shard missed); ``unknown-agent`` and ``bad-header``
  with ``shard=""``, no shard owning them;
- ``fabcorr_inlet_shard_address_info{shard,address}``: where each shard is now (``""``: not
  resolved); ``fabcorr_inlet_switches``: the switches routed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from correlator import _wire

if TYPE_CHECKING:
    from correlator.inlet.inlet import Inlet


class InletMetrics:
    """The text exposition of ``inlet``'s counts, for the service's HTTP server."""

    def __init__(self, inlet: Inlet) -> None:
        self.inlet = inlet
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)  # type: ignore[arg-type]  # a collector: collect()

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        counts = self.inlet.counts()
        shards = [str(i) for i in range(len(self.inlet.addresses))]
        forwarded = CounterMetricFamily(
            "fabcorr_inlet_forwarded_datagrams", "Datagrams forwarded to each shard",
            labels=["shard"])
        samples = CounterMetricFamily(
            "fabcorr_inlet_forwarded_samples",
            "Samples in the datagrams forwarded to each shard (as their headers declare)",
            labels=["shard"])
        dropped = CounterMetricFamily(
            "fabcorr_inlet_dropped_datagrams", "Datagrams not forwarded, by shard and reason",
            labels=["shard", "reason"])
        for shard in shards:
            index = int(shard)
            forwarded.add_metric([shard], _at(counts["forwarded"], index))
            samples.add_metric([shard], _at(counts["samples"], index))
            by_reason = counts["dropped"][index] if index < len(counts["dropped"]) else []
            for reason in ("spoofed-source", "unresolved", "send-error"):
                dropped.add_metric([shard, reason], _at(by_reason, _wire.DROPS.index(reason)))
        for reason in ("unknown-agent", "bad-header"):
            dropped.add_metric(["", reason], counts["unrouted"][_wire.DROPS.index(reason)])
        where = GaugeMetricFamily("fabcorr_inlet_shard_address_info",
                                  "Where each shard is now (address empty: not resolved)",
                                  labels=["shard", "address"])
        for shard, address in zip(shards, self.inlet.addresses, strict=True):
            where.add_metric([shard, address], 1)
        switches = GaugeMetricFamily("fabcorr_inlet_switches", "Switches routed",
                                     value=self.inlet.switches)
        yield from (forwarded, samples, dropped, where, switches)


def _at(values: list[int], index: int) -> int:
    return values[index] if index < len(values) else 0
