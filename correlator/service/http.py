"""The service's HTTP endpoints, served from a daemon thread (stdlib ``http.server``).

- ``/metrics``: the Prometheus exposition of the current view (text format 0.0.4);
- ``/healthz``: 200 while the server runs; ``/readyz``: 200 once the view is ready and
  while every component runs, else 503 — both always without authentication, for probes;
- ``/api/v1/...``: the JSON API (:mod:`correlator.service.api`);
- ``/``: the fabric map (:mod:`correlator.service.map_page`), under its
  Content-Security-Policy, behind the same authentication as the API.

The inlet (``fabcorr inlet``) serves its metrics and probes with the same server, without
the API: ``view()`` then only answers ``serving``, and ``exposition`` only renders.

Optional TLS (a certificate and key file; the handshake happens in the request's thread)
and optional basic auth (one user; compared in constant time; 401 with
``WWW-Authenticate``). Connections are served by a bounded pool of threads
(:data:`WORKERS`); while all are busy new ones wait in the kernel's listen backlog
(:data:`BACKLOG`), never refused. A response leaves in one write, with Nagle's algorithm
off, so a keep-alive client is never held by a delayed ACK. Access lines go to the
``logging`` module at debug level, and never carry credentials.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import queue
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from correlator.service import api, map_page

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_OPEN = frozenset({"/healthz", "/readyz"})  # probes never authenticate
_TIMEOUT_S = 10.0  # an idle or stuck connection (or TLS handshake) is dropped after this
WORKERS = 32
"""Connections served at once."""
BACKLOG = 1024
"""Connections the kernel holds while every worker is busy."""
_BUFFER = 1 << 18  # a response up to this size leaves in one write

_log = logging.getLogger(__name__)


class Serving(Protocol):
    """What ``/readyz`` asks (a :class:`~correlator.view.View`, for the API too)."""

    @property
    def serving(self) -> bool: ...


class Rendering(Protocol):
    """What ``/metrics`` asks (:class:`~correlator.service.exporter.Exposition`)."""

    def render(self) -> bytes: ...


class HttpServer:
    """Metrics, probes and (unless ``api`` is False) the API of ``view()`` on
    ``host:port`` (0: any free port)."""

    def __init__(self, host: str, port: int, view: Callable[[], Serving], exposition: Rendering,
                 tls: tuple[str, str] | None = None, auth: tuple[str, str] | None = None,
                 api: bool = True) -> None:
        self.host, self._port = host, port
        self.view, self.exposition, self.api = view, exposition, api
        self.auth = None if auth is None else (auth[0].encode(), auth[1].encode())
        self.tls = _tls_context(*tls) if tls is not None else None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port listened on (the one the system chose for port 0, once started)."""
        return self._server.server_address[1] if self._server is not None else self._port

    def start(self) -> None:
        """Bind and serve in a daemon thread."""
        self._server = _Server((self.host, self._port), _Handler, self)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,),
                                        name="http", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.stop()
            assert self._thread is not None
            self._thread.join()
            self._server = None

    def allowed(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the configured user and password."""
        if self.auth is None:
            return True
        scheme, _, encoded = (header or "").partition(" ")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        user, colon, password = decoded.partition(b":")
        same_user = hmac.compare_digest(user, self.auth[0])
        same_password = hmac.compare_digest(password, self.auth[1])
        return scheme.lower() == "basic" and bool(colon) and same_user and same_password


def _tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


class _Server(HTTPServer):
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 app: HttpServer) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.app = app
        self._connections: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()
        self._free = threading.BoundedSemaphore(WORKERS)
        self._closing = threading.Event()
        super().__init__(address, handler)
        for n in range(WORKERS):  # daemons: an idle keep-alive connection never holds exit
            threading.Thread(target=self._work, name=f"http-{n}", daemon=True).start()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to a free worker; wait for one (the next connections wait
        in the backlog meanwhile)."""
        while not self._free.acquire(timeout=0.2):
            if self._closing.is_set():
                self.shutdown_request(request)
                return
        self._connections.put((request, client_address))

    def _work(self) -> None:
        while (connection := self._connections.get()) is not None:
            request, client_address = connection
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
                self._free.release()

    def stop(self) -> None:
        """Stop accepting, release the port, end the idle workers."""
        self._closing.set()
        self.shutdown()
        self.server_close()
        for _ in range(WORKERS):
            self._connections.put(None)

    def finish_request(self, request: Any, client_address: Any) -> None:
        tls = self.app.tls
        if tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(_TIMEOUT_S)
        wrapped = tls.wrap_socket(request, server_side=True)
        try:
            super().finish_request(wrapped, client_address)
        finally:
            self.shutdown_request(wrapped)

    def handle_error(self, request: Any, client_address: Any) -> None:
        _log.debug("http: connection from %s failed", client_address[0], exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = _TIMEOUT_S
    wbufsize = _BUFFER  # headers and body written together, at the end of the request
    disable_nagle_algorithm = True
    server_version, sys_version = "fabcorr", ""

    def do_GET(self) -> None:
        app = self.server.app
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        if path not in _OPEN and not app.allowed(self.headers.get("Authorization")):
            self._send(401, *_json({"error": "authentication required"}),
                       {"WWW-Authenticate": 'Basic realm="fabcorr", charset="UTF-8"'})
            return
        try:
            if path == "/" and app.api:  # the map reads the API
                self._send(200, "text/html; charset=utf-8", map_page.page(),
                           {"Content-Security-Policy": map_page.policy(live=True)
                            + "; frame-ancestors 'none'", "Cache-Control": "no-store"})
                return
            self._send(*self._answer(app, path, parts.query))
        except Exception:
            _log.exception("http: %s %s failed", self.command, path)
            self._send(500, *_json({"error": "internal error"}))

    do_HEAD = do_GET  # other methods: 501 from the base class

    def _answer(self, app: HttpServer, path: str, query: str) -> tuple[int, str, bytes]:
        if path == "/metrics":
            return 200, METRICS_TYPE, app.exposition.render()
        if path == "/healthz":
            return 200, "text/plain; charset=utf-8", b"ok\n"
        if path == "/readyz":
            return (200, "text/plain; charset=utf-8", b"ready\n") if app.view().serving else \
                (503, "text/plain; charset=utf-8", b"not ready\n")
        if not app.api:
            return 404, *_json({"error": f"no endpoint {path!r} (only /metrics, /healthz, "
                                          "/readyz)"})
        status, body = api.handle(app.view(), self.command, path,  # type: ignore[arg-type]
                                  parse_qs(query, keep_blank_values=True))
        return status, *_json(body)

    def _send(self, status: int, content_type: str, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("http: %s " + format, self.client_address[0], *args)


def _json(body: Any) -> tuple[str, bytes]:
    return "application/json; charset=utf-8", json.dumps(body).encode()
