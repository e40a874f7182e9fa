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
        if not all(isinstance(i, dict) for i in items):
            raise SourceError(f"{path}: List items must be objects")
        return items
    return [document]
