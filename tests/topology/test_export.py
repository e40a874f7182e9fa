"""Exports: lossless GraphML/GEXF/JSON round trips, Cytoscape.js elements and layered DOT."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import networkx as nx
import pytest

from correlator.cli.demo import shipped
from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.scenario import load_scenario
from topology.build import build_graph
from topology.export import FORMATS, export_graph, render, whole_graph
from topology.graph import FabricGraph
from topology.schema import KIND, ROLE, NodeKind, SwitchRole

SPINES = {"switch:spine01", "switch:spine02"}
LEAVES = {"switch:leaf01", "switch:leaf02"}


@pytest.fixture(scope="module")
def fabric() -> FabricGraph:
    jobs = (JobSpec("team-a", "llm", pods=2), JobSpec("team-b", "bert", pods=2))
    return build_graph(generate_facts(
        FabricSpec(nodes=4, rails=2, vfs_per_pf=2, spines=2, jobs=jobs)))


def _edges(graph: nx.Graph) -> set[frozenset[str]]:
    return {frozenset(edge) for edge in graph.edges}


def _typed(attrs: dict) -> dict:
    """Attributes with their exact types, so 1 != True != 1.0 and "1" != 1."""
    return {key: (type(value), value) for key, value in attrs.items()}


def test_fixture_has_every_scalar_type(fabric):
    types = {type(v) for _, attrs in whole_graph(fabric).nodes(data=True) for v in attrs.values()}
    types |= {type(v) for *_, attrs in whole_graph(fabric).edges(data=True) for v in attrs.values()}
    assert types == {str, int, float, bool}


def _read_gexf(path: Path) -> nx.Graph:
    graph = nx.read_gexf(path)
    # read_gexf adds two keys of its own: every node's GEXF "label" (the exporter leaves it
    # to the node ID) and every edge's GEXF "id" (a counter). Nothing else is added.
    for node, attrs in graph.nodes(data=True):
        assert attrs.pop("label") == node
    for *_, attrs in graph.edges(data=True):
        attrs.pop("id")
    return graph


READERS = {
    "graphml": nx.read_graphml,
    "gexf": _read_gexf,
    "json": lambda path: nx.node_link_graph(json.loads(path.read_text()), edges="edges"),
}


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_round_trip_is_lossless(fabric, fmt, tmp_path):
    path = tmp_path / f"fabric.{fmt}"
    export_graph(fabric, fmt, path)
    original, copy = whole_graph(fabric), READERS[fmt](path)
    assert type(copy) is nx.Graph
    assert set(copy) == set(original)
    assert copy.number_of_edges() == original.number_of_edges()
    assert _edges(copy) == _edges(original)
    for node, attrs in original.nodes(data=True):
        assert _typed(copy.nodes[node]) == _typed(attrs), node
    for a, b, attrs in original.edges(data=True):
        assert _typed(copy.edges[a, b]) == _typed(attrs), (a, b)


def test_cytoscape_elements_carry_ids_and_classes(fabric, tmp_path):
    path = tmp_path / "fabric.cyjs"
    export_graph(fabric, "cytoscape", path)
    data = json.loads(path.read_text())
    graph = whole_graph(fabric)
    nodes, edges = data["elements"]["nodes"], data["elements"]["edges"]
    assert sorted(element["data"]["id"] for element in nodes) == sorted(graph)
    assert len(edges) == graph.number_of_edges()
    assert {frozenset((e["data"]["source"], e["data"]["target"])) for e in edges} \
        == _edges(graph)
    classes = {element["data"]["id"]: element["classes"].split() for element in nodes}
    for node, attrs in graph.nodes(data=True):
        extra = [attrs[ROLE]] if attrs[KIND] == NodeKind.SWITCH else []
        assert classes[node] == [attrs[KIND], *extra], node
    assert classes["switch:leaf01"] == ["switch", "leaf"]
    assert classes["switch:spine01"] == ["switch", "spine"]
    assert classes["pod:team-a/llm-worker-0"] == ["pod"]
    back = nx.cytoscape_graph(data)
    assert set(back) == set(graph)
    assert _edges(back) == _edges(graph)


def _rank_groups(text: str) -> list[set[str]]:
    return [set(re.findall(r'"([^"]*)";', group))
            for group in re.findall(r"\{ rank=same; (.*?) \}", text)]


def test_dot_is_layered_by_role_and_has_every_edge(fabric):
    text = render(fabric, "dot").decode()
    graph = whole_graph(fabric)
    assert text.startswith("graph fabric {\n")
    assert text.endswith("}\n")
    groups = _rank_groups(text)
    assert groups.count(SPINES) == 1
    layers = [{graph.nodes[n][KIND] for n in group} for group in groups]
    assert layers == [{k} for k in ("switch", "switch", "node", "pf", "vf", "pod-interface",
                                    "pod", "job", "tenant")]
    assert groups[:2] == [SPINES, LEAVES]
    assert not any(graph.nodes[n][KIND] == NodeKind.PORT for g in groups for n in g)
    edges = re.findall(r'^  "([^"]*)" -- "([^"]*)" \[', text, flags=re.MULTILINE)
    assert len(edges) == graph.number_of_edges()
    assert {frozenset(edge) for edge in edges} == _edges(graph)
    assert '"switch:leaf01" [label="leaf01", shape=box' in text


def test_dot_puts_switches_of_unknown_role_with_leaves(fabric):
    graph = fabric.graph.copy()
    graph.nodes["switch:spine02"][ROLE] = SwitchRole.UNKNOWN.value
    groups = _rank_groups(render(FabricGraph(graph, fabric.facts, ()), "dot").decode())
    assert groups[:2] == [{"switch:spine01"}, LEAVES | {"switch:spine02"}]


def _escaping_fabric(fabric) -> FabricGraph:
    graph = nx.Graph()
    graph.add_node('switch:a"b\\c', **{KIND: NodeKind.SWITCH.value, ROLE: "leaf"})
    graph.add_node("switch:d\\", **{KIND: NodeKind.SWITCH.value, ROLE: "spine"})
    graph.add_edge('switch:a"b\\c', "switch:d\\", **{KIND: "cabled"})
    return FabricGraph(graph, fabric.facts, ())


def test_dot_escapes_quotes_and_backslashes(fabric):
    text = render(_escaping_fabric(fabric), "dot").decode()
    assert '"switch:a\\"b\\\\c" [label="a\\"b\\\\c",' in text
    assert '"switch:d\\\\" -- "switch:a\\"b\\\\c" [style=bold];' in text


def _dot_binary() -> str:
    dot = shutil.which("dot")
    if dot:
        return dot
    if os.geteuid() != 0:
        pytest.skip("Graphviz `dot` is not installed: DOT output not checked by Graphviz")
    pytest.fail("Graphviz `dot` is not installed; `make test` installs graphviz when root")


def _run_dot(source: bytes, fmt: str) -> str:
    done = subprocess.run([_dot_binary(), f"-T{fmt}"], input=source, capture_output=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def test_graphviz_renders_dot_in_layers(fabric):
    source = render(fabric, "dot")
    assert "<svg" in _run_dot(source, "svg")
    # -Tplain has a line "node <name> <x> <y> ..." per node, the name quoted if need be.
    plain = _run_dot(source, "plain")
    height = {name: float(y) for name, y in
              re.findall(r'^node "?([^" ]+)"? \S+ (\S+)', plain, flags=re.MULTILINE)}
    assert set(height) == set(whole_graph(fabric))
    for upper, lower in pairwise(_rank_groups(source.decode())):
        assert min(height[n] for n in upper) > max(height[n] for n in lower), (upper, lower)


def test_graphviz_accepts_escaped_ids(fabric):
    plain = _run_dot(render(_escaping_fabric(fabric), "dot"), "plain")
    assert plain.count("\nnode ") == 2
    assert plain.count("\nedge ") == 1


def test_unknown_format_lists_the_allowed_ones(fabric, tmp_path):
    assert FORMATS == ("graphml", "gexf", "json", "dot", "cytoscape")
    with pytest.raises(ValueError, match="unknown format 'svg'") as raised:
        export_graph(fabric, "svg", tmp_path / "fabric.svg")
    for fmt in FORMATS:
        assert fmt in str(raised.value)
    assert not (tmp_path / "fabric.svg").exists()


def test_kinds_keep_only_those_nodes_and_the_edges_between_them(fabric):
    kinds = frozenset({"switch", "port"})
    text = render(fabric, "dot", kinds).decode()
    graph = whole_graph(fabric)
    kept = {n for n, kind in graph.nodes(data=KIND) if kind in kinds}
    assert set(re.findall(r'^  "([^"]*)" \[label=', text, flags=re.MULTILINE)) == kept
    edges = re.findall(r'^  "([^"]*)" -- "([^"]*)" \[', text, flags=re.MULTILINE)
    assert {frozenset(e) for e in edges} == _edges(graph.subgraph(kept))
    assert '"port:leaf01/Ethernet1" [label="Ethernet1", shape=ellipse' in text
    back = nx.node_link_graph(json.loads(render(fabric, "json", frozenset({"switch"}))),
                              edges="edges")
    assert set(back) == LEAVES | SPINES and back.number_of_edges() == 0


def test_the_demo_fabrics_cabling_fits_in_4000_px():
    """Switches and ports only: Graphviz draws the demo fabric (6 switches, 48 ports) 2,905
    pt wide, 3,873 px at its 96 dpi (the whole graph: 21,103 px)."""
    demo = build_graph(generate_facts(load_scenario(shipped()["demo"]).fabric))
    svg = _run_dot(render(demo, "dot", frozenset({"switch", "port"})), "svg")
    width, _ = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', svg).groups()
    assert int(width) * 96 / 72 <= 4000


def test_heat_colours_cables_by_utilisation_and_marks_hot_ones(fabric):
    busy = frozenset({"port:leaf01/Ethernet5", "port:spine01/Ethernet1"})
    hot = frozenset({"port:leaf01/Ethernet6", "port:spine02/Ethernet1"})
    idle = frozenset({"port:leaf02/Ethernet5", "port:spine01/Ethernet2"})
    heat = {busy: (0.6, ""), hot: (1.2, "critical"), idle: (None, ""),
            frozenset({"port:nowhere/x", "port:leaf01/Ethernet5"}): (0.5, "")}
    text = render(fabric, "dot", frozenset({"switch", "port"}), heat).decode()
    styles = {frozenset(re.findall(r'"([^"]*)"', line.split("[")[0])): line.split("[")[1]
              for line in text.splitlines() if " -- " in line}
    assert styles[busy] == 'style=bold, color="#3f9a8a", penwidth=2.8];'
    assert styles[hot] == ('style=bold, color="#b03a2e", penwidth=4, label="hot: critical", '
                           'fontcolor="#b03a2e"];')
    assert styles[idle] == "style=bold];"
    back = nx.node_link_graph(json.loads(render(fabric, "json", None, heat)), edges="edges")
    assert back.edges[tuple(busy)] == {"kind": "cabled", "status": "confirmed", "reports": 2,
                                       "speed_bps": 400_000_000_000, "tier": "leaf-spine",
                                       "utilization": 0.6}
    assert back.edges[tuple(hot)]["hotspot"] == "critical"
    assert "utilization" not in fabric.graph.edges[tuple(busy)]  # the fabric is untouched
