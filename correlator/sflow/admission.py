"""Which sFlow datagrams are believed: those of known switches' agents, from their own
addresses or a declared relay.

The agent address is whatever the datagram says, so anyone who reaches the port could
claim to be any switch. A datagram is admitted only when its agent address is a known
switch's (configured or discovered: its ``sflow_agent``, else its management address) and
its UDP source is one of that switch's addresses, or lies in one of the declared relays
(``sflow.relays``: addresses or CIDR ranges of collectors that forward sFlow on). Others
are rejected as ``unknown-agent`` or ``spoofed-source``.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable

from inventory.devices import SwitchConfig
from inventory.facts import SwitchFact

__all__ = ["Admission", "admission_for", "parse_address", "parse_relays", "switch_addresses"]

_RELAY_VERDICTS = 4096  # sources whose relay check is remembered


def parse_relays(relays: Iterable[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network,
                                                 ...]:
    """The networks of ``relays`` (addresses or CIDR ranges); ValueError names a bad one.

    >>> [str(n) for n in parse_relays(["192.0.2.7", "10.1.0.0/16"])]
    ['192.0.2.7/32', '10.1.0.0/16']
    """
    return tuple(ipaddress.ip_network(relay, strict=False) for relay in relays)


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP address, IPv4-mapped IPv6 ones as IPv4 (a dual-stack socket reports those);
    None for a host name or nothing."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class Admission:
    """Known agents and the sources each may send from; ``switches`` gives each switch's
    addresses, its agent address first (host names are not resolved here: left out).

    >>> a = Admission([("10.0.0.11", "192.0.2.11")], relays=["198.51.100.0/24"])
    >>> agent = bytes([10, 0, 0, 11])
    >>> [a.check(agent, s) for s in ("10.0.0.11", "::ffff:192.0.2.11", "198.51.100.9",
    ...                               "127.0.0.2")]
    [None, None, None, 'spoofed-source']
    >>> a.check(bytes([10, 0, 0, 12]), "10.0.0.12")
    'unknown-agent'
    """

    __slots__ = ("_agents", "_relayed", "relays")

    def __init__(self, switches: Iterable[Iterable[str]], relays: Iterable[str] = ()) -> None:
        self.relays = parse_relays(relays)
        self._agents: dict[bytes, frozenset[str]] = {}
        for addresses in switches:
            known = [a for a in map(parse_address, addresses) if a is not None]
            if known:
                agent = known[0].packed
                self._agents[agent] = self._agents.get(agent, frozenset()) | {
                    str(a) for a in known}
        self._relayed = functools.lru_cache(maxsize=_RELAY_VERDICTS)(self._in_relays)

    def __getstate__(self) -> tuple[dict[bytes, frozenset[str]], tuple[str, ...]]:
        """What a worker process needs to rebuild it (the relay cache stays behind)."""
        return self._agents, tuple(map(str, self.relays))

    def __setstate__(self, state: tuple[dict[bytes, frozenset[str]], tuple[str, ...]]) -> None:
        self._agents, relays = state
        self.relays = parse_relays(relays)
        self._relayed = functools.lru_cache(maxsize=_RELAY_VERDICTS)(self._in_relays)

    def __len__(self) -> int:
        return len(self._agents)

    def rules(self) -> tuple[list[tuple[bytes, list[bytes]]], list[tuple[bytes, int]]]:
        """The same rules for the Rust receive path (:meth:`correlator._wire.Collector.admit`):
        each agent (packed) with the addresses (packed) it may send from, and the relays
        as (network address, prefix length).

        >>> agents, relays = Admission([("10.0.0.11", "192.0.2.11")],
        ...                            relays=["198.51.100.0/24"]).rules()
        >>> [(a.hex(), [s.hex() for s in sources]) for a, sources in agents]
        [('0a00000b', ['0a00000b', 'c000020b'])]
        >>> [(network.hex(), prefix) for network, prefix in relays]
        [('c6336400', 24)]
        """
        agents = [(agent, sorted(ipaddress.ip_address(a).packed for a in allowed))
                  for agent, allowed in self._agents.items()]
        return agents, [(r.network_address.packed, r.prefixlen) for r in self.relays]

    def check(self, agent: bytes, source: str) -> str | None:
        """Why a datagram of ``agent`` (packed) from UDP ``source`` is rejected, or None."""
        allowed = self._agents.get(agent)
        if allowed is None:
            return "unknown-agent"
        if source in allowed:
            return None
        if source.startswith("::ffff:") and source[7:] in allowed:
            return None
        return None if self._relayed(source) else "spoofed-source"

    def _in_relays(self, source: str) -> bool:
        address = parse_address(source)
        return address is not None and any(address in relay for relay in self.relays)


def switch_addresses(discovered: Iterable[SwitchFact], configured: Iterable[SwitchConfig]
                     ) -> list[tuple[str, tuple[str, str]]]:
    """Each switch of a fabric's facts and of the configuration with its addresses, its
    agent address (``sflow_agent``, else its management address) first."""
    return [*((s.name, (s.sflow_agent or s.mgmt_address, s.mgmt_address)) for s in discovered),
            *((s.name, (s.sflow_agent or s.address, s.address)) for s in configured)]


def admission_for(discovered: Iterable[SwitchFact], configured: Iterable[SwitchConfig],
                  relays: Iterable[str]) -> Admission:
    """The admission of the switches of a fabric's facts and of the configuration."""
    return Admission([addresses for _, addresses in switch_addresses(discovered, configured)],
                     relays)
