"""Bounded tables for state keyed by what datagrams claim (agents, sub-agents, formats).

Anyone who reaches the sFlow port can send a new key in every datagram, so no table keyed
by the contents of a datagram may grow without bound: the least recently used entry goes,
and :attr:`LruTable.evictions` counts how many went.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruTable(dict[K, V]):
    """A dict of at most ``bound`` entries. :meth:`put` makes an entry the most recent and
    evicts the least recent beyond the bound; ``pop`` then ``put`` marks a use.

    >>> t = LruTable(2)
    >>> t.put("a", 1); t.put("b", 2); t.put("a", t.pop("a") + 1); t.put("c", 3)
    >>> dict(t), t.evictions
    ({'a': 2, 'c': 3}, 1)
    """

    __slots__ = ("bound", "evictions")

    def __init__(self, bound: int) -> None:
        super().__init__()
        if bound < 1:
            raise ValueError(f"a table holds at least one entry, not {bound}")
        self.bound, self.evictions = bound, 0

    def put(self, key: K, value: V) -> None:
        """Set ``key`` (after a ``pop``: as the most recent entry)."""
        self[key] = value
        if len(self) > self.bound:
            del self[next(iter(self))]
            self.evictions += 1

    def take_evictions(self) -> int:
        """Evictions since the last call."""
        evictions, self.evictions = self.evictions, 0
        return evictions
