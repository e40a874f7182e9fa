"""Fact documents and files: round trip, and precise errors on bad input."""

import json

import pytest

from inventory.errors import FactError
from inventory.factfile import facts_from_document, facts_to_document, read_facts, write_facts
from inventory.facts import (
    FactSet,
    IdSubtype,
    LldpNeighborFact,
    NodeFact,
    PodInterfaceFact,
    Reporter,
    normalize_mac,
)
from simulator.generator import FabricSpec, JobSpec, generate_facts

FACTS = generate_facts(FabricSpec(nodes=2, rails=2, vfs_per_pf=2, spines=1,
                                  jobs=(JobSpec("a", "j", pods=2),)))


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_file_round_trip(tmp_path, suffix):
    path = tmp_path / f"facts{suffix}"
    write_facts(FACTS, path)
    assert read_facts([path]) == FACTS


def test_directory_merges_files_in_name_order(tmp_path):
    write_facts(FactSet(nodes=(NodeFact("gpu02"),)), tmp_path / "b.yaml")
    write_facts(FactSet(nodes=(NodeFact("gpu01"), NodeFact("gpu02"))), tmp_path / "a.json")
    (tmp_path / "notes.txt").write_text("ignored")
    assert [n.name for n in read_facts([tmp_path]).nodes] == ["gpu01", "gpu02"]


def test_defaults_are_left_out_and_enums_written_as_text():
    fact = LldpNeighborFact(Reporter.HOST, "gpu01", "ens1f0np0", "0c:42:a1:00:00:01",
                            IdSubtype.MAC, "Ethernet1", IdSubtype.IFNAME)
    document = facts_to_document(FactSet(neighbors=(fact,)))
    assert document["neighbors"] == [{
        "reporter": "host", "local_device": "gpu01", "local_port": "ens1f0np0",
        "chassis_id": "0c:42:a1:00:00:01", "chassis_id_subtype": "mac",
        "port_id": "Ethernet1", "port_id_subtype": "ifname"}]
    assert json.loads(json.dumps(document)) == document
    assert facts_from_document(document).neighbors == (fact,)


def test_integers_are_accepted_for_times():
    [fact] = facts_from_document({"pod_interfaces": [
        {"namespace": "a", "pod": "p", "interface": "net1", "valid_from": 5}]}).pod_interfaces
    assert fact == PodInterfaceFact("a", "p", "net1", valid_from=5.0)
    assert isinstance(fact.valid_from, float)


@pytest.mark.parametrize(("document", "message"), [
    ([], "a fact document is a mapping, not list"),
    ({"schema": "fabcorr/facts", "version": 9}, "version 9 is not 'fabcorr/facts' version 1"),
    ({"routers": []}, "unknown section 'routers'"),
    ({"nodes": {"name": "x"}}, "nodes: expected a list of facts"),
    ({"nodes": ["gpu01"]}, r"nodes\[0\]: expected a mapping of fields"),
    ({"nodes": [{"chassis_id": "x"}]}, r"nodes\[0\]: missing field\(s\) name"),
    ({"pfs": [{"node": "n", "name": "p", "pci_address": "x", "speed_bps": "400G"}]},
     r"pfs\[0\]\.speed_bps: expected int or null, got str '400G'"),
    ({"vfs": [{"node": "n", "pci_address": "x", "pf": "p", "vf_index": True}]},
     r"vfs\[0\]\.vf_index: expected int, got bool True"),
    ({"neighbors": [{"reporter": "router", "local_device": "a", "local_port": "b",
                     "chassis_id": "c", "chassis_id_subtype": "mac", "port_id": "d",
                     "port_id_subtype": "mac"}]},
     r"neighbors\[0\]\.reporter: 'router' is not one of switch, host"),
])
def test_bad_documents_name_file_section_entry_and_field(document, message):
    with pytest.raises(FactError, match=f"^in.yaml: .*{message}"):
        facts_from_document(document, "in.yaml")


def test_unreadable_and_missing_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: [unclosed")
    with pytest.raises(FactError, match=r"bad\.yaml: cannot read"):
        read_facts([bad])
    with pytest.raises(FactError, match="no such file or directory"):
        read_facts([tmp_path / "absent.yaml"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FactError, match="no fact files"):
        read_facts([empty])


@pytest.mark.parametrize(("text", "mac"), [
    ("0C:42:A1:B2:C3:D4", "0c:42:a1:b2:c3:d4"),
    ("0c-42-a1-b2-c3-d4", "0c:42:a1:b2:c3:d4"),
    ("0c42.a1b2.c3d4", "0c:42:a1:b2:c3:d4"),
    ("0c42a1b2c3d4", "0c:42:a1:b2:c3:d4"),
    ("0c:42:a1:b2:c3", ""),
    ("Ethernet1", ""),
])
def test_normalize_mac(text, mac):
    assert normalize_mac(text) == mac
