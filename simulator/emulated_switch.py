"""What every emulated switch (gNMI target, SNMP agent) shares: made from facts, reached
at a loopback address and port."""

from __future__ import annotations

from typing import Any, Self

from inventory.facts import FactSet


class EmulatedSwitch:
    """Base of the emulated switches; subclasses set ``_host`` and ``_port``."""

    _host: str
    _port: int

    @classmethod
    def from_facts(cls, facts: FactSet, name: str, **options: Any) -> Self:
        """The switch ``name`` with its interfaces and switch-reported neighbours."""
        switch = next(s for s in facts.switches if s.name == name)
        neighbors = [n for n in facts.neighbors if n.reporter == "switch"]
        return cls(switch, facts.interfaces, neighbors, **options)  # type: ignore[call-arg]

    @property
    def address(self) -> str:
        return f"{self._host}:{self._port}"

    @property
    def port(self) -> int:
        return self._port
