"""Topology snapshots: a FabricGraph with its facts and problems in one versioned file.

Two forms hold the same document: JSON lines (a ``.json`` file), to read and diff, and a
packed form (any other name), for a service to load fast: :data:`PACKED`, then the
document in pieces (each fact section, node table and edge table on its own), each its
keys and its value, both a length (8 bytes, little-endian) and Python's ``marshal``
bytes, which parse several times faster than JSON. A piece's value goes at the place its
keys name, or is appended to the list already there. The packed form holds the graph's
tables as columns (:func:`_columns`), so a load makes each attribute dict in one C call
and shares repeated values, and ends with tables a load would otherwise build or derive
(:data:`TABLES`). A load reads the packed form a piece at a time, and leaves the fact
sections in the file (it reads the few the indexes need, and all of them again on first
use of ``facts``), and the derived tables until it takes them. Both forms are
written a piece at a time, as made, so a save never holds the whole document or its
bytes. A load tells the forms apart by their first bytes. Only load packed snapshots that
fabcorr wrote: like ``marshal`` itself, the packed reader is not hardened against crafted
files.

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

import hashlib
import json
import marshal
import os
import struct
import weakref
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import networkx as nx

from inventory.bulk import gc_paused
from inventory.errors import FactError, SnapshotError
from inventory.factfile import check_tables, fact_tables, facts_from_tables
from inventory.facts import FactSet
from inventory.files import replace_file
from inventory.problems import Problem
from topology import build, footprint, indexes, roles, schema, tiers
from topology import graph as graph_module
from topology.footprint import know_owners, prepare, prepared_tables
from topology.graph import FabricGraph
from topology.indexes import INDEXED_FACTS, MacIndex, build_indexes
from topology.schema import KIND, EdgeKind, NodeKind, pf_id
from topology.vfs import VfRow, VfTable

_READ_AT_LOAD = (*INDEXED_FACTS, "pods", "jobs")
"""The fact sections a load reads at once: for the indexes, and the owners table."""

SCHEMA = "fabcorr/topology"
VERSION = 1
PACKED = b"fabcorr/topology packed columns\n"
"""The first bytes of a packed snapshot."""
_PACKED_EARLIER = (b"fabcorr/topology packed pieces\n", b"fabcorr/topology packed\n")
"""The first bytes of earlier packed forms (graph tables in rows; the document whole)."""


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
    tables = _columns if packed else _tables

    def edges() -> Iterator[dict[str, Any]]:
        yield from tables(_grouped(((position[a], position[b]), attrs)
                                   for a, b, attrs in graph.edges(data=True)))

    document = {
        "schema": SCHEMA,
        "version": VERSION,
        "facts": _Later(fact_tables(fabric.facts), mapping=True),
        "graph": {"nodes": _Later(tables(nodes)), "edges": _Later(edges())},
        "problems": [[p.kind, p.subject, p.detail] for p in fabric.problems],
    }
    if packed:
        document[TABLES] = _Later({"vfs": fabric.vfs.columns(),
                                   "macs": fabric.indexes.by_mac.columns(),
                                   "code": derivation_code(),
                                   "ports": fabric.indexes.port_maps(),
                                   "prepared": prepared_tables(fabric)}.items(), mapping=True)
    return document


TABLES = "tables"
"""The packed form's last key: tables a load would otherwise build (``vfs``: the VF table,
``macs``: the MAC index, as columns of native arrays' bytes, so a packed snapshot is for
machines of the kind that wrote it; a JSON one is for any), and tables derived from the
graph (``ports``: the port maps, ``prepared``: the query tables), taken only by the code
that derived them (``code``)."""


@cache
def derivation_code() -> str:
    """A digest of the source of the modules that derive a fabric's tables: a load by
    other code derives them again rather than trust them."""
    digest = hashlib.sha256()
    for module in (build, footprint, graph_module, indexes, roles, schema, tiers):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()


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
        fields = _fields(members)
        yield {"kind": kind, "fields": fields, "rows": [
            [*key, *map(attrs.get, fields)]
            for key, attrs in members]}


def _columns(by_kind: Members) -> Iterator[dict[str, Any]]:
    """:func:`_tables` in the packed form's columns: ``keys``, the node IDs (a list) or
    the edge ends' positions (two ``uint32`` arrays' bytes), then one list per field, equal
    values made one object so that ``marshal`` writes each once and a load shares it."""
    for kind, members in by_kind.items():
        fields = _fields(members)
        keys = list(zip(*(key for key, _ in members), strict=True))
        yield {"kind": kind, "fields": fields,
               "keys": list(keys[0]) if len(keys) == 1 else
               [array(_END, column).tobytes() for column in keys],
               "columns": [_shared(attrs.get(field) for _, attrs in members)
                           for field in fields]}


def _fields(members: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[str]:
    """The attribute keys of a table's members but ``kind``, in the order first seen."""
    seen: dict[str, None] = {}
    for _, attrs in members:
        seen.update(dict.fromkeys(attrs))
    return [k for k in seen if k != KIND]


