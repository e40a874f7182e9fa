"""The fabric map's documents and page: the example scenario's view (team-a floods the
cable leaf01:Ethernet5 - spine01:Ethernet1 towards the spine, team-b shares it), served
over real HTTP with the API's basic auth, and written offline by ``fabcorr map``."""

import base64
import hashlib
import json
import re

import pytest

from correlator.cli.main import main
from correlator.service.exporter import Exposition
from correlator.service.fabric_map import cable_heat, layout_data, state_data
from correlator.service.http import HttpServer
from correlator.service.map_page import page, policy
from correlator.view import View
from tests.correlator.service.example_view import SNAPSHOT, make_capture, replayed
from tests.correlator.service.test_http import fetch

HOT = "leaf01:Ethernet5"


@pytest.fixture(scope="module")
def pcap(tmp_path_factory):
    return make_capture(tmp_path_factory.mktemp("map"))


@pytest.fixture(scope="module")
def view(pcap):
    return replayed(pcap)


def test_the_state_names_each_cable_by_its_lower_end_and_each_direction_by_its_sender(view):
    state = state_data(view)
    assert (state["start"], state["seconds"]) == (1767229220.0, 10.0)
    assert state["cables"] == {HOT: {"utilization": 0.87654, "directions": [
        {"from": HOT, "utilization": 0.87654, "samples": 10436,
         "tenants": [["team-a", 0.8565, 0.8496, 0.8632, 8938],
                     ["team-b", 0.1435, 0.1368, 0.1504, 1498]],
         "jobs": [["team-a/llm-pretrain", 0.8565, 0.8496, 0.8632, 8938],
                  ["team-b/bert-large", 0.1435, 0.1368, 0.1504, 1498]]},
        {"from": "spine01:Ethernet1", "utilization": 9.36e-05, "samples": 67,
         "tenants": [["team-b", 1.0, 0.9458, 1.0, 67]],
         "jobs": [["team-b/bert-large", 1.0, 0.9458, 1.0, 67]]}]}}


def test_the_state_carries_the_active_hotspots_and_a_timeline_of_the_last_intervals(view):
    state = state_data(view)
    [hot] = state["hotspots"]
    assert {k: hot[k] for k in ("link", "severity", "kinds", "start", "end")} == {
        "link": HOT, "severity": "warning", "kinds": ["utilization"],
        "start": 1767229210.0, "end": None}
    assert hot["culprits"] == [["team-a", 0.8602, 0.8534, 0.8668, 8994]]
    assert hot["victims"] == [["team-b", 0.1398, 0.1332, 0.1466, 1462]]
    assert state["timeline"] == {"from": 1767229110.0, "to": 1767229230.0, "bars": [
        {"link": HOT, "severity": "warning", "start": 1767229210.0, "end": None}]}
    assert state_data(view, intervals=1)["timeline"]["from"] == 1767229220.0


def test_before_the_first_interval_the_state_is_empty(view):
    assert state_data(View(view.fabric)) == {
        "start": None, "seconds": None, "cables": {}, "hotspots": [],
        "timeline": {"from": None, "to": None, "bars": []}}


def test_the_layout_document_lists_boxes_cables_and_who_can_be_chosen(view):
    drawn = layout_data(view.fabric)
    assert [b["label"] for b in drawn["boxes"] if b["row"] != "hosts"] == [
        "leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"]
    assert {"a": HOT, "b": "spine01:Ethernet1", "from": "switch:leaf01",
            "to": "switch:spine01", "tier": "leaf-spine", "status": "confirmed"} \
        in drawn["cables"]
    assert (drawn["tenants"], drawn["jobs"]) == (
        ["team-a", "team-b"], ["team-a/eval", "team-a/llm-pretrain", "team-b/bert-large"])
    assert json.loads(json.dumps(drawn)) == drawn


def _inline(body: str, tag: str) -> str:
    return re.search(f"<{tag}>(.*?)</{tag}>", body, re.S).group(1)


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_page_allows_only_its_own_script_and_style_and_fetches_nothing_elsewhere():
    live = page().decode()
    script, style = _inline(live, "script"), _inline(live, "style")
    assert policy(live=True) == (
        f"default-src 'none'; script-src {_sha(script)}; style-src {_sha(style)}; "
        "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'")
    assert f'content="{policy(live=True)}"' in live
    assert "connect-src 'none'" in policy(live=False)
    assert not re.search(r"(src|href)=\"?(https?:)?//", live)  # nothing from elsewhere
    assert 'id="map-data"' not in live


def test_the_offline_page_embeds_its_documents_without_closing_its_script():
    data = {"layout": {"boxes": [{"label": "</script><b>"}]}, "state": {}}
    offline = page(data).decode()
    embedded = re.search(r'<script type="application/json" id="map-data">(.*?)</script>',
                         offline, re.S).group(1)
    assert json.loads(embedded) == data
    assert "connect-src 'none'" in offline


def test_the_service_serves_the_page_and_its_documents_behind_basic_auth(view):
    server = HttpServer("127.0.0.1", 0, lambda: view, Exposition(lambda: view),
                        auth=("ops", "secret"))
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert fetch(base + "/")[0] == 401
        status, headers, body = fetch(base + "/", ("ops", "secret"))
        assert (status, headers["Content-Type"]) == (200, "text/html; charset=utf-8")
        assert body == page()
        assert headers["Content-Security-Policy"] == policy(live=True) + \
            "; frame-ancestors 'none'"
        status, _, body = fetch(base + "/api/v1/map/state", ("ops", "secret"))
        assert (status, json.loads(body)) == (200, state_data(view))
        status, _, body = fetch(base + "/api/v1/map/layout", ("ops", "secret"))
        assert (status, json.loads(body)) == (200, layout_data(view.fabric))
    finally:
        server.close()


def test_fabcorr_map_writes_one_offline_page(pcap, view, tmp_path, capsys):
    out = tmp_path / "map.html"
    assert main(["map", "--snapshot", str(SNAPSHOT), "--pcap", str(pcap), "--out",
                 str(out)]) == 0
    expected = {"layout": layout_data(view.fabric),
                "state": state_data(view)}
    assert out.read_bytes() == page(json.loads(json.dumps(expected)))
    assert capsys.readouterr().err.startswith(f"{out}: 22 boxes, 24 cables, the interval ")
    assert main(["map", "--snapshot", str(SNAPSHOT), "--out", str(out)]) == 0
    assert '"cables":{}' in out.read_text()


def test_the_heat_of_the_last_interval_by_cable(view):
    assert cable_heat(view) == {
        frozenset({"port:leaf01/Ethernet5", "port:spine01/Ethernet1"}): (0.87654, "warning")}


def test_topology_export_colours_the_runs_cables(pcap, capsysbinary):
    assert main(["topology", "export", "-o", "dot", "--kinds", "switch,port", "--snapshot",
                 str(SNAPSHOT), "--pcap", str(pcap)]) == 0
    lines = [line for line in capsysbinary.readouterr().out.decode().splitlines()
             if "color=\"#" in line and " -- " in line]
    assert lines == ['  "port:spine01/Ethernet1" -- "port:leaf01/Ethernet5" [style=bold, '
                     'color="#b03a2e", penwidth=4, label="hot: warning", fontcolor="#b03a2e"];']
