"""``fabcorr run``: one asyncio service from switches, Kubernetes and sFlow to metrics.

At start the fabric comes from a snapshot, or from discovering the switches (LLDP,
interfaces) joined with Kubernetes (live, or dumps) and fact files; the service is ready
once that is done. Then, side by side: counter telemetry from every switch
(:class:`~correlator.collect.collector.Collector`), the sFlow receiver (on the event loop,
or ``sflow.workers`` processes sharing the port), periodic rediscovery, and the Kubernetes
inventory refreshed when it changes. On every wall-clock interval boundary the interval's
samples go to the interval engine (:class:`~correlator.engine.Engine`, in a worker thread,
so receiving goes on), which attributes them, judges hotspots and returns the new
:class:`~correlator.view.View` that replaces the old one: the exporter and the API read
only views.

SIGTERM or SIGINT ends it gracefully: the interval in progress is attributed up to that
moment and published (and logged) before the service exits, so no sample received is
lost. With ``attribution.log`` every attributed interval is appended as one JSON line:
``{"attribution": ..., "received": ...}`` (the sFlow counts of that interval).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
from collections import Counter
from pathlib import Path

from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import Attribution
from correlator.collect.collector import Collector
from correlator.data import to_data
from correlator.engine import Engine
from correlator.service.config import ServiceConfig
from correlator.service.exporter import Exposition
from correlator.sflow.accounting import Totals
from correlator.sflow.admission import Admission, admission_for
from correlator.sflow.receiver import Receiver, ReceiverPool, Worker, interval_end, serve
from correlator.view import View
from inventory.discovery import discover_all
from inventory.factfile import read_facts
from inventory.facts import FactSet, merge_all
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.live import LiveKubernetes, api_client
from inventory.kubernetes.snapshot import read_cluster_objects
from topology.build import build_graph
from topology.graph import FabricGraph
from topology.snapshot import load_snapshot, save_snapshot

_log = logging.getLogger(__name__)
_ENDED_KEPT = 50  # recent ended hotspots in the view


class Service:
    """The running service; :attr:`view` is what it knows now."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.view = View(build_graph(FactSet()), started=time.time())
        self.exposition = Exposition(lambda: self.view)
        self.engine = Engine(config.telemetry_interval_s, config.top_pods,
                              config.thresholds, _ENDED_KEPT, self.view.started)
        self._collector: Collector | None = None
        self._kubernetes: LiveKubernetes | None = None
        self._kubernetes_built = 0  # the live inventory's version the fabric was built from
        self._discovered = FactSet()
        self._switches = config.switches  # and those the crawl found
        self._worker: Worker | None = None
        self._receiver: Receiver | None = None
        self._pool: ReceiverPool | None = None
        self._publishing = asyncio.Lock()
        self._publishing_task: asyncio.Future[None] | None = None  # kept while shielded
        self._published = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then attribute what is left and return."""
        from correlator.service.http import HttpServer

        config = self.config
        host, port = config.http.address
        http = HttpServer(host, port, lambda: self.view, self.exposition,
                          tls=(config.http.tls_cert, config.http.tls_key)
                          if config.http.tls_cert else None,
                          auth=(config.http.username, config.http.password)
                          if config.http.username else None)
        http.start()
        self.http = http
        tasks: list[asyncio.Task[None]] = []
        try:
            fabric = await self._first_fabric()
            self.view = dataclasses.replace(self.view, fabric=fabric, ready=True)
            _log.info("ready: %d graph nodes; metrics and API on %s:%d",
                      fabric.graph.number_of_nodes(), host, http.port)
            start = time.time()
            admission = self._admission(fabric)
            if config.sflow.workers > 1:
                self._pool = ReceiverPool(config.sflow, admission).__enter__()
            else:
                self._worker = Worker(start, config.interval_s, admission=admission,
                                      max_agents=config.sflow.max_agents,
                                      max_sources=config.sflow.max_sources)
                self._receiver = await serve(config.sflow, self._worker)
            if self._switches:
                self._collector = Collector(self._switches, config.telemetry_interval_s,
                                            self.engine.readings)
                tasks.append(asyncio.create_task(self._collector.run(stop), name="telemetry"))
            tasks.append(asyncio.create_task(self._intervals(stop, start), name="intervals"))
            if config.switches and config.topology.discover_every_s > 0:
                tasks.append(asyncio.create_task(self._rediscover(stop), name="discovery"))
            if self._kubernetes is not None:
                tasks.append(asyncio.create_task(self._follow_kubernetes(stop), name="k8s"))
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.view.ready:
                await self._close_interval(time.time())
            _log.info("stopped: %d intervals attributed, %d flow samples received",
                      self._published, self.engine.totals.samples.get("flow", 0))
            if self._receiver is not None:
                self._receiver.close()
            if self._pool is not None:
                self._pool.close()
            if self._kubernetes is not None:
                self._kubernetes.stop()
            http.close()

    # -- the fabric ---------------------------------------------------------------------

    async def _first_fabric(self) -> FabricGraph:
        topology = self.config.topology
        if self.config.kubernetes.source == ("live",):
            kubernetes = self.config.kubernetes
            self._kubernetes = LiveKubernetes(api_client(kubernetes.kubeconfig or None,
                                                         kubernetes.context or None))
            self._kubernetes.start()
            await asyncio.to_thread(self._kubernetes.wait_ready, 300.0)
        if topology.snapshot and not self.config.switches:
            fabric = await asyncio.to_thread(load_snapshot, topology.snapshot)
            known = self._known_facts()
            if known.pods or known.pod_interfaces:  # the inventory is newer than the snapshot
                self._discovered = fabric.facts
                fabric = await asyncio.to_thread(self._build)
            return fabric
        await self._discover()
        return await asyncio.to_thread(self._build)

    async def _discover(self) -> None:
        found = await discover_all(self.config.switches, crawl=self.config.crawl,
                                   deadline_s=self.config.topology.deadline_s)
        self._switches = (*self.config.switches, *found.crawled)
        for failure in found.failures:
            _log.warning("discovery: %s over %s: %s: %s", failure.switch, failure.protocol,
                         failure.kind, failure.message)
        failed = {failure.switch for failure in found.failures}
        # a switch that did not answer this time keeps what it said last time
        self._discovered = found.facts.merge(_switch_facts(self._discovered, failed))

    def _known_facts(self) -> FactSet:
        """Facts from Kubernetes (live or dumps) and from fact files."""
        sets = [read_facts(self.config.topology.facts)] if self.config.topology.facts else []
        source = self.config.kubernetes.source
        if self._kubernetes is not None:
            # read first: a change while the inventory is read makes the next build
            self._kubernetes_built = self._kubernetes.version
            sets.append(self._kubernetes.inventory().facts)
        elif source:
            sets.append(build_inventory(read_cluster_objects(source)).facts)
        return merge_all(sets)

    def _build(self) -> FabricGraph:
        fabric = build_graph(self._discovered.merge(self._known_facts()))
        if self.config.topology.save:
            save_snapshot(fabric, self.config.topology.save)
        return fabric

    def _admission(self, fabric: FabricGraph) -> Admission:
        """The sFlow agents believed: the switches of ``fabric`` and of the configuration."""
        return admission_for(fabric.facts.switches, self._switches, self.config.sflow.relays)

    async def _swap(self, fabric: FabricGraph) -> None:
        """Use ``fabric`` from now on; samples from now resolve against it, and its
        switches' agents are believed."""
        async with self._publishing:
            now = time.time()
            if self._worker is not None:
                self._worker.accumulator.cut(now)
                self._worker.admit(self._admission(fabric))
            elif self._pool is not None:
                self._pool.cut(now)
                self._pool.admit(self._admission(fabric))
            self.view = dataclasses.replace(self.view, fabric=fabric)

    async def _rediscover(self, stop: asyncio.Event) -> None:
        every = self.config.topology.discover_every_s
        while not await _sleep(stop, every):
            await self._discover()
            await self._swap(await asyncio.to_thread(self._build))

    async def _follow_kubernetes(self, stop: asyncio.Event) -> None:
        assert self._kubernetes is not None
        while not await _sleep(stop, self.config.kubernetes.refresh_s):
            if self._kubernetes.version != self._kubernetes_built:
                await self._swap(await asyncio.to_thread(self._build))

    # -- intervals ----------------------------------------------------------------------

    async def _intervals(self, stop: asyncio.Event, start: float) -> None:
        end = interval_end(start, self.config.interval_s)
        while True:
            if self._pool is not None:
                closed = [await asyncio.to_thread(self._pool.next_interval)]
            else:
                if await _sleep(stop, end - time.time()):
                    return
                closed = self._closed(time.time())
                end = self._worker.end
            # a stop cancels this task: what it closed is published all the same
            # (_close_interval waits for it), never dropped half-way
            self._publishing_task = asyncio.ensure_future(self._publish_all(closed, stop))
            await asyncio.shield(self._publishing_task)

    async def _publish_all(self, closed: list[tuple[Interval, Totals]],
                           stop: asyncio.Event) -> None:
        for interval, totals in closed:
            await self._counters_past(interval.end, stop)
            await self._publish(interval, totals)

    async def _counters_past(self, end: float, stop: asyncio.Event) -> None:
        """Wait until every port's counters are known past ``end``: the engine's bounded
        wait at most, and no longer once the service is stopping."""
        deadline = end + self.engine.counter_wait_s
        while not self.engine.covered(end) and not stop.is_set():
            if await _sleep(stop, min(0.05, deadline - time.time())) or \
                    time.time() >= deadline:
                return

    def _closed(self, now: float) -> list[tuple[Interval, Totals]]:
        """The intervals ended by ``now``, once every datagram queued has been read."""
        assert self._worker is not None and self._receiver is not None
        self._receiver.drain()
        return self._worker.close(now)

    async def _close_interval(self, now: float) -> None:
        """Attribute what was received since the last boundary (at shutdown), after
        the intervals being published when the stop came."""
        if self._publishing_task is not None:
            await asyncio.gather(self._publishing_task, return_exceptions=True)
        if self._worker is not None:
            for interval, totals in [*self._closed(now), self._worker.take(now)]:
                await self._publish(interval, totals)

    async def _publish(self, interval: Interval, totals: Totals) -> None:
        async with self._publishing:
            began = time.perf_counter()
            health = {name: dataclasses.replace(h, errors=Counter(h.errors))
                      for name, h in (self._collector.health.items()
                                      if self._collector else ())}
            view = await asyncio.to_thread(self.engine.close, self.view.fabric, interval,
                                           totals, health)
            self._published += 1
            self.view = dataclasses.replace(view, attribution_s=time.perf_counter() - began)
            await asyncio.to_thread(self.exposition.render)  # scrapes get it ready-made
            if self.config.attribution_log:
                assert view.attribution is not None
                await asyncio.to_thread(_append_log, self.config.attribution_log,
                                        view.attribution, totals)


