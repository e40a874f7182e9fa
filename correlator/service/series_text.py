"""The Prometheus text exposition (format 0.0.4) of metric families given as rows, each
series' name and label string rendered once and kept while the series lasts: rendering
an interval formats values only.

The text is prometheus-client's: :func:`prometheus_client.generate_latest` of the same
families gives the same bytes (tests compare the two); names are escaped by its
functions and values formatted as its :func:`~prometheus_client.utils.floatToGoString`
does, by :func:`correlator._wire.series_lines` (tests compare the two over millions of
values). Only the work is kept between renders.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prometheus_client.openmetrics.exposition import escape_label_name, escape_metric_name

from correlator._wire import series_lines

Labels = tuple[str, ...]
Row = tuple[Labels, float]
"""One series: its label values (in the family's label order) and its value."""


@dataclass(frozen=True)
class Family:
    """A metric family as exposed: ``name`` with ``_total`` for counters, ``kind``
    ``gauge`` or ``counter``, and its rows in the order they are exposed."""

    name: str
    kind: str
    labels: Labels
    help: str
    rows: list[Row] = field(default_factory=list)
    fixed: bool = False
    """Whether ``rows`` is a list its maker keeps unchanged from one render to the next
    (the fabric's own series): its text is kept while the same list comes back."""


def escape_value(value: str) -> str:
    """A label value as the text format writes it between its quotes."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


class SeriesText:
    """Renders families, keeping every series' ``name{labels} `` for the next render.

    What is kept is bounded by the series of the latest render: a family's entries are
    pruned to its current series once they outnumber them twice. Not thread-safe: one
    render at a time.
    """

    def __init__(self) -> None:
        self._kept: dict[tuple[str, Labels], _Kept] = {}

    @property
    def kept(self) -> int:
        """How many series' label strings are kept."""
        return sum(len(kept.prefixes) for kept in self._kept.values())

    def render(self, families: Iterable[Family]) -> bytes:
        out: list[bytes] = []
        for family in families:
            kept = self._kept.get((family.name, family.labels))
            if kept is None:
                kept = self._kept[(family.name, family.labels)] = _Kept(family)
            out += kept.text(family)
        return b"".join(out)


class _Kept:
    """One family's header and the ``name{labels} `` of its series."""

    def __init__(self, family: Family) -> None:
        name = escape_metric_name(family.name)
        text = family.help.replace("\\", r"\\").replace("\n", r"\n")
        self.header = f"# HELP {name} {text}\n# TYPE {name} {family.kind}\n".encode()
        self._name = name
        # label names escaped once, in the order the text sorts them
        self._order = sorted((escape_label_name(key), at) for at, key in enumerate(family.labels))
        self.prefixes: dict[Labels, str] = {}
        self._last: tuple[list[Row] | None, tuple[bytes, bytes]] = (None, (b"", b""))

    def text(self, family: Family) -> tuple[bytes, bytes]:
        """The family's text: header and series."""
        if family.rows is self._last[0]:  # a fixed family's very rows of the last render
            return self._last[1]
        text = (self.header, self._rows(family.rows))
        self._last = (family.rows, text) if family.fixed else (None, (b"", b""))
        return text

    def _rows(self, rows: list[Row]) -> bytes:
        prefixes = self.prefixes
        lines = series_lines(rows, prefixes, self._new)
        if len(prefixes) > 2 * len(rows) + 64:
            self.prefixes = {labels: prefixes[labels] for labels, _ in rows}
        return lines

    def _new(self, labels: Labels) -> str:
        """A series' prefix, rendered and kept."""
        prefix = self.prefixes[labels] = self._prefix(labels)
        return prefix

    def _prefix(self, labels: Labels) -> str:
        """``name{key="value",...} `` of a series, its labels sorted by name."""
        if len(labels) != len(self._order):
            raise ValueError(f"{self._name}: {len(labels)} label values for "
                             f"{len(self._order)} labels")
        if not labels:
            return f"{self._name} "
        text = ",".join(f'{key}="{escape_value(labels[at])}"' for key, at in self._order)
        return f"{self._name}{{{text}}} "
