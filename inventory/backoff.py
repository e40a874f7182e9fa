"""Capped exponential backoff with full jitter, for every reconnect and retry."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """Attempt n (0-based) waits U(0, min(cap, base * 2**n)) seconds.

    >>> Backoff(base_s=1, cap_s=8).ceiling(5)
    8
    """

    base_s: float = 0.5
    cap_s: float = 30.0

    def ceiling(self, attempt: int) -> float:
        return min(self.cap_s, self.base_s * 2 ** min(attempt, 30))

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0, self.ceiling(attempt))
