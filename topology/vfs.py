"""Every configured VF of a fabric as compact columns, beside the graph.

A node holds eight VFs per PF but pods use one or two of them, so most VFs are bulk facts
that no query walks: the graph keeps a node only for a VF a pod interface is attached to,
and this table answers for all of them (``where NODE/PCI``, the export, the summary).
Names that repeat (nodes, PF names, PCI addresses) are stored once; each VF is a few
integers in arrays and its MAC.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator
from itertools import chain
from typing import Any

from inventory.facts import normalize_mac
from topology.schema import KIND, NodeKind, pf_id, vf_id

VfRow = tuple[str, str, str, int, str]
"""A VF as ``VfFact`` fields in order: node, PCI address, PF name, VF index, MAC."""


class VfTable:
    """Configured VFs, grouped by node; lookups by node and PCI address.

    Examples
    --------
    >>> table = VfTable.from_rows([("gpu01", "0000:1a:00.2", "ens1f0np0", 0, "02:00:00:00:00:01"),
    ...                            ("gpu01", "0000:1a:00.3", "ens1f0np0", 1, "")])
    >>> len(table), table.find("gpu01", "0000:1a:00.3")
    (2, 1)
    >>> table.attrs(0)["mac"], "mac" in table.attrs(1)
    ('02:00:00:00:00:01', False)
    """

    def __init__(self, names: list[str], node: array, pci: array, pf: array, index: array,
                 macs: list[str], ranges: dict[str, tuple[int, int]]) -> None:
        self._names = names
        self._codes = {name: code for code, name in enumerate(names)}
        self._node, self._pci, self._pf, self._index = node, pci, pf, index
        self._macs = macs
        self._ranges = ranges

    @classmethod
    def from_rows(cls, rows: Iterable[VfRow]) -> VfTable:
        """A table of ``rows`` (grouped by node in the order nodes first appear, keeping
        their order within a node); MACs are normalized as graph attributes are."""
        by_node: dict[str, list[VfRow]] = defaultdict(list)
        for row in rows:
            by_node[row[0]].append(row)
        ranges, start = {}, 0
        for name, members in by_node.items():
            ranges[name] = (start, start + len(members))
            start += len(members)
        ordered = [row for members in by_node.values() for row in members]
        nodes, pcis, pfs, indexes, macs = zip(*ordered, strict=True) if ordered else ((),) * 5
        names = list(dict.fromkeys(chain(by_node, pcis, pfs)))
        code = {name: i for i, name in enumerate(names)}.__getitem__
        return cls(names, *(array("I", map(code, column)) for column in (nodes, pcis, pfs)),
                   array("q", indexes), [(normalize_mac(m) or m) if m else "" for m in macs],
                   ranges)

    def columns(self) -> tuple[Any, ...]:
        """The table as plain data (lists, bytes, a dict) for :meth:`from_columns`."""
        return (self._names, *(column.tobytes() for column in (self._node, self._pci,
                                                                 self._pf, self._index)),
                self._macs, self._ranges)

    @classmethod
    def from_columns(cls, columns: Any) -> VfTable:
        """The table :meth:`columns` gave (as a packed snapshot holds it)."""
        names, node, pci, pf, index, macs, ranges = columns
        arrays = [array(code, data) for code, data in zip("IIIq", (node, pci, pf, index),
                                                          strict=True)]
        if not (type(names) is list and type(macs) is list and type(ranges) is dict
                and all(len(a) == len(macs) for a in arrays)):
            raise ValueError("VF table columns of unequal lengths")
        return cls(names, *arrays, macs, ranges)

    def of_pfs(self, keep: Container[str]) -> VfTable:
        """The table of the VFs whose PF's graph node ID ``keep`` holds (each PF asked
        once: its VFs share its codes)."""
        names, macs = self._names, self._macs
        kept: dict[tuple[int, int], bool] = {}
        for node, pf in zip(self._node, self._pf, strict=True):
            if (node, pf) not in kept:
                kept[(node, pf)] = pf_id(names[node], names[pf]) in keep
        return VfTable.from_rows(
            (names[node], names[pci], names[pf], index, macs[row])
            for row, (node, pci, pf, index) in enumerate(zip(self._node, self._pci, self._pf,
                                                             self._index, strict=True))
            if kept[(node, pf)])

    def __len__(self) -> int:
        return len(self._node)

    def find(self, node: str, pci: str) -> int | None:
        """The row of VF ``pci`` on ``node``, if configured."""
        rows = self.rows_of(node, pci)
        return rows[0] if rows else None

    def rows_of(self, node: str, pci: str) -> list[int]:
        """Every row of VF ``pci`` on ``node`` (one, unless the facts repeat it)."""
        start, stop = self._ranges.get(node, (0, 0))
        code = self._codes.get(pci)
        rows: list[int] = []
        while code is not None and start < stop:
            try:
                rows.append(self._pci.index(code, start, stop))
            except ValueError:
                break
            start = rows[-1] + 1
        return rows

    def find_id(self, node_id: str) -> int | None:
        """The row of the VF with graph node ID ``node_id`` (``vf:NODE/PCI``)."""
        kind, _, rest = node_id.partition(":")
        node, _, pci = rest.partition("/")
        return self.find(node, pci) if kind == NodeKind.VF else None

    def with_pci(self, pci: str) -> list[int]:
        """The rows of every VF with PCI address ``pci``, on any node."""
        code = self._codes.get(pci)
        return [] if code is None else [row for row, c in enumerate(self._pci) if c == code]

    def node_id(self, row: int) -> str:
        return vf_id(self._names[self._node[row]], self._names[self._pci[row]])

    def pf_id(self, row: int) -> str:
        """The graph node ID of the VF's PF."""
        return pf_id(self._names[self._node[row]], self._names[self._pf[row]])

    def attrs(self, row: int) -> dict[str, Any]:
        """The VF's attributes as a graph node of kind ``vf`` would hold them."""
        names = self._names
        found: dict[str, Any] = {KIND: NodeKind.VF.value, "node": names[self._node[row]],
                                 "pci_address": names[self._pci[row]],
                                 "pf": names[self._pf[row]], "vf_index": self._index[row]}
        if self._macs[row]:
            found["mac"] = self._macs[row]
        return found

    def mac(self, row: int) -> str:
        """The VF's MAC (empty when it has none)."""
        return self._macs[row]

    def macs(self) -> Iterator[tuple[int, str]]:
        """(row, MAC) of every VF with a MAC, in row order."""
        return ((row, mac) for row, mac in enumerate(self._macs) if mac)
