"""Counter readings: what one poll or one telemetry update says about one switch port.

Counters are named by what they count, so every protocol and vendor profile reports the
same names (``in_octets``, ``pfc_rx_pause/3``, ``queue_ecn_marked/3``...); a rate engine
needs nothing protocol-specific. Each counter keeps its width (32 or 64 bits) so wraps
are told apart from resets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INTERFACE_COUNTERS = ("in_octets", "out_octets", "in_pkts", "out_pkts", "in_discards",
                      "out_discards", "in_errors", "out_errors")
"""Per-port counters every source tries to report."""

PFC_RX, PFC_TX = "pfc_rx_pause", "pfc_tx_pause"  # + "/<priority 0-7>": pause frames
QUEUE_ECN, QUEUE_DROPPED, QUEUE_TX = "queue_ecn_marked", "queue_dropped", "queue_tx_pkts"
# + "/<queue name>": per egress queue packet counts


def per(name: str, key: int | str) -> str:
    """The name of a per-priority or per-queue counter.

    >>> per(PFC_RX, 3), per(QUEUE_ECN, "UC3")
    ('pfc_rx_pause/3', 'queue_ecn_marked/UC3')
    """
    return f"{name}/{key}"


@dataclass(frozen=True, slots=True)
class PortCounters:
    """Counters of one port at one moment (``at``, Unix seconds).

    ``bits`` gives the width of counters that are not 64-bit (SNMP Counter32).
    ``uptime_s`` (device uptime, when known) going backwards marks a reboot; ``last_clear``
    (when known) changing marks counters cleared by an operator. ``stamped``: the device
    dated the values itself (a gNMI notification timestamp), so ``at`` is when they were
    sampled, not when they were read.
    """

    switch: str
    port: str
    at: float
    values: dict[str, int] = field(default_factory=dict)
    bits: dict[str, int] = field(default_factory=dict)
    oper_status: str = ""
    speed_bps: int | None = None
    uptime_s: float | None = None
    last_clear: float | None = None
    stamped: bool = field(default=False, compare=False)  # how it was dated, not what it says

    def width(self, name: str) -> int:
        return self.bits.get(name, 64)