def _shared(values: Iterable[Any]) -> list[Any]:
    """``values`` with each repeated value the first object equal to it and of its type."""
    first: dict[tuple[type, Any], Any] = {}
    return [first.setdefault((type(value), value), value) for value in values]


_END = "I"
"""The array type of an edge end's position in the packed form."""


def fabric_from_document(document: Any, origin: str = "<snapshot>",
                         owns: Callable[[str], bool] | None = None) -> FabricGraph:
    """The FabricGraph a snapshot document holds; SnapshotError names what is wrong.

    The document is taken over: its node and edge tables are emptied as the graph is
    made of them, so that a large load never holds both whole. With ``owns``, the graph is
    the share of the switches it accepts (see :func:`load_snapshot`)."""
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise SnapshotError(f"{origin}: not a fabcorr topology snapshot "
                            f"(expected schema {SCHEMA!r})")
    if document.get("version") != VERSION:
        raise SnapshotError(f"{origin}: snapshot version {document.get('version')!r} is not "
                            f"supported (this fabcorr reads version {VERSION})")
    try:
        tables = document["facts"]  # a packed one's sections are all left in the file
        now = {k: _value(v) for k, v in tables.items()
               if k in _READ_AT_LOAD or not isinstance(v, Deferred)}
        check_tables(now, origin)
        graph = _graph(document["graph"], owns)
        problems = tuple(Problem(*p) for p in document["problems"])
        built = document.get(TABLES)
        trusted = built is not None  # packed: fabcorr wrote it
        indexed = facts_from_tables({k: now[k] for k in _READ_AT_LOAD if k in now},
                                    origin, trusted=trusted)
        del now  # the lazy facts read the file again, rather than keep these
        whole = owns is None  # a share takes no table built for the whole fabric but VFs
        if built is None:
            vfs = VfTable.from_rows(_vf_rows(tables.get("vfs"), graph, origin))
        else:
            vfs = VfTable.from_columns(built["vfs"])
            vfs = vfs if whole else vfs.of_pfs(graph)
        by_mac = MacIndex.from_columns(built["macs"], vfs) if trusted and whole else None
        ports, prepared = (built["ports"].value(), built["prepared"].value()) \
            if trusted and whole and built.get("code") == derivation_code() else (None, None)
        fabric = FabricGraph(graph, lambda: _facts(tables, origin, trusted), problems,
                             build_indexes(graph, indexed, vfs, by_mac, ports), vfs)
        if prepared is None:
            know_owners(fabric, indexed)
        # a share answers attribution alone: the few tables it reads are derived on first use
        return prepare(fabric, prepared) if whole else fabric
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError, ValueError, EOFError) as exc:
        raise SnapshotError(f"{origin}: malformed snapshot: {exc!r}") from exc


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


