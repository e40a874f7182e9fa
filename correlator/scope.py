"""What one shard attributes, judges and reads: its switches' share of a fabric (issue 17).

Switches belong to shards by :func:`~correlator.shards.owner`; everything else follows
from how samples and counters map to link directions:

- A link direction as attributed, (port, ``in``/``out``), is made of the samples of the
  port's own sFlow agent and the port's own counters: it belongs to the shard of the
  port's switch (:attr:`Scope.ports`). Every direction of every switch port has exactly
  one owner, and none needs another shard's data, so the union of the shards'
  attributions is one process's.
- A direction of a cable between two switches is judged for hotspots once, under its
  sender's ``out`` (:func:`~correlator.attribution.hotspots.cable_direction`), on the
  signals of both ends and the traffic of the end that sampled it: the receiver, since
  agents sample what their ports receive. Its judge is the shard of the *receiving*
  switch (:meth:`Scope.judges`): it has the samples (culprits, victims) and the
  receiving end's counters. The sender's end (the ECN marks and drops of its egress
  queue, the pause frames it received) lies on another shard's switch when the cable
  crosses shards: the judging shard reads those ports' counters too
  (:attr:`Scope.peers`: the far ends of its switches' cables on other shards' switches,
  a few ports per switch), for the hotspot signals only; their directions are attributed
  and exported by their own shard. One thing of a cross-shard hotspot stays on the other
  shard: the jobs the CNPs on the *reverse* direction throttle (sampled by the sender's
  switch), so such a hotspot's ``throttled`` is empty.

A cable to a host is the switch port's alone: both its directions are its switch's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from correlator.attribution.accumulate import OUT
from correlator.shards import Shard
from topology.graph import FabricGraph
from topology.indexes import ip_key
from topology.schema import NodeKind

__all__ = ["Scope", "scope_of"]


@dataclass(frozen=True, slots=True)
class Scope:
    """A shard's share of one fabric.

    ``switches``: the names it owns; ``ports``: their ports (port IDs), whose directions
    it attributes and exports; ``peers``: ports of other shards' switches cabled to its
    ports, whose counters it reads to judge the cable directions it owns; ``agents``: the
    sFlow agent addresses (packed) of its switches; ``cables``: switch port -> the switch
    port at the far end, for its ports and peers.
    """

    shard: Shard
    switches: frozenset[str]
    ports: frozenset[str]
    peers: frozenset[str]
    agents: frozenset[bytes]
    cables: Mapping[str, str]

    @property
    def read(self) -> frozenset[str]:
        """The ports whose counters the shard reads: its own and the peers."""
        return self.ports | self.peers

    def judges(self, port: str, direction: str) -> bool:
        """Whether the shard judges the hotspots of the direction named (``port``,
        ``direction``) as :func:`~correlator.attribution.hotspots.cable_direction` names
        it: a cable's sender's ``out`` by the receiver's shard, anything else by the
        port's."""
        if direction == OUT and port in self.peers:
            return True  # a peer's only cable ends on one of this shard's ports
        far = self.cables.get(port) if direction == OUT else None
        return port in self.ports and (far is None or far in self.ports)

    def attributes(self, port: str) -> bool:
        """Whether the shard attributes and exports the port's directions."""
        return port in self.ports


def _scope(shard: Shard, fabric: FabricGraph) -> Scope:
    graph = fabric.graph
    owned = [s for s in fabric.switches() if shard.owns(s.name)]
    switches = frozenset(s.name for s in owned)
    ports = frozenset(port for port in fabric.nodes_of(NodeKind.PORT)
                      if graph.nodes[port]["switch"] in switches)
    cables: dict[str, str] = {}
    for port in ports:
        far = fabric.peer(port)
        if far is not None and fabric.kind(far) == NodeKind.PORT:
            cables[port] = far
            cables[far] = port
    peers = frozenset(cables) - ports
    agents = frozenset(ip_key(s.sflow_agent or s.mgmt_address) for s in owned
                       if s.sflow_agent or s.mgmt_address)
    return Scope(shard, switches, ports, peers, agents, cables)


@functools.cache
def scope_of(shard: Shard) -> Callable[[FabricGraph], Scope]:
    """The scope of ``shard`` in a fabric, for :meth:`FabricGraph.cached` (one function
    per shard, so each fabric computes it once)."""
    return functools.partial(_scope, shard)
