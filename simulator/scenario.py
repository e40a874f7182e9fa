"""Scenario files: an emulated fabric, the AI jobs' traffic on it, and the events that
disturb it (``simulator/scenarios/``, shipped in the package).

A scenario is a mapping of keys::

    fabric: {nodes: 16, rails: 2, leaves_per_rail: 2, spines: 2, oversubscription: 4}
    jobs:
      - {tenant: team-a, name: llm, pods: 4, pattern: ring, gbps: 100,
         duty: {on_s: 2, off_s: 1}, message: {write_bytes: 65536, sends: 2, send_bytes: 256}}
    sampling_rate: 20000
    interval_s: 10
    seconds: 60
    seed: 1
    events:
      - {at: 20, noisy: {job: team-a/llm, gbps: 400}}
      - {at: 30, link_down: leaf01:Ethernet9}
      - {at: 40, ip_reuse: {from: team-a/llm-worker-3, to: team-b/cache-0, job: team-b/kv}}
      - {at: 50, switch_down: spine02}

``fabric`` takes the FabricSpec keys, and ``oversubscription`` (host ports per uplink,
instead of ``uplinks_per_leaf``). A job takes the JobSpec keys and its traffic: its
``pattern`` (ring, tree or all-to-all), ``gbps`` each pod NIC sends while communicating,
an optional on/off ``duty`` cycle, and the ``message`` its flows repeat (an RDMA WRITE of
``write_bytes`` then ``sends`` SENDs of ``send_bytes``; default: drawn from the job's name
and the seed, :mod:`simulator.flow_frames`). Event times are whole seconds from the start.
Names in events are checked against the generated facts by :func:`check_names`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inventory.errors import ConfigError
from inventory.facts import FactSet
from inventory.files import load_config
from simulator.generator import FabricSpec, JobSpec
from simulator.ladder import ladder_spec
from simulator.spec import fabric_spec_from

PATTERNS = ("ring", "tree", "all-to-all")


@dataclass(frozen=True)
class Duty:
    """On for ``on_s`` seconds, off for ``off_s``, repeating, shifted by ``phase_s``."""

    on_s: float
    off_s: float
    phase_s: float = 0.0

    def on_time(self, start: float, end: float) -> float:
        """Seconds of [start, end) spent communicating.

        >>> Duty(2, 1).on_time(0, 3), Duty(2, 1).on_time(1.5, 3.5), Duty(2, 1, 1).on_time(0, 1)
        (2.0, 1.0, 0.0)
        """
        period = self.on_s + self.off_s
        return float(_on_before(end - self.phase_s, self.on_s, period)
                     - _on_before(start - self.phase_s, self.on_s, period))


def _on_before(t: float, on: float, period: float) -> float:
    """Cumulative on-time at ``t`` of cycles starting (on) at multiples of ``period``."""
    cycles, into = divmod(t, period)
    return cycles * on + min(into, on)


@dataclass(frozen=True)
class Message:
    """What a flow sends over and over: one RDMA WRITE of ``write_bytes``, then ``sends``
    SEND messages of ``send_bytes`` each."""

    write_bytes: int
    sends: int = 0
    send_bytes: int = 256


@dataclass(frozen=True)
class JobTraffic:
    """How a job communicates: ``pattern`` between its pods, ``gbps`` per pod NIC while
    on (split evenly over the flows leaving the NIC), always on without ``duty``, each
    flow repeating ``message`` (None: the default mix)."""

    tenant: str
    name: str
    pattern: str = "ring"
    gbps: float = 100.0
    duty: Duty | None = None
    message: Message | None = None

    @property
    def key(self) -> str:
        return f"{self.tenant}/{self.name}"


@dataclass(frozen=True)
class Noisy:
    """From ``at`` on, every NIC of ``job`` (namespace/name) sends ``gbps``."""

    at: int
    job: str
    gbps: float


@dataclass(frozen=True)
class LinkDown:
    """From ``at`` on, the cable at ``switch``:``port`` carries nothing."""

    at: int
    switch: str
    port: str


@dataclass(frozen=True)
class IpReuse:
    """At ``at``, pod ``old`` (namespace/name) ends and a new pod ``new``, of ``job``
    (namespace/name, or none), takes its VFs and fixed IPs, and its traffic."""

    at: int
    old: str
    new: str
    job: str = ""


@dataclass(frozen=True)
class SwitchDown:
    """From ``at`` on, ``switch`` answers no management or telemetry; it still forwards."""

    at: int
    switch: str


Event = Noisy | LinkDown | IpReuse | SwitchDown


@dataclass(frozen=True)
class Scenario:
    """A fabric with jobs (``fabric.jobs``), their traffic, and events over ``seconds``.

    Ground truth is kept per ``interval_s``; sFlow agents sample 1-in-``sampling_rate``
    and send counter samples every ``counter_every_s``. ``start`` (Unix seconds) is when
    second 0 is; 0 means an hour after the fabric's pods started.
    """

    fabric: FabricSpec
    traffic: tuple[JobTraffic, ...]
    sampling_rate: int = 20000
    interval_s: int = 10
    seconds: int = 60
    seed: int = 0
    counter_every_s: int = 5
    start: float = 0.0
    events: tuple[Event, ...] = ()
    origin: str = "<scenario>"

    @property
    def start_time(self) -> float:
        return self.start or self.fabric.start_time + 3600.0


_TOP_KEYS = ("fabric", "jobs", "sampling_rate", "interval_s", "seconds", "seed",
             "counter_every_s", "start", "events")
_JOB_KEYS = ("tenant", "name", "kind", "pods", "nics_per_pod", "pattern", "gbps", "duty",
             "message")
_EVENT_KINDS = ("noisy", "link_down", "ip_reuse", "switch_down")


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; ConfigError names the file, key and reason."""
    return scenario_from(load_config(path), str(path))


