"""Live mode: list then watch every resource with the official ``kubernetes`` client.

One reflector thread per resource lists (paginated, raw JSON) and then watches from the
list's resourceVersion with bookmarks, applying events to its store. A watch that ends
(server timeout) is resumed from the last resourceVersion; ``410 Gone`` means relist; a
dropped connection or a server error is retried after a capped exponential backoff with
jitter; a resource the server will not serve (403, 404) is marked unreadable and retried
slowly. The inventory is exposed only once every resource has completed its first list.
A store keeps of each object what the inventory reads (:mod:`inventory.kubernetes.shapes`),
packed (:mod:`inventory.kubernetes.packed`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import pickle
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from inventory.backoff import Backoff
from inventory.errors import ConfigError
from inventory.facts import FactSet
from inventory.kubernetes.history import IpHistory, Retention
from inventory.kubernetes.inventory import Inventory, NicsKept, build_inventory
from inventory.kubernetes.objects import ClusterObjects, Object
from inventory.kubernetes.packed import Packed, Unpacked
from inventory.kubernetes.resources import OWNER_KINDS, WATCHED, Resource
from inventory.kubernetes.shapes import shaped
from inventory.kubernetes.tenants import DEFAULT_RULES

log = logging.getLogger(__name__)
_UNSERVED = (403, 404)


@dataclass(frozen=True)
class LiveSettings:
    """Knobs of live mode."""

    page_size: int = 500
    watch_timeout_s: int = 300
    request_timeout_s: float = 60.0
    backoff: Backoff = field(default_factory=Backoff)
    retention: Retention = field(default_factory=Retention)
    tenant_rules: tuple[str, ...] = DEFAULT_RULES


def api_client(kubeconfig: str | None = None, context: str | None = None) -> client.ApiClient:
    """An ApiClient from in-cluster config, or from a kubeconfig (and context) otherwise;
    ConfigError names the kubeconfig (or context) that cannot be used, and why."""
    configuration = client.Configuration()
    configuration.connection_pool_maxsize = len(WATCHED) + 4  # a watch per resource, + GETs
    if kubeconfig is None and context is None:
        try:
            config.load_incluster_config(client_configuration=configuration)
            return client.ApiClient(configuration)
        except config.ConfigException:
            pass
    where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        if context is not None:
            contexts, _ = config.list_kube_config_contexts(config_file=kubeconfig)
            names = [c["name"] for c in contexts]
            if context not in names:
                raise ConfigError(where, "context", f"no context {context!r} (contexts: "
                                  f"{', '.join(names) or 'none'})")
        config.load_kube_config(config_file=kubeconfig, context=context,
                                client_configuration=configuration)
    except config.ConfigException as exc:
        reason = str(exc).removeprefix("Invalid kube-config file. ")
        if "No configuration found" in reason:
            reason = "no kubeconfig found, and not running in a cluster"
        raise ConfigError(where, "", reason) from exc
    return client.ApiClient(configuration)


class Store:
    """The objects of one resource by namespace/name, as the last list and events left
    them, each packed (:mod:`inventory.kubernetes.packed`)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], Packed] = {}
        self.deleted: list[tuple[Object, float]] = []
        self.synced = threading.Event()
        self.unreadable = False

    def replace(self, objects: list[Packed], now: float) -> None:
        fresh = {o.key: o for o in objects}
        self.deleted += [(o.unpacked(), now) for k, o in self.objects.items()
                         if k not in fresh or fresh[k].uid != o.uid]
        self.objects = fresh

    def apply(self, kind: str, obj: Object, now: float) -> None:
        packed = Packed(obj)
        if kind == "DELETED":
            gone = self.objects.pop(packed.key, None)
            self.deleted.append((obj if gone is None else gone.unpacked(), now))
        else:
            old = self.objects.get(packed.key)
            if old is not None and old.uid != packed.uid:
                self.deleted.append((old.unpacked(), now))
            self.objects[packed.key] = packed


