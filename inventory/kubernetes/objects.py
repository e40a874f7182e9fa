"""ClusterObjects: the raw Kubernetes objects one inventory is built from.

Objects are plain dicts in the API's JSON form (camelCase keys, as ``kubectl get -o json``
prints and as the API server sends), whichever mode read them. Live mode and snapshot mode
both end in a ClusterObjects, so everything after it is shared and pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inventory.kubernetes.resources import WATCHED, group_of

Object = dict[str, Any]


@dataclass(frozen=True)
class ClusterObjects:
    """Objects per watched resource name, plus every other object (possible pod owners).

    ``unreadable`` names resources that could not be read at all (RBAC, CRD not
    installed); the inventory reports them and carries on without.
    """

    resources: Mapping[str, Sequence[Object]]
    others: tuple[Object, ...] = ()
    unreadable: frozenset[str] = field(default=frozenset())

    def get(self, name: str) -> Sequence[Object]:
        """The objects of watched resource ``name`` (empty when none were read)."""
        if name not in WATCHED:
            raise KeyError(f"not a watched resource: {name}")
        return self.resources.get(name, ())

    def owner_index(self) -> dict[tuple[str, str, str, str], Object]:
        """(API group, kind, namespace, name) -> object, over the objects that may own a
        pod: the others (no watched kind owns one)."""
        index = {}
        for obj in self.others:
            meta = obj.get("metadata", {})
            key = (group_of(obj.get("apiVersion", "")), obj.get("kind", ""),
                   meta.get("namespace", ""), meta.get("name", ""))
            index[key] = obj
        return index


def sort_objects(items: Iterable[Object]) -> tuple[dict[str, list[Object]], list[Object]]:
    """Split objects into watched resources (by apiVersion and kind) and the rest.

    Objects of a watched kind but another API version go to the rest too (an unknown
    CRD version is not read as the known one); the caller reports them.
    """
    by_kind = {(r.api_version, r.kind): name for name, r in WATCHED.items()}
    sorted_: dict[str, list[Object]] = {}
    rest = []
    for obj in items:
        name = by_kind.get((obj.get("apiVersion", ""), obj.get("kind", "")))
        if name is None:
            rest.append(obj)
        else:
            sorted_.setdefault(name, []).append(obj)
    return sorted_, rest
