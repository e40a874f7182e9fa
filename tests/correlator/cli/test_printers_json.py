"""The JSON printers write exactly what ``json.dumps(indent=2)`` writes, faster."""

from __future__ import annotations

import enum
import io
import json
import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.cli.printers import emit, json_text, stream_list

_FLOATS = st.floats() | st.sampled_from([1e16, 9999999999999998.0, 1e-4, 1e-5, 5e-324, -0.0,
                                          0.1, 1.7976931348623157e308, 123456789.125,
                                          17138345936.632812])  # a tie: ...2 (half even)
_SCALARS = st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63) | _FLOATS \
    | st.text()
_KEYS = st.text(max_size=6) | st.integers() | _FLOATS | st.booleans() | st.none()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.lists(inner, max_size=3).map(tuple)
                       | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=30)


@given(_VALUES)
def test_any_value_is_written_as_pythons_indenting_encoder_writes_it(value):
    assert json_text(value) == json.dumps(value, indent=2)


def test_floats_of_every_exponent_and_exact_ties_are_written_as_pythons_repr():
    rng = random.Random(15)
    bits = (struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            for _ in range(100_000))
    # 53-bit integers times small powers of two: values of 16 to 18 digits, some of them
    # exactly halfway between two 17-digit decimals (17138345936.6328125 is one)
    halves = (math.ldexp(rng.getrandbits(53), rng.randint(-12, 12)) for _ in range(100_000))
    floats = [x for x in (*bits, *halves) if math.isfinite(x)]
    floats += [float(n) for n in range(-20, 20)] + [10.0**k for k in range(-330, 309)]
    assert json_text(floats) == json.dumps(floats, indent=2)


class _Level(enum.IntEnum):
    HIGH = 3


def test_subclasses_as_their_base_and_the_rest_refused_as_python_refuses_them():
    value = {"level": _Level.HIGH, _Level.HIGH: "key", "text": "\x00\x1f\ud7ff\U0001f600",
             "lone": "a\udc80b", "\ud800": 1}
    assert json_text(value) == json.dumps(value, indent=2)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json_text({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        json_text({(1, 2): 3})
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deep"):
        json_text(deep)


def test_strings_that_look_like_structure_stay_whole():
    value = {"a \"[x]\", {y}": ["\\", "]", [], {}, [[]]], "é€": [1.5e300, math.inf, -0.0]}
    assert json_text(value) == json.dumps(value, indent=2)
    assert json_text(value).splitlines()[:4] == [
        "{", '  "a \\"[x]\\", {y}": [', '    "\\\\",', '    "]",']


def test_emit_and_stream_list_print_the_indented_document():
    items = [{"port": "leaf01:Ethernet1", "shares": [{"name": "pod:a", "share": 0.25}]}, {}]
    printed, streamed = io.StringIO(), io.StringIO()
    emit(items, lambda result, wide: [], "json", printed)
    stream_list(iter(items), "json", streamed)
    assert printed.getvalue() == json.dumps(items, indent=2) + "\n" == streamed.getvalue()
