"""The frames of the emulated fabric's flows: the mix of RoCEv2 frames a flow repeats, the
ACKs and CNPs coming back, their sizes as port counters count them, and the part of them
an sFlow agent keeps.

A flow repeats one :class:`~simulator.scenario.Message` (a *unit*):

- an RDMA WRITE of ``write_bytes``, cut at the 4096-byte RoCE MTU: a WRITE FIRST (BTH +
  RETH + 4096 bytes), full-MTU WRITE MIDDLEs, and a WRITE LAST with the rest (1-4096
  bytes); a WRITE ONLY (BTH + RETH + payload) when it fits in one MTU;
- then ``sends`` SEND ONLY messages of ``send_bytes`` (small messages, 64-1024 bytes by
  default);
- the receiver acknowledges the WRITE and each SEND with an ACK (BTH + AETH: a 62-byte
  frame with IPv4, 66 as counted with the FCS) on the reverse 5-tuple's own path.

A job without a ``message`` gets one drawn from CRC-32 of ``"seed/tenant/name"``
(:func:`default_message`): a WRITE of 4-32 MTUs plus 1-4096 bytes, 0-3 SENDs of 64, 128,
256, 512 or 1024 bytes. So jobs differ in their mean frame size, and a group's share of a
link's bytes differs from its share of the frames (and samples). CNPs (DSCP 48, no data)
throttle senders as before. Every frame is counted with its exact size (+ 4 bytes FCS);
the sFlow agents sample each frame of the mix with probability 1/N (the frames of a tick
are offered per kind, in the order above).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from simulator import roce
from simulator.scenario import Message

MTU = 4096
FCS, WIRE_EXTRA = 4, 20  # frame check sequence; preamble, start delimiter, inter-frame gap
_GATEWAY = bytes.fromhex("0c42a1000001")


class SampledFrame:
    """A frame as an sFlow agent reads it: its first :attr:`HEAD` bytes and its length
    (so a flow's 4 KiB frame is not kept whole)."""

    HEAD = 256
    __slots__ = ("head", "length")

    def __init__(self, frame: bytes) -> None:
        self.head, self.length = frame[:self.HEAD], len(frame)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: slice) -> bytes:
        return self.head[key]


def data_frame(src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int, sport: int,
               opcode: int = roce.WRITE_MIDDLE, length: int = MTU) -> bytes:
    """An RDMA data packet as the NIC sends it (no FCS): by default a full-MTU WRITE
    MIDDLE."""
    return roce.frame(src_mac, _GATEWAY, src_ip, dst_ip,
                      roce.payload(opcode, qp, 0, length), sport=sport)


def ack_frame(src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int, sport: int) -> bytes:
    """An ACK from the receiver ``src_ip`` for queue pair ``qp`` at ``dst_ip``."""
    return roce.frame(src_mac, _GATEWAY, src_ip, dst_ip, roce.payload(roce.ACK, qp, 0),
                      sport=sport)


def cnp_frame(src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int, sport: int) -> bytes:
    """A CNP from ``src_ip`` throttling queue pair ``qp`` at ``dst_ip`` (DSCP 48, not ECT)."""
    return roce.frame(src_mac, _GATEWAY, src_ip, dst_ip, roce.payload(roce.CNP, qp, 0),
                      sport=sport, dscp=roce.CNP_DSCP, ecn=0)


def default_message(seed: int, tenant: str, name: str) -> Message:
    """The message a job without one repeats, drawn from its name and the seed.

    >>> default_message(7, "team-a", "llm-pretrain")
    Message(write_bytes=130406, sends=3, send_bytes=256)
    """
    h = zlib.crc32(f"{seed}/{tenant}/{name}".encode())
    return Message(MTU * (4 + h % 29) + 1 + (h >> 5) % MTU, (h >> 17) % 4,
                   64 << (h >> 19) % 5)


@dataclass(frozen=True, slots=True)
class Mix:
    """One unit of a flow: its frames forward as (frame, how many per unit), the ACKs
    coming back per unit, and the unit's bytes as counters count them and on the wire."""

    frames: tuple[tuple[SampledFrame, int], ...]
    acks: int
    octets: int
    packets: int
    wire_bytes: int


def flow_mix(message: Message, src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int,
             sport: int) -> Mix:
    """The frames of one unit of ``message`` on a flow."""
    def frame(opcode: int, length: int) -> SampledFrame:
        return SampledFrame(data_frame(src_mac, src_ip, dst_ip, qp, sport, opcode, length))

    size = message.write_bytes
    if size <= MTU:
        parts = [(frame(roce.WRITE_ONLY, size), 1)]
    else:
        middles, last = divmod(size - MTU, MTU)
        if not last:
            middles, last = middles - 1, MTU
        parts = [(frame(roce.WRITE_FIRST, MTU), 1), (frame(roce.WRITE_MIDDLE, MTU), middles),
                 (frame(roce.WRITE_LAST, last), 1)]
    if message.sends:
        parts.append((frame(roce.SEND_ONLY, message.send_bytes), message.sends))
    parts = [(f, n) for f, n in parts if n]
    octets = sum((len(f) + FCS) * n for f, n in parts)
    packets = sum(n for _, n in parts)
    return Mix(tuple(parts), 1 + message.sends, octets, packets, octets + WIRE_EXTRA * packets)


DATA_BYTES = len(data_frame(bytes(6), bytes(4), bytes(4), 0, 0)) + FCS
"""A full-MTU data packet as counters count it (4158 bytes, REFERENCE §7): the unit of
congestion arithmetic (:mod:`simulator.congestion`)."""
ACK_BYTES = len(ack_frame(bytes(6), bytes(4), bytes(4), 0, 0)) + FCS
CNP_BYTES = len(cnp_frame(bytes(6), bytes(4), bytes(4), 0, 0)) + FCS
PACKETS_PER_GBIT = 1e9 / 8 / (DATA_BYTES + WIRE_EXTRA)
"""Full-MTU data packets per second of 1 Gb/s on the wire."""