class Reflector:
    """Keeps one Store in step with one resource of the API server (runs in a thread)."""

    def __init__(self, api: client.ApiClient, resource: Resource, store: Store,
                 settings: LiveSettings, lock: threading.Lock, changed: Callable[[], None],
                 clock: Callable[[], float] = time.time) -> None:
        self.resource, self.store, self.settings = resource, store, settings
        self.lock, self.changed, self.clock = lock, changed, clock
        self.list_call = _list_call(api, resource)
        # Events as plain dicts: "object" makes the client's deserializer pass them through
        # (the Pod models cost ~1 ms each; deserialize=False would break its 410 handling).
        self.watcher = watch.Watch(return_type="object")
        self.stopping = threading.Event()
        self.rng = random.Random()
        self.lists = self.watches = 0

    def interrupt(self) -> None:
        """Interrupt a watch blocked on its socket (after ``stopping`` is set).

        Watch.stop() alone does not unblock a plain-HTTP watch (urllib3 detaches the socket
        from the connection it inspects), so the response's socket is shut down here.
        """
        self.watcher.stop()
        response = getattr(self.watcher, "_resp", None)
        with contextlib.suppress(Exception):
            duplicate = socket.socket(fileno=os.dup(response.fileno()))
            duplicate.shutdown(socket.SHUT_RDWR)
            duplicate.close()

    def run(self) -> None:
        """List, then watch and re-watch from the last version; relist only on 410 Gone."""
        attempt = 0
        version: str | None = None
        while not self.stopping.is_set():
            try:
                if version is None:
                    version = self._list()
                version = self._watch(version)
                attempt = 0
            except ApiException as exc:
                if exc.status == 410:
                    log.info("%s: resourceVersion expired, relisting", self.resource.name)
                    version = None
                    continue
                if exc.status in _UNSERVED:
                    self._unreadable(exc)
                    version = None
                attempt = self._pause(attempt, f"API error {exc.status}")
            except Exception as exc:  # any failure (connection dropped...): back off, retry
                if self.stopping.is_set():
                    break
                attempt = self._pause(attempt, f"{type(exc).__name__}: {exc}")

    def _list(self) -> str:
        items: list[Packed] = []
        token, version = None, ""
        while True:
            self.lists += 1
            response = self.list_call(limit=self.settings.page_size, _continue=token,
                                      _preload_content=False,
                                      _request_timeout=self.settings.request_timeout_s)
            page = json.loads(response.data)
            metadata = page.get("metadata") or {}
            version = version or metadata.get("resourceVersion", "")
            items += [Packed(self._typed(o)) for o in page.get("items") or []]
            token = metadata.get("continue")
            if not token:
                break
        with self.lock:
            self.store.replace(items, self.clock())
            self.store.unreadable = False
        self.store.synced.set()
        self.changed()
        return version

    def _watch(self, version: str) -> str:
        """Watch from ``version`` until the stream ends; return the last version seen."""
        self.watches += 1
        for event in self.watcher.stream(
                self.list_call, resource_version=version, allow_watch_bookmarks=True,
                timeout_seconds=self.settings.watch_timeout_s,
                _request_timeout=self.settings.watch_timeout_s + 10):
            obj = event.get("object") or {}
            version = (obj.get("metadata") or {}).get("resourceVersion") or version
            if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                with self.lock:
                    self.store.apply(event["type"], self._typed(obj), self.clock())
                self.changed()
        return version

    def _typed(self, obj: Object) -> Object:
        """``obj`` as the store keeps it (:func:`~inventory.kubernetes.shapes.shaped`),
        with the resource's apiVersion and kind (API list items carry none)."""
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        return shaped(self.resource.name, obj)

    def _unreadable(self, exc: ApiException) -> None:
        with self.lock:
            self.store.unreadable = True
        self.store.synced.set()
        self.changed()
        log.warning("%s: not readable (%s %s)", self.resource.name, exc.status, exc.reason)

    def _pause(self, attempt: int, why: str) -> int:
        delay = self.settings.backoff.delay(attempt, self.rng)
        log.warning("%s: %s; retrying in %.1fs", self.resource.name, why, delay)
        self.stopping.wait(delay)
        return attempt + 1


