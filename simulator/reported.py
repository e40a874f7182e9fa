"""What fabcorr reported, read back as data for :mod:`simulator.score`.

- the service's attribution log (``attribution.log``): JSON lines ``{"attribution": ...,
  "received": ...}``, one per interval, then maybe a correction of it (the same ``start``,
  ``replaces``): the last of each ``start`` counts; it holds no hotspots;
- ``fabcorr attribute -o json``: one document with ``attributions`` and ``hotspots``;
- ``fabcorr hotspots -o json`` or ``/api/v1/hotspots``: a list of hotspots.

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
    its hotspots (None: the file has none)."""
    text = _text(path)
    try:
        document = json.loads(text)
    except ValueError:
        document = None  # JSON lines
    if isinstance(document, dict) and "attributions" in document:
        return document["attributions"], document.get("hotspots")
    attributions: dict[float, Data] = {}  # a correction replaces the line of its start
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            attribution = json.loads(line)["attribution"]
            attributions[attribution["start"]] = attribution
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(str(path), f"line {number}",
                              f"not an attribution log line: {exc!r}") from exc
    return list(attributions.values()), None


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
