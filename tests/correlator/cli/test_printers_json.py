"""The JSON printers write exactly what ``json.dumps(indent=2)`` writes, faster."""

from __future__ import annotations

import io
import json
import math

from hypothesis import given
from hypothesis import strategies as st

from correlator.cli.printers import emit, json_text, stream_list

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=6), inner, max_size=4), max_leaves=30)


@given(_VALUES)
def test_any_value_is_laid_out_as_pythons_indenting_encoder_lays_it_out(value):
    assert json_text(value) == json.dumps(value, indent=2)


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
