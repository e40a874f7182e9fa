"""What fabcorr reported, read back as data for :mod:`simulator.score`.

- the service's attribution log (``attribution.log``): JSON lines ``{"attribution": ...,
  "received": ...}``, one per interval; it holds no hotspots;
- ``fabcorr attribute -o json``: one document with ``attributions`` and ``hotspots``;
- ``fabcorr hotspots -o json`` or ``/api/v1/hotspots``: a list of hotspots.

Without hotspots, :func:`recompute_hotspots` judges the logged intervals again with a
:class:`~correlator.attribution.hotspots.HotspotTracker`; the log keeps each direction's
utilization but no PFC, ECN or discard rates, so only utilization can make those hot.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from correlator.attribution.attribute import Attribution, LinkTraffic
from correlator.attribution.estimate import Share
from correlator.attribution.hotspots import HotspotTracker, Thresholds
from correlator.cli.printers import to_data
from correlator.collect.rates import Rates
from inventory.errors import ConfigError

Data = dict[str, Any]


def read_log(path: str | Path) -> tuple[list[Data], list[Data] | None]:
    """The attributions of a log or of a ``fabcorr attribute -o json`` document, and
    its hotspots (None: the file has none)."""
    text = _text(path)
    try:
        document = json.loads(text)
    except ValueError:
        document = None  # JSON lines
    if isinstance(document, dict) and "attributions" in document:
        return document["attributions"], document.get("hotspots")
    attributions = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            attributions.append(json.loads(line)["attribution"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(str(path), f"line {number}",
                              f"not an attribution log line: {exc!r}") from exc
    return attributions, None


def read_hotspots(path: str | Path) -> list[Data]:
    """Hotspots as ``fabcorr hotspots -o json`` and ``/api/v1/hotspots`` give them."""
    try:
        found = json.loads(_text(path))
    except ValueError as exc:
        raise ConfigError(str(path), "", f"not JSON: {exc}") from exc
    if not isinstance(found, list) or not all(isinstance(h, dict) for h in found):
        raise ConfigError(str(path), "", "expected a JSON list of hotspots")
    return found


def recompute_hotspots(attributions: Iterable[Mapping[str, Any]],
                       limits: Thresholds | None = None) -> list[Data]:
    """The hotspots a tracker finds over logged intervals (in time order), judged on
    the utilization they logged: ended, then active."""
    tracker = HotspotTracker(limits)
    for data in sorted(attributions, key=lambda a: a["start"]):
        links = tuple(_link(link) for link in data["links"])
        utilization: dict[str, dict[str, float | None]] = {}
        for link in links:
            utilization.setdefault(link.port, {})[link.direction] = link.utilization
        rates = {port: Rates("", "", data["start"] + data["seconds"], data["seconds"], {}, {},
                             in_utilization=found.get("in"), out_utilization=found.get("out"))
                 for port, found in utilization.items()}
        tracker.update(Attribution(data["start"], data["seconds"], links, {}, 0), rates)
    return to_data([*tracker.ended, *tracker.active.values()])


def _link(data: Mapping[str, Any]) -> LinkTraffic:
    groups = ("tenants", "jobs", "pods", "pairs", "throttled")
    return LinkTraffic(**{**data, **{g: tuple(Share(**s) for s in data[g]) for g in groups}})


def _text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from exc
