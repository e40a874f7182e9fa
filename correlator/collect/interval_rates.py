"""Every port's counters in time, and their rates over exactly one interval.

Readings of a port (telemetry polls or streams, sFlow counter samples) feed one
:class:`~correlator.collect.timeline.CounterTimeline` per counter; the rates of
``[start, end)`` are each counter's increase over that span by interpolation, divided by
its length, so an interval gets the bytes of its own time, whenever the readings were
taken. An interval is *covered* once every port read lately has a known value at or
after its end (:meth:`IntervalRates.covered`); a port asked for before that is carried on
at the rate of its last two known moments, and its rates say ``provisional``. A narrow
counter read so seldom that it could wrap whole between two readings at line rate is left
out (``ambiguous``).

A device reboot (uptime going back, or shorter than the time since the last reading) or an
operator clear restarts a port's counters: what they show next counts from zero, never as a
wrap; a narrow counter's fall is a wrap or a reset as the port's speed allows (an unknown
speed: neither, ``ambiguous``); an increase beyond what the speed allows is implausible and
left out.

The timelines and the rates are the Rust core's (``wire/src/interval_rates.rs``, the
method of the Python one in ``tests/collect_oracle/interval_rates.py`` operation for
operation); this module gives it the counter families of
:mod:`~correlator.collect.rates` and the :class:`~correlator.collect.rates.Rates` to make.
"""

from __future__ import annotations

from collections.abc import Iterable

from correlator._wire import AgentClocks, CounterArrivals, SampledPorts
from correlator._wire import IntervalRates as _Core
from correlator.collect.rates import OCTET_COUNTERS, PACKET_COUNTERS, Rates, Skip
from inventory.counters import INTERFACE_COUNTERS, PortCounters

__all__ = ["IntervalRates"]


class IntervalRates:
    """Readings in, rates over any interval out; ``slack`` as in :class:`RateConfig`.

    >>> r = IntervalRates()
    >>> for at, octets in ((9.5, 1000), (10.5, 2000), (19.5, 11000), (20.5, 12000)):
    ...     r.add(PortCounters("leaf01", "Ethernet1", at, {"in_octets": octets},
    ...                        speed_bps=8000))
    >>> r.covered(20.0), r.covered(21.0)
    (True, False)
    >>> rates = r.rates(10.0, 20.0)["port:leaf01/Ethernet1"]
    >>> rates.per_second, rates.interval_s, rates.in_utilization, rates.provisional
    ({'in_octets': 1000.0}, 10.0, 1.0, False)
    >>> r.rates(20.0, 30.0)["port:leaf01/Ethernet1"].provisional  # carried on past 20.5
    True
    """

    __slots__ = ("_core",)

    def __init__(self, slack: float = 1.1) -> None:
        self._core = _Core(slack, sorted(OCTET_COUNTERS), sorted(PACKET_COUNTERS), Rates,
                           Skip.AMBIGUOUS, Skip.IMPLAUSIBLE)

    @property
    def slack(self) -> float:
        return self._core.slack

    @property
    def slowest_refresh_s(self) -> float:
        """The longest refresh period learnt of any counter so far (0 before any)."""
        return self._core.slowest_refresh_s

    def add(self, reading: PortCounters) -> None:
        """One reading (a port's readings in time order; older ones are ignored)."""
        self._core.add(reading.switch, reading.port, reading.at, reading.values, reading.bits,
                       reading.speed_bps, reading.uptime_s, reading.last_clear,
                       reading.stamped)

    def add_sflow(self, arrivals: CounterArrivals, clocks: AgentClocks, ports: SampledPorts
                  ) -> None:
        """An interval's sFlow counter samples, in the order they arrived: each dated by
        its agent's clock in ``clocks`` (:mod:`~correlator.sflow.clock`), its generic
        interface counters (``INTERFACE_COUNTERS``) added to the port ``ports`` names for
        its agent and ifIndex as a reading the device dated (``stamped``); those of no
        port named are dated only (anyone may send any ifIndex)."""
        self._core.add_sflow(list(INTERFACE_COUNTERS), arrivals, clocks, ports)

    def covered(self, end: float, since: float | None = None) -> bool:
        """Whether every port (read after ``since``, when given) is known at ``end``."""
        return self._core.covered(end, since)

    def keep(self, port: str, start: float, end: float, published: Rates | None = None
             ) -> None:
        """Pin every counter of ``port`` (port ID) at ``end``: where ``published`` (the
        rates ``[start, end)`` was published with) has its rate, at what that counted from
        ``start``, else as given now (see :meth:`CounterTimeline.keep`)."""
        self._core.keep(port, start, end, None if published is None else published.per_second)

    def rates(self, start: float, end: float, ports: Iterable[str] | None = None
              ) -> dict[str, Rates]:
        """Port ID -> its rates over ``[start, end)``, for the ports known over all of it
        (of ``ports`` only, when given)."""
        return self._core.rates(start, end, ports)
