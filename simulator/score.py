"""How close fabcorr came to an emulated run's ground truth (:mod:`simulator.truth`).

fabcorr's outputs are read as data (``to_data`` of its Attributions and Hotspots: the
service's attribution log, ``fabcorr attribute -o json``, ``/api/v1/hotspots``):

- **shares**: a link direction of an interval with at least ``min_samples`` samples is
  *within* when every tenant's true share of its bytes (the truth's bytes of the tenant
  over all the truth's bytes of that direction in that interval) lies inside fabcorr's
  95 % interval; a tenant fabcorr did not report has [0, the exact one-sided 95 % upper
  bound for 0 successes in ``n`` trials] (1 - 0.05^(1/n), :func:`absent_bound`).
  Reported: the fraction within, and the mean absolute share error over (link-interval,
  tenant) pairs.
- **bytes**: over the same (link-interval, tenant) pairs, the fraction whose true bytes
  lie in fabcorr's [low, high] for the tenant's bytes (an unreported tenant's: [0, the
  absent bound times the link's bytes]). Reported beside the shares; not a target.
- **hotspots**: the true hotspots are the port directions whose true signals pass the
  :class:`Limits` (the same values fabcorr is configured with) ``intervals`` intervals in
  a row, from the first of them to the first interval that is not hot; a direction of a
  cable between switches is judged once, as its sender's ``out`` (where its egress queue
  marks and drops), on the larger signals of its two ends. A reported hotspot and a true
  one *match* when they are on the same port direction and overlap in time; precision is
  the share of reported hotspots that match, recall of true ones.
- **culprit**: for every true hotspot found, whether fabcorr's top culprit tenant is the
  tenant that truly sent most bytes on the direction over the intervals both call hot.
- **onset to report**: from the first truly hot interval's start to the end of the
  interval that made fabcorr's hotspot (its start + ``intervals`` interval lengths).

Nothing is excluded: a switch that is down (no counters) still counts, and a true
hotspot on it says so (``down``). Precondition: every fabcorr interval that overlaps the
truth coincides with a truth interval (same start and length); :class:`ScoreError`
otherwise. Intervals wholly outside the truth are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simulator.truth import TruthRecord, port_id

WITHIN_TARGET = 0.95
CONFIDENCE = 0.95
_EPSILON = 1e-3  # interval starts (s), shares and relative bytes compare within this
KINDS = ("utilization", "pfc", "ecn", "discards")


@dataclass(frozen=True, slots=True)
class Limits:
    """When a link direction is truly hot (a signal at or over its limit, per second),
    and for how many intervals in a row before it is a hotspot."""

    utilization: float = 0.8
    pfc_per_s: float = 100.0
    ecn_per_s: float = 1000.0
    discards_per_s: float = 1.0
    intervals: int = 2

    def hot(self, signals: Mapping[str, float]) -> bool:
        """Whether any signal reaches its limit.

        >>> Limits().hot({"utilization": 0.8}), Limits().hot({"ecn": 999.0, "pfc": 99.0})
        (True, False)
        """
        bounds = dict(zip(KINDS, (self.utilization, self.pfc_per_s, self.ecn_per_s,
                                  self.discards_per_s), strict=True))
        return any(signals.get(kind, 0.0) >= bound for kind, bound in bounds.items())


def absent_bound(n: int) -> float:
    """The exact one-sided 95 % upper bound of a proportion seen 0 times in ``n``
    samples: the p with (1 - p)^n = 0.05 (no samples: 1, anything).

    >>> round(absent_bound(1000), 6), absent_bound(1), absent_bound(0)
    (0.002991, 0.95, 1.0)
    """
    return 1 - (1 - CONFIDENCE) ** (1 / n) if n > 0 else 1.0

_Totals = dict[tuple[str, str], dict[str, int]]
"""(port ID, direction) -> tenant -> true bytes, of one interval."""


class ScoreError(ValueError):
    """fabcorr's intervals and the truth's do not line up."""


@dataclass(frozen=True, slots=True)
class Miss:
    """A tenant whose true share fell outside fabcorr's interval on one link-interval."""

    port: str
    direction: str
    start: float
    samples: int
    tenant: str
    share: float
    share_low: float
    share_high: float
    true_share: float


@dataclass(frozen=True, slots=True)
class Episode:
    """A hotspot: a port direction hot from ``start`` until ``end`` (None: still at the
    end); ``down``: a switch of its cable was down (no telemetry) when it began (true
    ones)."""

    port: str
    direction: str
    start: float
    end: float | None
    down: bool = False


@dataclass(frozen=True, slots=True)
class Match:
    """A true hotspot and the first reported one that overlaps it."""

    port: str
    direction: str
    true_start: float
    reported_start: float
    onset_to_report_s: float
    culprit: str | None
    true_culprit: str | None
    culprit_ok: bool


