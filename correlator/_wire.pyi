"""fabcorr's sFlow v5 wire path in Rust (the crate in wire/): decode to the RoCEv2 BTH and
accumulate per interval, with the records, traffic classes and reject reasons of
:mod:`correlator.sflow.decode`. :mod:`correlator.sflow.native` turns what it returns into
the records and intervals the rest of fabcorr reads.

Beside it, :class:`SeriesLines` writes the series of the ``/metrics`` text
(:mod:`correlator.service.series_text`) and :func:`json_text` writes the JSON the CLI
prints (:mod:`correlator.cli.printers`).

Nothing on the wire path raises on input: a datagram or sample that cannot be trusted is counted
under its reason (``REJECTS``); a panic inside is counted as ``internal-error``.
"""

from collections.abc import Callable, Hashable, Iterable, Iterator

ROW_FORMAT: str
"""struct format of one flow-table row (little-endian): agent index, ifIndex, sampling
rate, source address index, destination address index, direction index (``DIRECTIONS``),
traffic index (``TRAFFIC``), samples, sum of frame lengths, sum of their squares as low
and high 64 bits."""
MAX_FLOWS: int
"""How many flow keys an interval holds by default (a sample of a new key beyond them is
lost, counted in the overflow as ``flows``)."""
TRAFFIC: list[str]
"""Traffic class names by index: the packet classes of correlator.sflow.packet, then
``no-header``."""
DIRECTIONS: list[str]
"""``["in", "out"]``."""
REJECTS: list[str]
"""Every reject reason: the decoder's six, then ``internal-error``."""
REFUSALS: list[str]
"""Why a :class:`Collector` with an admission refuses a datagram: ``unknown-agent``,
``spoofed-source`` (counted among the rejects)."""
FORMATS_KEPT: int
"""Unknown formats counted by name at most (the least recently met go, counted)."""

Counts = dict[str, object]
"""``{"datagrams": int, "samples": {"flow"|"counters"|"discard": int},
"rejects": {reason: int}, "skipped": {"sample/E:N"|"record/E:N": int}}``; only non-zero
entries. ``skipped`` holds the ``FORMATS_KEPT`` most recently met formats."""

PacketTuple = tuple[str, int, int, bytes, bytes, int, int, int, int, int, int, int, int, bool]
"""The fields of :class:`correlator.sflow.records.Packet`, in order."""
SampleTuple = tuple[str, tuple[object, ...]]
"""``("flow" | "counters" | "discard", fields)``: the fields of FlowSample (packet as a
PacketTuple or None), CounterSample (interface as a 19-tuple or None, ethernet a
13-tuple or None) or DiscardSample, in order."""
DatagramTuple = tuple[bytes, int, int, int, list[SampleTuple]]
"""agent, sub-agent, sequence number, uptime (ms), samples."""
CounterTuple = tuple[int, int, int, tuple[int, ...] | None, tuple[int, ...] | None]
SegmentTuple = tuple[float, list[bytes], list[bytes], list[bytes]]
"""start, agents (index 0 is ``b""``, then every agent seen in the segment, in order),
addresses (index 0 is ``b""``: no address), flow-table rows (``ROW_FORMAT`` each) in
pieces (the core hands over a piece per agent that sent flow samples)."""
IntervalTuple = tuple[float, float, list[SegmentTuple], CounterArrivals,
                      list[tuple[bytes, int, int, bytes, bytes, int]], dict[str, int]]
"""start, end, segments, counter samples (as they came), discard counts as (agent, port,
reason, source, destination, samples), and the samples that found a
full table (``{"flows", "counters", "discards"}``)."""


def decode(data: bytes) -> tuple[DatagramTuple | None, Counts]:
    """One datagram and what decoding it counted (None when it is rejected whole).
    Builds objects per sample: for tests and tools, not for the receive path."""