def _facts(tables: dict[str, Any], origin: str, packed: bool) -> FactSet:
    """The facts of a snapshot's tables (a packed one's trusted: fabcorr wrote it)."""
    try:
        with gc_paused():
            return facts_from_tables(_read(tables), origin, trusted=packed)
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (EOFError, ValueError, TypeError) as exc:
        raise SnapshotError(f"{origin}: a damaged packed snapshot: {exc!r}") from exc


def _read(tables: dict[str, Any]) -> dict[str, Any]:
    """The fact tables with every :class:`Deferred` one read."""
    return {section: _value(table) for section, table in tables.items()}


def _graph(tables: dict[str, Any], owns: Callable[[str], bool] | None = None) -> nx.Graph:
    """The graph of a snapshot's node and edge tables, written straight into networkx's node
    and adjacency dicts: what ``add_nodes_from``/``add_edges_from`` would make of the rows,
    without their copies of each attribute dict (a third of a large load). With ``owns``,
    only the nodes of :func:`_share` and the edges between them are made."""
    graph = nx.Graph()
    nodes, adj = graph._node, graph._adj
    node_tables: Iterable[_Table] = (_table(t, 1) for t in _taken(tables["nodes"]))
    edge_tables: Iterable[_Table] = (_table(t, 2) for t in _taken(tables["edges"]))
    kept: set[int] | None = None
    if owns is not None:  # every table at once, to find the share before making any
        node_tables, edge_tables = list(node_tables), list(edge_tables)
        kept = _share(node_tables, edge_tables, owns)
    ids: list[str | None] = []
    for kind, fields, keys, columns in node_tables:
        start = len(ids)
        rows = None if kept is None else [r for r in range(len(keys[0])) if start + r in kept]
        ids += keys[0] if rows is None else _picked(keys[0], rows)
        (found,), attrs = _members(kind, fields, keys, columns, rows)
        nodes.update(zip(found, attrs, strict=True))
        adj.update(zip(found, map(dict, repeat((), len(found))), strict=True))
    for kind, fields, keys, columns in edge_tables:
        rows = None if kept is None else [r for r, (i, j) in enumerate(zip(*keys, strict=True))
                                          if ids[i] is not None and ids[j] is not None]
        (ends_a, ends_b), attrs = _members(kind, fields, keys, columns, rows)
        for i, j, edge in zip(ends_a, ends_b, attrs, strict=True):
            a, b = ids[i], ids[j]
            adj[a][b] = adj[b][a] = edge  # type: ignore[index]
    return graph


def _share(node_tables: list[_Table], edge_tables: list[_Table], owns: Callable[[str], bool]
           ) -> set[int]:
    """The positions of the nodes attributing the ports of the switches ``owns`` accepts
    needs: every switch, pod interface, pod, job and tenant; those switches' ports; and the
    ports and PFs cabled to them (their peers' counters, a host port's far end)."""
    kept: set[int] = set()
    own: set[int] = set()
    at = 0
    for kind, fields, (found,), columns in node_tables:
        if kind in _WHOLE:
            kept.update(range(at, at + len(found)))
        elif kind == NodeKind.PORT:
            switches = columns[fields.index("switch")]
            own.update(at + r for r, switch in enumerate(switches) if owns(switch))
        at += len(found)
    for kind, _, (ends_a, ends_b), _ in edge_tables:
        if kind == EdgeKind.CABLED:  # port-port or port-PF
            for a, b in zip(ends_a, ends_b, strict=True):
                if a in own or b in own:
                    kept.update((a, b))
    return kept | own


_WHOLE = frozenset({NodeKind.SWITCH, NodeKind.POD_INTERFACE, NodeKind.POD, NodeKind.JOB,
                    NodeKind.TENANT})
"""The kinds of node a share keeps every one of."""


def _picked(keys: Sequence[str], rows: list[int]) -> list[str | None]:
    """``keys`` with those not at ``rows`` None."""
    picked: list[str | None] = [None] * len(keys)
    for r in rows:
        picked[r] = keys[r]
    return picked


