"""The gNMI wire: pygnmi in worker threads, streams on gRPC's asyncio API, typed errors.

pygnmi is synchronous, so each of its calls runs in a thread and is bounded by
``GnmiOptions.timeout_s``; on expiry the channel is closed, which cancels the stuck RPC and
frees the thread. Library errors become :class:`GnmiError` subclasses whose ``kind`` is
``timeout``, ``unreachable``, ``tls``, ``auth``, ``garbage`` or ``error``. Passwords go to
pygnmi and the streams' call metadata only, and never appear in messages.

pygnmi 0.8.15 behaviours handled here (REFERENCE §3):

- ``encoding="json_ietf"`` is always passed: ``connect()`` would otherwise pick JSON.
- TLS: pygnmi uses ``path_cert`` *alone* as the trusted roots, while ``path_root`` alone
  is ignored and the server's own certificate is fetched and trusted; the CA file is
  therefore passed as ``path_cert``.
- ``gnmi_timeout=0`` skips pygnmi's channel-ready wait, whose TLS failure path doubles
  the wait and sets ``GRPC_SSL_CIPHER_SUITES`` for the whole process; the first RPC then
  fails fast with UNAVAILABLE instead.
- Subscribe ONCE (``subscribe2``): a notification with timestamp 0, or whose JSON does
  not parse, arrives as ``None``, and the subscription's thread only reports errors
  through ``subscriber.error``.

Streams (STREAM, SAMPLE) run on gRPC's asyncio API (``grpc.aio``) in the event loop,
without threads: on pygnmi's synchronous channel each stream needs a reader thread, which
gRPC wakes with the channel's poller about 15 times a second, so an idle stream cost
0.5 ms of CPU a second, a quarter of a core for 500 switches. Each stream opens an aio
channel as pygnmi's ``connect()`` builds its own from the same settings (target
``address:port``; insecure, or the CA file as the only trusted roots with the server-name
override) and sends the same credentials as call metadata; the request comes from pygnmi's
builder and the RPC from its gNMI stub. Like ``subscribe2``, the client side of the RPC
stays open until the stream ends: many targets take a half-close as the end of the
subscription. The raw ``SubscribeResponse`` messages are cut into samples in the loop,
without pygnmi's per-update dict conversion (``telemetryParser``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import ssl
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Self, TypeVar

import grpc
from pygnmi.client import gNMIclient
from pygnmi.spec.v080.gnmi_pb2 import Notification, SubscribeRequest, SubscribeResponse
from pygnmi.spec.v080.gnmi_pb2_grpc import gNMIStub

from inventory.devices import SwitchConfig
from inventory.errors import SourceError, SourceTimeout, SourceUnreachable

__all__ = ["GnmiAuthError", "GnmiClient", "GnmiError", "GnmiTimeout", "GnmiUnreachable"]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")
_POLL_S = 0.1  # how often a waiting ONCE call checks for a stream error
_TLS_HINT = re.compile(r"ssl|tls|handshake|certificate|verification", re.IGNORECASE)
_MISSING = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNIMPLEMENTED,
            grpc.StatusCode.INVALID_ARGUMENT)
_cancelled: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


class GnmiError(SourceError):
    """A gNMI request failed; ``kind`` tells why (see the module docstring)."""

    kind = "error"

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        if kind:
            self.kind = kind


class GnmiTimeout(GnmiError, SourceTimeout):
    """The target did not answer within ``timeout_s``."""

    kind = "timeout"


class GnmiUnreachable(GnmiError, SourceUnreachable):
    """The target refused or could not be reached (``kind`` ``tls``: the handshake failed)."""

    kind = "unreachable"


class GnmiAuthError(GnmiError):
    """The target rejected the credentials (UNAUTHENTICATED or PERMISSION_DENIED)."""

    kind = "auth"


class GnmiClient:
    """One switch's gNMI session; use ``async with``. Not safe for concurrent calls."""

    def __init__(self, switch: SwitchConfig) -> None:
        self.switch = switch
        self.where = f"gNMI {switch.name} at {switch.address}:{switch.gnmi.port}"
        self.timeout_s = switch.gnmi.timeout_s
        self._client: gNMIclient | None = None
        self._threads: list[threading.Thread] = []  # pygnmi's, one per ONCE subscription

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def connect(self) -> None:
        """Open the channel and read the target's capabilities."""
        self._client = self._new_client()
        await self._run("Capabilities", self._client.connect)

    def close(self) -> None:
        """Close pygnmi's channel; cancels any of its RPCs still running."""
        client, self._client = self._client, None
        if client is None:
            return
        _expect_cancel(self._threads)
        with contextlib.suppress(AttributeError):  # connect() never created the channel
            client.close()

    async def get(self, paths: Sequence[str], missing_ok: bool = False) -> list[dict[str, Any]]:
        """One Get of ``paths`` in JSON_IETF; ``[]`` if ``missing_ok`` and not served."""
        client = self._open()
        return await self._maybe_missing(missing_ok, self._run(
            "Get", lambda: client.get(path=list(paths), encoding="json_ietf")))

    async def once(self, paths: Sequence[str], missing_ok: bool = False,
                   target: str = "") -> list[dict[str, Any]]:
        """A Subscribe ONCE of ``paths``: every item up to ``sync_response``."""
        client, request = self._open(), _request("once", paths)

        def collect() -> list[dict[str, Any]]:
            subscriber = client.subscribe2(subscribe=request, target=target or None)
            self._threads.append(subscriber._subscribe_thread)
            items = []
            while not items or "sync_response" not in items[-1]:
                try:
                    item = _next_item(subscriber, _POLL_S)
                except TimeoutError:
                    continue  # _run's deadline bounds the wait
                if item is None:
                    raise GnmiError(f"{self.where}: Subscribe ONCE: an update did not "
                                    "parse (malformed JSON or timestamp 0)", "garbage")
                items.append(item)
            return items
        return await self._maybe_missing(missing_ok, self._run("Subscribe ONCE", collect))

    async def stream(self, paths: Sequence[str], interval_s: float,
                     target: str = "") -> AsyncIterator[list[Notification]]:
        """Subscribe STREAM, SAMPLE every ``interval_s``: yields the notifications of each
        sample (pygnmi's protobuf messages), the first being the initial state. The stream
        has a channel of its own and closes pygnmi's; ending the iteration closes both.

        A sample ends at ``sync_response``, when a notification stamped half an interval
        later arrives, when an update of a path already in it arrives (the next sample: a
        late target can send two samples a few ms apart), or after half an interval (at
        most 1 s) without notifications.
        """
        client = self._open()
        try:
            request = client._build_subscriptionrequest(
                _request("stream", paths, int(interval_s * 1e9)), target or None)
        except Exception as exc:
            raise _translate(exc, self.where, "Subscribe") from exc
        self.close()  # pygnmi's channel: the stream has one of its own
        channel = self._aio_channel()
        stream = _Stream(interval_s)
        call = gNMIStub(channel).Subscribe(metadata=self._metadata())
        reader = asyncio.create_task(stream.read(call, request), name=f"gnmi-{self.switch.name}")
        silence = self.timeout_s
        try:
            while True:
                try:
                    async with asyncio.timeout(silence):
                        batch = await stream.samples.get()
                except TimeoutError as exc:
                    raise GnmiTimeout(f"{self.where}: Subscribe: no update within "
                                      f"{silence:g} s") from exc
                if isinstance(batch, BaseException):
                    raise _translate(batch, self.where, "Subscribe") from batch
                silence = interval_s + self.timeout_s
                yield batch
                del batch  # not held (with its message) until the next sample
        finally:
            stream.end()
            reader.cancel()
            # closing cancels the RPC at once; neither may hold up the caller for ever
            await asyncio.wait([asyncio.ensure_future(channel.close()), reader],
                               timeout=self.timeout_s + 1)

    def _new_client(self) -> gNMIclient:
        options = self.switch.gnmi
        kwargs: dict[str, Any] = {"target": (self.switch.address, options.port),
                                  "username": options.username,
                                  "password": options.password.value, "gnmi_timeout": 0}
        if options.insecure:
            kwargs["insecure"] = True
        else:
            kwargs["path_cert"] = self._ca_file()
            if options.server_name:
                kwargs["override"] = options.server_name
        return gNMIclient(**kwargs)

    def _aio_channel(self) -> grpc.aio.Channel:
        """An asyncio channel to the target, built as pygnmi's ``connect()`` builds its own
        from the arguments :meth:`_new_client` gives it."""
        options = self.switch.gnmi
        target = f"{self.switch.address}:{options.port}"
        if options.insecure:
            return grpc.aio.insecure_channel(target)
        with open(self._ca_file(), "rb") as roots:
            credentials = grpc.ssl_channel_credentials(roots.read())
        override = [("grpc.ssl_target_name_override", options.server_name)] \
            if options.server_name else []
        return grpc.aio.secure_channel(target, credentials, override)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        """The credentials as pygnmi sends them with every call."""
        options = self.switch.gnmi
        return ("username", options.username), ("password", options.password.value)

    def _ca_file(self) -> str:
        ca_file = self.switch.gnmi.ca_file or _system_ca_file()
        if not ca_file or not os.path.isfile(ca_file):
            raise GnmiError(f"{self.where}: no CA file to verify the target "
                            f"({ca_file or 'set gnmi.ca_file'})", "tls")
        return ca_file

    def _open(self) -> gNMIclient:
        if self._client is None:
            raise GnmiError(f"{self.where}: not connected")
        return self._client

    async def _run(self, what: str, call: Callable[[], _T]) -> _T:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await _in_thread(call)
        except TimeoutError as exc:
            self.close()
            raise GnmiTimeout(f"{self.where}: {what}: no answer within "
                              f"{self.timeout_s:g} s") from exc
        except GnmiError:
            raise
        except Exception as exc:
            raise _translate(exc, self.where, what) from exc

    async def _maybe_missing(self, missing_ok: bool, call: Any) -> list[dict[str, Any]]:
        try:
            result = await call
        except GnmiError as exc:
            cause = getattr(exc.__cause__, "orig_exc", exc.__cause__)
            if missing_ok and isinstance(cause, grpc.RpcError) and \
                    getattr(cause, "code", lambda: None)() in _MISSING:
                return []
            raise
        return result if isinstance(result, list) else [result]


