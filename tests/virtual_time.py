"""An asyncio event loop on virtual time: when nothing is ready, its clock jumps to the next timer.

For code whose waits are all asyncio timers (``sleep``, ``wait_for``, ``loop.time()``
schedules), what happens depends on the schedule alone, never on how busy the machine is,
and a run of many virtual seconds takes a few milliseconds. Sockets and threads still
wake the loop, but the time they take is not counted.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")


class _JumpingSelector(selectors.DefaultSelector):
    """Polls without blocking; where the loop would sleep until a timer, moves its clock."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self.loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:  # no timer at all: only a socket or a thread can wake the loop
            return super().select(None)
        self.loop.now += timeout
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` starts at 0 and advances only by jumps."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self.now


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(main)`` on a fresh :class:`VirtualTimeLoop`."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