class SeriesLines:
    """One metric family's series lines, interval after interval: ``new(key)`` renders a
    series' prefix (``name{labels} ``) the first time its key is met; prefixes are kept
    while their series last (pruned to the latest render's once they outnumber its series
    twice), in the order of the latest render, so that a series whose key equals that
    render's at its position finds its prefix without hashing."""

    def __init__(self, new: Callable[[Hashable], str]) -> None: ...

    @property
    def kept(self) -> int:
        """How many keys' prefixes are kept."""

    def update(self, keys: list[Hashable], values: list[float]) -> None:
        """The family's series for the next :func:`exposition`: ``prefix value\\n`` per
        key and value, UTF-8; the value as :func:`prometheus_client.utils.floatToGoString`
        writes it (``+Inf``, ``-Inf``, ``NaN``, Python's shortest ``repr``, positive values
        of 7 to 16 integer digits as ``d.ddde+XX``). ``ValueError`` when the lists' lengths
        differ; a failed update leaves no series to write."""


def exposition(parts: list[bytes | SeriesLines]) -> bytes:
    """The parts one after the other: bytes as they are, families' series as last
    updated, written once into the bytes returned."""


Z95: float
"""The normal quantile of a 95 % interval."""
FEW_SAMPLES: int
"""Below this many samples the normal approximation of a group's bytes is not trusted
(nor, for a link direction, its 95 % bound to judge the counters)."""
CHECKS: tuple[str, str, str]
"""What a link direction's counters say against its samples: not checked (``""``: none,
or fewer than ``FEW_SAMPLES`` samples), agree (``ok``), ``outside`` the bound."""
OTHER: str
"""The name of the group a table's cut leaves over."""

Sums = tuple[int, int, int, int]
"""samples, estimated bytes, estimated packets, variance of the estimated bytes: exact
integers (a float is a TypeError)."""


class Share:
    """One group's part of a link direction in one interval.

    ``bytes`` is apportioned from the counters when the interval had them (``exact``),
    else the sampled estimate; ``low`` / ``high`` bound ``bytes`` at 95 %. One object
    holding the numbers as computed, each a Python value when read; it behaves as a named
    tuple of these fields in this order (by index, unpacked, ``_fields``, ``_asdict()``,
    compared with shares and tuples, hashed, printed, pickled). ValueError for bytes that
    are neither a float nor an int."""

    name: str
    samples: int
    share: float
    share_low: float
    share_high: float
    bytes: float | int
    """Apportioned (a float), or the sampled estimate (the core's integer)."""
    low: float
    high: float
    packets: int
    exact: bool
    _fields: tuple[str, ...]

    def __init__(self, name: str, samples: int, share: float, share_low: float,
                 share_high: float, bytes: float | int, low: float, high: float,
                 packets: int, exact: bool) -> None: ...
    def _asdict(self) -> dict[str, object]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int | slice) -> object: ...
    def __iter__(self) -> Iterator[object]: ...


def shares(groups: list[tuple[str, Sums]], total: Sums,
           counters: tuple[float, tuple[float, float] | None, bool] | None) -> list[Share]:
    """Each group's share of ``total``: the method of
    :mod:`correlator.attribution.estimate`, bytes apportioned from ``counters`` (bytes,
    the least and most the readings allow or None, disputed) when given, else the sampled
    estimate (an int). ValueError for a group of no samples."""


def json_text(value: object, width: int) -> str:
    """``value`` (dicts, lists, tuples, str, int, float, bool, None) as
    ``json.dumps(value, indent=width)`` writes it, character for character; TypeError for
    anything else, ValueError past 900 levels of nesting."""


class Accumulator:
    """Decodes datagrams and sums their samples into the current interval, keyed as
    :class:`correlator.attribution.accumulate.Accumulator`; each table holds at most its
    ``max_*`` entries per interval (the rest is counted in the interval's overflow)."""

    def __init__(self, start: float, max_flows: int = ..., max_counters: int = ...,
                 max_discards: int = ...) -> None: ...

    def add(self, data: bytes, at: float) -> bool:
        """Decode and add one datagram received at ``at``; whether it was accepted."""

    def add_many(self, datagrams: Iterable[tuple[float, bytes]]) -> int:
        """:meth:`add` each ``(at, data)``; how many were accepted."""

    def cut(self, at: float) -> None:
        """Start a new segment at ``at`` (an address changed owner)."""

    def take(self, end: float) -> IntervalTuple:
        """The interval up to ``end``; a new one starts there."""

    def take_counts(self) -> Counts:
        """What was decoded, rejected and skipped since the last call."""


