"""A fake Kubernetes API server on real HTTP that lists, gets and watches fabcorr's resources."""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import json
import logging
import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from inventory.kubernetes.resources import OWNER_KINDS, WATCHED, group_of

_log = logging.getLogger(__name__)

_Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Type:
    group: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def resource(self) -> str:
        """``plural.group`` as kubectl spells it (``pods`` in the core group)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_TYPES = (*(_Type(r.group, r.plural, r.kind, r.namespaced) for r in WATCHED.values()),
          *(_Type(group, plural, kind, True) for (group, kind), plural in OWNER_KINDS.items()))
_BY_KIND = {(t.group, t.kind): t for t in _TYPES}
_BY_PLURAL = {(t.group, t.plural): t for t in _TYPES}


class _Failure(Exception):
    """A request answered with a ``Status`` object instead of the resource."""

    def __init__(self, code: HTTPStatus, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason, "code": int(code)}


def _line(event_type: str, obj: Mapping[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode() + b"\n"


def _int_param(query: Mapping[str, str], name: str) -> int:
    try:
        return int(query.get(name, "0"))
    except ValueError:
        raise _Failure(HTTPStatus.BAD_REQUEST, "BadRequest", f"invalid {name}") from None


@dataclass(frozen=True, slots=True)
class _Target:
    """What a request path names: a collection (``name`` None) or one object."""

    type: _Type
    api_version: str
    namespace: str | None
    name: str | None

    @classmethod
    def parse(cls, path: str) -> _Target:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        group, version, rest = "", "v1", []
        if parts[:2] == ["api", "v1"]:
            rest = parts[2:]
        elif len(parts) > 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        namespace = None
        if len(rest) in (3, 4) and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        kind = _BY_PLURAL.get((group, rest[0])) if len(rest) in (1, 2) else None
        if kind is None or (namespace is not None and not kind.namespaced) or (
                len(rest) == 2 and kind.namespaced and namespace is None):
            raise _Failure(HTTPStatus.NOT_FOUND, "NotFound",
                           "the server could not find the requested resource")
        return cls(kind, f"{group}/{version}" if group else version, namespace,
                   rest[1] if len(rest) == 2 else None)

    def holds(self, kind: _Type, namespace: str) -> bool:
        return kind == self.type and self.namespace in (None, namespace)


@dataclass(eq=False)
class _Watch:
    """A watch connection and the lines to send: ``b""`` ends the stream, ``None`` cuts it."""

    target: _Target
    bookmarks: bool
    connection: socket.socket
    lines: queue.SimpleQueue[bytes | None] = field(default_factory=queue.SimpleQueue)

    def next_line(self, deadline: float | None) -> bytes | None:
        try:
            return self.lines.get(timeout=None if deadline is None
                                  else max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return b""  # timeoutSeconds elapsed


class FakeKubeApi:
    """Objects of the WATCHED and OWNER_KINDS resources, served on ``127.0.0.1``.

    Every change goes through :meth:`apply` and takes the next global resourceVersion.
    ``requests[verb, resource]`` counts ``list``, ``get`` and ``watch`` requests (``resource``
    is ``plural.group``, ``pods`` in the core group). Unlike the real server: pages after the
    first come from the current state, path API versions are not checked, selectors ignored.
    """

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Condition()
        self._rv = self._compacted = 0
        self._objects: dict[_Type, dict[tuple[str, str], _Obj]] = {t: {} for t in _TYPES}
        self._history: list[tuple[int, _Type, str, bytes]] = []  # rv, type, namespace, line
        self._watches: set[_Watch] = set()
        self._forbidden: set[tuple[str, str, str | None]] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        for obj in objects:
            self.apply("ADDED", obj)

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError("already started")
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True, name=f"kube-api:{self._server.server_port}")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut the open watches and join every thread."""
        with self._lock:  # _open_watch cuts any watch that would open from now on
            server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is not None and thread is not None:
            server.shutdown()
            self.drop_watches()
            server.server_close()
            thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("not started")
        return f"http://127.0.0.1:{self._server.server_port}"

    def kubeconfig(self, path: str | Path) -> Path:
        """Write a kubeconfig whose current context ``fake`` reaches this server without auth."""
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "fake",
               "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
               "users": [{"name": "fake", "user": {}}],
               "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}
        path = Path(path)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    def apply(self, event_type: str, obj: Mapping[str, Any]) -> str:
        """Store or delete ``obj`` (DELETED sends its last state) and tell the watches; -> RV."""
        kind = _BY_KIND.get((group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind"))))
        if kind is None:
            raise ValueError(f"no resource serves {obj.get('apiVersion')} {obj.get('kind')}")
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        if not key[1] or kind.namespaced != bool(key[0]):
            scope = "and metadata.namespace" if kind.namespaced else "and no namespace"
            raise ValueError(f"a {kind.kind} needs metadata.name {scope}")
        with self._lock:
            store = self._objects[kind]
            if event_type not in ("ADDED", "MODIFIED", "DELETED") or (
                    key in store) == (event_type == "ADDED"):
                where = "/".join(filter(None, key))
                raise ValueError(f"cannot apply {event_type} to {kind.kind} {where}"
                                 f" ({'stored' if key in store else 'absent'})")
            self._rv += 1
            stored = copy.deepcopy(dict(store.pop(key) if event_type == "DELETED" else obj))
            stored["metadata"]["resourceVersion"] = str(self._rv)
            if event_type != "DELETED":
                store[key] = stored
            line = _line(event_type, stored)
            self._history.append((self._rv, kind, key[0], line))
            for watch in self._watches:
                if watch.target.holds(kind, key[0]):
                    watch.lines.put(line)
            return str(self._rv)

    def bookmark(self, resource: str | None = None) -> None:
        """Send a BOOKMARK at the current RV to the watches of ``resource`` (None: of all
        resources) that allow bookmarks."""
        with self._lock:
            for watch in self._watches:
                target = watch.target
                if watch.bookmarks and resource in (None, target.type.resource):
                    watch.lines.put(_line("BOOKMARK", {
                        "kind": target.type.kind, "apiVersion": target.api_version,
                        "metadata": {"resourceVersion": str(self._rv)}}))

    def expire(self, rv: int | str | None = None) -> None:
        """Compact the history: watches and continue tokens from before ``rv`` (default: the
        current RV) get 410 Expired."""
        with self._lock:
            upto = self._rv if rv is None else int(rv)
            if not 0 <= upto <= self._rv:
                raise ValueError(f"resourceVersion {rv} is not in 0..{self._rv}")
            self._compacted = max(self._compacted, upto)
            self._history = [e for e in self._history if e[0] > self._compacted]

    def drop_watches(self) -> int:
        """Cut every open watch connection with no terminating chunk; returns how many."""
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            watch.lines.put(None)
            with contextlib.suppress(OSError):  # the client may have closed it already
                watch.connection.shutdown(socket.SHUT_RDWR)
        return len(watches)

    def forbid(self, group: str, plural: str, name: str | None = None) -> None:
        """Answer 403 to every request for ``plural`` in ``group``, or to the GETs of ``name``."""
        if (group, plural) not in _BY_PLURAL:
            raise ValueError(f"unknown resource {plural!r} in group {group!r}")
        with self._lock:
            self._forbidden.add((group, plural, name))

    def wait_watching(self, resource: str, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait until ``count`` watches of ``resource`` (``plural.group``) are open."""
        with self._lock:
            return self._lock.wait_for(lambda: sum(
                w.target.type.resource == resource for w in self._watches) >= count, timeout)

    def _admit(self, verb: str, target: _Target) -> None:
        """Count the request, refuse it if forbidden; the caller holds the lock."""
        kind, name = target.type, target.name
        self.requests[verb, kind.resource] += 1
        if {(kind.group, kind.plural, None), (kind.group, kind.plural, name)} & self._forbidden:
            scope = (f'in the namespace "{target.namespace}"' if target.namespace
                     else "at the cluster scope")
            raise _Failure(HTTPStatus.FORBIDDEN, "Forbidden",
                           f'{kind.resource}{f" {json.dumps(name)}" if name else ""} is forbidden:'
                           f' User "system:anonymous" cannot {verb} resource "{kind.plural}"'
                           f' in API group "{kind.group}" {scope}')

    def _read(self, target: _Target, query: Mapping[str, str]) -> _Obj:
        """The object named by ``target``, or a page of its collection."""
        limit = _int_param(query, "limit")
        with self._lock:
            self._admit("list" if target.name is None else "get", target)
            store = self._objects[target.type]
            if target.name is not None:
                if (obj := store.get((target.namespace or "", target.name))) is None:
                    raise _Failure(HTTPStatus.NOT_FOUND, "NotFound",
                                   f'{target.type.resource} "{target.name}" not found')
                return obj
            rv, after = self._rv, ("", "")
            if "continue" in query:
                rv, after = self._resume(query["continue"])
            keys = [k for k in sorted(store) if k > after and target.namespace in (None, k[0])]
            page = keys[:limit] if limit > 0 else keys
            meta = {"resourceVersion": str(rv)}
            if len(page) < len(keys):
                token = json.dumps([rv, *page[-1]]).encode()
                meta["continue"] = base64.urlsafe_b64encode(token).decode()
            return {"apiVersion": target.api_version, "kind": f"{target.type.kind}List",
                    "metadata": meta, "items": [store[k] for k in page]}

    def _resume(self, token: str) -> tuple[int, tuple[str, str]]:
        try:
            rv, namespace, name = json.loads(base64.urlsafe_b64decode(token.encode()))
            rv, after = int(rv), (str(namespace), str(name))
        except (ValueError, TypeError, binascii.Error):
            raise _Failure(HTTPStatus.BAD_REQUEST, "BadRequest", "invalid continue") from None
        if rv < self._compacted:
            raise _Failure(HTTPStatus.GONE, "Expired", "The provided continue parameter is too"
                           " old to display a consistent list result. You can start a new list"
                           " without the continue parameter.")
        return rv, after

    def _open_watch(self, target: _Target, query: Mapping[str, str],
                    connection: socket.socket) -> _Watch:
        """A watch with its first lines queued, registered unless it is already expired."""
        since = _int_param(query, "resourceVersion")
        watch = _Watch(target, query.get("allowWatchBookmarks", "").lower() in ("true", "1"),
                       connection)
        with self._lock:
            self._admit("watch", target)
            if 0 < since < self._compacted:  # as the apiserver does: one ERROR event, then the end
                expired = _Failure(HTTPStatus.GONE, "Expired", "too old resource version:"
                                   f" {since} ({self._compacted})")
                watch.lines.put(_line("ERROR", expired.status))
                watch.lines.put(b"")
                return watch
            if since:
                first = [e[3] for e in self._history if e[0] > since and target.holds(*e[1:3])]
            else:  # no resourceVersion, or "0": the current state as synthetic ADDED events
                store = self._objects[target.type]
                first = [_line("ADDED", store[k]) for k in sorted(store)
                         if target.holds(target.type, k[0])]
            for line in first:
                watch.lines.put(line)
            if self._server is None:  # stopping
                watch.lines.put(None)
            self._watches.add(watch)
            self._lock.notify_all()
            return watch

    def _close_watch(self, watch: _Watch) -> None:
        with self._lock:
            self._watches.discard(watch)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: FakeKubeApi) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api

    def handle_error(self, request: object, client_address: object) -> None:
        _log.debug("connection from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    """One request per connection (``Connection: close``): no idle one outlives ``stop()``."""

    protocol_version = "HTTP/1.1"  # for the chunked watch responses
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep quiet: tests read ``FakeKubeApi.requests`` instead."""

    def do_GET(self) -> None:
        api = self.server.api
        self.responded = False
        try:
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            target = _Target.parse(url.path)
            if query.get("watch", "").lower() not in ("true", "1"):
                self._send(HTTPStatus.OK, api._read(target, query))
            elif target.name is not None:
                raise _Failure(HTTPStatus.BAD_REQUEST, "BadRequest",
                               "watch the collection with a metadata.name fieldSelector instead")
            else:
                self._watch(api, target, query)
        except _Failure as failure:
            self._send(failure.code, failure.status)
        except OSError:
            pass  # the client left, or the watch was dropped
        except Exception:
            _log.exception("GET %s failed", self.path)
            if not self.responded:
                error = _Failure(HTTPStatus.INTERNAL_SERVER_ERROR, "InternalError",
                                 "internal error")
                self._send(error.code, error.status)

    def _send(self, code: HTTPStatus, obj: _Obj | None) -> None:
        """Answer ``obj``, or start a chunked stream if it is None."""
        body = None if obj is None else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header(*(("Transfer-Encoding", "chunked") if body is None
                           else ("Content-Length", str(len(body)))))
        self.send_header("Connection", "close")
        self.end_headers()
        self.responded = True
        if body is not None:
            self.wfile.write(body)

    def _watch(self, api: FakeKubeApi, target: _Target, query: Mapping[str, str]) -> None:
        timeout = _int_param(query, "timeoutSeconds")
        deadline = time.monotonic() + timeout if timeout > 0 else None
        watch = api._open_watch(target, query, self.connection)
        try:
            self._send(HTTPStatus.OK, None)
            while line := watch.next_line(deadline):
                self.wfile.write(b"%X\r\n%s\r\n" % (len(line), line))
            if line is not None:  # the end, not a dropped watch
                self.wfile.write(b"0\r\n\r\n")
        finally:
            api._close_watch(watch)
