"""The client of a fabcorr service's JSON API: one GET, its status and JSON body.

Basic auth is sent with the request (no challenge round trip); an ``https`` server is
verified against ``ca_file`` or the system's CA certificates.
"""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import Mapping
from http.client import HTTPException
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode, urlsplit
from urllib.request import Request, urlopen

from inventory.errors import ConfigError, SourceError, SourceUnreachable

TIMEOUT_S = 30.0


def get(server: str, path: str, query: Mapping[str, list[str]], *,
        auth: tuple[str, str] | None = None, ca_file: str | None = None,
        timeout: float = TIMEOUT_S) -> tuple[int, Any]:
    """``GET server + path?query``: the HTTP status and the JSON body. Unreachable, or an
    answer that is no JSON: SourceError naming ``server``."""
    scheme = urlsplit(server).scheme
    if scheme not in ("http", "https"):
        raise ConfigError("--server", "", f"{server!r} is not an http:// or https:// URL")
    url = server.rstrip("/") + quote(path, safe="/:") + (
        "?" + urlencode(query, doseq=True) if query else "")
    request = Request(url, headers={"Accept": "application/json"})
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        context = ssl.create_default_context(cafile=ca_file) if scheme == "https" else None
    except OSError as exc:
        raise ConfigError(str(ca_file), "", f"cannot read CA certificates: {exc}") from exc
    try:
        with urlopen(request, timeout=timeout, context=context) as response:
            return response.status, _body(url, response.status, response.read())
    except HTTPError as exc:
        with exc:
            return exc.code, _body(url, exc.code, exc.read())
    except (URLError, OSError, HTTPException) as exc:
        reason = exc.reason if isinstance(exc, URLError) else exc
        raise SourceUnreachable(f"cannot reach {server}: {reason}") from exc


def _body(url: str, status: int, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise SourceError(f"{url}: HTTP {status}, not a fabcorr API answer") from None
