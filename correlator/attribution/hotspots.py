"""Hot link directions, who causes them and who suffers from them.

A link direction is *hot* in an interval when one of its signals passes its threshold:

- ``utilization`` of the direction (0..1, from the counters and the port speed);
- ``pfc``: pause frames per second that stopped it — received by the port for ``out``
  (the peer asked it to stop sending), sent by the port for ``in`` (its own buffers
  filled and it asked the peer to stop);
- ``ecn``: ECN-marked packets per second in the port's egress queues (``out`` only);
- ``discards``: packets per second dropped (``in_discards`` for ``in``; ``out_discards``
  and egress queue drops for ``out``).

A direction of a cable between two switches is judged once, under its sender's ``out``
(:func:`cable_direction`), on the signals of both ends: the larger of each, except
utilization when the ends agree (:func:`cable_utilization`). After
``intervals`` hot intervals in a row the direction becomes a :class:`Hotspot`; it ends at
the first interval that is not hot. Severity is ``critical`` when some signal is
at least twice its threshold, else ``warning``. Culprits are the fewest top senders that
make half the bytes; victims are every other job and tenant on the direction, and the
jobs whose senders the CNPs seen on the reverse direction throttle. They are those of the
episode's best-sampled hot interval (the most samples on the direction), so an interval
with little traffic, late in the episode, does not replace them. A direction's traffic
is read from whichever end of the cable sampled it (:func:`traffic_of`). One tenant with
at least ``dominance`` of the bytes while others also use the link is a noisy neighbour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from correlator.attribution.accumulate import IN, OUT
from correlator.attribution.attribute import UNATTRIBUTED, Attribution, LinkTraffic
from correlator.attribution.estimate import OTHER, Share
from correlator.collect.rates import Rates
from inventory.counters import PFC_RX, PFC_TX, QUEUE_DROPPED, QUEUE_ECN
from inventory.errors import ConfigError
from topology.schema import id_name

KINDS = ("utilization", "pfc", "ecn", "discards")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a link direction is hot, and for how long before it is a hotspot."""

    utilization: float = 0.8
    pfc_per_s: float = 100.0
    ecn_per_s: float = 1000.0
    discards_per_s: float = 1.0
    intervals: int = 2
    culprits: int = 3
    dominance: float = 0.5
    neighbour_share: float = 0.05

    def validate(self) -> Thresholds:
        """Return self, or raise ConfigError naming the bad field."""
        for key in ("utilization", "pfc_per_s", "ecn_per_s", "discards_per_s", "dominance"):
            if not getattr(self, key) > 0:
                raise ConfigError("hotspots", key, f"must be > 0, not {getattr(self, key)!r}")
        if self.intervals < 1 or self.culprits < 1:
            raise ConfigError("hotspots", "intervals" if self.intervals < 1 else "culprits",
                              "must be >= 1")
        return self


@dataclass(frozen=True, slots=True)
class Hotspot:
    """A link direction that stayed hot; ``end`` is ``None`` while it still is."""

    port: str
    direction: str
    peer: str
    kinds: tuple[str, ...]
    severity: str
    start: float
    end: float | None
    signals: dict[str, float]
    culprits: tuple[Share, ...]
    culprit_jobs: tuple[Share, ...]
    victims: tuple[Share, ...]
    victim_jobs: tuple[Share, ...]
    throttled: tuple[Share, ...]
    noisy_neighbour: str = ""

    @property
    def active(self) -> bool:
        return self.end is None


def signals(rates: Rates | None, direction: str) -> dict[str, float]:
    """The congestion signals of one direction from the port's rates (missing: absent).

    >>> r = Rates("leaf01", "Ethernet1", 10.0, 10.0, {"pfc_rx_pause/3": 250.0,
    ...           "queue_ecn_marked/UC3": 40.0, "out_discards": 2.0}, {}, out_utilization=0.5)
    >>> signals(r, "out")
    {'utilization': 0.5, 'pfc': 250.0, 'ecn': 40.0, 'discards': 2.0}
    """
    if rates is None:
        return {}
    per_second = rates.per_second
    found: dict[str, float] = {}
    utilization = rates.in_utilization if direction == IN else rates.out_utilization
    if utilization is not None:
        found["utilization"] = utilization
    pause = PFC_TX if direction == IN else PFC_RX
    families = {"pfc": (pause,), "ecn": (QUEUE_ECN,) if direction == OUT else (),
                "discards": ("in_discards",) if direction == IN
                else ("out_discards", QUEUE_DROPPED)}
    for kind, names in families.items():
        values = [v for k, v in per_second.items() if k.partition("/")[0] in names]
        if values:
            found[kind] = sum(values)
    return found


