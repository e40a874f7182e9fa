"""IP ownership history: the pod interfaces of pods that are gone, kept for a while.

A fixed IP moves when its StatefulSet pod is recreated; a pool IP moves when another
pod gets it. Samples taken before the move must still resolve to the old owner, so each
build of the live inventory hands the interfaces of vanished pods (ended at the time the
pod was seen deleted) to this history, which keeps them for ``max_age_s`` seconds and at
most ``max_entries`` interfaces (oldest dropped first): memory stays bounded.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass

from inventory.facts import PodFact, PodInterfaceFact


@dataclass(frozen=True)
class Retention:
    """How long and how much history to keep."""

    max_age_s: float = 3600.0
    max_entries: int = 100_000


@dataclass(frozen=True, slots=True)
class Departed:
    """A pod that is gone, with its interfaces ended at ``ended``."""

    pod: PodFact
    interfaces: tuple[PodInterfaceFact, ...]
    ended: float


class IpHistory:
    """Departed pods by uid, oldest first, within the retention limits."""

    def __init__(self, retention: Retention = Retention()) -> None:
        self.retention = retention
        self._departed: OrderedDict[str, Departed] = OrderedDict()
        self._entries = 0

    def record(self, pod: PodFact, interfaces: tuple[PodInterfaceFact, ...],
               ended: float) -> None:
        """Remember that ``pod`` (with ``interfaces``) was gone at ``ended``."""
        if pod.uid in self._departed or not interfaces:
            return
        closed = tuple(dataclasses.replace(i, valid_until=min(ended, i.valid_until or ended))
                       for i in interfaces)
        self._departed[pod.uid] = Departed(pod, closed, ended)
        self._entries += len(closed)

    def expire(self, now: float) -> None:
        """Forget what is older than the retention age, then the oldest beyond the cap."""
        oldest = now - self.retention.max_age_s
        while self._departed:
            uid, departed = next(iter(self._departed.items()))
            if departed.ended >= oldest and self._entries <= self.retention.max_entries:
                break
            del self._departed[uid]
            self._entries -= len(departed.interfaces)

    def departed(self) -> list[Departed]:
        """Every remembered departed pod, oldest first."""
        return list(self._departed.values())

    def __len__(self) -> int:
        return self._entries
