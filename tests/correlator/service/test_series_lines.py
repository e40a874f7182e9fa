"""The values of the ``/metrics`` text as prometheus-client writes them:
:class:`correlator._wire.SeriesLines` against its own
:func:`~prometheus_client.utils.floatToGoString`, value by value, over a few million
floats of every kind (random bit patterns and magnitudes, integers, the edges where the
layout changes, powers of two and ten with their neighbours, subnormals, specials)."""

from __future__ import annotations

import math
import random
import struct
from array import array
from decimal import Decimal

import pytest
from prometheus_client.utils import floatToGoString

from correlator._wire import SeriesLines, exposition

SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324, -5e-324,
            2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
            -1.7976931348623157e308, 1e6, 999999.9999999999, 1e16, 9999999999999998.0,
            1e21, 1e-4, 9.999999999999999e-05, 0.1, 0.5, 1 / 3, 2**53, 2**53 + 1, 2**70]
ULPS = 3  # neighbours of each edge value checked on either side


def _bit_patterns(rng: random.Random, count: int) -> list[float]:
    """Every finite float equally likely by its bits (NaNs and infinities included)."""
    return list(array("d", rng.randbytes(8 * count)))


def _subnormals(rng: random.Random, count: int) -> list[float]:
    return [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(52) | sign))[0]
            for sign in (0, 1 << 63) for _ in range(count // 2)]


def _magnitudes(rng: random.Random, count: int) -> list[float]:
    """Uniform in [1, 10) times a power of ten from 1e-330 to 1e310, either sign."""
    return [rng.choice((1, -1)) * rng.uniform(1, 10) * 10.0 ** rng.randint(-330, 307)
            for _ in range(count)]


def _short(rng: random.Random, count: int) -> list[float]:
    """Few significant digits, as counters and ratios often have."""
    return [float(f"{rng.choice('-+')}{rng.randint(0, 10**rng.randint(1, 6))}"
                  f"e{rng.randint(-30, 30)}") for _ in range(count)]


def _integers(rng: random.Random, count: int) -> list[float]:
    """Integral values of 1 to 25 digits, as ints and as floats."""
    values: list[float] = []
    for _ in range(count // 2):
        value = rng.choice((1, -1)) * rng.randrange(10 ** rng.randint(1, 25))
        values += [value, float(value)]
    return values


def _ties(rng: random.Random, count: int) -> list[float]:
    """Few binary digits past the point: many lie halfway between two shortest decimal
    strings, where ``repr`` takes the even one."""
    return [rng.getrandbits(rng.randint(40, 53)) * 2.0 ** rng.randint(-12, 6)
            for _ in range(count)]


def _is_tie(value: float) -> bool:
    """Whether ``value`` is exactly halfway between two of its shortest strings."""
    exact = Decimal(value).normalize().as_tuple()
    shortest = Decimal(repr(value)).normalize().as_tuple()
    return exact.digits[-1] == 5 and len(exact.digits) == len(shortest.digits) + 1


def _edges() -> list[float]:
    """Powers of two and ten over the whole range, each with its neighbours, either sign."""
    centres = [2.0**k for k in range(-1074, 1024)]
    centres += [float(f"1e{k}") for k in range(-323, 309)]
    centres += [float(f"{m}e{k}") for m in (5, 9.5, 9.9999, 1.5) for k in range(-20, 25)]
    values: list[float] = []
    for centre in centres:
        below = above = centre
        for _ in range(ULPS):
            below, above = math.nextafter(below, 0.0), math.nextafter(above, math.inf)
            values += [below, above]
        values.append(centre)
    return values + [-value for value in values]


def _render(lines: SeriesLines, keys: list, values: list) -> bytes:
    """The text of ``lines`` updated to ``keys`` and ``values``."""
    lines.update(keys, values)
    return exposition([lines])


def _unknown(labels: object) -> str:
    raise AssertionError(f"no prefix asked for {labels!r}")


def _mismatches(values: list[float]) -> list[tuple[float, str, str]]:
    theirs = "".join([f"{floatToGoString(value)}\n" for value in values]).encode()
    ours = _render(SeriesLines(lambda labels: ""), [()] * len(values), values)
    if ours == theirs:
        return []
    return [(value, text, floatToGoString(value)) for value, text
            in zip(values, ours.decode().splitlines(), strict=True)
            if text != floatToGoString(value)][:10]


@pytest.mark.parametrize(("make", "count"), [(_bit_patterns, 1_000_000),
                                             (_magnitudes, 500_000), (_short, 200_000),
                                             (_integers, 200_000), (_subnormals, 100_000),
                                             (_ties, 200_000)])
def test_random_values_are_written_as_floattogostring_writes_them(make, count):
    values = make(random.Random(f"{make.__name__}/14"), count)
    assert len(values) == count
    assert _mismatches(values) == []


def test_the_sweep_meets_ties():
    values = _ties(random.Random("_ties/14"), 20_000)
    assert sum(map(_is_tie, values)) > 500


def test_edges_and_specials_are_written_as_floattogostring_writes_them():
    values = _edges() + SPECIALS + [-value for value in SPECIALS]
    assert len(values) > 30_000
    assert _mismatches(values) == []


def test_each_value_follows_its_prefix_on_a_line():
    asked = []

    def new(labels):
        asked.append(labels)
        return f"{labels[0]} "

    lines = SeriesLines(new)
    text = _render(lines, [("ü",), ("b",), ("c",), ("ü",)], [1.5e7, -0.0, 12, math.inf])
    assert text == 'ü 1.5e+07\nb -0.0\nc 12.0\nü +Inf\n'.encode()
    assert asked == [("ü",), ("b",), ("c",)]
    assert lines.kept == 3


def test_prefixes_are_kept_by_key_wherever_the_series_moves():
    asked = []

    def new(labels):
        asked.append(labels)
        return f"{labels[0]}{len(asked)} "

    lines = SeriesLines(new)
    assert _render(lines, [("a",), ("b",), ("c",)], [1, 2, 3]) == b"a1 1.0\nb2 2.0\nc3 3.0\n"
    # the same keys in new tuples, in place; then moved, one gone, one new; then shorter
    assert _render(lines, [("a",), ("b",), ("c",)], [4, 5, 6]) == b"a1 4.0\nb2 5.0\nc3 6.0\n"
    assert _render(lines, [("a",), ("c",), ("d",), ("b",)], [7, 8, 9, 0]) == (
        b"a1 7.0\nc3 8.0\nd4 9.0\nb2 0.0\n")
    assert _render(lines, [("a",), ("c",)], [1, 2]) == b"a1 1.0\nc3 2.0\n"
    assert _render(lines, [("a",), ("c",), ("d",)], [1, 2, 3]) == b"a1 1.0\nc3 2.0\nd4 3.0\n"
    assert _render(lines, [], []) == b""
    assert _render(lines, [("d",), ("b",)], [1, 2]) == b"d4 1.0\nb2 2.0\n"
    many = [(str(n),) for n in range(30)]
    assert _render(lines, many, [1] * 30) == b"".join(b"%d%d 1.0\n" % (n, 5 + n) for n in range(30))
    # some gone here and there (more than the walk looks ahead at one place), one moved
    # back, one new: each series keeps its own prefix
    later = many[:3] + many[15:20] + [("x",)] + many[21:] + [many[1], many[20]]
    assert _render(lines, later, [2] * len(later)) == b"".join(
        b"%s%d 2.0\n" % (key[0].encode(), 5 + int(key[0]) if key[0] != "x" else 35)
        for key in later)
    assert asked == [("a",), ("b",), ("c",), ("d",), *many, ("x",)]


def test_prefixes_kept_are_bounded_by_the_latest_render():
    lines = SeriesLines(lambda labels: f"{labels[0]} ")
    _render(lines, [(str(n),) for n in range(1000)], [0.5] * 1000)
    assert lines.kept == 1000
    assert _render(lines, [("7",), ("x",)], [1, 2]) == b"7 1.0\nx 2.0\n"
    assert lines.kept == 2


def test_a_series_is_a_key_and_a_number():
    with pytest.raises(TypeError):
        _render(SeriesLines(lambda labels: "a "), [("a",)], ["1.0"])
    with pytest.raises(ValueError, match="2 keys for 1 values"):
        _render(SeriesLines(lambda labels: "a "), [("a",), ("b",)], [1.0])
    with pytest.raises(AssertionError, match="no prefix asked for"):
        _render(SeriesLines(_unknown), [("a",)], [1.0])


def test_a_failed_update_leaves_no_series_to_write():
    lines = SeriesLines(lambda labels: f"{labels[0]} ")
    assert exposition([b"# head\n", lines]) == b"# head\n"
    assert _render(lines, [("a",)], [1.0]) == b"a 1.0\n"
    with pytest.raises(TypeError):
        lines.update([("a",), ("b",)], [2.0, "x"])
    assert exposition([b"# head\n", lines, b"# end\n"]) == b"# head\n# end\n"
    assert _render(lines, [("b",), ("a",)], [3, 4]) == b"b 3.0\na 4.0\n"
