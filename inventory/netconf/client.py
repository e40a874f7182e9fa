"""The NETCONF wire side: one ncclient session per call, for one subtree ``<get>``.

ncclient blocks, so a call runs in a worker thread under an overall deadline of the
switch's ``timeout_s``. ncclient's own timeout bounds only the ``<hello>`` and each RPC
(paramiko waits up to 15 s for an SSH banner whatever it is given), so the TCP connection
is opened here and cut when the deadline passes, which also frees the worker thread.
ncclient and paramiko errors become :class:`~inventory.errors.SourceError` subclasses
carrying a ``kind``, one of :data:`KINDS`. No message holds the password.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import socket
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import paramiko
from lxml import etree
from ncclient import manager
from ncclient.operations import OperationError, RPCError, TimeoutExpiredError
from ncclient.transport import (
    AuthenticationError,
    NetconfFramingError,
    SessionCloseError,
    SessionError,
    SSHError,
    SSHUnknownHostError,
)

from inventory.devices import NetconfOptions
from inventory.errors import SourceError, SourceTimeout, SourceUnreachable

KINDS = ("timeout", "unreachable", "auth", "hostkey", "garbage", "rpc")
"""Why a call failed: no answer in time; no connection (refused, unresolvable, dropped);
credentials refused; host key unknown or different; the peer does not speak SSH or
NETCONF as it should; the switch answered ``<rpc-error>``."""


async def get(host: str, options: NetconfOptions, filters: Sequence[str],
              known_hosts: str | None = None) -> etree._Element:
    """The ``<data>`` of a ``<get>`` with the subtree ``filters``, within ``timeout_s``."""
    line = _Line()
    try:
        async with asyncio.timeout(options.timeout_s):
            return await asyncio.to_thread(_fetch, line, host, options, filters, known_hosts)
    except TimeoutError as exc:
        line.cut()
        raise failure(SourceTimeout, "timeout", f"{host}:{options.port}: no NETCONF reply "
                      f"within {options.timeout_s:g}s") from exc
    except asyncio.CancelledError:
        line.cut()  # a stop: the thread ends with its connection, not at its deadline
        raise


def _fetch(line: _Line, host: str, options: NetconfOptions, filters: Sequence[str],
           known_hosts: str | None) -> etree._Element:
    """Blocking :func:`get` without the deadline, over ``line`` (which get() may cut)."""
    where = f"{host}:{options.port}"
    deadline = time.monotonic() + options.timeout_s
    try:
        verify = _hostkey(where, host, options.port, options.hostkey_verify, known_hosts)
        session = manager.connect(
            host=host, port=options.port, sock=line.connect(host, options.port, deadline),
            username=options.username or None, password=options.password.value,
            allow_agent=False, look_for_keys=False, timeout=options.timeout_s, **verify)
    except Exception as exc:
        line.release()
        raise _translate(exc, where, options) from exc
    try:
        session.timeout = max(deadline - time.monotonic(), 0.01)
        data = session.get(filter=list(filters)).data_ele
    except Exception as exc:
        raise _translate(exc, where, options) from exc
    finally:
        _close(session, max(deadline - time.monotonic(), 0.1))
        line.release()
    if data is None:
        raise failure(SourceError, "garbage", f"{where}: the <rpc-reply> has no <data>")
    return data


def failure(cls: type[SourceError], kind: str, message: str) -> SourceError:
    """A ``cls`` error with ``kind`` (one of :data:`KINDS`) set."""
    error = cls(message)
    error.kind = kind  # type: ignore[attr-defined]
    return error


class _Line:
    """The TCP connection of one call, which another thread may cut at any time."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.is_cut = False

    def connect(self, host: str, port: int, deadline: float) -> socket.socket:
        self.sock = socket.create_connection((host, port), max(deadline - time.monotonic(), 0.01))
        if self.is_cut:  # the deadline passed while connecting
            self.cut()
        return self.sock

    def cut(self) -> None:
        """Shut the connection down: whoever reads it (paramiko) sees it end and stops."""
        self.is_cut = True
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def release(self) -> None:
        self.cut()
        if self.sock is not None:
            self.sock.close()


