"""Values as people read them: local ISO-8601 times, offsets in seconds, rates in bit/s with
SI prefixes, byte counts with thousands separators, plurals, names without ID prefixes.
The one place the human printers (tables, the demo's lines) format a unit."""

from __future__ import annotations

from datetime import datetime

from topology.schema import NodeKind

_SI = ("", "k", "M", "G", "T", "P")
_PREFIXES_OF_IDS = frozenset({*NodeKind, "podif"})  # the prefixes of topology.schema's IDs


def local_time(epoch: float) -> str:
    """Unix seconds as a local ISO-8601 time to the second (with the zone's offset).
    ``2026-01-01T03:00:00+02:00`` for 1767229200 two hours east of UTC.
    """
    return datetime.fromtimestamp(round(epoch)).astimezone().isoformat(timespec="seconds")


def offset(seconds: float) -> str:
    """A relative time: ``+10 s``, ``+2.5 s``, ``-3 s``.

    >>> offset(10.0), offset(2.5), offset(-3)
    ('+10 s', '+2.5 s', '-3 s')
    """
    return f"{seconds:+g} s"


def interval(start: float, seconds: float) -> str:
    """An attribution interval: its local start and its length,
    ``2026-01-01T03:00:00+02:00 +10 s``."""
    return f"{local_time(start)} {offset(seconds)}"


def bit_rate(bits_per_second: float) -> str:
    """A rate in bit/s with an SI prefix and three significant digits.

    >>> bit_rate(400e9), bit_rate(2.5e9), bit_rate(123_456_789), bit_rate(999.96), bit_rate(0)
    ('400 Gb/s', '2.5 Gb/s', '123 Mb/s', '1 kb/s', '0 b/s')
    """
    value, prefix = float(bits_per_second), 0
    while prefix < len(_SI) - 1 and abs(float(f"{value:.3g}")) >= 1000:
        value, prefix = value / 1000, prefix + 1
    return f"{float(f'{value:.3g}'):g} {_SI[prefix]}b/s"


def byte_rate(bytes_per_second: float) -> str:
    """Bytes per second as a bit rate (:func:`bit_rate`).

    >>> byte_rate(1.25e9)
    '10 Gb/s'
    """
    return bit_rate(bytes_per_second * 8)


def count(number: float) -> str:
    """A count (bytes, packets, samples) with thousands separators; fractions are rounded.

    >>> count(12345678901), count(12.6), count(0)
    ('12,345,678,901', '13', '0')
    """
    return f"{round(number):,}"


def counted(counts: dict[str, int]) -> str:
    """Counts by kind as words: ``31,552 flow, 12 counters``; ``none`` when empty.

    >>> counted({"flow": 31552, "counters": 12}), counted({})
    ('31,552 flow, 12 counters', 'none')
    """
    return ", ".join(f"{count(n)} {kind}" for kind, n in counts.items()) or "none"


def plural(number: int, noun: str, nouns: str | None = None) -> str:
    """``1 problem``, ``2 problems``, ``1,024 switches`` (``nouns``: an irregular plural).

    >>> plural(1, "problem"), plural(0, "problem"), plural(1024, "switch", "switches")
    ('1 problem', '0 problems', '1,024 switches')
    """
    return f"{number:,} {noun if number == 1 else nouns or noun + 's'}"


def short_name(node_id: str) -> str:
    """A node ID without its kind prefix: ``tenant:team-a`` -> ``team-a``; anything else
    (``other``, an IPv6 address) stays as it is.

    >>> short_name("tenant:team-a"), short_name("podif:a/w-0/net1"), short_name("other")
    ('team-a', 'a/w-0/net1', 'other')
    """
    kind, sep, rest = node_id.partition(":")
    return rest if sep and kind in _PREFIXES_OF_IDS else node_id
