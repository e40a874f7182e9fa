"""``fabcorr run``'s configuration: one YAML file (``examples/fabcorr.yaml`` explains every
key), with environment variables for what a container sets, validated by pydantic models
whose JSON Schema ``fabcorr config schema`` prints.

Sections: ``switches``, ``defaults`` and ``crawl`` (the device inventory,
:mod:`inventory.devices`), ``service`` (HTTP), ``kubernetes``, ``topology``, ``telemetry``,
``sflow``, ``attribution``, ``shards``. Every key is optional except the switches, which may only be
left out when the topology comes from a snapshot. Files named must exist (snapshot, TLS
certificate and key, CA, Kubernetes dumps, kubeconfig) or be writable (attribution log,
saved snapshot). Errors name the file, the key (or the environment variable) and the
reason, and never show a value.

Environment of the server (over the file; the CLI client's ``FABCORR_USER``,
``FABCORR_PASSWORD`` and ``FABCORR_SNAPSHOT`` are not read here): ``FABCORR_LISTEN``
(host:port of metrics and API), ``FABCORR_TLS_CERT`` / ``FABCORR_TLS_KEY``,
``FABCORR_SERVICE_USER`` / ``FABCORR_SERVICE_PASSWORD`` (basic auth), ``FABCORR_KUBERNETES``
(``live`` or dump paths, comma-separated), ``FABCORR_KUBECONFIG``, ``FABCORR_SFLOW_LISTEN``
(host:port), ``FABCORR_SFLOW_WORKERS``, ``FABCORR_INTERVAL`` (attribution seconds),
``FABCORR_ATTRIBUTION_LOG``.
"""

from __future__ import annotations

import os
import socket
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, model_validator
from pydantic.json_schema import PydanticJsonSchemaWarning

from correlator.attribution.hotspots import Thresholds
from correlator.sflow.admission import parse_relays
from correlator.sflow.receiver import ReceiverConfig
from correlator.shards import ALONE, Shard
from inventory.devices import NO_SECRET, CrawlConfig, DeviceSections, Secret, SwitchConfig
from inventory.errors import ConfigError
from inventory.files import load_config
from inventory.schema import (
    STRICT,
    Address,
    ExistingFile,
    ExistingPath,
    LocatedError,
    Seconds,
    WritableFile,
    existing_path,
    split_address,
    validate_document,
)

MIN_INTERVAL_S = 0.1
"""The shortest attribution interval: shorter ones hold too few samples to apportion, and a
replay of them takes as many steps as the capture has nanoseconds to spare."""

Interval = Annotated[float, Field(ge=MIN_INTERVAL_S, le=86400, allow_inf_nan=False)]
Rate = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Share = Annotated[float, Field(gt=0, le=1)]

ENVIRONMENT = {
    "FABCORR_LISTEN": "service.listen", "FABCORR_TLS_CERT": "service.tls_cert",
    "FABCORR_TLS_KEY": "service.tls_key", "FABCORR_SERVICE_USER": "service.username",
    "FABCORR_SERVICE_PASSWORD": "service.password",
    "FABCORR_KUBERNETES": "kubernetes.source", "FABCORR_KUBECONFIG": "kubernetes.kubeconfig",
    "FABCORR_SFLOW_LISTEN": "sflow.listen", "FABCORR_SFLOW_WORKERS": "sflow.workers",
    "FABCORR_INTERVAL": "attribution.interval_s", "FABCORR_ATTRIBUTION_LOG": "attribution.log",
}
"""The server's environment variables and the key each one sets."""


class HttpSettings(BaseModel):
    """Where metrics and the API are served, and how they are protected: HTTPS with both
    ``tls_cert`` and ``tls_key``; basic auth with ``username`` and ``password`` (a secret,
    ``{env: NAME}`` or ``{file: PATH}``)."""

    model_config = STRICT
    listen: Address = "0.0.0.0:9460"
    tls_cert: ExistingFile = ""
    tls_key: ExistingFile = ""
    username: str = ""
    password_secret: Secret = Field(NO_SECRET, alias="password")

    @property
    def password(self) -> str:
        return self.password_secret.value

    @property
    def address(self) -> tuple[str, int]:
        return split_address(self.listen)

    @model_validator(mode="after")
    def _pairs(self) -> HttpSettings:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise LocatedError("tls_cert and tls_key go together", ("service", "tls_cert"))
        if bool(self.username) != bool(self.password):
            raise LocatedError("username and password go together", ("service", "username"))
        return self