Utilization = tuple[float, tuple[float, float] | None]
"""A direction's utilization and the least and most octets a second its readings allow."""


def cable_utilization(one: Utilization, other: Utilization) -> Utilization:
    """Of the two ends of a cable direction, whose utilization counts. Both count the same
    bytes: when their readings agree (their octet ranges overlap), the end that pins them
    down best (the narrower range: a stale SNMP agent's counters, refreshed every few
    seconds, err by several percent an interval, a streamed one's hardly); else the
    larger (one end's counters contradict the other's, or say nothing of their range: a
    broken or missing counter must not hide a hotspot).

    >>> cable_utilization((0.82, (30.0, 45.0)), (0.78, (38.0, 39.0)))  # agree: the sharper
    (0.78, (38.0, 39.0))
    >>> cable_utilization((0.0, (0.0, 0.0)), (0.93, (45.0, 48.0)))  # contradict: the larger
    (0.93, (45.0, 48.0))
    """
    (value, known), (other_value, other_known) = one, other
    if known and other_known and known[0] <= other_known[1] and other_known[0] <= known[1]:
        return one if (known[1] - known[0], -value) <= (other_known[1] - other_known[0],
                                                        -other_value) else other
    return one if value >= other_value else other


def cable_direction(peers: Mapping[str, str], port: str, direction: str) -> tuple[str, str]:
    """One name for a direction of a cable between two switch ports: its sender's ``out``
    (where the egress queue marks and drops). What a port receives from a host stays the
    port's ``in``.

    >>> peers = {"port:spine01/Ethernet1": "port:leaf01/Ethernet9"}
    >>> cable_direction(peers, "port:spine01/Ethernet1", "in")
    ('port:leaf01/Ethernet9', 'out')
    """
    peer = peers.get(port, "")
    return (peer, OUT) if direction == IN and peer.startswith("port:") else (port, direction)


def traffic_of(links: Mapping[tuple[str, str], LinkTraffic], port: str, direction: str,
               peer: str = "") -> LinkTraffic | None:
    """The traffic of one direction of a cable, from whichever end sampled it: what a port
    sends out is what its peer receives, and agents sample what ports receive. ``peer``
    names the far end for a port that may have no traffic of its own."""
    own = links.get((port, direction))
    if own is not None and own.samples:
        return own
    far = own.peer if own is not None and own.peer else peer
    mirror = links.get((far, IN if direction == OUT else OUT)) if far else None
    return mirror if mirror is not None and mirror.samples else own


def hot_kinds(found: Mapping[str, float], limits: Thresholds) -> dict[str, float]:
    """Kind -> how many times its threshold, for the signals at or over it."""
    bounds = {"utilization": limits.utilization, "pfc": limits.pfc_per_s,
              "ecn": limits.ecn_per_s, "discards": limits.discards_per_s}
    return {k: found[k] / bounds[k] for k in KINDS if k in found and found[k] >= bounds[k]}


@dataclass(slots=True)
class _Streak:
    start: float
    count: int = 0
    peak: dict[str, float] = field(default_factory=dict)
    story: tuple[LinkTraffic | None, LinkTraffic | None] = (None, None)  # best-sampled


