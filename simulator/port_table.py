"""The switch ports of the emulated fabric, by index: what the traffic model needs of them
(ifIndex, capacity, peer, rank) and their cumulative counters, named as
:mod:`inventory.counters` names them (PFC and ECN on priority/queue 3, CNPs on queue 6).
"""

from __future__ import annotations

from simulator.congestion import Hops, Hot
from simulator.flow_frames import CNP_BYTES, DATA_BYTES, WIRE_EXTRA
from topology.graph import FabricGraph
from topology.paths import Hop
from topology.schema import TIER, NodeKind, switch_id

Tap = tuple[str, int, int]
"""Where an sFlow agent sees a packet: switch, ingress ifIndex, egress ifIndex (each also
the format-0 interface value of a flow sample)."""


class PortTable:
    """Every switch port of the fabric by index: its name, ifIndex, speed, peer port
    (-1: none, or a host), rank among egress ports (up the Clos by tier, then down),
    packets it can send per tick of ``tick_s``, and its cumulative counters."""

    def __init__(self, fabric: FabricGraph, tick_s: float) -> None:
        self.tick_s = tick_s
        graph = fabric.graph
        ids = fabric.nodes_of(NodeKind.PORT)
        self.names = [(graph.nodes[p]["switch"], graph.nodes[p]["name"]) for p in ids]
        self.index = {name: i for i, name in enumerate(self.names)}
        position = {p: i for i, p in enumerate(ids)}
        self.ifindex = [graph.nodes[p].get("ifindex") or 0 for p in ids]
        self.speed = [graph.nodes[p].get("speed_bps") or 0 for p in ids]
        self.capacity = [s * tick_s / 8 / (DATA_BYTES + WIRE_EXTRA) for s in self.speed]
        tier = {s: graph.nodes[s].get(TIER, 1) for s in fabric.nodes_of(NodeKind.SWITCH)}
        self.peer, self.rank = [], []
        for p in ids:
            far = fabric.peer(p)
            here = tier.get(switch_id(graph.nodes[p]["switch"]), 1)
            if far is not None and graph.nodes[far]["kind"] == NodeKind.PORT:
                self.peer.append(position[far])
                up = tier.get(switch_id(graph.nodes[far]["switch"]), 1) > here
            else:
                self.peer.append(-1)
                up = False
            self.rank.append(here if up else 100 - here)
        count = len(ids)
        self.data_in, self.data_out = [0] * count, [0] * count
        self.cnp_in, self.cnp_out = [0] * count, [0] * count
        self.ecn, self.dropped = [0] * count, [0] * count
        self.pause_rx, self.pause_tx = [0] * count, [0] * count

    def path_of(self, hops: tuple[Hop, ...] | None) -> tuple[Hops | None, tuple[Tap, ...]]:
        """A route as port-index pairs, and as sFlow taps."""
        if hops is None:
            return None, ()
        index = self.index
        path = tuple((index[(h.switch, h.ingress)], index[(h.switch, h.egress)]) for h in hops)
        return path, tuple((h.switch, self.ifindex[i], self.ifindex[o])
                           for h, (i, o) in zip(hops, path, strict=True))

    def signal(self, hot: dict[int, Hot], sent: list[int]) -> None:
        """Count the ECN marks, drops and PFC pauses of overloaded egress ports."""
        pauses: dict[int, float] = {}
        for port, h in hot.items():
            self.ecn[port] += h.marks(sent)
            self.dropped[port] += h.drops()
            frames = h.pause_frames(self.tick_s, self.speed[port])
            for _, ingress in h.members if frames else ():
                pauses[ingress] = max(pauses.get(ingress, 0.0), frames)
        for ingress, frames in pauses.items():
            self.pause_tx[ingress] += round(frames)
            if self.peer[ingress] >= 0:
                self.pause_rx[self.peer[ingress]] += round(frames)

    def values(self, i: int) -> dict[str, int]:
        """Port ``i``'s counters; PFC and ECN on priority/queue 3, CNPs on queue 6."""
        values = {
            "in_octets": self.data_in[i] * DATA_BYTES + self.cnp_in[i] * CNP_BYTES,
            "out_octets": self.data_out[i] * DATA_BYTES + self.cnp_out[i] * CNP_BYTES,
            "in_pkts": self.data_in[i] + self.cnp_in[i],
            "out_pkts": self.data_out[i] + self.cnp_out[i],
            "in_discards": 0, "out_discards": self.dropped[i], "in_errors": 0, "out_errors": 0}
        for q in range(8):
            values |= {f"pfc_rx_pause/{q}": self.pause_rx[i] if q == 3 else 0,
                       f"pfc_tx_pause/{q}": self.pause_tx[i] if q == 3 else 0,
                       f"queue_tx_pkts/{q}": self.data_out[i] if q == 3 else
                       self.cnp_out[i] if q == 6 else 0,
                       f"queue_ecn_marked/{q}": self.ecn[i] if q == 3 else 0,
                       f"queue_dropped/{q}": self.dropped[i] if q == 3 else 0}
        return values