def scenario_from(document: Any, origin: str = "<scenario>") -> Scenario:
    """A Scenario from parsed YAML.

    >>> s = scenario_from({"fabric": {"nodes": 2, "rails": 1},
    ...                    "jobs": [{"tenant": "a", "name": "j", "pattern": "tree"}]})
    >>> s.traffic[0].pattern, s.fabric.jobs[0].pods
    ('tree', 2)
    >>> scenario_from({"jobs": [{"tenant": "a", "name": "j", "pattern": "mesh"}]}, "s.yaml")
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: s.yaml: jobs[0].pattern: expected one of ring, tree, ...
    """
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "a scenario is a mapping of keys")
    _known(document, _TOP_KEYS, origin, "")
    jobs_doc = document.get("jobs")
    if not isinstance(jobs_doc, list) or not jobs_doc:
        raise ConfigError(origin, "jobs", "expected a non-empty list of jobs")
    specs, traffic = zip(*(_job(job, origin, f"jobs[{i}]") for i, job in enumerate(jobs_doc)),
                         strict=True)
    keys = [t.key for t in traffic]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            raise ConfigError(origin, f"jobs[{i}]", f"job {key} is defined twice")
    fabric = _fabric(document.get("fabric", {}), specs, origin)
    values = {key: _number(document, key, int, origin, "", minimum=minimum)
              for key, minimum in (("sampling_rate", 1), ("interval_s", 1), ("seconds", 1),
                                   ("seed", None), ("counter_every_s", 1))
              if key in document}
    if "start" in document:
        values["start"] = float(_number(document, "start", float, origin, "", minimum=0))
    scenario = Scenario(fabric, tuple(traffic), origin=origin, **values)
    events = document.get("events", [])
    if not isinstance(events, list):
        raise ConfigError(origin, "events", "expected a list of events")
    parsed = tuple(_event(e, scenario, origin, f"events[{i}]") for i, e in enumerate(events))
    return replace(scenario, events=tuple(sorted(parsed, key=lambda e: e.at)))


def check_names(scenario: Scenario, facts: FactSet) -> None:
    """Check that every pod, switch and port an event names exists in ``facts``
    (ConfigError names the scenario file and the event's key)."""
    pods = {f"{p.namespace}/{p.name}" for p in facts.pods}
    switches = {s.name for s in facts.switches}
    ports = {(i.switch, i.name) for i in facts.interfaces}
    for i, event in enumerate(sorted(scenario.events, key=lambda e: e.at)):
        where = f"events[{i}]"
        if isinstance(event, IpReuse):
            if event.old not in pods:
                raise ConfigError(scenario.origin, f"{where}.ip_reuse.from",
                                  f"no pod {event.old} in the fabric")
            if event.new in pods:
                raise ConfigError(scenario.origin, f"{where}.ip_reuse.to",
                                  f"pod {event.new} already exists")
            pods.add(event.new)
        elif isinstance(event, LinkDown) and (event.switch, event.port) not in ports:
            raise ConfigError(scenario.origin, f"{where}.link_down",
                              f"no port {event.port} on switch {event.switch}")
        elif isinstance(event, SwitchDown) and event.switch not in switches:
            raise ConfigError(scenario.origin, f"{where}.switch_down",
                              f"no switch {event.switch}")


