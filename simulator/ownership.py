"""Who owns each pod interface over a scenario: the pod, job and tenant its bytes count
for, changing when an ``ip_reuse`` event hands a pod's VFs and fixed IPs to a new pod.

:func:`facts_with_history` gives the facts an inventory would hold after the run: the old
pod's interfaces end (``valid_until``) when the new pod's begin (``valid_from``).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from inventory.facts import FactSet, PodFact
from simulator.cabling import podif_key
from simulator.scenario import IpReuse, Scenario


class Owner(NamedTuple):
    """Names as in the inventory: tenant, job and pod as namespace/name (job may be "")."""

    tenant: str
    job: str
    pod: str


class Ownership:
    """The owner of every pod interface (ID) now; :meth:`reuse` moves a pod's interfaces
    to a new pod."""

    def __init__(self, facts: FactSet) -> None:
        self._owners: dict[str, Owner] = {}
        self._interfaces: dict[str, list[str]] = {}
        pods = {(p.namespace, p.name): p for p in facts.pods}
        for f in facts.pod_interfaces:
            pod = pods.get((f.namespace, f.pod))
            job = f"{f.namespace}/{pod.job_name}" if pod and pod.job_name else ""
            tenant = (pod.tenant if pod else "") or f.namespace
            podif = podif_key(f.namespace, f.pod, f.interface)
            self._owners[podif] = Owner(tenant, job, f"{f.namespace}/{f.pod}")
            self._interfaces.setdefault(f"{f.namespace}/{f.pod}", []).append(podif)

    def owner(self, podif: str) -> Owner:
        return self._owners[podif]

    def reuse(self, event: IpReuse) -> list[str]:
        """Hand the interfaces of ``event.old`` to ``event.new``; returns their IDs."""
        moved = self._interfaces.pop(event.old, [])
        new = Owner(event.new.partition("/")[0], event.job, event.new)
        for podif in moved:
            self._owners[podif] = new
        self._interfaces[event.new] = moved
        return moved


def facts_with_history(facts: FactSet, scenario: Scenario, start: float | None = None
                       ) -> FactSet:
    """``facts`` plus what the scenario's ``ip_reuse`` events make of them, second 0 being
    ``start`` (default: the scenario's start): each new pod, with the old pod's node,
    VFs and IPs valid from the event on, and the old pod's interfaces valid until then."""
    origin = scenario.start_time if start is None else start
    pods, interfaces = list(facts.pods), list(facts.pod_interfaces)
    jobs = {f"{j.namespace}/{j.name}": j for j in facts.jobs}
    for event in scenario.events:
        if not isinstance(event, IpReuse):
            continue
        at = origin + event.at
        namespace, _, name = event.new.partition("/")
        old = next(p for p in pods if f"{p.namespace}/{p.name}" == event.old)
        job = jobs.get(event.job)
        pods.append(PodFact(namespace, name, old.node, uid=f"uid-{namespace}-{name}",
                            job_kind=job.kind if job else "",
                            job_name=job.name if job else "", role="worker",
                            tenant=job.tenant if job else namespace))
        taken = [i for i, f in enumerate(interfaces)
                 if (f.namespace, f.pod) == (old.namespace, old.name) and f.valid_until is None]
        for i in taken:
            interfaces.append(dataclasses.replace(
                interfaces[i], namespace=namespace, pod=name, fixed=True, valid_from=at))
            interfaces[i] = dataclasses.replace(interfaces[i], valid_until=at)
    return dataclasses.replace(facts, pods=tuple(pods), pod_interfaces=tuple(interfaces))
