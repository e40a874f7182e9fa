"""What fabcorr reported, read back as data for :mod:`simulator.score`.

- the service's attribution log (``attribution.log``): JSON lines ``{"attribution": ...,
  "received": ...}``, one per interval, then maybe a correction of it (the same ``start``,
  ``replaces``): the last of each ``start`` counts; it holds no hotspots;
- ``fabcorr attribute -o json``: one document with ``attributions`` and ``hotspots``;
- ``fabcorr hotspots -o json`` or ``/api/v1/hotspots``: a list of hotspots;
- the logs of several shards (``fabcorr run --shard I/N``), each link direction in one of
  them: their union per interval (:func:`union`) is one process's log.

Only JSON is read here, no code of fabcorr's: the scorer must not lean on what it scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inventory.errors import ConfigError

Data = dict[str, Any]


def read_log(path: str | Path) -> tuple[list[Data], list[Data] | None]:
    """The attributions of a log (the last line of each ``start``, where the start first
    came) or of a ``fabcorr attribute -o json`` document (one per interval already), and
    its hotspots (None: the file has none). A service appending to the log may be caught
    mid-line (a line of a large fabric spans many pages): a last line without its newline
    that is not yet whole is left for the next read."""
    text = _text(path)
    try:
        document = json.loads(text)
    except ValueError:
        document = None  # JSON lines
    if isinstance(document, dict) and "attributions" in document:
        return document["attributions"], document.get("hotspots")
    attributions: dict[float, Data] = {}  # a correction replaces the line of its start
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            attribution = json.loads(line)["attribution"]
            attributions[attribution["start"]] = attribution
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines):  # no newline yet: a live log's line being written
                break
            raise ConfigError(str(path), f"line {number}",
                              f"not an attribution log line: {exc!r}") from exc
    return list(attributions.values()), None


def union(logs: list[list[Data]]) -> list[Data]:
    """The attributions of several shards' logs as one process's: per interval start, the
    link directions of all, their unplaced samples summed, provisional if any was.

    >>> one = [{"start": 0, "seconds": 5, "links": [{"port": "a"}], "unknown_ports": {"x:1": 2},
    ...         "unattributed_samples": 1, "provisional": False, "replaces": False}]
    >>> two = [{**one[0], "links": [{"port": "b"}], "unknown_ports": {"x:1": 1, "y:2": 1},
    ...         "provisional": True}, {**one[0], "start": 5}]
    >>> [(a["start"], [link["port"] for link in a["links"]], a["unknown_ports"],
    ...   a["unattributed_samples"], a["provisional"]) for a in union([one, two])]
    [(0, ['a', 'b'], {'x:1': 3, 'y:2': 1}, 2, True), (5, ['a'], {'x:1': 2}, 1, False)]
    """
    merged: dict[float, Data] = {}
    for log in logs:
        for attribution in log:
            seen = merged.get(attribution["start"])
            if seen is None:
                merged[attribution["start"]] = {**attribution, "links": list(
                    attribution["links"]), "unknown_ports": dict(attribution["unknown_ports"])}
                continue
            seen["links"] += attribution["links"]
            for port, samples in attribution["unknown_ports"].items():
                seen["unknown_ports"][port] = seen["unknown_ports"].get(port, 0) + samples
            seen["unattributed_samples"] += attribution["unattributed_samples"]
            seen["provisional"] = seen["provisional"] or attribution["provisional"]
            seen["replaces"] = seen["replaces"] or attribution["replaces"]
    return sorted(merged.values(), key=lambda a: a["start"])


def read_hotspots(path: str | Path) -> list[Data]:
    """Hotspots as ``fabcorr hotspots -o json`` and ``/api/v1/hotspots`` give them."""
    try:
        found = json.loads(_text(path))
    except ValueError as exc:
        raise ConfigError(str(path), "", f"not JSON: {exc}") from exc
    if not isinstance(found, list) or not all(isinstance(h, dict) for h in found):
        raise ConfigError(str(path), "", "expected a JSON list of hotspots")
    return found


def _text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from exc
