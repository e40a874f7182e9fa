"""``fabcorr discover`` over gNMI: a one-switch config with a crawl section finds the fabric."""

import dataclasses
import json
from contextlib import ExitStack

from correlator.cli.main import main
from simulator.generator import FabricSpec, generate_facts
from simulator.gnmi_target import GnmiTarget


def test_discover_crawls_from_one_listed_switch(tmp_path, capsys):
    facts = generate_facts(FabricSpec(nodes=2, rails=2, spines=2))
    address = {s.name: s.mgmt_address for s in facts.switches}
    facts = dataclasses.replace(facts, neighbors=tuple(
        dataclasses.replace(n, mgmt_address=address.get(n.system_name, ""))
        for n in facts.neighbors))
    config, report = tmp_path / "fabcorr.yaml", tmp_path / "report.json"
    with ExitStack() as stack:
        port = 0  # every target on its own address and the same port, as the template's
        for name in sorted(address, key=lambda n: n != "leaf01"):
            port = stack.enter_context(GnmiTarget.from_facts(
                facts, name, host=address[name], port=port)).port
        config.write_text(
            "switches:\n"
            f"  - {{name: leaf01, address: {address['leaf01']}, protocols: [gnmi],\n"
            f"     gnmi: {{port: {port}, insecure: true, timeout_s: 10.0}}}}\n"
            "crawl: {template: leaf01, max_switches: 8, names: [leaf*, spine*]}\n")
        code = main(["discover", "--config", str(config), "-o", str(tmp_path / "t.json"),
                     "--report", str(report)])
    assert code == 0
    assert "switches reached: 4/4" in capsys.readouterr().err
    result = json.loads(report.read_text())
    assert result["switches"] == {"total": 4, "reached": 4}
    assert result["links"] == {"confirmed": 4}  # both leaves to both spines