def _dump_or_live(entry: str) -> str:
    return entry if entry == "live" else existing_path(entry)


class KubernetesSettings(BaseModel):
    """``source``: ``[live]`` (the API server: in-cluster, or ``kubeconfig``), dump files
    or folders (``kubectl get -o json``), or empty for none."""

    model_config = STRICT
    source: tuple[Annotated[str, AfterValidator(_dump_or_live)], ...] = ()
    kubeconfig: ExistingFile = ""
    context: str = ""
    refresh_s: Seconds = 30.0

    @model_validator(mode="before")
    @classmethod
    def _live_is_no_path(cls, values: Any) -> Any:
        if isinstance(values, dict) and isinstance(values.get("source"), str):
            values = {**values, "source": [values["source"]]}
        return values

    @model_validator(mode="after")
    def _live_alone(self) -> KubernetesSettings:
        if "live" in self.source and len(self.source) > 1:
            raise LocatedError("'live' goes alone, not with dump files",
                               ("kubernetes", "source"))
        return self


class TopologySettings(BaseModel):
    """Start from ``snapshot`` (else discover); rediscover every ``discover_every_s``
    (0: never); write each new fabric to ``save``."""

    model_config = STRICT
    snapshot: ExistingFile = ""
    facts: tuple[ExistingPath, ...] = ()
    discover_every_s: Annotated[float, Field(ge=0, le=7 * 86400, allow_inf_nan=False)] = 3600.0
    deadline_s: Seconds = 60.0
    save: WritableFile = ""


class TelemetrySettings(BaseModel):
    """Counter polling / gNMI SAMPLE interval."""

    model_config = STRICT
    interval_s: Interval = 10.0


_RECEIVER, _THRESHOLDS = ReceiverConfig(), Thresholds()  # their defaults are the files'


def _relay(entry: str) -> str:
    parse_relays((entry,))  # ValueError: not an address or range
    return entry


class SflowSettings(BaseModel):
    """Where sFlow is received; ``workers`` > 1 share the port (SO_REUSEPORT)."""

    model_config = STRICT
    listen: Address = "0.0.0.0:6343"
    workers: Annotated[int, Field(ge=1, le=64)] = _RECEIVER.workers
    rcvbuf_bytes: Annotated[int, Field(ge=65536, le=1 << 30)] = _RECEIVER.rcvbuf_bytes
    relays: tuple[Annotated[str, AfterValidator(_relay)], ...] = _RECEIVER.relays
    max_agents: Annotated[int, Field(ge=1, le=1 << 24)] = _RECEIVER.max_agents
    max_sources: Annotated[int, Field(ge=1, le=1 << 26)] = _RECEIVER.max_sources


class ThresholdSettings(BaseModel):
    """When a link direction is hot (:class:`Thresholds`)."""

    model_config = STRICT
    utilization: Share = _THRESHOLDS.utilization
    pfc_per_s: Rate = _THRESHOLDS.pfc_per_s
    ecn_per_s: Rate = _THRESHOLDS.ecn_per_s
    discards_per_s: Rate = _THRESHOLDS.discards_per_s
    intervals: Annotated[int, Field(ge=1, le=1000)] = _THRESHOLDS.intervals
    culprits: Annotated[int, Field(ge=1, le=100)] = _THRESHOLDS.culprits
    dominance: Share = _THRESHOLDS.dominance
    neighbour_share: Share = _THRESHOLDS.neighbour_share


class AttributionSettings(BaseModel):
    """Attribution intervals, pods kept per link direction, the log and the thresholds."""

    model_config = STRICT
    interval_s: Interval = 10.0
    top_pods: Annotated[int, Field(ge=1, le=1000)] = 10
    log: WritableFile = ""
    thresholds: ThresholdSettings = ThresholdSettings()


class ShardSettings(BaseModel):
    """How many shards share the switches (``fabcorr run --shard``)."""

    model_config = STRICT
    count: Annotated[int, Field(ge=1, le=4096)] = 1