TotalsDict = dict[str, object]
"""What a :class:`Collector` counted over an interval: ``datagrams``, ``bytes``,
``samples`` and ``rejects`` (as in ``Counts``, refusals among the rejects),
``lost_datagrams``, ``agent_restarts``, ``agent_drops``, ``kernel_drops``,
``interleaved``, ``evictions`` (``{"sequences"|"sources"|"formats": int}``, non-zero
only) and ``named``: the (agent, sub-agent) pairs found interleaving in it, each named
once ever."""


class Capture:
    """The UDP datagrams of a pcap or pcapng file (``correlator/sflow/pcap.py`` says which
    kinds and links), only those to ``port`` when given, read in large blocks. A file of
    neither kind, or a pcap of a link type not read, is a ValueError; one that cannot be
    opened an OSError. Iterating gives ``(time, source address packed, source port,
    destination port, payload)``; :meth:`Collector.handle_capture` takes them without
    Python objects."""

    def __init__(self, path: str, port: int | None = None) -> None: ...

    def peek(self) -> float | None:
        """When the next datagram arrived, without taking it; None after the last."""

    def __iter__(self) -> Capture: ...

    def __next__(self) -> tuple[float, bytes, int, int, bytes]: ...

    def skipped(self) -> dict[str, int]:
        """Packets skipped so far by reason (``not_ip``, ``not_udp``, ``fragment``,
        ``truncated``, ``unsupported_link``, ``cut_short``), those counted only."""


class Collector:
    """The receive path of one worker: admission (``admit``), decoding, loss accounting
    per (agent, sub-agent) as :mod:`correlator.sflow.accounting` describes it (at most
    ``max_agents`` pairs and ``max_sources`` data sources, least recent evicted and
    counted) and sums per interval of ``interval_s`` from ``start`` (tables bounded as
    :class:`Accumulator`'s, what does not fit counted in the interval's overflow).

    A datagram belongs to the interval it arrived in: one of the next interval closes the
    current one. Datagrams come from :meth:`handle`, or, after :meth:`receive`, from a
    socket read in a thread of the collector's own that never takes the GIL; meanwhile
    every other method asks that thread (``handle`` raises RuntimeError).
    """

    def __init__(self, start: float, interval_s: float, max_agents: int = ...,
                 max_sources: int = ..., max_flows: int = ..., max_counters: int = ...,
                 max_discards: int = ...) -> None: ...

    @property
    def end(self) -> float:
        """The end of the interval in progress."""

    @property
    def receiving(self) -> bool:
        """Whether a thread is reading a socket into the collector."""

    def admit(self, agents: list[tuple[bytes, list[bytes]]] | None,
              relays: list[tuple[bytes, int]] = ...) -> None:
        """Believe only ``agents`` (packed agent address, packed addresses it may send
        from), or any address in a relay (packed network address, prefix length); None:
        every agent. ValueError for an address that is not 4 or 16 bytes."""

    def watch(self, inode: int) -> None:
        """Count, per interval, what the kernel dropped on the UDP socket with ``inode``
        (``/proc/net/udp``, ``udp6``) from now."""

    def handle(self, data: bytes, at: float, source: str = "") -> bool:
        """One datagram that arrived at ``at`` from UDP ``source`` (an IP address; ``""``:
        none); whether it was accepted."""

    def handle_many(self, datagrams: Iterable[tuple[float, bytes]]) -> int:
        """:meth:`handle` each ``(at, data)`` (from no UDP source: a capture, in time
        order); how many were accepted."""

    def handle_capture(self, capture: Capture, until: float) -> int:
        """:meth:`handle` each datagram of ``capture`` that arrived before ``until``, read
        here (no UDP source); how many."""

    def cut(self, at: float) -> None:
        """Start a new segment at ``at`` (an address changed owner)."""

    def close(self, now: float) -> list[tuple[IntervalTuple, TotalsDict]]:
        """Every interval ended by ``now`` and not taken yet, oldest first; when receiving,
        once the datagrams queued before ``now`` are read."""

    def take(self, end: float) -> tuple[IntervalTuple, TotalsDict]:
        """The interval in progress cut at ``end``, and its totals; both start over (when
        receiving, once the datagrams queued before ``end`` are read)."""

    def peek(self) -> dict[str, object]:
        """``datagrams``, ``samples`` and ``rejects`` since the last take, without taking
        them, and ``tables``: entries of the bounded tables (``sequences``, ``sources``,
        ``formats``)."""

    def receive(self, fd: int, batch: int = ...) -> None:
        """Read the UDP socket ``fd`` in a thread of the collector's own, up to ``batch``
        datagrams per ``recvmmsg``. The socket must be blocking with a receive timeout
        (``SO_RCVTIMEO``: how long a request may wait while nothing arrives), have
        ``SO_TIMESTAMPNS`` on, and stay open until :meth:`stop` returns."""

    def stop(self) -> None:
        """End the receiving thread (what it counted stays); nothing when not receiving."""


