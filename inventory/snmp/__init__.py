"""SNMP as a source: LLDP-MIB and IF-MIB discovery, and interface/PFC counter polling."""

from __future__ import annotations

import time

from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.facts import FactSet, SwitchFact
from inventory.snmp import client, mapping


async def discover(switch: SwitchConfig) -> FactSet:
    """The switch, its interfaces and the LLDP neighbours its agent reports."""
    walk = await client.walk(switch.address, switch.snmp, mapping.DISCOVERY_WALKS)
    fact = SwitchFact(switch.name, mapping.chassis_id(walk), switch.address,
                      switch.sflow_agent or switch.address, switch.vendor, switch.role)
    return FactSet(switches=(fact,),
                   interfaces=tuple(mapping.interfaces(switch.name, walk)),
                   neighbors=tuple(mapping.neighbors(switch.name, walk)))


async def poll_counters(switch: SwitchConfig) -> list[PortCounters]:
    """One reading of every interface's counters (and the vendor's PFC/ECN tables)."""
    subtrees = [*mapping.COUNTER_WALKS, mapping.IF_X_TABLE + (1,),
                *(table for table, _, _ in mapping.PFC_TABLES.get(switch.vendor, ())),
                *([mapping.ECN_TABLES[switch.vendor]] if switch.vendor in mapping.ECN_TABLES
                  else [])]
    started = time.time()
    walk = await client.walk(switch.address, switch.snmp, subtrees)
    # The agent read its counters somewhere during the walk: stamp the middle of it.
    return mapping.counters(switch.name, walk, (started + time.time()) / 2, switch.vendor)
