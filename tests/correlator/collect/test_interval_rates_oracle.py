"""The Rust core's interval rates (``wire/src/interval_rates.rs``) against the method in
Python (tests/collect_oracle/interval_rates.py): the same rates, bit for bit, for random
readings of several ports (restarts, speeds unknown and known, narrow counters read too
seldom, implausible increases, kept spans), one at a time and in sFlow batches."""

import random

from correlator._wire import AgentClocks, CounterArrivals, SampledPorts
from correlator.collect.interval_rates import IntervalRates
from inventory.counters import INTERFACE_COUNTERS, PortCounters
from tests.collect_oracle import interval_rates as oracle
from tests.sflow_oracle import clock as clock_oracle

ROUNDS = 300
NAMES = (*INTERFACE_COUNTERS, "pfc_rx_pause/3", "queue_tx_pkts/UC3", "temperature")
WIDTHS = dict.fromkeys(INTERFACE_COUNTERS[2:], 32)  # as the sFlow samples' narrow ones
SPEEDS = (None, 0, 8000, 10**9, 10**10, 4 * 10**11)


def _written(rates) -> str:
    """``rates`` (port ID -> Rates) written out, floats by their bits (repr), the skipped
    counters in name order (the Python method's order is a set's)."""
    return repr([(key, r.switch, r.port, r.at, r.interval_s, list(r.per_second.items()),
                  sorted(r.skipped.items()), r.wrapped, r.gone, r.speed_bps,
                  r.in_utilization, r.out_utilization, r.provisional, list(r.ranges.items()))
                 for key, r in rates.items()])


class _Port:
    """A port's counters as a device shows them."""

    def __init__(self, rng: random.Random, n: int) -> None:
        self.rng = rng
        self.switch, self.name = f"leaf{n % 3:02}", f"Ethernet{n}"
        self.names = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        self.bits = {name: rng.choice((32, 32, 64, 16)) for name in self.names
                     if rng.random() < 0.5}
        self.speed = rng.choice(SPEEDS)
        self.values = {name: rng.randrange(2 ** self.bits.get(name, 64)) for name in self.names}
        self.rate = rng.choice((10.0, 1e4, 1e6, 1.2e9))
        self.stamped = rng.random() < 0.5
        self.uptime, self.clear, self.at = rng.choice((None, 1000.0)), None, 0.0

    def reading(self, at: float) -> PortCounters:
        rng, span = self.rng, at - self.at
        roll = rng.random()
        if self.uptime is not None:
            self.uptime = rng.uniform(0, span) if roll < 0.03 else self.uptime + span
        if roll > 0.97:
            self.clear = at
        for name in self.names:
            bits = self.bits.get(name, 64)
            kind = rng.random()
            if kind < 0.3:  # stale
                continue
            if kind < 0.9:
                step = int(self.rate * span * rng.uniform(0, 2))
            elif kind < 0.95:
                step = rng.randrange(2 ** bits)  # a wrap, or an implausible jump
            else:
                self.values[name] = rng.randrange(max(1, self.values[name]))  # a fall
                continue
            self.values[name] = (self.values[name] + step) % 2 ** bits
        if rng.random() < 0.05:
            self.speed = rng.choice(SPEEDS)
        self.at = at
        return PortCounters(self.switch, self.name, at, dict(self.values), self.bits,
                            speed_bps=self.speed, uptime_s=self.uptime, last_clear=self.clear,
                            stamped=self.stamped)


def _ask(rng, rust, python, ports, now):
    """Queries of both at instants around ``now``: rates, covered, kept spans."""
    for _ in range(rng.choice((1, 2))):
        start = rng.choice((now - 10.0, now - 20.0, round(now - rng.uniform(0, 30))))
        end = start + rng.choice((10.0, 10.0, 5.0, 0.0, rng.uniform(-1, 15)))
        chosen = None if rng.random() < 0.7 else ["port:none/x", *(
            f"port:{p.switch}/{p.name}" for p in rng.sample(ports, min(2, len(ports))))]
        found, expected = rust.rates(start, end, chosen), python.rates(start, end, chosen)
        assert _written(found) == _written(expected), (start, end)
        since = rng.choice((None, now - 30.0))
        assert rust.covered(end, since) == python.covered(end, since)
        for key, published in list(expected.items())[:rng.choice((0, 1, 3))]:
            given = rng.choice((published, None))
            rust.keep(key, start, end, given)
            python.keep(key, start, end, given)
        assert repr(rust.slowest_refresh_s) == repr(python.slowest_refresh_s)


