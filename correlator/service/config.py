"""``fabcorr run``'s configuration: one YAML file (``examples/fabcorr.yaml`` explains every
key), with environment variables for what a container sets.

Sections: ``switches``, ``defaults`` and ``crawl`` (the device inventory,
:mod:`inventory.devices`),
``service`` (HTTP), ``kubernetes``, ``topology``, ``telemetry``, ``sflow``,
``attribution``. Every key is optional except the switches, which may only be left out
when the topology comes from a snapshot. Errors name the file, the key and the reason.

Environment (over the file): ``FABCORR_LISTEN`` (host:port of metrics and API),
``FABCORR_TLS_CERT`` / ``FABCORR_TLS_KEY``, ``FABCORR_USER`` / ``FABCORR_PASSWORD`` (basic
auth), ``FABCORR_KUBERNETES`` (``live`` or dump paths, comma-separated),
``FABCORR_KUBECONFIG``, ``FABCORR_SNAPSHOT``, ``FABCORR_SFLOW_LISTEN`` (host:port),
``FABCORR_SFLOW_WORKERS``, ``FABCORR_INTERVAL`` (attribution seconds),
``FABCORR_ATTRIBUTION_LOG``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from correlator.attribution.hotspots import Thresholds
from correlator.sflow.accounting import MAX_AGENTS, MAX_SOURCES
from correlator.sflow.receiver import ReceiverConfig
from inventory.devices import CrawlConfig, SwitchConfig, crawl_from, devices_from
from inventory.errors import ConfigError
from inventory.files import load_config

SECTIONS = ("switches", "defaults", "crawl", "service", "kubernetes", "topology", "telemetry",
            "sflow", "attribution")


@dataclass(frozen=True)
class HttpSettings:
    """Where metrics and the API are served, and how they are protected."""

    listen: str = "0.0.0.0:9460"
    tls_cert: str = ""
    tls_key: str = ""
    username: str = ""
    password: str = field(default="", repr=False)

    @property
    def address(self) -> tuple[str, int]:
        return split_address(self.listen, "service.listen")


@dataclass(frozen=True)
class KubernetesSettings:
    """``source``: ``live`` (the API server: in-cluster, or ``kubeconfig``), dump files
    or folders (``kubectl get -o json``), or empty for none."""

    source: tuple[str, ...] = ()
    kubeconfig: str = ""
    context: str = ""
    refresh_s: float = 30.0


@dataclass(frozen=True)
class TopologySettings:
    """Start from ``snapshot`` (else discover); rediscover every ``discover_every_s``
    (0: never); write each new fabric to ``save``."""

    snapshot: str = ""
    facts: tuple[str, ...] = ()
    discover_every_s: float = 3600.0
    deadline_s: float = 60.0
    save: str = ""


@dataclass(frozen=True)
class ServiceConfig:
    """Everything ``fabcorr run`` needs."""

    origin: str
    switches: tuple[SwitchConfig, ...]
    crawl: CrawlConfig | None
    http: HttpSettings
    kubernetes: KubernetesSettings
    topology: TopologySettings
    telemetry_interval_s: float
    sflow: ReceiverConfig
    interval_s: float
    top_pods: int
    thresholds: Thresholds
    attribution_log: str


def load_service_config(path: str | Path, environ: Mapping[str, str] | None = None
                        ) -> ServiceConfig:
    """Read and validate ``path``, then apply the environment."""
    return service_config_from(load_config(path), str(path),
                               os.environ if environ is None else environ)


def service_config_from(document: Any, origin: str, environ: Mapping[str, str]
                        ) -> ServiceConfig:
    """A ServiceConfig from parsed YAML and an environment.

    >>> c = service_config_from({"topology": {"snapshot": "t.json"},
    ...     "sflow": {"listen": "127.0.0.1:16343"}}, "f.yaml", {"FABCORR_INTERVAL": "5"})
    >>> c.sflow.port, c.interval_s, c.switches
    (16343, 5.0, ())
    >>> service_config_from({"telemetry": {"interval": 1}}, "f.yaml", {})
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: f.yaml: telemetry.interval: unknown key (keys: interval_s)
    """
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "expected a mapping of sections")
    for key in document:
        if key not in SECTIONS:
            raise ConfigError(origin, key, f"unknown section (sections: {', '.join(SECTIONS)})")
    read = _Sections(document, origin, environ)
    http = read.section("service", HttpSettings, {
        "listen": "FABCORR_LISTEN", "tls_cert": "FABCORR_TLS_CERT", "tls_key": "FABCORR_TLS_KEY",
        "username": "FABCORR_USER", "password": "FABCORR_PASSWORD"})
    kubernetes = read.section("kubernetes", KubernetesSettings, {
        "source": "FABCORR_KUBERNETES", "kubeconfig": "FABCORR_KUBECONFIG"})
    topology = read.section("topology", TopologySettings, {"snapshot": "FABCORR_SNAPSHOT"})
    telemetry = read.plain("telemetry", {"interval_s": 10.0})
    sflow = read.plain("sflow", {"listen": "0.0.0.0:6343", "workers": 1,
                                 "rcvbuf_bytes": 8 << 20, "relays": (),
                                 "max_agents": MAX_AGENTS, "max_sources": MAX_SOURCES},
                       {"listen": "FABCORR_SFLOW_LISTEN", "workers": "FABCORR_SFLOW_WORKERS"})
    attribution = read.plain("attribution", {"interval_s": 10.0, "top_pods": 10, "log": "",
                                             "thresholds": {}},
                             {"interval_s": "FABCORR_INTERVAL", "log": "FABCORR_ATTRIBUTION_LOG"})
    thresholds = read.nested("attribution.thresholds", attribution["thresholds"], Thresholds)
    host, port = split_address(sflow["listen"], "sflow.listen", origin)
    switches = _switches(document, origin, environ, topology)
    config = ServiceConfig(
        origin=origin, switches=switches,
        crawl=crawl_from(document, origin, switches) if switches else None, http=http,
        kubernetes=kubernetes, topology=topology,
        telemetry_interval_s=telemetry["interval_s"],
        sflow=ReceiverConfig(host, port, sflow["workers"], sflow["rcvbuf_bytes"],
                             attribution["interval_s"], sflow["max_agents"],
                             sflow["max_sources"], sflow["relays"]),
        interval_s=attribution["interval_s"], top_pods=attribution["top_pods"],
        thresholds=thresholds, attribution_log=attribution["log"])
    return _validated(config)


def split_address(text: str, key: str, origin: str = "") -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) as a pair; ConfigError when it is not one."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(origin or "configuration", key, f"expected HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


def _switches(document: dict[str, Any], origin: str, environ: Mapping[str, str],
              topology: TopologySettings) -> tuple[SwitchConfig, ...]:
    if "switches" not in document and topology.snapshot:
        return ()
    return devices_from(document, origin, environ)


def _validated(config: ServiceConfig) -> ServiceConfig:
    origin = config.origin
    for key, value in (("telemetry.interval_s", config.telemetry_interval_s),
                       ("attribution.interval_s", config.interval_s),
                       ("kubernetes.refresh_s", config.kubernetes.refresh_s)):
        if not value > 0:
            raise ConfigError(origin, key, f"must be > 0, not {value!r}")
    if config.top_pods < 1:
        raise ConfigError(origin, "attribution.top_pods", "must be >= 1")
    if bool(config.http.tls_cert) != bool(config.http.tls_key):
        raise ConfigError(origin, "service.tls_cert", "tls_cert and tls_key go together")
    if bool(config.http.username) != bool(config.http.password):
        raise ConfigError(origin, "service.username", "username and password go together")
    try:
        config.sflow.validate()
    except ConfigError as exc:
        raise ConfigError(origin, f"{exc.source}.{exc.key}", exc.reason) from exc
    try:
        config.thresholds.validate()
    except ConfigError as exc:  # named as the file names it
        raise ConfigError(origin, f"attribution.thresholds.{exc.key}", exc.reason) from exc
    return config


class _Sections:
    """Reads sections into dataclasses or dicts: types checked, environment applied."""

    def __init__(self, document: dict[str, Any], origin: str, environ: Mapping[str, str]):
        self.document, self.origin, self.environ = document, origin, environ

    def section(self, name: str, cls: type, env: dict[str, str]) -> Any:
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        return cls(**self.plain(name, defaults, env))

    def nested(self, key: str, entry: Any, cls: type) -> Any:
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        return cls(**self._typed(key, entry, defaults, {}))

    def plain(self, name: str, defaults: dict[str, Any], env: dict[str, str] | None = None
              ) -> dict[str, Any]:
        return self._typed(name, self.document.get(name) or {}, defaults, env or {})

    def _typed(self, key: str, entry: Any, defaults: dict[str, Any], env: dict[str, str]
               ) -> dict[str, Any]:
        if not isinstance(entry, dict):
            raise ConfigError(self.origin, key, "expected a mapping")
        values = dict(defaults)
        for name, value in entry.items():
            if name not in defaults:
                raise ConfigError(self.origin, f"{key}.{name}",
                                  f"unknown key (keys: {', '.join(defaults)})")
            values[name] = self._value(f"{key}.{name}", value, defaults[name])
        for name, variable in env.items():
            if variable in self.environ:
                values[name] = self._value(variable, self._parse(self.environ[variable],
                                                                 defaults[name]),
                                           defaults[name])
        return values

    @staticmethod
    def _parse(text: str, default: Any) -> Any:
        if isinstance(default, tuple):
            return [part for part in text.split(",") if part]
        return text

    def _value(self, key: str, value: Any, default: Any) -> Any:
        kind = type(default)
        if isinstance(default, tuple):
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(self.origin, key, "expected a list of strings")
            return tuple(value)
        if kind in (int, float) and isinstance(value, str):
            try:
                value = kind(value)
            except ValueError:
                raise ConfigError(self.origin, key, f"expected a number, not {value!r}") \
                    from None
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if kind is dict:
            if not isinstance(value, dict):
                raise ConfigError(self.origin, key, "expected a mapping")
            return value
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(self.origin, key, f"expected {kind.__name__}, not {value!r}")
        return value
