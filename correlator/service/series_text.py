"""The Prometheus text exposition (format 0.0.4) of metric families given as columns of
keys and values, each series' name and label string rendered once and kept while the
series lasts: rendering an interval formats values only.

The text is prometheus-client's: :func:`prometheus_client.generate_latest` of the same
families gives the same bytes (tests compare the two); names are escaped by its
functions and values formatted as its :func:`~prometheus_client.utils.floatToGoString`
does, by :class:`correlator._wire.SeriesLines` (tests compare the two over millions of
values), and the text written once, by :func:`correlator._wire.exposition`. Only the work
is kept between renders.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from prometheus_client.openmetrics.exposition import escape_label_name, escape_metric_name

from correlator._wire import SeriesLines, exposition

Labels = tuple[str, ...]
"""One series' label values, in its family's label order."""


@dataclass(frozen=True)
class Family:
    """A metric family as exposed: ``name`` with ``_total`` for counters, ``kind``
    ``gauge`` or ``counter``, and its series in the order they are exposed, as two
    columns: ``keys`` (label values) and ``values``."""

    name: str
    kind: str
    labels: Labels
    help: str
    keys: list[Labels] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    fixed: bool = False
    """Whether ``keys`` and ``values`` are lists their maker keeps unchanged from one
    render to the next (the fabric's own series): its text is kept while the same lists
    come back."""

    @property
    def rows(self) -> Iterator[tuple[Labels, float]]:
        """(label values, value) of each series."""
        return zip(self.keys, self.values, strict=True)


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
        return sum(kept.lines.kept for kept in self._kept.values())

    def render(self, families: Iterable[Family]) -> bytes:
        parts: list[bytes | SeriesLines] = []
        for family in families:
            kept = self._kept.get((family.name, family.labels))
            if kept is None:
                kept = self._kept[(family.name, family.labels)] = _Kept(family)
            parts += kept.parts(family)
        return exposition(parts)


class _Kept:
    """One family's header and the ``name{labels} `` of its series."""

    def __init__(self, family: Family) -> None:
        name = escape_metric_name(family.name)
        text = family.help.replace("\\", r"\\").replace("\n", r"\n")
        self.header = f"# HELP {name} {text}\n# TYPE {name} {family.kind}\n".encode()
        self._name = name
        # label names escaped once, in the order the text sorts them
        self._order = sorted((escape_label_name(key), at) for at, key in enumerate(family.labels))
        self.lines = SeriesLines(self._prefix)
        self._fixed: tuple[list[Labels], list[float], bytes] | None = None
        """A fixed family's lists and the text of its series."""

    def parts(self, family: Family) -> tuple[bytes, bytes | SeriesLines]:
        """The family's header and its series (their text, or what writes it)."""
        fixed = self._fixed
        if fixed is not None and family.keys is fixed[0] and family.values is fixed[1]:
            return self.header, fixed[2]  # a fixed family's very lists of the last render
        self.lines.update(family.keys, family.values)
        self._fixed = None
        if family.fixed:
            self._fixed = (family.keys, family.values, exposition([self.lines]))
        return self.header, self.lines

    def _prefix(self, labels: Labels) -> str:
        """``name{key="value",...} `` of a series, its labels sorted by name."""
        if len(labels) != len(self._order):
            raise ValueError(f"{self._name}: {len(labels)} label values for "
                             f"{len(self._order)} labels")
        if not labels:
            return f"{self._name} "
        text = ",".join(f'{key}="{escape_value(labels[at])}"' for key, at in self._order)
        return f"{self._name}{{{text}}} "