def _close(session: manager.Manager, timeout: float) -> None:
    """Say ``<close-session>``; without an answer, drop the session anyway (ncclient
    closes it only after a reply, and has no public call to close it otherwise)."""
    session.timeout = timeout
    try:
        session.close_session()
    except Exception:
        with contextlib.suppress(Exception):
            session._session.close()


def _hostkey(where: str, host: str, port: int, verify: bool,
             known_hosts: str | None) -> dict[str, Any]:
    """ncclient options that accept only a host key listed for the switch in ``known_hosts``.

    ncclient 0.7.1 pins the host key algorithm to the known_hosts key type, ``ssh-rsa`` for
    an RSA key, which paramiko 5 and OpenSSH 8.8+ servers no longer offer: negotiation
    fails. So ncclient is shown an empty known_hosts (through an ssh_config) and the key
    it does not know is checked here, by its MD5 fingerprint (the one ncclient gives).
    """
    if not verify:
        return {"hostkey_verify": False}
    path = known_hosts or os.path.expanduser("~/.ssh/known_hosts")
    keys = paramiko.HostKeys()
    try:
        keys.load(path)
    except FileNotFoundError:
        if known_hosts is not None:
            raise failure(SourceError, "hostkey", f"{where}: no such file {path}") from None
    except (OSError, paramiko.SSHException) as exc:
        raise failure(SourceError, "hostkey", f"{where}: cannot read {path}: {exc}") from exc
    known = {":".join(f"{byte:02x}" for byte in key.get_fingerprint())
             for name in (f"[{host}]:{port}", host) for key in (keys.lookup(name) or {}).values()}
    if not known:
        raise failure(SourceError, "hostkey", f"{where}: no host key for it in {path}")
    return {"hostkey_verify": True, "ssh_config": _hidden_known_hosts(),
            "unknown_host_cb": lambda _host, fingerprint: fingerprint in known}


@functools.cache
def _hidden_known_hosts() -> str:
    """Path of an ssh_config pointing ncclient to an empty known_hosts (see _hostkey)."""
    handle, path = tempfile.mkstemp(prefix="fabcorr-netconf-", suffix=".ssh_config")
    with os.fdopen(handle, "w") as config:
        config.write(f"Host *\n    UserKnownHostsFile {os.devnull}\n")
    atexit.register(os.unlink, path)
    return path


def _translate(exc: Exception, where: str, options: NetconfOptions) -> SourceError:
    if isinstance(exc, SourceError):
        return exc
    if isinstance(exc, SSHUnknownHostError):
        return failure(SourceError, "hostkey",
                       f"{where}: unknown host key (MD5 {exc.fingerprint})")
    if isinstance(exc, AuthenticationError):
        return failure(SourceError, "auth",
                       f"{where}: authentication failed for user {options.username!r}")
    if isinstance(exc, TimeoutExpiredError | TimeoutError) or (
            isinstance(exc, SessionError) and "timed out" in str(exc)):
        return failure(SourceTimeout, "timeout",
                       f"{where}: no NETCONF reply within {options.timeout_s:g}s")
    if isinstance(exc, RPCError):
        return failure(SourceError, "rpc", f"{where}: rpc-error {exc.tag}: {exc.message}")
    if (isinstance(exc, SSHError) and str(exc).startswith("Negotiation failed")) or \
            isinstance(exc, NetconfFramingError | OperationError | etree.XMLSyntaxError):
        return failure(SourceError, "garbage", f"{where}: not a NETCONF peer: {_short(exc)}")
    if isinstance(exc, SSHError | SessionCloseError | OSError | paramiko.SSHException):
        return failure(SourceUnreachable, "unreachable", f"{where}: {_short(exc)}")
    return failure(SourceError, "garbage", f"{where}: {type(exc).__name__}: {_short(exc)}")


def _short(exc: Exception) -> str:
    """The first line of an error, capped (ncclient puts whole buffers in some)."""
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