@dataclass(frozen=True, slots=True)
class Report:
    """Every measure; ``failures`` names the targets missed (none: ``passed``)."""

    min_samples: int
    link_intervals: int
    within: int
    within_fraction: float | None
    mean_share_error: float | None
    misses: tuple[Miss, ...]
    tenant_intervals: int
    bytes_within: int
    bytes_within_fraction: float | None
    true_hotspots: tuple[Episode, ...]
    reported_hotspots: tuple[Episode, ...]
    matches: tuple[Match, ...]
    precision: float
    recall: float
    culprit_accuracy: float
    onset_to_report_s: tuple[float, ...]
    ignored_intervals: int
    failures: tuple[str, ...]
    passed: bool


def score(truth: Sequence[TruthRecord], attributions: Iterable[Mapping[str, Any]],
          hotspots: Iterable[Mapping[str, Any]], limits: Limits | None = None,
          min_samples: int = 100) -> Report:
    """Score fabcorr's ``attributions`` and ``hotspots`` (as data) against ``truth``."""
    limits = limits or Limits()
    truth = sorted(truth, key=lambda r: r.start)
    scored, ignored = _aligned(truth, attributions)
    totals = [_by_direction(r) for r in truth]
    link_intervals = within = 0
    errors: list[float] = []
    misses: list[Miss] = []
    bytes_ok: list[bool] = []
    for index, attribution in scored:
        for link in attribution["links"]:
            if link["samples"] >= min_samples:
                found = _misses(link, totals[index].get((link["port"], link["direction"]), {}),
                                errors, bytes_ok)
                link_intervals, within = link_intervals + 1, within + (not found)
                misses += found
    true = _true_hotspots(truth, limits)
    reported, matches = _matches(truth, totals, true, list(hotspots), limits)
    fraction = within / link_intervals if link_intervals else None
    measures = {"precision": sum(any(_overlap(t, r) for t in true) for r in reported)
                / len(reported) if reported else 1.0,
                "recall": len(matches) / len(true) if true else 1.0,
                "culprit accuracy": sum(m.culprit_ok for m in matches) / len(matches)
                if matches else 1.0}
    failures = [f"{name} {value:.0%} (target 100%)" for name, value in measures.items()
                if value < 1]
    if fraction is None or fraction < WITHIN_TARGET:
        failures.insert(0, f"shares within the 95 % bound in {fraction or 0:.1%} of "
                        f"{link_intervals} link-intervals (target {WITHIN_TARGET:.0%})")
    return Report(min_samples, link_intervals, within, fraction,
                  sum(errors) / len(errors) if errors else None, tuple(misses),
                  len(bytes_ok), sum(bytes_ok),
                  sum(bytes_ok) / len(bytes_ok) if bytes_ok else None, tuple(true),
                  tuple(reported), tuple(matches), *measures.values(),
                  tuple(m.onset_to_report_s for m in matches), ignored, tuple(failures),
                  not failures)


def _aligned(truth: Sequence[TruthRecord], attributions: Iterable[Mapping[str, Any]]
             ) -> tuple[list[tuple[int, Mapping[str, Any]]], int]:
    """(truth index, attribution) for every attribution inside the truth, and how many
    lay wholly outside it; ScoreError for one that overlaps it out of line."""
    starts = {round(r.start / _EPSILON): i for i, r in enumerate(truth)}
    first, last = (truth[0].start, truth[-1].end) if truth else (0.0, 0.0)
    scored, ignored = [], 0
    for attribution in attributions:
        start, seconds = float(attribution["start"]), float(attribution["seconds"])
        if start + seconds <= first + _EPSILON or start >= last - _EPSILON:
            ignored += 1
            continue
        index = starts.get(round(start / _EPSILON))
        if index is None or abs(truth[index].end - truth[index].start - seconds) > _EPSILON:
            raise ScoreError(f"fabcorr's interval {start:.3f} +{seconds:g}s does not match an "
                             "interval of the truth: run both with the same, aligned "
                             "intervals")
        scored.append((index, attribution))
    return scored, ignored


def _by_direction(record: TruthRecord) -> _Totals:
    """(port ID, direction) -> tenant -> bytes, of one interval."""
    found: _Totals = {}
    for key, octets in record.bytes.items():
        tenants = found.setdefault((port_id(key.switch, key.port), key.direction), {})
        tenants[key.tenant] = tenants.get(key.tenant, 0) + octets
    return found


def _misses(link: Mapping[str, Any], true: Mapping[str, int], errors: list[float],
            bytes_ok: list[bool]) -> list[Miss]:
    """The tenants of one link-interval outside their share interval; adds each tenant's
    absolute share error to ``errors``, and whether its true bytes lie in fabcorr's bytes
    interval to ``bytes_ok``."""
    total = sum(true.values())
    reported = {s["name"]: s for s in link["tenants"]}
    absent = absent_bound(link["samples"])
    link_bytes = link.get("counter_bytes")
    link_bytes = link["estimated_bytes"] if link_bytes is None else link_bytes
    found = []
    for tenant in sorted(set(reported) | set(true)):
        octets = true.get(tenant, 0)
        fact = octets / total if total else 0.0
        seen = reported.get(tenant)
        share, low, high = ((seen["share"], seen["share_low"], seen["share_high"]) if seen
                            else (0.0, 0.0, absent))
        byte_low, byte_high = (seen["low"], seen["high"]) if seen else (0.0,
                                                                       absent * link_bytes)
        bytes_ok.append(byte_low * (1 - _EPSILON) <= octets <= byte_high * (1 + _EPSILON))
        errors.append(abs(share - fact))
        if not low - _EPSILON <= fact <= high + _EPSILON:
            found.append(Miss(link["port"], link["direction"], float(link["start"]),
                              link["samples"], tenant, share, low, high, fact))
    return found


