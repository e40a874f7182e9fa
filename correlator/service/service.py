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

An interval published before some port's counters were read past its end is
``provisional``; as soon as they are (:meth:`~correlator.engine.Engine.corrections`,
asked every :data:`_CORRECTIONS_EVERY_S` while one is kept) its correction is appended as
another line for the same ``start``, with ``replaces``, and replaces the view's interval
if that is the one it shows. Readers take the last line of every ``start``.

As one shard of several (``config.shard``, :mod:`correlator.scope`) it discovers its own
switches only (with a crawl it walks the others' LLDP to find its own, and keeps its own);
the far ends of their cables on the other shards' switches are stand-ins
(:func:`~topology.build.build_graph`'s ``elsewhere``), so every shard sees the cables that
decide who judges what, and it keeps only the hosts' NICs cabled to its own switches
(:mod:`topology.elsewhere`). It admits the sFlow of its own switches only (others' are
``unknown-agent``), reads the counters of its switches and of those far ends (their other
ports' readings are dropped), and publishes its switches' ports, health and hotspots.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TypeVar

from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import Attribution
from correlator.collect.collector import Collector
from correlator.engine import Engine
from correlator.service.attribution_log import AttributionLog
from correlator.service.config import ServiceConfig
from correlator.service.exporter import Exposition
from correlator.sflow.accounting import Totals
from correlator.sflow.admission import Admission, admission_for
from correlator.sflow.receiver import Receiver, ReceiverPool, Worker, interval_end, serve
from correlator.view import View
from inventory.bulk import settle
from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.discovery import discover_all
from inventory.errors import SourceTimeout
from inventory.factfile import read_facts
from inventory.facts import FactSet, merge_all
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.live import LiveKubernetes, api_client
from inventory.kubernetes.snapshot import read_cluster_objects
from topology.build import build_graph
from topology.elsewhere import nics_here
from topology.graph import FabricGraph
from topology.snapshot import load_snapshot, save_snapshot

_log = logging.getLogger(__name__)
_ENDED_KEPT = 50  # recent ended hotspots in the view
_T = TypeVar("_T")
_KUBERNETES_READY_S = 300.0
_CORRECTIONS_EVERY_S = 0.25


class Service:
    """The running service; :attr:`view` is what it knows now."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.view = View(build_graph(FactSet()), started=time.time(), shard=config.shard)
        self.exposition = Exposition(lambda: self.view)
        self.engine = Engine(config.telemetry_interval_s, config.top_pods,
                              config.thresholds, _ENDED_KEPT, self.view.started,
                              config.shard)
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
        self._correcting: asyncio.Future[None] | None = None  # likewise
        self._published = 0
        self._components: dict[str, bool] = {}
        self._attribution_log = AttributionLog(config.attribution_log) \
            if config.attribution_log else None

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
            fabric = await _unless_stopped(self._first_fabric(), stop)
            if fabric is None:
                _log.info("stopped before the fabric was built")
                return
            start = time.time()
            admission = self._admission(fabric)
            if config.sflow.workers > 1:
                self._pool = ReceiverPool(config.sflow, admission).__enter__()
            else:
                self._worker = Worker(start, config.interval_s, admission=admission,
                                      max_agents=config.sflow.max_agents,
                                      max_sources=config.sflow.max_sources)
                self._receiver = await serve(config.sflow, self._worker)
            components = self._components_from(start, fabric)
            self._components = dict.fromkeys(components, True)
            if self._attribution_log is not None:
                self._components["attribution_log"] = True
            self.view = dataclasses.replace(self.view, fabric=fabric, ready=True,
                                            components=dict(self._components))
            settle()  # the fabric is long-lived: out of the collector's way
            _log.info("ready: %d graph nodes; metrics and API on %s:%d",
                      fabric.graph.number_of_nodes(), host, http.port)
            scope = self.engine.scope(fabric)
            if scope is not None:
                _log.info("shard %s: %d of %d switches, %d of their cables' far ends read",
                          config.shard, len(scope.switches), len(
                              {s.name for s in (*self._switches, *fabric.switches())}),
                          len(scope.peers))
            tasks = [asyncio.create_task(self._supervise(name, *work, stop), name=name)
                     for name, work in components.items()]
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.view.ready:
                await self._close_interval()
            _log.info("stopped: %d intervals attributed, %d flow samples received",
                      self._published, self.engine.totals.samples.get("flow", 0))
            if self._receiver is not None:
                self._receiver.close()
            if self._pool is not None:
                self._pool.close()
            if self._kubernetes is not None:
                self._kubernetes.stop()
            http.close()

    def _components_from(self, start: float, fabric: FabricGraph) -> dict[str, tuple[Callable[
            [asyncio.Event], Awaitable[None]], float | None]]:
        """The supervised tasks, by name: (work, every), work running until the stop, or
        every so many seconds."""
        config = self.config
        components: dict[str, tuple[Callable[[asyncio.Event], Awaitable[None]],
                                    float | None]] = {}
        switches, ports = self._read_switches(fabric)
        if self._switches:  # a shard may own none of them yet: its fabric's swaps retarget
            self._collector = Collector(switches, config.telemetry_interval_s,
                                        self._readings, ports=ports)
            components["telemetry"] = self._collector.run, None
        components["intervals"] = (lambda stop: self._intervals(stop, start)), None
        components["corrections"] = self._corrections, _CORRECTIONS_EVERY_S
        if config.switches and config.topology.discover_every_s > 0:
            components["discovery"] = self._rediscover, config.topology.discover_every_s
        if self._kubernetes is not None:
            components["kubernetes"] = self._follow_kubernetes, config.kubernetes.refresh_s
        return components

    async def _supervise(self, name: str, work: Callable[[asyncio.Event], Awaitable[None]],
                         every: float | None, stop: asyncio.Event) -> None:
        """Run ``work`` until ``stop`` (``every`` None), or every ``every`` seconds. A
        failure is logged with its cause and ``work`` run again after a backoff (1 s,
        doubling to 60 s); the component is down from the failure until ``work`` runs
        again (until it succeeds, for periodic work)."""
        wait, backoff = every or 0.0, 1.0
        while not await _sleep(stop, wait):
            began = time.monotonic()
            if every is None:
                self._set_component(name, True)
            try:
                await work(stop)
            except Exception as exc:
                if time.monotonic() - began >= 60:  # it ran a good while: start over
                    backoff = 1.0
                _log.error("%s failed, again in %g s: %s: %s", name, backoff,
                           type(exc).__name__, exc, exc_info=exc)
                self._set_component(name, False)
                wait, backoff = backoff, min(2 * backoff, 60.0)
                continue
            if every is None:
                return
            self._set_component(name, True)
            wait, backoff = every, 1.0

    def _set_component(self, name: str, up: bool) -> None:
        if self._components.get(name) == up:
            return
        self._components[name] = up
        self.view = dataclasses.replace(self.view, components=dict(self._components))

    # -- the fabric ---------------------------------------------------------------------

    async def _first_fabric(self) -> FabricGraph:
        topology = self.config.topology
        if self.config.kubernetes.source == ("live",):
            await self._start_live_cache()
        if topology.snapshot and not self.config.switches:
            fabric = await asyncio.to_thread(load_snapshot, topology.snapshot)
            known = self._known_facts()
            if known.pods or known.pod_interfaces:  # the inventory is newer than the snapshot
                self._discovered = fabric.facts
                fabric = await asyncio.to_thread(self._build)
            return fabric
        await self._discover()
        return await asyncio.to_thread(self._build)

    async def _start_live_cache(self) -> None:
        """Start live mode's cache and wait for its first lists."""
        kubernetes = self.config.kubernetes
        self._kubernetes = LiveKubernetes(api_client(kubernetes.kubeconfig or None,
                                                     kubernetes.context or None))
        self._kubernetes.start()
        try:
            async with asyncio.timeout(_KUBERNETES_READY_S):  # no thread left waiting
                while not self._kubernetes.ready():         # when a stop comes
                    await asyncio.sleep(0.05)
        except TimeoutError as exc:
            raise SourceTimeout(f"Kubernetes: the initial lists did not complete in "
                                f"{_KUBERNETES_READY_S:g} s") from exc

    async def _discover(self) -> None:
        """Discover the switches (a shard's own: a crawl walks every switch it reaches,
        as it must to learn their names, and keeps its own)."""
        config, owns = self.config, self.config.shard.owns
        listed = config.switches if config.crawl else [s for s in config.switches
                                                       if owns(s.name)]
        found = await discover_all(listed, crawl=config.crawl,
                                   deadline_s=config.topology.deadline_s)
        self._switches = (*config.switches, *found.crawled)
        for failure in found.failures:
            _log.warning("discovery: %s over %s: %s: %s", failure.switch, failure.protocol,
                         failure.kind, failure.message)
        facts = found.facts.of_switches({s.name for s in found.facts.switches
                                         if owns(s.name)})
        # a switch that did not answer this time keeps what it said last time
        failed = {failure.switch for failure in found.failures}
        self._discovered = facts.merge(self._discovered.of_switches(failed))

    def _known_facts(self) -> FactSet:
        """Facts from Kubernetes (live or dumps) and from fact files; of the VFs, a
        shard's (by its hosts' LLDP among the facts it has, :func:`nics_here`)."""
        sets = [read_facts(self.config.topology.facts)] if self.config.topology.facts else []
        elsewhere = self._elsewhere()
        keeps = nics_here(self._discovered.merge(merge_all(sets)), elsewhere) \
            if elsewhere else None
        source = self.config.kubernetes.source
        if self._kubernetes is not None:
            # read first: a change while the inventory is read makes the next build
            self._kubernetes_built = self._kubernetes.version
            sets.append(self._kubernetes.inventory(keeps).facts)
        elif source:
            sets.append(build_inventory(read_cluster_objects(source), keeps=keeps).facts)
        return merge_all(sets)

    def _elsewhere(self) -> dict[str, str]:
        """The other shards' switches, each with its role hint (none when alone)."""
        owns = self.config.shard.owns  # alone, it owns every switch
        return {s.name: s.role for s in self._switches if not owns(s.name)}

    def _build(self) -> FabricGraph:
        fabric = build_graph(self._discovered.merge(self._known_facts()), self._elsewhere())
        if self.config.topology.save:
            save_snapshot(fabric, self.config.topology.save)
        return fabric

    def _admission(self, fabric: FabricGraph) -> Admission:
        """The sFlow agents believed: the switches of ``fabric`` and of the configuration
        (a shard's own)."""
        shard = self.config.shard
        return admission_for((s for s in fabric.switches() if shard.owns(s.name)),
                             (s for s in self._switches if shard.owns(s.name)),
                             self.config.sflow.relays)

    def _read_switches(self, fabric: FabricGraph
                       ) -> tuple[list[SwitchConfig], dict[str, tuple[str, ...]]]:
        """The switches whose counters are read: all, or a shard's (by name, whether its
        fabric has them yet: a discovery that timed out must not leave a switch unread) and
        those holding the far ends of their cables in ``fabric``; and of the latter, the
        ports read (their far ends)."""
        scope = self.engine.scope(fabric)
        if scope is None:
            return list(self._switches), {}
        ports: dict[str, list[str]] = {}
        for port in sorted(scope.peers):
            attrs = fabric.attrs(port)
            ports.setdefault(attrs["switch"], []).append(attrs["name"])
        return ([s for s in self._switches if self.config.shard.owns(s.name) or s.name in ports],
                {switch: tuple(names) for switch, names in ports.items()})

    def _readings(self, readings: list[PortCounters]) -> None:
        """Counter readings to the engine: all, or a shard's switches' (by name, as they
        are read) and their peers'."""
        fabric = self.view.fabric
        scope = self.engine.scope(fabric)
        if scope is not None:
            named, owns = fabric.indexes.port_named, self.config.shard.owns
            readings = [r for r in readings if owns(r.switch)
                        or named(r.switch, r.port) in scope.peers]
        self.engine.readings(readings)

    async def _swap(self, fabric: FabricGraph) -> None:
        """Use ``fabric`` from now on; samples from now resolve against it, and its
        switches' agents are believed."""
        async with self._publishing:
            now = time.time()
            if self._worker is not None:
                self._worker.cut(now)
                self._worker.admit(self._admission(fabric))
            elif self._pool is not None:
                self._pool.cut(now)
                self._pool.admit(self._admission(fabric))
            self.view = dataclasses.replace(self.view, fabric=fabric)
        if self._collector is not None:  # a shard's peers follow its cables
            self._collector.retarget(*self._read_switches(fabric))
        settle()  # frees the old fabric's cycles; freezes the new one

    async def _rediscover(self, stop: asyncio.Event) -> None:
        await self._discover()
        await self._swap(await asyncio.to_thread(self._build))

    async def _follow_kubernetes(self, stop: asyncio.Event) -> None:
        assert self._kubernetes is not None
        if self._kubernetes.version != self._kubernetes_built:
            await self._swap(await asyncio.to_thread(self._build))

    # -- intervals ----------------------------------------------------------------------

    async def _intervals(self, stop: asyncio.Event, start: float) -> None:
        end = interval_end(start, self.config.interval_s)
        while True:
            if self._pool is not None:
                # gathered in a thread; what a cancelled wait gathered stays in the pool
                if not await asyncio.to_thread(self._pool.wait, 0.5):
                    continue
                closed = self._pool.take()
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

    async def _corrections(self, stop: asyncio.Event) -> None:
        """One round of corrections (supervised: every :data:`_CORRECTIONS_EVERY_S`)."""
        # as with publishing: a stop lets a correction begun finish
        self._correcting = asyncio.ensure_future(self._correct())
        await asyncio.shield(self._correcting)

    async def _correct(self) -> None:
        """Publish the corrections of provisional intervals whose counters are now in."""
        async with self._publishing:  # the engine's intervals change only under it
            if not self.engine.provisional:
                return
            corrected = await asyncio.to_thread(self.engine.corrections)
            if corrected:  # judged now: the hotspots may have moved on
                self._show_hotspots()
            for result, totals in corrected:
                shown = self.view.attribution
                if shown is not None and shown.start == result.start:
                    self.view = dataclasses.replace(self.view, attribution=result,
                                                    rates=self.engine.rates)
                await self._log(result, totals)
            if corrected:
                await asyncio.to_thread(self.exposition.render)

    def _show_hotspots(self) -> None:
        self.view = dataclasses.replace(self.view, **self.engine.shown_hotspots())

    async def _counters_past(self, end: float, stop: asyncio.Event) -> None:
        """Wait until every port's counters are known past ``end``: the engine's bounded
        wait at most, and no longer once the service is stopping."""
        deadline = end + self.engine.counter_wait_s
        while not self.engine.covered(end) and not stop.is_set():
            if await _sleep(stop, min(0.05, deadline - time.time())) or \
                    time.time() >= deadline:
                return

    def _closed(self, now: float) -> list[tuple[Interval, Totals]]:
        """The intervals ended by ``now``, once every datagram queued has been read (the
        worker's receiving thread reads them first)."""
        assert self._worker is not None
        return self._worker.close(now)

    async def _close_interval(self) -> None:
        """At shutdown: refuse new datagrams, read those queued, and attribute what was
        received since the last boundary, after the intervals being published when the
        stop came."""
        await asyncio.gather(*(task for task in (self._publishing_task, self._correcting)
                               if task is not None), return_exceptions=True)
        if self._pool is not None:
            rest = await asyncio.to_thread(self._pool.finish)
        elif self._worker is not None and self._receiver is not None:
            self._receiver.refuse()
            now = time.time()
            rest = [*self._closed(now), self._worker.take(now)]
        else:
            rest = []
        for interval, totals in rest:
            if interval.seconds > 0:  # not the empty one a stop right on a boundary leaves
                await self._publish(interval, totals)
        await self._correct()  # what the readings in by now can correct
        async with self._publishing:
            self.engine.finish()  # the intervals still provisional are judged as they are
            self._show_hotspots()

    async def _publish(self, interval: Interval, totals: Totals) -> None:
        async with self._publishing:
            began = time.perf_counter()
            health = {name: dataclasses.replace(h, errors=Counter(h.errors))
                      for name, h in (self._collector.health.items()
                                      if self._collector else ())
                      if self.config.shard.owns(name)}
            view = await asyncio.to_thread(self.engine.close, self.view.fabric, interval,
                                           totals, health)
            self._published += 1
            self.view = dataclasses.replace(view, attribution_s=time.perf_counter() - began,
                                            components=dict(self._components))
            await asyncio.to_thread(self.exposition.render)  # scrapes get it ready-made
            assert view.attribution is not None
            await self._log(view.attribution, totals)

    async def _log(self, result: Attribution, totals: Totals) -> None:
        """Append to the attribution log, if any; the component is down while it fails."""
        if self._attribution_log is not None:
            written = await asyncio.to_thread(self._attribution_log.append, result, totals)
            self._set_component("attribution_log", written)


async def _unless_stopped(work: Awaitable[_T], stop: asyncio.Event) -> _T | None:
    """The result of ``work``, or None (``work`` cancelled) if ``stop`` is set first."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


async def _sleep(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` unless ``stop`` is set first; whether it was."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(0.0, seconds)):
            await stop.wait()
    return stop.is_set()
