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

Every object keeps its apiVersion, kind, name, namespace, uid and resourceVersion. A shape
is written as what it keeps (:data:`Shape`) and cut by one function (:func:`_cut`);
whatever does not look as the shape expects (a section that is not an object, a list that
is not one) is kept as it came, for the inventory to report.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from inventory.kubernetes.netstatus import ANNOTATIONS

Shape: TypeAlias = "tuple[str, ...] | dict[str, Shape | None] | list[Shape]"
"""What to keep of a value: of an object, the keys a tuple names (whole), or those a dict
names with the shape of each (None: whole); of a list, each item's shape (its one
element)."""

_METADATA = ("name", "namespace", "uid", "resourceVersion")
_OBJECT = dict.fromkeys(("apiVersion", "kind"))
_OWNED = dict.fromkeys((*_METADATA, "ownerReferences"))

_SHAPES: dict[str, Shape] = {
    "sriovnetworknodestates": {**_OBJECT, "metadata": _METADATA, "status": {"interfaces": [{
        **dict.fromkeys(("name", "pciAddress", "mac", "linkSpeed")),
        "Vfs": [("pciAddress", "vfID", "mac")]}]}},
    "pods": {**_OBJECT, "metadata": {
        **_OWNED, **dict.fromkeys(("labels", "creationTimestamp", "deletionTimestamp")),
        "annotations": ANNOTATIONS}, "spec": ("nodeName",), "status": ("startTime",)},
    "spiderendpoints": {**_OBJECT, "metadata": _OWNED, "status": {
        "ownerControllerType": None, "current": {"uid": None, "node": None, "ips": [
            ("interface", "ipv4", "ipv6", "ipv4Pool", "ipv6Pool", "vlan")]}}},
}
"""Watched resource -> what the cache keeps of its objects (the others: all)."""


def shaped(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
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
    return obj if shape is None else _cut(obj, shape)


def _cut(value: Any, shape: Shape | None) -> Any:
    """What ``shape`` keeps of ``value``; ``value`` itself where it does not fit.

    >>> _cut({"a": 1, "b": {"c": 2, "d": 3}, "e": [{"f": 4, "g": 5}, "odd"]},
    ...      {"b": ("c",), "e": [("f",)], "x": None})
    {'b': {'c': 2}, 'e': [{'f': 4}, 'odd']}
    """
    if shape is None:
        return value
    if isinstance(shape, list):
        return [_cut(item, shape[0]) for item in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    if isinstance(shape, tuple):
        return {key: value[key] for key in shape if key in value}
    return {key: _cut(value[key], inner) for key, inner in shape.items() if key in value}