def test_every_port_s_rates_are_the_pythons_bit_for_bit():
    rng = random.Random(19)
    asked = 0
    for _ in range(ROUNDS):
        slack = rng.choice((1.1, 1.0, 1.5))
        rust, python = IntervalRates(slack), oracle.IntervalRates(slack)
        ports = [_Port(rng, n) for n in range(rng.randint(1, 6))]
        now = rng.choice((0.0, 1.7e9))
        for _ in range(rng.choice((5, 30, 120))):
            now += rng.choice((0.5, 1.0, 3.0, 10.0, 30.0, rng.uniform(0.1, 12)))
            for port in rng.sample(ports, rng.randint(1, len(ports))):
                at = now - rng.uniform(0, 2) if rng.random() < 0.1 else now
                reading = port.reading(at) if at > port.at else \
                    PortCounters(port.switch, port.name, at, dict(port.values), port.bits)
                rust.add(reading)
                python.add(reading)
            if rng.random() < 0.5:
                _ask(rng, rust, python, ports, now)
                asked += 1
    assert asked > ROUNDS


def test_sflow_batches_give_the_rates_of_their_readings_one_at_a_time():
    """An interval's counter samples handed over at once, shuffled as several receivers
    would hand them (the core puts them in arrival order, dates each by its agent's clock
    and names its port), rate as the same readings added one by one: each the generic
    interface record's counters (packets: the three casts summed, 32 bits wide), dated by
    the oracle's clock, stamped. Samples of ports no one named and samples without the
    record are dated only; their datagrams still teach the clock."""
    rng = random.Random(20)
    rust, python = IntervalRates(), oracle.IntervalRates()
    clocks, oracle_clocks = AgentClocks(), clock_oracle.AgentClocks()
    agents = [bytes([192, 0, 2, n]) for n in range(1, 5)]
    ports = {(agents[n % 4], n): (f"leaf{n % 4:02}", f"Ethernet{n}") for n in range(1, 41)}
    named = SampledPorts([(agent, ifindex, *port) for (agent, ifindex), port in ports.items()
                          if ifindex != 40])  # Ethernet40's samples name no port
    widths = [WIDTHS.get(name, 64) for name in INTERFACE_COUNTERS]
    values = {port: [rng.randrange(2 ** w) for w in widths] for port in ports}
    speeds = {port: rng.choice((0, 10**9, 10**11)) for port in ports}
    boot = {agent: rng.uniform(-1e5, 0) for agent in agents}
    for interval in range(30):
        arrivals = []  # each with the values its record carries
        for sent in sorted(interval * 10.0 + rng.uniform(0, 10) for _ in range(80)):
            agent, ifindex = port = rng.choice(list(ports))
            counted = values[port] = [
                (v + int(rng.choice((0, 1e3, 1e7, 1e9)) * rng.random())) % 2 ** w
                if rng.random() < 0.95 else rng.randrange(v + 1)
                for v, w in zip(values[port], widths, strict=True)]
            uptime_ms = int((sent - boot[agent]) * 1000)
            received = sent + rng.expovariate(50.0)
            arrivals.append(((agent, 0, received, uptime_ms,
                              _sample(rng, ifindex, counted, speeds[port])), counted))
        arrivals.sort(key=lambda a: a[0][2])
        for (agent, sub_agent, received, uptime_ms, sample), counted in arrivals:
            at = oracle_clocks.date(agent, sub_agent, received, uptime_ms)
            port = (agent, sample[2])
            if sample[3] is not None and port[1] != 40:
                python.add(PortCounters(*ports[port], at, dict(zip(INTERFACE_COUNTERS, counted,
                                                                   strict=True)),
                                        WIDTHS, speed_bps=speeds[port] or None, stamped=True))
        rng.shuffle(arrivals)
        rust.add_sflow(CounterArrivals(arrival for arrival, _ in arrivals), clocks, named)
        start = interval * 10.0 - 10.0
        for ports_asked in (None, [f"port:leaf0{n % 4}/Ethernet{n}" for n in range(1, 6)]):
            assert _written(rust.rates(start, start + 10.0, ports_asked)) == \
                _written(python.rates(start, start + 10.0, ports_asked))
        assert rust.covered(start + 10.0) == python.covered(start + 10.0)
    assert "port:leaf00/Ethernet40" not in rust.rates(0.0, 290.0)


def _sample(rng: random.Random, ifindex: int, counted: list[int], speed: int) -> tuple:
    """A counters sample (``CounterTuple``) carrying ``counted`` (INTERFACE_COUNTERS in
    order): the packets split at random among unicast, multicast and broadcast; one in
    ten without its generic interface record."""
    if rng.random() < 0.1:
        return (rng.randrange(2**32), 0, ifindex, None, None)
    in_octets, out_octets, in_pkts, out_pkts, in_discards, out_discards, in_errors, \
        out_errors = counted
    record = (ifindex, 6, speed, 1, 3, in_octets, *_split(rng, in_pkts), in_discards,
              in_errors, 0, out_octets, *_split(rng, out_pkts), out_discards, out_errors, 0)
    return (rng.randrange(2**32), 0, ifindex, record, None)


def _split(rng: random.Random, packets: int) -> tuple[int, int, int]:
    multicast = rng.randrange(packets + 1) if rng.random() < 0.3 else 0
    broadcast = rng.randrange(packets - multicast + 1) if rng.random() < 0.3 else 0
    return packets - multicast - broadcast, multicast, broadcast
