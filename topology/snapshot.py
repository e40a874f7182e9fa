"""Topology snapshots: a FabricGraph with its facts and problems in one versioned file.

Two forms hold the same document: JSON lines (a ``.json`` file), to read and diff, and a
packed form (any other name; :data:`PACKED` then the document in Python's ``marshal``
format, which parses several times faster than JSON), for a service to load fast. A load
tells them apart by their first bytes. Only load packed snapshots that fabcorr wrote: like
``marshal`` itself, the packed reader is not hardened against crafted files.

Layout (schema ``fabcorr/topology``, version 1), tables of rows to keep it small and fast::

    {"schema": "fabcorr/topology", "version": 1,
     "facts": {<section>: {"fields": [...], "rows": [[...], ...]}, ...},
     "graph": {"nodes": [{"kind": k, "fields": [...], "rows": [[id, ...], ...]}, ...],
               "edges": [{"kind": k, "fields": [...], "rows": [[a, b, ...], ...]}, ...]},
     "problems": [[kind, subject, detail], ...]}

Edge rows name their nodes by position in the node tables. A ``null`` in a row is an
absent attribute. Loading restores the graph as saved (no rebuild), so a snapshot is
exactly what was built; the fact tables are checked for shape at load, the few sections
the indexes need are parsed then, and the rest on first use of ``facts`` (the graph
answers the queries without them). Indexes and query tables are built during the load.
"""

from __future__ import annotations

import json
import marshal
from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx

from inventory.bulk import gc_paused
from inventory.errors import FactError, SnapshotError
from inventory.factfile import check_tables, facts_from_tables, facts_to_tables
from inventory.facts import FactSet
from inventory.files import replace_file
from inventory.problems import Problem
from topology.footprint import prepare
from topology.graph import FabricGraph
from topology.indexes import INDEXED_FACTS, build_indexes
from topology.schema import KIND, pf_id
from topology.vfs import VfRow, VfTable

SCHEMA = "fabcorr/topology"
VERSION = 1
PACKED = b"fabcorr/topology packed\n"
"""The first bytes of a packed snapshot."""


def snapshot_document(fabric: FabricGraph) -> dict[str, Any]:
    """The snapshot of ``fabric`` as JSON-ready data."""
    graph = fabric.graph
    nodes = _tables(((node,), attrs) for node, attrs in graph.nodes(data=True))
    position = {row[0]: i for i, row in enumerate(r for t in nodes for r in t["rows"])}
    edges = _tables(((position[a], position[b]), attrs) for a, b, attrs in graph.edges(data=True))
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "facts": facts_to_tables(fabric.facts),
        "graph": {"nodes": nodes, "edges": edges},
        "problems": [[p.kind, p.subject, p.detail] for p in fabric.problems],
    }


