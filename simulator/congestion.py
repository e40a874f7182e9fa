"""Congestion in one tick: egress ports offered more packets than their speed allows,
the flows they throttle, and the signals they raise (ECN marks, PFC pauses, drops).

The approximation, in one pass: egress ports are visited in the order every flow meets
them (up the Clos by tier, then down), each seeing the flows' rates as throttled by the
ports before it. An overloaded port scales every flow crossing it by capacity / load
(proportional sharing). The fabric is lossless: PFC and DCQCN slow each sender to its
throttled rate, so a flow's delivered packets are the same on every hop of its path.
Throttling does not give capacity freed upstream back to other flows (no max-min pass).

Signals of an overloaded port (``load`` over ``capacity``):

- ECN: the packets it sends are marked with probability 1 - capacity / load (DCQCN
  absorbs a mild overload with ECN alone);
- PFC: from :data:`PFC_OVER` times capacity on, ingress buffers pass XOFF and it pauses
  the ingress ports that feed it for the throttled fraction of the tick; one pause frame
  of the maximum quanta (65535 x 512 bit times) holds a link that long;
- drops: from :data:`DROP_OVER` times capacity on, headroom overflows and
  :data:`DROP_SHARE` of the excess is dropped (counted as drops, not in any octets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PFC_OVER, DROP_OVER = 1.25, 1.5
DROP_SHARE = 1e-4
PAUSE_QUANTA_BITS = 65535 * 512
_EPSILON = 1e-9

Hops = tuple[tuple[int, int], ...]
"""A flow's path as (ingress port, egress port) indexes, one pair per switch."""


@dataclass(frozen=True, slots=True)
class Hot:
    """An overloaded egress port: its offered ``load`` (packets), the ``scale`` it
    applied, and the (flow, ingress port) pairs that fed it."""

    load: float
    scale: float
    members: tuple[tuple[int, int], ...]

    def marks(self, sent: Sequence[int]) -> int:
        """ECN-marked packets among those the flows ``sent`` through it."""
        return round(sum(sent[f] for f, _ in self.members) * (1 - self.scale))

    def pause_frames(self, seconds: float, speed_bps: float) -> float:
        """PFC pause frames to hold each feeding ingress port for the throttled share."""
        if self.load < PFC_OVER * self.load * self.scale:
            return 0.0
        return (1 - self.scale) * seconds * speed_bps / PAUSE_QUANTA_BITS

    def drops(self) -> int:
        capacity = self.load * self.scale
        return round((self.load - capacity) * DROP_SHARE) if self.load >= DROP_OVER * capacity \
            else 0


def throttle(offered: Sequence[float], paths: Sequence[Hops | None],
             capacity: Sequence[float], rank: Sequence[int]) -> tuple[list[float], dict[int, Hot]]:
    """Delivered packets per flow, and the overloaded egress ports (by index).

    ``offered[f]`` packets follow ``paths[f]``; egress port ``p`` sends at most
    ``capacity[p]`` packets and is met by flows in increasing ``rank[p]``.

    >>> paths = [((0, 2),), ((1, 2),), ((1, 3),)]   # two flows share egress port 2
    >>> delivered, hot = throttle([300.0, 100.0, 50.0], paths, [0, 0, 200, 200], [0] * 4)
    >>> delivered, hot[2].load, hot[2].scale, hot[2].members
    ([150.0, 50.0, 50.0], 400.0, 0.5, ((0, 0), (1, 1)))
    """
    loads = [0.0] * len(capacity)
    for rate, path in zip(offered, paths, strict=True):
        if rate and path:
            for _, egress in path:
                loads[egress] += rate
    over = {p for p, load in enumerate(loads) if load > capacity[p] * (1 + _EPSILON)}
    delivered = list(offered)
    if not over:
        return delivered, {}
    members: dict[int, list[tuple[int, int]]] = {p: [] for p in over}
    for f, path in enumerate(paths):
        if offered[f] and path:
            for ingress, egress in path:
                if egress in over:
                    members[egress].append((f, ingress))
    hot = {}
    for port in sorted(over, key=rank.__getitem__):
        load = sum(delivered[f] for f, _ in members[port])
        if load > capacity[port] * (1 + _EPSILON):
            scale = capacity[port] / load
            for f, _ in members[port]:
                delivered[f] *= scale
            hot[port] = Hot(load, scale, tuple(members[port]))
    return delivered, hot
