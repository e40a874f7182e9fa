"""What live mode's cache keeps of an object: the fields the inventory reads of it.

The objects of the large resources are cut down as they arrive (:func:`shaped`), so the
cache holds no more than the inventory needs (the x-large fabric's, whole: 720 MiB of
SriovNetworkNodeStates, 187 MiB of pods, 123 MiB of SpiderEndpoints):

- a SriovNetworkNodeState keeps, per PF, what
  :func:`~inventory.kubernetes.mapping.sriov_nics` reads: name, PCI address, MAC, link
  speed, and per VF its PCI address, ``vfID`` and MAC;
- a pod its names, uid, labels, owners, times, Multus network-status annotation, node and
  start time (not its containers, volumes, conditions or managed fields);
- a SpiderEndpoint its names, uid, owners and current addresses;
- a node its name.

Every object keeps its apiVersion, kind, name, namespace, uid and resourceVersion. A shape
is written as what it keeps (:data:`Shape`) and cut by one function (:func:`_cut`);
whatever does not look as the shape expects (a section that is not an object, a list that
is not one) is kept as it came, for the inventory to report. A PF's VFs, and a
SpiderEndpoint's addresses, are kept as one text (:class:`Text`): as dicts, their few
short fields cost several times that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

from inventory.kubernetes.netstatus import ANNOTATIONS

Shape: TypeAlias = "tuple[str, ...] | dict[str, Shape | None] | list[Shape]"
"""What to keep of a value: of an object, the keys a tuple names (whole), or those a dict
names with the shape of each (None: whole); of a list, each item's shape (its one
element), or of a list of flat objects, the keys :class:`Rows` names."""


class Rows(tuple[str, ...]):
    """The shape of a list of flat objects (of strings and integers) kept as :class:`Text`,
    these keys of each."""


class Text:
    """A list of flat objects as one text: a line per object, a field per key (a tab
    between them), each a type letter and the value (``s`` a string, ``i`` an integer)
    or empty (no such key). Iterating gives the objects again, as new dicts.

    >>> rows = Text.of([{"a": "x", "b": 1}, {"b": -2}], ("a", "b"))
    >>> list(rows), len(rows), rows == [{"a": "x", "b": 1}, {"b": -2}]
    ([{'a': 'x', 'b': 1}, {'b': -2}], 2, True)
    >>> Text.of([{"a": True}], ("a",)), Text.of([{"a": "x\ty"}], ("a",))  # kept as they came
    ([{'a': True}], [{'a': 'x\ty'}])
    """

    __slots__ = ("_keys", "_text")

    def __init__(self, keys: tuple[str, ...], text: str) -> None:
        self._keys, self._text = keys, text

    @classmethod
    def of(cls, items: list[Any], keys: tuple[str, ...]) -> Text | list[Any]:
        """``items`` as text, those ``keys`` of each; ``items`` cut as a list when one is
        not an object of strings (with no tab or newline) and integers."""
        lines = []
        for item in items:
            if not isinstance(item, dict):
                break
            fields = [_field(item[key]) if key in item else "" for key in keys]
            if None in fields:
                break
            lines.append("\t".join(fields))  # type: ignore[arg-type]
        else:
            return cls(keys, "\n".join(lines)) if lines else []
        return [_cut(item, keys) for item in items]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for line in self._text.split("\n"):
            yield {key: value[1:] if value[0] == "s" else int(value[1:])
                   for key, value in zip(self._keys, line.split("\t"), strict=True) if value}

    def __len__(self) -> int:
        return self._text.count("\n") + 1  # never empty: no object is no text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Text, list)) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


def _field(value: Any) -> str | None:
    """A value as a field of :class:`Text`; None when it cannot be one."""
    if type(value) is int:
        return f"i{value}"
    if type(value) is str and "\t" not in value and "\n" not in value:
        return "s" + value
    return None

_METADATA = ("name", "namespace", "uid", "resourceVersion")
_OBJECT = dict.fromkeys(("apiVersion", "kind"))
_OWNED = dict.fromkeys((*_METADATA, "ownerReferences"))

_SHAPES: dict[str, Shape] = {
    "sriovnetworknodestates": {**_OBJECT, "metadata": _METADATA, "status": {"interfaces": [{
        **dict.fromkeys(("name", "pciAddress", "mac", "linkSpeed")),
        "Vfs": Rows(("pciAddress", "vfID", "mac"))}]}},
    "pods": {**_OBJECT, "metadata": {
        **_OWNED, **dict.fromkeys(("labels", "creationTimestamp", "deletionTimestamp")),
        "annotations": ANNOTATIONS}, "spec": ("nodeName",), "status": ("startTime",)},
    "spiderendpoints": {**_OBJECT, "metadata": _OWNED, "status": {
        "ownerControllerType": None, "current": {"uid": None, "node": None, "ips": Rows(
            ("interface", "ipv4", "ipv6", "ipv4Pool", "ipv6Pool", "vlan"))}}},
    "nodes": {**_OBJECT, "metadata": _METADATA},
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
    >>> shaped("namespaces", {"spec": {"finalizers": []}}) == {"spec": {"finalizers": []}}
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
    if isinstance(shape, Rows):
        return Text.of(value, shape) if isinstance(value, list) else value
    if isinstance(shape, list):
        return [_cut(item, shape[0]) for item in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    if isinstance(shape, tuple):
        return {key: value[key] for key in shape if key in value}
    return {key: _cut(value[key], inner) for key, inner in shape.items() if key in value}
