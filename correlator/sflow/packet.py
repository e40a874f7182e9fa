"""Traffic classes of sampled packets: RoCEv2 by BTH opcode (``roce-send``, ``roce-write``,
``roce-read-request``, ``roce-read-response``, ``roce-ack``, ``roce-atomic``,
``roce-cnp``, ``roce-other``), else ``udp``, ``tcp``, ``icmp``, ``ip-other`` or
``non-ip`` (``no-header`` for a flow sample without a sampled header). The Rust decoder
(``wire/src/packet``) classifies; this table says which opcode is which class.

>>> OPCODE_CLASS[0x0A], OPCODE_CLASS[0x81], OPCODE_CLASS[0x1F]
('roce-write', 'roce-cnp', 'roce-other')
"""

from __future__ import annotations

ROCE_PORT = 4791
"""UDP destination port of RoCEv2."""


def _opcode_classes() -> tuple[str, ...]:
    """Traffic class of every BTH opcode (RC, UC, RD and UD share the low five bits)."""
    by_low = {**dict.fromkeys(range(0x00, 0x06), "roce-send"),
              **dict.fromkeys(range(0x06, 0x0C), "roce-write"),
              0x0C: "roce-read-request",
              **dict.fromkeys(range(0x0D, 0x11), "roce-read-response"),
              0x11: "roce-ack", 0x12: "roce-ack", 0x13: "roce-atomic", 0x14: "roce-atomic",
              0x15: "roce-send", 0x16: "roce-send"}
    classes = [by_low.get(code & 0x1F, "roce-other") if code < 0x80 else "roce-other"
               for code in range(256)]
    classes[0x81] = "roce-cnp"
    return tuple(classes)


OPCODE_CLASS = _opcode_classes()
