"""What live mode's cache keeps of an object: the fields the inventory reads of it.

The objects of the large resources are cut down as they arrive (:func:`shaped`), so the
cache holds no more than the inventory needs (the x-large fabric's, whole: 720 MiB of
SriovNetworkNodeStates, 187 MiB of pods, 123 MiB of SpiderEndpoints):

- a SriovNetworkNodeState keeps, per PF, what
  :func:`~inventory.kubernetes.mapping.sriov_nics` reads: name, PCI address, MAC, link
  speed, and per VF its PCI address, ``vfID`` and MAC;
- a pod its names, uid, labels, owners, times, Multus network-status annotation, node and
  start time (not its containers, volumes, conditions or managed fields);
- a SpiderEndpoint its names, uid, owners and current addresses.

Every object keeps its apiVersion, kind, name, namespace, uid and resourceVersion; one that
does not look as expected (a section that is not an object) is kept as it came, for the
inventory to report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from inventory.kubernetes.mapping import Object
from inventory.kubernetes.netstatus import ANNOTATIONS

_IDENTITY = ("apiVersion", "kind")
_METADATA = ("name", "namespace", "uid", "resourceVersion")
_OWNED = (*_METADATA, "ownerReferences")
_POD = (*_OWNED, "labels", "creationTimestamp", "deletionTimestamp")
_ENDPOINT_IP = ("interface", "ipv4", "ipv6", "ipv4Pool", "ipv6Pool", "vlan")
_PF = ("name", "pciAddress", "mac", "linkSpeed")
_VF = ("pciAddress", "vfID", "mac")


def shaped(resource: str, obj: Object) -> Object:
    """``obj`` of the watched ``resource`` as the cache keeps it.

    >>> state = {"kind": "SriovNetworkNodeState", "metadata": {"name": "gpu01",
    ...          "labels": {"a": "b"}}, "spec": {"interfaces": []}, "status": {
    ...          "syncStatus": "Succeeded", "interfaces": [{"name": "ens1f0np0",
    ...          "pciAddress": "0000:1a:00.0", "driver": "mlx5_core", "Vfs": [
    ...          {"pciAddress": "0000:1a:00.2", "vfID": 0, "mtu": 9000}]}]}}
    >>> shaped("sriovnetworknodestates", state)  # doctest: +NORMALIZE_WHITESPACE
    {'kind': 'SriovNetworkNodeState', 'metadata': {'name': 'gpu01'}, 'status':
     {'interfaces': [{'name': 'ens1f0np0', 'pciAddress': '0000:1a:00.0',
                      'Vfs': [{'pciAddress': '0000:1a:00.2', 'vfID': 0}]}]}}
    >>> shaped("nodes", {"spec": {"taints": []}}) == {"spec": {"taints": []}}
    True
    """
    shape = _SHAPES.get(resource)
    return obj if shape is None else shape(obj)


def _pod(pod: Object) -> Object:
    parts = _sections(pod, "metadata", "spec", "status")
    if parts is None:
        return pod
    metadata, spec, status = parts
    kept = _picked(metadata, _POD)
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        kept["annotations"] = _picked(annotations, ANNOTATIONS)
    elif annotations is not None:
        kept["annotations"] = annotations
    return {**_picked(pod, _IDENTITY), "metadata": kept, "spec": _picked(spec, ("nodeName",)),
            "status": _picked(status, ("startTime",))}


def _spider_endpoint(endpoint: Object) -> Object:
    parts = _sections(endpoint, "metadata", "status")
    if parts is None:
        return endpoint
    metadata, status = parts
    current = status.get("current")
    if isinstance(current, dict):
        ips = current.get("ips")
        current = {**_picked(current, ("uid", "node")), **({"ips": [
            _picked(ip, _ENDPOINT_IP) if isinstance(ip, dict) else ip for ip in ips]
            if isinstance(ips, list) else ips} if ips is not None else {})}
    return {**_picked(endpoint, _IDENTITY), "metadata": _picked(metadata, _OWNED),
            "status": {**_picked(status, ("ownerControllerType",)),
                       **({"current": current} if current is not None else {})}}


def _sriov_state(state: Object) -> Object:
    parts = _sections(state, "metadata", "status")
    if parts is None:
        return state
    metadata, status = parts
    interfaces = status.get("interfaces")
    return {**_picked(state, _IDENTITY), "metadata": _picked(metadata, _METADATA),
            "status": {"interfaces": [_pf(i) for i in interfaces]
                       if isinstance(interfaces, list) else interfaces}}


def _pf(interface: Any) -> Any:
    if not isinstance(interface, dict):
        return interface
    vfs = interface.get("Vfs")
    kept = _picked(interface, _PF)
    if vfs is not None:
        kept["Vfs"] = [_picked(vf, _VF) if isinstance(vf, dict) else vf for vf in vfs] \
            if isinstance(vfs, list) else vfs
    return kept


def _sections(obj: Object, *names: str) -> list[dict[str, Any]] | None:
    """The sections ``names`` of ``obj`` ({} for one it lacks); None if one is not an
    object."""
    found = [obj.get(name) if obj.get(name) is not None else {} for name in names]
    return found if all(isinstance(section, dict) for section in found) else None


def _picked(obj: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {key: obj[key] for key in keys if key in obj}


_SHAPES: dict[str, Callable[[Object], Object]] = {
    "sriovnetworknodestates": _sriov_state, "pods": _pod, "spiderendpoints": _spider_endpoint}
"""Watched resource -> what the cache keeps of its objects (the others: all)."""