class HotspotTracker:
    """Follows every link direction interval by interval; keeps active and ended hotspots."""

    def __init__(self, limits: Thresholds | None = None, keep_ended: int = 1000) -> None:
        self.limits = (limits or Thresholds()).validate()
        self.active: dict[tuple[str, str], Hotspot] = {}
        self.ended: list[Hotspot] = []
        self._keep = keep_ended
        self._streaks: dict[tuple[str, str], _Streak] = {}

    def update(self, attribution: Attribution, rates: Mapping[str, Rates],
               hold: Iterable[str] = (), only: Iterable[str] | None = None,
               judges: Callable[[str, str], bool] | None = None,
               cables: Mapping[str, str] | None = None) -> list[Hotspot]:
        """Judge one interval; returns the hotspots active after it. The directions of
        the ports in ``hold`` (whose rates are only carried on) stay as they were; with
        ``only``, only those ports' directions are judged; with ``judges``, only the
        directions (as :func:`cable_direction` names them) it says (a shard's), with
        ``cables`` (switch port -> far end) naming the ends of cables the interval's
        links do not."""
        links = {(link.port, link.direction): link for link in attribution.links}
        peers = {**(cables or {}),
                 **{link.port: link.peer for link in attribution.links if link.peer}}
        for port, peer in list(peers.items()):  # a port may only be known from its peer
            if peer.startswith("port:"):
                peers.setdefault(peer, port)
        held = {cable_direction(peers, port, direction) for port in hold
                for direction in (IN, OUT)}
        found_by: dict[tuple[str, str], dict[str, float]] = {}
        used: dict[tuple[str, str], Utilization] = {}  # the end whose utilization counts
        for port, direction in set(links) | _directions(rates):
            key = cable_direction(peers, port, direction)
            merged = found_by.setdefault(key, {})
            port_rates = rates.get(port)
            for kind, value in signals(port_rates, direction).items():
                if kind == "utilization":
                    end = value, port_rates.octets_range(direction) if port_rates else None
                    used[key] = cable_utilization(used[key], end) if key in used else end
                    merged[kind] = used[key][0]
                else:
                    merged[kind] = max(value, merged.get(kind, value))
        keys = set(found_by) | set(self._streaks) if only is None else {
            cable_direction(peers, port, direction) for port in only for direction in (IN, OUT)}
        if judges is not None:
            keys = {key for key in keys if judges(*key)}
        for key in sorted(keys - held):  # a stable order
            port, direction = key
            found = found_by.get(key, {})
            hot = hot_kinds(found, self.limits)
            if not hot:
                self._cool(key, attribution.start)
                continue
            streak = self._streaks.setdefault(key, _Streak(attribution.start))
            streak.count += 1
            for kind, ratio in hot.items():
                streak.peak[kind] = max(ratio, streak.peak.get(kind, 0.0))
            peer = peers.get(port, "")
            link = traffic_of(links, port, direction, peer)
            best = streak.story[0]
            if link is not None and (best is None or link.samples > best.samples):
                streak.story = (link, traffic_of(links, port, OUT if direction == IN else IN,
                                                 peer))
            if streak.count >= self.limits.intervals:
                self.active[key] = self._hotspot(key, peer, streak, found)
        return sorted(self.active.values(), key=lambda h: (h.port, h.direction))

    def _cool(self, key: tuple[str, str], at: float) -> None:
        self._streaks.pop(key, None)
        hotspot = self.active.pop(key, None)
        if hotspot is not None:
            self.ended.append(replace(hotspot, end=at))
            del self.ended[:-self._keep]

    def _hotspot(self, key: tuple[str, str], peer: str, streak: _Streak,
                 found: dict[str, float]) -> Hotspot:
        link, reverse = streak.story
        kinds = tuple(k for k in KINDS if k in streak.peak)
        severity = "critical" if max(streak.peak.values()) >= 2 else "warning"
        previous = self.active.get(key)
        tenants = link.tenants if link else ()
        jobs = link.jobs if link else ()
        culprits, victims = self._split(tenants)
        culprit_jobs, victim_jobs = self._split(jobs)
        return Hotspot(key[0], key[1], peer, kinds, severity,
                       previous.start if previous else streak.start, None, dict(found),
                       culprits, culprit_jobs, victims, victim_jobs,
                       reverse.throttled if reverse else (), self._verdict(tenants))

    def _split(self, found: tuple[Share, ...]) -> tuple[tuple[Share, ...], tuple[Share, ...]]:
        """Culprits (the fewest top senders that make half the bytes, at most
        ``culprits``) and victims (everyone else on the link)."""
        named, total, cut = _named(found), 0.0, 0
        while cut < min(len(named), self.limits.culprits) and total < 0.5:
            total += named[cut].share
            cut += 1
        return named[:cut], named[cut:]

    def _verdict(self, tenants: tuple[Share, ...]) -> str:
        named = _named(tenants)
        if not named or named[0].share < self.limits.dominance:
            return ""
        others = [id_name(s.name) for s in named[1:] if s.share >= self.limits.neighbour_share]
        if not others:
            return ""
        lead = named[0]
        return (f"{id_name(lead.name)} sends {lead.share:.0%} ({lead.share_low:.0%}-"
                f"{lead.share_high:.0%}) of a link that {', '.join(others)} also use")


def _named(found: Iterable[Share]) -> tuple[Share, ...]:
    """Shares of real groups: without ``unattributed`` and ``other``."""
    return tuple(s for s in found if s.name not in (UNATTRIBUTED, OTHER))


def _directions(rates: Mapping[str, Rates]) -> set[tuple[str, str]]:
    return {(port, direction) for port in rates for direction in (IN, OUT)}