def _tables(items: Iterable[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Nodes ``((id,), attrs)`` or edges ``((a, b), attrs)`` as one table per kind."""
    by_kind: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for key, attrs in items:
        by_kind[attrs[KIND]].append((key, attrs))
    tables = []
    for kind, members in by_kind.items():
        seen: dict[str, None] = {}
        for _, attrs in members:
            seen.update(dict.fromkeys(attrs))
        fields = [k for k in seen if k != KIND]
        tables.append({"kind": kind, "fields": fields, "rows": [
            [*key, *map(attrs.get, fields)]
            for key, attrs in members]})
    return tables


def fabric_from_document(document: Any, origin: str = "<snapshot>") -> FabricGraph:
    """The FabricGraph a snapshot document holds; SnapshotError names what is wrong."""
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise SnapshotError(f"{origin}: not a fabcorr topology snapshot "
                            f"(expected schema {SCHEMA!r})")
    if document.get("version") != VERSION:
        raise SnapshotError(f"{origin}: snapshot version {document.get('version')!r} is not "
                            f"supported (this fabcorr reads version {VERSION})")
    try:
        tables = document["facts"]
        check_tables(tables, origin)
        graph = _graph(document["graph"])
        problems = tuple(Problem(*p) for p in document["problems"])
        indexed = facts_from_tables({k: tables[k] for k in INDEXED_FACTS if k in tables},
                                    origin)
        vfs = VfTable.from_rows(_vf_rows(tables.get("vfs"), graph, origin))
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError, ValueError) as exc:
        raise SnapshotError(f"{origin}: malformed snapshot: {exc!r}") from exc
    return prepare(FabricGraph(graph, lambda: _facts(tables, origin), problems,
                               build_indexes(graph, indexed, vfs), vfs))


def _vf_rows(table: dict[str, Any] | None, graph: nx.Graph, origin: str) -> Iterator[VfRow]:
    """The rows of the ``vfs`` fact table whose PF is in the graph, checked as
    :func:`inventory.factfile.facts_from_tables` would check them, without making facts."""
    parent, known = None, False
    for i, row in enumerate(table["rows"] if table else ()):
        try:
            node, pci, pf, index, mac = row
        except (TypeError, ValueError):
            node = None
        if not (type(row) is list and type(node) is str and type(pci) is str
                and type(pf) is str and type(index) is int and type(mac) is str):
            raise FactError(f"{origin}: vfs[{i}]: expected [node, pci_address, pf, "
                            "vf_index, mac]")
        if (node, pf) != parent:  # the VFs of one PF come together
            parent, known = (node, pf), pf_id(node, pf) in graph
        if known:
            yield node, pci, pf, index, mac


def _facts(tables: dict[str, Any], origin: str) -> FactSet:
    try:
        with gc_paused():
            return facts_from_tables(tables, origin)
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc


def _graph(tables: dict[str, Any]) -> nx.Graph:
    """The graph of a snapshot's node and edge tables, written straight into networkx's node
    and adjacency dicts: what ``add_nodes_from``/``add_edges_from`` would make of the rows,
    without their copies of each attribute dict (a third of a large load)."""
    graph = nx.Graph()
    nodes, adj = graph._node, graph._adj
    ids: list[str] = []
    for table in tables["nodes"]:
        for row, attrs in _rows(table, 1):
            nodes[row[0]] = attrs
            adj[row[0]] = {}
            ids.append(row[0])
    for table in tables["edges"]:
        for row, attrs in _rows(table, 2):
            a, b = ids[row[0]], ids[row[1]]
            adj[a][b] = adj[b][a] = attrs
    return graph


def _rows(table: dict[str, Any], width: int) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    """Each row of a node (``width`` 1) or edge (2) table with its attributes: the table's
    kind, then its fields, nulls left out."""
    kind, fields = table["kind"], table["fields"]
    for row in table["rows"]:
        attrs = {KIND: kind}
        attrs.update(zip(fields, row[width:], strict=True))
        if None in attrs.values():
            attrs = {k: v for k, v in attrs.items() if v is not None}
        yield row, attrs


def save_snapshot(fabric: FabricGraph, path: str | Path) -> None:
    """Write the snapshot of ``fabric`` to ``path``: for a ``.json`` file, compact JSON with
    one line per fact, node, edge and problem, so that two snapshots diff line by line;
    else packed. The file is replaced whole (written beside it, then renamed), so a reader
    never sees half a snapshot."""
    document = snapshot_document(fabric)
    if Path(path).suffix == ".json":
        replace_file(path, chain(_lines(document), "\n"))
    else:
        replace_file(path, PACKED + marshal.dumps(document))


def snapshot_text(fabric: FabricGraph) -> str:
    """The JSON text :func:`save_snapshot` writes to a ``.json`` file."""
    return "".join(_lines(snapshot_document(fabric))) + "\n"


def _lines(value: Any) -> Iterator[str]:
    """JSON text of ``value`` with every list element on its own line, in pieces."""
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield (",\n" if i else "") + json.dumps(key) + ":"
            yield from _lines(item)
        yield "}"
    elif isinstance(value, list) and value:
        yield "[\n"
        for i, item in enumerate(value):
            if i:
                yield ",\n"
            if isinstance(item, dict):
                yield from _lines(item)
            else:
                yield _compact(item)
        yield "]"
    else:
        yield _compact(value)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def load_snapshot(path: str | Path) -> FabricGraph:
    """Read a snapshot written by :func:`save_snapshot`, in either form."""
    try:
        with gc_paused():
            return fabric_from_document(_document(Path(path).read_bytes(), path), str(path))
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from exc


def load_snapshot_switches(path: str | Path) -> FactSet:
    """The switches of a snapshot and nothing else (no graph is built): what an inlet
    needs of a fabric."""
    try:
        document = _document(Path(path).read_bytes(), path)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from exc
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise SnapshotError(f"{path}: not a fabcorr topology snapshot "
                            f"(expected schema {SCHEMA!r})")
    try:
        return facts_from_tables({"switches": document["facts"]["switches"]}, str(path))
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError) as exc:
        raise SnapshotError(f"{path}: malformed snapshot: {exc!r}") from exc


def _document(data: bytes, path: str | Path) -> Any:
    if data.startswith(PACKED):
        try:
            return marshal.loads(memoryview(data)[len(PACKED):])
        except (EOFError, ValueError, TypeError) as exc:
            raise SnapshotError(f"{path}: a damaged packed snapshot: {exc}") from exc
    try:
        return json.loads(data)
    except ValueError as exc:
        raise SnapshotError(f"{path}: not JSON: {exc}") from exc
