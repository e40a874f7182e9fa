"""Printers: render command results as tables (``table``, ``wide``) or data (``json``,
``yaml``, ``jsonl``: one JSON document a line, a list's items each on its own).

A command turns its result into blocks (:class:`Table`, :class:`Fields`) for people, and
hands the result itself to the data printers for machines. On a terminal, tables fold their
widest cells to its width and headers are bold (unless ``$NO_COLOR`` is set). Printers know
nothing of switches or pods.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TextIO

import yaml

from correlator import _wire
from correlator.data import to_data

_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's, when built with it
_YAML_BATCH = 256

FORMATS = ("table", "wide", "json", "yaml", "jsonl")
_SHORT_LIST = 12
_MIN_FOLDED = 10  # a folded column keeps at least this many characters
_BOLD, _PLAIN = "\033[1m", "\033[0m"


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
        stream.write(json_text(to_data(result)) + "\n")
    elif fmt == "yaml":
        yaml.dump(to_data(result), stream, Dumper=_YAML_DUMPER, sort_keys=False)
    elif fmt == "jsonl":
        write_lines(result if isinstance(result, list) else [result], stream)
    else:
        terminal = stream.isatty()
        render(blocks(result, fmt == "wide"), stream, wide=fmt == "wide",
               width=shutil.get_terminal_size().columns if terminal else None,
               bold=terminal and not os.environ.get("NO_COLOR"))


def json_text(data: Any) -> str:
    """``json.dumps(data, indent=2)``: the same text, written by the core (Python's
    indenting encoder is pure Python, several times slower)."""
    return _wire.json_text(data, 2)


def write_lines(items: Iterable[Any], stream: TextIO) -> None:
    """One compact JSON document a line, written as ``items`` come (a generator streams)."""
    for item in items:
        stream.write(json.dumps(to_data(item), separators=(",", ":")) + "\n")


def stream_list(items: Iterable[Any], fmt: str, stream: TextIO) -> None:
    """A list in a data format (``json``, ``yaml``, ``jsonl``) written as ``items`` come,
    the same text :func:`emit` writes for the whole list, in memory bounded by a batch of
    items (YAML is dumped :data:`_YAML_BATCH` items at a time: one call per item costs
    more than the dumping)."""
    if fmt == "jsonl":
        write_lines(items, stream)
        return
    empty, data = True, map(to_data, items)
    while batch := list(itertools.islice(data, _YAML_BATCH if fmt == "yaml" else 1)):
        if fmt == "json":
            text = json_text(batch[0])
            stream.write(("[\n  " if empty else ",\n  ") + text.replace("\n", "\n  "))
        else:
            stream.write(yaml.dump(batch, Dumper=_YAML_DUMPER, sort_keys=False))
        empty = False
    if fmt == "json":
        stream.write("[]\n" if empty else "\n]\n")
    elif empty:
        stream.write("[]\n")


def render(blocks: Iterable[Block], stream: TextIO, wide: bool = False,
           width: int | None = None, bold: bool = False) -> None:
    """Write blocks as aligned text, separated by blank lines; tables wider than ``width``
    fold their widest columns; ``bold`` headers (for a terminal).

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
            _table(block, stream, width, bold)
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


def _table(table: Table, stream: TextIO, width: int | None = None, bold: bool = False
           ) -> None:
    rows = [[cell(v) for v in row] for row in table.rows]
    header = [c.upper() for c in table.columns]
    widths = fit([max(len(r[i]) for r in [header, *rows]) for i in range(len(header))],
                 width)
    for number, row in enumerate([header, *rows]):
        cells = [textwrap.wrap(v, w, break_on_hyphens=False) or [""] if len(v) > w else [v]
                 for v, w in zip(row, widths, strict=True)]
        for line in range(max(map(len, cells))):
            text = "  ".join((c[line] if line < len(c) else "").ljust(w)
                             for c, w in zip(cells, widths, strict=True)).rstrip()
            stream.write(f"{_BOLD}{text}{_PLAIN}\n" if bold and not number else text + "\n")


def fit(widths: list[int], width: int | None) -> list[int]:
    """Column widths that fit a line of ``width`` characters (two spaces between columns):
    the widest column narrows first, none below ten characters (or its own width).

    >>> fit([6, 40, 30], 60), fit([6, 40, 30], None), fit([6, 40, 30], 20)
    ([6, 25, 25], [6, 40, 30], [6, 10, 10])
    """
    widths = list(widths)
    if width is None:
        return widths
    while sum(widths) + 2 * (len(widths) - 1) > width:
        widest = max(range(len(widths)), key=lambda i: widths[i])
        if widths[widest] <= _MIN_FOLDED:
            break
        widths[widest] -= 1
    return widths


def _fields(block: Fields, stream: TextIO, wide: bool) -> None:
    width = max((len(label) for label, _ in block.items), default=0) + 1
    for label, value in block.items:
        if isinstance(value, list | tuple) and not wide and len(value) > _SHORT_LIST:
            shown = cell(list(value[:_SHORT_LIST]))
            value = f"{shown} ... (+{len(value) - _SHORT_LIST} more; -o wide lists all)"
        stream.write(f"{label + ':':<{width}} {cell(value)}".rstrip() + "\n")
