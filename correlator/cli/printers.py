"""Printers: render command results as tables (``table``, ``wide``) or data (``json``, ``yaml``).

A command turns its result into blocks (:class:`Table`, :class:`Fields`) for people, and
hands the result itself to the data printers for machines. Printers know nothing of
switches or pods.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TextIO

import yaml

from correlator.data import to_data

FORMATS = ("table", "wide", "json", "yaml")
_SHORT_LIST = 12


@dataclass
class Table:
    """Rows under upper-case column headers, optionally titled."""

    columns: Sequence[str]
    rows: Iterable[Sequence[Any]]
    title: str = ""


@dataclass
class Fields:
    """Labelled values, one per line, optionally titled."""

    items: Sequence[tuple[str, Any]]
    title: str = ""


Block = Table | Fields


def emit(result: Any, blocks: Callable[[Any, bool], list[Block]], fmt: str,
         stream: TextIO) -> None:
    """Print ``result`` in format ``fmt``; ``blocks(result, wide)`` makes the human view."""
    if fmt == "json":
        json.dump(to_data(result), stream, indent=2)
        stream.write("\n")
    elif fmt == "yaml":
        yaml.safe_dump(to_data(result), stream, sort_keys=False)
    else:
        render(blocks(result, fmt == "wide"), stream, wide=fmt == "wide")


def render(blocks: Iterable[Block], stream: TextIO, wide: bool = False) -> None:
    """Write blocks as aligned text, separated by blank lines.

    >>> import sys
    >>> render([Table(["leaf", "port"], [["leaf01", "Ethernet1"]], "Ports")], sys.stdout)
    Ports
    LEAF    PORT
    leaf01  Ethernet1
    """
    for number, block in enumerate(blocks):
        if number:
            stream.write("\n")
        if block.title:
            stream.write(block.title + "\n")
        if isinstance(block, Table):
            _table(block, stream)
        else:
            _fields(block, stream, wide)


def cell(value: Any) -> str:
    """Text of one table cell: empty for None/empty, enums by value, lists comma-joined."""
    if value is None or value == "":
        return ""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return str(value)


def _table(table: Table, stream: TextIO) -> None:
    rows = [[cell(v) for v in row] for row in table.rows]
    header = [c.upper() for c in table.columns]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        stream.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        stream.write("\n")


def _fields(block: Fields, stream: TextIO, wide: bool) -> None:
    width = max((len(label) for label, _ in block.items), default=0) + 1
    for label, value in block.items:
        if isinstance(value, list | tuple) and not wide and len(value) > _SHORT_LIST:
            shown = cell(list(value[:_SHORT_LIST]))
            value = f"{shown} ... (+{len(value) - _SHORT_LIST} more; -o wide lists all)"
        stream.write(f"{label + ':':<{width}} {cell(value)}".rstrip() + "\n")