def _true_hotspots(truth: Sequence[TruthRecord], limits: Limits) -> list[Episode]:
    """Episodes of ``limits.intervals`` or more truly hot intervals in a row, a cable's
    direction judged once on the signals of both ends."""
    streaks: dict[tuple[str, str], list[Any]] = {}  # -> [start, count, down]
    found: list[Episode] = []

    def close(key: tuple[str, str], end: float | None) -> None:
        start, count, down = streaks.pop(key)
        if count >= limits.intervals:
            found.append(Episode(*key, start, end, down))

    for record in truth:
        merged: dict[tuple[str, str], dict[str, float]] = {}
        for (switch, port, direction), values in record.signals.items():
            key = _sender_out(record.peers, port_id(switch, port), direction)
            both = merged.setdefault(key, {})
            for kind in KINDS:
                if kind in values:
                    both[kind] = max(values[kind], both.get(kind, values[kind]))
        hot = {key for key, values in merged.items() if limits.hot(values)}
        for key in [k for k in streaks if k not in hot]:
            close(key, record.start)
        for key in hot:
            ends = {key[0], record.peers.get(key[0], "")}
            down = any(_switch_of(p) in record.down_switches for p in ends)
            streaks.setdefault(key, [record.start, 0, down])[1] += 1
    for key in list(streaks):
        close(key, None)
    return sorted(found, key=lambda e: (e.start, e.port, e.direction))


def _sender_out(peers: Mapping[str, str], port: str, direction: str) -> tuple[str, str]:
    """A cable direction between two switch ports named once, as its sender's ``out``; what
    a port receives from a host stays its ``in``.

    >>> _sender_out({"port:spine01/Ethernet1": "port:leaf01/Ethernet9"},
    ...             "port:spine01/Ethernet1", "in")
    ('port:leaf01/Ethernet9', 'out')
    """
    peer = peers.get(port, "")
    return (peer, "out") if direction == "in" and peer else (port, direction)


def _switch_of(port: str) -> str:
    """``leaf01`` of ``port:leaf01/Ethernet1`` (empty for no port)."""
    return port.partition(":")[2].partition("/")[0]


def _matches(truth: Sequence[TruthRecord], totals: list[_Totals], true: list[Episode],
             hotspots: list[Mapping[str, Any]], limits: Limits
             ) -> tuple[list[Episode], list[Match]]:
    """The reported hotspots as episodes, and each true one's first overlapping one."""
    reported = sorted((Episode(h["port"], h["direction"], float(h["start"]),
                               None if h.get("end") is None else float(h["end"]))
                       for h in hotspots), key=lambda e: (e.start, e.port, e.direction))
    culprits = {(h["port"], h["direction"], float(h["start"])):
                h["culprits"][0]["name"] if h["culprits"] else None for h in hotspots}
    interval_s = truth[0].end - truth[0].start if truth else 0.0
    matches = []
    for episode in true:
        hit = next((r for r in reported if _overlap(episode, r)), None)
        if hit is not None:
            culprit = culprits[(hit.port, hit.direction, hit.start)]
            true_culprit = _true_culprit(truth, totals, episode, hit)
            matches.append(Match(
                episode.port, episode.direction, episode.start, hit.start,
                hit.start + limits.intervals * interval_s - episode.start, culprit,
                true_culprit, culprit is not None and culprit == true_culprit))
    return reported, matches


def _overlap(a: Episode, b: Episode) -> bool:
    inf = float("inf")
    return (a.port, a.direction) == (b.port, b.direction) and \
        a.start < (b.end if b.end is not None else inf) and \
        b.start < (a.end if a.end is not None else inf)


def _true_culprit(truth: Sequence[TruthRecord], totals: list[_Totals], a: Episode,
                  b: Episode) -> str | None:
    """The tenant with the most true bytes on the direction while both call it hot."""
    start = max(a.start, b.start)
    end = min(e for e in (a.end, b.end, float("inf")) if e is not None)
    sums: dict[str, int] = {}
    for record, by_direction in zip(truth, totals, strict=True):
        if start - _EPSILON <= record.start < end - _EPSILON:
            for tenant, octets in by_direction.get((a.port, a.direction), {}).items():
                sums[tenant] = sums.get(tenant, 0) + octets
    return max(sums, key=lambda t: (sums[t], t)) if sums else None
