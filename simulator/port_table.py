"""The switch ports of the emulated fabric, by index: what the traffic model needs of them
(ifIndex, capacity, peer, rank) and their cumulative counters, named as
:mod:`inventory.counters` names them (data, ACKs, PFC and ECN on priority/queue 3, CNPs
on queue 6).
"""

from __future__ import annotations

from simulator.cabling import Cabling, Hop
from simulator.congestion import Hops, Hot
from simulator.flow_frames import DATA_BYTES, WIRE_EXTRA

Tap = tuple[str, int, int]
"""Where an sFlow agent sees a packet: switch, ingress ifIndex, egress ifIndex (each also
the format-0 interface value of a flow sample)."""


class PortTable:
    """Every switch port of the fabric by index: its name, ifIndex, speed, peer port
    (-1: none, or a host), rank among egress ports (up the Clos by tier, then down),
    full-MTU packets it can send per tick of ``tick_s``, and its cumulative counters
    (octets and packets each way, and packets out of queue 3 and of queue 6)."""

    def __init__(self, cabling: Cabling, tick_s: float) -> None:
        self.tick_s = tick_s
        self.names = list(cabling.ports)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.ifindex = [cabling.ifindex[name] for name in self.names]
        self.speed = [cabling.speed[name] for name in self.names]
        self.capacity = [s * tick_s / 8 / (DATA_BYTES + WIRE_EXTRA) for s in self.speed]
        tier = cabling.tier
        self.peer, self.rank = [], []
        for name in self.names:
            far = cabling.peer.get(name)
            here = tier.get(name[0], 1)
            self.peer.append(-1 if far is None else self.index[far])
            up = far is not None and tier.get(far[0], 1) > here
            self.rank.append(here if up else 100 - here)
        count = len(self.names)
        self.octets_in, self.octets_out = [0] * count, [0] * count
        self.packets_in, self.packets_out = [0] * count, [0] * count
        self.queue3_out, self.queue6_out = [0] * count, [0] * count
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

    def count(self, path: Hops, octets: int, packets: int, queue6: bool = False) -> None:
        """Count ``packets`` frames of ``octets`` bytes in all along ``path``."""
        queue = self.queue6_out if queue6 else self.queue3_out
        for ingress, egress in path:
            self.octets_in[ingress] += octets
            self.packets_in[ingress] += packets
            self.octets_out[egress] += octets
            self.packets_out[egress] += packets
            queue[egress] += packets

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
            "in_octets": self.octets_in[i], "out_octets": self.octets_out[i],
            "in_pkts": self.packets_in[i], "out_pkts": self.packets_out[i],
            "in_discards": 0, "out_discards": self.dropped[i], "in_errors": 0, "out_errors": 0}
        for q in range(8):
            values |= {f"pfc_rx_pause/{q}": self.pause_rx[i] if q == 3 else 0,
                       f"pfc_tx_pause/{q}": self.pause_tx[i] if q == 3 else 0,
                       f"queue_tx_pkts/{q}": self.queue3_out[i] if q == 3 else
                       self.queue6_out[i] if q == 6 else 0,
                       f"queue_ecn_marked/{q}": self.ecn[i] if q == 3 else 0,
                       f"queue_dropped/{q}": self.dropped[i] if q == 3 else 0}
        return values