def _taken(items: list[Any]) -> Iterator[Any]:
    """The items of a list in order, each removed from it as it is given."""
    if type(items) is not list:
        raise TypeError(f"expected a list of tables, got {type(items).__name__}")
    items.reverse()
    while items:
        yield items.pop()


_Table = tuple[str, list[str], list[Sequence[Any]], list[Sequence[Any]]]
"""A node or edge table as its kind, fields, key columns and field columns."""


def _table(table: dict[str, Any], width: int) -> _Table:
    """A node (``width`` 1) or edge (2) table of either form, checked, as columns."""
    kind, fields = table["kind"], table["fields"]
    if "rows" in table:  # the JSON form
        rows = table["rows"]
        if any(len(row) != width + len(fields) for row in rows):
            raise ValueError(f"a {kind} row of other than {width} keys and {len(fields)} fields")
        keys = [[row[k] for row in rows] for k in range(width)]
        columns = [[row[k] for row in rows] for k in range(width, width + len(fields))]
    else:
        keys = table["keys"] if width == 1 else [array(_END, ends) for ends in table["keys"]]
        keys, columns = [keys] if width == 1 else keys, table["columns"]
    count = len(keys[0])
    if len(keys) != width or len(columns) != len(fields) \
            or any(len(column) != count for column in (*keys, *columns)):
        raise ValueError(f"a {kind} table of columns of unequal lengths")
    return kind, fields, keys, columns


def _members(kind: str, fields: list[str], keys: list[Sequence[Any]],
             columns: list[Sequence[Any]], rows: list[int] | None = None
             ) -> tuple[list[Sequence[Any]], list[dict[str, Any]]]:
    """A table's keys and each member's attributes (of its ``rows`` only, when given): the
    table's kind, then its fields, nulls left out. The members of an edge table without
    fields share one attribute dict (such an edge holds its kind alone, as a build makes
    it)."""
    if rows is not None:
        keys, columns = ([[column[r] for r in rows] for column in part]
                         for part in (keys, columns))
    count = len(keys[0])
    if len(keys) == 2 and not fields:
        return keys, [{KIND: kind}] * count
    names = (KIND, *fields)
    values = zip(repeat(kind, count), *columns, strict=True)
    attrs = list(map(dict, map(zip, repeat(names), values)))
    for field, column in zip(fields, columns, strict=True):
        if None in column:
            for i, value in enumerate(column):
                if value is None:
                    del attrs[i][field]
    return keys, attrs


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
    """The pieces of the packed form after :data:`PACKED`, each made and encoded alone:
    its keys and its value, each a length and ``marshal`` bytes."""
    for keys, value in _pieces(document, ()):
        for encoded in (marshal.dumps(keys), marshal.dumps(value)):
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


def load_snapshot(path: str | Path, owns: Callable[[str], bool] | None = None) -> FabricGraph:
    """Read a snapshot written by :func:`save_snapshot`, in either form.

    With ``owns`` (a switch name -> whether it is in the share), only a shard's share of the
    graph: every switch, pod interface, pod, job and tenant, the ports of the switches
    ``owns`` accepts and the ports and PFs cabled to them; no hosts, VFs or other ports.
    It attributes those switches' ports as the whole fabric does, in a fraction of the
    memory (a shard of 12 at x-large: a quarter of the nodes), and answers nothing else:
    topology queries need the whole fabric."""
    with gc_paused():
        return fabric_from_document(read_document(path), str(path), owns)


def load_snapshot_switches(path: str | Path) -> FactSet:
    """The switches of a snapshot and nothing else (no graph is built): what an inlet
    needs of a fabric."""
    document = read_document(path, lambda keys: len(keys) == 1 or keys == ("facts", "switches"))
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise SnapshotError(f"{path}: not a fabcorr topology snapshot "
                            f"(expected schema {SCHEMA!r})")
    try:
        return facts_from_tables({"switches": _value(document["facts"]["switches"])},
                                 str(path))
    except FactError as exc:
        raise SnapshotError(str(exc)) from exc
    except (LookupError, TypeError, ValueError, EOFError) as exc:
        raise SnapshotError(f"{path}: malformed snapshot: {exc!r}") from exc


