"""The fabric map in headless Chromium, over the DevTools protocol: the page ``fabcorr run``
serves while the demo runs (its noisy job team-c/sweep congests leaf01:Ethernet9 towards
spine01; the demo's traffic is stretched to 180 s so the hotspot stays up while the
browser looks), and the medium fabric's page (192 switches, 16,384 cables, all busy).

Each check of the demo's page runs in one JavaScript evaluation, between two of the
page's refreshes, so it sees one interval's state. Skipped, saying why, without chromium.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from benchmarks.service_suite import busy_view
from correlator.cli.demo import shipped
from correlator.cli.main import main
from correlator.service.exporter import Exposition
from correlator.service.fabric_map import layout_data, state_data
from correlator.service.http import HttpServer
from simulator.generator import generate_facts
from simulator.ladder import ladder_spec
from tests.correlator.service.chromium import Browser, chromium_or_skip
from tests.correlator.service.example_view import SNAPSHOT, make_capture
from tests.correlator.service.running import free_port, left_behind
from topology.build import build_graph

HOT = "leaf01:Ethernet9"
DEMO_SECONDS = 180
HOT_DEADLINE_S = 600  # the demo's hotspot is reported ~15 s into its traffic
READY = "document.body.dataset.ready === '1'"


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Browser(tmp_path_factory.mktemp("chromium")) as found:
        yield found


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The URL of ``fabcorr demo``'s service once the noisy job's hotspot is active."""
    chromium_or_skip()
    folder = tmp_path_factory.mktemp("demo")
    scenario = yaml.safe_load(shipped()["demo"].read_text())
    scenario["seconds"] = DEMO_SECONDS
    (folder / "demo.yaml").write_text(yaml.safe_dump(scenario))
    url = f"http://127.0.0.1:{free_port()}"
    with (folder / "demo.out").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
             "sys.exit(main())", "demo", "--scenario", str(folder / "demo.yaml"), "--out",
             str(folder / "out"), "--listen", url.removeprefix("http://")],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + HOT_DEADLINE_S
        while not any(h["link"] == HOT for h in _state(url).get("hotspots", ())):
            assert process.poll() is None, (folder / "demo.out").read_text()
            assert time.monotonic() < deadline, (folder / "demo.out").read_text()
            time.sleep(1)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)  # the demo stops its service and emulators
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(120)
        left = left_behind(process)
    assert not left, f"fabcorr demo left running: {left}"


def _state(url: str) -> dict:
    try:
        return _get(url + "/api/v1/map/state")  # type: ignore[return-value]
    except OSError:  # not serving yet
        return {}


@pytest.fixture(scope="module")
def demo_page(demo, browser):
    browser.load(demo + "/", READY)
    return browser


def test_the_page_names_every_switch(demo_page):
    names = demo_page.evaluate(
        "[...document.querySelectorAll('.switch')].map((g) => g.textContent)")
    assert sorted(names) == ["leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"]


def test_the_noisy_jobs_cable_is_hot(demo_page):
    found = demo_page.evaluate("""(() => {
        const hot = [...document.querySelectorAll('.cable[data-state="hot"]')];
        const line = document.querySelector('.cable[data-link="$HOT"]');
        return {hot: hot.map((e) => e.dataset.link), state: line.dataset.state,
                severity: line.dataset.severity, tier: line.dataset.tier};
    })()""".replace("$HOT", HOT))
    assert (found["state"], found["tier"]) == ("hot", "leaf-spine")
    assert found["severity"] in ("warning", "critical")
    # what it passes on fills spine01 -> leaf02 too (the demo's second hotspot)
    assert HOT in found["hot"] and set(found["hot"]) <= {HOT, "spine01:Ethernet2"}


def test_a_click_on_the_hot_cable_shows_the_culprit_tenant_with_its_interval(demo_page,
                                                                            tmp_path):
    found = demo_page.evaluate("""(() => {
        document.querySelector('.cable[data-link="$HOT"]').dispatchEvent(
            new MouseEvent('click', {bubbles: true}));
        const section = document.querySelector('#panel section[data-direction="$HOT"]');
        const rows = [...section.querySelectorAll('table[data-table="Culprits"] tr[data-name]')];
        return {title: document.querySelector('#panel h2').textContent,
                hot: section.querySelector('.hot').textContent,
                culprits: rows.map((r) => [...r.cells].map((c) => c.textContent))};
    })()""".replace("$HOT", HOT))
    assert found["title"] == f"{HOT} ⇄ spine01:Ethernet1"
    assert found["hot"].startswith("HOT (")
    name, share, interval, samples = found["culprits"][0]
    assert name == "team-c"
    low, high = (int(x) for x in re.fullmatch(r"(\d+)%-(\d+)%", interval).groups())
    assert low <= int(share.rstrip("%")) <= high and int(samples) > 0
    demo_page.screenshot(tmp_path / "map.png")  # what the README shows (docs/map.png)
    assert (tmp_path / "map.png").read_bytes().startswith(b"\x89PNG")


