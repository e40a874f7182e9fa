"""NETCONF as a source: a switch's OpenConfig LLDP neighbours and interfaces over SSH."""

from __future__ import annotations

from inventory.devices import SwitchConfig
from inventory.facts import FactSet, SwitchFact
from inventory.netconf import client, mapping


async def discover(switch: SwitchConfig, known_hosts: str | None = None) -> FactSet:
    """The switch, its interfaces and the LLDP neighbours it reports, from one ``<get>``.

    ``known_hosts`` is an OpenSSH known_hosts file to verify the host key against (when
    ``netconf.hostkey_verify``); None means ``~/.ssh/known_hosts``.
    """
    data = await client.get(switch.address, switch.netconf, mapping.FILTERS, known_hosts)
    fact = SwitchFact(switch.name, mapping.chassis_id(switch.name, data), switch.address,
                      switch.sflow_agent or switch.address, switch.vendor, switch.role)
    return FactSet(switches=(fact,),
                   interfaces=tuple(mapping.interfaces(switch.name, data)),
                   neighbors=tuple(mapping.neighbors(switch.name, data)))
