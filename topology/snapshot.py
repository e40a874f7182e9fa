"""Topology snapshots: a FabricGraph with its facts and problems in one versioned file.

Two forms hold the same document: JSON lines (a ``.json`` file), to read and diff, and a
packed form (any other name), for a service to load fast: :data:`PACKED`, then the
document in pieces (each fact section, node table and edge table on its own), each a
length (8 bytes, little-endian) and ``(keys, value)`` in Python's ``marshal`` format,
which parses several times faster than JSON. A piece's value goes at the place its keys
name, or is appended to the list already there. Both forms are written a piece at a
time, as made, so a save never holds the whole document or its bytes. A load tells the
forms apart by their first bytes. Only load packed snapshots that fabcorr wrote: like
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
answers the queries without them). Indexes and query tables are built during the load,
but for what a packed snapshot holds as built (:data:`TABLES`).
"""

from __future__ import annotations

import json
import marshal
import struct
from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx

from inventory.bulk import gc_paused
from inventory.errors import FactError, SnapshotError
from inventory.factfile import check_tables, fact_tables, facts_from_tables
from inventory.facts import FactSet
from inventory.files import replace_file
from inventory.problems import Problem
from topology.footprint import prepare
from topology.graph import FabricGraph
from topology.indexes import INDEXED_FACTS, MacIndex, build_indexes
from topology.schema import KIND, pf_id
from topology.vfs import VfRow, VfTable

SCHEMA = "fabcorr/topology"
VERSION = 1
PACKED = b"fabcorr/topology packed pieces\n"
"""The first bytes of a packed snapshot."""
_PACKED_WHOLE = b"fabcorr/topology packed\n"
"""The first bytes of the packed form before pieces (the document marshalled whole)."""


def snapshot_document(fabric: FabricGraph) -> dict[str, Any]:
    """The snapshot of ``fabric`` as JSON-ready data."""
    return _made(_document(fabric))


class _Later:
    """A dict's items (``mapping``) or a list's elements, made as a writer asks for them."""

    __slots__ = ("items", "mapping")

    def __init__(self, items: Iterable[Any], mapping: bool = False) -> None:
        self.items, self.mapping = items, mapping


def _document(fabric: FabricGraph, packed: bool = False) -> dict[str, Any]:
    """The snapshot document of ``fabric`` with its fact sections, node tables and edge
    tables left :class:`_Later`: each is made when written. A ``packed`` one ends with
    the VF table and the MAC index as built (:data:`TABLES`)."""
    graph = fabric.graph
    nodes = _grouped(((node,), attrs) for node, attrs in graph.nodes(data=True))
    position = {key[0]: i for i, (key, _) in enumerate(chain.from_iterable(nodes.values()))}

    def edges() -> Iterator[dict[str, Any]]:
        yield from _tables(_grouped(((position[a], position[b]), attrs)
                                    for a, b, attrs in graph.edges(data=True)))

    document = {
        "schema": SCHEMA,
        "version": VERSION,
        "facts": _Later(fact_tables(fabric.facts), mapping=True),
        "graph": {"nodes": _Later(_tables(nodes)), "edges": _Later(edges())},
        "problems": [[p.kind, p.subject, p.detail] for p in fabric.problems],
    }
    if packed:
        document[TABLES] = {"vfs": fabric.vfs.columns(),
                            "macs": fabric.indexes.by_mac.columns()}
    return document


TABLES = "tables"
"""The packed form's last key: tables a load would otherwise build (``vfs``: the VF table,
``macs``: the MAC index), as columns of native arrays' bytes, so a packed snapshot is for
machines of the kind that wrote it (a JSON one for any)."""


def _made(value: Any) -> Any:
    """``value`` with every :class:`_Later` in it made."""
    if isinstance(value, _Later):
        return dict(value.items) if value.mapping else list(value.items)
    if isinstance(value, dict):
        return {key: _made(item) for key, item in value.items()}
    return value


Members = dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]]


def _grouped(items: Iterable[tuple[tuple[Any, ...], dict[str, Any]]]) -> Members:
    """Nodes ``((id,), attrs)`` or edges ``((a, b), attrs)`` by kind, in order."""
    by_kind: Members = defaultdict(list)
    for key, attrs in items:
        by_kind[attrs[KIND]].append((key, attrs))
    return by_kind


def _tables(by_kind: Members) -> Iterator[dict[str, Any]]:
    """One table per kind of :func:`_grouped` nodes or edges, each made when asked."""
    for kind, members in by_kind.items():
        seen: dict[str, None] = {}
        for _, attrs in members:
            seen.update(dict.fromkeys(attrs))
        fields = [k for k in seen if k != KIND]
        yield {"kind": kind, "fields": fields, "rows": [
            [*key, *map(attrs.get, fields)]
            for key, attrs in members]}


