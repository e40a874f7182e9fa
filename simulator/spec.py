"""Spec files: fabrics (FabricSpec fields plus a ``jobs`` list) and sFlow captures
(CaptureSpec fields plus a ``flows`` list of PortFlow fields).

Example (``examples/fabric-small/fabric.yaml``)::

    nodes: 8
    rails: 2
    leaves_per_rail: 2
    spines: 2
    vfs_per_pf: 4
    jobs:
      - {tenant: team-a, name: llm-pretrain, kind: PyTorchJob, pods: 4}
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path
from typing import Any

from inventory.errors import ConfigError
from inventory.files import load_config
from simulator.generator import FabricSpec, JobSpec
from simulator.sflow_run import CaptureSpec, PortFlow


def load_fabric_spec(path: str | Path) -> FabricSpec:
    """Read and validate a fabric spec file; ConfigError names the file, key and reason."""
    return fabric_spec_from(load_config(path), str(path))


def fabric_spec_from(document: Any, origin: str = "<spec>") -> FabricSpec:
    """A FabricSpec from parsed YAML.

    >>> fabric_spec_from({"nodes": 2, "jobs": [{"tenant": "a", "name": "j"}]}).jobs
    (JobSpec(tenant='a', name='j', kind='PyTorchJob', pods=2, nics_per_pod=0),)
    >>> fabric_spec_from({"node": 2}, "f.yaml")
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: f.yaml: node: unknown key (keys: nodes, rails, ...)
    """
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "a fabric spec is a mapping of keys")
    values = _fields(FabricSpec, {k: v for k, v in document.items() if k != "jobs"}, origin, "")
    jobs = document.get("jobs", [])
    if not isinstance(jobs, list):
        raise ConfigError(origin, "jobs", "expected a list of jobs")
    values["jobs"] = tuple(
        JobSpec(**_fields(JobSpec, job, origin, f"jobs[{i}].")) for i, job in enumerate(jobs)
    )
    spec = FabricSpec(**values)
    try:
        spec.validate()
    except ValueError as exc:
        raise ConfigError(origin, "", str(exc)) from exc
    return spec


def load_capture_spec(path: str | Path) -> CaptureSpec:
    """Read and validate a capture spec (``simulate capture --flows``).

    >>> capture_spec_from({"seconds": 5, "flows": [{"switch": "leaf01", "port": "Ethernet1",
    ...     "src": "10.101.0.2", "dst": "10.101.0.3", "packets_per_s": 1000}]}).flows[0].port
    'Ethernet1'
    """
    return capture_spec_from(load_config(path), str(path))


def capture_spec_from(document: Any, origin: str = "<capture>") -> CaptureSpec:
    """A CaptureSpec from parsed YAML; ConfigError names the file, key and reason."""
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "a capture spec is a mapping of keys")
    values = _fields(CaptureSpec, {k: v for k, v in document.items() if k != "flows"},
                     origin, "")
    flows = document.get("flows", [])
    if not isinstance(flows, list) or not flows:
        raise ConfigError(origin, "flows", "expected a non-empty list of flows")
    parsed = []
    for i, flow in enumerate(flows):
        fields = _fields(PortFlow, flow, origin, f"flows[{i}].")
        missing = [k for k in ("switch", "port", "src", "dst", "packets_per_s")
                   if k not in fields]
        if missing:
            raise ConfigError(origin, f"flows[{i}]", f"missing {', '.join(missing)}")
        if fields["packets_per_s"] < 0:
            raise ConfigError(origin, f"flows[{i}].packets_per_s", "must be >= 0")
        for key in ("src", "dst"):
            try:
                ipaddress.ip_address(fields[key])
            except ValueError:
                raise ConfigError(origin, f"flows[{i}].{key}",
                                  f"{fields[key]!r} is not an IP address") from None
        parsed.append(PortFlow(**fields))
    values["flows"] = tuple(parsed)
    for key in ("seconds", "sampling_rate", "counter_every_s"):
        if values.get(key, 1) < 1:
            raise ConfigError(origin, key, "must be >= 1")
    return CaptureSpec(**values)


def _fields(cls: type, entry: Any, origin: str, prefix: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ConfigError(origin, prefix.rstrip("."), "expected a mapping")
    known = {f.name: f for f in dataclasses.fields(cls) if f.name not in ("jobs", "flows")}
    for key, value in entry.items():
        if key not in known:
            raise ConfigError(origin, f"{prefix}{key}",
                              f"unknown key (keys: {', '.join(known)})")
        default = known[key].default
        expected = type(default) if default is not dataclasses.MISSING else \
            (int if known[key].type in ("int", int) else str)
        if expected is float and isinstance(value, int):
            continue
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(origin, f"{prefix}{key}",
                              f"expected {expected.__name__}, got {value!r}")
    return dict(entry)