async def _in_thread(call: Callable[[], _T]) -> _T:
    """Run a blocking pygnmi call in a thread of its own, not the loop's shared executor.

    pygnmi's Capabilities and Get have no deadline: against a stalled target a call can
    block until the channel is closed. In the shared executor such calls would starve the
    other switches' calls (and queue past their own deadline), and ``asyncio.run`` would
    wait for them at exit; a daemon thread of its own does neither.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(result: Any, failed: bool) -> None:
        if not future.done():
            (future.set_exception if failed else future.set_result)(result)

    def work() -> None:
        try:
            result, failed = call(), False
        except BaseException as exc:  # handed to the awaiting coroutine
            result, failed = exc, True
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
            loop.call_soon_threadsafe(settle, result, failed)

    threading.Thread(target=work, name="gnmi-call", daemon=True).start()
    return await future


class _Stream:
    """One Subscribe RPC read in the event loop: its responses are cut into samples (lists
    of notifications), put in ``samples`` with, last, the error that ended the RPC."""

    def __init__(self, interval_s: float) -> None:
        self.samples: asyncio.Queue[list[Notification] | BaseException] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._settle, self._gap = min(interval_s / 2, 1.0), interval_s * 1e9 / 2
        self._ended = False
        self._batch: list[Notification] = []
        self._paths: set[tuple[bytes, bytes]] = set()  # the batch's (prefix, path) pairs
        self._stamp = 0
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    async def read(self, call: grpc.aio.StreamStreamCall, request: SubscribeRequest) -> None:
        """Send ``request`` on ``call`` (a Subscribe RPC), hand on its responses, then why
        it ended. The client side stays open: ``done_writing`` is never sent."""
        try:
            with contextlib.suppress(asyncio.InvalidStateError):  # ended: reading says why
                await call.write(request)
            async for response in call:
                self._hand(response)
        except Exception as exc:  # the RPC failed
            self._hand(exc)
        else:
            self._hand(EOFError("the target ended the subscription"))

    def end(self) -> None:
        """Hand on nothing more."""
        self._ended = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _hand(self, item: SubscribeResponse | BaseException) -> None:
        if self._ended:
            return
        if isinstance(item, BaseException):
            self._deliver()
            self.samples.put_nowait(item)
            self.end()
            return
        kind = item.WhichOneof("response")
        if kind == "update":
            notification = item.update
            stamp = notification.timestamp
            prefix = notification.prefix.SerializeToString()
            paths = [(prefix, u.path.SerializeToString()) for u in notification.update]
            later = stamp and self._stamp and abs(stamp - self._stamp) >= self._gap
            if self._batch and (later or not self._paths.isdisjoint(paths)):
                self._deliver()
            if not self._batch or not self._stamp:
                self._stamp = stamp
            self._batch.append(notification)
            self._paths.update(paths)
        elif kind == "sync_response":
            self._deliver(always=True)
        self._last = self._loop.time()
        if self._batch and self._timer is None:
            self._timer = self._loop.call_later(self._settle, self._quiet)

    def _quiet(self) -> None:
        """Timer: deliver the batch once nothing has come for ``settle`` seconds."""
        self._timer = None
        if not self._batch or self._ended:
            return
        idle = self._loop.time() - self._last
        if idle >= self._settle * 0.99:
            self._deliver()
        else:
            self._timer = self._loop.call_later(self._settle - idle, self._quiet)

    def _deliver(self, always: bool = False) -> None:
        if self._batch or always:
            self.samples.put_nowait(self._batch)
            self._batch = []
            self._paths = set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _request(mode: str, paths: Sequence[str], interval_ns: int = 0) -> dict[str, Any]:
    subscription = [{"path": p, "mode": "sample", "sample_interval": interval_ns}
                    if interval_ns else {"path": p} for p in paths]
    return {"mode": mode, "encoding": "json_ietf", "subscription": subscription}


def _next_item(subscriber: Any, wait_s: float) -> dict[str, Any] | None:
    """The next pygnmi item within ``wait_s`` (TimeoutError if none); raises the stream's
    error once pygnmi's thread has stored it, EOFError once the stream has ended."""
    try:
        return subscriber.get_update(timeout=wait_s)
    except TimeoutError:
        if subscriber.error is not None:
            raise subscriber.error from None
        if not subscriber._subscribe_thread.is_alive() and not subscriber.peek():
            raise EOFError("the target ended the subscription") from None
        raise
    except TypeError:  # a None item inside the first, merged item
        return None