class ConfigDocument(DeviceSections):
    """The whole ``fabcorr run`` file: the device sections and the service's."""

    model_config = STRICT
    switches: tuple[SwitchConfig, ...] = ()
    service: HttpSettings = HttpSettings()
    kubernetes: KubernetesSettings = KubernetesSettings()
    topology: TopologySettings = TopologySettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    sflow: SflowSettings = SflowSettings()
    attribution: AttributionSettings = AttributionSettings()
    shards: ShardSettings = ShardSettings()

    @model_validator(mode="after")
    def _switches_or_snapshot(self) -> ConfigDocument:
        if not self.switches and not self.topology.snapshot:
            raise LocatedError("expected a non-empty list of switches (or a "
                               "topology.snapshot)", ("switches",))
        return self


@dataclass(frozen=True)
class ServiceConfig:
    """Everything ``fabcorr run`` needs; ``shards`` is how many share the switches,
    ``shard`` which this process is (``--shard``)."""

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
    shards: int = 1
    shard: Shard = ALONE


def load_service_config(path: str | Path, environ: Mapping[str, str] | None = None
                        ) -> ServiceConfig:
    """Read and validate ``path``, then apply the environment."""
    return service_config_from(load_config(path), str(path),
                               os.environ if environ is None else environ)


def service_config_from(document: Any, origin: str, environ: Mapping[str, str]
                        ) -> ServiceConfig:
    """A ServiceConfig from parsed YAML and an environment.

    >>> c = service_config_from({"topology": {"snapshot": "examples/fabric-small/"
    ...     "topology.json"}, "sflow": {"listen": "127.0.0.1:16343"}}, "f.yaml",
    ...     {"FABCORR_INTERVAL": "5"})
    >>> c.sflow.port, c.interval_s, c.switches
    (16343, 5.0, ())
    >>> service_config_from({"telemetry": {"interval": 1}}, "f.yaml", {})
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: f.yaml: telemetry.interval: unknown key
    """
    document, renames = _with_environment(document, environ)
    parsed: ConfigDocument = validate_document(ConfigDocument, document, origin, environ,
                                               renames)
    attribution, sflow = parsed.attribution, parsed.sflow
    host, port = split_address(sflow.listen)
    return ServiceConfig(
        origin=origin, switches=parsed.switches, crawl=parsed.crawl_config(),
        http=parsed.service, kubernetes=parsed.kubernetes, topology=parsed.topology,
        telemetry_interval_s=parsed.telemetry.interval_s,
        sflow=ReceiverConfig(host, port, sflow.workers, sflow.rcvbuf_bytes,
                             attribution.interval_s, sflow.max_agents, sflow.max_sources,
                             sflow.relays),
        interval_s=attribution.interval_s, top_pods=attribution.top_pods,
        thresholds=Thresholds(**attribution.thresholds.model_dump()),
        attribution_log=attribution.log, shards=parsed.shards.count)


def _with_environment(document: Any, environ: Mapping[str, str]
                      ) -> tuple[Any, dict[str, str]]:
    """``document`` with the server's environment variables applied, and the keys they set
    (errors there name the variable)."""
    if not isinstance(document, dict):
        return document, {}
    document = dict(document)
    renames = {}
    for variable, key in ENVIRONMENT.items():
        if variable not in environ:
            continue
        section, name = key.split(".")
        value: Any = environ[variable]
        if name == "password":
            value = {"env": variable}
        elif name == "source":
            value = [part for part in value.split(",") if part]
        current = document.get(section)
        document[section] = {**(current if isinstance(current, dict) else {}), name: value}
        renames[key] = f"${variable}"
    return document, renames


def check_listening(config: ServiceConfig) -> None:
    """Bind the HTTP (TCP) and sFlow (UDP) addresses, then release them: ConfigError
    naming the key when one is taken, not on this machine or not allowed."""
    for key, kind, (host, port) in (
            ("service.listen", socket.SOCK_STREAM, config.http.address),
            ("sflow.listen", socket.SOCK_DGRAM, (config.sflow.host, config.sflow.port))):
        try:
            family = socket.getaddrinfo(host, port, type=kind)[0][0]
            with socket.socket(family, kind) as probe:
                if kind == socket.SOCK_STREAM:
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ConfigError(config.origin, key, f"cannot listen on {host}:{port}: "
                              f"{reason}") from exc


def config_schema() -> dict[str, Any]:
    """The JSON Schema of the configuration file."""
    with warnings.catch_warnings():  # secrets' defaults are not JSON: left out, as they should
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        return ConfigDocument.model_json_schema(by_alias=True, mode="validation")
