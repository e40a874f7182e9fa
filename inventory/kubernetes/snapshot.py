"""Snapshot mode: ``kubectl get ... -A -o json`` dumps (files or directories) -> ClusterObjects.

A file holds one List (``kind: List`` or ``<Kind>List``) or one object, as JSON or YAML;
a directory contributes its ``*.json``/``*.yaml`` files. Items are sorted into the watched
resources by apiVersion and kind; everything else is kept as possible pod owners.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inventory.bulk import gc_paused
from inventory.errors import SourceError
from inventory.files import expand, load_data
from inventory.kubernetes.objects import ClusterObjects, sort_objects


def read_cluster_objects(paths: Iterable[str | Path]) -> ClusterObjects:
    """Every object in the given dump files and directories."""
    items: list[dict[str, Any]] = []
    with gc_paused():
        for path in expand(paths, SourceError):
            document = load_data(path, SourceError, 'a Kubernetes object dump')
            items.extend(_items(document, path))
    resources, others = sort_objects(items)
    return ClusterObjects({name: tuple(objs) for name, objs in resources.items()}, tuple(others))


def _items(document: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        raise SourceError(f"{path}: expected a Kubernetes object or List")
    if "items" in document and str(document.get("kind", "")).endswith("List"):
        items = document["items"] or []
        if not isinstance(items, list):
            raise SourceError(f"{path}: items: expected a list of objects")
        for i, item in enumerate(items):
            _check_shape(item, f"{path}: items[{i}]")
        return items
    _check_shape(document, str(path))
    return [document]


_MAPPINGS = ("metadata", "spec", "status")
_META_MAPPINGS = ("labels", "annotations")


def _check_shape(obj: Any, where: str) -> None:
    """SourceError unless ``obj`` has the envelope every Kubernetes object has: string
    apiVersion and kind, mappings for metadata, spec, status, labels and annotations, a
    list of mappings for ownerReferences (the mapping code relies on no more)."""
    if not isinstance(obj, dict):
        raise SourceError(f"{where}: expected an object (a mapping), not {type(obj).__name__}")
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key, ""), str):
            raise SourceError(f"{where}.{key}: expected a string")
    for key in _MAPPINGS:
        if not isinstance(obj.get(key) or {}, dict):
            raise SourceError(f"{where}.{key}: expected a mapping, not "
                              f"{type(obj[key]).__name__}")
    meta = obj.get("metadata") or {}
    for key in _META_MAPPINGS:
        if not isinstance(meta.get(key) or {}, dict):
            raise SourceError(f"{where}.metadata.{key}: expected a mapping")
    owners = meta.get("ownerReferences") or []
    if not isinstance(owners, list) or not all(isinstance(o, dict) for o in owners):
        raise SourceError(f"{where}.metadata.ownerReferences: expected a list of mappings")