def _switch_facts(facts: FactSet, switches: set[str]) -> FactSet:
    """What ``switches`` reported: themselves, their interfaces, their LLDP neighbours.

    >>> from inventory.facts import InterfaceFact, SwitchFact
    >>> f = FactSet(switches=(SwitchFact("a", "m"), SwitchFact("b", "n")),
    ...             interfaces=(InterfaceFact("a", "Ethernet1"), InterfaceFact("b", "Ethernet1")))
    >>> [i.switch for i in _switch_facts(f, {"b"}).interfaces]
    ['b']
    """
    return FactSet(switches=tuple(s for s in facts.switches if s.name in switches),
                   interfaces=tuple(i for i in facts.interfaces if i.switch in switches),
                   neighbors=tuple(n for n in facts.neighbors
                                   if n.reporter == "switch" and n.local_device in switches))


def _append_log(path: str, result: Attribution, received: Totals) -> None:
    """One JSON line: the interval's attribution, and what was received in it."""
    line = {"attribution": to_data(result), "received": to_data(received)}
    with Path(path).open("a", encoding="utf-8") as log:
        log.write(json.dumps(line, separators=(",", ":")) + "\n")


async def _sleep(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` unless ``stop`` is set first; whether it was."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(0.0, seconds)):
            await stop.wait()
    return stop.is_set()
