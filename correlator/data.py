"""Plain data of results: what the JSON and YAML printers, the HTTP API and the attribution
log write (dataclasses, enums and named tuples unwrapped)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum
from typing import Any

from correlator._wire import Share

_PLAIN = frozenset({str, int, float, bool, type(None)})


def to_data(value: Any) -> Any:
    """Plain JSON/YAML-ready data of a result: dataclasses, enums, tuples unwrapped.

    >>> from inventory.problems import Problem
    >>> to_data([Problem("link-one-sided", "a-b")])
    [{'kind': 'link-one-sided', 'subject': 'a-b', 'detail': ''}]
    """
    kind = type(value)
    if kind in _PLAIN:  # most values: nothing to unwrap
        return value
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _converter(kind)
    return convert(value)


_CONVERTERS: dict[type, Callable[[Any], Any]] = {Share: Share._asdict}
"""How each type met so far is unwrapped (one look at the type, not at every value); the
core's shares hold plain values only and make their dicts themselves."""


def _converter(kind: type) -> Callable[[Any], Any]:
    """How values of ``kind`` are unwrapped; plain members are taken as they are, without a
    call (a million shares are ten million members)."""
    plain, data = _PLAIN, to_data
    if dataclasses.is_dataclass(kind):
        names = tuple(f.name for f in dataclasses.fields(kind))
        return lambda value: {name: member if type(member) in plain else data(member)
                              for name in names for member in (getattr(value, name),)}
    if issubclass(kind, Enum):
        return lambda value: value.value
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):  # a NamedTuple
        names = kind._fields
        return lambda value: {name: member if type(member) in plain else data(member)
                              for name, member in zip(names, value, strict=True)}
    if issubclass(kind, dict):
        return lambda value: {str(key): member if type(member) in plain else data(member)
                              for key, member in value.items()}
    if issubclass(kind, list | tuple | set | frozenset):
        return lambda value: [member if type(member) in plain else data(member)
                              for member in value]
    return lambda value: value