class LiveKubernetes:
    """Reflectors over every watched resource, and the inventory built from their stores."""

    def __init__(self, api: client.ApiClient, settings: LiveSettings = LiveSettings(),
                 clock: Callable[[], float] = time.time) -> None:
        self.api, self.settings, self.clock = api, settings, clock
        self.lock = threading.Lock()
        self.version = 0
        self.stores = {name: Store() for name in WATCHED}
        self.reflectors = {
            name: Reflector(api, resource, self.stores[name], settings, self.lock,
                            self._changed, clock)
            for name, resource in WATCHED.items()}
        self.history = IpHistory(settings.retention)
        self.owners: dict[tuple[str, str, str, str], Object | None] = {}
        # uid -> (PodFact, [PodInterfaceFact]) pickled: as facts, the few bytes of each
        # would hold on to the pages of everything else its inventory made (x-large:
        # 66 MiB of them held 345 MiB)
        self._live_pods: dict[str, bytes] = {}
        self._threads: list[threading.Thread] = []

    def _changed(self) -> None:
        self.version += 1

    def start(self) -> None:
        for name, reflector in self.reflectors.items():
            thread = threading.Thread(target=reflector.run, name=f"reflector-{name}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop every reflector; a watch opened while stopping is interrupted again."""
        for reflector in self.reflectors.values():
            reflector.stopping.set()
        deadline = time.monotonic() + timeout
        running = list(zip(self._threads, self.reflectors.values(), strict=True))
        while running and time.monotonic() < deadline:
            for thread, reflector in running:
                reflector.interrupt()
                thread.join(timeout=0.02)
            running = [(t, r) for t, r in running if t.is_alive()]

    def ready(self) -> bool:
        """Whether every resource has completed its first list (or is known unreadable)."""
        return all(store.synced.is_set() for store in self.stores.values())

    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for store in self.stores.values():
            if not store.synced.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def inventory(self, keeps: NicsKept | None = None) -> Inventory:
        """The inventory now, with the interfaces of recently departed pods (ended); a
        shard's with ``keeps`` (:func:`~inventory.kubernetes.inventory.build_inventory`)."""
        if not self.ready():
            raise RuntimeError("the initial lists have not completed yet")
        with self.lock:
            objects = ClusterObjects(
                {name: Unpacked(tuple(s.objects.values())) for name, s in self.stores.items()},
                unreadable=frozenset(n for n, s in self.stores.items() if s.unreadable))
            deleted_pods = self.stores["pods"].deleted
            self.stores["pods"].deleted = []
        objects = self._with_owners(objects)
        current = build_inventory(objects, self.settings.tenant_rules, keeps)
        now = self.clock()
        uids = {p.uid for p in current.facts.pods}
        gone_at = {(o.get("metadata") or {}).get("uid"): when for o, when in deleted_pods}
        for uid, kept in self._live_pods.items():
            if uid not in uids:
                self.history.record(*pickle.loads(kept), gone_at.get(uid, now))
        self.history.expire(now)
        by_pod: dict[str, list[Any]] = {}
        for interface in current.facts.pod_interfaces:
            by_pod.setdefault(f"{interface.namespace}/{interface.pod}", []).append(interface)
        self._live_pods = {p.uid: pickle.dumps((p, tuple(by_pod.get(f"{p.namespace}/{p.name}",
                                                                     ()))))
                           for p in current.facts.pods}
        return _with_history(current, self.history)

    def _with_owners(self, objects: ClusterObjects) -> ClusterObjects:
        """Read (once, then cached) every owner the pods' chains name."""
        getter = _OwnerReader(self.api)

        def follow(obj: Object) -> None:
            namespace = (obj.get("metadata") or {}).get("namespace", "")
            for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
                group = ref.get("apiVersion", "").rpartition("/")[0]
                key = (group, ref.get("kind", ""), namespace, ref.get("name", ""))
                if key not in self.owners and (group, ref.get("kind")) in OWNER_KINDS:
                    self.owners[key] = owner = getter.get(
                        ref.get("apiVersion", ""), ref["kind"], namespace, ref.get("name", ""))
                    if owner is not None:
                        follow(owner)

        for pod in objects.get("pods"):
            follow(pod)
        found = tuple(o for o in self.owners.values() if o is not None)
        return ClusterObjects(objects.resources, objects.others + found, objects.unreadable)


class _OwnerReader:
    """GETs one owner object as a raw dict; None when it is forbidden or gone."""

    def __init__(self, api: client.ApiClient) -> None:
        self.custom = client.CustomObjectsApi(api)

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Object | None:
        group, _, version = api_version.rpartition("/")
        plural = OWNER_KINDS[(group, kind)]
        try:
            response = self.custom.get_namespaced_custom_object(
                group, version, namespace, plural, name, _preload_content=False)
        except ApiException as exc:
            log.info("owner %s %s/%s not readable: %s", kind, namespace, name, exc.status)
            return None
        obj = json.loads(response.data)
        obj.setdefault("apiVersion", api_version)
        obj.setdefault("kind", kind)
        return obj


def _list_call(api: client.ApiClient, resource: Resource) -> Callable[..., Any]:
    """The official client's list function for a resource (cluster-wide)."""
    if not resource.group:
        core = client.CoreV1Api(api)
        return {"pods": core.list_pod_for_all_namespaces, "nodes": core.list_node,
                "namespaces": core.list_namespace}[resource.name]
    custom = client.CustomObjectsApi(api)
    return functools.partial(custom.list_cluster_custom_object, resource.group,
                             resource.version, resource.plural)


def _with_history(current: Inventory, history: IpHistory) -> Inventory:
    live = {(p.namespace, p.name) for p in current.facts.pods}
    departed = history.departed()
    extra_pods = tuple({(d.pod.namespace, d.pod.name): d.pod for d in departed
                        if (d.pod.namespace, d.pod.name) not in live}.values())
    extra_interfaces = tuple(i for d in departed for i in d.interfaces)
    facts = current.facts
    merged = FactSet(**{**{name: getattr(facts, name) for name in facts.count()},
                        "pods": facts.pods + extra_pods,
                        "pod_interfaces": facts.pod_interfaces + extra_interfaces})
    counts = {**current.counts, "departed_interfaces": len(extra_interfaces)}
    return Inventory(merged, current.problems, counts)