LinkTuple = tuple[int, str, int, float, dict[str, int], str, tuple[Share, ...],
                  tuple[Share, ...], tuple[Share, ...], tuple[Share, ...], tuple[Share, ...]]
"""One link direction of a join: port id, direction (``DIRECTIONS``), samples, estimated
bytes, samples per traffic class (``TRAFFIC``, non-zero only, by name), the counter check
(``CHECKS``), the shares of its tenants, jobs, pods, pairs and throttled jobs."""
Counters = tuple[float, tuple[float, float] | None, bool]
"""A link direction's counter bytes, the least and most its readings allow (or None),
and whether they are disputed (see :class:`correlator.attribution.estimate.Counters`)."""


class Join:
    """The join of flow tables to one fabric, built once per fabric from integer ids:
    ``ports`` as (agent, ifIndex, port id); ``owners`` as (pod id, job id, tenant id) by
    owner id, owner 0 being nobody (an address no pod interface owned); ``claims`` as
    (address, valid from, valid until or None, owner id), each address's oldest first
    (where claims overlap, the latest that covers a moment wins); ``pods``, ``jobs`` and
    ``tenants`` the names by id (groups of equal bytes rank by name). Raises ValueError on
    a claim of an owner not listed or an owner's pod, job or tenant without a name."""

    def __init__(self, ports: list[tuple[bytes, int, int]],
                 owners: list[tuple[int, int, int]],
                 claims: list[tuple[bytes, float, float | None, int]],
                 pods: list[str], jobs: list[str], tenants: list[str]) -> None: ...

    def attribute(self, segments: list[SegmentTuple], top: int,
                  counters: dict[tuple[int, int], tuple[float, tuple[float, float] | None]]
                  ) -> tuple[list[LinkTuple], list[tuple[bytes, int, int]], int]:
        """Every row of ``segments`` joined at its segment's start and summed per link
        direction by sender tenant, job and pod, by (sender job, receiver job) and by the
        receiver job of its CNPs (throttled), each table ranked largest first (ties by
        name), pods, pairs and throttled jobs cut to ``top``, and made into shares as
        :func:`shares` makes them (the cut's rest named ``other``): apportioned from the
        direction's ``counters`` by (port id, direction index) when given (its counter
        bytes, the least and most its readings allow), unless they lie beyond the
        estimate's 95 % bound (``outside`` of ``CHECKS``: then disputed), the throttled
        jobs among the CNPs alone. Then the samples of ports the fabric does not know as
        (agent, ifIndex, samples), and the samples whose source nobody owned. Raises
        ValueError on rows that are not whole or name an index beyond their tables."""


