"""Snapshots: lossless round trip of facts, every node and edge attribute, and problems."""

import json
import marshal
import re
from array import array
from pathlib import Path

import pytest

from inventory.errors import SnapshotError, WriteError
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology import footprint, snapshot
from topology.build import build_graph
from topology.footprint import prepared_tables
from topology.snapshot import load_snapshot, load_snapshot_switches, save_snapshot

SPEC = FabricSpec(nodes=4, rails=2, vfs_per_pf=2, leaves_per_rail=2, spines=2,
                  leaves_per_pod=2, super_spines=2, host_lldp=False,
                  jobs=(JobSpec("a", "llm", pods=2), JobSpec("b", "db", "StatefulSet", 2, 1)))


def typed(attrs):
    return {key: (type(value), value) for key, value in attrs.items()}


@pytest.fixture(scope="module")
def fabric():
    return build_graph(generate_facts(SPEC))


@pytest.mark.parametrize("name", ["topology.json", "topology.packed"])
def test_round_trip_keeps_every_attribute_with_its_type(fabric, tmp_path, name):
    path = tmp_path / name
    save_snapshot(fabric, path)
    loaded = load_snapshot(path)
    assert loaded.facts == fabric.facts
    assert loaded.problems == fabric.problems
    assert set(loaded.graph.nodes) == set(fabric.graph.nodes)
    for node, attrs in fabric.graph.nodes(data=True):
        assert typed(loaded.graph.nodes[node]) == typed(attrs), node
    assert loaded.graph.number_of_edges() == fabric.graph.number_of_edges()
    for a, b, attrs in fabric.graph.edges(data=True):
        assert typed(loaded.graph.edges[a, b]) == typed(attrs), (a, b)
    # The fixture exercises every value type and a non-empty problem list.
    kinds = {type(v) for _, attrs in fabric.graph.nodes(data=True) for v in attrs.values()}
    assert kinds == {str, int, float, bool}
    assert {p.kind for p in fabric.problems} == {"link-one-sided"}
    # The VF table and MAC index, rebuilt from JSON or kept as built in the packed form.
    assert loaded.vfs.columns() == fabric.vfs.columns()
    assert loaded.indexes.by_mac.columns() == fabric.indexes.by_mac.columns()
    assert len(fabric.vfs) == 16 and len(fabric.indexes.by_mac) == 16 + 8


def test_saving_twice_gives_identical_bytes(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "a.json")
    save_snapshot(load_snapshot(tmp_path / "a.json"), tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not JSON"),
    ('{"schema": "other"}', "not a fabcorr topology snapshot"),
    ('{"schema": "fabcorr/topology", "version": 2}', "version 2 is not supported"),
    ('{"schema": "fabcorr/topology", "version": 1, "facts": {}}', "malformed snapshot"),
    ('{"schema": "fabcorr/topology", "version": 1, "facts": {"nodes": {"fields": ["name"]}}}',
     r"nodes: fields must be \['name', 'chassis_id'\]"),
    ('{"schema": "fabcorr/topology", "version": 1, "facts": {"nodes": {"fields": '
     '["name", "chassis_id"], "rows": [["gpu01", 7]]}}, "problems": [],'
     ' "graph": {"nodes": [], "edges": []}}',
     r"nodes\[0\]\.chassis_id: expected str, got int 7"),
])
def test_bad_snapshots_say_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SnapshotError, match=message):
        assert load_snapshot(path).facts is None  # fact rows are parsed on first use


def _rows(packed_tables):
    """The JSON form's row tables of the packed form's column tables."""
    rows = []
    for table in packed_tables:
        keys = table.pop("keys")
        keys = [keys] if isinstance(keys[0], str) else [array("I", k).tolist() for k in keys]
        columns = table.pop("columns")
        rows.append({**table, "rows": [list(row) for row in zip(*keys, *columns, strict=True)]})
    return rows