def fabric_from_document(document: Any, origin: str = "<snapshot>") -> FabricGraph:
    """The FabricGraph a snapshot document holds; SnapshotError names what is wrong.

    The document is taken over: its node and edge tables are emptied as the graph is
    made of them, so that a large load never holds both whole."""
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
        built = document.get(TABLES)
        if built is None:
            vfs, by_mac = VfTable.from_rows(_vf_rows(tables.get("vfs"), graph, origin)), None
        else:
            vfs = VfTable.from_columns(built["vfs"])
            by_mac = MacIndex.from_columns(built["macs"], vfs)
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError, ValueError) as exc:
        raise SnapshotError(f"{origin}: malformed snapshot: {exc!r}") from exc
    return prepare(FabricGraph(graph, lambda: _facts(tables, origin), problems,
                               build_indexes(graph, indexed, vfs, by_mac), vfs))


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
    for table in _taken(tables["nodes"]):
        for row, attrs in _rows(table, 1):
            nodes[row[0]] = attrs
            adj[row[0]] = {}
            ids.append(row[0])
    for table in _taken(tables["edges"]):
        for row, attrs in _rows(table, 2):
            a, b = ids[row[0]], ids[row[1]]
            adj[a][b] = adj[b][a] = attrs
    return graph


def _taken(items: list[Any]) -> Iterator[Any]:
    """The items of a list in order, each removed from it as it is given."""
    if type(items) is not list:
        raise TypeError(f"expected a list of tables, got {type(items).__name__}")
    items.reverse()
    while items:
        yield items.pop()


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
    if Path(path).suffix == ".json":
        replace_file(path, chain(_lines(_document(fabric)), "\n"))
    else:
        replace_file(path, chain((PACKED,), _packed(_document(fabric, packed=True))))


def snapshot_text(fabric: FabricGraph) -> str:
    """The JSON text :func:`save_snapshot` writes to a ``.json`` file."""
    return "".join(_lines(_document(fabric))) + "\n"


def _lines(value: Any) -> Iterator[str]:
    """JSON text of ``value`` with every list element on its own line, in pieces."""
    if isinstance(value, dict) or (isinstance(value, _Later) and value.mapping):
        yield "{"
        items = value.items() if isinstance(value, dict) else value.items
        for i, (key, item) in enumerate(items):
            yield (",\n" if i else "") + json.dumps(key) + ":"
            yield from _lines(item)
        yield "}"
    elif isinstance(value, list | _Later):
        empty = True
        for item in value.items if isinstance(value, _Later) else value:
            yield "[\n" if empty else ",\n"
            empty = False
            if isinstance(item, dict):
                yield from _lines(item)
            else:
                yield _compact(item)
        yield "[]" if empty else "]"
    else:
        yield _compact(value)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _packed(document: dict[str, Any]) -> Iterator[bytes]:
    """The pieces of the packed form after :data:`PACKED`, each made and encoded alone."""
    for keys, value in _pieces(document, ()):
        encoded = marshal.dumps((keys, value))
        yield _SIZE.pack(len(encoded))
        yield encoded


def _pieces(value: dict[str, Any], keys: tuple[str, ...]
            ) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(keys, value)`` pieces that :func:`_place` puts back together as ``value``."""
    for key, item in value.items():
        at = (*keys, key)
        if isinstance(item, dict):
            yield at, {}
            yield from _pieces(item, at)
        elif isinstance(item, _Later) and item.mapping:
            yield at, {}
            yield from (((*at, k), v) for k, v in item.items)
        elif isinstance(item, _Later):
            yield at, []
            yield from ((at, v) for v in item.items)
        else:
            yield at, item


def _place(document: dict[str, Any], keys: Any, value: Any) -> None:
    """Put a piece's value at the place its keys name, or append it to the list there."""
    *outer, last = keys
    for key in outer:
        document = document[key]
    if type(document.get(last)) is list:
        document[last].append(value)
    else:
        document[last] = value


_SIZE = struct.Struct("<Q")


def load_snapshot(path: str | Path) -> FabricGraph:
    """Read a snapshot written by :func:`save_snapshot`, in either form."""
    with gc_paused():
        return fabric_from_document(read_document(path), str(path))


def load_snapshot_switches(path: str | Path) -> FactSet:
    """The switches of a snapshot and nothing else (no graph is built): what an inlet
    needs of a fabric."""
    document = read_document(path)
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise SnapshotError(f"{path}: not a fabcorr topology snapshot "
                            f"(expected schema {SCHEMA!r})")
    try:
        return facts_from_tables({"switches": document["facts"]["switches"]}, str(path))
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError) as exc:
        raise SnapshotError(f"{path}: malformed snapshot: {exc!r}") from exc


def read_document(path: str | Path) -> Any:
    """The snapshot document in the file ``path``, in either form (not checked yet)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from exc
    if data.startswith(PACKED):
        try:
            return _unpacked(memoryview(data))
        except (EOFError, ValueError, TypeError, LookupError, struct.error) as exc:
            raise SnapshotError(f"{path}: a damaged packed snapshot: {exc!r}") from exc
    if data.startswith(_PACKED_WHOLE):
        raise SnapshotError(f"{path}: a packed snapshot of an earlier fabcorr: save it again")
    try:
        text = data.decode(json.detect_encoding(data))
        del data  # the text alone while it is parsed (a large fabric's is hundreds of MB)
        return json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"{path}: not JSON: {exc}") from exc


def _unpacked(data: memoryview) -> dict[str, Any]:
    document: dict[str, Any] = {}
    at = len(PACKED)
    while at < len(data):
        (size,) = _SIZE.unpack_from(data, at)
        at += _SIZE.size
        if at + size > len(data):
            raise EOFError(f"a piece of {size} bytes cut at {len(data) - at}")
        keys, value = marshal.loads(data[at:at + size])
        _place(document, keys, value)
        at += size
    return document
