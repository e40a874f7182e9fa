"""The emulated fabric on loopback: a traffic model's switches as gNMI targets whose
counters follow the model, and the model's sFlow sent to a collector in real time.

Each switch answers gNMI on its management address (``127.1.x.y``) with the EOS profile
(interfaces, LLDP, PFC per priority, queue ECN and drops), or, when named in ``snmp``, SNMP
v2c (IF-MIB, LLDP-MIB, the EOS PFC and ECN MIBs) with the fabric's password as community
(``public`` without one); a switch the scenario takes down stops answering. What a service
needs to see the cluster side is written as a fact file:
nodes, NICs, VFs, pods with their fixed IPs over time, jobs, tenants (the switch side it
must discover itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from inventory.factfile import write_facts
from inventory.facts import FactSet
from simulator.fabric_run import TickRun, stream
from simulator.gnmi_target import GnmiTarget
from simulator.snmp_agent import SnmpAgent
from simulator.traffic import TrafficModel

PROFILE = "eos"


class EmulatedFabric:
    """Targets up on :meth:`start`; :meth:`run` plays the model in real time (in a thread
    of its own, :meth:`run_in_background`); :meth:`stop` takes everything down."""

    def __init__(self, model: TrafficModel, username: str = "fabcorr",
                 password: str = "", snmp: Iterable[str] = ()) -> None:
        self.model = model
        over_snmp = set(snmp)
        unknown = over_snmp - {s.name for s in model.facts.switches}
        if unknown:
            raise ValueError(f"snmp: no such switch: {', '.join(sorted(unknown))}")
        self.targets: dict[str, GnmiTarget | SnmpAgent] = {}
        for switch in model.facts.switches:
            options = {"host": switch.mgmt_address, "profile": PROFILE,
                       "counters": model.counter_source(switch.name)}
            self.targets[switch.name] = (
                SnmpAgent.from_facts(model.facts, switch.name, community=password or "public",
                                     **options) if switch.name in over_snmp else
                GnmiTarget.from_facts(model.facts, switch.name, username=username,
                                      password=password, **options))
        self.samples = 0
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self._down: set[tuple[str, str]] = set()

    def start(self) -> EmulatedFabric:
        for target in self.targets.values():
            target.start()
        return self

    def run(self, collector: tuple[str, int],
            on_tick: Callable[[TickRun], None] | None = None) -> None:
        """Play the whole scenario in real time, sending sFlow to ``collector``."""
        try:
            for step in stream(self.model, collector=collector, realtime=True):
                self.samples += step.samples
                for name in self.model.down_switches:
                    target = self.targets.get(name)
                    if target is not None and target.port:
                        target.stop()
                self._cables_down()
                if on_tick is not None:
                    on_tick(step)
                if self._halt.is_set():
                    break
        except BaseException as exc:  # handed to whoever waits for the run
            self.error = exc
        finally:
            self.finished.set()

    def _cables_down(self) -> None:
        """A port the model took down reports oper-status down and hears no LLDP
        neighbour (on the gNMI targets)."""
        for switch, port in self.model.down_ports - self._down:
            self._down.add((switch, port))
            target = self.targets.get(switch)
            if isinstance(target, GnmiTarget) and port in target.interfaces:
                target.set_oper_status(port, "down")
                target.neighbors = [n for n in target.neighbors if n.local_port != port]

    def run_in_background(self, collector: tuple[str, int],
                          on_tick: Callable[[TickRun], None] | None = None) -> None:
        self._thread = threading.Thread(target=self.run, args=(collector, on_tick),
                                        name="emulated-fabric", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for target in self.targets.values():
            target.stop()

    def switch_config(self, password_env: str) -> list[dict]:
        """The ``switches`` of a fabcorr.yaml reaching these targets (``password_env`` holds
        the gNMI password, which is also the SNMP community)."""
        entries = []
        for name, target in self.targets.items():
            snmp = isinstance(target, SnmpAgent)
            entry: dict = {"name": name, "address": target.switch.mgmt_address,
                           "protocols": ["snmp" if snmp else "gnmi"], "vendor": PROFILE}
            if snmp:
                entry["snmp"] = {"port": target.port, "version": "2c",
                                 "community": {"env": password_env}, "timeout_s": 2.0,
                                 "retries": 1}
            else:
                entry["gnmi"] = {"port": target.port, "insecure": True, "username": "fabcorr",
                                 "password": {"env": password_env}, "timeout_s": 5.0}
            entries.append(entry)
        return entries

    def write_cluster_facts(self, path: Path) -> None:
        """The cluster side of the model's facts (with IP ownership over time)."""
        facts = self.model.inventory_facts()
        hosts = replace(FactSet(), nodes=facts.nodes, pfs=facts.pfs, vfs=facts.vfs,
                        pods=facts.pods, pod_interfaces=facts.pod_interfaces, jobs=facts.jobs,
                        tenants=facts.tenants,
                        neighbors=tuple(n for n in facts.neighbors if n.reporter != "switch"))
        write_facts(hosts, path)