def test_the_packed_form_holds_the_json_document(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.json")
    save_snapshot(fabric, tmp_path / "s.packed")
    assert (tmp_path / "s.packed").read_bytes().startswith(b"fabcorr/topology packed columns\n")
    packed = snapshot.read_document(tmp_path / "s.packed")
    assert list(packed.pop(snapshot.TABLES)) == ["vfs", "macs", "code", "ports", "prepared"]
    facts = packed["facts"]
    assert all(isinstance(t, snapshot.Deferred) for t in facts.values())  # left in the file
    packed["facts"] = {s: t.value() if isinstance(t, snapshot.Deferred) else t
                       for s, t in facts.items()}
    graph = packed["graph"]
    graph["nodes"], graph["edges"] = _rows(graph["nodes"]), _rows(graph["edges"])
    assert packed == json.loads((tmp_path / "s.json").read_text())
    assert snapshot.snapshot_document(load_snapshot(tmp_path / "s.packed")) == \
        snapshot.snapshot_document(load_snapshot(tmp_path / "s.json"))


def test_a_packed_load_takes_the_derived_tables_only_from_the_same_code(fabric, tmp_path,
                                                                        monkeypatch):
    save_snapshot(fabric, tmp_path / "s.packed")
    built = prepared_tables(fabric)
    kept = load_snapshot(tmp_path / "s.packed")
    assert prepared_tables(kept) == built
    assert kept.indexes.port_maps() == fabric.indexes.port_maps()
    assert kept.cached(footprint._plugs) is not fabric.cached(footprint._plugs)
    # Code that changed since the save derives every table again, and finds the same.
    monkeypatch.setattr(snapshot, "derivation_code", lambda: "other code")
    derived = load_snapshot(tmp_path / "s.packed")
    assert prepared_tables(derived) == built
    assert derived.indexes.port_maps() == fabric.indexes.port_maps()


def test_kept_tables_are_what_the_load_uses(fabric, tmp_path, monkeypatch):
    """A load that took its tables from the file answers from them: a changed table shows."""
    save_snapshot(fabric, tmp_path / "s.packed")
    leaf = next(n for n in fabric.graph if n.startswith("switch:leaf"))
    real_prepare = footprint.prepare

    def altered(fabric, tables=None):
        if tables is not None:
            tables["crowds"][0][tables["crowds"][1][leaf]] = (("x/y/net1",), ("x/y",), (), ())
        return real_prepare(fabric, tables)

    monkeypatch.setattr(snapshot, "prepare", altered)
    assert footprint.crowd_below(load_snapshot(tmp_path / "s.packed"), leaf).pods == ("x/y",)


def test_a_damaged_packed_snapshot_says_so(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.packed")
    path = tmp_path / "cut.packed"
    path.write_bytes((tmp_path / "s.packed").read_bytes()[:1000])
    with pytest.raises(SnapshotError, match=r"cut\.packed: a damaged packed snapshot"):
        load_snapshot(path)


def test_the_packed_form_is_in_pieces_of_marshalled_keys_and_value(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.packed")
    data = (tmp_path / "s.packed").read_bytes()
    at, records = len(snapshot.PACKED), []
    while at < len(data):
        size = int.from_bytes(data[at:at + 8], "little")
        records.append(marshal.loads(data[at + 8:at + 8 + size]))
        at += 8 + size
    assert at == len(data)
    pieces = list(zip(records[::2], records[1::2], strict=True))
    document = json.loads(snapshot.snapshot_text(fabric))
    sections = list(document["facts"])
    kinds = [t["kind"] for t in document["graph"]["nodes"]]
    edge_kinds = [t["kind"] for t in document["graph"]["edges"]]
    assert [keys for keys, _ in pieces] == [
        ("schema",), ("version",), ("facts",), *(("facts", s) for s in sections),
        ("graph",), ("graph", "nodes"), *(("graph", "nodes") for _ in kinds),
        ("graph", "edges"), *(("graph", "edges") for _ in edge_kinds), ("problems",),
        ("tables",), *(("tables", t) for t in ("vfs", "macs", "code", "ports", "prepared"))]
    assert pieces[3] == (("facts", sections[0]), document["facts"][sections[0]])
    assert [v["kind"] for keys, v in pieces if keys == ("graph", "nodes") and v] == kinds


@pytest.mark.parametrize("header", [b"fabcorr/topology packed\n",
                                    b"fabcorr/topology packed pieces\n"])
def test_a_packed_snapshot_of_an_earlier_form_asks_to_be_saved_again(fabric, tmp_path, header):
    path = tmp_path / "old.packed"
    path.write_bytes(header + marshal.dumps(snapshot.snapshot_document(fabric)))
    with pytest.raises(SnapshotError, match=r"old\.packed: a packed snapshot of an earlier "
                                            "fabcorr: save it again"):
        load_snapshot(path)


def test_missing_snapshot(tmp_path):
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load_snapshot(tmp_path / "absent.json")


def test_one_line_per_node(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.json")
    lines = (tmp_path / "s.json").read_text().splitlines()
    rows = [line for line in lines if re.match(r'\[["\d]', line)]
    facts = sum(fabric.facts.count().values())
    assert len(rows) == facts + fabric.graph.number_of_nodes() + fabric.graph.number_of_edges() \
        + len(fabric.problems)
    assert json.loads((tmp_path / "s.json").read_text())["version"] == 1


def test_a_save_replaces_the_file_whole_or_not_at_all(fabric, tmp_path, monkeypatch):
    """A service saves after every rediscovery while others read: a reader sees the old
    snapshot or the new one, never part of one."""
    path = tmp_path / "topology.json"
    save_snapshot(fabric, path)
    before = path.read_bytes()

    def fail(document):
        yield "{"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot, "_lines", fail)
    with pytest.raises(WriteError, match=r"topology\.json: cannot write: No space left"):
        save_snapshot(fabric, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["topology.json"]


def test_graph_tables_that_are_no_list_are_malformed(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"schema": "fabcorr/topology", "version": 1, "facts": {}, "problems": [],'
                    ' "graph": {"nodes": {}, "edges": []}}')
    with pytest.raises(SnapshotError, match=r"malformed snapshot.*expected a list of tables"):
        load_snapshot(path)


def test_the_switches_alone_are_those_of_the_whole_snapshot(tmp_path):
    path = Path(__file__).parents[2] / "examples" / "fabric-small" / "topology.json"
    assert load_snapshot_switches(path).switches == load_snapshot(path).facts.switches
    assert len(load_snapshot_switches(path).switches) == 6
    other = tmp_path / "other.json"
    other.write_text('{"schema": "something else"}')
    with pytest.raises(SnapshotError, match="not a fabcorr topology snapshot"):
        load_snapshot_switches(other)


@pytest.mark.parametrize("name", ["topology.json", "topology.packed"])
def test_a_share_holds_its_switches_ports_their_far_ends_and_every_workload(fabric, tmp_path,
                                                                             name):
    """A shard's share, found here from the whole graph by walking it; attributing needs
    the ports, their owners and every pod interface's owner, all as the whole fabric's."""
    path = tmp_path / name
    save_snapshot(fabric, path)
    owned = {"leaf01", "spine02"}
    share = load_snapshot(path, owned.__contains__)
    graph = fabric.graph
    ports = {n for n, a in graph.nodes(data=True) if a["kind"] == "port" and a["switch"] in owned}
    far = {other for port in ports for other, edge in graph.adj[port].items()
           if edge["kind"] == "cabled"}
    workloads = {n for n, a in graph.nodes(data=True)
                 if a["kind"] in ("switch", "pod-interface", "pod", "job", "tenant")}
    expected = ports | far | workloads
    assert {graph.nodes[n]["kind"] for n in far} == {"port", "pf"}
    assert set(share.graph.nodes) == expected
    for node in expected:
        assert typed(share.graph.nodes[node]) == typed(graph.nodes[node]), node
    edges = {(a, b) for a, b in graph.edges if a in expected and b in expected}
    assert {tuple(sorted(e)) for e in share.graph.edges} == {tuple(sorted(e)) for e in edges}
    assert all(share.graph.edges[e] == graph.edges[e] for e in edges)
    assert share.indexes.ports_by_agent == {
        key: port for key, port in fabric.indexes.ports_by_agent.items() if port in expected}
    assert footprint.owners(share) == footprint.owners(fabric)
    assert len(share.vfs) == sum(fabric.vfs.pf_id(row) in expected
                                 for row in range(len(fabric.vfs))) == 4
    assert share.facts == fabric.facts
