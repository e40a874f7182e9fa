"""The agent address of a raw sFlow v5 datagram, read from its header alone: what a shard
(or an inlet) needs to know whose datagram it is, without decoding a sample.

>>> from simulator import sflow_wire
>>> agent(sflow_wire.Datagram("192.0.2.1", 0, 7, 1000, []).encode())
b'\\xc0\\x00\\x02\\x01'
>>> agent(b"short") is None
True
"""

from __future__ import annotations

import struct

__all__ = ["agent"]

_HEADER = struct.Struct("!II")  # version, agent address type
_LENGTHS = {1: 4, 2: 16}  # IPv4, IPv6


def agent(datagram: bytes) -> bytes | None:
    """The packed agent address of an sFlow v5 datagram; None when the header is not one
    (short, another version, an unknown address type)."""
    if len(datagram) < _HEADER.size:
        return None
    version, kind = _HEADER.unpack_from(datagram)
    length = _LENGTHS.get(kind)
    if version != 5 or length is None or len(datagram) < _HEADER.size + length:
        return None
    return datagram[_HEADER.size:_HEADER.size + length]