class CounterTimeline:
    """One counter of one port in time (:mod:`correlator.collect.timeline`): its known
    moments, unwrapped, from readings in time order, and its increase over any span."""

    bits: int
    fresh: bool
    times: list[float]
    """The known moments (copies: what the timeline holds stays its own)."""
    values: list[float]
    """The unwrapped value at each moment, never decreasing."""
    slack: list[float]
    """How far each moment may lie from its true time."""
    unknown: list[tuple[float, float]]
    """Spans of steps neither wrap nor reset."""
    period: float | None
    """The agent's refresh period as learnt so far: the median spacing of the latest
    changes after values read more than once (None before two of them)."""
    covered_until: float
    """The last moment the counter's value is known at (-inf before any)."""

    def __init__(self, bits: int = 64, fresh: bool = False) -> None: ...

    def add(self, at: float, value: int, max_rate: float | None = None) -> None:
        """A reading taken at ``at`` (an older one than the last is ignored); ``max_rate``:
        the most the counter can count a second, when known."""

    def restart(self) -> None:
        """The next value read counts from zero, whatever the counter's width."""

    def moments(self) -> list[tuple[float, int]]:
        """The known (moment, unwrapped value) pairs, oldest first."""

    def value_at(self, at: float, extrapolate: bool = False) -> float | None:
        """The interpolated value at ``at``; None outside the known moments, unless
        ``extrapolate``: past the last one, at the rate between the last two."""

    def bounds(self, at: float, extrapolate: bool = False) -> tuple[float, float] | None:
        """Where the value at ``at`` lies, by the rates around it and how well the
        moments around it are dated."""

    def unknown_in(self, start: float, end: float) -> bool:
        """Whether a step of unknown size lies in ``[start, end)``."""

    def increase_bounds(self, start: float, end: float, extrapolate: bool = False
                        ) -> tuple[float, float] | None:
        """The least and the most the counter counted over ``[start, end)``."""

    def increase(self, start: float, end: float, extrapolate: bool = False) -> float | None:
        """What the counter counted over ``[start, end)`` (each end pinned once known);
        None unless both are known and no step of unknown size lies between."""

    def keep(self, at: float, since: float | None = None, counted: float = 0.0) -> None:
        """Pin the value at ``at``: ``counted`` more than at ``since`` when given, else as
        it is given now, carried on past the last moment if need be."""


