"""Plain data of results: what the JSON and YAML printers, the HTTP API and the attribution
log write (dataclasses, enums and named tuples unwrapped)."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

_PLAIN = frozenset({str, int, float, bool})


def to_data(value: Any) -> Any:
    """Plain JSON/YAML-ready data of a result: dataclasses, enums, tuples unwrapped.

    >>> from inventory.problems import Problem
    >>> to_data([Problem("link-one-sided", "a-b")])
    [{'kind': 'link-one-sided', 'subject': 'a-b', 'detail': ''}]
    """
    if value is None or type(value) in _PLAIN:  # most values: nothing to unwrap
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a NamedTuple
        return {k: to_data(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_data(v) for v in value]
    return value
