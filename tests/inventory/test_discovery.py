"""discover_all's crawl: switches beyond the list, found over LLDP management addresses."""

from __future__ import annotations

import asyncio
import dataclasses
from contextlib import ExitStack
from typing import Any

import pytest

from inventory.devices import CrawlConfig, GnmiOptions, SwitchConfig, read_devices
from inventory.discovery import Discovery, discover_all
from inventory.errors import ConfigError, SourceUnreachable
from inventory.facts import FactSet, Reporter
from simulator.generator import FabricSpec, generate_facts
from simulator.gnmi_target import GnmiTarget


@pytest.fixture(scope="module")
def fabric() -> FactSet:
    """leaf01, leaf02, spine01, spine02 whose LLDP announces each switch's mgmt address."""
    facts = generate_facts(FabricSpec(nodes=2, rails=2, spines=2))
    address = {s.name: s.mgmt_address for s in facts.switches}
    return dataclasses.replace(facts, neighbors=tuple(
        dataclasses.replace(n, mgmt_address=address.get(n.system_name, ""))
        for n in facts.neighbors))


def config(fabric: FactSet, name: str, alias: str = "", **gnmi: Any) -> SwitchConfig:
    address = next(s.mgmt_address for s in fabric.switches if s.name == name)
    return SwitchConfig(alias or name, address, ("gnmi",), vendor="eos",
                        gnmi=GnmiOptions(**gnmi))


def crawl(fabric: FactSet, switches: list[SwitchConfig], **options: Any
          ) -> tuple[Discovery, list[str]]:
    """discover_all with a crawl templated on the first switch, and the switches asked;
    the fake adapter answers as the fabric's switch at the address asked, under the name
    asked, and does not answer for the addresses of ``unreachable``."""
    unreachable = options.pop("unreachable", ())
    by_address = {s.mgmt_address: s.name for s in fabric.switches if s.name not in unreachable}
    asked: list[str] = []

    async def adapter(switch: SwitchConfig) -> FactSet:
        asked.append(switch.name)
        if switch.address not in by_address:
            raise SourceUnreachable(f"{switch.address}: no route to host")
        real = by_address[switch.address]
        return FactSet(
            switches=tuple(dataclasses.replace(s, name=switch.name)
                           for s in fabric.switches if s.name == real),
            neighbors=tuple(dataclasses.replace(n, local_device=switch.name)
                            for n in fabric.neighbors
                            if n.reporter == Reporter.SWITCH and n.local_device == real))

    found = asyncio.run(discover_all(switches, adapters={"gnmi": adapter},
                                     crawl=CrawlConfig(switches[0], **options)))
    return found, asked


def test_crawl_follows_lldp_wave_by_wave_with_the_templates_options(fabric: FactSet) -> None:
    found, asked = crawl(fabric, [config(fabric, "leaf01")], seeds=("leaf01",))
    assert asked[0] == "leaf01" and set(asked[1:3]) == {"spine01", "spine02"}
    assert asked[3:] == ["leaf02"]  # seen by both spines, asked once
    assert [s.name for s in found.crawled] == asked[1:]
    assert {s.name for s in found.facts.switches} == {"leaf01", "leaf02", "spine01", "spine02"}
    spine = found.crawled[0]
    assert (spine.protocols, spine.vendor, spine.role) == (("gnmi",), "eos", "")
    assert spine.address == next(s.mgmt_address for s in fabric.switches
                                 if s.name == spine.name)
    assert found.failures == ()


def test_crawl_is_bounded_and_filtered_by_system_name(fabric: FactSet) -> None:
    leaf01 = [config(fabric, "leaf01")]
    found, asked = crawl(fabric, leaf01, max_switches=2)
    assert sorted(s.name for s in found.crawled) == ["spine01", "spine02"]
    assert len(asked) == 3
    found, asked = crawl(fabric, leaf01, names=("leaf*",))
    assert (found.crawled, asked) == ((), ["leaf01"])


def test_crawl_skips_switches_listed_under_another_name(fabric: FactSet) -> None:
    # spine01 is listed as "core-a": its address is known, so it is not crawled again
    switches = [config(fabric, "leaf01"), config(fabric, "spine01", alias="core-a")]
    found, asked = crawl(fabric, switches, seeds=("leaf01",))
    assert sorted(asked) == ["core-a", "leaf01", "leaf02", "spine02"]
    assert {s.name for s in found.facts.switches} == {"core-a", "leaf01", "leaf02", "spine02"}


def test_crawled_switches_that_fail_are_reported(fabric: FactSet) -> None:
    found, _ = crawl(fabric, [config(fabric, "leaf01")], unreachable=("spine02",))
    assert [(f.switch, f.kind) for f in found.failures] == [("spine02", "unreachable")]
    assert "spine02" in {s.name for s in found.crawled}
    assert "leaf02" in {s.name for s in found.crawled}  # still found through spine01


def test_crawl_over_gnmi_finds_the_fabric_from_one_seed(fabric: FactSet) -> None:
    """Emulated gNMI targets, each on its switch's mgmt address and the same port."""
    with ExitStack() as stack:
        port = 0
        for switch in sorted(fabric.switches, key=lambda s: s.name != "leaf01"):
            target = GnmiTarget.from_facts(fabric, switch.name, host=switch.mgmt_address,
                                           port=port)
            port = stack.enter_context(target).port
        seed = config(fabric, "leaf01", port=port, insecure=True, timeout_s=10.0)
        found = asyncio.run(discover_all([seed], crawl=CrawlConfig(seed)))
    assert found.failures == ()
    assert sorted(s.name for s in found.crawled) == ["leaf02", "spine01", "spine02"]
    assert {s.name for s in found.facts.switches} == {"leaf01", "leaf02", "spine01", "spine02"}
    cables = {(n.local_device, n.system_name) for n in found.facts.neighbors
              if n.system_name.startswith("spine")}
    assert cables == {(leaf, spine) for leaf in ("leaf01", "leaf02")
                      for spine in ("spine01", "spine02")}


LISTED = [{"name": "leaf01", "address": "127.0.0.1"}]


@pytest.mark.parametrize(("section", "message"), [
    ({"seeds": ["leaf01"]}, "f.yaml: crawl.template: required"),
    ({"template": "leaf09"}, "f.yaml: crawl.template: 'leaf09' is not a listed switch"),
    ({"template": "leaf01", "seeds": ["leaf09"]},
     "f.yaml: crawl.seeds[0]: 'leaf09' is not a listed switch"),
    ({"template": "leaf01", "max_switches": 0},
     "f.yaml: crawl.max_switches: Input should be greater than or equal to 1"),
    ({"template": "leaf01", "names": "leaf*"},
     "f.yaml: crawl.names: Input should be a valid tuple"),
    ({"template": "leaf01", "depth": 2}, "f.yaml: crawl.depth: unknown key"),
])
def test_bad_crawl_sections_name_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        read_devices({"switches": LISTED, "crawl": section}, "f.yaml", {})
    assert str(caught.value) == message


def test_crawl_section_defaults() -> None:
    assert read_devices({"switches": LISTED}, "f.yaml", {}).crawl_config() is None
    devices = read_devices({"switches": LISTED, "crawl": {"template": "leaf01"}}, "f.yaml", {})
    assert devices.crawl_config() == CrawlConfig(devices.switches[0], (), 64, ("*",))
