"""The cyclic garbage collector paused while a burst of objects is made and kept: an
interval's attribution (a share tuple per group of each link direction) or a ``/metrics``
rendering (a row per series) would otherwise set off full collections that walk the whole
heap, the fabric graph's million objects, several times on the way (a medium interval's
attribution took 2.7 s of wall time in the pipeline benchmark with them, 0.9 s without).
What is garbage is freed by reference counting as before; cycles wait for the next
collection once the collector runs again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collection_paused"]


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic collection inside (the collector's state as it was after; it is one
    switch for the whole process, so a pause on one thread pauses it on all).

    >>> with collection_paused():
    ...     gc.isenabled()
    False
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
