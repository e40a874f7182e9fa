"""The fabric as the Rust core's join reads it (:class:`correlator._wire.Join`): sFlow
ports, pod interfaces' owners and every address's owners over time, as integer ids.

Built once per fabric (a new snapshot, or new IP ownership, is a new fabric): the core
then resolves each flow-table row of an interval, sums it per link direction and ranks
its tenants, jobs, pods, job pairs and throttled jobs (largest first, ties by name; pair names
``a -> b`` sort as (a, b) since no name holds a character below the space) and hands each
link direction back with its shares, named.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator import _wire
from topology.footprint import Owner, owners
from topology.graph import FabricGraph

UNATTRIBUTED = "unattributed"
NO_JOB, NO_TENANT = "no-job", "no-tenant"  # a known pod that belongs to none
NOBODY = Owner(UNATTRIBUTED, UNATTRIBUTED, UNATTRIBUTED)
"""Who sent from an address no pod interface owned (owner id 0 in the core)."""


@dataclass(frozen=True, slots=True)
class FabricJoin:
    """The core's index of one fabric (which holds the pods', jobs' and tenants' names),
    the port node IDs behind its port ids, and the port ids by node ID."""

    core: _wire.Join
    ports: list[str]
    ids: dict[str, int]


def fabric_join(fabric: FabricGraph) -> FabricJoin:
    """The join of ``fabric``, made on first use."""
    return fabric.cached(_build)


def owner(found: Owner) -> Owner:
    """A pod's owner as attribution names it: a pod in no job, or a job of no tenant,
    says so."""
    if found.job and found.tenant:
        return found
    return Owner(found.pod, found.job or NO_JOB, found.tenant or NO_TENANT)


def _build(fabric: FabricGraph) -> FabricJoin:
    indexes, table = fabric.indexes, owners(fabric)
    ports: dict[str, int] = {}
    port_rows = [(agent, ifindex, ports.setdefault(port, len(ports)))
                 for (agent, ifindex), port in indexes.ports_by_agent.items()]
    names: tuple[dict[str, int], ...] = ({UNATTRIBUTED: 0}, {UNATTRIBUTED: 0},
                                         {UNATTRIBUTED: 0})
    owner_ids: dict[Owner, int] = {NOBODY: 0}
    interface_ids: dict[str, int] = {}
    for interface, found in table.items():
        named = owner(found)
        if named not in owner_ids:
            owner_ids[named] = len(owner_ids)
        interface_ids[interface] = owner_ids[named]
    owner_rows = [tuple(ids.setdefault(name, len(ids))
                        for ids, name in zip(names, (o.pod, o.job, o.tenant), strict=True))
                  for o in owner_ids]
    claims = [(address, o.valid_from, o.valid_until, interface_ids.get(o.interface, 0))
              for address, history in indexes.ips.items() for o in history]
    pods, jobs, tenants = (list(ids) for ids in names)
    core = _wire.Join(port_rows, owner_rows, claims, pods, jobs,  # type: ignore[arg-type]
                      tenants)
    return FabricJoin(core, list(ports), ports)
