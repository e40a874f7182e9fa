"""The fabric map page: one self-contained HTML document (our own script and style
inline, no external fetch), live or offline.

Live, the script asks the API (``api/v1/map/layout`` once, ``api/v1/map/state`` every
interval) on the page's own origin; offline, both documents are embedded and the page
connects nowhere. Either way the Content-Security-Policy allows only the page's own inline
script and style (by their SHA-256) and connections to its own origin (none offline).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).parent / "map"
_SLOT = re.compile(r"\$(csp|style|script|data)\b")  # the template's slots, filled in one pass


def page(data: dict[str, Any] | None = None) -> bytes:
    """The map page: live without ``data``; offline with ``{"layout": ..., "state": ...}``
    embedded."""
    script, style = _asset("map.js"), _asset("map.css")
    embedded = "" if data is None else (
        '<script type="application/json" id="map-data">'
        + json.dumps(data, separators=(",", ":")).replace("<", "\\u003c") + "</script>\n")
    parts = {"csp": policy(data is None), "style": style, "script": script, "data": embedded}
    return _SLOT.sub(lambda m: parts[m.group(1)], _asset("map.html")).encode()


def policy(live: bool) -> str:
    """The page's Content-Security-Policy: its inline script and style only; connections
    to its own origin when ``live``, else none."""
    connect = "'self'" if live else "'none'"
    return (f"default-src 'none'; script-src {_digest(_asset('map.js'))}; "
            f"style-src {_digest(_asset('map.css'))}; img-src data:; "
            f"connect-src {connect}; base-uri 'none'; form-action 'none'")


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")