def read_document(path: str | Path, kept: Callable[[tuple[str, ...]], bool] = lambda _: True
                  ) -> Any:
    """The snapshot document in the file ``path``, in either form (not checked yet); of a
    packed one, only the pieces whose keys ``kept`` accepts are read."""
    try:
        with open(path, "rb") as stream:
            if stream.read(len(PACKED)) != PACKED:
                stream.seek(0)
                return _json_document(path, stream.read())
            source = _Opened(os.dup(stream.fileno()))
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from exc
    try:
        return _unpacked(source, kept)
    except (EOFError, ValueError, TypeError, LookupError, struct.error) as exc:
        raise SnapshotError(f"{path}: a damaged packed snapshot: {exc!r}") from exc


def _json_document(path: str | Path, data: bytes) -> Any:
    if data.startswith(_PACKED_EARLIER):
        raise SnapshotError(f"{path}: a packed snapshot of an earlier fabcorr: save it again")
    try:
        text = data.decode(json.detect_encoding(data))
        del data  # the text alone while it is parsed (a large fabric's is hundreds of MB)
        return json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"{path}: not JSON: {exc}") from exc


def _unpacked(source: _Opened, kept: Callable[[tuple[str, ...]], bool]) -> dict[str, Any]:
    """The document of a packed snapshot's pieces ``kept`` accepts, read one at a time;
    the fact sections and the derived tables are left :class:`Deferred`."""
    document: dict[str, Any] = {}
    at = len(PACKED)
    while at < source.size:
        keys_at, keys_size = _span(source, at)
        keys = marshal.loads(source.read(keys_at, keys_size))
        start, size = _span(source, keys_at + keys_size)
        at = start + size
        if not kept(keys):
            continue
        _place(document, keys, Deferred(source, start, size) if _later(keys)
               else marshal.loads(source.read(start, size)))
    return document


def _later(keys: tuple[str, ...]) -> bool:
    """Whether a piece is left in the file: a fact section (the few the indexes need are
    read at once, and again with the rest on first use of ``facts``), or a derived table
    a load may not take (other code, a shard's share)."""
    return len(keys) == 2 and (keys[0] == "facts"
                               or (keys[0] == TABLES and keys[1] in ("ports", "prepared")))


def _span(source: _Opened, at: int) -> tuple[int, int]:
    """The offset and length of the length-prefixed bytes at ``at``."""
    (size,) = _SIZE.unpack(source.read(at, _SIZE.size))
    at += _SIZE.size
    if at + size > source.size:
        raise EOFError(f"a piece of {size} bytes cut at {source.size - at}")
    return at, size


class _Opened:
    """A packed snapshot's file, kept open while a piece of it is left to read: a piece is
    read from the file loaded, even once a save has replaced it (saves rename)."""

    __slots__ = ("__weakref__", "_fd", "size")

    def __init__(self, fd: int) -> None:
        self._fd, self.size = fd, os.fstat(fd).st_size
        weakref.finalize(self, os.close, fd)

    def read(self, at: int, size: int) -> bytes:
        data = os.pread(self._fd, size, at)
        if len(data) < size:
            raise EOFError(f"{size} bytes at {at}: the file ends after {len(data)}")
        return data


class Deferred:
    """A packed piece's value left in its file until it is read."""

    __slots__ = ("_at", "_size", "_source")

    def __init__(self, source: _Opened, at: int, size: int) -> None:
        self._source, self._at, self._size = source, at, size

    def value(self) -> Any:
        return marshal.loads(self._source.read(self._at, self._size))


def _value(table: Any) -> Any:
    """A fact table, read from the file when it was left there."""
    return table.value() if isinstance(table, Deferred) else table
