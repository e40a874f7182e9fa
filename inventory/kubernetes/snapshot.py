"""Snapshot mode: ``kubectl get ... -A -o json`` dumps (files or directories) -> ClusterObjects.

A file holds one List (``kind: List`` or ``<Kind>List``) or one object, as JSON or YAML;
a directory contributes its ``*.json``/``*.yaml`` files. Items are sorted into the watched
resources by apiVersion and kind; everything else is kept as possible pod owners.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from inventory.bulk import gc_paused
from inventory.errors import SourceError
from inventory.kubernetes.objects import ClusterObjects, sort_objects

_SUFFIXES = (".json", ".yaml", ".yml")


def read_cluster_objects(paths: Iterable[str | Path]) -> ClusterObjects:
    """Every object in the given dump files and directories."""
    items: list[dict[str, Any]] = []
    with gc_paused():
        for path in _files(paths):
            items.extend(_items(_load(path), path))
    resources, others = sort_objects(items)
    return ClusterObjects({name: tuple(objs) for name, objs in resources.items()}, tuple(others))


def _files(paths: Iterable[str | Path]) -> list[Path]:
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix in _SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            raise SourceError(f"{path}: no such file or directory")
    return files


def _load(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise SourceError(f"{path}: cannot read as a Kubernetes object dump: {exc}") from exc


def _items(document: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        raise SourceError(f"{path}: expected a Kubernetes object or List")
    if "items" in document and str(document.get("kind", "")).endswith("List"):
        items = document["items"] or []
        if not all(isinstance(i, dict) for i in items):
            raise SourceError(f"{path}: List items must be objects")
        return items
    return [document]