class CounterArrivals:
    """An interval's counter samples in the order they came, kept in the core: each
    (agent, sub-agent, received at, the agent's uptime in ms, sample) as given (any
    iterable of those; a sample as ``CounterTuple``). Iterating gives them back as
    tuples; equal when they hold the same."""

    def __init__(self, arrivals: Iterable[tuple[bytes, int, float, int, CounterTuple]] = ...
                 ) -> None: ...

    @staticmethod
    def joined(parts: list[CounterArrivals]) -> CounterArrivals:
        """Those of ``parts``, one after another."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[tuple[bytes, int, float, int, CounterTuple]]: ...


class SampledPorts:
    """The switch and port name an sFlow agent (packed address) means by an ifIndex:
    (agent, ifIndex, switch, port name) each."""

    def __init__(self, ports: list[tuple[bytes, int, str, str]]) -> None: ...

    def __len__(self) -> int: ...


class AgentClocks:
    """The wall time of an sFlow agent's uptime, learnt per (agent, sub-agent) from the
    ``kept`` (at least 1) latest guesses (:mod:`correlator.sflow.clock`)."""

    def __init__(self, kept: int = 8) -> None: ...

    def date(self, agent: bytes, sub_agent: int, arrival: float, uptime_ms: int) -> float:
        """The wall time of ``uptime_ms`` on the agent (4 or 16 bytes, else ValueError),
        given a datagram of it that arrived at ``arrival``."""


class IntervalRates:
    """Every port's counter timelines and their rates over any span
    (:class:`correlator.collect.interval_rates.IntervalRates` holds one): counters named
    in ``octets`` count bytes, those whose family (the name before ``/``) is in ``frames``
    count frames (their line rates bound them), others are unbounded; ``rates`` is the
    class of the rates it makes, ``ambiguous`` and ``implausible`` the reasons it gives
    for a counter without one."""

    slack: float
    slowest_refresh_s: float
    """The longest refresh period learnt of any counter so far (0 before any)."""

    def __init__(self, slack: float, octets: list[str], frames: list[str], rates: type,
                 ambiguous: object, implausible: object) -> None: ...

    def add(self, switch: str, port: str, at: float, values: dict[str, int],
            bits: dict[str, int], speed: int | None, uptime: float | None,
            last_clear: float | None, stamped: bool) -> None:
        """One reading of port ``port:{switch}/{port}``: its values by name, the widths of
        those not 64 bits wide (a port's readings in time order; older ones are
        ignored)."""

    def add_sflow(self, names: list[str], arrivals: CounterArrivals, clocks: AgentClocks,
                  ports: SampledPorts) -> None:
        """An interval's sFlow counter samples in the order they arrived (by receive
        time, stable): each dated by its agent's clock in ``clocks``, then the counters
        ``names`` of its generic interface record (as ``inventory.counters`` names them:
        the octets, packets, discards and errors of each direction; the packets 32 bits
        wide, a sum of three Counter32s) added to the port ``ports`` names, stamped,
        without uptime or last clear, its speed when not 0. A sample without that record
        or of a port ``ports`` does not name is dated only. ValueError for a name no
        record gives."""

    def covered(self, end: float, since: float | None = None) -> bool:
        """Whether every port (read after ``since``, when given) is known at ``end``."""

    def keep(self, port: str, start: float, end: float,
             published: dict[str, float] | None = None) -> None:
        """Pin every counter of ``port`` (port ID) at ``end``: at what ``published`` (rates
        by name) counted from ``start`` where it has the counter's rate, else as given
        now."""

    def rates(self, start: float, end: float, ports: Iterable[str] | None = None
              ) -> dict[str, object]:
        """Port ID -> its rates over ``[start, end)`` (made as ``rates``), for the ports
        known over all of it (of ``ports`` only, when given)."""


DROPS: list[str]
"""Why the inlet did not forward a datagram, in the order of its counts: ``bad-header``,
``unknown-agent``, ``spoofed-source``, ``unresolved``, ``send-error``."""


class Inlet:
    """``fabcorr inlet``'s forwarding thread: reads ``recvmmsg`` batches of up to ``batch``
    datagrams from the bound socket ``fd`` (the caller keeps it open until :meth:`stop`,
    with a receive timeout), reads each one's header alone and sends it on unchanged with
    ``sendmmsg`` to its agent's shard, from a UDP socket connected to that shard (so a
    refusing port is reported, counted as ``send-error``). Nothing is forwarded until
    :meth:`route` and :meth:`shards` are given."""

    def __init__(self, fd: int, batch: int = 64) -> None: ...

    def route(self, agents: list[tuple[bytes, list[bytes], int]]) -> None:
        """Route by these, from when this returns: each agent (packed) with the addresses
        (packed) it may send from and its shard's index; every other agent is unknown."""

    def shards(self, addresses: list[tuple[bytes, int] | None]) -> None:
        """Shard ``i`` is at ``addresses[i]`` (packed address, port; None: unresolved), from
        when this returns; a shard whose address did not change keeps its socket."""

    def counts(self) -> dict[str, list[int] | list[list[int]]]:
        """Since the start: ``forwarded`` and ``samples`` (as the headers declare) per
        shard, ``dropped`` per shard and cause (``DROPS`` order), ``unrouted`` per cause
        (drops no shard owns: a bad header, an unknown agent)."""

    def stop(self) -> None:
        """End the forwarding thread; nothing when it has ended."""
