"""The SNMP wire side: bulk walks of numeric OID subtrees with pysnmp's asyncio API.

v2c (community) and v3 (USM user, authentication and privacy). pysnmp quirks handled
here (REFERENCE §4): walks are bounded to their subtree (``lexicographicMode=False``),
no MIBs are loaded (numeric OIDs), a missing OID answers ``NoSuchInstance`` rather than an
error status, and a timeout is an ``errorIndication`` with no varbinds.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterable

from pysnmp.hlapi.v3arch.asyncio import (
    CommunityData,
    ContextData,
    ObjectIdentity,
    ObjectType,
    SnmpEngine,
    UdpTransportTarget,
    UsmUserData,
    bulk_walk_cmd,
    usmAesCfb128Protocol,
    usmAesCfb256Protocol,
    usmDESPrivProtocol,
    usmHMAC192SHA256AuthProtocol,
    usmHMACMD5AuthProtocol,
    usmHMACSHAAuthProtocol,
)
from pysnmp.proto.rfc1902 import Integer, OctetString
from pysnmp.proto.rfc1905 import EndOfMibView, NoSuchInstance, NoSuchObject

from inventory.devices import SnmpOptions
from inventory.errors import SourceError, SourceTimeout, SourceUnreachable
from inventory.snmp.mapping import Oid, Walk

_AUTH = {"md5": usmHMACMD5AuthProtocol, "sha": usmHMACSHAAuthProtocol,
         "sha256": usmHMAC192SHA256AuthProtocol}
_PRIV = {"des": usmDESPrivProtocol, "aes": usmAesCfb128Protocol,
         "aes256": usmAesCfb256Protocol}
_ABSENT = (NoSuchInstance, NoSuchObject, EndOfMibView)


class SnmpClient:
    """Walks subtrees of one agent; one SNMP engine per client."""

    def __init__(self, host: str, options: SnmpOptions) -> None:
        self.host, self.options = host, options
        self.engine = SnmpEngine()
        self.auth = _auth(options)

    async def walk(self, subtrees: Iterable[Oid], max_repetitions: int = 50) -> Walk:
        """Every varbind under each subtree, as OID tuple -> bytes or int."""
        try:
            target = await UdpTransportTarget.create(
                (self.host, self.options.port), timeout=self.options.timeout_s,
                retries=self.options.retries)
        except Exception as exc:  # pysnmp raises plain errors for unresolvable hosts
            raise SourceUnreachable(f"{self.host}: {exc}") from exc
        found: dict[Oid, object] = {}
        for subtree in subtrees:
            found.update(await self._walk(target, subtree, max_repetitions))
        return found

    async def _walk(self, target: UdpTransportTarget, subtree: Oid,
                    max_repetitions: int) -> Walk:
        found: dict[Oid, object] = {}
        walker = bulk_walk_cmd(
            self.engine, self.auth, target, ContextData(), 0, max_repetitions,
            ObjectType(ObjectIdentity(".".join(map(str, subtree)))),
            lexicographicMode=False, lookupMib=False)
        async for indication, status, index, varbinds in walker:
            if indication:
                message = str(indication)
                kind = SourceTimeout if "timeout" in message.lower() else SourceError
                raise kind(f"{self.host}: {message}")
            if status:
                raise SourceError(f"{self.host}: {status.prettyPrint()} at "
                                  f"{varbinds[int(index) - 1][0] if index else '?'}")
            for name, value in varbinds:
                if not isinstance(value, _ABSENT):
                    found[tuple(name)] = _plain(value)
        return found

    def close(self) -> None:
        self.engine.close_dispatcher()


def _plain(value: object) -> object:
    if isinstance(value, OctetString):
        return value.asOctets()
    if isinstance(value, Integer) or hasattr(value, "__int__"):
        return int(value)
    return str(value)


def _auth(options: SnmpOptions) -> CommunityData | UsmUserData:
    if options.version == "2c":
        return CommunityData(options.community.value or "public", mpModel=1)
    if options.auth_protocol not in _AUTH or options.priv_protocol not in _PRIV:
        raise SourceError(f"SNMPv3 protocols must be auth {'/'.join(_AUTH)} and priv "
                          f"{'/'.join(_PRIV)}")
    return UsmUserData(options.user, options.auth_key.value, options.priv_key.value,
                       authProtocol=_AUTH[options.auth_protocol],
                       privProtocol=_PRIV[options.priv_protocol])


async def walk(host: str, options: SnmpOptions, subtrees: Iterable[Oid]) -> Walk:
    """Walk ``subtrees`` of one agent once, with the client this event loop keeps for it:
    an SNMP engine costs up to 0.7 s of CPU to make (pysnmp builds its MIB machinery),
    far more than a walk. A failed walk keeps the client: an agent that times out is
    asked again by the same engine (a new engine per failure costs more CPU on a machine
    that is already too busy to answer in time, and the answers still in flight to the
    old one would reach a closed transport)."""
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (host, id(options))
    client = clients.get(key)
    if client is None:
        client = clients[key] = SnmpClient(host, options)
    try:
        async with asyncio.timeout(options.timeout_s * (options.retries + 1) * 8):
            return await client.walk(subtrees)
    except TimeoutError as exc:
        raise SourceTimeout(f"{host}: SNMP walk did not finish in time") from exc


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int],
                                                                    SnmpClient]] = \
    weakref.WeakKeyDictionary()
"""Per event loop, (agent address, options) -> its client."""
