"""The frames of the emulated fabric's flows: a full-MTU RoCEv2 RDMA WRITE per data flow,
a CNP per congestion notification, their sizes as port counters count them, and the
part of them an sFlow agent keeps."""

from __future__ import annotations

from simulator import roce

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


def data_frame(src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int, sport: int) -> bytes:
    """A full-MTU RDMA WRITE (middle) packet as the NIC sends it (no FCS)."""
    return roce.frame(src_mac, _GATEWAY, src_ip, dst_ip,
                      roce.payload(roce.WRITE_MIDDLE, qp, 0, MTU), sport=sport)


def cnp_frame(src_mac: bytes, src_ip: bytes, dst_ip: bytes, qp: int, sport: int) -> bytes:
    """A CNP from ``src_ip`` throttling queue pair ``qp`` at ``dst_ip`` (DSCP 48, not ECT)."""
    return roce.frame(src_mac, _GATEWAY, src_ip, dst_ip, roce.payload(roce.CNP, qp, 0),
                      sport=sport, dscp=roce.CNP_DSCP, ecn=0)


DATA_BYTES = len(data_frame(bytes(6), bytes(4), bytes(4), 0, 0)) + FCS
"""A data packet as counters count it (4158 bytes, REFERENCE §7)."""
CNP_BYTES = len(cnp_frame(bytes(6), bytes(4), bytes(4), 0, 0)) + FCS
PACKETS_PER_GBIT = 1e9 / 8 / (DATA_BYTES + WIRE_EXTRA)
"""Data packets per second of 1 Gb/s on the wire."""