def ladder_scenario(size: str, seconds: int = 30, sampling_rate: int = 400_000,
                    gbps: float = 200.0) -> Scenario:
    """The benchmark ladder fabric ``size`` with its jobs communicating in turn by ring,
    tree and all-to-all at ``gbps`` per NIC, every third job on a 3 s on / 1 s off cycle.

    >>> s = ladder_scenario("small")
    >>> len(s.traffic), [t.pattern for t in s.traffic[:3]], s.traffic[2].duty
    (24, ['ring', 'tree', 'all-to-all'], Duty(on_s=3, off_s=1, phase_s=0.0))
    """
    spec = ladder_spec(size)
    traffic = tuple(
        JobTraffic(job.tenant, job.name, PATTERNS[n % 3], gbps,
                   Duty(3, 1) if n % 3 == 2 else None)
        for n, job in enumerate(spec.jobs))
    return Scenario(spec, traffic, sampling_rate=sampling_rate, seconds=seconds,
                    origin=f"<ladder {size}>")


def _fabric(entry: Any, jobs: tuple[JobSpec, ...], origin: str) -> FabricSpec:
    if not isinstance(entry, dict):
        raise ConfigError(origin, "fabric", "expected a mapping")
    entry = dict(entry)
    over = entry.pop("oversubscription", None)
    if "jobs" in entry:
        raise ConfigError(origin, "fabric.jobs", "jobs belong at the top level")
    try:
        spec = fabric_spec_from(entry, origin)
    except ConfigError as exc:
        raise ConfigError(origin, f"fabric.{exc.key}".rstrip("."), exc.reason) from None
    if over is not None:
        if "uplinks_per_leaf" in entry:
            raise ConfigError(origin, "fabric.oversubscription",
                              "give oversubscription or uplinks_per_leaf, not both")
        ratio = _number({"oversubscription": over}, "oversubscription", float, origin,
                        "fabric.", minimum=1)
        uplinks = math.ceil(spec.nodes_per_leaf / ratio)
        spec = replace(spec, uplinks_per_leaf=math.ceil(uplinks / spec.spines) * spec.spines)
    spec = replace(spec, jobs=jobs)
    try:
        spec.validate()
    except ValueError as exc:
        raise ConfigError(origin, "fabric", str(exc)) from None
    return spec


