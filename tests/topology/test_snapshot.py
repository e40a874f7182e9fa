"""Snapshots: lossless round trip of facts, every node and edge attribute, and problems."""

import json
import marshal
import re
from pathlib import Path

import pytest

from inventory.errors import SnapshotError, WriteError
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology import snapshot
from topology.build import build_graph
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


def test_the_packed_form_holds_the_json_document(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.json")
    save_snapshot(fabric, tmp_path / "s.packed")
    packed = (tmp_path / "s.packed").read_bytes()
    assert packed.startswith(b"fabcorr/topology packed\n")
    assert marshal.loads(packed[len(b"fabcorr/topology packed\n"):]) == \
        json.loads((tmp_path / "s.json").read_text())
    assert snapshot.snapshot_document(load_snapshot(tmp_path / "s.packed")) == \
        snapshot.snapshot_document(load_snapshot(tmp_path / "s.json"))


def test_a_damaged_packed_snapshot_says_so(fabric, tmp_path):
    save_snapshot(fabric, tmp_path / "s.packed")
    path = tmp_path / "cut.packed"
    path.write_bytes((tmp_path / "s.packed").read_bytes()[:1000])
    with pytest.raises(SnapshotError, match=r"cut\.packed: a damaged packed snapshot"):
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


def test_the_switches_alone_are_those_of_the_whole_snapshot(tmp_path):
    path = Path(__file__).parents[2] / "examples" / "fabric-small" / "topology.json"
    assert load_snapshot_switches(path).switches == load_snapshot(path).facts.switches
    assert len(load_snapshot_switches(path).switches) == 6
    other = tmp_path / "other.json"
    other.write_text('{"schema": "something else"}')
    with pytest.raises(SnapshotError, match="not a fabcorr topology snapshot"):
        load_snapshot_switches(other)
