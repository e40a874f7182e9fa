"""What the lab's traffic really was, told by the kernel and by tshark, without fabcorr code.

:class:`Counts` interpolates a port's nftables counters (read over time by
:meth:`~tests.lab.netns.Lab.count_ingress`) at any instant, so the bytes of any interval
are known to within what crossed in the few milliseconds around its ends.
:func:`naive_estimates` is the textbook sFlow estimate from what tshark decodes of the
datagrams: each sampled frame's length times the sampling rate, with its 95 % bound.
"""

from __future__ import annotations

import bisect
import math
import subprocess
from pathlib import Path

Z95 = 1.96


class Counts:
    """A port's counters read over time: (when, {counter: (packets, bytes)}), in order.

    >>> c = Counts([(10.0, {"A": (0, 0)}), (10.5, {"A": (5, 500)}), (11.5, {"A": (5, 500)})])
    >>> c.at("A", 10.25), c.between("A", 10.25, 11.0), c.between("A", 9.0, 11.0)
    (250.0, 250.0, None)
    """

    def __init__(self, reads: list[tuple[float, dict[str, tuple[int, int]]]]) -> None:
        self.times = [at for at, _ in reads]
        self.reads = [counters for _, counters in reads]

    def at(self, name: str, instant: float) -> float | None:
        """The counter's bytes at ``instant``, linear between the reads around it; None
        outside the reads."""
        times = self.times
        if not times or not times[0] <= instant <= times[-1]:
            return None
        i = bisect.bisect_left(times, instant)
        after = self.reads[i][name][1]
        if times[i] == instant:
            return float(after)
        before = self.reads[i - 1][name][1]
        return before + (after - before) * (instant - times[i - 1]) / (times[i] - times[i - 1])

    def between(self, name: str, start: float, end: float) -> float | None:
        """The counter's bytes over ``[start, end)``; None unless the reads span it."""
        first, last = self.at(name, start), self.at(name, end)
        return None if first is None or last is None else last - first


def naive_estimates(pcap: Path, udp_port: int) -> dict[tuple[str, str], list[float]]:
    """(agent, sampled source address) -> [samples, frame length x sampling rate summed,
    its variance] from the flow samples tshark decodes in ``pcap``; frame lengths without
    the FCS the agent says it added (``payload_stripped``), as kernels count them.

    The variance is rate²·(sum of squared lengths): each frame sampled independently with
    probability 1/rate (REFERENCE §8a); :func:`naive_bound` makes a 95 % bound of it.
    """
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-d", f"udp.port=={udp_port},sflow", "-T", "fields",
         "-E", "occurrence=a", "-E", "aggregator=,", "-e", "sflow_245.agent",
         "-e", "sflow.flow_sample.sampling_rate", "-e", "sflow_245.header.frame_length",
         "-e", "sflow_245.header.payload_stripped", "-e", "ip.src"],
        capture_output=True, text=True, check=True).stdout
    sums: dict[tuple[str, str], list[float]] = {}
    for row in out.splitlines():
        agent, rates, lengths, stripped, sources = (field.split(",") if field else []
                                                    for field in row.split("\t"))
        sources = sources[1:]  # the first is the datagram's own IPv4 header
        assert len(rates) == len(lengths) == len(stripped) == len(sources), row
        for rate, length, fcs, source in zip(rates, lengths, stripped, sources, strict=True):
            frame = int(length) - int(fcs)
            found = sums.setdefault((agent[0], source), [0, 0.0, 0.0])
            found[0] += 1
            found[1] += frame * int(rate)
            found[2] += (frame * int(rate)) ** 2
    return sums


def naive_bound(estimates: list[list[float]]) -> tuple[float, float]:
    """The 95 % bound of the sum of several :func:`naive_estimates`.

    >>> naive_bound([[3, 1000.0, 40000.0], [1, 500.0, 50000.0]])
    (912.0, 2088.0)
    """
    total, variance = sum(e[1] for e in estimates), sum(e[2] for e in estimates)
    margin = Z95 * math.sqrt(variance)
    return total - margin, total + margin
