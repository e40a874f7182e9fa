"""Single Kubernetes objects -> facts or join tables: nodes, SR-IOV node states, Spiderpool.

Every function takes plain object dicts and returns values (and problems); none raises
on a malformed object.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inventory.facts import NodeFact, PfFact, VfFact, normalize_mac
from inventory.kubernetes.shapes import Text
from inventory.problems import Problem

Object = dict[str, Any]
FIXED_IP_OWNERS = frozenset({"StatefulSet", "VirtualMachineInstance"})


def meta(obj: Object) -> dict[str, Any]:
    return obj.get("metadata") or {}


def ref(obj: Object) -> str:
    """``namespace/name`` (or ``name``) of an object, for problems and joins."""
    m = meta(obj)
    return f"{m['namespace']}/{m.get('name', '')}" if m.get("namespace") else m.get("name", "")


def parse_time(text: str | None) -> float | None:
    """Unix seconds of an RFC 3339 time as the API writes it, or None.

    >>> parse_time("2026-01-01T00:00:00Z"), parse_time(None), parse_time("soon")
    (1767225600.0, None, None)
    """
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def node_fact(node: Object) -> NodeFact:
    return NodeFact(meta(node).get("name", ""))


def sriov_nics(state: Object) -> tuple[list[PfFact], list[VfFact], list[Problem]]:
    """PFs and VFs of one SriovNetworkNodeState (named after its node).

    >>> state = {"metadata": {"name": "gpu01"}, "status": {"interfaces": [{
    ...     "name": "ens1f0np0", "pciAddress": "0000:1a:00.0", "mac": "B8:3F:D2:00:00:01",
    ...     "linkSpeed": "400000 Mb/s", "Vfs": [{"pciAddress": "0000:1a:00.2", "vfID": 0,
    ...     "mac": "02:00:00:00:00:01"}]}]}}
    >>> pfs, vfs, _ = sriov_nics(state)
    >>> pfs[0].mac, pfs[0].speed_bps, vfs[0].pf, vfs[0].vf_index
    ('b8:3f:d2:00:00:01', 400000000000, 'ens1f0np0', 0)
    """
    node = meta(state).get("name", "")
    pfs, vfs, problems = [], [], []
    for interface in _listed((state.get("status") or {}).get("interfaces")):
        name, pci = interface.get("name", ""), interface.get("pciAddress", "")
        if not name or not pci:
            problems.append(Problem("sriov-state-malformed", f"node:{node}",
                                    "interface without name or pciAddress"))
            continue
        pfs.append(PfFact(node, name, pci, normalize_mac(interface.get("mac", "")),
                          _link_speed(interface.get("linkSpeed", ""))))
        for vf in _listed(interface.get("Vfs")):
            if not vf.get("pciAddress") or not isinstance(vf.get("vfID"), int):
                problems.append(Problem("sriov-state-malformed", f"node:{node}",
                                        f"VF of {name} without pciAddress or vfID"))
                continue
            vfs.append(VfFact(node, vf["pciAddress"], name, vf["vfID"],
                              normalize_mac(vf.get("mac", ""))))
    return pfs, vfs, problems


def _listed(value: Any) -> Iterator[dict[str, Any]]:
    """The objects of a list (as the cache may keep it, :class:`Text`), an empty one in
    place of any other item, for the caller to report; one empty object in place of a
    value that is not a list; none for no value."""
    if isinstance(value, (list, Text)):
        yield from (item if isinstance(item, dict) else {} for item in value)
    elif value is not None:
        yield {}


def _link_speed(text: str) -> int | None:
    """Bits per second of ``"400000 Mb/s"``; None when unknown."""
    number, _, unit = text.partition(" ")
    scale = {"Mb/s": 10**6, "Gb/s": 10**9}.get(unit)
    return int(number) * scale if number.isdigit() and scale else None


@dataclass(frozen=True, slots=True)
class EndpointIp:
    """One interface of a SpiderEndpoint: addresses with prefix, pool, VLAN."""

    ipv4: str = ""
    ipv6: str = ""
    pool: str = ""
    vlan: int | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A SpiderEndpoint: the pod incarnation it describes and its interfaces."""

    uid: str
    node: str
    fixed: bool
    owner_kind: str
    interfaces: dict[str, EndpointIp]


def spider_endpoint(endpoint: Object) -> Endpoint:
    """The interfaces and fixed-IP status of a SpiderEndpoint.

    An IP is fixed when the endpoint has no ownerReferences and its top controller is a
    StatefulSet or a KubeVirt VMI (it then outlives pod restarts).
    """
    status = endpoint.get("status") or {}
    current = status.get("current") or {}
    interfaces = {}
    for entry in current.get("ips") or []:
        if isinstance(entry, dict) and entry.get("interface"):
            interfaces[entry["interface"]] = EndpointIp(
                entry.get("ipv4", "") or "", entry.get("ipv6", "") or "",
                entry.get("ipv4Pool", "") or entry.get("ipv6Pool", "") or "",
                entry.get("vlan") if isinstance(entry.get("vlan"), int) else None)
    owner_kind = status.get("ownerControllerType", "") or ""
    fixed = not meta(endpoint).get("ownerReferences") and owner_kind in FIXED_IP_OWNERS
    return Endpoint(current.get("uid", ""), current.get("node", ""), fixed, owner_kind,
                    interfaces)


@dataclass(frozen=True, slots=True)
class Pool:
    """A SpiderIPPool: its subnet and which pod holds each allocated address."""

    name: str
    subnet: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    allocated: dict[str, str]


def ip_pool(pool: Object) -> tuple[Pool, list[Problem]]:
    """A SpiderIPPool; ``status.allocatedIPs`` is a JSON string of ip -> {pod, podUid}."""
    name = meta(pool).get("name", "")
    problems = []
    try:
        subnet = ipaddress.ip_network((pool.get("spec") or {}).get("subnet", ""), strict=False)
    except ValueError:
        subnet = None
        problems.append(Problem("ippool-malformed", f"ippool:{name}", "no valid spec.subnet"))
    allocated: dict[str, str] = {}
    text = (pool.get("status") or {}).get("allocatedIPs")
    if text:
        try:
            decoded = json.loads(text)
            allocated = {ip: entry.get("pod", "") for ip, entry in decoded.items()}
        except (TypeError, ValueError, AttributeError) as exc:
            problems.append(Problem("ippool-malformed", f"ippool:{name}",
                                    f"status.allocatedIPs: {exc}"))
    return Pool(name, subnet, allocated), problems


def network_vlans(configs: list[Object], attachments: list[Object]) -> dict[str, int]:
    """``namespace/name`` of a network -> its VLAN, from SpiderMultusConfigs (``sriov.vlanID``)
    and NetworkAttachmentDefinitions (the CNI config's ``vlan``); SMCs win."""
    vlans: dict[str, int] = {}
    for nad in attachments:
        try:
            config = json.loads((nad.get("spec") or {}).get("config") or "{}")
        except ValueError:
            continue
        plugins = config.get("plugins", [config]) if isinstance(config, dict) else []
        vlan = next((p["vlan"] for p in plugins if isinstance(p, dict)
                     and isinstance(p.get("vlan"), int)), None)
        if vlan is not None:
            vlans[ref(nad)] = vlan
    for smc in configs:
        sriov = (smc.get("spec") or {}).get("sriov") or {}
        if isinstance(sriov.get("vlanID"), int):
            vlans[ref(smc)] = sriov["vlanID"]
    return vlans