def test_a_tenant_filter_lights_up_only_its_cables(demo_page):
    found = demo_page.evaluate("""(() => {
        const filter = document.getElementById('filter');
        filter.value = 'tenants:team-c';
        filter.dispatchEvent(new Event('change'));
        const lit = [...document.querySelectorAll('.cable[data-lit="1"]')];
        const sends = Object.entries(state.cables).filter(([, c]) => c.directions.some(
            (d) => d.tenants.some(([name, share]) => name === 'team-c' && share > 0)));
        const cables = [...document.querySelectorAll('.cable')];
        filter.value = '';
        filter.dispatchEvent(new Event('change'));
        return {lit: lit.map((e) => e.dataset.link + ' ' + e.dataset.peer),
                keys: lit.map((e) => layout.cables.find(
                    (c) => c.a === e.dataset.link || c.b === e.dataset.link).a),
                sends: sends.map(([key]) => key), all: cables.length,
                after: document.querySelectorAll('.cable[data-lit="1"]').length};
    })()""")
    assert sorted(found["keys"]) == sorted(found["sends"])
    assert any(HOT in text for text in found["lit"])
    assert 0 < len(found["lit"]) < found["all"]
    assert found["after"] == 0
    # team-c's pods sit on gpu01-gpu16's rail-1 NICs only: no host cable of rail 2 (leaf03,
    # leaf04) is lit
    assert not [t for t in found["lit"] if re.match(r"leaf0[34]:Ethernet[1-8] ", t)]


def test_the_offline_map_draws_from_its_embedded_data_alone(browser, tmp_path):
    """``fabcorr map`` of the example run: the page connects nowhere (its policy forbids
    it) and still shows the hot cable (team-a floods leaf01:Ethernet5 towards spine01)."""
    out = tmp_path / "map.html"
    assert main(["map", "--snapshot", str(SNAPSHOT), "--pcap", str(make_capture(tmp_path)),
                 "--out", str(out)]) == 0
    browser.load(out.as_uri(), READY)
    found = browser.evaluate("""[
        [...document.querySelectorAll('.switch')].map((g) => g.textContent).sort(),
        [...document.querySelectorAll('.cable[data-state="hot"]')].map((e) => e.dataset.link),
        performance.getEntriesByType('resource').length]""")
    assert found == [["leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02"],
                     ["leaf01:Ethernet5"], 0]


def test_the_medium_fabric_page_loads_in_under_two_seconds_of_cpu(browser, capsys):
    """The medium fabric busy everywhere (the exporter benchmark's view: every port's
    counters, three senders on every uplink): 192 switches, 8,192 leaf-spine cables drawn,
    16,384 cables' state. The browser's CPU time is what the page costs; the wall time is
    printed with the load average (the service's own answers are precomputed, as it does
    once per interval)."""
    fabric = build_graph(generate_facts(ladder_spec("medium")))
    view = busy_view(fabric)
    layout_data(fabric), state_data(view)  # once per fabric, once per interval
    server = HttpServer("127.0.0.1", 0, lambda: view, Exposition(lambda: view))
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/"
        before = browser.cpu_s()
        wall = browser.load(url, READY)
        cpu = browser.cpu_s() - before
        switches, lines, hot = browser.evaluate(
            "[document.querySelectorAll('.switch').length,"
            " document.querySelectorAll('.cable').length,"
            " document.querySelectorAll('.cable[stroke=\"#d5dbe1\"]').length]")
        # zoomed in on the first 600 px, the 9 leaves there show their 64 NICs each
        hosts = browser.evaluate("""(() => { view = [0, 0, 600, 400]; setView();
            return [...document.querySelectorAll('.cable[data-tier="host"]')].map(
                (e) => [e.dataset.cable, e.dataset.link]); })()""")
    finally:
        server.close()
    with capsys.disabled():
        print(f"\nmedium fabric map, busy: loaded in {wall:.2f} s, {cpu:.2f} s of the "
              f"browser's CPU (load average {os.getloadavg()[0]:.1f})")
    assert (switches, lines) == (192, 8192 + 128)  # leaf-spine cables, one per leaf's hosts
    assert hot == 0  # every cable coloured by its utilisation
    assert len(hosts) == 9 * 64 and hosts[0][0] == "leaf01:Ethernet1"
    assert {cable.split(":")[0] for cable, _ in hosts[:64]} == {"leaf01"}
    # each is named by the sending end of its busier direction: the leaf port or the NIC
    assert all(link == cable or link.startswith("gpu") for cable, link in hosts)
    assert cpu < 2.0