def _job(entry: Any, origin: str, where: str) -> tuple[JobSpec, JobTraffic]:
    if not isinstance(entry, dict):
        raise ConfigError(origin, where, "expected a mapping")
    _known(entry, _JOB_KEYS, origin, f"{where}.")
    for key in ("tenant", "name"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ConfigError(origin, f"{where}.{key}", "expected a non-empty string")
    kind = entry.get("kind", "PyTorchJob")
    if not isinstance(kind, str):
        raise ConfigError(origin, f"{where}.kind", f"expected str, got {kind!r}")
    pods = _number(entry, "pods", int, origin, f"{where}.", minimum=1, default=2)
    nics = _number(entry, "nics_per_pod", int, origin, f"{where}.", minimum=0, default=0)
    pattern = entry.get("pattern", "ring")
    if pattern not in PATTERNS:
        raise ConfigError(origin, f"{where}.pattern",
                          f"expected one of {', '.join(PATTERNS)}, got {pattern!r}")
    gbps = _number(entry, "gbps", float, origin, f"{where}.", minimum=0, default=100.0)
    duty = _duty(entry["duty"], origin, f"{where}.duty") if "duty" in entry else None
    message = _message(entry["message"], origin, f"{where}.message") \
        if "message" in entry else None
    return (JobSpec(entry["tenant"], entry["name"], kind, pods, nics),
            JobTraffic(entry["tenant"], entry["name"], pattern, float(gbps), duty, message))


def _message(entry: Any, origin: str, where: str) -> Message:
    if not isinstance(entry, dict):
        raise ConfigError(origin, where, "expected a mapping {write_bytes, sends, send_bytes}")
    _known(entry, ("write_bytes", "sends", "send_bytes"), origin, f"{where}.")
    return Message(_number(entry, "write_bytes", int, origin, f"{where}.", minimum=1),
                   _number(entry, "sends", int, origin, f"{where}.", minimum=0, default=0),
                   _number(entry, "send_bytes", int, origin, f"{where}.", minimum=1,
                           default=256))


def _duty(entry: Any, origin: str, where: str) -> Duty:
    if not isinstance(entry, dict):
        raise ConfigError(origin, where, "expected a mapping {on_s, off_s, phase_s}")
    _known(entry, ("on_s", "off_s", "phase_s"), origin, f"{where}.")
    on = _number(entry, "on_s", float, origin, f"{where}.", minimum=0)
    off = _number(entry, "off_s", float, origin, f"{where}.", minimum=0)
    if on + off <= 0:
        raise ConfigError(origin, where, "on_s + off_s must be positive")
    return Duty(on, off, _number(entry, "phase_s", float, origin, f"{where}.", default=0.0))


def _event(entry: Any, scenario: Scenario, origin: str, where: str) -> Event:
    if not isinstance(entry, dict):
        raise ConfigError(origin, where, "expected a mapping with at and one event")
    _known(entry, ("at", *_EVENT_KINDS), origin, f"{where}.")
    at = _number(entry, "at", int, origin, f"{where}.", minimum=0)
    if at >= scenario.seconds:
        raise ConfigError(origin, f"{where}.at", f"must be before the end ({scenario.seconds} s)")
    kinds = [k for k in _EVENT_KINDS if k in entry]
    if len(kinds) != 1:
        raise ConfigError(origin, where, f"expected exactly one of {', '.join(_EVENT_KINDS)}")
    kind, body, key = kinds[0], entry[kinds[0]], f"{where}.{kinds[0]}"
    jobs = {t.key: t for t in scenario.traffic}
    if kind == "noisy":
        _mapping(body, ("job", "gbps"), origin, key)
        gbps = _number(body, "gbps", float, origin, f"{key}.", minimum=0)
        if gbps * 1e9 > scenario.fabric.speed_bps:
            raise ConfigError(origin, f"{key}.gbps", "exceeds the NIC speed")
        return Noisy(at, _job_name(body.get("job"), jobs, origin, f"{key}.job"), float(gbps))
    if kind == "ip_reuse":
        _mapping(body, ("from", "to", "job"), origin, key)
        old, new = (_pod_name(body.get(k), origin, f"{key}.{k}") for k in ("from", "to"))
        job = _job_name(body["job"], jobs, origin, f"{key}.job") if "job" in body else ""
        if job and job.partition("/")[0] != new.partition("/")[0]:
            raise ConfigError(origin, f"{key}.job", f"is not in the namespace of {new}")
        return IpReuse(at, old, new, job)
    if kind == "link_down":
        switch, _, port = body.partition(":") if isinstance(body, str) else ("", "", "")
        if not switch or not port:
            raise ConfigError(origin, key, f"expected SWITCH:PORT, got {body!r}")
        return LinkDown(at, switch, port)
    if not isinstance(body, str) or not body:
        raise ConfigError(origin, key, f"expected a switch name, got {body!r}")
    return SwitchDown(at, body)


def _job_name(value: Any, jobs: dict[str, JobTraffic], origin: str, key: str) -> str:
    if value not in jobs:
        raise ConfigError(origin, key, f"no job {value!r} (jobs: {', '.join(jobs)})")
    return value


def _pod_name(value: Any, origin: str, key: str) -> str:
    if not isinstance(value, str) or value.count("/") != 1 or "" in value.split("/"):
        raise ConfigError(origin, key, f"expected namespace/pod, got {value!r}")
    return value


def _mapping(body: Any, keys: tuple[str, ...], origin: str, where: str) -> None:
    if not isinstance(body, dict):
        raise ConfigError(origin, where, f"expected a mapping {{{', '.join(keys)}}}")
    _known(body, keys, origin, f"{where}.")


def _known(entry: dict, keys: tuple[str, ...], origin: str, prefix: str) -> None:
    for key in entry:
        if key not in keys:
            raise ConfigError(origin, f"{prefix}{key}", f"unknown key (keys: {', '.join(keys)})")


_MISSING: Any = object()


def _number(entry: dict, key: str, kind: type, origin: str, prefix: str, *,
            minimum: float | None = None, default: Any = _MISSING) -> Any:
    """``entry[key]`` as an int (``kind`` int) or a number (``kind`` float), at least
    ``minimum``; ``default`` when absent, else the key is required."""
    if key not in entry:
        if default is _MISSING:
            raise ConfigError(origin, f"{prefix}{key}", "missing")
        return default
    value = entry[key]
    allowed = (int,) if kind is int else (int, float)
    if not isinstance(value, allowed) or isinstance(value, bool):
        name = "an integer" if kind is int else "a number"
        raise ConfigError(origin, f"{prefix}{key}", f"expected {name}, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(origin, f"{prefix}{key}", f"must be >= {minimum:g}")
    return value