def _translate(exc: BaseException, where: str, what: str) -> GnmiError:
    cause = getattr(exc, "orig_exc", None) or exc
    if isinstance(cause, grpc.RpcError) and hasattr(cause, "code"):
        code, details = cause.code(), cause.details() or ""
        message = f"{where}: {what}: {code.name}: {details}"
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            return GnmiAuthError(message)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return GnmiTimeout(message)
        if code == grpc.StatusCode.UNAVAILABLE:
            return GnmiUnreachable(message, "tls" if _TLS_HINT.search(details) else "")
        return GnmiError(message)
    if isinstance(exc, grpc.FutureTimeoutError):
        return GnmiTimeout(f"{where}: {what}: channel not ready")
    return GnmiError(f"{where}: {what}: {type(exc).__name__}: {exc}")


def _expect_cancel(threads: list[threading.Thread]) -> None:
    """Closing the channel cancels these pygnmi subscription threads' RPCs; pygnmi re-raises
    the CANCELLED error in the thread, so keep threading.excepthook from printing it."""
    live = [t for t in threads if t.is_alive()]
    threads.clear()
    if not live:
        return
    _cancelled.update(live)
    if threading.excepthook is not _excepthook:
        _excepthook.previous = threading.excepthook  # type: ignore[attr-defined]
        threading.excepthook = _excepthook


def _excepthook(args: Any) -> None:
    error = args.exc_value
    if args.thread in _cancelled and isinstance(error, grpc.RpcError) and \
            getattr(error, "code", lambda: None)() == grpc.StatusCode.CANCELLED:
        return
    _excepthook.previous(args)  # type: ignore[attr-defined]


def _system_ca_file() -> str:
    paths = ssl.get_default_verify_paths()
    return next((f for f in (paths.cafile, paths.openssl_cafile) if f and os.path.isfile(f)), "")
